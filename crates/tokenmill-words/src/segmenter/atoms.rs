//! Cuts a whitespace-free chunk of text into atoms, the units the word graph is built on:
//! one atom per Han or kana character, and rule-based atoms for everything else — a run of
//! letters and digits (Latin words, ASCII and fullwidth numbers with decimal points,
//! separators and a percent sign), a run of the same dash or ellipsis character, or one
//! symbol with the combining marks and joiners that follow it. A dictionary word may span
//! several atoms but never cuts one.
//!
//! Hand-written: the classes are a few code-point ranges and the scan is one forward pass
//! that looks at most two characters ahead, so it is linear in the chunk.

/// What an atom is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AtomKind {
    Han,
    Hiragana,
    Katakana,
    /// Digits, possibly with separators between them and a percent sign at the end.
    Number,
    /// Letters (any script but CJK), possibly with digits.
    Word,
    Symbol,
}

impl AtomKind {
    /// Han and kana: the atoms that dictionary words and the HMM are about.
    pub(super) fn is_cjk(self) -> bool {
        matches!(self, AtomKind::Han | AtomKind::Hiragana | AtomKind::Katakana)
    }
}

/// One atom: byte range in the text, its kind and its first character (kept so that the word
/// graph and the HMM need not decode the text again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Atom {
    pub start: usize,
    pub end: usize,
    pub kind: AtomKind,
    pub first: char,
}

/// Han ideographs (unified, extensions, compatibility), the ideographic iteration mark 々 and
/// zero 〇, and ○ (U+25CB), which Chinese text commonly uses as zero in numbers (二○○一年).
pub(super) fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2FA1F | 0x30000..=0x323AF | 0xF900..=0xFAFF
        | 0x3005 | 0x3007 | 0x25CB)
}

pub(super) fn is_hiragana(c: char) -> bool {
    matches!(c as u32, 0x3041..=0x309F)
}

/// Katakana, including the prolonged sound mark ー, small katakana and halfwidth forms.
pub(super) fn is_katakana(c: char) -> bool {
    matches!(c as u32, 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F)
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || ('０'..='９').contains(&c)
}

fn is_letter(c: char) -> bool {
    c.is_alphabetic() && !is_han(c) && !is_hiragana(c) && !is_katakana(c)
}

fn is_alnum(c: char) -> bool {
    !is_common_punctuation(c) && (is_digit(c) || is_letter(c) || (c.is_numeric() && !is_han(c)))
}

/// General punctuation and the CJK / fullwidth punctuation blocks' marks, brackets and
/// symbols: no letter, digit or mark among them (a unit test checks). Frequent in Chinese and
/// Japanese text, and answered here without the Unicode property tables.
fn is_common_punctuation(c: char) -> bool {
    matches!(c as u32,
        0x2010..=0x2027 | 0x2030..=0x205E | 0x3000..=0x3004 | 0x3008..=0x3020 | 0x3030
        | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

/// Characters that continue a number between two digits: decimal points, thousands separators,
/// middle dots (PKU writes 44·97), ratios and times (2∶1, 12:30), fractions (69／70).
fn joins_digits(c: char) -> bool {
    matches!(c, '.' | '．' | ',' | '·' | '・' | ':' | '∶' | '/' | '／')
}

/// Characters that continue a word between two letters or digits (www.example.com, e-mail,
/// B737-300).
fn joins_alnum(c: char) -> bool {
    matches!(c, '.' | '．' | '-' | '－' | '_' | '\'' | '’' | '&')
}

fn is_percent(c: char) -> bool {
    matches!(c, '%' | '％' | '‰')
}

/// Dashes, ellipses and the like: a run of the same one is one atom (—— and …… are one word).
fn repeats_as_one(c: char) -> bool {
    matches!(
        c,
        '—' | '…'
            | '─'
            | '―'
            | '-'
            | '.'
            | '·'
            | '～'
            | '~'
            | '='
            | '*'
            | '_'
            | '!'
            | '?'
            | '！'
            | '？'
            | '－'
    )
}

/// Combining marks, variation selectors and zero-width joiners stay with the character before.
fn extends(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory::*};
    // Fast exit for the common case (ASCII, Han, kana, fullwidth forms), before the table lookup.
    if c < '\u{300}'
        || (is_han(c) && c != '\u{25CB}')
        || is_common_punctuation(c)
        || matches!(c as u32, 0x3040..=0x3098 | 0x309B..=0x30FF | 0xFF00..=0xFFEF)
    {
        return false;
    }
    matches!(c as u32,
        0x200D | 0xFE00..=0xFE0F | 0xE0100..=0xE01EF | 0x1F3FB..=0x1F3FF | 0xE0020..=0xE007F)
        || (!c.is_ascii()
            && matches!(get_general_category(c), NonspacingMark | SpacingMark | EnclosingMark))
}

/// Appends the atoms of `chunk` (no whitespace inside), offsets shifted by `base`.
pub(super) fn scan(chunk: &str, base: usize, atoms: &mut Vec<Atom>) {
    let mut chars = chunk.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let mut end = start + c.len_utf8();
        let kind = if is_han(c) {
            AtomKind::Han
        } else if is_hiragana(c) {
            AtomKind::Hiragana
        } else if is_katakana(c) {
            AtomKind::Katakana
        } else if is_alnum(c) {
            let (run_end, all_digits) = alnum_run(chunk, start);
            while chars.peek().is_some_and(|&(i, _)| i < run_end) {
                chars.next();
            }
            end = run_end;
            if all_digits {
                AtomKind::Number
            } else {
                AtomKind::Word
            }
        } else if repeats_as_one(c) {
            while chars.peek().is_some_and(|&(_, n)| n == c) {
                end += chars.next().map_or(0, |(_, n)| n.len_utf8());
            }
            AtomKind::Symbol
        } else {
            AtomKind::Symbol
        };
        // Marks and joiners attach to the atom; after a joiner, the joined character too.
        while let Some(&(_, n)) = chars.peek() {
            if !extends(n) {
                break;
            }
            chars.next();
            end += n.len_utf8();
            if n == '\u{200D}' {
                if let Some((_, joined)) = chars.next() {
                    end += joined.len_utf8();
                }
            }
        }
        atoms.push(Atom { start: base + start, end: base + end, kind, first: c });
    }
}

/// End of the letters-and-digits run starting at `start`, and whether it is a number.
fn alnum_run(chunk: &str, start: usize) -> (usize, bool) {
    let mut all_digits = true;
    let mut end = start;
    let mut previous: Option<char> = None;
    let mut rest = chunk[start..].chars().peekable();
    while let Some(c) = rest.next() {
        if is_alnum(c) {
            all_digits &= is_digit(c);
        } else if is_percent(c) && previous.is_some_and(is_digit) {
            end += c.len_utf8();
            break;
        } else if previous.is_some_and(is_alnum) && rest.peek().is_some_and(|&n| is_alnum(n)) {
            let next = rest.peek().copied().unwrap_or(' ');
            let between_digits = previous.is_some_and(is_digit) && is_digit(next);
            if !(joins_alnum(c) || between_digits && joins_digits(c)) {
                break;
            }
        } else {
            break;
        }
        end += c.len_utf8();
        previous = Some(c);
    }
    (end, all_digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atoms(s: &str) -> Vec<(&str, AtomKind)> {
        let mut out = vec![];
        scan(s, 0, &mut out);
        out.iter().map(|a| (&s[a.start..a.end], a.kind)).collect()
    }

    #[test]
    fn numbers_words_and_symbols() {
        use AtomKind::*;
        assert_eq!(atoms("１９９８年"), vec![("１９９８", Number), ("年", Han)]);
        assert_eq!(atoms("２８．３％的"), vec![("２８．３％", Number), ("的", Han)]);
        assert_eq!(atoms("４４·９７"), vec![("４４·９７", Number)]);
        assert_eq!(
            atoms("用Windows系统"),
            vec![("用", Han), ("Windows", Word), ("系", Han), ("统", Han)]
        );
        assert_eq!(atoms("——好……"), vec![("——", Symbol), ("好", Han), ("……", Symbol)]);
        assert_eq!(atoms("1,000."), vec![("1,000", Number), (".", Symbol)]);
        assert_eq!(
            atoms("カタカナ"),
            vec![("カ", Katakana), ("タ", Katakana), ("カ", Katakana), ("ナ", Katakana)]
        );
        assert_eq!(atoms("👨\u{200D}👩x"), vec![("👨\u{200D}👩", Symbol), ("x", Word)]);
    }

    #[test]
    fn common_punctuation_has_no_letters_digits_or_marks() {
        use unicode_general_category::{get_general_category, GeneralCategory::*};
        for c in (0x2000u32..0x3100)
            .chain(0xFF00..0xFF70)
            .filter_map(char::from_u32)
            .filter(|&c| is_common_punctuation(c))
        {
            assert!(!c.is_alphabetic() && !c.is_numeric(), "{c:?}");
            assert!(
                !matches!(
                    get_general_category(c),
                    NonspacingMark | SpacingMark | EnclosingMark | Format
                ),
                "{c:?}"
            );
        }
    }
}
