//! sentencepiece's training options (`--name=value`, sentencepiece_trainer.cc's
//! `MergeSpecsFromArgs`): parsed and set on the trainer and normalizer specs.
//!
//! May import the trainer interface (`super`) and `sentencepiece::proto`.
use super::invalid;
use crate::error::Result;
use crate::sentencepiece::proto::{ModelType, NormalizerSpec, TrainerSpec};

/// The value of a boolean flag ("true"/"false", "1"/"0", "yes"/"no", any case).
fn parse_bool(name: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "t" | "yes" | "y" | "" => Ok(true),
        "false" | "0" | "f" | "no" | "n" => Ok(false),
        _ => Err(invalid(format!("cannot parse \"{value}\" as bool for --{name}"))),
    }
}

fn parse_num<T: std::str::FromStr>(name: &str, value: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| invalid(format!("cannot parse \"{value}\" as a number for --{name}")))
}

/// Comma-separated values (the Python wrapper writes lists as one CSV row).
fn parse_list(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// Sets one of SentencePiece's training flags (`--name=value`) on the specs.
pub fn set_option(
    spec: &mut TrainerSpec,
    normalizer: &mut NormalizerSpec,
    name: &str,
    value: &str,
) -> Result<()> {
    let n = name;
    match name {
        "input" => spec.input = parse_list(value),
        "input_format" => spec.input_format = Some(value.into()),
        "model_prefix" => spec.model_prefix = Some(value.into()),
        "model_type" => {
            let kind = match value.to_ascii_lowercase().as_str() {
                "unigram" => ModelType::Unigram,
                "bpe" => ModelType::Bpe,
                "word" => ModelType::Word,
                "char" => ModelType::Char,
                other => {
                    return Err(invalid(format!(
                        "unknown model_type \"{other}\" (unigram, bpe, word or char)"
                    )))
                }
            };
            spec.model_type = Some(kind as i32);
        }
        "vocab_size" => spec.vocab_size = Some(parse_num(n, value)?),
        "accept_language" => spec.accept_language = parse_list(value),
        "self_test_sample_size" => spec.self_test_sample_size = Some(parse_num(n, value)?),
        "character_coverage" => spec.character_coverage = Some(parse_num(n, value)?),
        "input_sentence_size" => spec.input_sentence_size = Some(parse_num(n, value)?),
        "shuffle_input_sentence" => spec.shuffle_input_sentence = Some(parse_bool(n, value)?),
        "seed_sentencepiece_size" => spec.seed_sentencepiece_size = Some(parse_num(n, value)?),
        "shrinking_factor" => spec.shrinking_factor = Some(parse_num(n, value)?),
        "num_threads" => spec.num_threads = Some(parse_num(n, value)?),
        "num_sub_iterations" => spec.num_sub_iterations = Some(parse_num(n, value)?),
        "max_sentence_length" => spec.max_sentence_length = Some(parse_num(n, value)?),
        "max_sentencepiece_length" => spec.max_sentencepiece_length = Some(parse_num(n, value)?),
        "split_by_unicode_script" => spec.split_by_unicode_script = Some(parse_bool(n, value)?),
        "split_by_whitespace" => spec.split_by_whitespace = Some(parse_bool(n, value)?),
        "split_by_number" => spec.split_by_number = Some(parse_bool(n, value)?),
        "split_digits" => spec.split_digits = Some(parse_bool(n, value)?),
        "treat_whitespace_as_suffix" => {
            spec.treat_whitespace_as_suffix = Some(parse_bool(n, value)?)
        }
        "allow_whitespace_only_pieces" => {
            spec.allow_whitespace_only_pieces = Some(parse_bool(n, value)?)
        }
        "control_symbols" => spec.control_symbols = parse_list(value),
        "user_defined_symbols" => spec.user_defined_symbols = parse_list(value),
        "required_chars" => spec.required_chars = Some(value.into()),
        "byte_fallback" => spec.byte_fallback = Some(parse_bool(n, value)?),
        "vocabulary_output_piece_score" => {
            spec.vocabulary_output_piece_score = Some(parse_bool(n, value)?)
        }
        "hard_vocab_limit" => spec.hard_vocab_limit = Some(parse_bool(n, value)?),
        "use_all_vocab" => spec.use_all_vocab = Some(parse_bool(n, value)?),
        "unk_id" => spec.unk_id = Some(parse_num(n, value)?),
        "bos_id" => spec.bos_id = Some(parse_num(n, value)?),
        "eos_id" => spec.eos_id = Some(parse_num(n, value)?),
        "pad_id" => spec.pad_id = Some(parse_num(n, value)?),
        "unk_piece" => spec.unk_piece = Some(value.into()),
        "bos_piece" => spec.bos_piece = Some(value.into()),
        "eos_piece" => spec.eos_piece = Some(value.into()),
        "pad_piece" => spec.pad_piece = Some(value.into()),
        "unk_surface" => spec.unk_surface = Some(value.into()),
        "train_extremely_large_corpus" => {
            spec.train_extremely_large_corpus = Some(parse_bool(n, value)?)
        }
        "pretokenization_delimiter" => spec.pretokenization_delimiter = Some(value.into()),
        "seed_sentencepieces_file" => spec.seed_sentencepieces_file = Some(value.into()),
        "normalization_rule_name" => normalizer.name = Some(value.into()),
        "normalization_rule_tsv" => normalizer.normalization_rule_tsv = Some(value.into()),
        "add_dummy_prefix" => normalizer.add_dummy_prefix = Some(parse_bool(n, value)?),
        "remove_extra_whitespaces" => {
            normalizer.remove_extra_whitespaces = Some(parse_bool(n, value)?)
        }
        "escape_whitespaces" => normalizer.escape_whitespaces = Some(parse_bool(n, value)?),
        // sentencepiece 0.2.1's automatic character coverage is not implemented: only its
        // default (false) is accepted.
        "auto_character_coverage" => {
            if parse_bool(n, value)? {
                return Err(invalid(
                    "auto_character_coverage=true is not supported by tokenmill \
                    (set character_coverage instead)",
                ));
            }
        }
        // Accepted for compatibility; they change nothing here.
        "minloglevel"
        | "random_seed"
        | "denormalization_rule_tsv"
        | "enable_differential_privacy"
        | "differential_privacy_noise_level"
        | "differential_privacy_clipping_threshold"
        | "mining_sentence_size"
        | "training_sentence_size" => {}
        _ => {
            return Err(invalid(format!(
                "unknown field name \"{name}\" in TrainerSpec or NormalizerSpec"
            )))
        }
    }
    Ok(())
}

/// Parses the `"--name=value --name2=value2"` string form.
pub fn parse_flags(args: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for arg in args.split_whitespace() {
        let arg = arg.trim_start_matches('-');
        let (name, value) = arg.split_once('=').unwrap_or((arg, "true"));
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}
