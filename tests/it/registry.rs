//! The analysis registry (report::registry) is the one list of analyses: `--only`'s values and
//! help, the MCP `only` enum, the report's `analyses` keys and docs/analyses/ must all name the
//! same analyses. Inputs: the generated demo root (fixtures/demo) for the report keys.

use profscope::registry::{REGISTRY, names};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

fn run(args: &[&str], stdin: &str) -> String {
    let mut child = crate::common::profscope_command()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "profscope {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

fn set<'a>(v: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    v.into_iter().map(String::from).collect()
}

#[test]
fn registry_help_mcp_report_and_docs_agree() {
    let registry = set(names());
    assert_eq!(registry.len(), 19, "{registry:?}");
    assert_eq!(registry.len(), REGISTRY.len(), "a name is registered twice");

    // `--only` in `analyze --help`: every name with its help line.
    let help = run(&["analyze", "--help"], "");
    for a in REGISTRY {
        assert!(
            help.contains(a.name) && help.contains(a.help),
            "--help lacks {}: {}",
            a.name,
            a.help
        );
    }

    // The MCP analyze tool's `only` enum.
    let msgs = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n"
    );
    let out = run(&["mcp"], msgs);
    let list: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    let analyze = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "analyze")
        .unwrap();
    let only = analyze["inputSchema"]["properties"]["only"]["items"]["enum"]
        .as_array()
        .unwrap();
    assert_eq!(set(only.iter().map(|v| v.as_str().unwrap())), registry);

    // The report's `analyses` keys: every registered name, plus the three that are not `--only`
    // choices (the vendor self-audit, kernel_types' HTA-window twin, and the evidence the
    // verdict rests on, always computed).
    let report: Value =
        serde_json::from_str(&run(&["analyze", "--format", "json", "--quiet"], "")).unwrap();
    let keys = set(report["analyses"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str()));
    let mut expected = registry.clone();
    expected.extend(set([
        "vendor_agreement",
        "kernel_types_complete_steps",
        "evidence",
    ]));
    assert_eq!(keys, expected);

    // One page per analysis in docs/analyses/ (plus memory, which is its own command, and the
    // vendor self-audit).
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/analyses");
    let pages: BTreeSet<String> = std::fs::read_dir(docs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter_map(|n| n.strip_suffix(".md").map(String::from))
        .collect();
    let mut expected = registry;
    expected.extend(set(["memory", "vendor_agreement", "evidence"]));
    assert_eq!(pages, expected);
}

#[test]
fn only_runs_just_the_named_analyses() {
    // The demo root has device events, so every per-device analysis would fill its list.
    let all: Value =
        serde_json::from_str(&run(&["analyze", "--format", "json", "--quiet"], "")).unwrap();
    let some: Value = serde_json::from_str(&run(
        &[
            "analyze",
            "--format",
            "json",
            "--quiet",
            "--only",
            "bubbles,ranks",
        ],
        "",
    ))
    .unwrap();
    assert_eq!(some["analyses"]["bubbles"], all["analyses"]["bubbles"]);
    assert_eq!(some["analyses"]["ranks"], all["analyses"]["ranks"]);
    assert!(
        !all["analyses"]["device_time"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        some["analyses"]["device_time"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(some["analyses"]["batch_audit"].is_null());
    assert!(!all["analyses"]["batch_audit"].is_null());
}
