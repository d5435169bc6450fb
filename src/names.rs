//! Names written once. The keys of an input struct and the names of an enum's values live in
//! their `#[derive(Deserialize)]` (`rename_all`, field names); this module reads them back from
//! the derive, so `name()`, `Display`, the CLI's accepted values and the schema test all agree
//! with what the readers accept.

use serde::Deserialize;
use serde::de::{self, Visitor};

/// The field names of struct `T` or the variant names of enum `T`, in declaration order, as
/// its derived `Deserialize` spells them. `None` for any other type.
pub fn of<'de, T: Deserialize<'de>>() -> Option<&'static [&'static str]> {
    match T::deserialize(Probe) {
        Err(Found::Names(n)) => Some(n),
        Err(Found::Other) | Ok(_) => None,
    }
}

/// The name of the `index`-th variant of enum `T` (`index` = `self as usize` for a fieldless
/// enum); "?" when `T` is not a derived enum, which a test of each enum rules out.
pub fn variant<'de, T: Deserialize<'de>>(index: usize) -> &'static str {
    of::<T>().and_then(|n| n.get(index)).copied().unwrap_or("?")
}

#[derive(Debug)]
enum Found {
    Names(&'static [&'static str]),
    Other,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a struct or an enum")
    }
}

impl std::error::Error for Found {}

impl de::Error for Found {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Found::Other
    }
}

/// A deserializer that answers every request with the names it was asked about.
struct Probe;

impl<'de> de::Deserializer<'de> for Probe {
    type Error = Found;
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Found> {
        Err(Found::Other)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Found> {
        Err(Found::Names(fields))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Found> {
        Err(Found::Names(variants))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        identifier ignored_any
    }
}

/// Sorted names, for comparing key sets.
pub fn sorted(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| (*s).to_string()).collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct S {
        alpha: u8,
        #[serde(rename = "b-eta")]
        beta: u8,
    }

    #[derive(Deserialize, Clone, Copy)]
    #[serde(rename_all = "kebab-case")]
    enum E {
        OneTwo,
        Three,
    }

    #[test]
    fn reads_fields_and_variants_from_the_derive() {
        assert_eq!(of::<S>(), Some(&["alpha", "b-eta"][..]));
        assert_eq!(variant::<E>(E::OneTwo as usize), "one-two");
        assert_eq!(variant::<E>(E::Three as usize), "three");
        assert_eq!(of::<u32>(), None);
        assert_eq!(variant::<String>(0), "?");
    }
}
