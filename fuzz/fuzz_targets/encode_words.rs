//! The word tokenizer (each language's rules, with and without Penn Treebank conventions) and the
//! Chinese segmenter (trained once from the shared SIGHAN 2005 PKU word lists) on any text: no
//! panic, tokens in order, inside the text, on char boundaries, and every non-whitespace
//! character covered by a token. The first byte picks the tokenizer.
#![no_main]
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tokenmill_words::{
    Segmenter, SegmenterLanguage, SegmenterOptions, SegmenterTrainer, WordToken, WordTokenizer,
    WordTokenizerOptions, LANGUAGES,
};

fn segmenter() -> &'static Segmenter {
    static SEGMENTER: OnceLock<Segmenter> = OnceLock::new();
    SEGMENTER.get_or_init(|| {
        let corpus = tokenmill_fuzz::shared_file("corpora/sighan2005/pku_training_words.utf8");
        let mut trainer = SegmenterTrainer::new();
        trainer.feed_segmented_file(&corpus).expect("the corpus reads");
        let options = SegmenterOptions { hmm: true, numbers: true };
        trainer.finish(SegmenterLanguage::Chinese, options).expect("a segmenter")
    })
}

/// Whitespace as the word tokenizer sees it (Python's `str.isspace`).
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn check(what: &str, text: &str, tokens: &[WordToken]) {
    tokenmill_fuzz::check_spans(what, text, tokens.iter().map(|t| (t.start, t.end)));
    let mut covered = vec![false; text.len()];
    for t in tokens {
        covered[t.start..t.end].iter_mut().for_each(|c| *c = true);
    }
    for (i, c) in text.char_indices() {
        assert!(is_space(c) || covered[i], "{what}: {c:?} at byte {i} is in no token of {text:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((kind, rest)) = tokenmill_fuzz::selector(data) else { return };
    let Some(text) = tokenmill_fuzz::text(rest) else { return };
    match kind % 3 {
        0 => check("segmenter", text, &segmenter().cut(text)),
        n => {
            let options = WordTokenizerOptions { penn_treebank: n == 2, keep_clitics: false };
            let language = LANGUAGES[kind as usize / 3 % LANGUAGES.len()];
            let tokenizer = WordTokenizer::for_language(language, options);
            check("word tokenizer", text, &tokenizer.tokenize(text));
        }
    }
});
