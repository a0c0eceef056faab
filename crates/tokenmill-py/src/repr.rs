//! Python `repr`/`str` of pipeline components, in the exact format `tokenizers` prints:
//! `ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)`,
//! `TemplateProcessing(single=[SpecialToken(id="[CLS]", type_id=0), Sequence(id=A, type_id=0)],
//! ...)`.
//!
//! It is a serde `Serializer` (not a walk over JSON) because the format needs what JSON loses:
//! struct and enum variant names, tuples versus lists. Structs print as `Name(field=value, ...)`
//! without their `type` field, newtype variants as `Variant(value)`, unit variants bare, tuples
//! `(a, b)`, lists `[a, b]`, maps `{"k":v, ...}`, strings quoted verbatim, booleans `True`/`False`.
//! A container shows at most `max_elements - 1` elements, then `...`; `str` also cuts long strings.
use std::fmt;

use serde::ser::{self, Serialize};

/// The format's only failure is a custom error raised by a `Serialize` impl.
#[derive(Debug)]
pub(crate) struct ReprError(String);

impl fmt::Display for ReprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ReprError {}
impl ser::Error for ReprError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReprError(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, ReprError>;

/// `repr()`: up to 99 elements per container, whole strings.
pub(crate) fn repr<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    render(value, 100, usize::MAX)
}

/// `str()`: up to 5 elements per container, strings cut at 100 bytes.
pub(crate) fn to_str<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    render(value, 6, 100)
}

fn render<T: Serialize + ?Sized>(
    value: &T,
    max_elements: usize,
    max_string: usize,
) -> Result<String> {
    let mut r = Repr { out: String::new(), counts: Vec::new(), max_elements, max_string };
    value.serialize(&mut r)?;
    Ok(r.out)
}

struct Repr {
    out: String,
    /// Elements seen so far in each open container, innermost last.
    counts: Vec<usize>,
    max_elements: usize,
    max_string: usize,
}

impl Repr {
    fn open(&mut self, prefix: &str, bracket: char) {
        self.out.push_str(prefix);
        self.out.push(bracket);
        self.counts.push(0);
    }

    fn close(&mut self, bracket: char) {
        self.counts.pop();
        self.out.push(bracket);
    }

    /// Counts one element of the innermost container; true if it is to be shown. Writes the
    /// separator before a shown element and `, ...` once when the limit is reached.
    fn next_element(&mut self) -> bool {
        let n = match self.counts.last_mut() {
            Some(n) => {
                *n += 1;
                *n
            }
            None => 1,
        };
        if n < self.max_elements {
            if n > 1 {
                self.out.push_str(", ");
            }
            true
        } else {
            if n == self.max_elements {
                self.out.push_str(", ...");
            }
            false
        }
    }

    fn shown(&self) -> bool {
        self.counts.last().is_none_or(|n| *n < self.max_elements)
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        if self.next_element() {
            value.serialize(&mut *self)?;
        }
        Ok(())
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<()> {
        if key == "type" {
            return Ok(());
        }
        if !self.out.ends_with('(') {
            self.out.push_str(", ");
        }
        self.out.push_str(key);
        self.out.push('=');
        value.serialize(&mut *self)
    }
}

/// Serializer methods that widen their value and call `$wide` (`serialize_i8` → `serialize_i64`).
macro_rules! widen {
    ($($($method:ident($narrow:ty)),* => $wide:ident;)*) => {$($(
        fn $method(self, v: $narrow) -> Result<()> {
            self.$wide(v.into())
        }
    )*)*};
}

/// `Serializer` methods that open a tuple or struct variant: its name, then `(`.
macro_rules! variant_openers {
    ($($method:ident),*) => {$(
        fn $method(
            self,
            _name: &'static str,
            _index: u32,
            variant: &'static str,
            _len: usize,
        ) -> Result<Self> {
            self.open(variant, '(');
            Ok(self)
        }
    )*};
}

impl ser::Serializer for &mut Repr {
    type Ok = ();
    type Error = ReprError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.push_str(if v { "True" } else { "False" });
        Ok(())
    }
    widen! {
        serialize_i8(i8), serialize_i16(i16), serialize_i32(i32) => serialize_i64;
        serialize_u8(u8), serialize_u16(u16), serialize_u32(u32) => serialize_u64;
        serialize_f32(f32) => serialize_f64;
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.out.push_str(&v.to_string());
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.out.push_str(&v.to_string());
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        self.out.push_str(&v.to_string());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        self.out.push('"');
        if v.len() > self.max_string {
            let mut cut = self.max_string;
            while !v.is_char_boundary(cut) {
                cut -= 1;
            }
            self.out.push_str(&v[..cut]);
            self.out.push_str("...");
        } else {
            self.out.push_str(v);
        }
        self.out.push('"');
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        SerializeSeq::end(seq)
    }
    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.out.push_str("None");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.out.push_str(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.out.push_str(variant);
        self.out.push('(');
        value.serialize(&mut *self)?;
        self.out.push(')');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self> {
        self.open("", '[');
        Ok(self)
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self> {
        self.open("", '(');
        Ok(self)
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self> {
        self.open("", '(');
        Ok(self)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self> {
        self.open("", '{');
        Ok(self)
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Self> {
        self.open(name.strip_suffix("Helper").unwrap_or(name), '(');
        Ok(self)
    }
    variant_openers!(serialize_tuple_variant, serialize_struct_variant);
}

/// The containers whose elements are positional (shown by `element`) or named (`field`), each
/// closed by its bracket.
macro_rules! compounds {
    ($($Trait:ident::$method:ident($($key:ident)?) => $close:literal;)*) => {$(
        impl ser::$Trait for &mut Repr {
            type Ok = ();
            type Error = ReprError;
            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $($key: &'static str,)?
                value: &T,
            ) -> Result<()> {
                let key: Option<&str> = None $(.or(Some($key)))?;
                match key {
                    Some(key) => self.field(key, value),
                    None => self.element(value),
                }
            }
            fn end(self) -> Result<()> {
                self.close($close);
                Ok(())
            }
        }
    )*};
}

compounds! {
    SerializeSeq::serialize_element() => ']';
    SerializeTuple::serialize_element() => ')';
    SerializeTupleStruct::serialize_field() => ')';
    SerializeTupleVariant::serialize_field() => ')';
    SerializeStruct::serialize_field(key) => ')';
    SerializeStructVariant::serialize_field(key) => ')';
}

impl ser::SerializeMap for &mut Repr {
    type Ok = ();
    type Error = ReprError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.element(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        if self.shown() {
            self.out.push(':');
            value.serialize(&mut **self)?;
        }
        Ok(())
    }
    fn end(self) -> Result<()> {
        self.close('}');
        Ok(())
    }
}
