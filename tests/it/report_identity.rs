//! The reports of every real sample root and of the demo, byte for byte, against what the binary
//! wrote at commit 902331d (before the redesign of issue 22): the JSON report (the three timing
//! fields `ingest_ms`, `analysis_ms`, `wall_ms` masked), the full Markdown report and the HTML
//! page (every render section), and the `memory` report (JSON and table) of five real evidence
//! sets. Inputs: the real roots and files of ../shared/samples (listed in `ROOTS` and
//! `MEMORY_CASES`) and the generated demo (fixtures/demo).
//!
//! This is a golden-master test, not an oracle: the numbers in these reports are checked against
//! peers and independent computations by the other modules (msprof_analyze_agreement,
//! hta_agreement, vendor_agreement, real_traces, …). What it asserts is that a change meant to be
//! behaviour-neutral (moving code between layers, enums for strings, one driver) leaves every
//! report unchanged, down to field order and float formatting. Two runs of the same binary give
//! identical masked reports (checked when the files were made). A change that is meant to alter
//! a report re-blesses with `BLESS=1 cargo test --release --test it report_identity::` and says
//! why in its commit; `PROFSCOPE_BIN=<binary of the commit before>` runs that binary instead (to
//! bless from the code before a refactor).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Roots and files, relative to the crate root. Every one is a real capture except the demo.
pub(crate) const ROOTS: &[&str] = &[
    "fixtures/demo",
    "../shared/samples/ascend-pt/db/level0",
    "../shared/samples/ascend-pt/db/level1",
    "../shared/samples/ascend-pt/db/level2",
    "../shared/samples/ascend-pt/text/level0",
    "../shared/samples/ascend-pt/text/level1",
    "../shared/samples/ascend-pt/text/level2",
    "../shared/samples/ascend-pt/msprof_0.db",
    "../shared/samples/ascend-msprof-legacy/PROF_000001_20230818142704322_COJGGGCANRMICFBC",
    "../shared/samples/ascend-msprof-legacy/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA",
    "../shared/samples/ascend-misc/mstt",
    "../shared/samples/torch-cpu/torch_cpu_tiny_transformer_trace.json.gz",
    "../shared/samples/ascend-timeline/mstt-trace_view_prefix_host-only_first16-events.json",
    "../shared/samples/torch-traces/amd_trace",
    "../shared/samples/torch-traces/call_stack",
    "../shared/samples/torch-traces/cpu_only",
    "../shared/samples/torch-traces/critical_path",
    "../shared/samples/torch-traces/cupti_profiler",
    "../shared/samples/torch-traces/df_index_resolver",
    "../shared/samples/torch-traces/distributed_info_unavailable",
    "../shared/samples/torch-traces/execution_trace",
    "../shared/samples/torch-traces/mixed_files",
    "../shared/samples/torch-traces/mtia_inference_trace",
    "../shared/samples/torch-traces/mtia_trace_single_rank",
    "../shared/samples/torch-traces/nccl_parser_config",
    "../shared/samples/torch-traces/negative_queue_length_values_check",
    "../shared/samples/torch-traces/ns_resolution_trace",
    "../shared/samples/torch-traces/rank_non_gpu",
    "../shared/samples/torch-traces/rank_unavailable",
    "../shared/samples/torch-traces/timeline_analysis",
    "../shared/samples/torch-traces/trace_compare",
    "../shared/samples/torch-traces/trace_diff",
    "../shared/samples/torch-traces/trace_file_list",
    "../shared/samples/torch-traces/trace_filter",
    "../shared/samples/torch-traces/triton_example",
    "../shared/samples/torch-traces/with_gpu_user_annotation",
];

const TIMING_KEYS: &[&str] = &["\"ingest_ms\": ", "\"analysis_ms\": ", "\"wall_ms\": "];

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Real memory evidence sets: a name and the `profscope memory` arguments.
const MEMORY_CASES: &[(&str, &[&str])] = &[
    (
        "4661-dp2-tp8-ep",
        &[
            "../shared/samples/npu-smi/vllm-ascend-4661_a2-910b2_8card_vllmworker-dp_npu-smi-24.1.rc2.1.txt",
            "../shared/samples/vllm-logs/vllm-ascend-4661_v0.11.0rc2_qwen3-235b_dp2-tp8-ep_torchair_weights-excerpt.log",
            "--tp",
            "8",
            "--dp",
            "2",
            "--expert-parallel",
        ],
    ),
    (
        "5606-tp2",
        &[
            "../shared/samples/npu-smi/vllm-ascend-5606_a2-910b4-1_2card_vllmworker-tp_npu-smi-25.2.2.txt",
            "--tp",
            "2",
        ],
    ),
    (
        "a3-16die",
        &[
            "../shared/samples/npu-smi/vllm-ascend-3548_a3-16die_procs-unnamed-multi-per-chip_npu-smi-25.3.rc1.txt",
            "../shared/samples/npu-smi/vllm-ascend-5784_a3-16die_idle_npu-smi-25.2.1.txt",
        ],
    ),
    (
        "843-qwen-index-tp4",
        &[
            "../shared/samples/npu-smi/vllm-ascend-843_a2-910b4_4card-visible_procs_npu-smi-23.0.6.txt",
            "../shared/samples/safetensors/Qwen3.5-18B-REAP-A3B-Coding_model.safetensors.index.json",
            "--tp",
            "4",
        ],
    ),
    (
        "ascend-pt-text-level1",
        &["../shared/samples/ascend-pt/text/level1"],
    ),
];

fn expected_file(root: &str, ext: &str) -> PathBuf {
    let name: String = root
        .trim_start_matches("../shared/samples/")
        .chars()
        .map(|c| if c == '/' || c == '.' { '_' } else { c })
        .collect();
    crate_root().join(format!("tests/expected/reports/{name}.{ext}.gz"))
}

fn binary() -> PathBuf {
    std::env::var_os("PROFSCOPE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_profscope")))
}

/// stdout of `profscope <args>` run from the crate root; it must succeed.
fn stdout_of(args: &[&str]) -> String {
    // PROFSCOPE_BIN may name another build (to compare two builds' reports).
    let out = std::process::Command::new(binary())
        .env("PROFSCOPE_NO_CACHE", "1")
        .current_dir(crate_root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "profscope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The report with each timing field's value replaced by `null` (the report is pretty-printed,
/// one field per line; a trailing comma is kept).
fn masked(report: &str) -> String {
    let mut out = String::with_capacity(report.len());
    for line in report.lines() {
        let trimmed = line.trim_start();
        match TIMING_KEYS.iter().find(|k| trimmed.starts_with(**k)) {
            Some(key) => {
                let indent = &line[..line.len() - trimmed.len()];
                let comma = if trimmed.ends_with(',') { "," } else { "" };
                out.push_str(&format!("{indent}{key}null{comma}"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The outputs checked per root: (file extension, output).
fn outputs_of(root: &str) -> Vec<(&'static str, String)> {
    let html = std::env::temp_dir().join(format!(
        "profscope-identity-{}-{}.html",
        std::process::id(),
        root.replace(['/', '.'], "_")
    ));
    stdout_of(&["report", root, "--html", html.to_str().unwrap(), "--quiet"]);
    let page = std::fs::read_to_string(&html).unwrap();
    let _ = std::fs::remove_file(&html);
    vec![
        (
            "json",
            masked(&stdout_of(&[
                "analyze", root, "--format", "json", "--quiet",
            ])),
        ),
        (
            "md",
            stdout_of(&["analyze", root, "--format", "md", "--full", "--quiet"]),
        ),
        ("html", page),
    ]
}

/// Compares (or with BLESS=1 writes) one output; a difference is described in `changed`.
fn check(name: &str, ext: &str, actual: &str, changed: &mut Vec<String>) {
    let file = expected_file(name, ext);
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        write_gz(&file, actual);
        return;
    }
    let expected = read_gz(&file);
    if expected != actual {
        changed.push(format!(
            "{name} ({ext}): {}",
            first_difference(&expected, actual)
        ));
    }
}

fn read_gz(path: &Path) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

fn write_gz(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::best(),
    );
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
}

/// The first line that differs, with the two lines and the key path above it.
fn first_difference(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
    let at = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let context: Vec<&str> = e[at.saturating_sub(6)..at].to_vec();
    format!(
        "line {} (expected {} lines, got {}):\n  …{}\n  expected: {}\n  actual:   {}",
        at + 1,
        e.len(),
        a.len(),
        context.join("\n  …"),
        e.get(at).unwrap_or(&"<end>"),
        a.get(at).unwrap_or(&"<end>")
    )
}

#[test]
fn every_sample_report_is_unchanged() {
    let mut changed = Vec::new();
    for root in ROOTS {
        assert!(crate_root().join(root).exists(), "{root} is missing");
        for (ext, actual) in outputs_of(root) {
            check(root, ext, &actual, &mut changed);
        }
    }
    assert!(
        changed.is_empty(),
        "{} of {} outputs changed (re-bless with BLESS=1 only when the change is meant):\n{}",
        changed.len(),
        ROOTS.len() * 3,
        changed.join("\n\n")
    );
}

#[test]
fn every_memory_report_is_unchanged() {
    let mut changed = Vec::new();
    for (name, args) in MEMORY_CASES {
        let name = format!("memory_{name}");
        let mut json = vec!["memory", "--format", "json"];
        json.extend_from_slice(args);
        check(&name, "json", &stdout_of(&json), &mut changed);
        let mut table = vec!["memory"];
        table.extend_from_slice(args);
        check(&name, "txt", &stdout_of(&table), &mut changed);
    }
    assert!(
        changed.is_empty(),
        "{} memory outputs changed (re-bless with BLESS=1 only when the change is meant):\n{}",
        changed.len(),
        changed.join("\n\n")
    );
}

#[test]
fn masking_touches_only_the_timing_fields() {
    let report = "{\n  \"ingest_ms\": 7.6,\n  \"x_ms\": 3,\n  \"wall_ms\": 9.1\n}\n";
    assert_eq!(
        masked(report),
        "{\n  \"ingest_ms\": null,\n  \"x_ms\": 3,\n  \"wall_ms\": null\n}\n"
    );
}
