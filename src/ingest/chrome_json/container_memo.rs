//! Remembers the arrays and objects read whole at each member position (Kineto's `Input Dims`,
//! `Input type`, `Concrete Inputs`: `[[1024, 1], [1024, 1], []]`, `["float", "float",
//! "Scalar"]`), so a value seen lately is passed over with one compare instead of a walk over
//! its brackets and strings. A container's extent is a function of its bytes alone (the walk
//! decides on each byte from the ones before it and stops at the bracket closing the first),
//! so when the input at a value starts with the bytes of a container read before, the value is
//! that container and ends where it ended; nothing past it is compared. Four containers per
//! position, the oldest replaced first; containers longer than [`MAX`] bytes are not kept.

use super::key_memo::POSITIONS;

/// Longest container kept, in bytes.
const MAX: usize = 64;
/// Words of a kept container.
const WORDS: usize = MAX / 8;
/// Containers kept per position.
const WAYS: usize = 4;

#[derive(Clone, Copy, Default)]
struct Position {
    /// Per entry: the container's bytes as little-endian words, the last one masked to the
    /// length (the first word of every entry is compared before any other word).
    words: [[u64; WORDS]; WAYS],
    /// Per entry: the mask of its last word, and its length in bytes (0 = empty entry).
    last_mask: [u64; WAYS],
    len: [u8; WAYS],
    /// The entry the next container replaces (the oldest).
    next: u8,
}

#[derive(Default)]
pub struct ContainerMemo {
    positions: [Position; POSITIONS],
}

#[inline(always)]
fn word(b: &[u8; MAX], k: usize) -> u64 {
    u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"))
}

impl ContainerMemo {
    /// The length of the container at `b[at..]` when it is one kept for the member at `ordinal`.
    #[inline]
    pub fn lookup(&self, b: &[u8], at: usize, ordinal: usize) -> Option<usize> {
        let p = self.positions.get(ordinal)?;
        let w: &[u8; MAX] = b.get(at..at + MAX)?.try_into().ok()?;
        let first = word(w, 0);
        for e in 0..WAYS {
            let n = (p.len[e] as usize).div_ceil(8);
            if n == 0 {
                continue;
            }
            let mask = |k: usize| if k + 1 == n { p.last_mask[e] } else { !0 };
            if first & mask(0) != p.words[e][0] {
                continue;
            }
            if (1..n).all(|k| word(w, k) & mask(k) == p.words[e][k]) {
                return Some(p.len[e] as usize);
            }
        }
        None
    }

    /// Keeps the container `b[at..at + len]` just read for the member at `ordinal`, in place of
    /// the oldest kept there.
    #[inline]
    pub fn learn(&mut self, b: &[u8], at: usize, len: usize, ordinal: usize) {
        if len == 0 || len > MAX {
            return;
        }
        let (Some(p), Some(w)) = (self.positions.get_mut(ordinal), b.get(at..at + MAX)) else {
            return;
        };
        let w: &[u8; MAX] = w.try_into().expect("MAX bytes");
        let e = p.next as usize;
        p.next = ((e + 1) % WAYS) as u8;
        let n = len.div_ceil(8);
        let tail = len - 8 * (n - 1);
        p.last_mask[e] = if tail == 8 {
            !0
        } else {
            (1u64 << (8 * tail)) - 1
        };
        for k in 0..n {
            p.words[e][k] = word(w, k);
        }
        p.words[e][n - 1] &= p.last_mask[e];
        p.len[e] = len as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A container is found only where the input starts with all of its bytes, whatever follows;
    /// the four newest are kept.
    #[test]
    fn finds_kept_containers_by_all_their_bytes() {
        let pad = " ".repeat(80);
        let values = [
            "[]",
            "[1]",
            "[[1024, 1], [1024, 1], []]",
            "[\"float\", \"Scalar\"]",
            "{}",
        ];
        let mut m = ContainerMemo::default();
        for v in values {
            let text = format!("{v}{pad}");
            m.learn(text.as_bytes(), 0, v.len(), 2);
        }
        // "[]" was pushed out by the four after it.
        for (k, v) in values.iter().enumerate() {
            let text = format!("{v},\"x\"{pad}");
            let want = (k > 0).then_some(v.len());
            assert_eq!(m.lookup(text.as_bytes(), 0, 2), want, "{v}");
            assert_eq!(m.lookup(text.as_bytes(), 0, 3), None, "other position");
        }
        // One byte changed anywhere in the container: not found.
        let v = values[2];
        for at in 0..v.len() {
            let mut t = format!("{v}{pad}").into_bytes();
            t[at] ^= 0x01;
            assert_eq!(m.lookup(&t, 0, 2), None, "byte {at} changed");
        }
        // Every length up to the longest kept, then one too long; too near the end to compare.
        for n in 0..=30 {
            let v = format!("[{}1]", "1,".repeat(n));
            let text = format!("{v}{pad}");
            m.learn(text.as_bytes(), 0, v.len(), 5);
            assert_eq!(
                m.lookup(text.as_bytes(), 0, 5),
                (v.len() <= MAX).then_some(v.len()),
                "{v}"
            );
            let mut t = text.clone().into_bytes();
            t[v.len() - 1] = b'2';
            assert_eq!(m.lookup(&t, 0, 5), None, "last byte changed: {v}");
        }
        assert_eq!(m.lookup(b"[1]", 0, 2), None);
    }
}
