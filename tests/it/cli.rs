//! The binary end to end: `analyze` with no path analyses the bundled demo root (generated,
//! fixtures/demo) in every format; errors exit 2 with the file named. Expected numbers come from
//! fixtures/demo/ground_truth.json (the generator's own bookkeeping).

fn profscope(args: &[&str]) -> std::process::Output {
    crate::common::profscope_command()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn truth() -> serde_json::Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/demo/ground_truth.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn analyze_without_path_reads_the_demo_root() {
    let out = profscope(&["analyze", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["schema_version"], "0.14.0");
    let a = &r["analyses"];
    for k in [
        "device_time",
        "bubbles",
        "step_sync",
        "top_events",
        "composition",
        "communication",
        "communication_ops",
        "dispatch",
        "phases",
        "batch_audit",
        "ranks",
        "cross_rank",
    ] {
        assert!(!a[k].is_null(), "analyses.{k}");
    }
    assert_eq!(a["batch_audit"]["fixed_batch_proven"], true);
    let truth = truth();
    let files = r["summary"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 4, "2 trace_view.json + 2 lmdeploy rank files");
    assert_eq!(r["summary"]["ranks"], serde_json::json!([0, 1]));
    // The vendor's `Overlap Analysis` events are read as per-device sums, not events (as a db's
    // OVERLAP_ANALYSIS rows are), and counted in the one info diagnostic that says so.
    let (mut want_x, mut want_overlap) = (0, 0);
    for rt in truth["ranks"].as_array().unwrap() {
        let by_process = rt["x_events_by_process"].as_object().unwrap();
        want_overlap += by_process["Overlap Analysis"].as_u64().unwrap();
        let x: u64 = by_process
            .iter()
            .filter(|(p, _)| *p != "Overlap Analysis")
            .map(|(_, v)| v.as_u64().unwrap())
            .sum();
        let k: u64 = rt["kineto_x_by_cat"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        want_x += x + k;
    }
    assert_eq!(r["summary"]["events"].as_u64().unwrap(), want_x);
    let diags = r["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{}", r["diagnostics"]);
    assert_eq!(diags[0]["code"], "vendor_overlap_as_sums");
    assert_eq!(diags[0]["severity"], "info");
    assert_eq!(diags[0]["count"].as_u64().unwrap(), want_overlap);
    assert!(want_overlap > 2000, "{want_overlap}");
}

#[test]
fn table_and_markdown_render() {
    let out = profscope(&["analyze", "--quiet"]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("Events per category") && s.contains("compute_kernel") && s.contains("Stream 2"),
        "{s}"
    );
    // Markdown fits a PR comment by default (the brief: at most 8000 bytes, filled by
    // importance, so the verdict, the advisor and the device time come before the inventory);
    // every section comes with --full.
    let out = profscope(&["analyze", "--format", "md"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.starts_with("# profscope report")
            && s.contains("## Verdict")
            && s.contains("## Advisor")
            && s.contains("## Device time"),
        "{s}"
    );
    assert!(s.len() <= 8000, "{} bytes", s.len());
    assert!(!s.contains("| compute_kernel |") && s.contains("more sections with `--full`"));
    let out = profscope(&["analyze", "--format", "md", "--full"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("| compute_kernel |"), "{s}");
}

#[test]
fn errors_exit_2_and_name_the_file() {
    let out = profscope(&["analyze", "no/such/path"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/path"));
    let out = profscope(&["analyze", "fixtures/demo/ground_truth.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Chrome trace"));
}

#[test]
fn only_runs_the_named_analyses() {
    let out = profscope(&[
        "analyze",
        "--quiet",
        "--format",
        "json",
        "--only",
        "bubbles,batch_audit",
    ]);
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &r["analyses"];
    assert_eq!(
        a["bubbles"].as_array().unwrap().len(),
        2,
        "one per demo device"
    );
    assert_eq!(a["device_time"].as_array().unwrap().len(), 0, "not run");
    assert!(a["batch_audit"].is_object());
    let out = profscope(&["analyze", "--quiet", "--only", "device_time"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Device time"));
    let out = profscope(&["analyze", "--quiet", "--only", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    // clap checks the names against the analysis registry and lists them.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value 'nope'"), "{err}");
    assert!(
        err.contains("cross_rank") && err.contains("dispatch"),
        "{err}"
    );
}

const LEVEL1: &str = "../shared/samples/ascend-pt/db/level1";

/// The table of the real db/level1 root as a reader sees it (issue 19): one spelling of µs, no
/// `us`; `--ascii` gives pure ASCII (`us`, `x`, `+--+` borders) with the same numbers; paths
/// relative to the input; counted nouns in the singular for one; communication against compute
/// as a multiple (rank 0: comm kernels 102.108 ms / compute kernels 8.903 ms = 11.47×, the
/// Device time and Communication rows); kernel families bounded to 10 rows plus `other`; the
/// phase validation of a capture with no vLLM markers in one line; HTA idle explained beside
/// the vendor's free time.
#[test]
fn tables_read_as_answers() {
    let out = profscope(&["analyze", "--quiet", LEVEL1]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains(" µs") && !s.contains(" us ") && !s.contains(" us)"),
        "{s}"
    );
    // One step cannot single out a rank (docs/evidence.md): the numbers, and no claim.
    assert!(
        s.contains("no rank stands out by device time (rank 1 slowest in 1 of 1 step;"),
        "{s}"
    );
    assert!(
        s.contains("1 step compared") && !s.contains("1 steps"),
        "{s}"
    );
    assert!(s.contains("11.5× compute-kernel time"), "{s}");
    assert!(!s.contains("1146.84%"), "{s}");
    assert!(s.contains("waiting inside collectives"), "{s}");
    assert!(
        s.contains(
            "Phase validation: no vLLM phase markers (forward_eager / forward_cudagraph) in 2 files"
        ),
        "{s}"
    );
    assert!(!s.contains("prefill valid"), "{s}");
    // Files (last): relative to the input.
    assert!(
        s.contains("│ rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
        "{s}"
    );
    // Families: the 25 distinct compute-kernel names of level1 (per device) fall in 15 families
    // by the mapping of families.rs (its unit test lists each real name's family): Foreach,
    // Convolution, TransData/Transpose, MatMul, Pooling, Copy/TensorMove, Elementwise (8 names,
    // 29 kernels), Reduce, Activation, Dropout, Softmax, MemSet, Loss, TopK/Sampling, Cast. So 10
    // rows and one `other (5 families)` per device.
    assert_eq!(s.matches("│ other (5 families)").count(), 2, "{s}");
    assert!(s.contains("family Foreach (optimizer)"), "{s}");
    for section in s.split("Compute-stream composition: ").skip(1) {
        let table = section.split("\n\n").next().unwrap();
        assert_eq!(table.matches("│ family ").count(), 10, "{table}");
    }

    let out = profscope(&["analyze", "--quiet", "--ascii", LEVEL1]);
    assert!(out.status.success());
    let a = String::from_utf8(out.stdout).unwrap();
    assert!(
        a.is_ascii(),
        "non-ASCII: {:?}",
        a.chars().find(|c| !c.is_ascii())
    );
    assert!(
        a.contains("11.5x compute-kernel time") && a.contains(" us"),
        "{a}"
    );
    assert!(a.contains("+--") && a.contains("| rank |"), "{a}");
    // The same lines apart from the spelling.
    assert_eq!(a.lines().count(), s.lines().count());
    // JSON is never changed by --ascii.
    let j1 = profscope(&["analyze", "--quiet", "--format", "json", LEVEL1]);
    let j2 = profscope(&["analyze", "--quiet", "--ascii", "--format", "json", LEVEL1]);
    let strip = |o: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(o).unwrap();
        for k in ["ingest_ms", "analysis_ms", "wall_ms"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    assert_eq!(strip(&j1.stdout), strip(&j2.stdout));
}

/// `../shared/samples/ascend-pt/db` holds three captures of ranks 0 and 1 (level0, level1,
/// level2): one is read whole, never a mix of ranks from two of them, and the headline says which
/// and names the two not read (their folders carry no timestamp, so the newest is by mtime, which
/// a copy can tie: the test asserts the rule, not which level wins).
#[test]
fn a_folder_of_several_captures_reads_one_and_says_so() {
    let out = profscope(&[
        "analyze",
        "--quiet",
        "--format",
        "json",
        "../shared/samples/ascend-pt/db",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<&str> = r["summary"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let level = |p: &str| {
        p.split("/db/")
            .nth(1)
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(level(files[0]), level(files[1]), "one capture: {files:?}");
    let read = level(files[0]);
    let line = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .find(|l| l.starts_with("read one capture, the newest:"))
        .unwrap_or_else(|| panic!("{}", r["headline"]));
    assert!(line.contains(&format!("/db/{read}")), "{line}");
    assert!(
        line.contains("2 other captures of the same ranks not read"),
        "{line}"
    );
    for other in ["level0", "level1", "level2"]
        .iter()
        .filter(|l| **l != read)
    {
        assert!(line.contains(&format!("/db/{other}")), "{line}");
    }
    let diag = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "other_capture_skipped")
        .unwrap();
    assert_eq!(diag["count"], 2);
    assert_eq!(diag["severity"], "warning");
}

/// A walk reads JSON only when it holds trace events: a pip package's `issue.json` (a JSON array
/// of objects without `ph`) and a list of numbers beside a real trace are not inputs.
#[test]
fn a_walk_reads_only_json_that_holds_trace_events() {
    let dir = std::env::temp_dir().join(format!("profscope-sniff-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("venv/lib/site-packages/pkg")).unwrap();
    std::fs::write(
        dir.join("venv/lib/site-packages/pkg/issue.json"),
        r#"[{"number": 12, "title": "crash on start", "labels": ["bug"]}]"#,
    )
    .unwrap();
    std::fs::write(dir.join("numbers.json"), "[1, 2, 3]").unwrap();
    std::fs::copy(
        "../shared/samples/ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        dir.join("trace_view.json"),
    )
    .unwrap();
    let out = profscope(&[
        "analyze",
        "--quiet",
        "--format",
        "json",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = r["summary"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("/trace_view.json")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--help` of every subcommand documents every option (issue 19: `--tp`, `--dp`, `--quiet`,
/// `--expert-parallel`, `--compare-*` had none), `--only` lists every analysis, and the top-level
/// help names both exports.
#[test]
fn help_describes_every_option() {
    for sub in [
        "analyze",
        "memory",
        "export",
        "diff",
        "report",
        "weights",
        "query",
        "synth",
        "collect case",
        "collect msprof",
        "collect verify",
        "collect archive",
        "collect analyse",
    ] {
        let mut args: Vec<&str> = sub.split(' ').collect();
        args.push("--help");
        let out = profscope(&args);
        assert!(out.status.success(), "{sub}");
        let h = String::from_utf8(out.stdout).unwrap();
        // Every option has words after its name, beyond clap's own `[default: …]` /
        // `[possible values: …]` (on its line, or on the next when clap wraps).
        let lines: Vec<&str> = h.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            if !t.starts_with("--") {
                continue;
            }
            let rest = t.split_once("  ").map_or("", |x| x.1);
            let words: String = rest
                .split('[')
                .map(|p| p.split_once(']').map_or(p, |x| x.1))
                .collect();
            let next = lines.get(k + 1).map_or("", |l| l.trim());
            let documented = !words.trim().is_empty()
                || (!next.is_empty() && !next.starts_with('-') && !next.starts_with('['));
            assert!(documented, "{sub}: undocumented `{}`", t);
        }
    }
    let h = String::from_utf8(profscope(&["analyze", "--help"]).stdout).unwrap();
    assert!(
        h.contains("cross_rank") && h.contains("communication_ops"),
        "{h}"
    );
    assert!(
        String::from_utf8(profscope(&["--help"]).stdout)
            .unwrap()
            .contains("--parquet")
    );
}
