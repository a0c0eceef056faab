//! Punkt: unsupervised sentence boundary detection (Kiss & Strunk 2006), following NLTK's
//! `PunktTrainer` / `PunktSentenceTokenizer` step by step so that the same raw text yields the
//! same abbreviations, collocations and sentence starters.
//!
//! The learner counts word types in raw text; a type that mostly occurs with a final period, is
//! short and has internal periods is an abbreviation (a modified Dunning log-likelihood score);
//! types that follow sentence breaks unusually often are sentence starters; pairs "initial. Word"
//! or "number. word" that co-occur unusually often are collocations (no break between them).
//! The splitter then marks period-final tokens as breaks unless they are abbreviations, and
//! revisits abbreviations, initials, numbers and ellipses with the orthographic context (does the
//! next word occur lowercase mid-sentence? uppercase at sentence starts?).
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::rules::LanguageRules;
use super::tokenizer::is_space;
use tokenmill_core::Result;

// Orthographic context flags (NLTK's _ORTHO_*): where a type was seen and with which case.
const BEG_UC: u32 = 1 << 1;
const MID_UC: u32 = 1 << 2;
const UNK_UC: u32 = 1 << 3;
const BEG_LC: u32 = 1 << 4;
const MID_LC: u32 = 1 << 5;
const UNK_LC: u32 = 1 << 6;
const ORTHO_UC: u32 = BEG_UC | MID_UC | UNK_UC;
const ORTHO_LC: u32 = BEG_LC | MID_LC | UNK_LC;

// NLTK PunktTrainer's constants.
const ABBREV: f64 = 0.3;
const ABBREV_BACKOFF: u64 = 5;
const COLLOCATION: f64 = 7.88;
const SENT_STARTER: f64 = 30.0;
const MIN_COLLOC_FREQ: u64 = 1;

const NUMBER_TYPE: &str = "##number##";

/// What the learner found; all a splitter needs. Sorted collections keep the JSON deterministic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PunktParameters {
    /// Abbreviation types, lowercase, without the final period.
    pub abbrev_types: BTreeSet<String>,
    /// (type ending in a period without it, following type): no sentence break between them.
    pub collocations: BTreeSet<(String, String)>,
    pub sent_starters: BTreeSet<String>,
    pub ortho_context: BTreeMap<String, u32>,
}

impl PunktParameters {
    fn ortho(&self, typ: &str) -> u32 {
        self.ortho_context.get(typ).copied().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Default)]
struct Token {
    start: usize,
    end: usize,
    typ: String,
    period_final: bool,
    parastart: bool,
    linestart: bool,
    sentbreak: bool,
    abbr: bool,
    ellipsis: bool,
    first_upper: bool,
    first_lower: bool,
}

impl Token {
    fn new(text: &str, start: usize, end: usize) -> Self {
        let tok = &text[start..end];
        let first = tok.chars().next().unwrap_or(' ');
        Token {
            start,
            end,
            typ: token_type(tok),
            period_final: tok.ends_with('.'),
            first_upper: first.is_uppercase(),
            first_lower: first.is_lowercase(),
            ..Default::default()
        }
    }
    fn tok<'a>(&self, text: &'a str) -> &'a str {
        &text[self.start..self.end]
    }
    fn type_no_period(&self) -> &str {
        if self.typ.chars().count() > 1 && self.typ.ends_with('.') {
            &self.typ[..self.typ.len() - 1]
        } else {
            &self.typ
        }
    }
    fn type_no_sentperiod(&self) -> &str {
        if self.sentbreak {
            self.type_no_period()
        } else {
            &self.typ
        }
    }
    fn is_number(&self) -> bool {
        self.typ.starts_with(NUMBER_TYPE)
    }
    /// One letter and a period ("J.").
    fn is_initial(&self, text: &str) -> bool {
        let mut c = self.tok(text).chars();
        matches!((c.next(), c.next(), c.next()), (Some(a), Some('.'), None) if is_letter(a))
    }
    fn is_alpha(&self, text: &str) -> bool {
        self.tok(text).chars().all(is_letter)
    }
    fn is_non_punct(&self) -> bool {
        self.typ.chars().any(is_letter)
    }
    fn first_case_flag(&self, context: Context) -> u32 {
        match (context, self.first_lower, self.first_upper) {
            (Context::Initial, true, _) => BEG_LC,
            (Context::Internal, true, _) => MID_LC,
            (Context::Unknown, true, _) => UNK_LC,
            (Context::Initial, _, true) => BEG_UC,
            (Context::Internal, _, true) => MID_UC,
            (Context::Unknown, _, true) => UNK_UC,
            _ => 0,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Initial,
    Internal,
    Unknown,
}

/// Python's `\d`: decimal digits (general category Nd).
fn is_decimal(c: char) -> bool {
    c.is_ascii_digit()
        || (!c.is_ascii()
            && unicode_general_category::get_general_category(c)
                == unicode_general_category::GeneralCategory::DecimalNumber)
}

/// Python's `[^\W\d]`: word characters that are not decimal digits (letters, marks, "_", ...).
fn is_letter(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_decimal(c)
}

/// Lowercased token, numbers (NLTK: `^-?[.,]?\d[\d,.-]*\.?$`) as "##number##".
fn token_type(tok: &str) -> String {
    if is_numeric_token(tok) {
        NUMBER_TYPE.to_string()
    } else {
        tok.to_lowercase()
    }
}

fn is_numeric_token(tok: &str) -> bool {
    let rest = tok.strip_prefix('-').unwrap_or(tok);
    let rest = rest.strip_prefix(['.', ',']).unwrap_or(rest);
    let mut chars = rest.chars();
    chars.next().is_some_and(is_decimal)
        && chars.all(|c| is_decimal(c) || matches!(c, ',' | '.' | '-'))
}

// NLTK PunktLanguageVars' character classes.
fn excluded_word_start(c: char) -> bool {
    matches!(
        c,
        '(' | '"'
            | '`'
            | '{'
            | '['
            | ':'
            | ';'
            | '&'
            | '#'
            | '*'
            | '@'
            | ')'
            | '}'
            | ']'
            | '-'
            | ','
    )
}
fn is_non_word(c: char) -> bool {
    matches!(c, ')' | '"' | ';' | '}' | ']' | '*' | ':' | '@' | '\'' | '(' | '{' | '[' | '?' | '!')
        || is_curly_quote(c)
}
/// NLTK 3.9+ treats curly quotes and guillemets like the ASCII quotes.
fn is_curly_quote(c: char) -> bool {
    matches!(c, '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}' | '\u{ab}' | '\u{bb}')
}
fn is_sent_end(c: char) -> bool {
    matches!(c, '.' | '?' | '!')
}

/// Length of the multi-character punctuation at the start of `s` ("--", "...", ". . ."), or 0.
fn multi_char_len(s: &str) -> usize {
    let b = s.as_bytes();
    let run = |ch: u8| b.iter().take_while(|&&x| x == ch).count();
    if b.first() == Some(&b'-') && run(b'-') >= 2 {
        return run(b'-');
    }
    if b.first() == Some(&b'.') {
        if run(b'.') >= 2 {
            return run(b'.');
        }
        // (?:\.\s){2,}\.
        let mut pos = 0;
        let mut pairs = 0;
        loop {
            let rest = &s[pos..];
            let mut cs = rest.chars();
            match (cs.next(), cs.next()) {
                (Some('.'), Some(w)) if is_space(w) => {
                    pos += 1 + w.len_utf8();
                    pairs += 1;
                }
                _ => break,
            }
        }
        if pairs >= 2 && s[pos..].starts_with('.') {
            return pos + 1;
        }
    }
    0
}

/// Punkt's word tokenizer on one line (NLTK's `_word_tokenize_fmt`), as byte spans in `text`.
fn tokenize_line(text: &str, line_start: usize, line_end: usize, out: &mut Vec<(usize, usize)>) {
    let mut i = line_start;
    while i < line_end {
        let c = text[i..].chars().next().unwrap_or(' ');
        if is_space(c) {
            i += c.len_utf8();
            continue;
        }
        let m = multi_char_len(&text[i..line_end]);
        if m > 0 {
            out.push((i, i + m));
            i += m;
            continue;
        }
        if excluded_word_start(c) {
            out.push((i, i + c.len_utf8()));
            i += c.len_utf8();
            continue;
        }
        // Lazily extend until the word end lookahead holds.
        let mut end = i + c.len_utf8();
        while end < line_end && !word_ends_at(&text[end..line_end]) {
            end += text[end..].chars().next().map_or(1, char::len_utf8);
        }
        out.push((i, end));
        i = end;
    }
}

fn word_ends_at(rest: &str) -> bool {
    let mut cs = rest.chars();
    let Some(c) = cs.next() else { return true };
    if is_space(c) || is_non_word(c) || multi_char_len(rest) > 0 {
        return true;
    }
    if c == ',' {
        let after = cs.as_str();
        return match after.chars().next() {
            None => true,
            Some(n) => is_space(n) || is_non_word(n) || multi_char_len(after) > 0,
        };
    }
    false
}

/// Punkt tokens of a text with paragraph/line start flags (NLTK's `_tokenize_words`).
fn tokenize_words(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut spans = Vec::new();
    let mut parastart = false;
    let mut line_start = 0;
    for line in text.split('\n') {
        let line_end = line_start + line.len();
        if line.chars().all(is_space) {
            parastart = true;
        } else {
            spans.clear();
            tokenize_line(text, line_start, line_end, &mut spans);
            for (n, &(s, e)) in spans.iter().enumerate() {
                let mut t = Token::new(text, s, e);
                if n == 0 {
                    t.linestart = true;
                    t.parastart = parastart;
                    parastart = false;
                }
                tokens.push(t);
            }
        }
        line_start = line_end + 1;
    }
    tokens
}

/// First pass: breaks at ".?!" and period-final non-abbreviations; ellipses; abbreviations.
fn annotate_first_pass(text: &str, tokens: &mut [Token], params: &PunktParameters) {
    for t in tokens.iter_mut() {
        let tok = t.tok(text);
        if matches!(tok, "." | "?" | "!") {
            t.sentbreak = true;
        } else if tok.len() >= 2 && tok.bytes().all(|b| b == b'.') && tok.starts_with("..") {
            t.ellipsis = true;
        } else if t.period_final && !tok.ends_with("..") {
            let lower = tok[..tok.len() - 1].to_lowercase();
            let last_part = lower.rsplit('-').next().unwrap_or("");
            if params.abbrev_types.contains(&lower) || params.abbrev_types.contains(last_part) {
                t.abbr = true;
            } else {
                t.sentbreak = true;
            }
        }
    }
}

/// NLTK's `_ortho_heuristic`: Some(true) = sentence starter, Some(false) = not, None = unknown.
fn ortho_heuristic(text: &str, t: &Token, params: &PunktParameters) -> Option<bool> {
    if matches!(t.tok(text), ";" | ":" | "," | "." | "!" | "?") {
        return Some(false);
    }
    let ctx = params.ortho(t.type_no_sentperiod());
    if t.first_upper && ctx & ORTHO_LC != 0 && ctx & MID_UC == 0 {
        return Some(true);
    }
    if t.first_lower && (ctx & ORTHO_UC != 0 || ctx & BEG_LC == 0) {
        return Some(false);
    }
    None
}

/// Second pass over one pair (NLTK's `_second_pass_annotation`).
fn annotate_pair(text: &str, t1: &mut Token, t2: &Token, params: &PunktParameters) {
    if !t1.period_final {
        return;
    }
    let typ = t1.type_no_period().to_string();
    let next_typ = t2.type_no_sentperiod();
    let initial = t1.is_initial(text);
    if params.collocations.contains(&(typ.clone(), next_typ.to_string())) {
        t1.sentbreak = false;
        t1.abbr = true;
        return;
    }
    if (t1.abbr || t1.ellipsis) && !initial {
        if ortho_heuristic(text, t2, params) == Some(true) {
            t1.sentbreak = true;
            return;
        }
        if t2.first_upper && params.sent_starters.contains(next_typ) {
            t1.sentbreak = true;
            return;
        }
    }
    if initial || typ == NUMBER_TYPE {
        let starter = ortho_heuristic(text, t2, params);
        if starter == Some(false) {
            t1.sentbreak = false;
            t1.abbr = true;
            return;
        }
        if starter.is_none() && initial && t2.first_upper && params.ortho(next_typ) & ORTHO_LC == 0
        {
            t1.sentbreak = false;
            t1.abbr = true;
        }
    }
}

fn dunning_log_likelihood(count_a: f64, count_b: f64, count_ab: f64, n: f64) -> f64 {
    let p1 = count_b / n;
    let p2 = 0.99f64;
    let null_hypo = count_ab * (p1 + 1e-8).ln() + (count_a - count_ab) * (1.0 - p1 + 1e-8).ln();
    let alt_hypo = count_ab * p2.ln() + (count_a - count_ab) * (1.0 - p2).ln();
    -2.0 * (null_hypo - alt_hypo)
}

/// `x.ln()` that fails like Python's `math.log` on non-positive input.
fn py_log(x: f64) -> Option<f64> {
    (x > 0.0).then(|| x.ln())
}

fn col_log_likelihood(count_a: f64, count_b: f64, count_ab: f64, n: f64) -> f64 {
    let p = count_b / n;
    let p1 = count_ab / count_a;
    let p2 = if n - count_a == 0.0 { 1.0 } else { (count_b - count_ab) / (n - count_a) };
    let summand1 = match (py_log(p), py_log(1.0 - p)) {
        (Some(lp), Some(lq)) => count_ab * lp + (count_a - count_ab) * lq,
        _ => 0.0,
    };
    let summand2 = match (py_log(p), py_log(1.0 - p)) {
        (Some(lp), Some(lq)) => (count_b - count_ab) * lp + (n - count_a - count_b + count_ab) * lq,
        _ => 0.0,
    };
    let summand3 = if count_a == count_ab || p1 <= 0.0 || p1 >= 1.0 {
        0.0
    } else {
        count_ab * p1.ln() + (count_a - count_ab) * (1.0 - p1).ln()
    };
    let summand4 = if count_b == count_ab || p2 <= 0.0 || p2 >= 1.0 {
        0.0
    } else {
        (count_b - count_ab) * p2.ln() + (n - count_a - count_b + count_ab) * (1.0 - p2).ln()
    };
    -2.0 * (summand1 + summand2 - summand3 - summand4)
}

/// Learns Punkt parameters from raw text; `train` may be called repeatedly (counts accumulate).
#[derive(Debug, Clone, Default)]
pub struct PunktTrainer {
    params: PunktParameters,
    type_fdist: FxHashMap<String, u64>,
    n_tokens: u64,
    num_period_toks: u64,
    sentbreak_count: u64,
    sent_starter_fdist: FxHashMap<String, u64>,
    collocation_fdist: FxHashMap<(String, String), u64>,
}

impl PunktTrainer {
    /// A trainer that starts from known parameters (e.g. a language's abbreviations).
    pub fn with_params(params: PunktParameters) -> Self {
        PunktTrainer { params, ..Default::default() }
    }

    fn count(&self, typ: &str) -> u64 {
        self.type_fdist.get(typ).copied().unwrap_or(0)
    }

    /// Count `text` (NLTK's `train(text, finalize=False)`); call `finalize` afterwards.
    pub fn train(&mut self, text: &str) {
        let mut tokens = tokenize_words(text);
        for t in &tokens {
            *self.type_fdist.entry(t.typ.clone()).or_insert(0) += 1;
            self.n_tokens += 1;
            if t.period_final {
                self.num_period_toks += 1;
            }
        }
        let mut unique: Vec<&str> = tokens.iter().map(|t| t.typ.as_str()).collect();
        unique.sort_unstable();
        unique.dedup();
        let unique: Vec<String> = unique.into_iter().map(str::to_string).collect();
        self.reclassify_abbrev_types(&unique);
        annotate_first_pass(text, &mut tokens, &self.params);
        self.collect_orthography(&tokens);
        self.sentbreak_count += tokens.iter().filter(|t| t.sentbreak).count() as u64;
        for w in tokens.windows(2) {
            let (t1, t2) = (&w[0], &w[1]);
            if !t1.period_final {
                continue;
            }
            if self.is_rare_abbrev_type(text, t1, t2) {
                self.params.abbrev_types.insert(t1.type_no_period().to_string());
            }
            if t1.sentbreak && !(t1.is_number() || t1.is_initial(text)) && t2.is_alpha(text) {
                *self.sent_starter_fdist.entry(t2.typ.clone()).or_insert(0) += 1;
            }
            if t1.sentbreak
                && (t1.is_number() || t1.is_initial(text))
                && t1.is_non_punct()
                && t2.is_non_punct()
            {
                let key = (t1.type_no_period().to_string(), t2.type_no_sentperiod().to_string());
                *self.collocation_fdist.entry(key).or_insert(0) += 1;
            }
        }
    }

    fn reclassify_abbrev_types(&mut self, types: &[String]) {
        for typ in types {
            if !typ.chars().any(is_letter) || typ == NUMBER_TYPE {
                continue;
            }
            let (candidate, is_add) = match typ.strip_suffix('.') {
                Some(stem) => {
                    if self.params.abbrev_types.contains(typ.as_str()) {
                        continue;
                    }
                    (stem.to_string(), true)
                }
                None => {
                    if !self.params.abbrev_types.contains(typ.as_str()) {
                        continue;
                    }
                    (typ.clone(), false)
                }
            };
            let num_periods = candidate.matches('.').count() as f64 + 1.0;
            let num_nonperiods = candidate.chars().count() as f64 - num_periods + 1.0;
            let with_period = self.count(&format!("{candidate}.")) as f64;
            let without_period = self.count(&candidate) as f64;
            let ll = dunning_log_likelihood(
                with_period + without_period,
                self.num_period_toks as f64,
                with_period,
                self.n_tokens as f64,
            );
            let f_length = (-num_nonperiods).exp();
            let f_penalty = num_nonperiods.powf(-without_period);
            let score = ll * f_length * num_periods * f_penalty;
            if score >= ABBREV {
                if is_add {
                    self.params.abbrev_types.insert(candidate);
                }
            } else if !is_add {
                self.params.abbrev_types.remove(&candidate);
            }
        }
    }

    fn collect_orthography(&mut self, tokens: &[Token]) {
        let mut context = Context::Internal;
        for t in tokens {
            if t.parastart && context != Context::Unknown {
                context = Context::Initial;
            }
            if t.linestart && context == Context::Internal {
                context = Context::Unknown;
            }
            let flag = t.first_case_flag(context);
            if flag != 0 {
                *self
                    .params
                    .ortho_context
                    .entry(t.type_no_sentperiod().to_string())
                    .or_insert(0) |= flag;
            }
            context = if t.sentbreak {
                if t.is_number() || t.is_initial_by_type() {
                    Context::Unknown
                } else {
                    Context::Initial
                }
            } else if t.ellipsis || t.abbr {
                Context::Unknown
            } else {
                Context::Internal
            };
        }
    }

    fn is_rare_abbrev_type(&self, text: &str, cur: &Token, next: &Token) -> bool {
        if cur.abbr || !cur.sentbreak {
            return false;
        }
        let typ = cur.type_no_sentperiod();
        // NLTK adds the count of `typ[:-1]` (typ already lacks its period); kept for equal results.
        let chopped = typ.char_indices().next_back().map_or("", |(i, _)| &typ[..i]);
        let count = self.count(typ) + self.count(chopped);
        if self.params.abbrev_types.contains(typ) || count >= ABBREV_BACKOFF {
            return false;
        }
        if next.tok(text).starts_with([',', ':', ';']) {
            return true;
        }
        if next.first_lower {
            let ctx = self.params.ortho(next.type_no_sentperiod());
            return ctx & BEG_UC != 0 && ctx & MID_UC == 0;
        }
        false
    }

    /// Derives sentence starters and collocations from the counts (NLTK's `finalize_training`).
    pub fn finalize(&mut self) {
        let n = self.n_tokens as f64;
        self.params.sent_starters.clear();
        if self.sentbreak_count > 0 {
            for (typ, &at_break) in &self.sent_starter_fdist {
                let typ_count = self.count(typ) + self.count(&format!("{typ}."));
                if typ_count < at_break {
                    continue;
                }
                let ll = col_log_likelihood(
                    self.sentbreak_count as f64,
                    typ_count as f64,
                    at_break as f64,
                    n,
                );
                if ll >= SENT_STARTER
                    && n / self.sentbreak_count as f64 > typ_count as f64 / at_break as f64
                {
                    self.params.sent_starters.insert(typ.clone());
                }
            }
        }
        self.params.collocations.clear();
        for ((typ1, typ2), &col_count) in &self.collocation_fdist {
            if self.params.sent_starters.contains(typ2) {
                continue;
            }
            let c1 = self.count(typ1) + self.count(&format!("{typ1}."));
            let c2 = self.count(typ2) + self.count(&format!("{typ2}."));
            if c1 > 1 && c2 > 1 && MIN_COLLOC_FREQ < col_count && col_count <= c1.min(c2) {
                let ll = col_log_likelihood(c1 as f64, c2 as f64, col_count as f64, n);
                if ll >= COLLOCATION && n / c1 as f64 > c2 as f64 / col_count as f64 {
                    self.params.collocations.insert((typ1.clone(), typ2.clone()));
                }
            }
        }
    }

    pub fn params(&self) -> &PunktParameters {
        &self.params
    }
}

impl Token {
    /// `is_initial` without the text: the type is one letter and a period.
    fn is_initial_by_type(&self) -> bool {
        let mut c = self.typ.chars();
        matches!((c.next(), c.next(), c.next()), (Some(a), Some('.'), None) if is_letter(a))
    }
}

/// Sentence splitter: Punkt parameters (learned, loaded, or a language's abbreviations).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SentenceSplitter {
    pub language: String,
    pub params: PunktParameters,
}

/// Marks NLTK's realignment moves onto the sentence before ("...end.\" Next").
fn is_closing_mark(tok: &str) -> bool {
    let mut cs = tok.chars();
    let closing = |c: char| matches!(c, '"' | '\'' | ')' | ']' | '}') || is_curly_quote(c);
    matches!((cs.next(), cs.next()), (Some(c), None) if closing(c))
}

impl SentenceSplitter {
    /// A splitter knowing `language`'s abbreviation list (see `LanguageRules`).
    pub fn for_language(language: &str) -> Self {
        let rules = LanguageRules::for_language(language);
        let abbrev_types =
            rules.abbreviations.iter().map(|a| a.trim_end_matches('.').to_lowercase()).collect();
        SentenceSplitter {
            language: rules.language,
            params: PunktParameters { abbrev_types, ..Default::default() },
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn from_json(json: &str) -> Result<Self> {
        Ok(serde_json::from_str(json)?)
    }

    /// Sentence spans as byte offsets: from the first to the last non-space character of each.
    pub fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut tokens = tokenize_words(text);
        annotate_first_pass(text, &mut tokens, &self.params);
        for i in 0..tokens.len().saturating_sub(1) {
            let (head, tail) = tokens.split_at_mut(i + 1);
            annotate_pair(text, &mut head[i], &tail[0], &self.params);
        }
        let mut spans = Vec::new();
        let mut start: Option<usize> = None;
        let mut i = 0;
        while i < tokens.len() {
            let t = &tokens[i];
            let s = *start.get_or_insert(t.start);
            if t.sentbreak && self.break_allowed_after(text, t.end) {
                // Closing quotes and brackets right after the break belong to this sentence.
                let mut end = t.end;
                let mut j = i + 1;
                while j < tokens.len()
                    && tokens[j].start == end
                    && is_closing_mark(tokens[j].tok(text))
                {
                    end = tokens[j].end;
                    j += 1;
                }
                spans.push((s, end));
                start = None;
                i = j;
                continue;
            }
            i += 1;
        }
        if let Some(s) = start {
            let end = text.trim_end_matches(is_space).len();
            spans.push((s, end.max(s)));
        }
        spans
    }

    /// NLTK only considers a ".?!" followed by whitespace, other punctuation or the text's end,
    /// and of a run like "!!!" only the last mark.
    fn break_allowed_after(&self, text: &str, end: usize) -> bool {
        match text[end..].chars().next() {
            None => true,
            Some(c) => !is_sent_end(c) && (is_space(c) || is_non_word(c) || !c.is_alphanumeric()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_with_abbreviations() {
        let s = SentenceSplitter::for_language("en");
        let text =
            "Mr. Smith went to Washington. He met Dr. Jones there! Was it fun? \"Yes.\" Fine.";
        let got: Vec<&str> = s.spans(text).iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(
            got,
            [
                "Mr. Smith went to Washington.",
                "He met Dr. Jones there!",
                "Was it fun?",
                "\"Yes.\"",
                "Fine."
            ]
        );
    }

    #[test]
    fn learns_abbreviations() {
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!(
                "The meeting with approx. {i} people ended. Then prof. Brown spoke again. "
            ));
        }
        let mut trainer = PunktTrainer::default();
        trainer.train(&text);
        trainer.finalize();
        // NLTK's PunktTrainer learns {"prof", "ended", "again"} from this toy text (the Python
        // tests compare with NLTK on real books).
        let learned: Vec<&str> = trainer.params().abbrev_types.iter().map(String::as_str).collect();
        assert_eq!(learned, ["again", "ended", "prof"]);
    }
}
