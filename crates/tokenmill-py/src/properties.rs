//! The concrete component classes (`Strip`, `BPE`, `BpeTrainer`, ...) and their Python
//! properties: [`component_classes!`] declares the classes of a pipeline stage (constructors,
//! properties and other methods), [`component_properties!`] a class's one `#[pymethods]` block,
//! with a getter and a setter for each listed field of the core value an object holds (read and
//! changed in place, through `shared.rs`'s `getter!` / `setter!`), and [`PyValue`] says how a
//! field is shown to Python.
//!
//! May import `shared` (the accessors) and `errors`; the classes themselves live in their stage's
//! file.
use std::collections::BTreeSet;

use pyo3::prelude::*;
use tokenmill_core::pre_tokenizers::PrependScheme;
use tokenmill_core::tokenizer::SplitDelimiterBehavior;

use crate::errors::ToPyResult;

/// How a field is shown to Python (`P`) and read back: most fields as they are; a few as
/// `tokenizers` shows them (an alphabet as one-character strings, an enum as its name).
pub(crate) trait PyValue<P>: Sized {
    fn to_python(&self) -> P;
    /// Fails for a name that means nothing (before the component is locked).
    fn from_python(value: P) -> PyResult<Self>;
}

impl<T: Clone> PyValue<T> for T {
    fn to_python(&self) -> T {
        self.clone()
    }
    fn from_python(value: T) -> PyResult<T> {
        Ok(value)
    }
}

/// An alphabet: from each string its first character, as `tokenizers` takes them (empty
/// strings are ignored).
impl PyValue<Vec<String>> for BTreeSet<char> {
    fn to_python(&self) -> Vec<String> {
        self.iter().map(char::to_string).collect()
    }
    fn from_python(value: Vec<String>) -> PyResult<Self> {
        Ok(value.iter().filter_map(|s| s.chars().next()).collect())
    }
}

/// `"always"`, `"first"` or `"never"`.
impl PyValue<String> for PrependScheme {
    fn to_python(&self) -> String {
        self.as_str().to_string()
    }
    fn from_python(value: String) -> PyResult<Self> {
        value.parse::<PrependScheme>().py()
    }
}

/// The names `tokenizers` takes (`"merged_with_next"`) and gives back (its enum name,
/// lower-cased: `"mergedwithnext"`).
impl PyValue<String> for SplitDelimiterBehavior {
    fn to_python(&self) -> String {
        format!("{self:?}").to_lowercase()
    }
    fn from_python(value: String) -> PyResult<Self> {
        split_behavior(&value).ok_or_else(|| {
            let message = format!(
                "wrong value for behavior: {value:?}, expected one of: removed, isolated, \
                merged_with_previous, merged_with_next, contiguous"
            );
            crate::errors::InvalidArgumentError::new_err(message)
        })
    }
}

/// A split behavior by its name (`"removed"`, `"isolated"`, `"merged_with_previous"`,
/// `"merged_with_next"`, `"contiguous"`).
pub(crate) fn split_behavior(name: &str) -> Option<SplitDelimiterBehavior> {
    Some(match name {
        "removed" => SplitDelimiterBehavior::Removed,
        "isolated" => SplitDelimiterBehavior::Isolated,
        "merged_with_previous" => SplitDelimiterBehavior::MergedWithPrevious,
        "merged_with_next" => SplitDelimiterBehavior::MergedWithNext,
        "contiguous" => SplitDelimiterBehavior::Contiguous,
        _ => return None,
    })
}

/// What a setter's change returns: nothing, or a core result (a value the core refuses).
pub(crate) trait SetOutcome {
    fn into_result(self) -> PyResult<()>;
}

impl SetOutcome for () {
    fn into_result(self) -> PyResult<()> {
        Ok(())
    }
}

impl SetOutcome for tokenmill_core::Result<()> {
    fn into_result(self) -> PyResult<()> {
        self.py()
    }
}

/// The `after_set` of a class whose value needs nothing after a change.
pub(crate) fn unchanged<T>(_: &mut T) {}

/// Declares the `#[pymethods]` block of a concrete component class `$Class` whose base class
/// holds a `$Wrapper::$Variant(c)` value (`$value` is where its fields are: `c` or a part of
/// it): the class's own `methods` as written, then per property a getter and a setter (doc
/// comments go on the getter). PyO3 takes one `#[pymethods]` block per class, so all of a
/// class's methods are listed here.
///
/// The call starts with `#[pymethods]`, which the block gets token for token (`$pound
/// $pymethods`): PyO3 names the `**kwargs` it extracts with the hygiene of that attribute, which
/// must be the caller's, whose code names the parameter (the same holds for the other macros
/// that write a class's one block: `component_classes!`, `stage_properties!`, ...).
///
/// - `fields { field: Ty; }`: `$value.field`, shown as `Ty` through [`PyValue`] (`field as x`:
///   under the Python name `x`).
/// - `accessors { x: Ty => expr, |v: VTy| change; }`: the getter returns `expr`, the setter
///   runs `change` (which returns nothing or a core result, see [`SetOutcome`]).
/// - `methods { ... }`: the class's other methods (several `methods` sections add up).
/// - `after_set(f)` (optional): every setter then calls `f(c)` (BPE forgets its cached words).
macro_rules! component_properties {
    (
        $pound:tt $pymethods:tt
        $Class:ident, $Wrapper:ident :: $Variant:ident(|$c:ident| $value:expr);
        $($rest:tt)*
    ) => {
        $crate::properties::component_properties! {
            $pound $pymethods $Class, $Wrapper::$Variant(|$c| $value),
                after_set($crate::properties::unchanged);
            $($rest)*
        }
    };
    (
        $pound:tt $pymethods:tt
        $Class:ident, $Wrapper:ident :: $Variant:ident(|$c:ident| $value:expr),
            after_set($after:expr);
        $(fields { $($(#[$fdoc:meta])* $field:ident $(as $name:ident)?: $fty:ty;)* })?
        $(accessors {
            $($(#[$adoc:meta])* $aname:ident: $aty:ty => $aexpr:expr,
                |$v:ident: $vty:ty| $change:expr;)*
        })?
        $(methods { $($methods:tt)* })*
    ) => {
        // `paste!` makes the getters' and setters' names (`get_` / `set_` + the field's).
        pastey::paste! {
            $pound $pymethods
            impl $Class {
                $($($methods)*)*

                $($(
                    $(#[$fdoc])*
                    #[getter $(($name))?]
                    fn [<get_ $field>](self_: PyRef<'_, Self>) -> PyResult<$fty> {
                        use $crate::properties::PyValue;
                        $crate::shared::getter!(self_, $Wrapper::$Variant, |$c| {
                            PyValue::<$fty>::to_python(&$value.$field)
                        })
                    }
                    #[setter $(($name))?]
                    fn [<set_ $field>](self_: PyRef<'_, Self>, value: $fty) -> PyResult<()> {
                        let value = $crate::properties::PyValue::<$fty>::from_python(value)?;
                        $crate::shared::setter!(self_, $Wrapper::$Variant, |$c| {
                            $value.$field = value;
                            $after($c)
                        })
                    }
                )*)?

                $($(
                    $(#[$adoc])*
                    #[getter]
                    fn [<get_ $aname>](self_: PyRef<'_, Self>) -> PyResult<$aty> {
                        $crate::shared::getter!(self_, $Wrapper::$Variant, |$c| $aexpr)
                    }
                    #[setter]
                    fn [<set_ $aname>](self_: PyRef<'_, Self>, $v: $vty) -> PyResult<()> {
                        let outcome = $crate::shared::setter!(self_, $Wrapper::$Variant, |$c| {
                            let outcome = $change;
                            $after($c);
                            outcome
                        })?;
                        $crate::properties::SetOutcome::into_result(outcome)
                    }
                )*)?
            }
        }
    };
}

pub(crate) use component_properties;

/// Declares concrete classes of a pipeline stage: subclasses of the stage's base class `$Base`
/// (Python module `$module`) whose objects hold a `$Wrapper` value. A class without parameters
/// is `$Class("Name") = Variant;` (its constructor gets the `unit` attribute, if any); any other
/// is `$Class("Name"), $Variant(|c| value) { ... }`: Python name `$module.Name`, holding
/// `$Wrapper::$Variant(c)` (its fields are in `value`: `c` or a part of it); in the braces, all
/// optional and in this order:
///
/// - `new(arg: Ty = default, ...; **kwargs) => made;` (after further `#[pyo3(...)]`
///   attributes): the constructor, with those defaults (one token each: a longer one goes in
///   braces, `{ String::from("##") }`, and shows as `...` in the text signature; `; **kwargs`,
///   optional: keyword arguments it accepts and ignores); its base class holds `made` (which
///   may use `?`);
/// - `newargs(py) => [args];`: `__getnewargs__`, the constructor arguments pickling calls it
///   with before it restores the state;
/// - `fields { ... }`, `accessors { ... }`, `methods { ... }`: its properties and other
///   methods, as in [`component_properties!`] (`after_set(f)` may follow the `$Variant(...)`).
///
/// The call starts with `#[pymethods]` (see [`component_properties!`]).
macro_rules! component_classes {
    (
        $pound:tt $pymethods:tt $Base:ident($module:literal), $Wrapper:ident
            $(, unit #[$unit:meta])?;
        $($classes:tt)*
    ) => {
        $crate::properties::component_classes! {
            @each $pound $pymethods $Base($module), $Wrapper, [$(#[$unit])?]; $($classes)*
        }
    };
    (
        @each $pound:tt $pymethods:tt $Base:ident($module:literal), $Wrapper:ident,
            [$($unit:tt)*];
    ) => {};
    (
        @each $pound:tt $pymethods:tt $Base:ident($module:literal), $Wrapper:ident,
            [$($unit:tt)*];
        $(#[$doc:meta])*
        $Class:ident($name:literal) = $Variant:ident;
        $($rest:tt)*
    ) => {
        $crate::properties::component_classes! {
            @each $pound $pymethods $Base($module), $Wrapper, [$($unit)*];
            $(#[$doc])*
            $Class($name), $Variant(|c| c) {
                $($unit)*
                new() => $Variant;
            }
            $($rest)*
        }
    };
    (
        @each $pound:tt $pymethods:tt $Base:ident($module:literal), $Wrapper:ident,
            [$($unit:tt)*];
        $(#[$doc:meta])*
        $Class:ident($name:literal), $Variant:ident(|$c:ident| $value:expr)
            $(, after_set($after:expr))? {
            $(
                $(#[$new_attr:meta])*
                new($($arg:ident: $ty:ty $(= $default:tt)?),* $(,)? $(; **$kwargs:ident)?)
                    => $made:expr;
            )?
            $(newargs($py:ident) => [$($newarg:expr),* $(,)?];)?
            $(fields { $($fields:tt)* })?
            $(accessors { $($accessors:tt)* })?
            $(methods { $($methods:tt)* })?
        }
        $($rest:tt)*
    ) => {
        $(#[$doc])*
        #[pyclass(extends = $Base, module = $module, name = $name)]
        pub struct $Class;

        $crate::properties::component_properties! {
            $pound $pymethods $Class, $Wrapper::$Variant(|$c| $value) $(, after_set($after))?;
            $(fields { $($fields)* })?
            $(accessors { $($accessors)* })?
            $(methods { $($methods)* })?
            methods {
                $(
                    #[new]
                    #[pyo3(signature = ($($arg $(= $default)?,)* $(**$kwargs)?))]
                    $(#[$new_attr])*
                    fn new(
                        $($arg: $ty,)*
                        $($kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,)?
                    ) -> PyResult<(Self, $Base)> {
                        Ok(($Class, $Base::new($made)))
                    }
                )?

                $(
                    fn __getnewargs__<'py>(
                        &self,
                        $py: Python<'py>,
                    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
                        pyo3::types::PyTuple::new($py, [$($newarg),*])
                    }
                )?
            }
        }

        $crate::properties::component_classes! {
            @each $pound $pymethods $Base($module), $Wrapper, [$($unit)*]; $($rest)*
        }
    };
}

pub(crate) use component_classes;
