//! The two JSON tokenisers give identical tables: the indexed scanner (the SIMD structural
//! pre-pass, src/ingest/chrome_json/structural.rs, with the fastest kernel of this CPU,
//! `PROFSCOPE_JSON_SCAN=indexed`) and the scalar one (the default). Identical means the whole
//! `Tables` value, every column and every interned string (`{:?}` of both), or the same error
//! text. Inputs: every `.json` and `.json.gz` file under ../shared/samples (real files; the
//! non-trace JSON among them must fail the same way in both modes), at the default chunk size and
//! at 4 KiB chunks, plus generated strings that cross the index's blocks and windows with
//! backslash runs of every length.

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
