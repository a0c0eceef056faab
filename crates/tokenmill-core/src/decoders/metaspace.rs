//! `Metaspace` decoder: the replacement character (`▁`) back to spaces, dropping it from the
//! first token when the pre-tokenizer prepended it.
//!
//! As in `tokenizers`, the settings struct is the pre-tokenizer's; this file adds decoding.
pub use crate::pre_tokenizers::metaspace::{Metaspace, PrependScheme};

/// Replacement characters become spaces, except in the first token where (unless the scheme
/// is `never`) they are all dropped, as `tokenizers` does.
pub fn decode_chain(settings: &Metaspace, tokens: Vec<String>) -> Vec<String> {
    let replacement = settings.replacement();
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, token)| {
            let drop_replacement = i == 0 && settings.prepend_scheme != PrependScheme::Never;
            token
                .chars()
                .filter_map(|c| match c {
                    c if c != replacement => Some(c),
                    _ if drop_replacement => None,
                    _ => Some(' '),
                })
                .collect()
        })
        .collect()
}
