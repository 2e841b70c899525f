//! Interned strings: every name, category and label in the tables is a [`StrId`] into one
//! [`Interner`] per [`super::Tables`]. Id 0 is always the empty string ("absent").

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

/// Owns the distinct strings; lookups by id are a slice index. The index holds ids only and
/// hashes the strings it points at, so each string is stored once.
#[derive(Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: hashbrown::HashTable<StrId>,
}

impl std::fmt::Debug for Interner {
    /// The strings in id order (the index is derived from them).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("strings", &self.strings)
            .finish()
    }
}

impl Default for Interner {
    fn default() -> Self {
        let mut i = Interner {
            strings: Vec::new(),
            index: hashbrown::HashTable::new(),
        };
        i.intern("");
        i
    }
}

/// The longest name kept whole, in bytes; a longer one (a 200 MB event name in a hostile file)
/// is kept as its first bytes and a marker with its length, so reports stay small.
pub const MAX_NAME_BYTES: usize = 64 << 10;

fn hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    super::hash::FxBuildHasher::default().hash_one(s)
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> StrId {
        let capped = crate::diag::cap_text(s, MAX_NAME_BYTES);
        let s: &str = &capped;
        let strings = &self.strings;
        let entry = self.index.entry(
            hash(s),
            |&id| &*strings[id.0 as usize] == s,
            |&id| hash(&strings[id.0 as usize]),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = StrId(u32::try_from(strings.len()).expect("fewer than 2^32 strings"));
                e.insert(id);
                self.strings.push(s.into());
                id
            }
        }
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.index
            .find(hash(s), |&id| &*self.strings[id.0 as usize] == s)
            .copied()
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

    /// 200,000 distinct strings (the index grows and rehashes many times) and each again: every
    /// string keeps the id it got first, and id → string → id round-trips.
    #[test]
    fn ids_survive_growth() {
        let mut i = Interner::default();
        let ids: Vec<StrId> = (0..200_000).map(|n| i.intern(&format!("op_{n}"))).collect();
        assert_eq!(i.len(), 200_001);
        for (n, &id) in ids.iter().enumerate() {
            assert_eq!(id, StrId(n as u32 + 1));
            assert_eq!(i.intern(&format!("op_{n}")), id);
            assert_eq!(i.lookup(i.get(id)), Some(id));
        }
        assert_eq!(i.lookup("op_7"), Some(StrId(8)));
        assert_eq!(i.len(), 200_001);
    }
}
