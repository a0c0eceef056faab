//! Models: turn one pre-tokenized piece into tokens. One folder per model family.
pub mod bpe;

// PLACEHOLDER until the BPE owner lands `ModelWrapper` (enum over model families, implementing
// `Model`, `Clone`, `Debug`, `Send + Sync`, serde exactly as `tokenizers`' tokenizer.json "model").
