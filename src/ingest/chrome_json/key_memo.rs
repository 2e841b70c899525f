//! Predicts an object's member names from the objects before it. A trace writer emits every event
//! of a kind with the same members in the same order (`{"name": …, "pid": …, "tid": …, "ts": …`),
//! so for the n-th member of an object the memo keeps the bytes last seen from the end of the
//! previous member (after its `,` or the `{`) to the start of the value, e.g. ` "pid": `, with the
//! member's class. When the input at the cursor starts with those bytes (two 16-byte compares) the
//! member is known without scanning its name, its colon and its blanks, or classifying its name
//! ([`super::byte_match`]: two SSE2 compares on x86_64).
//! Two entries per position (the newest first) cover writers that alternate two kinds of events.
//! A miss takes the lexer's path and teaches the memo; names with escapes are never memorised.

use super::byte_match::{self, Run};
use super::lexer::RawStr;

/// Member positions memorised per object (later members always take the lexer's path).
pub(super) const POSITIONS: usize = 16;
/// Longest memorised prefix (blanks, quoted name, colon, blanks) in bytes.
const MAX_PREFIX: usize = byte_match::WIDTH;

#[derive(Clone, Copy, Default)]
struct Entry<C> {
    /// The prefix (an empty run matches nothing: an empty entry).
    run: Run,
    /// Prefix length.
    len: u8,
    /// Offset of the name's first byte from the prefix start, and the name's length.
    name_at: u8,
    name_len: u8,
    class: C,
}

/// A member recognised from the memo.
pub struct Hit<C> {
    pub key: RawStr,
    pub class: C,
    /// Where the value starts.
    pub value_at: usize,
}

pub struct KeyMemo<C> {
    entries: [[Entry<C>; 2]; POSITIONS],
}

impl<C: Copy + Default> Default for KeyMemo<C> {
    fn default() -> Self {
        KeyMemo {
            entries: [[Entry::default(); 2]; POSITIONS],
        }
    }
}

impl<C: Copy + Default> KeyMemo<C> {
    /// The member at `ordinal` of its object, when `b[pos..]` starts with a prefix memorised there.
    #[inline(always)]
    pub fn lookup(&self, b: &[u8], pos: usize, ordinal: usize) -> Option<Hit<C>> {
        if ordinal >= POSITIONS {
            return None;
        }
        let at = byte_match::load_at(b, pos)?;
        for e in &self.entries[ordinal] {
            if e.run.starts(at) {
                return Some(Hit {
                    key: RawStr::new(pos + e.name_at as usize, e.name_len as u32, false),
                    class: e.class,
                    value_at: pos + e.len as usize,
                });
            }
        }
        None
    }

    /// Memorises the member at `ordinal` read by the lexer: its prefix `b[start..value_at]`,
    /// its name `key` and class. Prefixes that are too long, or names with escapes, are skipped.
    #[inline]
    pub fn learn(
        &mut self,
        b: &[u8],
        start: usize,
        value_at: usize,
        key: RawStr,
        class: C,
        ordinal: usize,
    ) {
        let len = value_at - start;
        if ordinal >= POSITIONS || key.escaped() || len == 0 || len > MAX_PREFIX {
            return;
        }
        let Some(w) = b.get(start..start + MAX_PREFIX) else {
            return;
        };
        let slot = &mut self.entries[ordinal];
        slot[1] = slot[0];
        slot[0] = Entry {
            run: Run::new(w.try_into().expect("32 bytes"), len),
            len: len as u8,
            name_at: (key.start - start) as u8,
            name_len: key.len() as u8,
            class,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_at(b: &[u8], start: usize) -> (RawStr, usize) {
        let q = start + b[start..].iter().position(|&c| c == b'"').unwrap();
        let e = q + 1 + b[q + 1..].iter().position(|&c| c == b'"').unwrap();
        let colon = e + 1 + b[e + 1..].iter().position(|&c| c == b':').unwrap();
        let value = colon + 1 + b[colon + 1..].iter().take_while(|&&c| c == b' ').count();
        let key = RawStr::new(q + 1, (e - q - 1) as u32, false);
        (key, value)
    }

    /// A memorised prefix is recognised exactly: at every length from 1 to 32 bytes, a change in
    /// any one of its bytes is a miss, and bytes after it never matter.
    #[test]
    fn hits_only_on_the_exact_prefix() {
        for name_len in 1..=28usize {
            let name: String = (0..name_len)
                .map(|i| (b'a' + (i % 26) as u8) as char)
                .collect();
            let text = format!(" \"{name}\": 1, {}", " ".repeat(40));
            let b = text.as_bytes();
            let (key, value_at) = key_at(b, 0);
            let mut m = KeyMemo::<u8>::default();
            m.learn(b, 0, value_at, key, 7, 3);
            let len = value_at;
            let hit = m.lookup(b, 0, 3);
            if len > MAX_PREFIX {
                assert!(hit.is_none());
                continue;
            }
            let hit = hit.expect("hit");
            assert_eq!((hit.key, hit.class, hit.value_at), (key, 7, value_at));
            assert!(m.lookup(b, 0, 2).is_none(), "other ordinal");
            for at in 0..len {
                let mut c = b.to_vec();
                c[at] ^= 0x20;
                assert!(m.lookup(&c, 0, 3).is_none(), "{name_len} {at}");
            }
            for at in len..b.len() {
                let mut c = b.to_vec();
                c[at] = b'x';
                assert!(m.lookup(&c, 0, 3).is_some(), "{name_len} {at}");
            }
        }
    }

    /// Two prefixes per position; a third replaces the older one.
    #[test]
    fn keeps_the_two_newest_per_position() {
        let text = format!(" \"args\": {{}}, \"ph\": 1, \"cat\": 2{}", " ".repeat(40));
        let b = text.as_bytes();
        let mut m = KeyMemo::<u8>::default();
        let starts = [0usize, 12, 21];
        for (i, &s) in starts.iter().enumerate() {
            let (key, value_at) = key_at(b, s);
            m.learn(b, s, value_at, key, i as u8, 5);
        }
        assert!(m.lookup(b, 0, 5).is_none());
        assert_eq!(m.lookup(b, 12, 5).map(|h| h.class), Some(1));
        assert_eq!(m.lookup(b, 21, 5).map(|h| h.class), Some(2));
        // Too close to the end of the bytes to compare 32: the lexer's path.
        assert!(m.lookup(b, b.len() - 31, 5).is_none());
    }
}
