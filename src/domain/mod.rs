//! The service's own values, shared by the HTTP edge, storage (`db`) and the workers:
//! validated API input (raw input is a JSON object; each `parse` collects every field
//! error, dotted names for nested fields, before it fails), state enums, and the pure
//! rules over stored rows (`payments`, `summary`). It depends on nothing but `cfdi`'s
//! parsed types, the SAT's `catalogs` and `error`, so `db` can speak it without reaching up.

/// An enum whose variants each have one wire string: `as_str`, `parse`, `ALL` and
/// `WIRE` (the strings, in order).
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $wire:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// The wire strings, in order (what a filter accepts).
            pub const WIRE: &'static [&'static str] = &[$($wire,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

pub mod calendar;
pub mod class;
pub mod efirma;
pub mod entity;
pub mod event;
pub mod extraction;
mod field_errors;
pub mod list_69b;
pub mod listing;
pub mod payments;
pub mod relations;
pub mod sat_status;
pub mod schedule;
pub mod seal;
pub mod search;
pub mod summary;
pub mod supplier;
pub mod totals;
pub mod webhook;

pub use field_errors::FieldErrors;
use serde_json::{Map, Value};

pub const BLANK: &str = "can't be blank";
pub const NOT_A_STRING: &str = "must be a string";

/// A field that must hold a non-blank string. Adds an error and returns None otherwise.
pub fn required_string(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
    errors: &mut FieldErrors,
) -> Option<String> {
    match obj.get(key) {
        None | Some(Value::Null) => {
            errors.add(field, BLANK);
            None
        }
        Some(value) => string_value(value, field, errors),
    }
}

/// A field that may be absent (None), but when present must be a non-blank string.
pub fn optional_string(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
    errors: &mut FieldErrors,
) -> Option<String> {
    obj.get(key).and_then(|v| string_value(v, field, errors))
}

fn string_value(value: &Value, field: &str, errors: &mut FieldErrors) -> Option<String> {
    match value {
        Value::String(s) if s.trim().is_empty() => {
            errors.add(field, BLANK);
            None
        }
        Value::String(s) => Some(s.clone()),
        _ => {
            errors.add(field, NOT_A_STRING);
            None
        }
    }
}

/// A nested object that is required (`options`, `options.period`).
pub fn required_object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    field: &str,
    errors: &mut FieldErrors,
) -> Option<&'a Map<String, Value>> {
    match obj.get(key) {
        None | Some(Value::Null) => {
            errors.add(field, BLANK);
            None
        }
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            errors.add(field, "must be an object");
            None
        }
    }
}
