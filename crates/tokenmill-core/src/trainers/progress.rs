//! Progress bars for training (indicatif), hidden unless asked for and stderr is a terminal.
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar with a message, position/length and ETA; a no-op when hidden.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar of `len` steps; drawn only when `show` and stderr is a terminal.
    pub fn new(show: bool, len: u64, message: &str) -> Self {
        let bar = if show && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "[{elapsed_precise}] {msg:<24!} {wide_bar} {pos:>9}/{len:<9} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        } else {
            ProgressBar::hidden()
        };
        bar.set_message(message.to_string());
        Progress { bar }
    }

    /// A bar counting bytes (for reading files).
    pub fn bytes(show: bool, len: u64, message: &str) -> Self {
        let p = Self::new(show, len, message);
        let style = ProgressStyle::with_template(
            "[{elapsed_precise}] {msg:<24!} {wide_bar} {bytes:>10}/{total_bytes:<10} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        p.bar.set_style(style);
        p
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    pub fn set_position(&self, pos: u64) {
        self.bar.set_position(pos);
    }

    pub fn finish(&self) {
        self.bar.finish();
    }
}
