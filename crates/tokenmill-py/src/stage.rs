//! One definition serves the Python classes of the four pipeline stages (normalizers,
//! pre-tokenizers, post-processors, decoders): [`stage_classes!`] declares a stage's base class
//! (its shared value, pickling, `repr`), its `Sequence` class, and the function that builds the
//! Python object of the right subclass for a shared value. The generic parts are the functions
//! below; the macro only lists what differs (names, subclasses, stage-specific methods).
//!
//! Also the Tokenizer's `normalizer` / `pre_tokenizer` / `post_processor` / `decoder`
//! properties, which read and set those classes ([`get_component`], [`set_component`]):
//! [`stage_properties!`], applied to the Tokenizer's `#[pymethods]` block, lists them.
//!
//! May import `shared` (the shared values), `foreign` (adopting `tokenizers` objects) and
//! `tokenizer_state` (where the Tokenizer keeps its components); `stage_properties!` names the
//! four stage modules' base classes where it is applied.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use pyo3::PyTypeInfo;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokenmill_core::decoders::{self, DecoderWrapper};
use tokenmill_core::normalizers::{self, NormalizerWrapper};
use tokenmill_core::pre_tokenizers::{self, PreTokenizerWrapper};
use tokenmill_core::processors::{self, PostProcessorWrapper};
use tokenmill_core::Error;

use crate::errors::ToPyResult;
use tokenmill_core::tokenizer::Tokenizer;
use tokenmill_core::Result as CoreResult;

use crate::foreign::{adopt, Adopted, Role};
use crate::shared::{Node, Sequenced, Shared};
use crate::tokenizer_state::{attach_optional, Attached, Components, TokenizerState};

/// A stage's base class (`Normalizer`, ...): it holds a [`Node`] of the core wrapper.
pub(crate) trait StageClass: Role + PyTypeInfo {
    type Wrapper: Sequenced + Serialize + DeserializeOwned;
    /// What the stage is called in messages ("normalizer").
    const WHAT: &'static str;
    /// Which pickled states `__setstate__` takes.
    const RESTORE: Restore;
    fn node(&self) -> &Node<Self::Wrapper>;
    /// The Python class name of a value's kind ("BertNormalizer").
    fn class_name(value: &Self::Wrapper) -> &'static str;
    /// The Python object of the right subclass that shares `node`.
    fn to_object(py: Python<'_>, node: Node<Self::Wrapper>) -> PyResult<PyObject>;
}

/// Which pickled states a stage object's `__setstate__` takes.
pub(crate) enum Restore {
    /// Only one of its own kind (a `Strip` object stays a `Strip`).
    SameKind,
    /// Any of the stage, the object's value changing kind (as `tokenizers`' decoders and
    /// post-processors do).
    AnyKind,
}

/// The pickled state of a stage value: its tokenizer.json form.
pub(crate) fn get_state<'py, W: Sequenced + Serialize>(
    py: Python<'py>,
    node: &Node<W>,
) -> PyResult<Bound<'py, PyBytes>> {
    let json = serde_json::to_vec(&node.snapshot()).map_err(Error::from).py()?;
    Ok(PyBytes::new(py, &json))
}

/// Restores a pickled state (JSON as str or bytes); see [`Restore`].
pub(crate) fn set_state<S: StageClass>(
    node: &mut Node<S::Wrapper>,
    state: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let json: Vec<u8> = match state.extract::<String>() {
        Ok(s) => s.into_bytes(),
        Err(_) => state.extract::<Vec<u8>>()?,
    };
    let value: S::Wrapper = serde_json::from_slice(&json).map_err(Error::from).py()?;
    let current = node.snapshot();
    let other_kind = std::mem::discriminant(&value) != std::mem::discriminant(&current);
    if other_kind && matches!(S::RESTORE, Restore::SameKind) {
        return Err(PyTypeError::new_err(format!(
            "cannot restore a {} {} into a {} object",
            S::class_name(&value),
            S::WHAT,
            S::class_name(&current)
        )));
    }
    node.replace(value);
    Ok(())
}

/// `repr()` (`full`) or `str()` of a stage value, in `tokenizers`' format (see `repr.rs`).
pub(crate) fn repr<W: Sequenced + Serialize>(node: &Node<W>, full: bool) -> PyResult<String> {
    let value = node.snapshot();
    let text = if full { crate::repr::repr(&value) } else { crate::repr::to_str(&value) };
    text.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// How a `Sequence` holds the components it is built from.
pub(crate) enum Items {
    /// The same shared values (changing a given component changes the Sequence); a given
    /// Sequence is flattened into its items.
    Shared,
    /// Copies, a given Sequence staying one item (`tokenizers`' decoder Sequence).
    Copied,
}

/// The items of a new `Sequence` from a list of components (or their `tokenizers` equivalents).
pub(crate) fn sequence_items<S: StageClass>(
    list: &Bound<'_, PyList>,
    how: Items,
) -> PyResult<Vec<Shared<S::Wrapper>>> {
    let mut items = Vec::with_capacity(list.len());
    for item in list.iter() {
        let item = adopt::<S>(&item)?;
        let component = item.downcast::<S>().map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a {}.{}, got {}",
                S::MODULE.unwrap_or("tokenmill"),
                S::NAME,
                item.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
        })?;
        let component = component.borrow();
        match how {
            Items::Shared => items.extend(component.node().items()),
            Items::Copied => items.push(Shared::new(component.node().snapshot())),
        }
    }
    Ok(items)
}

/// `seq[index] = value`: the item's shared value becomes a copy of `value`'s (objects holding
/// that item see the change); `nested` is the error for a Sequence value.
pub(crate) fn set_item<W: Sequenced>(
    sequence: &Node<W>,
    index: isize,
    value: &Node<W>,
    nested: impl FnOnce() -> PyErr,
) -> PyResult<()> {
    let Node::Single(value) = value else { return Err(nested()) };
    sequence.item(index)?.set(value.snapshot());
    Ok(())
}

/// Declares a stage's base class `$Base` (holding a `Node<$Wrapper>`, with `methods` and the
/// shared pickling / repr methods), its `Sequence` class `$Seq`, and `$Base`'s [`StageClass`]
/// impl, whose `to_object` builds the class `Py$Variant` for `$Wrapper::$Variant` values and
/// the bare base class for `$Plain` ones. `restore` is a [`Restore`] variant, `items` an
/// [`Items`] variant; `set_item` (optional) gives `Sequence.__setitem__` and its error for a
/// Sequence value; `custom` (optional) the `custom(obj)` static method wrapping a component
/// written in Python.
/// Also the stage module's `register`, which adds these classes and the `also` ones.
macro_rules! stage_classes {
    (
        $(#[$base_doc:meta])*
        base $Base:ident($Wrapper:ident), $module:literal, $name:literal, $what:literal,
            restore $Restore:ident;
        $(#[$seq_doc:meta])*
        sequence $Seq:ident($arg:ident $(, $text_signature:literal)?), items $items:ident
            $(, set_item $Nested:ident($nested:literal))?;
        subclasses { $($Variant:ident),* $(,)? }
        plain { $($Plain:ident),* }
        $(also { $($Also:ident),* })?
        $($(#[$custom_doc:meta])* custom($custom:ident) => $make_custom:path;)?
        methods { $($methods:tt)* }
    ) => {
        // `paste!` names each subclass: `Py` + its variant.
        pastey::paste! {
            $(#[$base_doc])*
            #[pyclass(subclass, module = $module, name = $name)]
            #[derive(Clone)]
            pub struct $Base {
                pub(crate) inner: $crate::shared::Node<$Wrapper>,
            }

            impl $Base {
                pub(crate) fn new(inner: impl Into<$Wrapper>) -> Self {
                    $Base { inner: $crate::shared::Node::new(inner.into()) }
                }
            }

            #[pymethods]
            impl $Base {
                $(
                    $(#[$custom_doc])*
                    #[staticmethod]
                    fn custom($custom: Py<PyAny>) -> Self {
                        $Base::new($make_custom($custom))
                    }
                )?

                $($methods)*

                fn __getstate__<'py>(
                    &self,
                    py: Python<'py>,
                ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                    $crate::stage::get_state(py, &self.inner)
                }

                fn __setstate__(&mut self, state: &Bound<'_, PyAny>) -> PyResult<()> {
                    $crate::stage::set_state::<$Base>(&mut self.inner, state)
                }

                fn __repr__(&self) -> PyResult<String> {
                    $crate::stage::repr(&self.inner, true)
                }

                fn __str__(&self) -> PyResult<String> {
                    $crate::stage::repr(&self.inner, false)
                }
            }

            impl $crate::stage::StageClass for $Base {
                type Wrapper = $Wrapper;
                const WHAT: &'static str = $what;
                const RESTORE: $crate::stage::Restore = $crate::stage::Restore::$Restore;

                fn node(&self) -> &$crate::shared::Node<$Wrapper> {
                    &self.inner
                }

                fn class_name(value: &$Wrapper) -> &'static str {
                    match value {
                        $($Wrapper::$Variant(_) => <[<Py $Variant>] as pyo3::PyTypeInfo>::NAME,)*
                        $($Wrapper::$Plain(_) => stringify!($Plain),)*
                    }
                }

                fn to_object(
                    py: Python<'_>,
                    node: $crate::shared::Node<$Wrapper>,
                ) -> PyResult<PyObject> {
                    let base = PyClassInitializer::from($Base { inner: node.clone() });
                    let $crate::shared::Node::Single(cell) = &node else {
                        return Ok(Py::new(py, base.add_subclass($Seq))?.into_any());
                    };
                    cell.with(|value| {
                        Ok(match value {
                            $($Wrapper::$Variant(_) => {
                                Py::new(py, base.add_subclass([<Py $Variant>]))?.into_any()
                            })*
                            $($Wrapper::$Plain(_) => Py::new(py, base)?.into_any(),)*
                        })
                    })
                }
            }

            $(#[$seq_doc])*
            #[pyclass(extends = $Base, module = $module, name = "Sequence")]
            pub struct $Seq;

            #[pymethods]
            impl $Seq {
                #[new]
                #[pyo3(signature = ($arg) $(, text_signature = $text_signature)?)]
                fn new($arg: &Bound<'_, pyo3::types::PyList>) -> PyResult<(Self, $Base)> {
                    use $crate::stage::{sequence_items, Items};
                    let items = sequence_items::<$Base>($arg, Items::$items)?;
                    Ok(($Seq, $Base { inner: $crate::shared::Node::sequence(items) }))
                }

                fn __getnewargs__<'py>(
                    &self,
                    py: Python<'py>,
                ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
                    pyo3::types::PyTuple::new(py, [pyo3::types::PyList::empty(py)])
                }

                fn __len__(self_: PyRef<'_, Self>) -> usize {
                    self_.as_super().inner.len()
                }

                /// The item at ``index``, shared: changing it changes this Sequence.
                fn __getitem__(self_: PyRef<'_, Self>, index: isize) -> PyResult<PyObject> {
                    let item = self_.as_super().inner.item(index)?;
                    <$Base as $crate::stage::StageClass>::to_object(
                        self_.py(),
                        $crate::shared::Node::Single(item),
                    )
                }

                $(
                    /// Replaces the value of the item at ``index`` (objects holding that item see
                    /// the change).
                    fn __setitem__(
                        self_: PyRef<'_, Self>,
                        index: isize,
                        value: $crate::foreign::Adopted<'_, $Base>,
                    ) -> PyResult<()> {
                        let nested = || pyo3::exceptions::$Nested::new_err($nested);
                        let sequence = &self_.as_super().inner;
                        $crate::stage::set_item(sequence, index, &value.inner, nested)
                    }
                )?
            }

            /// Adds the stage's classes to its submodule.
            pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
                m.add_class::<$Base>()?;
                $(m.add_class::<[<Py $Variant>]>()?;)*
                $($(m.add_class::<$Also>()?;)*)?
                Ok(())
            }
        }
    };
}

pub(crate) use stage_classes;

/// Implements [`Sequenced`] for stage wrappers: `$Wrapper::Sequence(s)` holds its items in
/// `$items(s)`, and `$Sequence::new(items)` builds one.
macro_rules! sequenced {
    ($($Wrapper:ident: $Sequence:path, |$s:ident| $items:expr;)*) => {$(
        impl Sequenced for $Wrapper {
            fn into_items(self) -> Result<Vec<Self>, Self> {
                match self {
                    $Wrapper::Sequence($s) => Ok($items),
                    other => Err(other),
                }
            }
            fn from_items(items: Vec<Self>) -> Self {
                $Wrapper::Sequence(<$Sequence>::new(items))
            }
        }
    )*};
}

sequenced! {
    NormalizerWrapper: normalizers::Sequence, |s| s.normalizers;
    PreTokenizerWrapper: pre_tokenizers::Sequence, |s| s.pretokenizers().to_vec();
    PostProcessorWrapper: processors::Sequence, |s| s.processors;
    DecoderWrapper: decoders::Sequence, |s| s.decoders;
}

/// Where the Tokenizer's state keeps a stage's component.
pub(crate) type Slot<S> = Attached<Node<<S as StageClass>::Wrapper>>;

/// A stage the Tokenizer holds as an optional shared component: where it sits in the state,
/// and how the core pipeline takes its value (see [`stage_properties!`]).
pub(crate) trait TokenizerStage: StageClass {
    fn slot(components: &Components) -> &Option<Slot<Self>>;
    fn slot_mut(components: &mut Components) -> &mut Option<Slot<Self>>;
    fn install(tokenizer: &mut Tokenizer, value: Option<Self::Wrapper>) -> CoreResult<()>;
}

/// What a core `Tokenizer::with_<stage>` returns: the tokenizer, or a result of it (a
/// normalizer can be refused).
pub(crate) trait Installed {
    fn done(self) -> CoreResult<()>;
}

impl Installed for &mut Tokenizer {
    fn done(self) -> CoreResult<()> {
        Ok(())
    }
}

impl Installed for CoreResult<&mut Tokenizer> {
    fn done(self) -> CoreResult<()> {
        self.map(|_| ())
    }
}

/// The Tokenizer's `normalizer` / `pre_tokenizer` / `post_processor` / `decoder` properties,
/// applied to its `#[pymethods]` block (`#[apply(stage_properties!)]`: PyO3 takes one block per
/// class): a getter and a setter for each stage listed here (documented by the doc comments),
/// and each stage class's [`TokenizerStage`] impl (its `$field` of the components, given to the
/// core pipeline by `Tokenizer::with_$field`).
macro_rules! stage_properties {
    ($pound:tt $pymethods:tt impl $Tokenizer:ident { $($methods:tt)* }) => {
        $crate::stage::stage_properties! {
            @stages $pound $pymethods impl $Tokenizer { $($methods)* }
            /// The :class:`tokenmill.normalizers.Normalizer`, or None.
            normalizers::PyNormalizer => normalizer;
            /// The :class:`tokenmill.pre_tokenizers.PreTokenizer`, or None.
            pre_tokenizers::PyPreTokenizer => pre_tokenizer;
            /// The :class:`tokenmill.processors.PostProcessor`, or None.
            processors::PyPostProcessor => post_processor;
            /// The :class:`tokenmill.decoders.Decoder`, or None.
            decoders::PyDecoder => decoder;
        }
    };
    (
        @stages $pound:tt $pymethods:tt impl $Tokenizer:ident { $($methods:tt)* }
        $($(#[$doc:meta])* $module:ident::$Class:ident => $field:ident;)*
    ) => {pastey::paste! {
        $(impl $crate::stage::TokenizerStage for $crate::$module::$Class {
            fn slot(
                components: &$crate::tokenizer_state::Components,
            ) -> &Option<$crate::stage::Slot<Self>> {
                &components.$field
            }
            fn slot_mut(
                components: &mut $crate::tokenizer_state::Components,
            ) -> &mut Option<$crate::stage::Slot<Self>> {
                &mut components.$field
            }
            fn install(
                tokenizer: &mut tokenmill_core::tokenizer::Tokenizer,
                value: Option<Self::Wrapper>,
            ) -> tokenmill_core::Result<()> {
                $crate::stage::Installed::done(tokenizer.[<with_ $field>](value))
            }
        })*

        $pound $pymethods
        impl $Tokenizer {
            $($methods)*

            $(
                $(#[$doc])*
                #[getter]
                fn [<get_ $field>](&self, py: Python<'_>) -> PyResult<PyObject> {
                    $crate::stage::get_component::<$crate::$module::$Class>(py, self.state())
                }
                #[setter]
                fn [<set_ $field>](
                    &self,
                    py: Python<'_>,
                    value: Option<$crate::foreign::Adopted<'_, $crate::$module::$Class>>,
                ) -> PyResult<()> {
                    $crate::stage::set_component(py, self.state(), value)
                }
            )*
        }
    }};
}

pub(crate) use stage_properties;

/// `tokenizer.<stage>`: the Python object sharing the Tokenizer's component, or None.
pub(crate) fn get_component<S: TokenizerStage>(
    py: Python<'_>,
    state: &TokenizerState,
) -> PyResult<PyObject> {
    match S::slot(&state.current(py)?.components) {
        Some(component) => S::to_object(py, component.handle.clone()),
        None => Ok(py.None()),
    }
}

/// `tokenizer.<stage> = component`: the Tokenizer shares `component` (None removes the stage).
pub(crate) fn set_component<S: TokenizerStage>(
    py: Python<'_>,
    state: &TokenizerState,
    component: Option<Adopted<'_, S>>,
) -> PyResult<()> {
    let (attached, value) = attach_optional(component.map(|c| c.node().clone()));
    state.update(py, |state| {
        *S::slot_mut(&mut state.components) = attached;
        S::install(&mut state.tokenizer, value).py()
    })
}
