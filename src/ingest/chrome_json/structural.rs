//! The structural pre-pass of the event scanner (simdjson's stage 1, reduced to what the scanner
//! asks): for each 64-byte block of the input, a bitmask of the quotes that are not escaped, one
//! of backslashes, and one of the bytes that end a number or literal (`,` `}` `]` and blanks).
//! The masks are computed with AVX2 when the CPU has it (scalar code otherwise), a window of
//! blocks at a time just ahead of the cursor, so
//! [`super::lexer::Lexer`] finds the end of a string or a number with a bit scan instead of a
//! byte-by-byte search.
//!
//! Opt-in (`PROFSCOPE_JSON_SCAN=indexed`): measured on the 1 GB trace_view.json and a 547 MB
//! Kineto trace it is 6-12 % slower than the scalar scanner (docs/performance.md), because the
//! strings of real traces are short (keys, op names: a few to a few dozen bytes), so a string's
//! cost is the call, not the byte search, which the scalar scanner already does 8 bytes at a
//! time (SWAR) and memchr does with SIMD for long strings; the pre-pass then adds its own pass
//! over every byte. It gives identical tables (tests/it/scan_modes.rs) and is the stage 1 a
//! simdjson-style stage 2 (walking the structural positions instead of calling the lexer per
//! token) would build on.
//!
//! Escapes follow simdjson: a byte is escaped when an odd run of backslashes ends right before
//! it; the run may cross blocks and windows (the carry). A window that does not continue the
//! previous one starts with no carry, which is exact for every string that opens inside it: a
//! backslash run that starts before an opening quote ends before it.

/// Bytes per block (one bit per byte in each mask).
const BLOCK: usize = 64;
/// Blocks per window: 128 KiB of input, 6 KiB of masks (fits the L1/L2 caches).
const WINDOW_BLOCKS: usize = 2048;
const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// How the bytes of the event array are tokenised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanMode {
    /// With the structural index, built by the fastest kernel this CPU has.
    Indexed,
    /// Byte by byte (SWAR and memchr), no index: the default (the faster one on real traces),
    /// and the reference the indexed path must equal. Runs the scanner's copy compiled for
    /// AVX2 and BMI where the CPU has them ([`super::chunk::parse_chunk`]).
    Scalar,
    /// [`ScanMode::Scalar`] in the copy compiled for the baseline instructions (x86-64's SSE2)
    /// whatever the CPU has: the reference the AVX2 copy must equal.
    ScalarBaseline,
}

impl ScanMode {
    /// `PROFSCOPE_JSON_SCAN=indexed` selects the indexed scanner, `baseline` the scalar one's
    /// baseline copy; anything else (or nothing) the scalar one. Read once per process.
    pub fn from_env() -> ScanMode {
        static MODE: std::sync::OnceLock<ScanMode> = std::sync::OnceLock::new();
        *MODE.get_or_init(|| match std::env::var("PROFSCOPE_JSON_SCAN").as_deref() {
            Ok("indexed") => ScanMode::Indexed,
            Ok("baseline") => ScanMode::ScalarBaseline,
            _ => ScanMode::Scalar,
        })
    }
}

/// Which code classifies a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub fn best() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Scalar
    }

    /// Every kernel this CPU can run (tests compare them).
    pub fn available() -> Vec<Kernel> {
        let mut k = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            k.push(Kernel::Avx2);
        }
        k
    }

    /// The raw masks of one block: (quotes, backslashes, token ends), bit i for byte i.
    #[inline]
    pub fn classify(self, block: &[u8; BLOCK]) -> (u64, u64, u64) {
        match self {
            Kernel::Scalar => classify_scalar(block),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Kernel::Avx2` is only chosen after `is_x86_feature_detected!("avx2")`.
            Kernel::Avx2 => unsafe { classify_avx2(block) },
        }
    }
}

#[inline]
fn is_token_end(c: u8) -> bool {
    matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
}

fn classify_scalar(block: &[u8; BLOCK]) -> (u64, u64, u64) {
    let (mut q, mut s, mut e) = (0u64, 0u64, 0u64);
    for (i, &c) in block.iter().enumerate() {
        q |= ((c == b'"') as u64) << i;
        s |= ((c == b'\\') as u64) << i;
        e |= (is_token_end(c) as u64) << i;
    }
    (q, s, e)
}

// Closures do not inherit `target_feature`, so the byte comparisons are spelled out by macro.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_avx2(block: &[u8; BLOCK]) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    macro_rules! eq {
        ($v:expr, $c:expr) => {
            _mm256_cmpeq_epi8($v, _mm256_set1_epi8($c as i8))
        };
    }
    let (mut q, mut s, mut e) = (0u64, 0u64, 0u64);
    for k in 0..2 {
        // SAFETY: 32 bytes at 32 * k lie inside the 64-byte block; loadu has no alignment need.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i) };
        let ends = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_or_si256(eq!(v, b','), eq!(v, b'}')),
                _mm256_or_si256(eq!(v, b']'), eq!(v, b' ')),
            ),
            _mm256_or_si256(_mm256_or_si256(eq!(v, b'\n'), eq!(v, b'\r')), eq!(v, b'\t')),
        );
        q |= ((_mm256_movemask_epi8(eq!(v, b'"')) as u32) as u64) << (32 * k);
        s |= ((_mm256_movemask_epi8(eq!(v, b'\\')) as u32) as u64) << (32 * k);
        e |= ((_mm256_movemask_epi8(ends) as u32) as u64) << (32 * k);
    }
    (q, s, e)
}

/// The bytes escaped by a backslash run ending right before them, for one block, given whether
/// the block's first byte is escaped by the previous block (`carry`, 0 or 1); updates `carry`.
/// simdjson's `escape_scanner::next` (MIT/Apache-2.0), branch-free.
#[inline]
pub fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    let potential = backslash & !*carry;
    let maybe_escaped = potential << 1;
    let codes = ((maybe_escaped | ODD_BITS).wrapping_sub(potential)) ^ ODD_BITS;
    let escaped = codes ^ (backslash | *carry);
    let escape = codes & backslash;
    *carry = escape >> 63;
    escaped
}

/// The masks of a window of blocks just ahead of the lexer's cursor.
pub struct StructuralIndex {
    kernel: Kernel,
    /// First block of the window (its byte offset is `first * 64`).
    first: usize,
    /// Blocks in the window.
    len: usize,
    /// Unescaped quotes, backslashes and token ends, one word per block of the window.
    quotes: Box<[u64]>,
    slashes: Box<[u64]>,
    ends: Box<[u64]>,
    /// Whether the byte after the window is escaped.
    carry: u64,
}

impl StructuralIndex {
    pub fn new(kernel: Kernel) -> StructuralIndex {
        StructuralIndex {
            kernel,
            first: 0,
            len: 0,
            quotes: vec![0; WINDOW_BLOCKS].into_boxed_slice(),
            slashes: vec![0; WINDOW_BLOCKS].into_boxed_slice(),
            ends: vec![0; WINDOW_BLOCKS].into_boxed_slice(),
            carry: 0,
        }
    }

    /// The window slot of block `blk`, filling a new window when `blk` lies outside this one.
    #[inline(always)]
    fn slot(&mut self, b: &[u8], blk: usize) -> usize {
        let k = blk.wrapping_sub(self.first);
        if k < self.len {
            return k;
        }
        self.fill(b, blk);
        0
    }

    #[cold]
    fn fill(&mut self, b: &[u8], blk: usize) {
        if blk != self.first + self.len {
            self.carry = 0;
        }
        self.first = blk;
        self.len = 0;
        let start = blk * BLOCK;
        let stop = (start + WINDOW_BLOCKS * BLOCK).min(b.len());
        let mut at = start;
        while at < stop {
            let raw = match b.get(at..at + BLOCK) {
                Some(full) => self.kernel.classify(full.try_into().expect("64 bytes")),
                None => {
                    // The last, partial block: padded with blanks (no quote, no backslash).
                    let mut pad = [b' '; BLOCK];
                    pad[..b.len() - at].copy_from_slice(&b[at..]);
                    self.kernel.classify(&pad)
                }
            };
            let (q, s, e) = raw;
            let k = self.len;
            self.quotes[k] = q & !escaped(s, &mut self.carry);
            self.slashes[k] = s;
            self.ends[k] = e;
            self.len += 1;
            at += BLOCK;
        }
    }

    /// The closing quote of the string whose opening quote is at `open`, and whether the string
    /// holds a backslash; None when the bytes end first.
    #[inline(always)]
    pub fn string_end(&mut self, b: &[u8], open: usize) -> Option<(usize, bool)> {
        let mut p = open + 1;
        let mut slash = false;
        while p < b.len() {
            let blk = p / BLOCK;
            let k = self.slot(b, blk);
            let from = !0u64 << (p % BLOCK);
            let q = self.quotes[k] & from;
            if q != 0 {
                let end = q.trailing_zeros() as usize;
                let before = from & ((1u64 << end) - 1);
                slash |= self.slashes[k] & before != 0;
                return Some((blk * BLOCK + end, slash));
            }
            slash |= self.slashes[k] & from != 0;
            p = (blk + 1) * BLOCK;
        }
        None
    }

    /// The first byte at or after `from` that ends a number or literal (`,` `}` `]` or a blank),
    /// or `b.len()` when there is none.
    #[inline]
    pub fn token_end(&mut self, b: &[u8], from: usize) -> usize {
        let mut p = from;
        while p < b.len() {
            let blk = p / BLOCK;
            let k = self.slot(b, blk);
            let e = self.ends[k] & (!0u64 << (p % BLOCK));
            if e != 0 {
                return (blk * BLOCK + e.trailing_zeros() as usize).min(b.len());
            }
            p = (blk + 1) * BLOCK;
        }
        b.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift) for byte soups.
    fn soup(seed: u64, n: usize, alphabet: &[u8]) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect()
    }

    /// The escaped bytes by definition: walk the bytes, a backslash escapes the next byte.
    fn escaped_reference(b: &[u8]) -> Vec<bool> {
        let mut out = vec![false; b.len()];
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && i + 1 < b.len() {
                out[i + 1] = true;
                i += 2;
            } else {
                i += 1;
            }
        }
        out
    }

    #[test]
    fn kernels_agree_on_every_byte_value() {
        let mut all: Vec<u8> = (0..=255u8).collect();
        all.extend(soup(7, 4096, b"\"\\,}] \n\r\ta{[:0"));
        for chunk in all.chunks(BLOCK).filter(|c| c.len() == BLOCK) {
            let block: &[u8; BLOCK] = chunk.try_into().unwrap();
            let want = classify_scalar(block);
            for k in Kernel::available() {
                assert_eq!(k.classify(block), want, "{k:?}");
            }
        }
    }

    #[test]
    fn escapes_match_the_byte_walk_across_blocks() {
        for seed in 1..200u64 {
            let b = soup(seed, 64 * 7 + (seed as usize % 64), b"\\\\\\a\"");
            let want = escaped_reference(&b);
            let mut carry = 0;
            let mut got = Vec::new();
            for chunk in b.chunks(BLOCK) {
                let mut pad = [b' '; BLOCK];
                pad[..chunk.len()].copy_from_slice(chunk);
                let (_, s, _) = classify_scalar(&pad);
                let e = escaped(s, &mut carry);
                got.extend((0..chunk.len()).map(|i| e >> i & 1 == 1));
            }
            assert_eq!(got, want, "seed {seed}");
        }
    }

    #[test]
    fn string_and_token_ends_match_the_scalar_lexer() {
        use super::super::lexer::Lexer;
        for seed in 1..60u64 {
            let b = soup(seed, 300_000, b"\\\"aaaaaaaa,}] 0");
            for kernel in Kernel::available() {
                let mut ix = StructuralIndex::new(kernel);
                // Opening quotes in increasing order, as the scanner visits them.
                let mut checked = 0;
                for open in (0..b.len()).filter(|&i| b[i] == b'"').step_by(37) {
                    let mut l = Lexer::new(&b, open);
                    let want = l.string().ok().map(|s| (l.pos - 1, s.escaped()));
                    assert_eq!(ix.string_end(&b, open), want, "seed {seed} open {open}");
                    checked += 1;
                }
                assert!(checked > 100);
                let mut ix = StructuralIndex::new(kernel);
                for from in (0..b.len()).step_by(101) {
                    let want = (from..b.len())
                        .find(|&i| is_token_end(b[i]))
                        .unwrap_or(b.len());
                    assert_eq!(ix.token_end(&b, from), want, "seed {seed} from {from}");
                }
            }
        }
    }
}
