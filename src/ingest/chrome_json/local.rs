//! Chunk-local interning: strings and (pid, tid) keys get small local ids while a chunk is
//! parsed on its own thread; the builder remaps them to global ids when chunks are merged.

use super::lexer::{RawStr, unescape};
use crate::model::hash::FxHashMap;
use std::borrow::Cow;

/// A pid or tid as written: a number, or a string (local string id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKey {
    Num(i64),
    Text(u32),
}

impl Default for IdKey {
    fn default() -> Self {
        IdKey::Num(0)
    }
}

/// Local string table of one chunk. Id 0 is the empty string.
pub struct LocalStrings<'a> {
    pub list: Vec<Cow<'a, [u8]>>,
    borrowed: FxHashMap<&'a [u8], u32>,
    owned: FxHashMap<Vec<u8>, u32>,
}

impl<'a> Default for LocalStrings<'a> {
    fn default() -> Self {
        let mut s = LocalStrings {
            list: Vec::new(),
            borrowed: FxHashMap::default(),
            owned: FxHashMap::default(),
        };
        s.list.push(Cow::Borrowed(&[]));
        s.borrowed.insert(&[], 0);
        s
    }
}

impl<'a> LocalStrings<'a> {
    /// Interns a located string of `src`, decoding escapes when present.
    #[inline]
    pub fn intern(&mut self, src: &'a [u8], s: RawStr) -> u32 {
        let raw = &src[s.start as usize..(s.start + s.len) as usize];
        if !s.escaped {
            return self.intern_borrowed(raw);
        }
        let decoded = unescape(raw);
        if let Some(&id) = self.owned.get(&decoded) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(Cow::Owned(decoded.clone()));
        self.owned.insert(decoded, id);
        id
    }

    #[inline]
    pub fn intern_borrowed(&mut self, raw: &'a [u8]) -> u32 {
        if let Some(&id) = self.borrowed.get(raw) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(Cow::Borrowed(raw));
        self.borrowed.insert(raw, id);
        id
    }
}

/// Local thread table of one chunk: (pid, tid) → local thread id.
#[derive(Default)]
pub struct LocalThreads {
    pub keys: Vec<(IdKey, IdKey)>,
    map: FxHashMap<(IdKey, IdKey), u32>,
    last: Option<((IdKey, IdKey), u32)>,
}

impl LocalThreads {
    #[inline]
    pub fn get(&mut self, pid: IdKey, tid: IdKey) -> u32 {
        if let Some((k, id)) = self.last
            && k == (pid, tid)
        {
            return id;
        }
        let next = self.keys.len() as u32;
        let id = *self.map.entry((pid, tid)).or_insert(next);
        if id == next {
            self.keys.push((pid, tid));
        }
        self.last = Some(((pid, tid), id));
        id
    }
}
