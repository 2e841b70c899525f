//! Predicts a whole member, its name and its value, from the objects before it. Many members repeat
//! both event after event (` "pid": 3170820544,`, ` "ph": "X"}`, ` "Task Type": "AI_CORE",`), so
//! for the n-th member of an object the memo keeps the last two such members as their bytes, from
//! the end of the previous member to the byte after the value, with the member's class and what the
//! value's reader made of the value ([`Known`]). When the input at the cursor starts with those
//! bytes (two 16-byte compares, [`super::byte_match`]) the member is known without the name's
//! lookup in [`super::key_memo`] and the value's in [`super::value_memo`]. A member is memorised
//! only when its value was one the value memo had seen (a value that repeats), so members whose
//! values never repeat (timestamps, task ids) keep their entries empty and cost one failed compare.
//! Like the other memos it is a cache: a hit gives exactly what reading the bytes gives, since the
//! key memo's and the value memo's answers are functions of the same bytes.

use super::byte_match::{self, Run};
use super::key_memo::POSITIONS;
use super::lexer::RawStr;
use super::value_memo::Known;

/// Longest memorised member (blanks, quoted name, colon, blanks, value, the byte after it).
const MAX_LEN: usize = byte_match::WIDTH;

#[derive(Clone, Copy)]
struct Entry<C> {
    /// The member's bytes and the byte after its value (an empty run matches nothing).
    run: Run,
    /// Offsets from the member's start: of the name, of the value, of the value's end.
    name_at: u8,
    name_len: u8,
    value_at: u8,
    end: u8,
    class: C,
    known: Known,
}

impl<C: Default> Default for Entry<C> {
    fn default() -> Self {
        Entry {
            run: Run::default(),
            name_at: 0,
            name_len: 0,
            value_at: 0,
            end: 0,
            class: C::default(),
            known: Known::Int(0),
        }
    }
}

/// A member recognised whole.
#[derive(Clone, Copy)]
pub struct Hit<C> {
    pub key: RawStr,
    pub class: C,
    /// What the value's reader made of the value.
    pub known: Known,
    /// Where the value starts and ends.
    pub value_at: usize,
    pub end: usize,
}

pub struct MemberMemo<C> {
    entries: [[Entry<C>; 2]; POSITIONS],
}

impl<C: Copy + Default> Default for MemberMemo<C> {
    fn default() -> Self {
        MemberMemo {
            entries: [[Entry::default(); 2]; POSITIONS],
        }
    }
}

/// A member read by the key memo or the lexer, whose value the value memo knew.
pub struct Read<C> {
    pub start: usize,
    pub key: RawStr,
    pub class: C,
    pub known: Known,
    pub value_at: usize,
    pub end: usize,
}

impl<C: Copy + Default> MemberMemo<C> {
    /// The member at `ordinal` of its object, when `b[pos..]` starts with one memorised there.
    #[inline(always)]
    pub fn lookup(&self, b: &[u8], pos: usize, ordinal: usize) -> Option<Hit<C>> {
        if ordinal >= POSITIONS {
            return None;
        }
        let at = byte_match::load_at(b, pos)?;
        let e = self.entries[ordinal].iter().find(|e| e.run.starts(at))?;
        Some(Hit {
            key: RawStr::new(pos + e.name_at as usize, e.name_len as u32, false),
            class: e.class,
            known: e.known,
            value_at: pos + e.value_at as usize,
            end: pos + e.end as usize,
        })
    }

    /// Memorises the member at `ordinal` described by `m`. Members longer than [`MAX_LEN`] with
    /// the byte after them, names with escapes, and members at the end of the bytes are skipped.
    #[inline]
    pub fn learn(&mut self, b: &[u8], m: Read<C>, ordinal: usize) {
        let len = m.end + 1 - m.start;
        if ordinal >= POSITIONS || m.key.escaped() || len > MAX_LEN || m.key.start < m.start {
            return;
        }
        let Some(w) = b.get(m.start..m.start + MAX_LEN) else {
            return;
        };
        let slot = &mut self.entries[ordinal];
        slot[1] = slot[0];
        slot[0] = Entry {
            run: Run::new(w.try_into().expect("32 bytes"), len),
            name_at: (m.key.start - m.start) as u8,
            name_len: m.key.len() as u8,
            value_at: (m.value_at - m.start) as u8,
            end: (m.end - m.start) as u8,
            class: m.class,
            known: m.known,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(b: &[u8], class: u8) -> Read<u8> {
        let q = b.iter().position(|&c| c == b'"').unwrap();
        let e = q + 1 + b[q + 1..].iter().position(|&c| c == b'"').unwrap();
        let value_at = e + 3;
        let end = value_at + b[value_at..].iter().position(|&c| c == b',').unwrap();
        Read {
            start: 0,
            key: RawStr::new(q + 1, (e - q - 1) as u32, false),
            class,
            known: Known::Int(42),
            value_at,
            end,
        }
    }

    /// A memorised member is recognised exactly: a change in any of its bytes or in the byte after
    /// its value is a miss, the bytes after that never matter, and a member too long to compare
    /// whole is not memorised.
    #[test]
    fn hits_only_on_the_exact_member() {
        for value_len in 1..=24usize {
            let value: String = (0..value_len)
                .map(|i| (b'1' + (i % 9) as u8) as char)
                .collect();
            let text = format!(" \"pid\": {value}, \"tid\": 7{}", " ".repeat(40));
            let b = text.as_bytes();
            let m = read(b, 5);
            let (key, value_at, end) = (m.key, m.value_at, m.end);
            let mut memo = MemberMemo::<u8>::default();
            memo.learn(b, m, 1);
            let hit = memo.lookup(b, 0, 1);
            if end + 1 > MAX_LEN {
                assert!(hit.is_none(), "{value_len}");
                continue;
            }
            let hit = hit.expect("hit");
            assert_eq!(
                (hit.key, hit.class, hit.known, hit.value_at, hit.end),
                (key, 5, Known::Int(42), value_at, end)
            );
            assert!(memo.lookup(b, 0, 0).is_none(), "other ordinal");
            for at in 0..=end {
                let mut c = b.to_vec();
                c[at] ^= 0x01;
                assert!(memo.lookup(&c, 0, 1).is_none(), "{value_len} {at}");
            }
            let mut c = b.to_vec();
            c[end + 1] = b'x';
            assert!(memo.lookup(&c, 0, 1).is_some(), "bytes after the member");
        }
    }

    /// The two newest members of a position are kept; the third pushes out the oldest.
    #[test]
    fn keeps_the_two_newest() {
        let texts: Vec<String> = (1..=3)
            .map(|v| format!(" \"tid\": {v}, {}", " ".repeat(40)))
            .collect();
        let mut memo = MemberMemo::<u8>::default();
        for t in &texts {
            memo.learn(t.as_bytes(), read(t.as_bytes(), 1), 2);
        }
        let hits: Vec<bool> = texts
            .iter()
            .map(|t| memo.lookup(t.as_bytes(), 0, 2).is_some())
            .collect();
        assert_eq!(hits, [false, true, true]);
    }
}
