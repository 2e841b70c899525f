//! The vendor self-audit end to end, on generated inputs written here (not real files): a
//! trace_view.json-shaped trace with two AI_CORE kernels on one stream, 100 µs each at 1000 µs
//! and 1200 µs, so by the vendor's definitions computing = 200 µs, window = 300 µs, free = 100 µs
//! (hand-derived), plus the vendor's `Overlap Analysis` rows. In the agreeing copy the vendor's
//! rows say the same; in the disagreeing copy its Free row says 50 µs: 50 µs off, 16.67% of the
//! window, over the 1% tolerance.
//!
//! The real-input side (the legacy CANN root agrees to a few ns) is in tests/it/legacy_msprof.rs.

use std::path::{Path, PathBuf};

fn profscope(args: &[&str]) -> std::process::Output {
    crate::common::profscope_command()
        .args(args)
        .output()
        .unwrap()
}

fn trace(vendor_free_us: u32) -> String {
    let m = |pid: u32, tid: u32, what: &str, name: &str| {
        let key = if what == "process_labels" {
            "labels"
        } else {
            "name"
        };
        format!(
            r#"{{"name":"{what}","ph":"M","pid":{pid},"tid":{tid},"args":{{"{key}":"{name}"}}}}"#
        )
    };
    let x = |pid: u32, tid: u32, name: &str, ts: u32, dur: u32, args: &str| {
        format!(
            r#"{{"name":"{name}","ph":"X","pid":{pid},"tid":{tid},"ts":"{ts}.000","dur":{dur},"args":{{{args}}}}}"#
        )
    };
    let task = r#""Task Type":"AI_CORE","Physic Stream Id":2"#;
    let ev = [
        m(1, 0, "process_name", "Ascend Hardware"),
        m(1, 0, "process_labels", "NPU"),
        m(1, 2, "thread_name", "Stream 2"),
        x(1, 2, "MatMulV2", 1000, 100, task),
        x(1, 2, "MatMulV2", 1200, 100, task),
        m(9, 0, "process_name", "Overlap Analysis"),
        m(9, 0, "process_labels", "NPU"),
        m(9, 0, "thread_name", "Computing"),
        m(9, 1, "thread_name", "Communication"),
        m(9, 2, "thread_name", "Communication(Not Overlapped)"),
        m(9, 3, "thread_name", "Free"),
        x(9, 0, "Computing", 1000, 100, ""),
        x(9, 0, "Computing", 1200, 100, ""),
        x(9, 3, "Free", 1100, vendor_free_us, ""),
    ];
    format!("[{}]", ev.join(",\n"))
}

fn root(name: &str, vendor_free_us: u32) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profscope-vendor-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("trace_view.json"), trace(vendor_free_us)).unwrap();
    dir
}

fn run(dir: &Path, format: &str) -> String {
    let out = profscope(&[
        "analyze",
        "--quiet",
        "--format",
        format,
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_disagreement_is_a_warning_and_the_first_line_of_every_format() {
    let dir = root("disagree", 50);
    let j: serde_json::Value = serde_json::from_str(&run(&dir, "json")).unwrap();
    let v = &j["analyses"]["vendor_agreement"];
    assert_eq!(v["devices_checked"], 1);
    assert_eq!(v["devices_disagreeing"], 1);
    let free = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "free")
        .unwrap();
    assert_eq!(free["ours_ns"], 100_000);
    assert_eq!(free["vendor_ns"], 50_000);
    assert_eq!(free["window_ns"], 300_000);
    assert_eq!(free["agrees"], false);
    let pct = free["diff_pct_of_window"].as_f64().unwrap();
    assert!((pct - 100.0 / 6.0).abs() < 1e-9, "{pct}");
    // Computing agrees (200 µs both).
    let computing = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "computing")
        .unwrap();
    assert_eq!(computing["ours_ns"], 200_000);
    assert_eq!(computing["agrees"], true);
    let verdict = j["vendor_verdict"].as_str().unwrap();
    assert!(verdict.starts_with("DISAGREES"), "{verdict}");
    assert!(
        verdict.contains("free") && verdict.contains("0.100 ms") && verdict.contains("0.050 ms")
    );
    let d = j["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "vendor_disagreement")
        .expect("a vendor_disagreement diagnostic");
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["count"], 1);
    assert!(
        d["examples"][0]
            .as_str()
            .unwrap()
            .contains("ours 100000 ns, vendor 50000 ns")
    );
    // The verdict comes before any section in the human formats.
    let table = run(&dir, "table");
    let at = table.find(verdict).expect("verdict in the table output");
    assert!(at < table.find("inputs:").unwrap(), "{table}");
    // JSON: the same line is in the headline, which comes before every section.
    assert!(
        j["headline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == verdict)
    );
    let md = run(&dir, "md");
    let first_section = md.find("\n## ").unwrap_or(md.len());
    let at = md.find(verdict).expect("verdict in Markdown");
    assert!(at < first_section);
    let html_path = dir.join("report.html");
    let out = profscope(&[
        "report",
        dir.to_str().unwrap(),
        "--html",
        html_path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&html_path).unwrap();
    let at = html.find("DISAGREES").expect("verdict in HTML");
    assert!(at < html.find("<h2>").unwrap_or(html.len()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn agreement_says_so_and_no_input_says_there_is_nothing_to_check() {
    let dir = root("agree", 100);
    let j: serde_json::Value = serde_json::from_str(&run(&dir, "json")).unwrap();
    let verdict = j["vendor_verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with(
            "agrees with the vendor (Overlap Analysis) within 0.00% of the window on 1 of 1 devices"
        ),
        "{verdict}"
    );
    assert!(
        j["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["code"] != "vendor_disagreement")
    );
    // Without Overlap Analysis rows there is nothing to check, and the verdict says so.
    let text = trace(100);
    let cut = text
        .find(r#"{"name":"process_name","ph":"M","pid":9"#)
        .unwrap();
    let bare = format!("{}]", text[..cut].trim_end().trim_end_matches(','));
    std::fs::write(dir.join("trace_view.json"), bare).unwrap();
    let j: serde_json::Value = serde_json::from_str(&run(&dir, "json")).unwrap();
    assert!(
        j["vendor_verdict"]
            .as_str()
            .unwrap()
            .contains("no vendor numbers"),
        "{}",
        j["vendor_verdict"]
    );
    assert_eq!(j["analyses"]["vendor_agreement"]["devices_checked"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}
