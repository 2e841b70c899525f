//! vLLM / vLLM-Ascend start-up logs (serving-evidence.md section 2): the memory lines of every
//! documented format and version (weights W1-W5, KV budget K1-K5, KV tokens, blocks, graph capture
//! G1-G3, V0 / V1 memory profiling P1-P2, the vllm-ascend summary S1, engine init E1-E2, sleep
//! mode X1). The line prefix is parsed first (nested `(Proc pid=N)` tags, ANSI colours, `grep -n`
//! numbers, the `[vllm-ascend] - ` prefix); messages are matched by their format strings, with
//! GB-that-is-GiB, byte-valued K1, thousands separators and `format_gib`'s variable decimals.

use super::EvidenceError;
use crate::model::serving::{VllmLog, VllmRecord, VllmValue};

const GIB: f64 = crate::units::GIB as f64;

pub fn read(path: &std::path::Path) -> Result<VllmLog, EvidenceError> {
    let bytes =
        crate::ingest::source::read_regular(path, crate::ingest::source::MAX_COMPANION_BYTES)
            .map_err(|e| EvidenceError::io(path, e))?;
    parse_checked(
        &String::from_utf8_lossy(&bytes),
        &path.display().to_string(),
    )
}

/// True when some of the first lines carry a vLLM log prefix.
pub fn looks_like(text: &str) -> bool {
    text.lines().take(200).any(|l| prefix(l).is_some())
}

/// [`parse`], but a memory line whose number is not finite (`inf`, `nan`) or does not fit in
/// bytes is an error naming the line, never a record of 8,589,934,592 GiB.
pub fn parse_checked(text: &str, path: &str) -> Result<VllmLog, EvidenceError> {
    let log = parse(text, path);
    match BAD_NUMBER.with(|b| b.take()) {
        Some((line, what)) => Err(EvidenceError::Bad {
            path: format!("{path}:{line}"),
            what,
        }),
        None => Ok(log),
    }
}

thread_local! {
    /// The first line (and why) whose memory number was refused by the last [`parse`].
    static BAD_NUMBER: std::cell::Cell<Option<(usize, String)>> = const { std::cell::Cell::new(None) };
    static LINE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Notes a refused number on the line being parsed (the first one is kept).
fn refuse(s: &str, why: &str) {
    let line = LINE.with(|l| l.get());
    BAD_NUMBER.with(|b| {
        let cur = b.take();
        b.set(cur.or_else(|| Some((line, format!("`{}` {why}", s.trim())))));
    });
}

/// Memory lines of a vLLM log; lines with refused numbers are left out ([`parse_checked`] says
/// which).
pub fn parse(text: &str, path: &str) -> VllmLog {
    BAD_NUMBER.with(|b| b.set(None));
    let mut log = VllmLog {
        path: path.to_string(),
        ..Default::default()
    };
    for (i, raw) in text.lines().enumerate() {
        log.lines = i + 1;
        LINE.with(|l| l.set(i + 1));
        let Some(p) = prefix(raw) else { continue };
        if let Some((format, value)) = message(&p.msg) {
            log.records.push(VllmRecord {
                line: i + 1,
                process: p.process,
                pid: p.pid,
                at: p.at,
                format,
                value,
            });
        }
    }
    log
}

struct Prefix {
    process: Option<String>,
    pid: Option<u64>,
    at: String,
    msg: String,
}

fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\x1b') {
        return s.into();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' && it.peek() == Some(&'[') {
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// `[(<Proc> pid=<N>[, ip=..]) ]* <LEVEL> <MM-DD> <HH:MM:SS> [<file>:<line>] [[vllm-ascend] - ]<msg>`.
fn prefix(raw: &str) -> Option<Prefix> {
    let line = strip_ansi(raw);
    let mut s = line.trim_start();
    // `grep -n` pastes: `123:(Worker ...`.
    if let Some(i) = s.find(':')
        && i > 0
        && s[..i].bytes().all(|b| b.is_ascii_digit())
    {
        s = &s[i + 1..];
    }
    let (mut process, mut pid) = (None, None);
    while let Some(rest) = s.strip_prefix('(') {
        let end = rest.find(')')?;
        let tag = &rest[..end];
        let (name, tail) = tag.split_once(" pid=")?;
        pid = tail.split(',').next()?.trim().parse().ok();
        process = Some(name.to_string());
        s = rest[end + 1..].trim_start();
    }
    let (level, rest) = s.split_once(' ')?;
    if !matches!(level, "DEBUG" | "INFO" | "WARNING" | "ERROR") {
        return None;
    }
    let mut parts = rest.splitn(3, ' ');
    let (md, hms, rest) = (parts.next()?, parts.next()?, parts.next()?);
    if md.len() != 5 || md.as_bytes()[2] != b'-' || hms.len() != 8 || hms.as_bytes()[2] != b':' {
        return None;
    }
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let (at, msg) = rest.split_once("] ")?;
    if !at.contains(':') || at.contains(' ') {
        return None;
    }
    let mut msg = msg;
    if let Some(m) = msg.strip_prefix("[vllm-ascend] ") {
        msg = match m.strip_prefix("- ") {
            Some(x) => x,
            None => m.split_once("] - ").map_or(m, |(_, x)| x),
        };
    }
    Some(Prefix {
        process,
        pid,
        at: at.to_string(),
        msg: msg.trim_end().to_string(),
    })
}

/// Matches `msg` against a format with `{}` holes: literals in order, the last one anchored at
/// the end; returns the holes.
fn holes<'a>(msg: &'a str, pat: &str) -> Option<Vec<&'a str>> {
    let lits: Vec<&str> = pat.split("{}").collect();
    let mut rest = msg.strip_prefix(lits[0])?;
    let mut out = Vec::with_capacity(lits.len() - 1);
    for (k, lit) in lits.iter().enumerate().skip(1) {
        if k == lits.len() - 1 {
            let cap = rest.strip_suffix(lit)?;
            out.push(cap);
            rest = "";
        } else {
            let i = rest.find(lit)?;
            out.push(&rest[..i]);
            rest = &rest[i + lit.len()..];
        }
    }
    rest.is_empty().then_some(out)
}

/// `s` without its thousands separators, when they are where Python's `{:,}` puts them (groups
/// of three digits left of the point: `32,768`, `1,234.5`); `1,2,3` is refused, not read as 123.
fn without_separators(s: &str) -> Option<String> {
    let t = s.trim();
    if !t.contains(',') {
        return Some(t.to_string());
    }
    let body = t.strip_prefix('-').unwrap_or(t);
    let int = body.split('.').next().unwrap_or("");
    let groups: Vec<&str> = int.split(',').collect();
    let digits = |g: &str| g.bytes().all(|b| b.is_ascii_digit());
    let grouped = (1..=3).contains(&groups[0].len())
        && groups.iter().all(|g| digits(g))
        && groups[1..].iter().all(|g| g.len() == 3)
        && !body[int.len()..].contains(',');
    if !grouped {
        refuse(s, "has misplaced thousands separators");
        return None;
    }
    Some(t.replace(',', ""))
}

fn f(s: &str) -> Option<f64> {
    let v: f64 = without_separators(s)?.parse().ok()?;
    if !v.is_finite() {
        refuse(s, "is not a finite number");
        return None;
    }
    Some(v)
}
fn u(s: &str) -> Option<u64> {
    without_separators(s)?.parse().ok()
}
/// A memory amount in GiB as bytes; a negative one is refused (an amount of weights, KV cache or
/// capacity is never below zero: `-5 GiB of weights` is a damaged line).
fn gib(s: &str) -> Option<i64> {
    let b = gib_signed(s)?;
    if b < 0 {
        refuse(s, "is negative: this memory amount cannot be");
        return None;
    }
    Some(b)
}
/// A GiB change that can be negative (a free-memory delta, a profiling increase: vLLM prints
/// negative ones, ../shared/formats/serving-evidence.md G1 and P2).
fn gib_signed(s: &str) -> Option<i64> {
    let b = (f(s)? * GIB).round();
    if b.abs() >= i64::MAX as f64 {
        refuse(s, "GiB does not fit in a byte count");
        return None;
    }
    Some(b as i64)
}

const ENGINE: &str = "init engine (profile, create kv cache, warmup model) took ";

fn message(m: &str) -> Option<(&'static str, VllmValue)> {
    // Patterns that can match the same line stay in one group, in their order (a line that
    // matches a pattern but not its numbers is not tried against the next group's patterns).
    weights_and_kv(m)
        .or_else(|| blocks_and_graphs(m))
        .or_else(|| profile_run(m))
        .or_else(|| startup_summary(m))
        .or_else(|| engine_and_sleep(m))
}

/// Weights loaded, KV cache memory, tokens and concurrency.
fn weights_and_kv(m: &str) -> Option<(&'static str, VllmValue)> {
    use VllmValue::*;
    if let Some(h) = holes(m, "Loading model weights took {} GB") {
        return Some((
            "W1/W2",
            Weights {
                bytes: gib(h[0])?,
                secs: None,
            },
        ));
    }
    for pat in [
        "Model loading took {} GiB memory and {} seconds",
        "Model loading took {} GiB and {} seconds",
    ] {
        if let Some(h) = holes(m, pat) {
            return Some((
                "W3-W5",
                Weights {
                    bytes: gib(h[0])?,
                    secs: f(h[1]),
                },
            ));
        }
    }
    if let Some(h) = holes(m, "Available memory: {}, total memory: {}") {
        return Some((
            "K1",
            KvAvailableAndTotal {
                kv_bytes: f(h[0])?.round() as i64,
                total_bytes: f(h[1])?.round() as i64,
            },
        ));
    }
    if let Some(h) = holes(m, "Available KV cache memory: {} GiB") {
        return Some((
            "K2-K5",
            KvAvailable {
                bytes: gib_signed(h[0])?,
            },
        ));
    }
    if let Some(h) = holes(m, "GPU KV cache size: {} tokens") {
        return Some(("T1", KvTokens { tokens: u(h[0])? }));
    }
    if let Some(h) = holes(m, "Maximum concurrency for {} tokens per request: {}x") {
        return Some((
            "T2",
            MaxConcurrency {
                tokens_per_request: u(h[0])?,
                times: f(h[1])?,
            },
        ));
    }
    None
}

/// KV blocks, graph capture and the graph pool.
fn blocks_and_graphs(m: &str) -> Option<(&'static str, VllmValue)> {
    use VllmValue::*;
    if let Some(h) = holes(m, "# GPU blocks: {}") {
        return Some((
            "T3",
            Blocks {
                device: "GPU".into(),
                blocks: u(h[0])?,
                cpu_blocks: None,
            },
        ));
    }
    if let Some(h) = holes(m, "# {} blocks: {}, # CPU blocks: {}") {
        return Some((
            "B1",
            Blocks {
                device: h[0].to_string(),
                blocks: u(h[1])?,
                cpu_blocks: Some(u(h[2])?),
            },
        ));
    }
    if let Some(h) = holes(m, "Graph capturing finished in {} secs, took {} GiB") {
        return Some((
            "G1/G2",
            GraphCapture {
                secs: f(h[0])?,
                bytes: gib_signed(h[1])?,
            },
        ));
    }
    if let Some(h) = holes(
        m,
        "CUDA graph pool memory: {} GiB (actual), {} GiB (estimated), difference: {} GiB ({}%).",
    ) {
        return Some((
            "G3",
            GraphPool {
                actual_bytes: gib(h[0])?,
                estimated_bytes: gib(h[1])?,
            },
        ));
    }
    None
}

/// The memory profiling run: the budget, its split, its result.
fn profile_run(m: &str) -> Option<(&'static str, VllmValue)> {
    use VllmValue::*;
    if let Some(h) = holes(
        m,
        "the current vLLM instance can use total_gpu_memory ({}GiB) x gpu_memory_utilization ({}) = {}GiB",
    ) {
        return Some((
            "P1",
            ProfileBudget {
                total_bytes: gib(h[0])?,
                utilization: f(h[1])?,
                requested_bytes: gib(h[2])?,
            },
        ));
    }
    if let Some(h) = holes(
        m,
        "model weights take {}GiB; non_torch_memory takes {}GiB; PyTorch activation peak memory takes {}GiB; the rest of the memory reserved for KV Cache is {}GiB.",
    ) {
        return Some((
            "P1",
            ProfileSplit {
                weights_bytes: gib(h[0])?,
                non_torch_bytes: gib_signed(h[1])?,
                activation_bytes: gib_signed(h[2])?,
                kv_bytes: gib_signed(h[3])?,
            },
        ));
    }
    if let Some(h) = holes(
        m,
        "Memory profiling takes {} seconds. Total non KV cache memory: {}GiB; torch peak memory increase: {}GiB; non-torch forward increase memory: {}GiB; weights memory: {}GiB.",
    ) {
        return Some((
            "P2",
            ProfileResult {
                non_kv_bytes: gib_signed(h[1])?,
                torch_peak_bytes: gib_signed(h[2])?,
                non_torch_bytes: gib_signed(h[3])?,
                weights_bytes: gib_signed(h[4])?,
            },
        ));
    }
    None
}

/// vLLM-Ascend's one-line start-up memory summary.
fn startup_summary(m: &str) -> Option<(&'static str, VllmValue)> {
    use VllmValue::*;
    if let Some(h) = holes(
        m,
        "Free memory on device ({}/{} GiB) on startup. Desired GPU memory utilization is ({}, {} GiB). Actual usage: {} GiB for weights, {} GiB for peak activation, {} GiB for non-torch memory, {} GiB for NPU graph memory.{} Current KV cache memory: {} GiB.{}",
    ) {
        let tail = h[10].trim();
        let (reserved, allocated) = if tail.is_empty() {
            (None, None)
        } else {
            let t = holes(
                tail,
                "After warmup: torch reserved memory {} GiB, torch allocated memory {} GiB.",
            )?;
            (Some(gib(t[0])?), Some(gib(t[1])?))
        };
        return Some((
            "S1",
            Summary {
                free_bytes: gib(h[0])?,
                total_bytes: gib(h[1])?,
                utilization: f(h[2])?,
                requested_bytes: gib(h[3])?,
                weights_bytes: gib_signed(h[4])?,
                activation_bytes: gib_signed(h[5])?,
                non_torch_bytes: gib_signed(h[6])?,
                graph_bytes: gib_signed(h[7])?,
                kv_bytes: gib_signed(h[9])?,
                reserved_bytes: reserved,
                allocated_bytes: allocated,
            },
        ));
    }
    None
}

/// Engine initialisation time and sleep-mode releases.
fn engine_and_sleep(m: &str) -> Option<(&'static str, VllmValue)> {
    use VllmValue::*;
    if let Some(rest) = m.strip_prefix(ENGINE) {
        let pats = ["{} s (compilation: {} s)", "{} seconds", "{} s"];
        for pat in pats {
            if let Some(h) = holes(rest, pat) {
                return Some((
                    "E1/E2",
                    InitEngine {
                        secs: f(h[0])?,
                        compilation_secs: h.get(1).and_then(|x| f(x)),
                    },
                ));
            }
        }
    }
    for pat in [
        "Sleep mode freed {} GiB memory, {} GiB memory is still in use.",
        "Sleep mode (level={}) freed {} GiB memory, {} GiB memory is still in use.",
    ] {
        if let Some(h) = holes(m, pat) {
            let k = h.len() - 2;
            return Some((
                "X1",
                SleepFreed {
                    freed_bytes: gib(h[k])?,
                    in_use_bytes: gib(h[k + 1])?,
                },
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(msg: &str) -> String {
        format!("INFO 08-16 20:01:30 [worker.py:295] {msg}\n")
    }

    /// A negative amount where none can be (weights loaded) and misplaced thousands separators
    /// are errors naming the line; negative changes where vLLM prints them (P2, the documented
    /// `-15.24GiB` of serving-evidence.md) and real separators (`32,768`) are read.
    #[test]
    fn negative_amounts_and_bad_separators_are_refused_where_they_cannot_be() {
        for bad in [
            "Loading model weights took -5 GB",
            "Loading model weights took 1,2,3 GB",
            "Model loading took 1,23.5 GiB and 3 seconds",
            "GPU KV cache size: 12,34 tokens",
        ] {
            let e = parse_checked(&line(bad), "log").unwrap_err().to_string();
            assert!(e.contains("log:1"), "{bad}: {e}");
        }
        let ok = line(
            "Memory profiling takes 24.71 seconds. Total non KV cache memory: 16.70GiB; torch peak memory increase: 1.40GiB; non-torch forward increase memory: -15.24GiB; weights memory: 15.27GiB.",
        ) + &line("GPU KV cache size: 1,234,567 tokens")
            + &line("Loading model weights took 12.5 GB");
        let log = parse_checked(&ok, "log").unwrap();
        let dbg = format!("{log:?}");
        assert!(dbg.contains("1234567"), "{dbg}");
        assert!(
            dbg.contains(&format!("{}", (-15.24f64 * GIB).round() as i64)),
            "{dbg}"
        );
        assert!(
            dbg.contains(&format!("{}", (12.5f64 * GIB).round() as i64)),
            "{dbg}"
        );
    }
}
