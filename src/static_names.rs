//! Reading back `&'static str` fields (closed sets of names: file formats, categories, causes,
//! scopes, diagnostic codes) from a cached result: each distinct name is leaked once and reused,
//! so the result types keep their static names and a long-running server does not grow with
//! every cache read. Use with `#[serde(deserialize_with = "…")]`.

use serde::{Deserialize, Deserializer};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, OnceLock};

/// A static name in a deserialized type (an alias, so serde does not take the field for one
/// borrowed from the input).
pub type Name = &'static str;

/// The most distinct names kept: the closed sets hold a few hundred at most, so more means the
/// input is not a result profscope wrote.
const MAX_NAMES: usize = 4096;
/// The longest name accepted.
const MAX_NAME_BYTES: usize = 256;

/// The static copy of `s`, or None when `s` is too long or too many names were already seen.
pub fn intern(s: &str) -> Option<&'static str> {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.get(s) {
        return Some(n);
    }
    if s.len() > MAX_NAME_BYTES || names.len() >= MAX_NAMES {
        return None;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    Some(n)
}

fn interned<E: serde::de::Error>(s: &str) -> Result<&'static str, E> {
    intern(s).ok_or_else(|| E::custom(format!("not a known kind of name: {:.40}", s)))
}

/// A `&'static str` field.
pub fn name<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = std::borrow::Cow::<str>::deserialize(d)?;
    interned(&s)
}

/// An `Option<&'static str>` field.
pub fn optional_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
    Option::<std::borrow::Cow<str>>::deserialize(d)?
        .map(|s| interned(&s))
        .transpose()
}

/// A map keyed by `&'static str`.
pub fn name_keys<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
    d: D,
) -> Result<BTreeMap<&'static str, V>, D::Error> {
    BTreeMap::<String, V>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| Ok((interned(&k)?, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_per_name_and_long_names_refused() {
        let a = intern(&String::from("ascend_db")).unwrap();
        let b = intern(&String::from("ascend_db")).unwrap();
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "ascend_db");
        assert!(intern(&"x".repeat(MAX_NAME_BYTES + 1)).is_none());
    }
}
