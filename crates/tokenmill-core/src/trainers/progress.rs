//! Progress bars for training (indicatif), hidden unless asked for and stderr is a terminal.
//!
//! A drawn bar ends its line when it is finished or dropped: indicatif leaves the cursor after
//! the bar (padded to the terminal's width, counting on the terminal to wrap), so whatever is
//! printed next would otherwise be glued to the bar whenever the terminal does not wrap there
//! (a width it does not report, a wrap it defers).
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar with a message, position/length and ETA; a no-op when hidden.
pub struct Progress {
    bar: ProgressBar,
    /// Whether the bar's line is still open (drawn and not yet ended by a newline).
    open: AtomicBool,
}

impl Progress {
    /// A bar of `len` steps; drawn only when `show` and stderr is a terminal.
    pub fn new(show: bool, len: u64, message: &str) -> Self {
        let drawn = show && std::io::stderr().is_terminal();
        let bar = if drawn {
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
        Progress { bar, open: AtomicBool::new(drawn) }
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

    /// Draws the bar full and ends its line; once (indicatif would draw it again, below).
    pub fn finish(&self) {
        if !self.bar.is_finished() {
            self.bar.finish();
        }
        self.end_line();
    }

    fn end_line(&self) {
        if self.open.swap(false, Ordering::Relaxed) {
            let mut stderr = std::io::stderr();
            let _ = stderr.write_all(b"\n").and_then(|()| stderr.flush());
        }
    }
}

impl Drop for Progress {
    /// A bar dropped unfinished (an error, an interrupted iterator) stays as it was drawn, and
    /// its line ends too, so an error message starts on a line of its own.
    fn drop(&mut self) {
        if *self.open.get_mut() && !self.bar.is_finished() {
            self.bar.abandon();
        }
        self.end_line();
    }
}
