//! Chunk-local interning: strings and (pid, tid) keys get small local ids while a chunk is
//! parsed on its own thread; the builder remaps them to global ids when chunks are merged.

use super::lexer::{RawStr, unescape};
use crate::model::hash::{FxHashMap, bytes_hash};
use std::borrow::Cow;

/// A pid or tid as written: a number, or a string (local string id, below 2^32).
///
/// Tag and payload are whole words: with the default tag and a `u32` payload, an id moved
/// through memory was stored in 4-byte pieces and reloaded as one word, which x86 cores cannot
/// forward from the store buffer (the pid and tid loads were 15 % of the scanner's samples on
/// json1g).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum IdKey {
    Num(i64),
    Text(u64),
}

impl Default for IdKey {
    fn default() -> Self {
        IdKey::Num(0)
    }
}

/// A byte-string map key whose equality uses overlapping word loads instead of memcmp, and whose
/// hash is [`bytes_hash`] (keys here are short: names, categories, task types).
#[derive(Clone, Copy)]
pub struct Bytes<'a>(pub &'a [u8]);

impl std::hash::Hash for Bytes<'_> {
    #[inline(always)]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(bytes_hash(self.0));
    }
}

impl PartialEq for Bytes<'_> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        let n = a.len();
        if n != b.len() {
            return false;
        }
        let w8 = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        let w4 = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
        match n {
            0 => true,
            1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
            4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
            8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
            _ => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8) && a == b,
        }
    }
}
impl Eq for Bytes<'_> {}

/// Local string table of one chunk. Id 0 is the empty string.
pub struct LocalStrings<'a> {
    pub list: Vec<Cow<'a, [u8]>>,
    borrowed: FxHashMap<Bytes<'a>, u32>,
    owned: FxHashMap<Vec<u8>, u32>,
    /// The strings interned lately, by their [`bytes_hash`] (a chunk interns the same few op
    /// names and task types over and over): a hit, checked against the whole string, skips the
    /// map's probe.
    recent: Box<[(u64, u32); RECENT]>,
}

/// Slots of [`LocalStrings::recent`] (a hash's top byte).
const RECENT: usize = 256;

impl<'a> Default for LocalStrings<'a> {
    fn default() -> Self {
        let mut s = LocalStrings {
            list: Vec::new(),
            borrowed: FxHashMap::default(),
            owned: FxHashMap::default(),
            recent: Box::new([(0, 0); RECENT]),
        };
        s.list.push(Cow::Borrowed(&[]));
        s.borrowed.insert(Bytes(&[]), 0);
        s
    }
}

impl<'a> LocalStrings<'a> {
    /// Interns a located string of `src`, decoding escapes when present. Inlined in the scanner:
    /// a string met lately costs its hash and one compare ([`Self::intern_borrowed`]).
    #[inline(always)]
    pub fn intern(&mut self, src: &'a [u8], s: RawStr) -> u32 {
        if s.is_empty() {
            return 0;
        }
        if s.escaped() {
            return self.intern_escaped(&src[s.start..s.start + s.len() as usize]);
        }
        self.intern_borrowed(&src[s.start..s.start + s.len() as usize])
    }

    #[cold]
    #[inline(never)]
    fn intern_escaped(&mut self, raw: &[u8]) -> u32 {
        let decoded = unescape(raw);
        if let Some(&id) = self.owned.get(&decoded) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(Cow::Owned(decoded.clone()));
        self.owned.insert(decoded, id);
        id
    }

    #[inline(always)]
    pub fn intern_borrowed(&mut self, raw: &'a [u8]) -> u32 {
        let key = bytes_hash(raw);
        let slot = (key >> 56) as usize;
        let (k, id) = self.recent[slot];
        if k == key && id != 0 && Bytes(&self.list[id as usize]) == Bytes(raw) {
            return id;
        }
        self.intern_in_map(raw, key, slot)
    }

    /// [`Self::intern_borrowed`] of a string not met lately: the map's probe, and an insert when new.
    #[inline(never)]
    fn intern_in_map(&mut self, raw: &'a [u8], key: u64, slot: usize) -> u32 {
        let id = match self.borrowed.get(&Bytes(raw)) {
            Some(&id) => id,
            None => {
                let id = self.list.len() as u32;
                self.list.push(Cow::Borrowed(raw));
                self.borrowed.insert(Bytes(raw), id);
                id
            }
        };
        self.recent[slot] = (key, id);
        id
    }
}

/// The distinct strings of a finished chunk, copied out of the input so that the input's pages can
/// be released before the merge reads them (a read would fault the pages, and their neighbours,
/// back in).
#[derive(Default)]
pub struct StringArena {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl StringArena {
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl LocalStrings<'_> {
    /// Copies the strings, in id order, into an owned arena.
    pub fn into_arena(self) -> StringArena {
        let total: usize = self.list.iter().map(|s| s.len()).sum();
        let mut a = StringArena {
            bytes: Vec::with_capacity(total),
            ends: Vec::with_capacity(self.list.len()),
        };
        for s in &self.list {
            a.bytes.extend_from_slice(s);
            a.ends.push(a.bytes.len() as u32);
        }
        a
    }
}

/// Threads of a chunk looked up by scanning rather than hashing.
const SCANNED_THREADS: usize = 16;

/// Slots of [`LocalThreads`]' direct-mapped cache (a power of two).
const THREAD_SLOTS: usize = 256;

/// A (pid, tid) key as two words and their kinds (bit 0: pid is text, bit 1: tid is text), so
/// a cache compares three integers; [`NO_SLOT`] kinds mark an empty slot.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct PackedKey(u64, u64, u8);

const NO_SLOT: u8 = u8::MAX;

impl PackedKey {
    #[inline(always)]
    pub(super) fn of(pid: IdKey, tid: IdKey) -> Self {
        let word = |k: IdKey| match k {
            IdKey::Num(v) => (v as u64, 0u8),
            IdKey::Text(s) => (s, 1u8),
        };
        let ((p, pk), (t, tk)) = (word(pid), word(tid));
        PackedKey(p, t, pk | (tk << 1))
    }

    /// Its slot among `slots`, with `salt` (the rest of a longer key) mixed in.
    #[inline(always)]
    pub(super) fn slot(self, slots: usize, salt: u64) -> usize {
        crate::model::hash::slot_of(self.0 ^ salt, self.1 ^ u64::from(self.2), slots)
    }
}

/// Local thread table of one chunk: (pid, tid) → local thread id.
pub struct LocalThreads {
    pub keys: Vec<(IdKey, IdKey)>,
    map: FxHashMap<(IdKey, IdKey), u32>,
    /// The last id found per slot of the key's hash: events alternate among a few threads,
    /// so nearly every lookup ends here.
    recent: Box<[(PackedKey, u32); THREAD_SLOTS]>,
}

impl Default for LocalThreads {
    fn default() -> Self {
        LocalThreads {
            keys: Vec::new(),
            map: FxHashMap::default(),
            recent: Box::new([(PackedKey(0, 0, NO_SLOT), 0); THREAD_SLOTS]),
        }
    }
}

impl LocalThreads {
    /// The local id of (pid, tid): from the recent slot of its hash, else a scan of the first
    /// few threads (a chunk rarely has more), else the map.
    #[inline]
    pub fn get(&mut self, pid: IdKey, tid: IdKey) -> u32 {
        let packed = PackedKey::of(pid, tid);
        let at = packed.slot(THREAD_SLOTS, 0);
        if self.recent[at].0 == packed {
            return self.recent[at].1;
        }
        let id = self.find(pid, tid);
        self.recent[at] = (packed, id);
        id
    }

    #[cold]
    fn find(&mut self, pid: IdKey, tid: IdKey) -> u32 {
        let key = (pid, tid);
        let found = if self.keys.len() <= SCANNED_THREADS {
            self.keys.iter().position(|&k| k == key).map(|i| i as u32)
        } else {
            self.map.get(&key).copied()
        };
        found.unwrap_or_else(|| {
            let id = self.keys.len() as u32;
            self.keys.push(key);
            self.map.insert(key, id);
            id
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are given in first-seen order and found again whatever the lookup path: 600 keys
    /// (more than the scan and the cache hold, so slots collide), numeric and text, the same
    /// number as pid and tid, looked up in a shuffled order three times.
    #[test]
    fn thread_ids_survive_collisions() {
        let mut th = LocalThreads::default();
        let keys: Vec<(IdKey, IdKey)> = (0..600i64)
            .map(|k| match k % 3 {
                0 => (IdKey::Num(k / 3), IdKey::Num(-k)),
                1 => (IdKey::Text(u64::from(k as u32)), IdKey::Num(k)),
                _ => (IdKey::Num(k), IdKey::Text(u64::from(k as u32))),
            })
            .collect();
        let first: Vec<u32> = keys.iter().map(|&(p, t)| th.get(p, t)).collect();
        assert_eq!(first, (0..600).collect::<Vec<u32>>());
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3 {
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let k = (x % 600) as usize;
                assert_eq!(th.get(keys[k].0, keys[k].1), k as u32);
            }
        }
        assert_eq!(th.keys, keys);
        // Num(1) and Text(1) are different threads.
        assert_ne!(
            th.get(IdKey::Num(1), IdKey::Num(0)),
            th.get(IdKey::Text(1), IdKey::Num(0))
        );
    }

    /// Strings that collide on a recent slot, or share their length and end words (a different
    /// middle), get their own ids; a string met again gets its first id.
    #[test]
    fn recent_strings_are_checked_whole() {
        let text = b"aaaaaaaaXYZbbbbbbbbbaaaaaaaaQRSbbbbbbbbbAI_COREAI_VECTOR_COREab";
        let a = &text[0..20];
        let b = &text[20..40];
        assert_eq!((a.len(), &a[..8], &a[12..]), (b.len(), &b[..8], &b[12..]));
        assert_ne!(a, b);
        let core = &text[40..47];
        let vector = &text[47..61];
        let short = &text[61..63];
        let mut s = LocalStrings::default();
        let ids: Vec<u32> = [a, b, core, vector, short, a, b, core, vector, short]
            .iter()
            .map(|x| s.intern_borrowed(x))
            .collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5, 1, 2, 3, 4, 5]);
        // 300 distinct strings: more than the slots, so slots are shared; each keeps its id.
        let many: Vec<String> = (0..300).map(|k| format!("op_{k:04}_name")).collect();
        let first: Vec<u32> = many
            .iter()
            .map(|x| s.intern_borrowed(x.as_bytes()))
            .collect();
        let again: Vec<u32> = many
            .iter()
            .map(|x| s.intern_borrowed(x.as_bytes()))
            .collect();
        assert_eq!(first, again);
        assert_eq!(first, (6..306).collect::<Vec<u32>>());
        assert_eq!(s.list.len(), 306);
        assert_eq!(&*s.list[1], a);
        assert_eq!(&*s.list[2], b);
    }
}
