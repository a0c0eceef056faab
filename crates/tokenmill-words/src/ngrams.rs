//! Character n-grams per word, as used for fuzzy matching and subword features.
use unicode_segmentation::UnicodeSegmentation;

/// Overlapping character `k`-grams of each word of `text` (UAX #29 words: runs of letters and
/// digits, punctuation dropped). The first k-gram of each word is prefixed with `mark`; a word of
/// at most `k` characters is kept whole (and marked, being its own first k-gram).
/// `k == 0` gives nothing.
pub fn char_ngrams(text: &str, k: usize, mark: &str) -> Vec<String> {
    let mut out = Vec::new();
    if k == 0 {
        return out;
    }
    for word in text.unicode_words() {
        let starts: Vec<usize> =
            word.char_indices().map(|(i, _)| i).chain(std::iter::once(word.len())).collect();
        let n_chars = starts.len() - 1;
        if n_chars <= k {
            out.push(format!("{mark}{word}"));
            continue;
        }
        for i in 0..=n_chars - k {
            let gram = &word[starts[i]..starts[i + k]];
            out.push(if i == 0 { format!("{mark}{gram}") } else { gram.to_string() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_from_the_issue() {
        assert_eq!(
            super::char_ngrams("teach multtimedia", 3, "#"),
            ["#tea", "eac", "ach", "#mul", "ult", "ltt", "tti", "tim", "ime", "med", "edi", "dia"]
        );
        assert_eq!(super::char_ngrams("a żółw", 3, "#"), ["#a", "#żół", "ółw"]);
    }
}
