//! The crate's declarative macros for repeated declarations: `component_enum!` (the enum over
//! the components of one stage, or over the model families, declared from one list of variants,
//! each component convertible into it with `From`) and `setters!` (builder methods).

/// Declares `pub enum $wrapper { $variant($component), ... }` (attributes and docs kept) and
/// `impl From<$component> for $wrapper` for every variant.
macro_rules! component_enum {
    (
        $(#[$meta:meta])*
        pub enum $wrapper:ident {
            $($(#[$variant_meta:meta])* $variant:ident($component:ty),)*
        }
    ) => {
        $(#[$meta])*
        pub enum $wrapper {
            $($(#[$variant_meta])* $variant($component),)*
        }

        $(impl From<$component> for $wrapper {
            fn from(component: $component) -> Self {
                $wrapper::$variant(component)
            }
        })*
    };
}
pub(crate) use component_enum;

/// Builder methods that each set the field of their name and return the builder:
/// `setters! { field: Type; ... }` declares `pub fn field(mut self, value: Type) -> Self`, and
/// `field: Some(Type);` (for an `Option<Type>` field) `pub fn field(mut self, value: impl
/// Into<Type>) -> Self`, which stores `Some(value.into())` (doc comments kept).
macro_rules! setters {
    () => {};
    ($(#[$doc:meta])* $field:ident: Some($ty:ty); $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $field(mut self, value: impl Into<$ty>) -> Self {
            self.$field = Some(value.into());
            self
        }
        $crate::utils::macros::setters! { $($rest)* }
    };
    ($(#[$doc:meta])* $field:ident: $ty:ty; $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $field(mut self, value: $ty) -> Self {
            self.$field = value;
            self
        }
        $crate::utils::macros::setters! { $($rest)* }
    };
}
pub(crate) use setters;
