//! Trains Unigram pieces on one text file and scores held-out text: log-likelihood per word and
//! bytes per token. Usage: unigram_quality TRAIN HELD_OUT VOCAB_SIZE [MAX_BYTES]
use std::collections::HashMap;

use tokenmill_core::models::unigram::Unigram;
use tokenmill_core::tokenizer::Model;
use tokenmill_core::trainers::unigram::{train_pieces, UnigramConfig};

fn words(text: &str) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for w in text.split_whitespace() {
        *counts.entry(format!("▁{w}")).or_insert(0) += 1;
    }
    counts
}

fn main() -> tokenmill_core::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let max: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| tokenmill_core::Error::io(p, e));
    let train = read(&args[1])?;
    let mut cut = max.min(train.len());
    while !train.is_char_boundary(cut) {
        cut -= 1;
    }
    let held = read(&args[2])?;
    let config = UnigramConfig {
        vocab_size: args[3].parse().unwrap_or(8000),
        num_meta_pieces: 1,
        show_progress: false,
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let sentences: Vec<(String, u64)> = words(&train[..cut]).into_iter().collect();
    let trained = train_pieces(&config, sentences)?;
    eprintln!("trained {} pieces in {:.2}s", trained.pieces.len(), start.elapsed().as_secs_f64());
    let mut vocab = trained.pieces.clone();
    vocab.push(("<unk>".into(), 0.0));
    let unk = vocab.len() - 1;
    let model = Unigram::from(vocab, Some(unk), false)?;
    let (mut ll, mut tokens, mut bytes, mut n) = (0.0, 0u64, 0u64, 0u64);
    for (w, c) in words(&held) {
        ll += c as f64 * model.log_likelihood(&w)?;
        tokens += c * model.tokenize(&w)?.len() as u64;
        bytes += c * w.len() as u64;
        n += c;
    }
    println!("ll/word {:.4} bytes/token {:.4}", ll / n as f64, bytes as f64 / tokens as f64);
    Ok(())
}
