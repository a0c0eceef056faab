//! sentencepiece `.model` files (protobuf `ModelProto`): parsing never panics; a model that
//! loads encodes, segments with offsets and decodes a mixed-script text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokenmill_core::sentencepiece::{EncodeOptions, Processor};

const PROBE: &str = "Hello  world, ça va? 你好 🙂 ▁x\n";

fuzz_target!(|data: &[u8]| {
    let Ok(processor) = Processor::from_bytes(data) else { return };
    let options = EncodeOptions::default();
    if let Ok(ids) = processor.encode_ids(PROBE, &options, Some(0)) {
        tokenmill_fuzz::check_ids("sentencepiece", &ids, processor.piece_size());
        let _ = processor.decode_ids(&ids);
    }
    let _ = processor.encode_full(PROBE, &options, Some(0));
    let _ = processor.encode_pieces(PROBE, &options, Some(0));
});
