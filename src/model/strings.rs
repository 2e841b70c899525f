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

/// Owns the distinct strings, back to back in one buffer (no allocation per string); lookups by
/// id are two offsets. The index holds each id with half of its string's hash (8 bytes a
/// string), so growing it reads no string and no string is stored twice.
#[derive(Clone)]
pub struct Interner {
    bytes: String,
    /// `starts[i]..starts[i + 1]` is string i's range in `bytes`.
    starts: Vec<usize>,
    index: hashbrown::HashTable<(StrId, u32)>,
}

impl std::fmt::Debug for Interner {
    /// The strings in id order (the index is derived from them).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("strings", &self.iter().map(|(_, s)| s).collect::<Vec<_>>())
            .finish()
    }
}

impl Default for Interner {
    fn default() -> Self {
        let mut i = Interner {
            bytes: String::new(),
            starts: vec![0],
            index: hashbrown::HashTable::new(),
        };
        i.intern("");
        i
    }
}

/// The longest name kept whole, in bytes; a longer one (a 200 MB event name in a hostile file)
/// is kept as its first bytes and a marker with its length, so reports stay small.
pub const MAX_NAME_BYTES: usize = 64 << 10;

/// The high half of the string's 64-bit hash (the better-mixed half), kept beside its id.
fn hash32(s: &str) -> u32 {
    (super::hash::bytes_hash(s.as_bytes()) >> 32) as u32
}

/// The table's hash of a kept half: its bits in both halves of a word, so that the bucket (low
/// bits) and the tag (top bits) both come from it.
fn spread(h: u32) -> u64 {
    (h as u64) << 32 | h as u64
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> StrId {
        let capped = crate::diag::cap_text(s, MAX_NAME_BYTES);
        let s: &str = &capped;
        let h = hash32(s);
        let next = StrId(u32::try_from(self.len()).expect("fewer than 2^32 strings"));
        let (bytes, starts) = (&self.bytes, &self.starts);
        let entry = self.index.entry(
            spread(h),
            |&(id, hash)| hash == h && string_at(bytes, starts, id) == s,
            |&(_, hash)| spread(hash),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => e.get().0,
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert((next, h));
                self.bytes.push_str(s);
                self.starts.push(self.bytes.len());
                next
            }
        }
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        let h = hash32(s);
        self.index
            .find(spread(h), |&(id, hash)| hash == h && self.get(id) == s)
            .map(|&(id, _)| id)
    }

    pub fn get(&self, id: StrId) -> &str {
        string_at(&self.bytes, &self.starts, id)
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() <= 1
    }

    /// All ids with their strings, id order.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.starts
            .windows(2)
            .enumerate()
            .map(|(i, w)| (StrId(i as u32), &self.bytes[w[0]..w[1]]))
    }
}

#[inline]
fn string_at<'a>(bytes: &'a str, starts: &[usize], id: StrId) -> &'a str {
    let i = id.0 as usize;
    &bytes[starts[i]..starts[i + 1]]
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

    /// Strings of 0 to 80 bytes, ASCII and multi-byte, each interned twice: the ids count up from
    /// 1 in first-seen order, `iter` and `Debug` list exactly those strings in that order, and
    /// a string not interned is not found.
    #[test]
    fn strings_back_to_back_keep_their_bytes() {
        let mut i = Interner::default();
        let mut want = vec![String::new()];
        for n in 1..=80usize {
            for base in ["x", "é", "数"] {
                let s: String = base.repeat(n).chars().take(n).collect();
                let id = i.intern(&s);
                if want.contains(&s) {
                    assert_eq!(i.get(id), s);
                } else {
                    assert_eq!(id, StrId(want.len() as u32));
                    want.push(s.clone());
                }
                assert_eq!(i.intern(&s), id);
            }
        }
        let got: Vec<&str> = i.iter().map(|(_, s)| s).collect();
        assert_eq!(got, want);
        assert_eq!(
            format!("{i:?}"),
            format!("Interner {{ strings: {want:?} }}")
        );
        assert_eq!(i.len(), want.len());
        assert_eq!(i.lookup("y"), None);
        assert_eq!(i.lookup(""), Some(StrId::EMPTY));
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
