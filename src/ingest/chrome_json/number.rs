//! Exact conversion of Chrome-trace microsecond values (`"1736408883688177.930"` strings,
//! `840.07675` numbers, `1e-05`) to integer nanoseconds, without going through f64, so that 16-
//! digit timestamps keep every nanosecond. Durations round half away from zero.

/// Parses a decimal number of microseconds and returns nanoseconds, or None if malformed.
#[inline]
pub fn us_to_ns(s: &[u8]) -> Option<i64> {
    fast_us_to_ns(s).or_else(|| us_to_ns_general(s))
}

/// An unquoted `digits[.digits]` µs value starting at `b[start]`, converted as [`us_to_ns`] does
/// in the same pass that finds where it ends (where the lexer's scalar token ends): (ns, end).
/// None for any other shape, a value [`us_to_ns`]'s fast path refuses, or bytes ending inside
/// the value; the caller then takes the general path.
#[inline(always)]
pub fn scan_us_to_ns(b: &[u8], start: usize) -> Option<(i64, usize)> {
    let (v, frac, end) = plain_digits::<false>(b, start)?;
    if end == b.len() {
        return None;
    }
    Some((scale_us(v, frac)?, end))
}

/// The body of a quoted `"digits[.digits]"` µs value whose first digit is `b[start]` (just past
/// the opening quote), as [`scan_us_to_ns`] does for an unquoted one: (ns, offset of the closing
/// quote). None for any other body (escapes, signs, exponents, blanks), which the caller reads as
/// a string and converts with [`us_to_ns`].
#[inline(always)]
pub fn scan_quoted_us_to_ns(b: &[u8], start: usize) -> Option<(i64, usize)> {
    let (v, frac, end) = plain_digits::<true>(b, start)?;
    Some((scale_us(v, frac)?, end))
}

/// The shape torch_npu and Kineto write nearly every `ts` and `dur` in: 1 to 16 integer digits, a
/// point and exactly three more (µs to the ns: `1736408904833012.577`, `3.714`), then the closing
/// quote (when `QUOTED`) or a token end, read from the 32 bytes at `start` with no loop and no
/// scaling: (ns, end) as [`scan_us_to_ns`] / [`scan_quoted_us_to_ns`] give them. None for any
/// other shape, which the caller then reads with those (a test compares the two on generated
/// values).
#[inline(always)]
pub fn three_decimals<const QUOTED: bool>(b: &[u8], start: usize) -> Option<(i64, usize)> {
    let w: &[u8; WORDS_AHEAD] = b.get(start..start + WORDS_AHEAD)?.try_into().ok()?;
    let (int, n) = integer_part(w)?;
    // The point and three digits as one 4-byte word (the byte after them checked below).
    let f = u32::from_le_bytes(w[n..n + 4].try_into().expect("4 bytes")) ^ 0x3030_302E;
    if f & 0xFF != 0 || (f | f.wrapping_add(0x7676_7600)) & 0x8080_8000 != 0 {
        return None;
    }
    let closed = if QUOTED {
        w[n + 4] == b'"'
    } else {
        ends_token(w[n + 4])
    };
    if !closed {
        return None;
    }
    let frac = (f >> 8 & 0xFF) * 100 + (f >> 16 & 0xFF) * 10 + (f >> 24);
    let ns = i64::try_from(int * 1000 + u64::from(frac)).ok()?;
    Some((ns, start + n + 4))
}

/// The 1 to 16 digits that begin `w`, from two words: (their value, how many); None when `w`
/// does not begin with a digit (a 17th digit is the caller's to refuse).
#[inline(always)]
fn integer_part(w: &[u8; WORDS_AHEAD]) -> Option<(u64, usize)> {
    let t0 = word_at(w, 0);
    let m0 = non_digits(t0);
    if m0 != 0 {
        let n = (m0.trailing_zeros() / 8) as usize;
        return (n > 0).then(|| (first_digits(t0, n), n));
    }
    let t1 = word_at(w, 8);
    let high = eight_digits(t0);
    Some(match (non_digits(t1).trailing_zeros() / 8) as usize {
        0 => (high, 8),
        8 => (high * 100_000_000 + eight_digits(t1), 16),
        n => (high * POW10[n] + first_digits(t1, n), 8 + n),
    })
}

/// An unquoted integer (`-`? and 1 to 18 digits) starting at `b[start]`, in the pass that finds
/// where its token ends (the first `,` `}` `]` or blank, which must come before the end of `b`):
/// (value, end); the value [`parse_i64`] gives that token. None for any other shape.
#[inline(always)]
pub fn scan_i64(b: &[u8], start: usize) -> Option<(i64, usize)> {
    if start + WORDS_AHEAD > b.len() {
        return scan_i64_bytewise(b, start);
    }
    let neg = b[start] == b'-';
    let first = start + neg as usize;
    let (v, p) = digit_run(b, first, first + 18, 0);
    let digits = p - first;
    if digits == 0 || digits > 18 || !ends_token(b[p]) {
        return None;
    }
    let v = v as i64;
    Some((if neg { -v } else { v }, p))
}

/// [`scan_i64`] a byte at a time, where fewer than [`WORDS_AHEAD`] bytes are left.
fn scan_i64_bytewise(b: &[u8], start: usize) -> Option<(i64, usize)> {
    let neg = b.get(start) == Some(&b'-');
    let first = start + neg as usize;
    let mut v: i64 = 0;
    let mut p = first;
    loop {
        match *b.get(p)? {
            c @ b'0'..=b'9' => v = v * 10 + (c - b'0') as i64,
            c if ends_token(c) => break,
            _ => return None,
        }
        p += 1;
        if p - first > 18 {
            return None;
        }
    }
    if p == first {
        return None;
    }
    Some((if neg { -v } else { v }, p))
}

/// Bytes that must follow a value for the word-at-a-time scans (a number is read 8 bytes at a
/// time and may look 8 bytes past its 20-byte limit).
const WORDS_AHEAD: usize = 32;

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The end of the run of ASCII digits from `b[p]` (the first other byte, or the end of `b`), 8
/// bytes at a time while 8 remain.
#[inline(always)]
pub(super) fn digits_end(b: &[u8], mut p: usize) -> usize {
    while let Some(w) = b.get(p..p + 8) {
        let m = non_digits(u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ ASCII_ZEROS);
        if m != 0 {
            return p + (m.trailing_zeros() / 8) as usize;
        }
        p += 8;
    }
    while p < b.len() && b[p].is_ascii_digit() {
        p += 1;
    }
    p
}

/// Whether `c` ends an unquoted token (the lexer's scalar tokens end there too).
#[inline(always)]
pub(super) fn ends_token(c: u8) -> bool {
    TOKEN_ENDS[c as usize]
}

/// [`ends_token`] by byte: one load instead of a chain of compares.
static TOKEN_ENDS: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let ends = b",}] \n\r\t";
    while k < ends.len() {
        t[ends[k] as usize] = true;
        k += 1;
    }
    t
};

/// The ASCII digits that begin `b[p..p + 8]`: (their value, how many: 0 to 8), from one word.
#[inline(always)]
fn digits8(b: &[u8], p: usize) -> (u64, usize) {
    let t = u64::from_le_bytes(b[p..p + 8].try_into().expect("8 bytes")) ^ ASCII_ZEROS;
    let n = (non_digits(t).trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    (first_digits(t, n), n)
}

/// The run of digits from `b[p]`, a word at a time, read until a non-digit or past `limit` and
/// appended to `v`'s digits: (the value, wrapping, and where the run ends). Bytes to `limit + 8`
/// must exist.
#[inline(always)]
fn digit_run(b: &[u8], mut p: usize, limit: usize, mut v: u64) -> (u64, usize) {
    loop {
        let (d, n) = digits8(b, p);
        v = v.wrapping_mul(POW10[n]).wrapping_add(d);
        p += n;
        if n < 8 || p > limit {
            return (v, p);
        }
    }
}

/// `digits[.digits]` from `b[start]` to the end of `b` or the first `,` `}` `]` or blank (when
/// `QUOTED`: to the first `"`, which must come): (the digits as one integer, how many follow the
/// point, end). None for any other byte, a value longer than 20 bytes, 20 digits without a point
/// (they could overflow) or a trailing point.
#[inline(always)]
fn plain_digits<const QUOTED: bool>(b: &[u8], start: usize) -> Option<(u64, i32, usize)> {
    if let Some(w) = b.get(start..start + WORDS_AHEAD) {
        let w: &[u8; WORDS_AHEAD] = w.try_into().expect("32 bytes");
        if let Some((v, frac, len)) = common_shape::<QUOTED>(w) {
            return Some((v, frac, start + len));
        }
    }
    plain_digits_rare::<QUOTED>(b, start)
}

/// [`plain_digits`] of the shapes [`common_shape`] declines, or near the end of the bytes: out
/// of line, so that the common path stays small.
#[cold]
#[inline(never)]
fn plain_digits_rare<const QUOTED: bool>(b: &[u8], start: usize) -> Option<(u64, i32, usize)> {
    if start + WORDS_AHEAD > b.len() {
        return plain_digits_bytewise::<QUOTED>(b, start);
    }
    plain_digits_words::<QUOTED>(b, start)
}

const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// Bit 7 of each byte of `t` (a word of bytes minus `'0'`, as `w ^ ASCII_ZEROS`) that is not a
/// digit; bits after the first such byte may be wrong (carries), the first one is exact.
#[inline(always)]
fn non_digits(t: u64) -> u64 {
    (t | t.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080
}

/// The value of the eight digits of `t` (bytes minus `'0'`, the first byte most significant;
/// leading zero bytes allowed).
#[inline(always)]
fn eight_digits(t: u64) -> u64 {
    let mut v = (t & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32
}

/// The value of the first `n` (1 to 8) digits of `t`.
#[inline(always)]
fn first_digits(t: u64, n: usize) -> u64 {
    eight_digits(t << (64 - 8 * n as u32))
}

#[inline(always)]
fn word_at(w: &[u8; WORDS_AHEAD], at: usize) -> u64 {
    u64::from_le_bytes(w[at..at + 8].try_into().expect("8 bytes")) ^ ASCII_ZEROS
}

/// [`plain_digits`] on the shapes nearly every trace writes (1 to 16 integer digits, then
/// optionally a point and 1 to 7 digits), from the 32 bytes at the value with no loop: (the
/// digits as one integer, how many follow the point, the value's length). None for anything
/// else, which [`plain_digits_words`] then decides (it gives the same answer on these shapes).
#[inline(always)]
fn common_shape<const QUOTED: bool>(w: &[u8; WORDS_AHEAD]) -> Option<(u64, i32, usize)> {
    let (mut v, mut p) = integer_part(w)?;
    if p == 16 && w[16].is_ascii_digit() {
        return None;
    }
    let mut frac = 0;
    if w[p] == b'.' {
        let t = word_at(w, p + 1);
        let m = non_digits(t);
        let n = (m.trailing_zeros() / 8) as usize;
        if m == 0 || n == 0 || p + 1 + n > 20 {
            return None;
        }
        v = v * POW10[n] + first_digits(t, n);
        frac = n as i32;
        p += 1 + n;
    }
    let closed = if QUOTED {
        w[p] == b'"'
    } else {
        ends_token(w[p])
    };
    closed.then_some((v, frac, p))
}

/// [`plain_digits`] a word at a time, for every shape (32 bytes must follow `start`).
fn plain_digits_words<const QUOTED: bool>(b: &[u8], start: usize) -> Option<(u64, i32, usize)> {
    let (mut v, mut p) = digit_run(b, start, start + 20, 0);
    let mut frac = -1;
    if b[p] == b'.' && p - start < 20 {
        let from = p + 1;
        (v, p) = digit_run(b, from, start + 20, v);
        frac = (p - from) as i32;
    }
    let len = p - start;
    let closed = if QUOTED {
        b[p] == b'"'
    } else {
        ends_token(b[p])
    };
    if !closed || len == 0 || len > 20 || (len == 20 && frac < 0) || frac == 0 {
        return None;
    }
    Some((v, frac.max(0), p))
}

/// [`plain_digits`] a byte at a time, where fewer than [`WORDS_AHEAD`] bytes are left.
fn plain_digits_bytewise<const QUOTED: bool>(b: &[u8], start: usize) -> Option<(u64, i32, usize)> {
    let mut v: u64 = 0;
    let mut frac: i32 = -1;
    let mut p = start;
    while let Some(&c) = b.get(p) {
        match c {
            b'0'..=b'9' => {
                v = v.wrapping_mul(10).wrapping_add((c - b'0') as u64);
                frac += (frac >= 0) as i32;
            }
            b'.' if frac < 0 => frac = 0,
            b'"' if QUOTED => break,
            c if !QUOTED && ends_token(c) => break,
            _ => return None,
        }
        p += 1;
        if p - start > 20 {
            return None;
        }
    }
    if QUOTED && p == b.len() {
        return None;
    }
    let len = p - start;
    if len == 0 || (len == 20 && frac < 0) || frac == 0 {
        return None;
    }
    Some((v, frac.max(0), p))
}

/// `v` µs with `frac` of its digits after the point, as ns (rounded half up past three).
#[inline(always)]
fn scale_us(v: u64, frac: i32) -> Option<i64> {
    let ns = match frac {
        0 => v.checked_mul(1000)?,
        1 => v.checked_mul(100)?,
        2 => v.checked_mul(10)?,
        3 => v,
        f => {
            let d = 10u64.pow((f - 3) as u32);
            let (q, r) = (v / d, v % d);
            if r * 2 >= d { q + 1 } else { q }
        }
    };
    i64::try_from(ns).ok()
}

/// The shape of nearly every real value: `digits[.digits]`, at most 18 digits, no sign or exponent.
#[inline(always)]
fn fast_us_to_ns(s: &[u8]) -> Option<i64> {
    let (v, frac, end) = plain_digits::<false>(s, 0)?;
    if end != s.len() {
        return None;
    }
    scale_us(v, frac)
}

fn us_to_ns_general(s: &[u8]) -> Option<i64> {
    let mut i = 0;
    let neg = match s.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mant: u128 = 0;
    let mut digits = 0u32;
    let mut frac_digits: i32 = 0;
    let mut dropped = false;
    let mut seen_digit = false;
    while i < s.len() && s[i].is_ascii_digit() {
        push_digit(
            &mut mant,
            &mut digits,
            s[i],
            &mut frac_digits,
            false,
            &mut dropped,
        );
        seen_digit = true;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            push_digit(
                &mut mant,
                &mut digits,
                s[i],
                &mut frac_digits,
                true,
                &mut dropped,
            );
            seen_digit = true;
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    let mut exp: i32 = 0;
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let eneg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() {
            exp = exp.saturating_mul(10).saturating_add((s[i] - b'0') as i32);
            i += 1;
        }
        if i == start {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    if i != s.len() {
        return None;
    }
    // In i64: an exponent of 1e2147483647 saturates `exp` at i32::MAX, and 3 + that overflows i32.
    let scale = 3 + exp as i64 - frac_digits as i64;
    let v: u128 = if scale >= 0 {
        if scale > 30 {
            return None;
        }
        mant.checked_mul(10u128.pow(scale as u32))?
    } else {
        let sc = u32::try_from(-scale).unwrap_or(u32::MAX);
        if sc > 38 {
            0
        } else {
            let d = 10u128.pow(sc);
            let (q, r) = (mant / d, mant % d);
            if r * 2 >= d { q + 1 } else { q }
        }
    };
    let _ = dropped;
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

#[inline]
fn push_digit(
    mant: &mut u128,
    digits: &mut u32,
    d: u8,
    frac: &mut i32,
    is_frac: bool,
    dropped: &mut bool,
) {
    if *digits < 36 {
        *mant = *mant * 10 + (d - b'0') as u128;
        if *mant > 0 {
            *digits += 1;
        }
        if is_frac {
            *frac += 1;
        }
    } else if !is_frac {
        // Too many integer digits to keep: scale instead (value is out of range anyway).
        *frac -= 1;
    } else {
        *dropped = true;
    }
}

/// Parses an integer token (`12`, `-1`, `"12"` contents, `3.0`); None if not an integer.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    // Nearly every real value: an optional minus and up to 18 digits (no overflow possible).
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let v = digits.iter().fold(0i64, |v, &c| v * 10 + (c - b'0') as i64);
        return Some(if neg { -v } else { v });
    }
    parse_i64_general(s)
}

/// Any other integer or integral float token, through the standard parsers.
fn parse_i64_general(s: &[u8]) -> Option<i64> {
    if let Some(v) = std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
    {
        return Some(v);
    }
    let f: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    if f.fract() == 0.0 && f.abs() < 9.0e18 {
        Some(f as i64)
    } else {
        None
    }
}

/// Parses a float token.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table ends a token at exactly the seven bytes JSON allows after a number.
    #[test]
    fn token_ends_are_the_seven_bytes() {
        let ends: Vec<u8> = (0..=255u8).filter(|&c| ends_token(c)).collect();
        assert_eq!(ends, b"\t\n\r ,]}".to_vec());
    }

    /// 50,000 generated digit strings (xorshift from `seed`) of 1 to `max_len` digits, each then
    /// given its shape (a point, a sign, another byte) by `shape` from the generator's state and
    /// the length.
    fn generated_digits(
        seed: u64,
        max_len: u64,
        shape: impl Fn(&mut String, u64, usize),
    ) -> Vec<String> {
        let mut x = seed;
        (0..50_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let len = 1 + (x % max_len) as usize;
                let mut s: String = (0..len)
                    .map(|k| (b'0' + ((x >> (k % 61)) % 10) as u8) as char)
                    .collect();
                shape(&mut s, x, len);
                s
            })
            .collect()
    }

    /// The general reading of a value at `start` (what `three_decimals` must agree with).
    fn general<const QUOTED: bool>(b: &[u8], start: usize) -> Option<(i64, usize)> {
        let (v, frac, end) = plain_digits::<QUOTED>(b, start)?;
        if !QUOTED && end == b.len() {
            return None;
        }
        Some((scale_us(v, frac)?, end))
    }

    /// `three_decimals` reads a value exactly as the general path does whenever it reads one, on
    /// 400,000 generated values around its shape (0 to 20 integer digits, 0 to 5 decimals, a
    /// sign, a stray byte, each quote and token end), and reads the common shapes itself.
    #[test]
    fn three_decimals_equal_the_general_path() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut read, mut agreed) = (0, 0);
        for _ in 0..400_000 {
            let r = next();
            let int_len = (r % 21) as usize;
            let dec_len = (r >> 8 & 7) as usize % 6;
            let mut v: Vec<u8> = Vec::new();
            if r >> 12 & 15 == 0 {
                v.push(b'-');
            }
            for k in 0..int_len {
                v.push(b'0' + (next() % 10) as u8);
                if r >> 20 & 63 == k as u64 {
                    v.push(b'x');
                }
            }
            if r >> 16 & 7 != 0 {
                v.push(b'.');
                for _ in 0..dec_len {
                    v.push(b'0' + (next() % 10) as u8);
                }
            }
            let end = [b'"', b',', b'}', b']', b' ', b'\n', b'e', b'5'][(r >> 28 & 7) as usize];
            v.push(end);
            v.extend_from_slice(&[b' '; 40]);
            let quoted = three_decimals::<true>(&v, 0);
            let plain = three_decimals::<false>(&v, 0);
            for (fast, slow) in [
                (quoted, general::<true>(&v, 0)),
                (plain, general::<false>(&v, 0)),
            ] {
                if let Some(f) = fast {
                    read += 1;
                    assert_eq!(Some(f), slow, "{}", String::from_utf8_lossy(&v));
                } else if slow.is_some() {
                    agreed += 1;
                }
            }
        }
        // Both kinds of answer were exercised: values the fast path read, and values only the
        // general path read (other decimals, 17+ digits).
        assert!(read > 10_000 && agreed > 10_000, "{read} {agreed}");
        assert_eq!(
            three_decimals::<true>(b"1736408904833012.577\", \"dur\": 3.714, \"args\"", 0),
            Some((1_736_408_904_833_012_577, 20))
        );
        assert_eq!(
            three_decimals::<false>(b"3.714, \"args\": {\"Model Id\": 4294967295", 0),
            Some((3714, 5))
        );
    }

    /// `digits_end` stops at the first byte that is not an ASCII digit, at every offset of
    /// generated digit runs followed by each byte value, and at the end of the bytes.
    #[test]
    fn digits_end_stops_at_the_first_other_byte() {
        for len in 0..20 {
            for stop in 0..=255u8 {
                let mut v: Vec<u8> = (0..len).map(|k| b'0' + (k * 7 % 10) as u8).collect();
                v.push(stop);
                v.extend_from_slice(b"123");
                let want = if stop.is_ascii_digit() { len + 4 } else { len };
                assert_eq!(digits_end(&v, 0), want, "{len} {stop}");
                assert_eq!(digits_end(&v[..len], 0), len);
            }
        }
    }

    #[test]
    fn integer_fast_path_equals_the_standard_parsers() {
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "007",
            "+5",
            "-",
            "",
            "1.0",
            "3.5",
            "1e3",
            "12a",
            " 1",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "4294967295",
            "--1",
            "-+1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 21) as usize;
            let digits: String = (0..len)
                .map(|k| (b'0' + ((x >> (k % 60)) % 10) as u8) as char)
                .collect();
            cases.push(if x & 1 == 1 {
                format!("-{digits}")
            } else {
                digits
            });
        }
        for c in &cases {
            assert_eq!(
                parse_i64(c.as_bytes()),
                parse_i64_general(c.as_bytes()),
                "{c:?}"
            );
        }
    }

    #[test]
    fn exact_timestamps_and_rounded_durations() {
        assert_eq!(
            us_to_ns(b"1736408883688177.930"),
            Some(1_736_408_883_688_177_930)
        );
        assert_eq!(
            us_to_ns(b"1736408883973810"),
            Some(1_736_408_883_973_810_000)
        );
        assert_eq!(us_to_ns(b"840.07675"), Some(840_077));
        assert_eq!(us_to_ns(b"0.60003125"), Some(600));
        assert_eq!(us_to_ns(b"0.0005"), Some(1));
        assert_eq!(us_to_ns(b"1e-05"), Some(0));
        assert_eq!(us_to_ns(b"2.5E+2"), Some(250_000));
        assert_eq!(us_to_ns(b"-1.5"), Some(-1_500));
        assert_eq!(us_to_ns(b"5112030925310.620"), Some(5_112_030_925_310_620));
        assert_eq!(
            us_to_ns(b"12.3456789012345678901234567890123456789"),
            Some(12_346)
        );
        for bad in [&b""[..], b".", b"1.2.3", b"abc", b"1e", b"-"] {
            assert_eq!(us_to_ns(bad), None, "{:?}", std::str::from_utf8(bad));
        }
    }

    /// The one-pass scan gives what the lexer's token plus [`us_to_ns`] give, and ends where the
    /// token ends, on every shape it takes; on others it declines (the caller takes that path).
    #[test]
    fn scanned_timestamps_equal_token_then_convert() {
        let mut cases: Vec<String> = [
            "1736408883688177.930",
            "1736408883973810",
            "0",
            "0.5",
            "7.",
            ".5",
            "1.2.3",
            "12a",
            "99999999999999999999",
            "9999999999999999.999",
            "18446744073709551615",
            "9223372036854775.808",
            "9223372036854775.807",
            "-1",
            "1e3",
            "",
            "12345678901234567890.",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cases.extend(generated_digits(0x2545_F491_4F6C_DD1D, 22, |s, x, len| {
            if x & 3 != 0 {
                s.insert(((x >> 8) as usize) % (len + 1), '.');
            }
        }));
        for c in &cases {
            for end in [",", "}", "]", " ", "\n", "x", ""] {
                let text = format!("{c}{end}");
                let b = text.as_bytes();
                let token_end = b.iter().position(|&c| ends_token(c)).unwrap_or(b.len());
                match scan_us_to_ns(b, 0) {
                    Some((ns, e)) => {
                        assert_eq!(e, token_end, "{text:?}");
                        assert_eq!(Some(ns), us_to_ns(&b[..e]), "{text:?}");
                    }
                    // Declined: not the fast shape, or no delimiter before the end of the bytes.
                    None => assert!(
                        fast_us_to_ns(&b[..token_end]).is_none() || token_end == b.len(),
                        "{text:?}"
                    ),
                }
            }
        }
    }

    /// The quoted and integer one-pass scans give what the lexer's string or token plus
    /// [`us_to_ns`] / [`parse_i64`] give, and end where those end, on every shape they take;
    /// on others they decline. 50,000 generated values plus edge cases.
    #[test]
    fn quoted_timestamps_and_integers_equal_the_two_pass_reads() {
        let mut cases: Vec<String> = [
            "1736408883688177.930",
            "0",
            "-0",
            "-",
            "--1",
            "1-",
            "3.0",
            "1e3",
            "",
            " 1",
            "123456789012345678",
            "1234567890123456789",
            "-123456789012345678",
            "9223372036854775807",
            "1.",
            ".5",
            "7\\\"",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cases.extend(generated_digits(
            0x9E37_79B9_7F4A_7C15,
            22,
            |s, x, len| match x & 7 {
                0 => s.insert(0, '-'),
                1 | 2 => s.insert(((x >> 8) as usize) % (len + 1), '.'),
                _ => {}
            },
        ));
        for c in &cases {
            // Quoted: the lexer's string body is everything up to the first quote or backslash.
            let text = format!("{c}\",");
            let b = text.as_bytes();
            let body_end = b.iter().position(|&c| c == b'"' || c == b'\\').unwrap();
            match scan_quoted_us_to_ns(b, 0) {
                Some((ns, e)) => {
                    assert_eq!((e, b[e]), (body_end, b'"'), "{text:?}");
                    assert_eq!(Some(ns), us_to_ns(&b[..e]), "{text:?}");
                }
                None => assert!(
                    fast_us_to_ns(&b[..body_end]).is_none() || b[body_end] != b'"',
                    "{text:?}"
                ),
            }
            assert_eq!(
                scan_quoted_us_to_ns(c.as_bytes(), 0),
                None,
                "no closing quote"
            );
            for end in [",", "}", "]", " ", "\t", "x", ""] {
                let text = format!("{c}{end}");
                let b = text.as_bytes();
                let token_end = b.iter().position(|&c| ends_token(c)).unwrap_or(b.len());
                match scan_i64(b, 0) {
                    Some((v, e)) => {
                        assert_eq!(e, token_end, "{text:?}");
                        assert_eq!(Some(v), parse_i64(&b[..e]), "{text:?}");
                    }
                    None => {
                        let t = &b[..token_end];
                        let simple = t.strip_prefix(b"-").unwrap_or(t);
                        assert!(
                            token_end == b.len()
                                || simple.is_empty()
                                || simple.len() > 18
                                || !simple.iter().all(u8::is_ascii_digit),
                            "{text:?}"
                        );
                    }
                }
            }
        }
    }

    /// The word-at-a-time digit read equals a byte loop: every count of leading digits (0 to 8)
    /// followed by every byte value, the digits themselves varied.
    #[test]
    fn eight_digit_words_equal_a_byte_loop() {
        let mut x: u64 = 0xD1B5_4A32_D192_ED03;
        for n in 0..=8 {
            for stop in 0..=255u8 {
                for _ in 0..20 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let mut w = [0u8; 8];
                    for (k, c) in w.iter_mut().enumerate() {
                        *c = if k < n {
                            b'0' + ((x >> (3 * k)) % 10) as u8
                        } else if k == n {
                            stop
                        } else {
                            (x >> (5 * k)) as u8
                        };
                    }
                    let run = w.iter().take_while(|c| c.is_ascii_digit()).count();
                    let value = w[..run]
                        .iter()
                        .fold(0u64, |v, &c| v * 10 + (c - b'0') as u64);
                    assert_eq!(digits8(&w, 0), (value, run), "{w:?}");
                }
            }
        }
    }

    /// The word-at-a-time scans (taken when 32 bytes follow) give what the byte loops give, on
    /// the edge cases and 50,000 generated values of the two tests above, each followed by every
    /// delimiter and by bytes that look like more digits.
    #[test]
    fn word_scans_equal_the_byte_scans() {
        let mut cases: Vec<String> = [
            "1736408883688177.930",
            "17364088836881779301",
            "1736408883688177.9301",
            "173640888368817.79301",
            "12345678.12345678901",
            "12345678.123456789012",
            "99999999999999999999",
            "9999999999999999999",
            "0",
            "7.",
            ".5",
            ".",
            "1.2.3",
            "-1",
            "-",
            "--1",
            "123456789012345678",
            "1234567890123456789",
            "-123456789012345678",
            "12345678",
            "1234567812345678",
            "123456781234567812345678",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cases.extend(generated_digits(
            0x2545_F491_4F6C_DD1D,
            24,
            |s, x, len| match x >> 60 {
                0..=5 => s.insert(((x >> 8) as usize) % (len + 1), '.'),
                6 => s.insert(0, '-'),
                7 => s.insert(((x >> 8) as usize) % (len + 1), 'e'),
                _ => {}
            },
        ));
        let tail = "0123456789.0123456789012345678901234567890";
        for c in &cases {
            for end in ["\"", ",", "}", "]", " ", "\n", "\r", "\t", "x", "."] {
                let text = format!("{c}{end}{tail}");
                let b = text.as_bytes();
                assert!(b.len() >= WORDS_AHEAD);
                assert_eq!(
                    plain_digits::<true>(b, 0),
                    plain_digits_bytewise::<true>(b, 0),
                    "quoted {text:?}"
                );
                assert_eq!(
                    plain_digits::<false>(b, 0),
                    plain_digits_bytewise::<false>(b, 0),
                    "unquoted {text:?}"
                );
                assert_eq!(scan_i64(b, 0), scan_i64_bytewise(b, 0), "integer {text:?}");
            }
        }
    }

    /// The loop-free read of the common shapes answers, where it answers, what the word loop
    /// answers; it does answer on the shapes real traces write (Ascend's quoted 16.3-digit
    /// timestamps, Kineto's 13.3, durations, integers), so the test fails if it stops firing.
    #[test]
    fn common_shapes_equal_the_word_loop() {
        let tail = "0123456789.0123456789012345678901234567890";
        let pad = |c: &str, end: &str| {
            let text = format!("{c}{end}{tail}");
            let mut w = [0u8; WORDS_AHEAD];
            w.copy_from_slice(&text.as_bytes()[..WORDS_AHEAD]);
            (text, w)
        };
        for (c, end, quoted) in [
            ("1736408883000052.406", "\"", true),
            ("3605065558143.941", ",", false),
            ("19.788", ",", false),
            ("120.000", "}", false),
            ("7", " ", false),
            ("12345678", "\n", false),
            ("1234567890123456", ",", false),
            ("1.2345678", ",", false),
        ] {
            let (text, w) = pad(c, end);
            let got = if quoted {
                common_shape::<true>(&w)
            } else {
                common_shape::<false>(&w)
            };
            assert!(got.is_some(), "declined {text:?}");
        }
        let mut cases = generated_digits(0x5DEE_CE66_D1CE_4E5B, 21, |s, x, len| {
            if x >> 62 != 0 {
                s.insert(((x >> 8) as usize) % (len + 1), '.');
            }
        });
        cases.extend(
            [
                ".5",
                "7.",
                ".",
                "",
                "1..2",
                "12345678.",
                "1234567812345678.",
            ]
            .map(String::from),
        );
        let mut answered = 0;
        for c in &cases {
            for end in ["\"", ",", "}", " ", "x", "."] {
                let (text, w) = pad(c, end);
                let b = text.as_bytes();
                let pairs = [
                    (common_shape::<true>(&w), plain_digits_words::<true>(b, 0)),
                    (common_shape::<false>(&w), plain_digits_words::<false>(b, 0)),
                ];
                for (fast, words) in pairs {
                    if fast.is_some() {
                        assert_eq!(fast, words, "{text:?}");
                        answered += 1;
                    }
                }
            }
        }
        assert!(answered > 50_000, "{answered}");
    }

    /// Fuzz regression (kernel_csv): an exponent that saturates i32 overflowed the scale sum.
    #[test]
    fn extreme_exponents_are_refused_or_zero() {
        assert_eq!(us_to_ns(b"1e2147483647"), None);
        assert_eq!(us_to_ns(b"7.5e99999999999999"), None);
        assert_eq!(us_to_ns(b"1e-2147483647"), Some(0));
        assert_eq!(us_to_ns(b"1.5e-99999999999999"), Some(0));
    }

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"4294967295"), Some(4_294_967_295));
        assert_eq!(parse_i64(b"3.0"), Some(3));
        assert_eq!(parse_i64(b"3.5"), None);
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
    }
}
