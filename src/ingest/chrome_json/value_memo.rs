//! Predicts a member's value from the objects before it. Many members repeat their value event
//! after event (`"pid": 3170820544`, `"ph": "X"`, `"Model Id": 4294967295`, `"Task Type":
//! "AI_CORE"`), so for the n-th member of an object the memo keeps the last two values read
//! there, as their bytes plus the one byte after them, with what the reader made of them. When
//! the input at the value starts with those bytes (one 16-byte compare, [`super::byte_match`]) the reader's
//! answer is reused without reading the value. The byte after the value is part of the compare, so
//! `2` never matches the start of `23`, and a value is a pure function of those bytes: every reader
//! of a scalar stops at a byte it has seen. Values longer than 15 bytes are not memorised.

use super::byte_match::{self, Run16};
use super::key_memo::POSITIONS;
use super::lexer::RawStr;

/// Bytes compared: the value and the byte after it.
const WIDTH: usize = 16;

/// What the reader made of a value, relative to where the value starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// An integer (or the reader's stand-in for a value it could not read).
    Int(i64),
    /// A string: its body one byte after the value's start; or, for a value that is not a string,
    /// the default (empty) location.
    Str {
        len: u32,
        escaped: bool,
        located: bool,
    },
    /// An unparsed token of this many bytes at the value's start.
    Token(u32),
}

impl Known {
    /// The string location this answer stands for, for a value at `at`.
    #[inline(always)]
    pub fn raw_str(self, at: usize) -> RawStr {
        match self {
            Known::Str {
                len,
                escaped,
                located: true,
            } => RawStr::new(at + 1, len, escaped),
            _ => RawStr::default(),
        }
    }

    /// The answer for a string read at `at` ([`RawStr::default`] when the value was skipped).
    #[inline(always)]
    pub fn of_str(s: RawStr, at: usize) -> Option<Known> {
        let located = s != RawStr::default();
        if located && s.start != at + 1 {
            return None;
        }
        Some(Known::Str {
            len: s.len(),
            escaped: s.escaped(),
            located,
        })
    }
}

/// Which reader made an answer: readers differ on values they cannot read (an id reads `1.5` as
/// 0, an integer as -1), and one position can hold different members in different kinds of
/// objects, so an answer is reused only for the reader that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reader {
    #[default]
    Id,
    Int,
    /// A graph id ([`super::chunk::INVALID_GRAPH`] where an integer reader gives the integer).
    Graph,
    Str,
    Token,
}

#[derive(Clone, Copy)]
struct Entry {
    /// The value and the byte after it (an empty run matches nothing: an empty entry).
    run: Run16,
    /// Value length in bytes (the compare covers one more).
    len: u8,
    reader: Reader,
    known: Known,
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            run: Run16::default(),
            len: 0,
            reader: Reader::Id,
            known: Known::Int(0),
        }
    }
}

/// Misses in a row after which a position stops being looked up (its values do not repeat: a task
/// id, a timestamp-like counter) ...
const GIVE_UP: u16 = 32;
/// ... for this many values, then tries again.
const REST: u16 = 256;

pub struct ValueMemo {
    entries: [[Entry; 2]; POSITIONS],
    /// Per position: misses in a row, then the values rested.
    misses: [u16; POSITIONS],
    /// The answer of the last value answered from the memo, left for its reader's caller (which
    /// clears it before each member; [`super::member_memo`] memorises such members whole).
    pub hit: Option<Known>,
}

impl Default for ValueMemo {
    fn default() -> Self {
        ValueMemo {
            entries: [[Entry::default(); 2]; POSITIONS],
            misses: [0; POSITIONS],
            hit: None,
        }
    }
}

/// What the memo says about a value.
pub enum Lookup {
    /// The answer and where the value ends.
    Hit(Known, usize),
    /// Read it; memorise the answer when `learn`.
    Miss { learn: bool },
}

impl ValueMemo {
    /// The value at `at` of the member at `ordinal`: a hit when `b[at..]` starts with one
    /// memorised there by `reader`. A position that missed [`GIVE_UP`] times in a row is not
    /// compared (nor taught) for the next [`REST`] values.
    #[inline(always)]
    pub fn lookup(&mut self, b: &[u8], at: usize, ordinal: usize, reader: Reader) -> Lookup {
        if ordinal >= POSITIONS {
            return Lookup::Miss { learn: false };
        }
        let Some(w) = byte_match::load16_at(b, at) else {
            return Lookup::Miss { learn: false };
        };
        let misses = &mut self.misses[ordinal];
        if *misses >= GIVE_UP {
            *misses = if *misses == GIVE_UP + REST {
                0
            } else {
                *misses + 1
            };
            return Lookup::Miss { learn: false };
        }
        match self.entries[ordinal]
            .iter()
            .find(|e| e.reader == reader && e.run.starts(w))
        {
            Some(e) => {
                *misses = 0;
                Lookup::Hit(e.known, at + e.len as usize)
            }
            None => {
                *misses += 1;
                Lookup::Miss { learn: true }
            }
        }
    }

    /// Memorises the value `b[at..end]` of the member at `ordinal`, read by `reader` as `known`.
    #[inline]
    pub fn learn(
        &mut self,
        b: &[u8],
        (at, end): (usize, usize),
        reader: Reader,
        known: Known,
        ordinal: usize,
    ) {
        let len = end - at;
        if ordinal >= POSITIONS || len == 0 || len >= WIDTH {
            return;
        }
        let Some(w) = b.get(at..at + WIDTH) else {
            return;
        };
        let slot = &mut self.entries[ordinal];
        slot[1] = slot[0];
        slot[0] = Entry {
            run: Run16::new(w.try_into().expect("16 bytes"), len + 1),
            len: len as u8,
            reader,
            known,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl ValueMemo {
        /// The hit as an option (tests).
        fn find(
            &mut self,
            b: &[u8],
            at: usize,
            ordinal: usize,
            reader: Reader,
        ) -> Option<(Known, usize)> {
            match self.lookup(b, at, ordinal, reader) {
                Lookup::Hit(k, end) => Some((k, end)),
                Lookup::Miss { .. } => None,
            }
        }
    }

    /// A value is found only when its bytes and the byte after them match, for every value length
    /// the memo keeps; the two newest values per position are kept, the older one dropped.
    #[test]
    fn matches_value_and_the_byte_after_it() {
        let pad = "                ";
        for len in 1..WIDTH {
            let value: String = (0..len).map(|k| (b'1' + (k % 9) as u8) as char).collect();
            let text = format!("{value},{pad}");
            let b = text.as_bytes();
            let mut m = ValueMemo::default();
            m.learn(b, (0, len), Reader::Int, Known::Int(len as i64), 3);
            assert_eq!(
                m.find(b, 0, 3, Reader::Int),
                Some((Known::Int(len as i64), len))
            );
            assert_eq!(m.find(b, 0, 4, Reader::Int), None, "other position");
            assert_eq!(m.find(b, 0, 3, Reader::Id), None, "other reader");
            for at in 0..=len {
                let mut t = b.to_vec();
                t[at] ^= 0x01;
                assert_eq!(
                    m.find(&t, 0, 3, Reader::Int),
                    None,
                    "len {len}, byte {at} changed"
                );
            }
            let mut t = b.to_vec();
            t[len + 1] = b'9';
            assert!(
                m.find(&t, 0, 3, Reader::Int).is_some(),
                "bytes past the terminator do not count"
            );
        }
        let longest = format!("{},{pad}", "7".repeat(WIDTH));
        let mut m = ValueMemo::default();
        m.learn(
            longest.as_bytes(),
            (0, WIDTH),
            Reader::Int,
            Known::Int(7),
            0,
        );
        assert_eq!(
            m.find(longest.as_bytes(), 0, 0, Reader::Int),
            None,
            "16 bytes are not kept"
        );

        let texts = [
            format!("1,{pad}"),
            format!("22,{pad}"),
            format!("333,{pad}"),
        ];
        let mut m = ValueMemo::default();
        for (k, t) in texts.iter().enumerate() {
            m.learn(
                t.as_bytes(),
                (0, k + 1),
                Reader::Token,
                Known::Token(k as u32 + 1),
                0,
            );
        }
        let mut find = |t: &[u8]| m.find(t, 0, 0, Reader::Token);
        assert_eq!(find(texts[0].as_bytes()), None, "oldest dropped");
        assert_eq!(find(texts[1].as_bytes()), Some((Known::Token(2), 2)));
        assert_eq!(find(texts[2].as_bytes()), Some((Known::Token(3), 3)));
        assert_eq!(find(b"22,"), None, "fewer than 16 bytes left");
    }

    /// A position that keeps missing is left alone for a while, then tried again; one hit
    /// resets the count.
    #[test]
    fn positions_that_keep_missing_rest() {
        let pad = "                ";
        let texts: Vec<String> = (0..2000).map(|n| format!("{n},{pad}")).collect();
        let same = format!("7,{pad}");
        let mut m = ValueMemo::default();
        let mut compared = 0;
        for t in &texts {
            match m.lookup(t.as_bytes(), 0, 5, Reader::Int) {
                Lookup::Hit(..) => panic!("distinct values never hit"),
                Lookup::Miss { learn } => {
                    if learn {
                        compared += 1;
                        let len = t.find(',').unwrap();
                        m.learn(t.as_bytes(), (0, len), Reader::Int, Known::Int(0), 5);
                    }
                }
            }
        }
        // 2000 values: 32 compared, 257 rested, 32 compared, ... (6 full cycles of 289, then 266
        // more: 32 compared and 234 rested).
        assert_eq!(compared, 7 * 32);
        // A position still being compared hits as soon as a value repeats.
        let mut m = ValueMemo::default();
        m.learn(same.as_bytes(), (0, 1), Reader::Int, Known::Int(7), 0);
        for _ in 0..100 {
            assert_eq!(
                m.find(same.as_bytes(), 0, 0, Reader::Int),
                Some((Known::Int(7), 1))
            );
        }
    }

    #[test]
    fn strings_are_located_relative_to_the_value() {
        let s = RawStr::new(11, 7, true);
        let k = Known::of_str(s, 10).unwrap();
        assert_eq!(k.raw_str(50), RawStr::new(51, s.len(), s.escaped()));
        assert_eq!(Known::of_str(s, 9), None, "not at the value's start");
        let skipped = Known::of_str(RawStr::default(), 10).unwrap();
        assert_eq!(skipped.raw_str(50), RawStr::default());
    }
}
