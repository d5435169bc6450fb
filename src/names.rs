//! Names written once. The keys of an input struct and the names of an enum's values live in
//! their `#[derive(Deserialize)]` (`rename_all`, field names); this module reads them back from
//! the derive, so `name()`, `Display`, the CLI's accepted values and the schema test all agree
//! with what the readers accept. `slug` is the one file-name form of a scenario or set name
//! (chart files, and the check that two scenarios do not share one).

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

/// Every value of fieldless enum `T`, in declaration order, each read from its own name.
pub fn values<T: serde::de::DeserializeOwned>() -> Vec<T> {
    use serde::de::IntoDeserializer;
    of::<T>()
        .unwrap_or_default()
        .iter()
        .filter_map(|name| {
            let d: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
                name.into_deserializer();
            T::deserialize(d).ok()
        })
        .collect()
}

/// For a fieldless enum whose names are its `#[derive(Deserialize)]` names (`rename_all`):
/// `name()`, `all()`, `Display`, `FromStr`, `Serialize` (as its name) and `clap::ValueEnum`, so the CLI, the scenario
/// reader and every printout accept and print the same names, written once. `$what` names
/// the kind of value in `FromStr`'s error ("scorer").
#[macro_export]
macro_rules! named_enum {
    ($ty:ty, $what:literal) => {
        impl $ty {
            /// The name a file or the command line writes.
            pub fn name(self) -> &'static str {
                $crate::names::variant::<$ty>(self as usize)
            }

            /// Every value, in declaration order.
            pub fn all() -> &'static [$ty] {
                static ALL: std::sync::OnceLock<Vec<$ty>> = std::sync::OnceLock::new();
                ALL.get_or_init($crate::names::values::<$ty>)
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                Self::all()
                    .iter()
                    .copied()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Self::all().iter().map(|v| v.name()).collect();
                        format!(
                            "unknown {} {s:?}, expected one of: {}",
                            $what,
                            names.join(", ")
                        )
                    })
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                Self::all()
            }
            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()))
            }
        }
    };
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

/// A file-name-safe slug of a scenario or set name (`ten-servers`, `bfcl`).
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "unnamed".to_string()
    } else {
        trimmed.to_string()
    }
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

    #[derive(Deserialize, Clone, Copy, Debug, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Named {
        FirstOne,
        Second,
    }
    crate::named_enum!(Named, "thing");

    #[test]
    fn named_enums_print_parse_and_list_their_serde_names() {
        use clap::ValueEnum;
        assert_eq!(Named::all(), [Named::FirstOne, Named::Second]);
        assert_eq!(Named::FirstOne.to_string(), "first_one");
        assert_eq!("second".parse::<Named>(), Ok(Named::Second));
        assert_eq!(
            "third".parse::<Named>().unwrap_err(),
            "unknown thing \"third\", expected one of: first_one, second"
        );
        let shown: Vec<String> = Named::value_variants()
            .iter()
            .filter_map(clap::ValueEnum::to_possible_value)
            .map(|p| p.get_name().to_string())
            .collect();
        assert_eq!(shown, ["first_one", "second"]);
    }

    /// Every enum named through `named_enum!`: each value prints the name its reader
    /// accepts, and the typed lists kept for iteration agree with the derive.
    #[test]
    fn every_named_enum_round_trips_through_its_name() {
        use crate::output::Format;
        use crate::search::ScorerKind;
        use crate::search::hybrid::FusionMethod;
        use crate::simulate::profile::Override;
        use crate::simulate::scenario::{Discovery, ListStyle, Listing, RetryStep, Reveal};
        use crate::tokenize::{Render, Tokenizer};
        fn round_trip<T>(count: usize)
        where
            T: serde::de::DeserializeOwned
                + std::str::FromStr<Err = String>
                + std::fmt::Display
                + PartialEq
                + std::fmt::Debug
                + Copy
                + clap::ValueEnum
                + 'static,
        {
            let all = T::value_variants();
            assert_eq!(all.len(), count, "{}", std::any::type_name::<T>());
            for v in all {
                assert_eq!(v.to_string().parse::<T>(), Ok(*v));
            }
        }
        assert_eq!(ScorerKind::all(), ScorerKind::ALL);
        assert_eq!(Tokenizer::all(), Tokenizer::ALL);
        assert_eq!(ScorerKind::Bm25.name(), "bm25");
        assert_eq!(Tokenizer::Cl100kBase.name(), "cl100k_base");
        assert_eq!(Format::Md.name(), "md");
        assert_eq!(Discovery::AutoRetrieve.name(), "auto-retrieve");
        assert_eq!(Reveal::ToolsList.name(), "tools-list");
        round_trip::<ScorerKind>(5);
        round_trip::<Tokenizer>(2);
        round_trip::<Render>(1);
        round_trip::<Format>(4);
        round_trip::<FusionMethod>(3);
        round_trip::<Discovery>(3);
        round_trip::<Listing>(5);
        round_trip::<crate::simulate::published::Quantity>(11);
        round_trip::<crate::simulate::published::WholeGap>(2);
        round_trip::<ListStyle>(2);
        round_trip::<Reveal>(2);
        round_trip::<RetryStep>(2);
        round_trip::<Override>(16);
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
