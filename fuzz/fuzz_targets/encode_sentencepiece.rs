//! sentencepiece models (BPE and Unigram test models, Mistral's byte-fallback BPE) on any text:
//! no panic, every id in the vocabulary, the pieces' offsets in order, inside the text and on
//! char boundaries, the full result's ids equal to the fast path's, and for the byte-fallback
//! model (identity normalization) decode(encode(x)) == x for text without its space symbol ▁
//! (which decodes to a space, as in sentencepiece). The first byte picks the model.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokenmill_core::sentencepiece::EncodeOptions;

fuzz_target!(|data: &[u8]| {
    let models = tokenmill_fuzz::sentencepiece_models();
    let Some((model, _, text)) = tokenmill_fuzz::pick(data, models) else { return };
    let (what, processor) = (model.name, &model.processor);
    let options = EncodeOptions::default();
    let ids = processor
        .encode_ids(text, &options, Some(0))
        .unwrap_or_else(|e| panic!("{what}: encoding {text:?} failed: {e}"));
    tokenmill_fuzz::check_ids(what, &ids, processor.piece_size());
    let full = processor.encode_full(text, &options, Some(0)).expect("encode_full");
    let full_ids: Vec<u32> = full.pieces.iter().map(|p| p.id).collect();
    assert_eq!(full_ids, ids, "{what}: encode_full ids != encode_ids for {text:?}");
    tokenmill_fuzz::check_spans(what, text, full.pieces.iter().map(|p| (p.begin, p.end)));
    let decoded = processor.decode_ids(&ids).expect("the ids decode");
    if model.lossless && !text.contains('▁') {
        assert_eq!(decoded, text, "{what}: decode(encode(x)) != x");
    }
});
