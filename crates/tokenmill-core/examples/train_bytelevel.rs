//! Trains a byte-level BPE on text files and prints timings (a profiling aid for the trainer).
//! `cargo run --profile fast --example train_bytelevel -- FILE [VOCAB] [MIN_FREQ]`
//! (`OUT=path.json` saves the vocab and merges; `SLOW=1` feeds through the full pipeline)
use std::path::{Path, PathBuf};
use std::time::Instant;

use tokenmill_core::models::{ModelWrapper, BPE};
use tokenmill_core::pre_tokenizers::{byte_level::ByteLevel, PreTokenizerWrapper};
use tokenmill_core::tokenizer::{Model, Tokenizer};
use tokenmill_core::tokenizer::{OffsetReferential, OffsetType, Trainer};
use tokenmill_core::trainers::corpus::file_lines;
use tokenmill_core::trainers::{BpeTrainer, TrainerWrapper};
use tokenmill_core::utils::atomic::write_atomic;
use tokenmill_core::utils::byte_level::alphabet;

fn main() -> tokenmill_core::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let file = PathBuf::from(&args[1]);
    let vocab_size = args.get(2).map(|s| s.parse().unwrap_or(32000)).unwrap_or(32000);
    let min_frequency = args.get(3).map(|s| s.parse().unwrap_or(2)).unwrap_or(2);
    let mut tokenizer = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(ByteLevel::new(
        false, true, true,
    ))));
    let mut trainer = TrainerWrapper::BpeTrainer(BpeTrainer {
        vocab_size,
        min_frequency,
        initial_alphabet: alphabet().into_iter().collect(),
        show_progress: false,
        ..Default::default()
    });
    let start = Instant::now();
    if std::env::var("SLOW").is_ok() {
        trainer.feed_with(file_lines(vec![file]), |seq: &str, emit: &mut dyn FnMut(&str)| {
            let pre = tokenizer.normalize_and_pre_tokenize(seq)?;
            for (w, _, _) in pre.get_splits(OffsetReferential::Original, OffsetType::Byte) {
                emit(w);
            }
            Ok(())
        })?;
    } else {
        trainer.feed_tokenizer(&tokenizer, file_lines(vec![file]))?;
    }
    let fed = start.elapsed().as_secs_f64();
    let mut model = tokenizer.get_model().clone();
    Trainer::train(&trainer, &mut model)?;
    if let Ok(out) = std::env::var("OUT") {
        let ModelWrapper::BPE(bpe) = &model else {
            return Err(tokenmill_core::Error::Other("the trained model is not BPE".into()));
        };
        let json = serde_json::json!({"vocab": bpe.get_vocab(), "merges": bpe.merges()});
        write_atomic(Path::new(&out), json.to_string().as_bytes())?;
    }
    eprintln!(
        "trained {} tokens: feed {:.2}s, merges {:.2}s",
        model.get_vocab_size(),
        fed,
        start.elapsed().as_secs_f64() - fed
    );
    Ok(())
}
