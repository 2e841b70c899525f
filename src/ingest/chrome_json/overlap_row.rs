//! The vendor's `Overlap Analysis` rows read by their one shape, without the member loop: half
//! the events of an Ascend trace_view.json (3.13 M of json1g's 5.67 M) are such rows, and a
//! chunk that knows their threads only sums their durations ([`super::overlap_sums`]).
//!
//! torch_npu and msprof write every row as `{"name": "…", "pid": N, "tid": N, "ts": T, "dur": T,
//! "ph": "X"}` (the real level0-2 text roots, the 2024 mstt trace and the legacy CANN roots all
//! do). The member names and the blanks between them are compared as written; the name is passed
//! over by the lexer, the ids read by its integer reader and the times by the scanner's own time
//! reader, so a row read here has the values the member loop would read. Anything else (another
//! member, order or blank, a quoted id, a time the reader does not take) gives None, and the
//! event is read again from its start by the member loop.

use super::lexer::{LexError, Lexer};

/// A row of that shape: its numeric pid and tid, and its ts and dur in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub pid: i64,
    pub tid: i64,
    pub ts: i64,
    pub dur: i64,
}

/// Passes over `text` when the bytes at the cursor are `text`.
#[inline(always)]
fn literal(lx: &mut Lexer<'_>, text: &[u8]) -> Option<()> {
    let end = lx.pos + text.len();
    (lx.b.get(lx.pos..end) == Some(text)).then(|| lx.pos = end)
}

/// The row at the cursor (an event's `{`), the cursor left after its `}`; None (the cursor
/// anywhere in the event) when the event is not of the shape, or its pid is not one `listed`
/// names (checked before the rest is read: every other event of the file fails there).
#[inline(always)]
pub fn read(
    lx: &mut Lexer<'_>,
    listed: impl Fn(i64) -> bool,
    time: impl Fn(&mut Lexer<'_>) -> Result<Option<i64>, LexError>,
) -> Option<Row> {
    literal(lx, b"{\"name\": ")?;
    if lx.b.get(lx.pos) != Some(&b'"') {
        return None;
    }
    lx.string().ok()?;
    literal(lx, b", \"pid\": ")?;
    let pid = lx.plain_i64()?;
    if !listed(pid) {
        return None;
    }
    literal(lx, b", \"tid\": ")?;
    let tid = lx.plain_i64()?;
    literal(lx, b", \"ts\": ")?;
    let ts = time(lx).ok()??;
    literal(lx, b", \"dur\": ")?;
    let dur = time(lx).ok()??;
    literal(lx, b", \"ph\": \"X\"}")?;
    Some(Row { pid, tid, ts, dur })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::chrome_json::chunk::time_value;

    /// `read` of `text` with pid 7 listed: the row, and where the cursor stopped.
    fn row(text: &str) -> (Option<Row>, usize) {
        let b = text.as_bytes();
        let mut lx = Lexer::new(b, 0);
        let r = read(&mut lx, |p| p == 7, time_value);
        (r, lx.pos)
    }

    /// Rows of the shape are read with the values written (ns by hand: `1000.000` µs is
    /// 1,000,000 ns), whatever the name holds and however the times are written that the
    /// scanner's time reader takes; the cursor ends after the `}`.
    #[test]
    fn rows_of_the_shape_are_read_whole() {
        let text = r#"{"name": "Computing", "pid": 7, "tid": 0, "ts": "1736408905886959.320", "dur": 3.007, "ph": "X"}, "#;
        let want = Row {
            pid: 7,
            tid: 0,
            ts: 1_736_408_905_886_959_320,
            dur: 3_007,
        };
        assert_eq!(row(text), (Some(want), text.len() - 2));
        // The legacy CANN roots: unquoted ts, two decimals.
        let legacy =
            r#"{"name": "Free", "pid": 7, "tid": 3, "ts": 56635864664.91, "dur": 0.11, "ph": "X"}"#;
        let want = Row {
            pid: 7,
            tid: 3,
            ts: 56_635_864_664_910,
            dur: 110,
        };
        assert_eq!(row(legacy), (Some(want), legacy.len()));
        // An escaped name is passed over (a summed row's name is not kept).
        let escaped = r#"{"name": "Comm\"unication", "pid": 7, "tid": 1, "ts": "1.500", "dur": 2, "ph": "X"}"#;
        let want = Row {
            pid: 7,
            tid: 1,
            ts: 1_500,
            dur: 2_000,
        };
        assert_eq!(row(escaped).0, Some(want));
    }

    /// Anything but the shape gives None, for the member loop to read: another pid, another
    /// member or order, other blanks, a quoted id, a time the reader gives none for, another
    /// phase, a cut row.
    #[test]
    fn other_events_are_left_to_the_member_loop() {
        for text in [
            r#"{"name": "Computing", "pid": 8, "tid": 0, "ts": "1.000", "dur": 1, "ph": "X"}"#,
            r#"{"name": "MatMul", "pid": 7, "tid": 0, "ts": "1.000", "dur": 1, "args": {}, "ph": "X"}"#,
            r#"{"ph": "X", "name": "Computing", "pid": 7, "tid": 0, "ts": "1.000", "dur": 1}"#,
            r#"{"name":"Computing", "pid": 7, "tid": 0, "ts": "1.000", "dur": 1, "ph": "X"}"#,
            r#"{"name": "Computing", "pid": 7,  "tid": 0, "ts": "1.000", "dur": 1, "ph": "X"}"#,
            r#"{"name": "Computing", "pid": "7", "tid": 0, "ts": "1.000", "dur": 1, "ph": "X"}"#,
            r#"{"name": "Computing", "pid": 7, "tid": 0, "ts": "abc", "dur": 1, "ph": "X"}"#,
            r#"{"name": "Computing", "pid": 7, "tid": 0, "ts": "1.000", "dur": 1, "ph": "i"}"#,
            r#"{"name": "Computing", "pid": 7, "tid": 0, "ts": "1.000", "dur": 1, "ph": "X" }"#,
            r#"{"name": 5, "pid": 7, "tid": 0, "ts": "1.000", "dur": 1, "ph": "X"}"#,
            r#"{"name": "Computing", "pid": 7, "tid": 0, "ts": "1.000", "dur": 1, "ph": "X""#,
            r#"{"name": "Comput"#,
        ] {
            assert_eq!(row(text).0, None, "{text}");
        }
    }
}
