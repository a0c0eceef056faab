//! Per-language tokenization rules, kept as data (serde) so users can inspect, extend and save
//! them. The engine in `tokenizer.rs` reads nothing language-specific except through this type.
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use tokenmill_core::{Error, Result};

/// The languages that have built-in rules. Any other language code gets the UAX #29 defaults.
pub const LANGUAGES: &[&str] = &["en", "de", "fr", "pl", "es", "it", "nl", "pt", "ru"];

/// Language rules for the word tokenizer.
///
/// Abbreviations are written without their final period ("Dr", "e.g", "z.B"). An entry that is
/// all lowercase matches in any case ("etc" matches "Etc."); an entry with an uppercase letter
/// matches exactly ("No" matches "No. 5" but not the sentence-final "no.").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageRules {
    pub language: String,
    pub abbreviations: Vec<String>,
    /// Elided articles/pronouns split after their apostrophe: "l" splits "l'hôtel" into "l'"
    /// "hôtel".
    pub elisions: Vec<String>,
    /// Enclitics split before their apostrophe (or before "n't"): "'s", "'ll", "n't".
    pub clitic_suffixes: Vec<String>,
    /// Words with an apostrophe that are never split ("aujourd'hui", "o'clock").
    pub apostrophe_words: Vec<String>,
    /// Keep "well-known" as one token (true for most languages; English treebanks split it).
    pub keep_hyphenated: bool,
    /// Hyphenated words kept whole even when `keep_hyphenated` is false ("e-mail").
    pub hyphenated_words: Vec<String>,
    /// Hyphenated enclitics split off a hyphenated word ("-t-il" in "a-t-il", "-ci" stays).
    pub hyphen_suffixes: Vec<String>,
    /// A number followed by "." inside a sentence is an ordinal ("am 3. Oktober").
    pub ordinal_period: bool,
    /// First parts that keep a hyphenated word whole even when `keep_hyphenated` is false
    /// ("anti" keeps "anti-American").
    #[serde(default)]
    pub hyphen_prefixes: Vec<String>,
    /// Abbreviations, initials and dotted acronyms keep their final period ("Dr."); false where
    /// the treebank convention splits it off ("r" ".", Polish).
    #[serde(default = "yes")]
    pub attach_abbreviation_period: bool,
    /// Runs of "!" and "?" form one token ("?!"); false splits each mark.
    #[serde(default = "yes")]
    pub merge_punct_runs: bool,
    /// "..." is one token; false splits each period (Polish treebanks).
    #[serde(default = "yes")]
    pub merge_ellipsis: bool,
    /// Inflectional clitics glued to a word ("chciałbym" → "chciał" "by" "m"), tried in order.
    #[serde(default)]
    pub agglutination: Vec<Agglutination>,
    /// A hyphenated pair of plain numbers ("1990-1993") splits into number, hyphen, number
    /// (Polish treebanks); longer chains ("642-65-85") stay whole.
    #[serde(default)]
    pub split_number_ranges: bool,
    /// Without `keep_hyphenated`, still keep whole a hyphenated word with a digit in it
    /// ("28-letni", "F-16") or whose first part is an acronym ("PiS-owi", "PPE-DE").
    #[serde(default)]
    pub keep_coded_compounds: bool,
}

fn yes() -> bool {
    true
}

/// Split `suffix` off a word when what precedes it ends with one of `stem_endings` (and is at
/// least `min_stem_chars` long) or is one of `stem_words`; the stem is then tried again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agglutination {
    pub suffix: String,
    #[serde(default)]
    pub stem_endings: Vec<String>,
    #[serde(default)]
    pub stem_words: Vec<String>,
    #[serde(default)]
    pub min_stem_chars: usize,
    /// Stems (whole, lowercase) that look like one of `stem_endings` but are not verb forms:
    /// "kanał" keeps "kanałem" whole.
    #[serde(default)]
    pub exceptions: Vec<String>,
}

/// One language's row of the built-in table: abbreviations, elisions, clitic suffixes,
/// apostrophe words, whether hyphenated words stay whole, hyphenated words and suffixes kept,
/// and whether a period after digits ends an ordinal.
type LanguageRow = (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    bool,
    &'static [&'static str],
    &'static [&'static str],
    bool,
);

impl LanguageRules {
    /// The built-in rules for `language` (a code like "en"); unknown codes get UAX #29 defaults.
    pub fn for_language(language: &str) -> Self {
        let code = language.to_ascii_lowercase();
        let code = code.split(['-', '_']).next().unwrap_or("").to_string();
        let list = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut abbreviations = list(COMMON_ABBREVIATIONS);
        let (
            abbrev,
            elisions,
            suffixes,
            apostrophe_words,
            keep_hyph,
            hyph_words,
            hyph_suffixes,
            ordinal,
        ): LanguageRow = match code.as_str() {
            "en" => (
                EN_ABBREVIATIONS,
                &[],
                EN_CLITICS,
                EN_APOSTROPHE_WORDS,
                false,
                EN_HYPHENATED,
                &[],
                false,
            ),
            "de" => (DE_ABBREVIATIONS, &[], &[], &[], false, &[], &[], true),
            "fr" => (
                FR_ABBREVIATIONS,
                FR_ELISIONS,
                &[],
                FR_APOSTROPHE_WORDS,
                true,
                FR_HYPHENATED,
                FR_HYPHEN_SUFFIXES,
                false,
            ),
            "pl" => (PL_ABBREVIATIONS, &[], &[], &[], false, &[], &[], false),
            "es" => (ES_ABBREVIATIONS, &[], &[], &[], true, &[], &[], false),
            "it" => (IT_ABBREVIATIONS, IT_ELISIONS, &[], &[], true, &[], &[], false),
            "nl" => (NL_ABBREVIATIONS, &[], &[], &[], true, &[], &[], false),
            "pt" => (PT_ABBREVIATIONS, &[], &[], &[], true, &[], &[], false),
            "ru" => (RU_ABBREVIATIONS, &[], &[], &[], true, &[], &[], false),
            _ => (&[], &[], &[], &[], false, &[], &[], false),
        };
        abbreviations.extend(list(abbrev));
        let (mut attach_period, mut merge_runs, mut merge_ellipsis) = (true, true, true);
        let mut agglutination = Vec::new();
        let mut hyphen_prefixes = Vec::new();
        let mut polish_hyphens = false;
        match code.as_str() {
            "en" => hyphen_prefixes = list(EN_HYPHEN_PREFIXES),
            "de" => merge_runs = false,
            "pl" => {
                (attach_period, merge_runs, merge_ellipsis) = (false, false, false);
                agglutination = polish_agglutination();
                hyphen_prefixes = list(PL_HYPHEN_PREFIXES);
                polish_hyphens = true;
            }
            _ => {}
        }
        LanguageRules {
            split_number_ranges: polish_hyphens,
            keep_coded_compounds: polish_hyphens,
            hyphen_prefixes,
            attach_abbreviation_period: attach_period,
            merge_punct_runs: merge_runs,
            merge_ellipsis,
            agglutination,
            language: code,
            abbreviations,
            elisions: list(elisions),
            clitic_suffixes: list(suffixes),
            apostrophe_words: list(apostrophe_words),
            keep_hyphenated: keep_hyph,
            hyphenated_words: list(hyph_words),
            hyphen_suffixes: list(hyph_suffixes),
            ordinal_period: ordinal,
        }
    }

    pub fn from_json(json: &str) -> Result<Self> {
        let rules: LanguageRules = serde_json::from_str(json)?;
        rules.validate()?;
        Ok(rules)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Rejects entries the engine could never match (empty, or containing whitespace).
    pub(crate) fn validate(&self) -> Result<()> {
        let lists = [
            ("abbreviations", &self.abbreviations),
            ("elisions", &self.elisions),
            ("clitic_suffixes", &self.clitic_suffixes),
            ("apostrophe_words", &self.apostrophe_words),
            ("hyphenated_words", &self.hyphenated_words),
            ("hyphen_suffixes", &self.hyphen_suffixes),
        ];
        for (name, list) in lists {
            for (i, entry) in list.iter().enumerate() {
                if entry.is_empty() || entry.chars().any(char::is_whitespace) {
                    return Err(Error::InvalidArgument(format!(
                        "{name}[{i}] = {entry:?}: entries must be non-empty and contain no \
                            whitespace"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Fast lookup tables compiled from `LanguageRules`.
#[derive(Debug, Clone, Default)]
pub(crate) struct CompiledRules {
    abbrev_exact: FxHashSet<String>,
    abbrev_any_case: FxHashSet<String>,
    pub(crate) elisions: FxHashSet<String>,
    /// Lowercased suffixes, longest first (so "n't" is tried before "'t" if both exist).
    pub(crate) clitic_suffixes: Vec<String>,
    pub(crate) apostrophe_words: FxHashSet<String>,
    pub(crate) hyphenated_words: FxHashSet<String>,
    pub(crate) hyphen_suffixes: Vec<String>,
    pub(crate) keep_hyphenated: bool,
    pub(crate) ordinal_period: bool,
    pub(crate) hyphen_prefixes: FxHashSet<String>,
    pub(crate) attach_abbreviation_period: bool,
    pub(crate) merge_punct_runs: bool,
    pub(crate) merge_ellipsis: bool,
    pub(crate) agglutination: Vec<CompiledAgglutination>,
    pub(crate) split_number_ranges: bool,
    pub(crate) keep_coded_compounds: bool,
}

/// `Agglutination` as lowercase char vectors, matched against a lowercased word.
#[derive(Debug, Clone, Default)]
pub(crate) struct CompiledAgglutination {
    pub(crate) suffix: Vec<char>,
    pub(crate) stem_endings: Vec<Vec<char>>,
    pub(crate) stem_words: Vec<Vec<char>>,
    pub(crate) min_stem_chars: usize,
    pub(crate) exceptions: Vec<Vec<char>>,
}

impl CompiledRules {
    /// Char lengths of the parts of a lowercased word ("chciałbym" → [6, 2, 1]); one part when
    /// no rule applies.
    pub(crate) fn agglutination_parts(&self, word: &[char]) -> Vec<usize> {
        let mut parts = Vec::new();
        let mut stem_len = word.len();
        'outer: for _ in 0..3 {
            let stem_all = &word[..stem_len];
            for rule in &self.agglutination {
                let Some(stem) = stem_all.strip_suffix(rule.suffix.as_slice()) else { continue };
                if rule.exceptions.iter().any(|w| w.as_slice() == stem) {
                    continue;
                }
                let whole_word = rule.stem_words.iter().any(|w| w.as_slice() == stem);
                let ending = stem.len() >= rule.min_stem_chars
                    && rule.stem_endings.iter().any(|e| stem.ends_with(e));
                if !stem.is_empty() && (whole_word || ending) {
                    parts.push(rule.suffix.len());
                    stem_len = stem.len();
                    continue 'outer;
                }
            }
            break;
        }
        parts.push(stem_len);
        parts.reverse();
        parts
    }
}

impl CompiledRules {
    pub(crate) fn new(rules: &LanguageRules) -> Self {
        let mut c = CompiledRules {
            keep_hyphenated: rules.keep_hyphenated,
            ordinal_period: rules.ordinal_period,
            ..Default::default()
        };
        for a in &rules.abbreviations {
            let a = a.strip_suffix('.').unwrap_or(a);
            if a.chars().any(char::is_uppercase) {
                c.abbrev_exact.insert(a.to_string());
            } else {
                c.abbrev_any_case.insert(a.to_string());
            }
        }
        let lower_set = |v: &[String]| {
            v.iter().map(|s| normalize_apostrophes(&s.to_lowercase())).collect::<FxHashSet<_>>()
        };
        c.elisions = rules
            .elisions
            .iter()
            .map(|s| normalize_apostrophes(&s.to_lowercase()).trim_end_matches('\'').to_string())
            .collect();
        c.apostrophe_words = lower_set(&rules.apostrophe_words);
        c.hyphenated_words = lower_set(&rules.hyphenated_words);
        let sorted_longest_first = |v: &[String]| {
            let mut out: Vec<String> =
                v.iter().map(|s| normalize_apostrophes(&s.to_lowercase())).collect();
            out.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
            out
        };
        c.clitic_suffixes = sorted_longest_first(&rules.clitic_suffixes);
        c.hyphen_prefixes = lower_set(&rules.hyphen_prefixes);
        c.attach_abbreviation_period = rules.attach_abbreviation_period;
        c.merge_punct_runs = rules.merge_punct_runs;
        c.merge_ellipsis = rules.merge_ellipsis;
        c.agglutination = rules
            .agglutination
            .iter()
            .map(|a| CompiledAgglutination {
                suffix: a.suffix.to_lowercase().chars().collect(),
                stem_endings: a
                    .stem_endings
                    .iter()
                    .map(|e| e.to_lowercase().chars().collect())
                    .collect(),
                stem_words: a
                    .stem_words
                    .iter()
                    .map(|w| w.to_lowercase().chars().collect())
                    .collect(),
                min_stem_chars: a.min_stem_chars,
                exceptions: a
                    .exceptions
                    .iter()
                    .map(|w| w.to_lowercase().chars().collect())
                    .collect(),
            })
            .collect();
        c.split_number_ranges = rules.split_number_ranges;
        c.keep_coded_compounds = rules.keep_coded_compounds;
        c.hyphen_suffixes = sorted_longest_first(&rules.hyphen_suffixes);
        c
    }

    /// Is `word` (without its final period) a known abbreviation?
    pub(crate) fn is_abbreviation(&self, word: &str) -> bool {
        if self.abbrev_exact.contains(word) {
            return true;
        }
        if word.bytes().all(|b| !b.is_ascii_uppercase()) && word.is_ascii() {
            return self.abbrev_any_case.contains(word);
        }
        self.abbrev_any_case.contains(&word.to_lowercase())
    }
}

/// Maps the typographic apostrophe (U+2019) to ASCII so one rule serves both spellings.
pub(crate) fn normalize_apostrophes(s: &str) -> String {
    s.replace('\u{2019}', "'")
}

const EN_HYPHEN_PREFIXES: &[&str] = &[
    "anti", "pre", "post", "counter", "non", "co", "re", "ex", "self", "multi", "semi", "sub",
    "inter", "mid", "mis", "pro", "neo", "pseudo", "quasi", "ultra", "e", "x", "t",
];

/// Polish mobile person endings and the conditional "by" (as the UD treebanks split them):
/// "chciałem" → "chciał" "em", "zrobiłabyś" → "zrobiła" "by" "ś", "żebyśmy" → "żeby" "śmy".
/// The person endings attach to the past-tense "ł" forms; nouns whose instrumental looks the
/// same ("kanałem", "pomysłem") are kept whole by choosing verb-like stem endings and by the
/// exception lists.
fn polish_agglutination() -> Vec<Agglutination> {
    let rule = |suffix: &str, endings: &[&str], words: &[&str], min: usize, exceptions: &[&str]| {
        Agglutination {
            suffix: suffix.to_string(),
            stem_endings: endings.iter().map(|s| s.to_string()).collect(),
            stem_words: words.iter().map(|s| s.to_string()).collect(),
            min_stem_chars: min,
            exceptions: exceptions.iter().map(|s| s.to_string()).collect(),
        }
    };
    let conj = ["żeby", "aby", "gdyby", "jakby", "czyby", "by", "że"];
    let plural = ["li", "ły", "liby", "łyby", "nni", "nny"];
    // Masculine past stems: "-ał", "-ył", ... and the consonant-final ones ("mógł" → "mogłem",
    // "uciekł", "znalazł", "niósł" → "niosłem", "umarł", "uwiódł" → "uwiodłem").
    let masculine = [
        "ał", "ył", "ił", "ął", "eł", "ogł", "egł", "ekł", "ukł", "azł", "ozł", "edł", "adł",
        "odł", "niosł", "rosł", "ęsł", "arł", "czuł", "psuł", "snuł", "otł",
    ];
    let masculine_nouns = [
        "kanał",
        "materiał",
        "trybunał",
        "kapitał",
        "sygnał",
        "potencjał",
        "kwartał",
        "udział",
        "dział",
        "generał",
        "ideał",
        "rytuał",
        "upał",
        "zapał",
        "szał",
        "wał",
        "kryształ",
        "michał",
        "rafał",
        "arsenał",
        "admirał",
        "regał",
        "kawał",
        "ciał",
        "przeciwciał",
        "pedał",
        "tył",
        "pył",
        "kozł",
        "godł",
        "siodł",
        "kotł",
        "piekł",
    ];
    let feminine = [
        "ała", "yła", "iła", "eła", "ęła", "uła", "ogła", "egła", "ekła", "ukła", "azła", "ozła",
        "szła", "osła", "ęsła", "arła", "adła", "edła", "odła", "otła", "łaby", "łby", "łoby",
        "powinna",
    ];
    // Imperatives of "łamać" ("złam", "przełam") end like a feminine stem plus "m".
    let feminine_exceptions = ["zła", "poła", "przeła", "uła", "skła", "kła"];
    vec![
        rule("ście", &plural, &[&conj[..], &["wy"]].concat(), 3, &[]),
        rule("śmy", &plural, &[&conj[..], &["my"]].concat(), 3, &[]),
        rule("em", &masculine, &["powinien"], 3, &masculine_nouns),
        rule("eś", &masculine, &["powinien"], 3, &masculine_nouns),
        rule("m", &feminine, &conj, 3, &feminine_exceptions),
        rule("ś", &feminine, &conj, 3, &feminine_exceptions),
        rule("by", &["ł", "ła", "ło", "li", "ły"], &["czy"], 3, &["sła"]),
    ]
}

/// First parts that keep a Polish hyphenated word whole ("non-profit", "bio-obrazowania").
const PL_HYPHEN_PREFIXES: &[&str] =
    &["non", "bio", "krio", "eko", "euro", "quasi", "pseudo", "ex", "wice", "vice"];

const COMMON_ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "cf", "approx", "ca"];

const EN_ABBREVIATIONS: &[&str] = &[
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "Mt", "Gen", "Gov", "Sen", "Rep", "Col",
    "Capt", "Lt", "Sgt", "Rev", "Hon", "Pres", "Messrs", "Mme", "Inc", "Ltd", "Co", "Corp", "Bros",
    "Dept", "Univ", "Ave", "Blvd", "Rd", "No", "Nos", "Vol", "Vols", "Fig", "Figs", "Jan", "Feb",
    "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec", "Mon", "Tue", "Tues",
    "Wed", "Thu", "Thurs", "Fri", "Sat", "Sun", "viz", "al", "esp", "incl", "p", "pp", "ed", "eds",
    "a.m", "p.m", "Ph.D", "U.S", "U.K", "U.N", "D.C",
];
const EN_CLITICS: &[&str] = &["n't", "'s", "'re", "'ve", "'ll", "'d", "'m"];
const EN_APOSTROPHE_WORDS: &[&str] = &["o'clock", "ma'am", "y'all", "rock'n'roll"];
const EN_HYPHENATED: &[&str] = &["e-mail", "e-mails", "x-ray", "t-shirt", "co-op"];

const DE_ABBREVIATIONS: &[&str] = &[
    "z.B", "u.a", "d.h", "bzw", "usw", "vgl", "ggf", "bspw", "evtl", "inkl", "ca", "Nr", "Str",
    "Dr", "Prof", "Hr", "Fr", "St", "Abs", "Abb", "Jh", "Jhd", "Mio", "Mrd", "Tel", "z.T", "o.ä",
    "u.ä", "s.o", "s.u", "u.U", "v.a", "z.Zt", "Jan", "Feb", "Aug", "Sept", "Okt", "Nov", "Dez",
    "geb", "gest", "Bd", "Hrsg", "Kap",
];
const FR_ABBREVIATIONS: &[&str] = &[
    "M", "MM", "Mme", "Mmes", "Mlle", "Mlles", "Dr", "Pr", "St", "Ste", "av", "bd", "cf", "env",
    "p.ex", "c.-à-d", "n°", "janv", "févr", "avr", "juil", "sept", "oct", "nov", "déc", "Cie",
    "etc",
];
const FR_ELISIONS: &[&str] = &[
    "l", "d", "j", "m", "n", "s", "t", "c", "ç", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu",
    "presqu", "quelqu",
];
const FR_APOSTROPHE_WORDS: &[&str] =
    &["aujourd'hui", "l'on", "prud'homme", "prud'hommes", "presqu'île", "quelqu'un", "quelqu'une"];
const FR_HYPHENATED: &[&str] = &["rendez-vous", "vis-à-vis", "c'est-à-dire"];
const FR_HYPHEN_SUFFIXES: &[&str] = &[
    "-t-il", "-t-elle", "-t-on", "-t-ils", "-t-elles", "-il", "-ils", "-elle", "-elles", "-on",
    "-je", "-tu", "-nous", "-vous", "-moi", "-toi", "-ce", "-y",
];
const PL_ABBREVIATIONS: &[&str] = &[
    "np", "tzn", "tj", "itd", "itp", "ok", "ul", "al", "pl", "godz", "r", "w", "ur", "zm", "prof",
    "dr", "hab", "inż", "mgr", "im", "nr", "wg", "ks", "św", "gen", "płk", "mjr", "por", "tys",
    "mln", "mld", "zł", "gr", "str", "tel", "woj", "pow", "gm", "m.in", "cdn", "jw", "ww", "red",
    "wyd", "tzw", "ds", "pt",
];
const ES_ABBREVIATIONS: &[&str] = &[
    "Sr", "Sra", "Srta", "Sres", "Dr", "Dra", "Ud", "Uds", "Vd", "Vds", "D", "Dña", "pág", "págs",
    "núm", "tel", "EE.UU", "aprox", "p.ej", "a.C", "d.C", "Av", "Avda", "Cía", "S.A",
];
const IT_ABBREVIATIONS: &[&str] = &[
    "Sig", "Sigg", "Sig.ra", "Sig.na", "Dott", "Dott.ssa", "Prof", "Ing", "Avv", "Geom", "Rag",
    "S.p.A", "pag", "ecc", "es", "tel", "n", "nr", "cap", "art", "a.C", "d.C",
];
const IT_ELISIONS: &[&str] = &[
    "l", "un", "dell", "all", "dall", "nell", "sull", "coll", "quell", "quest", "bell", "sant",
    "c", "d", "m", "t", "s", "v", "gl", "tutt", "dov", "com", "cos", "anch", "nessun", "buon",
    "qual",
];
const NL_ABBREVIATIONS: &[&str] = &[
    "dhr", "mevr", "mw", "dr", "prof", "ir", "ing", "mr", "drs", "bijv", "o.a", "d.w.z", "m.b.t",
    "t.a.v", "enz", "blz", "nr", "jl", "z.g.a", "n.a.v", "i.p.v", "a.s", "St",
];
const PT_ABBREVIATIONS: &[&str] = &[
    "Sr", "Sra", "Srta", "Dr", "Dra", "Prof", "Profa", "Exmo", "Exma", "V.Exa", "pág", "págs",
    "n.º", "nº", "tel", "av", "aprox", "p.ex", "a.C", "d.C", "Ltda", "S.A", "Cia",
];
const RU_ABBREVIATIONS: &[&str] = &[
    "т.е", "т.д", "т.п", "т.к", "т.н", "др", "пр", "г", "гг", "в", "вв", "стр", "с", "см", "ул",
    "д", "кв", "им", "млн", "млрд", "тыс", "руб", "коп", "проф", "акад", "доц", "н.э", "и.о",
];
