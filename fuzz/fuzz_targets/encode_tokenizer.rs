//! Tokenizer pipelines built from pretrained files as tokenizer.json documents (GPT-2 byte-level
//! BPE, BERT WordPiece, a sentencepiece Unigram) on any text: no panic, every id in the
//! vocabulary, byte and char offsets in order, inside the text and on char boundaries, a batch
//! equal to one-by-one encoding, and for byte-level BPE decode(encode(x)) == x. The first byte
//! picks the pipeline and the options.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokenmill_core::tokenizer::OffsetType;

fuzz_target!(|data: &[u8]| {
    let tokenizers = tokenmill_fuzz::pretrained_tokenizers();
    let Some((pretrained, kind, text)) = tokenmill_fuzz::pick(data, tokenizers) else { return };
    let (what, tokenizer) = (pretrained.name, &pretrained.tokenizer);
    let add_special_tokens = kind & 0x80 != 0;
    let encoding = tokenizer
        .encode(text, add_special_tokens, OffsetType::Byte)
        .unwrap_or_else(|e| panic!("{what}: encoding {text:?} failed: {e}"));
    tokenmill_fuzz::check_ids(what, &encoding.ids, tokenizer.get_vocab_size(true));
    assert_eq!(encoding.ids.len(), encoding.offsets.len(), "{what}: one offset per id");
    let special = encoding.special_tokens_mask.iter();
    let spans = encoding.offsets.iter().zip(special).filter(|(_, &s)| s == 0).map(|(&o, _)| o);
    tokenmill_fuzz::check_spans(what, text, spans);

    let by_chars = tokenizer.encode(text, add_special_tokens, OffsetType::Char).unwrap();
    assert_eq!(by_chars.ids, encoding.ids, "{what}: ids depend on the offset type");
    let chars = text.chars().count();
    for &(start, end) in &by_chars.offsets {
        assert!(start <= end && end <= chars, "{what}: char offsets ({start}, {end}) > {chars}");
    }

    // A batch hands work to the thread pool; waiting for it is slow on a busy machine, so only
    // a quarter of the inputs (picked by the first byte) check it.
    if kind & 0x60 == 0x60 {
        let batch = tokenizer.encode_batch(vec![text, text], add_special_tokens, OffsetType::Byte);
        for other in batch.expect("the batch encodes") {
            assert_eq!(other.ids, encoding.ids, "{what}: encode_batch != encode");
            assert_eq!(other.offsets, encoding.offsets, "{what}: encode_batch != encode");
        }
    }

    let decoded = tokenizer.decode(&encoding.ids, false).expect("the ids decode");
    if pretrained.lossless && !add_special_tokens {
        assert_eq!(decoded, text, "{what}: decode(encode(x)) != x");
    }
});
