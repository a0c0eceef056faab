//! The pickled states the bindings' `__setstate__` hand to the core: an Encoding, a model,
//! a normalizer, a pre-tokenizer, a post-processor, a decoder, a trainer (all JSON), the word
//! tokenizer's language rules, the sentence splitter's and the segmenter's JSON, and a decode
//! stream's parts. The first byte picks the kind; parsing never panics, and a state that
//! parses is used the way the Python object would use it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokenmill_core::decoders::DecoderWrapper;
use tokenmill_core::models::ModelWrapper;
use tokenmill_core::normalizers::NormalizerWrapper;
use tokenmill_core::pre_tokenizers::PreTokenizerWrapper;
use tokenmill_core::processors::PostProcessorWrapper;
use tokenmill_core::tokenizer::encoding::{PaddingDirection, TruncationDirection};
use tokenmill_core::tokenizer::{
    DecodeStream, Decoder, Encoding, Model, NormalizedString, Normalizer, PostProcessor,
    PreTokenizedString, PreTokenizer,
};
use tokenmill_core::trainers::TrainerWrapper;
use tokenmill_words::{
    LanguageRules, Segmenter, SentenceSplitter, WordTokenizer, WordTokenizerOptions,
};

const PROBE: &str = "Hello  world. Ça va? 你好世界 🙂 x\n";

fn encoding(state: &[u8]) {
    let Ok(encoding) = serde_json::from_slice::<Encoding>(state) else { return };
    for (len, direction) in [(2, TruncationDirection::Right), (1, TruncationDirection::Left)] {
        let mut truncated = encoding.clone();
        let _ = truncated.truncate(len, 1, direction);
    }
    let mut padded = encoding.clone();
    padded.pad(8, 0, 0, "[PAD]", PaddingDirection::Left);
    let _ = encoding.token_to_chars(0);
    let _ = encoding.token_to_word(0);
    let _ = encoding.word_to_tokens(0, 0);
    let _ = encoding.word_to_chars(0, 0);
    let _ = encoding.char_to_token(0, 0);
    let _ = encoding.char_to_word(0, 0);
    let _ = encoding.sequence_ids();
    let _ = Encoding::merge([encoding.clone(), encoding], true);
}

fn decode_stream(state: &[u8]) {
    let Ok((ids, prefix, prefix_ids)) = serde_json::from_slice::<(Vec<u32>, String, usize)>(state)
    else {
        return;
    };
    let Ok(mut stream) = DecodeStream::from_parts(ids, prefix, prefix_ids) else { return };
    let decode = |ids: &[u32]| Ok(ids.iter().filter_map(|&i| char::from_u32(i % 0x250)).collect());
    for id in [65, 0xFFFD, 32] {
        let _ = stream.step(&[id], decode);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((kind, state)) = tokenmill_fuzz::selector(data) else { return };
    match kind % 11 {
        0 => encoding(state),
        1 => {
            if let Ok(model) = serde_json::from_slice::<ModelWrapper>(state) {
                let _ = model.tokenize("hello");
                let _ = model.tokenize("ça🙂");
            }
        }
        2 => {
            if let Ok(normalizer) = serde_json::from_slice::<NormalizerWrapper>(state) {
                let _ = normalizer.normalize(&mut NormalizedString::from(PROBE));
            }
        }
        3 => {
            if let Ok(pre_tokenizer) = serde_json::from_slice::<PreTokenizerWrapper>(state) {
                let _ = pre_tokenizer.pre_tokenize(&mut PreTokenizedString::from(PROBE));
            }
        }
        4 => {
            if let Ok(processor) = serde_json::from_slice::<PostProcessorWrapper>(state) {
                let one = Encoding::from_special_tokens(&[1, 2], &["a".into(), "b".into()], 0);
                let _ = processor.process(one.clone(), None, true);
                let _ = processor.process(one.clone(), Some(one), true);
            }
        }
        5 => {
            if let Ok(decoder) = serde_json::from_slice::<DecoderWrapper>(state) {
                let tokens = ["Hello", "Ġworld", "▁x", "##y", "<0xE4>", "<0xBD>", "</w>"];
                let _ = decoder.decode(tokens.iter().map(|t| t.to_string()).collect());
            }
        }
        6 => {
            if let Ok(trainer) = serde_json::from_slice::<TrainerWrapper>(state) {
                let _ = serde_json::to_vec(&trainer);
            }
        }
        7 => {
            let Ok(json) = std::str::from_utf8(state) else { return };
            let Ok(rules) = LanguageRules::from_json(json) else { return };
            if let Ok(tokenizer) = WordTokenizer::new(rules, WordTokenizerOptions::default()) {
                let tokens = tokenizer.tokenize(PROBE);
                tokenmill_fuzz::check_spans(
                    "word tokenizer",
                    PROBE,
                    tokens.iter().map(|t| (t.start, t.end)),
                );
            }
        }
        8 => {
            let Ok(json) = std::str::from_utf8(state) else { return };
            if let Ok(splitter) = SentenceSplitter::from_json(json) {
                tokenmill_fuzz::check_spans("sentences", PROBE, splitter.spans(PROBE));
            }
        }
        9 => {
            let Ok(json) = std::str::from_utf8(state) else { return };
            if let Ok(segmenter) = Segmenter::from_json(json) {
                let words = segmenter.cut(PROBE);
                tokenmill_fuzz::check_spans(
                    "segmenter",
                    PROBE,
                    words.iter().map(|t| (t.start, t.end)),
                );
            }
        }
        _ => decode_stream(state),
    }
});
