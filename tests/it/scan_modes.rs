//! The two JSON tokenisers give identical tables: the indexed scanner (the SIMD structural
//! pre-pass, src/ingest/chrome_json/structural.rs, with the fastest kernel of this CPU,
//! `PROFSCOPE_JSON_SCAN=indexed`) and the scalar one (the default). Identical means the whole
//! `Tables` value, every column and every interned string (`{:?}` of both), or the same error
//! text. Inputs: every `.json` and `.json.gz` file under ../shared/samples (real files; the
//! non-trace JSON among them must fail the same way in both modes), at the default chunk size and
//! at 4 KiB chunks, plus generated strings that cross the index's blocks and windows with
//! backslash runs of every length.
//!
//! The scalar scanner has two copies, compiled from one source for the baseline instructions and
//! for AVX2 with BMI (src/ingest/chrome_json/chunk.rs, `parse_chunk`): where this CPU has AVX2,
//! `ScanMode::Scalar` runs the AVX2 copy and `ScanMode::ScalarBaseline` the baseline one, and
//! their tables must be identical too (on a CPU without AVX2 both run the baseline copy).

use crate::common;
use profscope::ingest::chrome_json::ingest_slice_scan;
use profscope::ingest::chrome_json::structural::ScanMode;
use std::io::Read;
use std::path::{Path, PathBuf};

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            json_files(&p, out);
        } else {
            let name = p.to_string_lossy();
            if name.ends_with(".json") || name.ends_with(".json.gz") {
                out.push(p);
            }
        }
    }
}

fn read(p: &Path) -> Vec<u8> {
    let raw = std::fs::read(p).unwrap();
    if !p.to_string_lossy().ends_with(".gz") {
        return raw;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The whole outcome of one ingest, as text.
fn outcome(name: &str, b: &[u8], chunk: usize, scan: ScanMode) -> String {
    match ingest_slice_scan(name, b, chunk, scan) {
        Ok(t) => format!("{t:?}"),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn indexed_and_scalar_scanners_give_identical_tables_on_every_real_json() {
    let mut files = Vec::new();
    json_files(&common::samples_dir(), &mut files);
    assert!(files.len() >= 150, "{} JSON files", files.len());
    let (mut traces, mut events) = (0, 0);
    for p in &files {
        let b = read(p);
        let name = p.to_string_lossy();
        for chunk in [8 << 20, 4096] {
            let scalar = outcome(&name, &b, chunk, ScanMode::Scalar);
            let indexed = outcome(&name, &b, chunk, ScanMode::Indexed);
            assert!(scalar == indexed, "{name} ({chunk}-byte chunks) differs");
            let baseline = outcome(&name, &b, chunk, ScanMode::ScalarBaseline);
            assert!(
                scalar == baseline,
                "{name} ({chunk}-byte chunks): the copies differ"
            );
        }
        if let Ok(t) = ingest_slice_scan(&name, &b, 8 << 20, ScanMode::Indexed) {
            traces += (!t.events.is_empty()) as usize;
            events += t.events.len();
        }
    }
    // Most of the files are traces with events (the rest are info.json and other JSON).
    assert!(traces >= 120, "{traces} traces with events");
    assert!(events > 100_000, "{events} events");
}

#[test]
fn strings_across_blocks_and_windows_with_every_escape_run() {
    // One event per string length and backslash-run length, strings long enough to cross the
    // 64-byte blocks and, for the last ones, the 128 KiB windows of the index.
    let mut s = String::from("{\"traceEvents\": [");
    let mut n = 0;
    for len in [
        0usize, 1, 62, 63, 64, 65, 127, 128, 129, 4000, 140_000, 300_000,
    ] {
        for run in 0..6 {
            if n > 0 {
                s.push_str(",\n");
            }
            let mut name = "a".repeat(len);
            // `run` backslashes then a quote inside the name: escaped when the run is odd; an
            // even run escapes itself, so the quote is written escaped as well.
            let bs = "\\".repeat(run);
            name.push_str(&bs);
            if run % 2 == 0 {
                name.push_str("\\\"");
            } else {
                name.push('"');
            }
            name.push_str("tail,} ]");
            s.push_str(&format!(
                r#"{{"ph": "X", "name": "{name}", "pid": 1, "tid": {run}, "ts": {}.5, "dur": 2, "args": {{"k": "{name}", "n": [1, "{{", "]"]}}}}"#,
                1000 + n
            ));
            n += 1;
        }
    }
    s.push_str("]}");
    let b = s.as_bytes();
    for chunk in [8 << 20, 4096, 97] {
        let scalar = outcome("gen.json", b, chunk, ScanMode::Scalar);
        assert!(!scalar.starts_with("error"), "{scalar}");
        assert_eq!(scalar, outcome("gen.json", b, chunk, ScanMode::Indexed));
    }
    let t = ingest_slice_scan("gen.json", b, 8 << 20, ScanMode::Indexed).unwrap();
    assert_eq!(t.events.len(), n);
    // The first group (empty prefix): runs 0 and 1 decode to a quote, runs 2 and 3 to a
    // backslash and a quote.
    assert_eq!(t.event_name(0), "\"tail,} ]");
    assert_eq!(t.event_name(1), "\"tail,} ]");
    assert_eq!(t.event_name(2), "\\\"tail,} ]");
    assert_eq!(t.event_name(3), "\\\"tail,} ]");
    // Truncated inside a long string: both modes keep the same complete events.
    let cut = &b[..b.len() - 200_000];
    assert_eq!(
        outcome("cut.json", cut, 4096, ScanMode::Scalar),
        outcome("cut.json", cut, 4096, ScanMode::Indexed)
    );
}

/// The scalar scanner recognises an event's members from a memo of the previous events' member
/// prefixes (src/ingest/chrome_json/key_memo.rs); the indexed one never uses the memo, so the two
/// must agree on traces built to mislead it. Generated events cycle through five member layouts
/// (more than the memo's two per position), with names that differ from a memorised one in one
/// byte (`Task Typo`, `tsx`), blanks around the colon, an escaped name (`"n\u0061me"`), names
/// longer than the memo's 32 bytes, and timestamps and integers in the shapes the one-pass
/// scans decline (`"1.5e3"`, `"-7"`, `3.0`, 19 digits, a sign alone). Cut at every one of the
/// last 40 bytes too (a memorised prefix reaching past the end must not be read).
#[test]
fn member_memo_agrees_with_the_lexer_on_misleading_layouts() {
    let layouts = [
        r#"{"name": "K{i}", "pid": 1, "tid": {t}, "ts": "{ts}.250", "dur": 1.5, "args": {"Task Type": "AI_CORE", "Physic Stream Id": {t}, "connection_id": {i}}, "ph": "X"}"#,
        r#"{"name": "K{i}", "pid": 1, "tid": {t}, "ts": "{ts}.250", "dur": 1.5, "args": {"Task Typo": "AI_CPU", "Physic Stream Id": 3.0, "connection_id": -{i}}, "ph": "X"}"#,
        r#"{"name" : "M{i}","pid":"1","tid" :{t},"tsx": 5, "ts":{ts}.5,"dur":"2","ph":"X", "args":{"a_member_name_longer_than_thirty_two_bytes": 1}}"#,
        r#"{"n\u0061me": "E{i}", "pid": 1, "tid": {t}, "ts": "1.5e3", "dur": 1, "ph": "X", "args": {"Task Type": "HCCL", "connection_id": 1234567890123456789}}"#,
        r#"{"name": "C{i}", "pid": 1, "tid": {t}, "ts": "{ts}", "ph": "C", "args": {"Task Id": 7, "Model Id": -, "size": "-7"}}"#,
    ];
    let s = laid_out(&layouts, 600);
    let b = s.as_bytes();
    assert_scanners_agree("memo.json", b);
    let t = ingest_slice_scan("memo.json", b, 8 << 20, ScanMode::Scalar).unwrap();
    // Counted from the generator: layouts 0-2 are X events with a ts that parses (0, 1, 2 give
    // an exact ts; 3 gives 1.5 µs = 1500 ns); layout 4 is a counter event.
    assert_eq!(
        t.events.len(),
        (0..4)
            .map(|k| of_layout(k, layouts.len(), 600))
            .sum::<usize>()
    );
}

/// The scalar scanner also recognises whole members, name and value together, from the members
/// it read before whose value repeated (src/ingest/chrome_json/member_memo.rs); the indexed
/// scanner never does. Generated events put the same member bytes in different kinds of objects
/// at the same position: a graph id and a connection id with the same value (`-5`, `"12"`,
/// `4294967296`, where the two readers differ), a `pid` written as a number and as text, a
/// `ph` and a `name` that repeat, a stream id that is a fraction, and counters with more
/// numeric args than an event keeps, repeating, so that every kind of member is memorised and
/// then met again in another layout. All three kinds of invalid graph id must be counted alike.
#[test]
fn whole_members_agree_with_the_lexer_across_layouts() {
    let layouts = [
        r#"{"name": "A", "pid": 7, "tid": 1, "ts": "{ts}.250", "dur": 1.5, "args": {"Model Id": -5, "Task Type": "AI_CORE", "connection_id": {c}}, "ph": "X"}"#,
        r#"{"name": "A", "pid": 7, "tid": 1, "ts": "{ts}.250", "dur": 1.5, "args": {"connection_id": -5, "Task Type": "AI_CORE", "Model Id": {c}}, "ph": "X"}"#,
        r#"{"name": "A", "pid": "7", "tid": 1, "ts": "{ts}.500", "dur": 2.5, "args": {"Model Id": "12", "Task Type": "MIX_AIC", "Physic Stream Id": 2.5}, "ph": "X"}"#,
        r#"{"name": "A", "pid": 7, "tid": 1, "ts": "{ts}.500", "dur": 2.5, "args": {"connection_id": "12", "Task Type": "MIX_AIC", "Physic Stream Id": 2}, "ph": "X"}"#,
        r#"{"name": "A", "pid": 7, "tid": 2, "ts": "{ts}.750", "dur": 0.5, "args": {"Model Id": 4294967296, "stream": 4294967296, "device": 1}, "ph": "X"}"#,
        r#"{"name": "Q", "pid": 7, "tid": 2, "ts": "{ts}.750", "ph": "C", "args": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10, "k": 11, "l": 12, "m": 13, "n": 14, "o": 15, "p": 16, "q": 17}}"#,
        r#"{"name": "Q", "pid": 7, "tid": 2, "ts": "{ts}.750", "ph": "C", "args": {"a": 1, "b": {c}, "c": 3}}"#,
        r#"{"ph": "X", "name": "A", "cat": "cpu_op", "pid": 7, "tid": 1, "ts": "{ts}.125", "dur": 3.125, "args": {"correlation": 9, "Stream Id": 3}}"#,
    ];
    let s = laid_out(&layouts, 4000);
    let b = s.as_bytes();
    assert_scanners_agree("members.json", b);
    let t = ingest_slice_scan("members.json", b, 8 << 20, ScanMode::Scalar).unwrap();
    // Counted from the generator: layouts 0-4 and 7 are X events, 5 and 6 counters.
    let x: usize = [0, 1, 2, 3, 4, 7]
        .iter()
        .map(|&k| of_layout(k, layouts.len(), 4000))
        .sum();
    assert_eq!(t.events.len(), x);
}

/// A trace of `n` events, event i laid out as `layouts[(7i + i/5) mod len]` with `{i}` its
/// number, `{t}` i mod 3, `{c}` i / 40 and `{ts}` a µs timestamp, 10 µs apart.
fn laid_out(layouts: &[&str], n: usize) -> String {
    let events: Vec<String> = (0..n)
        .map(|i| {
            layouts[(i * 7 + i / 5) % layouts.len()]
                .replace("{i}", &i.to_string())
                .replace("{t}", &(i % 3).to_string())
                .replace("{c}", &(i / 40).to_string())
                .replace(
                    "{ts}",
                    &(1_736_408_905_000_000u64 + i as u64 * 10).to_string(),
                )
        })
        .collect();
    format!("[{}]", events.join(", "))
}

/// How many of [`laid_out`]'s `n` events use layout `k` of `len`.
fn of_layout(k: usize, len: usize, n: usize) -> usize {
    (0..n).filter(|i| (i * 7 + i / 5) % len == k).count()
}

/// The scalar scanner (with its memos, in both copies) and the indexed one (without) read `b`
/// into the same tables at three chunk sizes, and `b` cut at each of its last 40 bytes too (a
/// memorised prefix or value reaching past the end must not be read).
fn assert_scanners_agree(name: &str, b: &[u8]) {
    for chunk in [8 << 20, 4096, 97] {
        let scalar = outcome(name, b, chunk, ScanMode::Scalar);
        assert_eq!(
            scalar,
            outcome(name, b, chunk, ScanMode::Indexed),
            "{chunk}"
        );
        assert_eq!(
            scalar,
            outcome(name, b, chunk, ScanMode::ScalarBaseline),
            "{chunk}: the copies differ"
        );
    }
    for cut in 1..=40 {
        let c = &b[..b.len() - cut];
        let scalar = outcome(name, c, 4096, ScanMode::Scalar);
        assert_eq!(
            scalar,
            outcome(name, c, 4096, ScanMode::Indexed),
            "cut {cut}"
        );
        assert_eq!(
            scalar,
            outcome(name, c, 4096, ScanMode::ScalarBaseline),
            "cut {cut}: the copies differ"
        );
    }
}

/// The value memo (scalar mode) against the indexed scanner (no memo), whole tables compared, on
/// values built to mislead it: one value the start of another (`2` / `23`, `"AI"` / `"AI_CORE"`),
/// strings and numbers at one position (`"5"` / `5`, `1.5` / `"2"`), values that an id and an
/// integer read differently (`1.5`: 0 and -1), text pids, escaped values, values of 14 to 17
/// bytes around the memo's 16-byte compare, blanks before the comma, and the file cut at every
/// one of its last 40 bytes. (Answers are also kept apart per reader; the memo's unit test
/// checks that, since no two readers share a position in today's objects.)
#[test]
fn value_memo_agrees_with_the_lexer_on_misleading_values() {
    let layouts = [
        r#"{"name": "AI", "pid": 7, "tid": {t}, "ts": "{ts}.5", "dur": 2, "args": {"Task Type": "AI", "Physic Stream Id": {t}, "connection_id": {c}}, "ph": "X"}"#,
        r#"{"name": "AI_CORE", "pid": 7, "tid": {t}3, "ts": "{ts}.5", "dur": 2, "args": {"Task Type": "AI_CORE", "Physic Stream Id": {t}3, "connection_id": {c}0}, "ph": "X"}"#,
        r#"{"name": 5, "pid": 1.5, "tid": 1.5, "ts": "{ts}", "dur": 1, "args": {"connection_id": 1.5, "Physic Stream Id": 1.5, "Task Id": 1.5}, "ph": "X"}"#,
        r#"{"name": "5", "pid": "host", "tid": "main", "ts": "{ts}", "dur": 1 , "args": {"connection_id" : 2 , "Physic Stream Id": "2", "Task Id": 12345678901234}, "ph" : "X" }"#,
        r#"{"name": "AI\u005fCORE", "pid": 123456789012345, "tid": 1234567890123456, "ts": "{ts}", "dur": 1, "args": {"Task Type": "AI\u005fCORE", "connection_id": 12345678901234567}, "ph": "X"}"#,
        r#"{"name": "C{i}", "pid": 7, "tid": {t}, "ts": "{ts}", "ph": "C", "args": {"Task Id": {t}, "Model Id": {c}, "size": {t}3}}"#,
    ];
    let s = laid_out(&layouts, 900);
    let b = s.as_bytes();
    assert_scanners_agree("values.json", b);
    let t = ingest_slice_scan("values.json", b, 8 << 20, ScanMode::Scalar).unwrap();
    // Counted from the generator: layouts 0-4 are complete events, 5 a counter.
    assert_eq!(
        t.events.len(),
        (0..5)
            .map(|k| of_layout(k, layouts.len(), 900))
            .sum::<usize>()
    );
}

/// The container memo (scalar mode: Kineto's recorded op inputs passed over by a word compare)
/// against the indexed scanner (no memo), whole tables compared, with every op's inputs kept and
/// with only `aten::mm`'s kept (the others skipped): containers that are the start of another
/// (`[[1024, 1]]` / `[[1024, 1], []]`), that differ in their last byte only, brackets and escaped
/// quotes inside strings, objects, blanks inside and before, 63 to 66 bytes around the memo's
/// 64-byte limit, and the file cut at each of its last 40 bytes.
#[test]
fn container_memo_agrees_with_the_lexer_on_misleading_containers() {
    let pad = |n: usize| format!("[{}1]", "1,".repeat(n));
    let (p62, p63, p64) = (pad(30), pad(31), pad(32));
    let layouts = [
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": {ts}.5, "dur": 2, "args": {"External id": {i}, "Concrete Inputs": ["", ""], "Input type": ["float", "float"], "Input Dims": [[1024, 1], [1, 128]], "Ev Idx": {i}}}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 7, "tid": 7, "ts": {ts}.5, "dur": 2, "args": {"External id": {i}, "Concrete Inputs": ["", "", "True"], "Input type": ["float", "float", "Scalar"], "Input Dims": [[1024, 1]], "Ev Idx": {i}}}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": {ts}.5, "dur": 2, "args": {"External id": {i}, "Concrete Inputs": ["", "]"], "Input type": ["fl\"oat]", "float"], "Input Dims": [[1024, 1], []], "Ev Idx": {i}}}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 7, "ts": {ts}.5, "dur": 2, "args": {"External id": {i}, "Concrete Inputs": ["", "", "Tru"], "Input type": {"a": ["[", "{"]}, "Input Dims": [ [1024, 1] , [1, 12] ], "Ev Idx": {i}}}"#.to_string(),
        format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": {{ts}}.5, "dur": 2, "args": {{"External id": {{i}}, "Concrete Inputs": {p62}, "Input type": {p63}, "Input Dims": {p64}, "Ev Idx": {{i}}}}}}"#),
        format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 7, "tid": 7, "ts": {{ts}}.5, "dur": 2, "args": {{"External id": {{i}}, "Concrete Inputs": {p63}, "Input type": {p64}, "Input Dims": {p62}, "Ev Idx": {{i}}}}}}"#),
    ];
    let layouts: Vec<&str> = layouts.iter().map(String::as_str).collect();
    let s = laid_out(&layouts, 900);
    let b = s.as_bytes();
    assert_scanners_agree("containers.json", b);
    fn only_mm(name: &str) -> bool {
        name == "aten::mm"
    }
    let keeping = |b: &[u8], chunk, scan| match profscope::ingest::chrome_json::ingest_slice_keeping(
        "c.json",
        b,
        chunk,
        scan,
        Some(only_mm),
    ) {
        Ok(t) => format!("{t:?}"),
        Err(e) => format!("error: {e}"),
    };
    for chunk in [8 << 20, 4096, 97] {
        assert_eq!(
            keeping(b, chunk, ScanMode::Scalar),
            keeping(b, chunk, ScanMode::Indexed),
            "{chunk}"
        );
    }
    for cut in 1..=40 {
        let c = &b[..b.len() - cut];
        assert_eq!(
            keeping(c, 4096, ScanMode::Scalar),
            keeping(c, 4096, ScanMode::Indexed),
            "cut {cut}"
        );
    }
    // Counted from the generator: every event is a host op with recorded inputs; with only
    // aten::mm's kept (layouts 0, 2 and 4), the others keep their row with empty texts.
    let t = ingest_slice_scan("containers.json", b, 8 << 20, ScanMode::Scalar).unwrap();
    assert_eq!(t.events.len(), 900);
    assert_eq!(t.op_args.event.len(), 900);
    let dims = |t: &profscope::model::Tables, want: &str| {
        t.op_args
            .dims
            .iter()
            .filter(|&&d| t.strings.get(d) == want)
            .count()
    };
    assert_eq!(dims(&t, "[[1024, 1], [1, 128]]"), of_layout(0, 6, 900));
    assert_eq!(dims(&t, "[[1024, 1]]"), of_layout(1, 6, 900));
    assert_eq!(dims(&t, "[[1024, 1], []]"), of_layout(2, 6, 900));
    assert_eq!(dims(&t, "[ [1024, 1] , [1, 12] ]"), of_layout(3, 6, 900));
    let kept = profscope::ingest::chrome_json::ingest_slice_keeping(
        "c.json",
        b,
        8 << 20,
        ScanMode::Scalar,
        Some(only_mm),
    )
    .unwrap();
    assert_eq!(kept.op_args.event.len(), 900);
    assert_eq!(dims(&kept, "[[1024, 1]]"), 0);
    assert_eq!(dims(&kept, "[[1024, 1], []]"), of_layout(2, 6, 900));
    assert_eq!(dims(&kept, &p64), of_layout(4, 6, 900));
}
