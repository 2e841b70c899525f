//! Byte-level JSON lexing primitives for the event scanner: whitespace, strings (located, not
//! copied), numbers (located), and skipping any value. No allocation; strings with escapes are
//! flagged so the caller can decode the rare ones.

use super::structural::{Kernel, ScanMode, StructuralIndex};
use memchr::memchr2;

/// Why lexing stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexError {
    /// Ran out of bytes (a truncated file when it happens in the last chunk).
    Eof,
    /// A byte that JSON does not allow here.
    Unexpected { pos: usize, what: &'static str },
}

pub type LexResult<T> = Result<T, LexError>;

/// A string value located in the input: `b[start..end]` between the quotes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawStr {
    /// Byte offset in the input (usize: traces exceed 4 GiB).
    pub start: usize,
    /// The length in bytes (bits 0-31) and whether the string holds escapes (bit 32), in one
    /// word: a `RawStr` returned through memory is then stored and reloaded as two whole words.
    /// As a `u32` and a `bool` it was stored in pieces and reloaded as one word, which x86 cores
    /// cannot forward from the store buffer (a stall of about a dozen cycles per value: the
    /// reload of an event's name was 6 % of the scanner's samples on json1g).
    bits: u64,
}

impl RawStr {
    #[inline(always)]
    pub const fn new(start: usize, len: u32, escaped: bool) -> RawStr {
        RawStr {
            start,
            bits: len as u64 | (escaped as u64) << 32,
        }
    }

    /// Length in bytes.
    #[inline(always)]
    pub const fn len(self) -> u32 {
        self.bits as u32
    }

    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.bits as u32 == 0
    }

    /// Whether the string holds a backslash escape.
    #[inline(always)]
    pub const fn escaped(self) -> bool {
        self.bits >> 32 != 0
    }
}

/// A cursor over the input bytes, with the structural index ahead of it in the indexed mode.
pub struct Lexer<'a> {
    pub b: &'a [u8],
    pub pos: usize,
    index: Option<StructuralIndex>,
}

impl<'a> Lexer<'a> {
    /// A scalar lexer (no index).
    pub fn new(b: &'a [u8], pos: usize) -> Self {
        Lexer {
            b,
            pos,
            index: None,
        }
    }

    /// A lexer in `mode`; the indexed mode uses the fastest kernel of this CPU.
    pub fn with_mode(b: &'a [u8], pos: usize, mode: ScanMode) -> Self {
        let index = match mode {
            ScanMode::Indexed => Some(StructuralIndex::new(Kernel::best())),
            ScanMode::Scalar | ScanMode::ScalarBaseline => None,
        };
        Lexer { b, pos, index }
    }

    /// True in the indexed mode (the structural index must see every token the lexer reads).
    #[inline(always)]
    pub fn indexed(&self) -> bool {
        self.index.is_some()
    }

    #[inline]
    pub fn ws(&mut self) {
        let (b, p) = (self.b, self.pos);
        // Most tokens follow another with no blank, or with one space: a compare or two.
        match b.get(p) {
            Some(&c) if c > b' ' => return,
            Some(b' ') if b.get(p + 1).is_some_and(|&c| c > b' ') => {
                self.pos = p + 1;
                return;
            }
            _ => {}
        }
        self.pos = super::byte_match::blanks_end(b, p);
    }

    /// The next non-whitespace byte, not consumed.
    #[inline]
    pub fn peek(&mut self) -> LexResult<u8> {
        self.ws();
        self.b.get(self.pos).copied().ok_or(LexError::Eof)
    }

    #[inline]
    pub fn expect(&mut self, c: u8, what: &'static str) -> LexResult<()> {
        if self.peek()? == c {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    pub fn unexpected(&self, what: &'static str) -> LexError {
        if self.pos >= self.b.len() {
            LexError::Eof
        } else {
            LexError::Unexpected {
                pos: self.pos,
                what,
            }
        }
    }

    /// A string at the cursor (after whitespace); returns its location.
    #[inline(always)]
    pub fn string(&mut self) -> LexResult<RawStr> {
        if self.peek()? != b'"' {
            return Err(self.unexpected("expected a string"));
        }
        let start = self.pos + 1;
        if let Some(ix) = self.index.as_mut() {
            let (end, escaped) = ix.string_end(self.b, self.pos).ok_or(LexError::Eof)?;
            self.pos = end + 1;
            return Ok(RawStr::new(start, (end - start) as u32, escaped));
        }
        // Most strings are short: test 16 bytes at a time for `"` or `\` (SSE2 byte compares)
        // before paying memchr's set-up; long strings (call stacks) fall through to memchr2.
        let b = self.b;
        let mut q = start;
        let fast_end = (start + 48).min(b.len().saturating_sub(16));
        while q < fast_end {
            let m =
                super::byte_match::quotes_or_escapes16(b[q..q + 16].try_into().expect("16 bytes"));
            if m != 0 {
                let k = q + m.trailing_zeros() as usize;
                if b[k] == b'"' {
                    self.pos = k + 1;
                    return Ok(RawStr::new(start, (k - start) as u32, false));
                }
                q = k;
                break;
            }
            q += 8;
        }
        let mut p = q;
        let mut escaped = false;
        loop {
            match memchr2(b'"', b'\\', &self.b[p..]) {
                None => return Err(LexError::Eof),
                Some(k) => {
                    let at = p + k;
                    if self.b[at] == b'"' {
                        self.pos = at + 1;
                        return Ok(RawStr::new(start, (at - start) as u32, escaped));
                    }
                    escaped = true;
                    p = at + 2;
                    if p > self.b.len() {
                        return Err(LexError::Eof);
                    }
                }
            }
        }
    }

    /// The bytes of a number or literal token at the cursor.
    #[inline]
    pub fn scalar_token(&mut self) -> LexResult<&'a [u8]> {
        self.ws();
        let start = self.pos;
        let b = self.b;
        let p = match self.index.as_mut() {
            Some(ix) => ix.token_end(b, start),
            None => {
                // Digits never end a token: a number's digits are passed over a word at a time.
                let mut p = super::number::digits_end(b, start);
                while p < b.len() && !super::number::ends_token(b[p]) {
                    p += 1;
                }
                p
            }
        };
        if p == b.len() {
            return Err(LexError::Eof);
        }
        if p == start {
            return Err(self.unexpected("expected a value"));
        }
        self.pos = p;
        Ok(&b[start..p])
    }

    /// An unquoted `digits[.digits]` µs value at the cursor as exact ns, read in the pass that
    /// finds its end ([`super::number::scan_us_to_ns`]); None, nothing consumed, for any other
    /// shape, and always in the indexed mode (its index walks tokens itself).
    #[inline]
    pub fn plain_us_to_ns(&mut self) -> Option<i64> {
        if self.index.is_some() {
            return None;
        }
        let (ns, end) = super::number::scan_us_to_ns(self.b, self.pos)?;
        self.pos = end;
        Some(ns)
    }

    /// A quoted `"digits[.digits]"` µs value at the cursor (the cursor on its opening quote) as
    /// exact ns, read in one pass ([`super::number::scan_quoted_us_to_ns`]); None, nothing
    /// consumed, for any other string, and always in the indexed mode.
    #[inline]
    pub fn quoted_us_to_ns(&mut self) -> Option<i64> {
        if self.index.is_some() {
            return None;
        }
        let (ns, end) = super::number::scan_quoted_us_to_ns(self.b, self.pos + 1)?;
        self.pos = end + 1;
        Some(ns)
    }

    /// An unquoted integer token at the cursor, converted in the pass that finds its end
    /// ([`super::number::scan_i64`]); None, nothing consumed, for any other shape, and always in
    /// the indexed mode.
    #[inline]
    pub fn plain_i64(&mut self) -> Option<i64> {
        if self.index.is_some() {
            return None;
        }
        let (v, end) = super::number::scan_i64(self.b, self.pos)?;
        self.pos = end;
        Some(v)
    }

    /// Skips one value of any type.
    pub fn skip_value(&mut self) -> LexResult<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => self.skip_container(),
            _ => self.scalar_token().map(|_| ()),
        }
    }

    fn skip_container(&mut self) -> LexResult<()> {
        if self.index.is_none() {
            return self.skip_container_scalar();
        }
        let b = self.b;
        let mut depth = 0usize;
        let mut p = self.pos;
        while p < b.len() {
            match b[p] {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = p + 1;
                        return Ok(());
                    }
                }
                b'"' => {
                    self.pos = p;
                    self.string()?;
                    p = self.pos;
                    continue;
                }
                _ => {}
            }
            p += 1;
        }
        Err(LexError::Eof)
    }

    /// [`Self::skip_container`] in the scalar mode: one table load per byte, strings passed
    /// over in the same loop (Kineto's input lists are short and dense with short strings, where
    /// a call per string cost more than the bytes).
    fn skip_container_scalar(&mut self) -> LexResult<()> {
        let b = self.b;
        let mut depth = 0usize;
        let mut p = self.pos;
        while let Some(&c) = b.get(p) {
            p += 1;
            match SKIP_CLASS[c as usize] {
                PLAIN => {}
                OPEN => depth += 1,
                CLOSE => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = p;
                        return Ok(());
                    }
                }
                _ => loop {
                    // A string's body: to the quote no backslash escapes.
                    let Some(&c) = b.get(p) else {
                        return Err(LexError::Eof);
                    };
                    p += 1;
                    if c == b'"' {
                        break;
                    }
                    if c == b'\\' {
                        p += 1;
                    }
                },
            }
        }
        Err(LexError::Eof)
    }

    /// After a member: consumes `,` (returns true) or the closing `close` (returns false).
    #[inline]
    pub fn comma_or_close(&mut self, close: u8) -> LexResult<bool> {
        match self.peek()? {
            b',' => {
                self.pos += 1;
                Ok(true)
            }
            c if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.unexpected("expected ',' or a closing bracket")),
        }
    }

    /// The raw bytes of a located string.
    #[inline]
    pub fn bytes(&self, s: RawStr) -> &'a [u8] {
        &self.b[s.start..s.start + s.len() as usize]
    }
}

/// Classes of a byte inside a container being skipped.
const PLAIN: u8 = 0;
const OPEN: u8 = 1;
const CLOSE: u8 = 2;
const QUOTE: u8 = 3;

static SKIP_CLASS: [u8; 256] = {
    let mut t = [PLAIN; 256];
    t[b'{' as usize] = OPEN;
    t[b'[' as usize] = OPEN;
    t[b'}' as usize] = CLOSE;
    t[b']' as usize] = CLOSE;
    t[b'"' as usize] = QUOTE;
    t
};

/// Decodes a JSON string body with escapes into UTF-8 bytes (lossless for valid input; invalid
/// escapes are kept literally).
pub fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' || i + 1 >= raw.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = raw[i + 1];
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'u' => {
                let hex = |s: &[u8]| {
                    std::str::from_utf8(s)
                        .ok()
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                };
                let Some(mut cp) = raw.get(i..i + 4).and_then(hex) else {
                    out.extend_from_slice(b"\\u");
                    continue;
                };
                i += 4;
                if (0xD800..0xDC00).contains(&cp)
                    && raw.get(i) == Some(&b'\\')
                    && raw.get(i + 1) == Some(&b'u')
                    && let Some(lo) = raw.get(i + 2..i + 6).and_then(hex)
                    && (0xDC00..0xE000).contains(&lo)
                {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
                let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The length and the escape flag share one word: each reads back as written at the
    /// extremes, and neither leaks into the other.
    #[test]
    fn a_string_location_keeps_its_length_and_flag_apart() {
        for (start, len, escaped) in [
            (0, 0, false),
            (0, 0, true),
            (7, 1, false),
            (usize::MAX, u32::MAX, false),
            (usize::MAX, u32::MAX, true),
            (1 << 40, 1 << 31, true),
        ] {
            let s = RawStr::new(start, len, escaped);
            assert_eq!((s.start, s.len(), s.escaped()), (start, len, escaped));
            assert_eq!(s.is_empty(), len == 0);
        }
        assert_eq!(RawStr::default(), RawStr::new(0, 0, false));
        assert_ne!(RawStr::new(3, 5, false), RawStr::new(3, 5, true));
    }

    #[test]
    fn strings_skip_and_unescape() {
        let src = br#" "a\"b" , {"x": [1, "}", {"y": null}]} ]"#;
        let mut l = Lexer::new(src, 0);
        let s = l.string().unwrap();
        assert!(s.escaped());
        assert_eq!(unescape(l.bytes(s)), b"a\"b");
        assert!(l.comma_or_close(b']').unwrap());
        l.skip_value().unwrap();
        assert!(!l.comma_or_close(b']').unwrap());
        assert_eq!(unescape(br"\u00e9\ud83d\ude00\n"), "é😀\n".as_bytes());
    }

    #[test]
    fn strings_of_every_length_and_escape_position() {
        for n in 0..80 {
            let body: String = (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let src = format!("\"{body}\" ,");
            let mut l = Lexer::new(src.as_bytes(), 0);
            let s = l.string().unwrap();
            assert_eq!((s.len() as usize, s.escaped(), l.pos), (n, false, n + 2));
            for e in 0..n {
                let esc = format!("\"{}\\\"{}\" ,", &body[..e], &body[e..]);
                let mut l = Lexer::new(esc.as_bytes(), 0);
                let s = l.string().unwrap();
                assert!(s.escaped());
                assert_eq!(
                    unescape(l.bytes(s)),
                    format!("{}\"{}", &body[..e], &body[e..]).as_bytes()
                );
            }
        }
    }

    /// The scalar loop ends every container where the indexed mode's walk (brackets counted,
    /// each string read through the structural index) does, and fails where it fails: 3,000
    /// generated containers (nesting, strings holding brackets, quotes and backslashes, escapes
    /// at the end) and every prefix of each.
    #[test]
    fn scalar_container_skip_equals_the_indexed_walk() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let pieces: [&[u8]; 12] = [
            b"[",
            b"]",
            b"{",
            b"}",
            b"\"\"",
            b"\"a]\"",
            b"\"\\\"\"",
            b"\"\\\\\"",
            b"1024",
            b", ",
            b"\"x\\",
            b"\"{[\"",
        ];
        for _ in 0..3000 {
            let mut v: Vec<u8> = if next(2) == 0 {
                b"[".to_vec()
            } else {
                b"{".to_vec()
            };
            for _ in 0..next(12) {
                v.extend_from_slice(pieces[next(12) as usize]);
            }
            for close in [b"]]]" as &[u8], b"}", b"]", b"\"]"] {
                let mut w = v.clone();
                w.extend_from_slice(close);
                w.extend_from_slice(b", 7");
                for end in 1..=w.len() {
                    let cut = &w[..end];
                    let mut l = Lexer::new(cut, 0);
                    let got = l.skip_value().map(|_| l.pos);
                    let mut ix = Lexer::with_mode(cut, 0, ScanMode::Indexed);
                    let want = ix.skip_value().map(|_| ix.pos);
                    assert_eq!(got, want, "{:?}", String::from_utf8_lossy(cut));
                }
            }
        }
    }

    #[test]
    fn eof_is_reported_as_eof() {
        assert_eq!(Lexer::new(br#""abc"#, 0).string(), Err(LexError::Eof));
        assert_eq!(
            Lexer::new(br#"{"a": [1, 2"#, 0).skip_value(),
            Err(LexError::Eof)
        );
        assert_eq!(Lexer::new(b"123", 0).scalar_token(), Err(LexError::Eof));
    }
}
