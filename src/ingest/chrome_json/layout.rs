//! The top level of a Chrome-trace file: a bare event array (Ascend), or an object whose
//! `traceEvents` member is the array (Kineto / lmdeploy). Reads the small header members
//! (`distributedInfo`, `deviceProperties`, `displayTimeUnit`, `baseTimeNanoseconds`) before and after the array with
//! serde_json; the array itself is left to the chunked scanner.

use super::lexer::{LexError, Lexer};
use crate::ingest::builder::FileMeta;
use crate::model::files::SourceFormat;

/// Where the events are.
#[derive(Debug)]
pub enum Head {
    /// Events start at this offset (just after `[`).
    Events { first: usize },
    /// The file holds no bytes but whitespace.
    Empty,
    /// The bytes end before the event array begins.
    TruncatedBeforeEvents { offset: usize },
}

#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("byte {offset}: {what}")]
    Syntax { offset: usize, what: &'static str },
    #[error("a JSON object without a `traceEvents` array (not a Chrome trace)")]
    NoTraceEvents,
}

fn lex_err(e: LexError, at: usize) -> LayoutError {
    match e {
        LexError::Eof => LayoutError::Syntax {
            offset: at,
            what: "unexpected end",
        },
        LexError::Unexpected { pos, what } => LayoutError::Syntax { offset: pos, what },
    }
}

/// Reads up to the first event and fills `meta` with the header members seen so far.
pub fn read_head(b: &[u8], meta: &mut FileMeta) -> Result<Head, LayoutError> {
    if b.starts_with(&[0xFF, 0xFE])
        || b.starts_with(&[0xFE, 0xFF])
        || b.get(..2).is_some_and(|h| h.contains(&0))
    {
        return Err(LayoutError::Syntax {
            offset: 0,
            what: "the file is UTF-16 (or starts with NUL bytes): UTF-16 is not supported, convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)",
        });
    }
    let mut lx = Lexer::new(b, 0);
    if b.starts_with(b"\xEF\xBB\xBF") {
        lx.pos = 3;
    }
    match lx.peek() {
        Err(_) => return Ok(Head::Empty),
        Ok(b'[') => {
            meta.format = Some(SourceFormat::ChromeJsonArray);
            return Ok(Head::Events { first: lx.pos + 1 });
        }
        Ok(b'{') => meta.format = Some(SourceFormat::ChromeJsonObject),
        Ok(_) => {
            return Err(LayoutError::Syntax {
                offset: lx.pos,
                what: "expected '[' or '{' at the top level",
            });
        }
    }
    lx.pos += 1;
    loop {
        let at = lx.pos;
        let key = match lx.string() {
            Ok(k) => k,
            Err(LexError::Eof) => return Ok(Head::TruncatedBeforeEvents { offset: at }),
            Err(e) => {
                if lx.peek().ok() == Some(b'}') {
                    return Err(LayoutError::NoTraceEvents);
                }
                return Err(lex_err(e, at));
            }
        };
        let key_bytes = lx.bytes(key);
        match lx.expect(b':', "expected ':'") {
            Err(LexError::Eof) => return Ok(Head::TruncatedBeforeEvents { offset: at }),
            Err(e) => return Err(lex_err(e, at)),
            Ok(()) => {}
        }
        if key_bytes == b"traceEvents" {
            return match lx.peek() {
                Ok(b'[') => Ok(Head::Events { first: lx.pos + 1 }),
                Ok(_) => Err(LayoutError::Syntax {
                    offset: lx.pos,
                    what: "traceEvents is not an array",
                }),
                Err(_) => Ok(Head::TruncatedBeforeEvents { offset: lx.pos }),
            };
        }
        let vstart = lx.pos;
        match lx.skip_value() {
            Err(LexError::Eof) => return Ok(Head::TruncatedBeforeEvents { offset: at }),
            Err(e) => return Err(lex_err(e, vstart)),
            Ok(()) => {}
        }
        header_member(key_bytes, &b[vstart..lx.pos], meta);
        match lx.comma_or_close(b'}') {
            Ok(true) => {}
            Ok(false) => return Err(LayoutError::NoTraceEvents),
            Err(LexError::Eof) => return Ok(Head::TruncatedBeforeEvents { offset: lx.pos }),
            Err(e) => return Err(lex_err(e, lx.pos)),
        }
    }
}

/// Reads the members after the event array (from just past `]`). Returns false if the bytes end
/// before the object closes (a truncated tail).
pub fn read_tail(b: &[u8], after_array: usize, meta: &mut FileMeta) -> Result<bool, LayoutError> {
    if meta.format != Some(SourceFormat::ChromeJsonObject) {
        return Ok(true);
    }
    let mut lx = Lexer::new(b, after_array);
    loop {
        match lx.comma_or_close(b'}') {
            Ok(false) => return Ok(true),
            Ok(true) => {}
            Err(LexError::Eof) => return Ok(false),
            Err(e) => return Err(lex_err(e, lx.pos)),
        }
        let at = lx.pos;
        let key = match lx.string() {
            Ok(k) => k,
            Err(LexError::Eof) => return Ok(false),
            Err(e) => return Err(lex_err(e, at)),
        };
        let key_bytes = lx.bytes(key);
        if let Err(e) = lx.expect(b':', "expected ':'") {
            return if e == LexError::Eof {
                Ok(false)
            } else {
                Err(lex_err(e, at))
            };
        }
        let vstart = lx.pos;
        match lx.skip_value() {
            Err(LexError::Eof) => return Ok(false),
            Err(e) => return Err(lex_err(e, vstart)),
            Ok(()) => header_member(key_bytes, &b[vstart..lx.pos], meta),
        }
    }
}

/// `distributedInfo.pg_config` (`[{pg_name, pg_desc, ranks, ...}]`) in torch_npu's
/// `parallel_group_info` shape (`{name: {"group_name": desc, "global_ranks": ranks}}`), so one
/// reader names every format's groups; a group without `pg_desc` (older PyTorch writes `uid`
/// instead) keeps an empty name; empty when there is no group.
fn process_groups(info: &serde_json::Value) -> String {
    let Some(list) = info.get("pg_config").and_then(|c| c.as_array()) else {
        return String::new();
    };
    let map: serde_json::Map<String, serde_json::Value> = list
        .iter()
        .filter_map(|g| {
            let name = g.get("pg_name")?.as_str()?;
            let desc = g.get("pg_desc").and_then(|d| d.as_str()).unwrap_or("");
            let mut v = serde_json::json!({ "group_name": desc });
            if let Some(ranks) = g.get("ranks").filter(|r| r.is_array()) {
                v["global_ranks"] = ranks.clone();
            }
            Some((name.to_string(), v))
        })
        .collect();
    if map.is_empty() {
        String::new()
    } else {
        serde_json::Value::Object(map).to_string()
    }
}

fn header_member(key: &[u8], value: &[u8], meta: &mut FileMeta) {
    match key {
        b"distributedInfo" => {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(value) {
                meta.rank = meta
                    .rank
                    .or(v.get("rank").and_then(|r| r.as_i64()).map(|r| r as i32));
                meta.world_size = v
                    .get("world_size")
                    .and_then(|r| r.as_i64())
                    .map(|r| r as i32);
                meta.process_groups = process_groups(&v);
            }
        }
        b"deviceProperties" => {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(value)
                && v.as_array().is_some_and(|a| !a.is_empty())
            {
                meta.device_properties = v.to_string();
            }
        }
        b"displayTimeUnit" => {
            if let Ok(s) = serde_json::from_slice::<String>(value) {
                meta.display_time_unit = s;
            }
        }
        b"baseTimeNanoseconds" => {
            if let Ok(n) = serde_json::from_slice::<i64>(value) {
                meta.base_time_ns = n;
            }
        }
        _ => {}
    }
}
