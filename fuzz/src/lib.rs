//! What the fuzz targets share: the pretrained files they encode with (read once per process
//! from the shared data folder, never copied into the repository) and the invariants every
//! encoder must keep.
//!
//! The shared folder is `$TOKENMILL_SHARED`, by default `../shared` beside the repository root
//! (`/work/shared` on the development machine). An encoder target without it stops at its first
//! input with a message saying so.
use std::path::PathBuf;
use std::sync::OnceLock;

use base64::Engine;
use rustc_hash::FxHashMap;
use serde_json::{json, Value};
use tokenmill_core::sentencepiece::{ModelProto, PieceType, Processor};
use tokenmill_core::tiktoken::{load_tiktoken_bpe, CoreBpe};
use tokenmill_core::tokenizer::{Offsets, Tokenizer};

/// The split patterns of the OpenAI encodings (as `tiktoken_ext/openai_public.py` gives them).
pub use tokenmill_core::pre_tokenizers::{CL100K_PATTERN, O200K_PATTERN, R50K_PATTERN};

/// The shared data folder (`$TOKENMILL_SHARED`, else `../shared` beside the repository).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("TOKENMILL_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    }
}

/// A file of the shared folder; stops the fuzzer with a clear message when it is missing.
pub fn shared_file(relative: &str) -> PathBuf {
    let path = shared_dir().join(relative);
    if !path.is_file() {
        eprintln!(
            "{} is missing: set TOKENMILL_SHARED to the shared data folder (see fuzz/README.md)",
            path.display()
        );
        std::process::exit(2);
    }
    path
}

fn read_shared(relative: &str) -> Vec<u8> {
    std::fs::read(shared_file(relative)).expect("readable shared file")
}

/// The input as text: fuzz inputs that are not UTF-8 are skipped by the text targets.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Splits off the first byte (a selector among a target's variants) from the rest.
pub fn selector(data: &[u8]) -> Option<(u8, &[u8])> {
    data.split_first().map(|(&b, rest)| (b, rest))
}

/// The variant of a target the first byte picks among `choices`, the byte itself (whose other
/// bits may pick options) and the rest of the input as text; `None` when it is not UTF-8.
pub fn pick<'a, T>(data: &'a [u8], choices: &'a [T]) -> Option<(&'a T, u8, &'a str)> {
    let (kind, rest) = selector(data)?;
    Some((&choices[kind as usize % choices.len()], kind, text(rest)?))
}

/// A tiktoken-style encoding with its vocabulary size (ranks plus special tokens).
pub struct TiktokenEncoding {
    pub name: &'static str,
    pub core: CoreBpe,
    pub n_vocab: u32,
}

fn tiktoken_encoding(
    name: &'static str,
    file: &str,
    pattern: &str,
    specials: &[(&str, u32)],
) -> TiktokenEncoding {
    let ranks = load_tiktoken_bpe(shared_file(file)).expect("a valid .tiktoken file");
    let specials: FxHashMap<String, u32> =
        specials.iter().map(|&(s, id)| (s.to_string(), id)).collect();
    let max = ranks.values().chain(specials.values()).copied().max().unwrap_or(0);
    let core = CoreBpe::new(ranks, specials, pattern).expect("a valid encoding");
    TiktokenEncoding { name, core, n_vocab: max + 1 }
}

/// r50k_base (GPT-2), cl100k_base and o200k_base from the shared pretrained files.
pub fn tiktoken_encodings() -> &'static [TiktokenEncoding] {
    static ENCODINGS: OnceLock<Vec<TiktokenEncoding>> = OnceLock::new();
    ENCODINGS.get_or_init(|| {
        vec![
            tiktoken_encoding(
                "r50k_base",
                "pretrained/whisper/gpt2.tiktoken",
                R50K_PATTERN,
                &[("<|endoftext|>", 50256)],
            ),
            tiktoken_encoding(
                "cl100k_base",
                "pretrained/cl100k_base/cl100k_base.tiktoken",
                CL100K_PATTERN,
                &[
                    ("<|endoftext|>", 100257),
                    ("<|fim_prefix|>", 100258),
                    ("<|fim_middle|>", 100259),
                    ("<|fim_suffix|>", 100260),
                    ("<|endofprompt|>", 100276),
                ],
            ),
            tiktoken_encoding(
                "o200k_base",
                "pretrained/o200k_base/o200k_base.tiktoken",
                O200K_PATTERN,
                &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
            ),
        ]
    })
}

/// A pipeline built from a tokenizer.json document made of pretrained files, and whether
/// `decode(encode(text)) == text` for every text.
pub struct PretrainedTokenizer {
    pub name: &'static str,
    pub tokenizer: Tokenizer,
    pub lossless: bool,
}

/// GPT-2's byte-level BPE (encoder.json + vocab.bpe) as `tokenizers` saves it.
fn gpt2_json() -> Value {
    let vocab: Value = serde_json::from_slice(&read_shared("pretrained/gpt2/encoder.json"))
        .expect("encoder.json is JSON");
    let merges_text = String::from_utf8(read_shared("pretrained/gpt2/vocab.bpe")).expect("UTF-8");
    let merges: Vec<&str> =
        merges_text.lines().filter(|l| !l.starts_with("#version") && !l.is_empty()).collect();
    let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
        "use_regex": true});
    json!({
        "version": "1.0",
        "added_tokens": [{"id": 50256, "content": "<|endoftext|>", "single_word": false,
            "lstrip": false, "rstrip": false, "normalized": true, "special": true}],
        "pre_tokenizer": byte_level,
        "post_processor": byte_level,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
            "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": false,
            "byte_fallback": false, "vocab": vocab, "merges": merges},
    })
}

/// BERT (uncased) WordPiece as `tokenizers` saves it.
fn bert_json() -> Value {
    let text = String::from_utf8(read_shared("pretrained/bert_base_uncased/vocab.txt")).unwrap();
    let vocab: serde_json::Map<String, Value> =
        text.lines().enumerate().map(|(i, t)| (t.to_string(), json!(i))).collect();
    let added: Vec<Value> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|t| {
            json!({"id": vocab[*t], "content": t, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    json!({
        "version": "1.0",
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
            "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", vocab["[SEP]"]],
            "cls": ["[CLS]", vocab["[CLS]"]]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab},
    })
}

/// A sentencepiece Unigram `.model` as `transformers`' converter writes it: Precompiled
/// normalizer, Metaspace pre-tokenizer and decoder.
fn unigram_json(model: &str) -> Value {
    let proto = ModelProto::from_bytes(&read_shared(model)).expect("a valid .model");
    let mut unk_id = 0;
    let vocab: Vec<Value> = proto
        .pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.r#type == Some(PieceType::Unknown as i32) {
                unk_id = i;
            }
            json!([p.piece(), p.score()])
        })
        .collect();
    let charsmap = proto.normalizer_spec().precompiled_charsmap.clone().unwrap_or_default();
    let metaspace = json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
        "split": true});
    json!({
        "version": "1.0",
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap":
                base64::engine::general_purpose::STANDARD.encode(charsmap)},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": metaspace,
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": false},
    })
}

/// GPT-2 byte-level BPE, BERT WordPiece and a sentencepiece Unigram as tokenizer.json pipelines.
pub fn pretrained_tokenizers() -> &'static [PretrainedTokenizer] {
    static TOKENIZERS: OnceLock<Vec<PretrainedTokenizer>> = OnceLock::new();
    TOKENIZERS.get_or_init(|| {
        let build = |name, json: Value, lossless| {
            let tokenizer = Tokenizer::from_json_str(&json.to_string())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            PretrainedTokenizer { name, tokenizer, lossless }
        };
        vec![
            build("gpt2-bpe", gpt2_json(), true),
            build("bert-wordpiece", bert_json(), false),
            build(
                "botchan-unigram",
                unigram_json("pretrained/sentencepiece_test/botchan_en_unigram_1000.model"),
                false,
            ),
        ]
    })
}

/// A sentencepiece model and whether decoding its ids gives back the input exactly.
pub struct PretrainedProcessor {
    pub name: &'static str,
    pub processor: Processor,
    pub lossless: bool,
}

/// sentencepiece's BPE and Unigram test models, and Mistral's byte-fallback BPE.
pub fn sentencepiece_models() -> &'static [PretrainedProcessor] {
    static MODELS: OnceLock<Vec<PretrainedProcessor>> = OnceLock::new();
    MODELS.get_or_init(|| {
        let load = |name, file: &str, lossless| {
            let processor =
                Processor::from_file(shared_file(file)).unwrap_or_else(|e| panic!("{name}: {e}"));
            PretrainedProcessor { name, processor, lossless }
        };
        vec![
            load("botchan-bpe", "pretrained/sentencepiece_test/botchan_en_bpe_1000.model", false),
            load(
                "botchan-unigram",
                "pretrained/sentencepiece_test/botchan_en_unigram_1000.model",
                false,
            ),
            load(
                "kyoto-unigram",
                "pretrained/sentencepiece_test/kyoto_ja_unigram_8000.model",
                false,
            ),
            load("mistral-v1-bpe", "pretrained/mistral/tokenizer.model.v1", true),
        ]
    })
}

/// Checks that spans of `text` are in order (each starts no earlier than the one before; start
/// ≤ end), end inside the text and fall on character boundaries. `what` names the encoder.
pub fn check_spans(what: &str, text: &str, spans: impl IntoIterator<Item = Offsets>) {
    let mut last_start = 0;
    for (i, (start, end)) in spans.into_iter().enumerate() {
        assert!(start <= end, "{what}: span {i} is ({start}, {end}) in {text:?}");
        assert!(end <= text.len(), "{what}: span {i} ends at {end} > {} in {text:?}", text.len());
        assert!(
            text.is_char_boundary(start) && text.is_char_boundary(end),
            "{what}: span {i} ({start}, {end}) is not on char boundaries in {text:?}"
        );
        assert!(
            start >= last_start,
            "{what}: span {i} starts at {start}, before the previous start {last_start} in \
             {text:?}"
        );
        last_start = start;
    }
}

/// Checks that every id is below `size`.
pub fn check_ids(what: &str, ids: &[u32], size: usize) {
    if let Some(bad) = ids.iter().find(|&&id| id as usize >= size) {
        panic!("{what}: id {bad} out of the vocabulary (size {size})");
    }
}
