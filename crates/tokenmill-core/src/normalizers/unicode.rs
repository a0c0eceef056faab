//! Unicode normalization forms, lowercasing and the NMT cleanup: stateless normalizers.
use crate::tokenizer::NormalizedString;

/// Declares a stateless normalizer: a unit struct that (de)serializes as `{"type": "<Name>"}`
/// and runs `$apply` on the `NormalizedString`.
macro_rules! unit_normalizer {
    ($(#[$doc:meta])* $name:ident, $apply:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name;

        impl $crate::tokenizer::Normalizer for $name {
            fn normalize(
                &self,
                normalized: &mut $crate::tokenizer::NormalizedString,
            ) -> $crate::Result<()> {
                let apply: fn(&mut $crate::tokenizer::NormalizedString) = $apply;
                apply(normalized);
                Ok(())
            }
        }

        $crate::utils::type_tag::impl_type_only_serde!($name);
    };
}
pub(crate) use unit_normalizer;

unit_normalizer!(
    /// Unicode canonical decomposition (é → e + ◌́).
    NFD,
    |n| {
        n.nfd();
    }
);
unit_normalizer!(
    /// Unicode compatibility decomposition (ﬁ → f i, é → e + ◌́).
    NFKD,
    |n| {
        n.nfkd();
    }
);
unit_normalizer!(
    /// Unicode canonical composition (e + ◌́ → é).
    NFC,
    |n| {
        n.nfc();
    }
);
unit_normalizer!(
    /// Unicode compatibility composition (ﬁ → fi, ½ → 1⁄2, e + ◌́ → é).
    NFKC,
    |n| {
        n.nfkc();
    }
);
unit_normalizer!(
    /// Full Unicode lowercasing (İ → i + ◌̇ , so the text can grow).
    Lowercase,
    |n| {
        n.lowercase();
    }
);
unit_normalizer!(
    /// The cleanup of SentencePiece's `nmt_nfkc` rule before its NFKC: removes C0 controls
    /// (except tab/newlines/form feed) and DEL, and turns several space-like chars into ' '.
    Nmt,
    do_nmt
);

fn do_nmt(n: &mut NormalizedString) {
    n.flat_map(|c| {
        let removed = matches!(c as u32, 0x0001..=0x0008 | 0x000B | 0x000E..=0x001F)
            || matches!(c as u32, 0x007F | 0x008F | 0x009F);
        let spaced = matches!(
            c as u32,
            0x0009 | 0x000A | 0x000C | 0x000D | 0x1680 | 0x200B
                ..=0x200F | 0x2028 | 0x2029 | 0x2581 | 0xFEFF | 0xFFFD
        );
        (!removed).then_some(if spaced { ' ' } else { c })
    });
}
