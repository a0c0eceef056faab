//! The precompiled charsmap (a `.model`'s normalizer rules, and tokenizer.json's `Precompiled`
//! normalizer): parsing never panics, and a charsmap that parses normalizes text without
//! panicking, in both normalizers that use it. The first byte says how many of the last bytes
//! are the text to normalize; the bytes between are the charsmap.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokenmill_core::normalizers::Precompiled;
use tokenmill_core::sentencepiece::{NormalizerSpec, SpNormalizer};
use tokenmill_core::tokenizer::{NormalizedString, Normalizer};

fuzz_target!(|data: &[u8]| {
    let Some((n, rest)) = tokenmill_fuzz::selector(data) else { return };
    let split = rest.len().saturating_sub(n as usize);
    let (charsmap, text) = rest.split_at(split);
    let text = String::from_utf8_lossy(text);
    if let Ok(precompiled) = Precompiled::from_charsmap(charsmap) {
        let mut normalized = NormalizedString::from(text.as_ref());
        if precompiled.normalize(&mut normalized).is_ok() {
            let _ = normalized.get();
        }
    }
    let spec =
        NormalizerSpec { precompiled_charsmap: Some(charsmap.to_vec()), ..Default::default() };
    if let Ok(normalizer) = SpNormalizer::new(&spec, false, None) {
        let out = normalizer.normalize(&text);
        // One origin per normalized byte and one past the end; none for an empty result (as
        // sentencepiece, for an empty or all-space input).
        let origins =
            if out.text.is_empty() { 0..=1 } else { out.text.len() + 1..=out.text.len() + 1 };
        assert!(origins.contains(&out.norm_to_orig.len()), "one origin per normalized byte");
        assert!(out.norm_to_orig.iter().all(|&o| o <= text.len()), "origins inside the input");
    }
});
