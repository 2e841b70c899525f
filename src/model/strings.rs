//! Interned strings: every name, category and label in the tables is a [`StrId`] into one
//! [`Interner`] per [`super::Tables`]. Id 0 is always the empty string ("absent").

use super::hash::FxHashMap;
use serde::Serialize;

/// Index of an interned string. `StrId::EMPTY` (0) means "absent / empty".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct StrId(pub u32);

impl StrId {
    pub const EMPTY: StrId = StrId(0);
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Owns the distinct strings; lookups by id are a slice index.
#[derive(Debug, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: FxHashMap<Box<str>, StrId>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut i = Interner {
            strings: Vec::new(),
            index: FxHashMap::default(),
        };
        i.intern("");
        i
    }
}

/// The longest name kept whole, in bytes; a longer one (a 200 MB event name in a hostile file)
/// is kept as its first bytes and a marker with its length, so reports stay small.
pub const MAX_NAME_BYTES: usize = 64 << 10;

impl Interner {
    pub fn intern(&mut self, s: &str) -> StrId {
        let capped = crate::diag::cap_text(s, MAX_NAME_BYTES);
        let s: &str = &capped;
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = StrId(u32::try_from(self.strings.len()).expect("fewer than 2^32 strings"));
        self.strings.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.index.get(s).copied()
    }

    pub fn get(&self, id: StrId) -> &str {
        &self.strings[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }

    /// All ids with their strings, id order.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.strings
            .iter()
            .enumerate()
            .map(|(i, s)| (StrId(i as u32), &**s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_zero_and_ids_are_stable() {
        let mut i = Interner::default();
        assert_eq!(i.intern(""), StrId::EMPTY);
        let a = i.intern("MatMulV2");
        let b = i.intern("Notify Wait");
        assert_eq!(i.intern("MatMulV2"), a);
        assert_ne!(a, b);
        assert_eq!(i.get(b), "Notify Wait");
        assert_eq!(i.lookup("nope"), None);
    }
}
