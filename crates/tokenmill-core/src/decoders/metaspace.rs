//! `Metaspace` decoder: the replacement character (`▁`) back to spaces, dropping it from the
//! first token when the pre-tokenizer prepended it.
use serde::{Deserialize, Deserializer, Serialize};

/// When the Metaspace pre-tokenizer prepends the replacement: to every split, only the first,
/// or never. Serialized `"always"` / `"first"` / `"never"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrependScheme {
    First,
    Never,
    Always,
}

impl PrependScheme {
    /// Parses the Python-side name (`"first"`, `"never"`, `"always"`).
    pub fn parse(s: &str) -> crate::Result<Self> {
        match s {
            "first" => Ok(PrependScheme::First),
            "never" => Ok(PrependScheme::Never),
            "always" => Ok(PrependScheme::Always),
            other => Err(crate::Error::InvalidArgument(format!(
                "{other:?} is an invalid value for `prepend_scheme`: expected one of \"first\", \"never\", \"always\""
            ))),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            PrependScheme::First => "first",
            PrependScheme::Never => "never",
            PrependScheme::Always => "always",
        }
    }
}

/// Serialized `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type")]
pub struct Metaspace {
    pub replacement: char,
    pub prepend_scheme: PrependScheme,
    pub split: bool,
}

impl Default for Metaspace {
    fn default() -> Self {
        Metaspace { replacement: '▁', prepend_scheme: PrependScheme::Always, split: true }
    }
}

impl<'de> Deserialize<'de> for Metaspace {
    /// As `tokenizers`: `"type"` must be `"Metaspace"`; `prepend_scheme` defaults to `always`,
    /// `split` to true; the legacy `add_prefix_space: false` means `never` (and conflicts with
    /// any other declared scheme); `str_rep` is ignored.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        enum Type {
            Metaspace,
        }
        fn always() -> PrependScheme {
            PrependScheme::Always
        }
        #[derive(Deserialize)]
        struct Fields {
            #[serde(rename = "type")]
            _type: Type,
            replacement: char,
            add_prefix_space: Option<bool>,
            #[serde(default = "always")]
            prepend_scheme: PrependScheme,
            split: Option<bool>,
            #[serde(rename = "str_rep")]
            _str_rep: Option<String>,
        }
        let mut f = Fields::deserialize(deserializer)?;
        if f.add_prefix_space == Some(false) {
            if f.prepend_scheme != PrependScheme::Never {
                return Err(serde::de::Error::custom("add_prefix_space does not match declared prepend_scheme"));
            }
            f.prepend_scheme = PrependScheme::Never;
        }
        Ok(Metaspace { replacement: f.replacement, prepend_scheme: f.prepend_scheme, split: f.split.unwrap_or(true) })
    }
}

impl Metaspace {
    pub fn new(replacement: char, prepend_scheme: PrependScheme, split: bool) -> Self {
        Metaspace { replacement, prepend_scheme, split }
    }

    /// Replacement characters become spaces, except in the first token where (unless the
    /// scheme is `never`) they are all dropped, as `tokenizers` does.
    pub fn decode_chain(&self, tokens: Vec<String>) -> Vec<String> {
        tokens
            .into_iter()
            .enumerate()
            .map(|(i, token)| {
                let drop_replacement = i == 0 && self.prepend_scheme != PrependScheme::Never;
                token
                    .chars()
                    .filter_map(|c| match c {
                        c if c != self.replacement => Some(c),
                        _ if drop_replacement => None,
                        _ => Some(' '),
                    })
                    .collect()
            })
            .collect()
    }
}
