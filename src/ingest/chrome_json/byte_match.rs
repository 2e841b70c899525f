//! Byte scans of the event scanner, 16 or 32 bytes at a time: whether the bytes at the cursor
//! begin with a remembered run (the memos' one question: [`super::key_memo`],
//! [`super::value_memo`]), and where a run of blanks ends ([`super::lexer`]). (Finding a
//! container's brackets this way was measured slower: Kineto's arrays are short and dense.) On x86_64 two SSE2 byte compares (SSE2 is part of every
//! x86_64 CPU, so no run-time test) give a bit per equal byte, and the run matches when every bit of its length is
//! set (a byte class is a few compares OR-ed); elsewhere the same answer comes from masked 128-bit words.

/// The 32 bytes a lookup compares.
pub const WIDTH: usize = 32;

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use portable as imp;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use sse2 as imp;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::WIDTH;
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };

    /// Bit i set when byte i of `w` is one of `set` (1 to 5 bytes).
    #[inline(always)]
    pub fn class16(w: &[u8; 16], set: &[u8]) -> u32 {
        // SAFETY: `w` is 16 readable bytes, `_mm_loadu_si128` takes any alignment, and SSE2 is
        // enabled (this module's cfg).
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            let mut m = _mm_setzero_si128();
            for &c in set {
                m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)));
            }
            _mm_movemask_epi8(m) as u32 & 0xFFFF
        }
    }

    /// 32 bytes as two SSE2 registers.
    #[derive(Clone, Copy)]
    pub struct Bytes32(__m128i, __m128i);

    impl Default for Bytes32 {
        fn default() -> Self {
            // SAFETY: SSE2 is enabled (this module's cfg).
            unsafe { Bytes32(_mm_setzero_si128(), _mm_setzero_si128()) }
        }
    }

    #[inline(always)]
    pub fn load(w: &[u8; WIDTH]) -> Bytes32 {
        let p = w.as_ptr() as *const __m128i;
        // SAFETY: `w` is 32 readable bytes, `_mm_loadu_si128` takes any alignment, and SSE2 is
        // enabled (this module's cfg).
        unsafe { Bytes32(_mm_loadu_si128(p), _mm_loadu_si128(p.add(1))) }
    }

    /// 16 bytes as one SSE2 register.
    #[derive(Clone, Copy)]
    pub struct Bytes16(__m128i);

    impl Default for Bytes16 {
        fn default() -> Self {
            // SAFETY: SSE2 is enabled (this module's cfg).
            unsafe { Bytes16(_mm_setzero_si128()) }
        }
    }

    #[inline(always)]
    pub fn load16(w: &[u8; 16]) -> Bytes16 {
        // SAFETY: `w` is 16 readable bytes, `_mm_loadu_si128` takes any alignment, and SSE2 is
        // enabled (this module's cfg).
        unsafe { Bytes16(_mm_loadu_si128(w.as_ptr() as *const __m128i)) }
    }

    /// Bit i set when byte i of `a` equals byte i of `b`.
    #[inline(always)]
    pub fn equal_bytes16(a: Bytes16, b: Bytes16) -> u32 {
        // SAFETY: SSE2 is enabled (this module's cfg).
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(a.0, b.0)) as u32 & 0xFFFF }
    }

    /// Bit i set when byte i of `a` equals byte i of `b`.
    #[inline(always)]
    pub fn equal_bytes(a: Bytes32, b: Bytes32) -> u32 {
        // SAFETY: SSE2 is enabled (this module's cfg).
        let (lo, hi) = unsafe {
            (
                _mm_movemask_epi8(_mm_cmpeq_epi8(a.0, b.0)) as u32 & 0xFFFF,
                _mm_movemask_epi8(_mm_cmpeq_epi8(a.1, b.1)) as u32 & 0xFFFF,
            )
        };
        lo | hi << 16
    }
}

/// The same answers from words (every target; the tests compare it with SSE2 on x86_64).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
mod portable {
    use super::WIDTH;

    /// 32 bytes as two little-endian words.
    #[derive(Clone, Copy, Default)]
    pub struct Bytes32(u128, u128);

    #[inline(always)]
    pub fn load(w: &[u8; WIDTH]) -> Bytes32 {
        Bytes32(
            u128::from_le_bytes(w[..16].try_into().expect("16 bytes")),
            u128::from_le_bytes(w[16..].try_into().expect("16 bytes")),
        )
    }

    /// 16 bytes as one little-endian word.
    #[derive(Clone, Copy, Default)]
    pub struct Bytes16(u128);

    #[inline(always)]
    pub fn load16(w: &[u8; 16]) -> Bytes16 {
        Bytes16(u128::from_le_bytes(*w))
    }

    /// Bit i set when byte i of `w` is one of `set`.
    #[inline(always)]
    pub fn class16(w: &[u8; 16], set: &[u8]) -> u32 {
        (0..16).fold(0, |m, i| m | (set.contains(&w[i]) as u32) << i)
    }

    fn zero_bytes(x: u128) -> u32 {
        (0..16).fold(0, |m, i| m | (((x >> (8 * i)) as u8 == 0) as u32) << i)
    }

    /// Bit i set when byte i of `a` equals byte i of `b`.
    #[inline(always)]
    pub fn equal_bytes16(a: Bytes16, b: Bytes16) -> u32 {
        zero_bytes(a.0 ^ b.0)
    }

    /// Bit i set when byte i of `a` equals byte i of `b`.
    #[inline(always)]
    pub fn equal_bytes(a: Bytes32, b: Bytes32) -> u32 {
        zero_bytes(a.0 ^ b.0) | zero_bytes(a.1 ^ b.1) << 16
    }
}

pub use imp::{Bytes16, Bytes32};

/// A remembered run of 1 to 32 bytes.
#[derive(Clone, Copy, Default)]
pub struct Run {
    bytes: Bytes32,
    /// One bit per byte of the run (0: an empty slot, which matches nothing).
    care: u32,
}

impl Run {
    /// The first `len` (1 to 32) bytes of `w`.
    #[inline]
    pub fn new(w: &[u8; WIDTH], len: usize) -> Run {
        debug_assert!((1..=WIDTH).contains(&len));
        Run {
            bytes: imp::load(w),
            care: if len >= 32 { u32::MAX } else { (1 << len) - 1 },
        }
    }

    /// Whether the bytes `at` begin with this run.
    #[inline(always)]
    pub fn starts(&self, at: Bytes32) -> bool {
        self.care != 0 && imp::equal_bytes(at, self.bytes) & self.care == self.care
    }
}

/// JSON's blanks.
const BLANKS: &[u8] = b" \n\r\t";

/// The end of the run of JSON blanks (space, `\n`, `\r`, `\t`) from `p`: the first other byte,
/// or the end of `b`; 16 bytes at a time.
#[inline]
pub fn blanks_end(b: &[u8], mut p: usize) -> usize {
    while let Some(w) = b.get(p..p + 16) {
        let other = !imp::class16(w.try_into().expect("16 bytes"), BLANKS) & 0xFFFF;
        if other != 0 {
            return p + other.trailing_zeros() as usize;
        }
        p += 16;
    }
    while p < b.len() && BLANKS.contains(&b[p]) {
        p += 1;
    }
    p
}

/// Bit i set when byte i of the 16 bytes `w` is a quote or a backslash (where a string's body
/// ends or has an escape).
#[inline(always)]
pub fn quotes_or_escapes16(w: &[u8; 16]) -> u32 {
    imp::class16(w, b"\"\\")
}

/// A remembered run of 1 to 16 bytes (the [`Run`] of a 16-byte window).
#[derive(Clone, Copy, Default)]
pub struct Run16 {
    bytes: Bytes16,
    care: u32,
}

impl Run16 {
    /// The first `len` (1 to 16) bytes of `w`.
    #[inline]
    pub fn new(w: &[u8; 16], len: usize) -> Run16 {
        debug_assert!((1..=16).contains(&len));
        Run16 {
            bytes: imp::load16(w),
            care: (1u32 << len.min(16)) - 1,
        }
    }

    /// Whether the bytes `at` begin with this run.
    #[inline(always)]
    pub fn starts(&self, at: Bytes16) -> bool {
        self.care != 0 && imp::equal_bytes16(at, self.bytes) & self.care == self.care
    }
}

/// The 16 bytes from `pos`, when that many remain.
#[inline(always)]
pub fn load16_at(b: &[u8], pos: usize) -> Option<Bytes16> {
    let w: &[u8; 16] = b.get(pos..pos + 16)?.try_into().ok()?;
    Some(imp::load16(w))
}

/// The 32 bytes from `pos`, when that many remain.
#[inline(always)]
pub fn load_at(b: &[u8], pos: usize) -> Option<Bytes32> {
    let w: &[u8; WIDTH] = b.get(pos..pos + WIDTH)?.try_into().ok()?;
    Some(imp::load(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run matches exactly the bytes it remembered: at every length, a change in any of its
    /// bytes is a miss and bytes after it never matter; an empty slot matches nothing.
    #[test]
    fn runs_match_their_bytes_only() {
        let base: Vec<u8> = (0..64u8).map(|i| b'a' + i % 26).collect();
        let w: &[u8; WIDTH] = base[..WIDTH].try_into().unwrap();
        for len in 1..=WIDTH {
            let r = Run::new(w, len);
            assert!(r.starts(load_at(&base, 0).unwrap()));
            for at in 0..WIDTH {
                let mut c = base.clone();
                c[at] ^= 0x01;
                assert_eq!(r.starts(load_at(&c, 0).unwrap()), at >= len, "{len} {at}");
            }
        }
        assert!(!Run::default().starts(load_at(&base, 0).unwrap()));
        let w16: &[u8; 16] = base[..16].try_into().unwrap();
        for len in 1..=16 {
            let r = Run16::new(w16, len);
            for at in 0..16 {
                let mut c = base.clone();
                c[at] ^= 0x01;
                assert_eq!(
                    r.starts(load16_at(&c, 0).unwrap()),
                    at >= len,
                    "16: {len} {at}"
                );
            }
        }
        assert!(!Run16::default().starts(load16_at(&base, 0).unwrap()));
        assert!(load16_at(&base, 49).is_none());
        assert!(load_at(&base, 33).is_none());
        assert!(load_at(&base, 32).is_some());
    }

    /// Blank runs are found exactly, at every offset and length, whatever follows
    /// (other bytes, the end of the input), against a byte loop.
    #[test]
    fn blank_runs_equal_a_byte_loop() {
        let mut x: u64 = 0xD1B5_4A32_D192_ED03;
        let alphabet = b" \n\r\t\"{}[]a,:0!\x0b\x0c\x08";
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 70) as usize;
            let blank_heavy = x >> 63 == 1;
            let text: Vec<u8> = (0..len)
                .map(|k| {
                    let r = (x >> (k % 50)) as usize ^ (k * 7);
                    if blank_heavy && !r.is_multiple_of(5) {
                        BLANKS[r % 4]
                    } else {
                        alphabet[r % alphabet.len()]
                    }
                })
                .collect();
            for p in 0..=len {
                let blanks = (p..len)
                    .find(|&i| !BLANKS.contains(&text[i]))
                    .unwrap_or(len);
                assert_eq!(blanks_end(&text, p), blanks, "{text:?} {p}");
            }
        }
    }

    /// The word fallback (other CPUs) answers what SSE2 answers, on generated byte pairs that
    /// agree in a random subset of positions.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[test]
    fn portable_equals_sse2() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            let mut a = [0u8; WIDTH];
            let mut b = [0u8; WIDTH];
            for k in 0..WIDTH {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                a[k] = x as u8;
                b[k] = if x >> 40 & 1 == 0 {
                    a[k]
                } else {
                    (x >> 8) as u8
                };
            }
            assert_eq!(
                portable::equal_bytes(portable::load(&a), portable::load(&b)),
                sse2::equal_bytes(sse2::load(&a), sse2::load(&b))
            );
            let (a16, b16): (&[u8; 16], &[u8; 16]) =
                (a[..16].try_into().unwrap(), b[..16].try_into().unwrap());
            assert_eq!(
                portable::equal_bytes16(portable::load16(a16), portable::load16(b16)),
                sse2::equal_bytes16(sse2::load16(a16), sse2::load16(b16))
            );
            for set in [BLANKS, b"\"{}[]".as_slice()] {
                assert_eq!(portable::class16(a16, set), sse2::class16(a16, set));
            }
        }
    }
}
