//! tokenizer.json: the `tokenizers` schema, read and written.
//!
//! Keys are written in `tokenizers`' order (`version`, `truncation`, `padding`, `added_tokens`,
//! `normalizer`, `pre_tokenizer`, `post_processor`, `decoder`, `model`) with serde_json's
//! formatting (2-space indent when pretty), so a file tokenizers writes comes back byte for
//! byte. On load, as in `tokenizers`, added tokens are added again in file order: a token the
//! model knows keeps the model's id, others get ids after the vocabulary.
//! Errors name the line and the JSON path of the problem (`model.merges[3]`, ...).
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::tokenizer::added_vocabulary::AddedTokenWithId;
use crate::tokenizer::pipeline::TokenizerImpl;
use crate::tokenizer::{Capabilities, Decoder, Model, Normalizer, PostProcessor, PreTokenizer};
use crate::utils::atomic::write_atomic;

const SERIALIZATION_VERSION: &str = "1.0";

/// The number of keys a tokenizer.json has (see the module docs for their order).
const KEYS: usize = 9;

impl<M, N, PT, PP, D> Serialize for TokenizerImpl<M, N, PT, PP, D>
where
    M: Serialize,
    N: Serialize,
    PT: Serialize,
    PP: Serialize,
    D: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Tokenizer", KEYS)?;
        s.serialize_field("version", SERIALIZATION_VERSION)?;
        s.serialize_field("truncation", &self.truncation)?;
        s.serialize_field("padding", &self.padding)?;
        s.serialize_field("added_tokens", &self.added_vocabulary.tokens_with_ids())?;
        s.serialize_field("normalizer", &self.normalizer)?;
        s.serialize_field("pre_tokenizer", &self.pre_tokenizer)?;
        s.serialize_field("post_processor", &self.post_processor)?;
        s.serialize_field("decoder", &self.decoder)?;
        s.serialize_field("model", &self.model)?;
        s.end()
    }
}

/// Readable whenever its visitor is (the bounds on the components are the visitor's).
impl<'de, M, N, PT, PP, D> Deserialize<'de> for TokenizerImpl<M, N, PT, PP, D>
where
    TokenizerVisitor<M, N, PT, PP, D>: Visitor<'de, Value = Self>,
{
    fn deserialize<De: Deserializer<'de>>(
        deserializer: De,
    ) -> std::result::Result<Self, De::Error> {
        deserializer.deserialize_map(TokenizerVisitor(PhantomData))
    }
}

struct TokenizerVisitor<M, N, PT, PP, D>(PhantomData<(M, N, PT, PP, D)>);

impl<'de, M, N, PT, PP, D> Visitor<'de> for TokenizerVisitor<M, N, PT, PP, D>
where
    M: Deserialize<'de> + Model + Capabilities + Send + Sync,
    N: Deserialize<'de> + Normalizer + Capabilities + Send + Sync,
    PT: Deserialize<'de> + PreTokenizer + Capabilities + Send + Sync,
    PP: Deserialize<'de> + PostProcessor + Capabilities + Send + Sync,
    D: Deserialize<'de> + Decoder + Send + Sync,
{
    type Value = TokenizerImpl<M, N, PT, PP, D>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut normalizer = None;
        let mut pre_tokenizer = None;
        let mut model = None;
        let mut post_processor = None;
        let mut decoder = None;
        let mut truncation = None;
        let mut padding = None;
        let mut added_tokens: Vec<AddedTokenWithId> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => {
                    let version: String = map.next_value()?;
                    if version != SERIALIZATION_VERSION {
                        return Err(de::Error::custom(format!(
                            "unknown tokenizer.json version {version:?} (expected \"1.0\")"
                        )));
                    }
                }
                "truncation" => truncation = map.next_value()?,
                "padding" => padding = map.next_value()?,
                "added_tokens" => added_tokens = map.next_value()?,
                "normalizer" => normalizer = map.next_value()?,
                "pre_tokenizer" => pre_tokenizer = map.next_value()?,
                "post_processor" => post_processor = map.next_value()?,
                "decoder" => decoder = map.next_value()?,
                "model" => model = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let model = model.ok_or_else(|| de::Error::missing_field("model"))?;
        let mut tokenizer = TokenizerImpl::new(model);
        tokenizer.normalizer = normalizer;
        tokenizer.pre_tokenizer = pre_tokenizer;
        tokenizer.post_processor = post_processor;
        tokenizer.decoder = decoder;
        tokenizer.truncation = truncation;
        tokenizer.padding = padding;
        tokenizer
            .add_tokens(added_tokens.into_iter().map(|t| t.token))
            .map_err(de::Error::custom)?;
        Ok(tokenizer)
    }
}

/// A JSON error as a format error naming the line and the path inside the document.
fn json_error(error: serde_path_to_error::Error<serde_json::Error>) -> Error {
    let path = error.path().to_string();
    let inner = error.into_inner();
    let line = (inner.line() > 0).then_some(inner.line());
    let message = if path.is_empty() || path == "." {
        format!("tokenizer.json: {inner}")
    } else {
        format!("tokenizer.json at `{path}`: {inner}")
    };
    Error::Format { path: None, line, byte_offset: None, message }
}

impl<M, N, PT, PP, D> TokenizerImpl<M, N, PT, PP, D>
where
    M: DeserializeOwned + Model + Capabilities + Send + Sync,
    N: DeserializeOwned + Normalizer + Capabilities + Send + Sync,
    PT: DeserializeOwned + PreTokenizer + Capabilities + Send + Sync,
    PP: DeserializeOwned + PostProcessor + Capabilities + Send + Sync,
    D: DeserializeOwned + Decoder + Send + Sync,
{
    /// Parses a tokenizer.json document.
    pub fn from_json_str(json: &str) -> Result<Self> {
        Self::from_json_bytes(json.as_bytes())
    }

    /// Parses a tokenizer.json document from bytes (which must be UTF-8 JSON).
    pub fn from_json_bytes(json: &[u8]) -> Result<Self> {
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let tokenizer = serde_path_to_error::deserialize(&mut deserializer).map_err(json_error)?;
        deserializer.end().map_err(|e| Error::Format {
            path: None,
            line: Some(e.line()),
            byte_offset: None,
            message: format!("tokenizer.json: {e}"),
        })?;
        Ok(tokenizer)
    }

    /// Loads a tokenizer.json file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_json_bytes(&bytes).map_err(|e| e.in_file(path))
    }
}

impl<M, N, PT, PP, D> TokenizerImpl<M, N, PT, PP, D>
where
    Self: Serialize,
{
    /// The tokenizer.json text, indented (as `tokenizers` saves it) or on one line.
    pub fn to_json_string(&self, pretty: bool) -> Result<String> {
        let text =
            if pretty { serde_json::to_string_pretty(self) } else { serde_json::to_string(self) };
        text.map_err(|e| Error::Other(format!("cannot serialize the tokenizer: {e}")))
    }

    /// Writes tokenizer.json atomically, with the umask's permissions ([`write_atomic`]).
    pub fn save(&self, path: impl AsRef<Path>, pretty: bool) -> Result<()> {
        let path = path.as_ref();
        let text = self.to_json_string(pretty)?;
        write_atomic(path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::tokenizer::pipeline::TokenizerImpl;
    use crate::tokenizer::test_support::{
        JoinPair, Lowercase, SpaceJoin, WhitespaceSplit, WordModel,
    };
    use crate::tokenizer::AddedToken;

    type TestTokenizer = TokenizerImpl<WordModel, Lowercase, WhitespaceSplit, JoinPair, SpaceJoin>;

    #[test]
    fn round_trip_and_key_order() {
        let mut t = TestTokenizer::new(WordModel::new(&["a"]));
        t.with_pre_tokenizer(Some(WhitespaceSplit::WhitespaceSplit));
        t.add_special_tokens([AddedToken::from("<s>", true)]).unwrap();
        let json = t.to_json_string(true).unwrap();
        let keys: Vec<&str> = json
            .lines()
            .filter(|l| l.starts_with("  \""))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        assert_eq!(
            keys,
            vec![
                "version",
                "truncation",
                "padding",
                "added_tokens",
                "normalizer",
                "pre_tokenizer",
                "post_processor",
                "decoder",
                "model"
            ]
        );
        let back = TestTokenizer::from_json_str(&json).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.to_json_string(true).unwrap(), json);
    }

    #[test]
    fn errors_name_line_and_path() {
        let json = "{\n  \"version\": \"1.0\",\n  \"added_tokens\": [],\n  \"normalizer\": \
            {\"type\": \"Nope\"},\n  \"model\": {\"type\": \"WordModel\", \"vocab\": {}}\n}";
        let err = TestTokenizer::from_json_str(json).unwrap_err();
        match &err {
            Error::Format { line: Some(4), message, .. } => {
                assert!(message.contains("normalizer"), "{message}")
            }
            other => panic!("unexpected {other:?}"),
        }
        let err = TestTokenizer::from_json_str("{\"version\": \"1.0\",\n \"model\": ").unwrap_err();
        assert!(matches!(err, Error::Format { line: Some(2), .. }), "{err:?}");
        let err = TestTokenizer::from_json_str("{\"version\": \"1.0\"}").unwrap_err();
        assert!(err.to_string().contains("model"), "{err}");
    }

    #[test]
    fn save_is_atomic_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        let t = TestTokenizer::new(WordModel::new(&["a", "b"]));
        t.save(&path, true).unwrap();
        t.save(&path, false).unwrap();
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "temporary file left behind: {names:?}");
        assert_eq!(TestTokenizer::from_file(&path).unwrap(), t);
        let missing = TestTokenizer::from_file(dir.path().join("nope.json")).unwrap_err();
        assert!(matches!(missing, Error::Io { .. }));
    }
}
