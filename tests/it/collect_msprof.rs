//! `collect msprof` against fixtures/collect/fake_msprof.sh, which follows CANN's documented
//! dynamic session (prompt, start / stop / quit answered with `Execution success`) and export.
//! Expected values: the fake writes one PROF_* folder with device_0 / rank_id 3 and one
//! 150-byte msprof_20260101000000.json (`wc -c`) whose SHA-256 was computed with `sha256sum`.

use crate::common::procs_mentioning;

use profscope::collect::msprof::{self, MsprofOpts};
use std::path::PathBuf;
use std::time::Duration;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-msprof-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn opts(work: &std::path::Path, mode: &str, workload: &str) -> MsprofOpts {
    let fake = std::path::absolute("fixtures/collect/fake_msprof.sh").unwrap();
    MsprofOpts {
        pid: 4242,
        output: work.join("out"),
        msprof: fake.display().to_string(),
        capture_args: vec![format!("--fake={mode}")],
        export_args: vec![format!("--fake={mode}")],
        workload_cmd: workload.into(),
        ready_timeout: Duration::from_secs(2),
        command_timeout: Duration::from_secs(5),
        workload_timeout: Duration::from_secs(10),
        exit_timeout: Duration::from_secs(1),
        export_timeout: Duration::from_secs(10),
        runs_dir: work.join("runs"),
        tag: "x".into(),
        knowledge: None,
    }
}

fn gates(m: &msprof::MsprofManifest) -> Vec<String> {
    m.error
        .as_ref()
        .map(|e| e.gates.clone())
        .unwrap_or_default()
}

const SHA: &str = "1b6dabf6d276f1cd0175ae711da86a7c9d7276c3ba7f9978537caf520a12c793";

#[test]
fn attach_capture_export_and_hash() {
    let w = tmp("ok");
    let m = msprof::run(&opts(&w, "ok", "echo workload ran"));
    assert_eq!(m.status, "ok", "{:?}", m.error);
    let steps: Vec<&str> = m.steps.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        steps,
        [
            "ready", "start", "workload", "stop", "quit", "exit", "export"
        ]
    );
    assert_eq!(m.prof_dirs.len(), 1);
    assert_eq!(m.timelines.len(), 1);
    let t = &m.timelines[0];
    assert_eq!((t.rank, t.device, t.size_bytes), (Some(3), Some(0), 150));
    assert_eq!(t.sha256, SHA);
    // Logs kept beside the manifest.
    let run_dir = std::path::Path::new(&m.logs[0])
        .parent()
        .unwrap()
        .to_path_buf();
    let cap = std::fs::read_to_string(run_dir.join("capture.log")).unwrap();
    assert!(
        cap.contains("Execution success, Started device Id: 0"),
        "{cap}"
    );
    assert_eq!(
        std::fs::read_to_string(run_dir.join("workload.log")).unwrap(),
        "workload ran\n"
    );
    assert!(
        std::fs::read_to_string(run_dir.join("export.log"))
            .unwrap()
            .contains("export done")
    );
    // analyze accepts the manifest and reads the exported timeline.
    let path = msprof::write(&m, &w.join("runs")).unwrap();
    let out = crate::common::profscope_command()
        .args(["analyze", "--quiet", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["summary"]["events"], 1, "{}", r["summary"]);
    let _ = std::fs::remove_dir_all(&w);
}

#[test]
fn every_gate() {
    let cases = [
        ("no_ready", "true", "msprof_not_ready"),
        ("start_fail", "true", "msprof_start_failed"),
        ("hang_quit", "true", "msprof_did_not_exit"),
        ("export_fail", "true", "export_failed"),
        ("no_timeline", "true", "no_timelines"),
        ("ok", "exit 7", "workload_failed"),
    ];
    for (mode, workload, gate) in cases {
        let w = tmp(mode);
        let m = msprof::run(&opts(&w, mode, workload));
        assert_eq!(m.status, "failed", "{mode}");
        assert_eq!(gates(&m)[0], gate, "{mode}: {:?}", m.error);
        // Whatever happened, no collector of this test is left running.
        let left = procs_mentioning(&w.join("out").display().to_string());
        assert!(left.is_empty(), "{mode}: collector left: {left:?}");
        let _ = std::fs::remove_dir_all(&w);
    }
    // A non-empty output directory is refused before attaching.
    let w = tmp("fresh");
    std::fs::create_dir_all(w.join("out/PROF_old")).unwrap();
    let m = msprof::run(&opts(&w, "ok", "true"));
    assert_eq!(gates(&m), ["output_not_fresh"]);
    assert!(m.steps.is_empty());
    let _ = std::fs::remove_dir_all(&w);
}
