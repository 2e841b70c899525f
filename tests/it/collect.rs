//! `profscope collect verify|archive` on the real sample roots (../shared/samples/ascend-pt:
//! db/level* hold two rank folders each with ascend_pytorch_profiler_<r>.db; text/level* hold
//! trace_view.json and kernel_details.csv) and on damaged copies built from them by the test
//! (links to the real files, plus an empty and a non-database db written here).

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn profscope(args: &[&str]) -> (i32, Value) {
    let out = crate::common::profscope_command()
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (code, v)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn statuses(v: &Value) -> Vec<(i64, String)> {
    v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rank"].as_i64().unwrap(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn ok2() -> Vec<(i64, String)> {
    vec![(0, "ok".into()), (1, "ok".into())]
}

#[test]
fn verify_real_roots() {
    let root = common::samples_dir().join("ascend-pt");
    for level in ["level0", "level1", "level2"] {
        let db = root.join("db").join(level);
        let (code, v) = profscope(&["collect", "verify", s(&db), "--expected-ranks", "2"]);
        assert_eq!((code, v["status"].as_str()), (0, Some("ok")), "{level}");
        assert_eq!(v["expected_output_kind"], "db");
        assert_eq!(statuses(&v), ok2());
        let (code, v) = profscope(&["collect", "verify", s(&db), "--expected-ranks", "4"]);
        assert_eq!(code, 1);
        assert_eq!(
            v["gates_failed"],
            serde_json::json!(["rank_count_mismatch"])
        );
        assert_eq!(v["rank_count"], 2);

        let text = root.join("text").join(level);
        let (code, v) = profscope(&[
            "collect",
            "verify",
            s(&text),
            "--expected-ranks",
            "2",
            "--export",
            "text",
        ]);
        assert_eq!(code, 0, "{level}");
        assert_eq!(v["expected_output_kind"], "csv");
        assert_eq!(statuses(&v), ok2());
        // A text-only root verified for a db export: no db in any rank.
        let (code, v) = profscope(&["collect", "verify", s(&text), "--export", "db"]);
        assert_eq!(code, 1);
        assert_eq!(v["gates_failed"], serde_json::json!(["rank_not_ok"]));
        assert_eq!(v["ranks"][0]["status"], "partial");
    }
}

fn link(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(from, to).unwrap();
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-collect-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn verify_flags_each_broken_rank() {
    let real = common::samples_dir().join("ascend-pt");
    let dir = temp("broken");
    // rank 0: the real db. rank 1: an empty db. rank 2: a db that is not a database.
    link(
        &real.join("db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
        &dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"),
    );
    for r in [1, 2] {
        let out = dir.join(format!("rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        std::fs::create_dir_all(&out).unwrap();
        let body: &[u8] = if r == 1 {
            b""
        } else {
            b"not a database at all"
        };
        std::fs::write(out.join(format!("ascend_pytorch_profiler_{r}.db")), body).unwrap();
    }
    for r in 0..3 {
        std::fs::write(
            dir.join(format!("rank{r}_ascend_pt/profiler_info_{r}.json")),
            "{}",
        )
        .unwrap();
    }
    let (code, v) = profscope(&["collect", "verify", s(&dir), "--expected-ranks", "3"]);
    assert_eq!(code, 1);
    assert_eq!(v["gates_failed"], serde_json::json!(["rank_not_ok"]));
    assert_eq!(
        statuses(&v),
        vec![
            (0, "ok".into()),
            (1, "partial".into()),
            (2, "partial".into())
        ]
    );
    assert!(
        v["ranks"][1]["problems"][0]
            .as_str()
            .unwrap()
            .ends_with("is empty")
    );
    assert!(
        v["ranks"][2]["problems"][0]
            .as_str()
            .unwrap()
            .contains("ascend_pytorch_profiler_2.db")
    );

    // A text export whose kernel_details.csv never landed.
    let text = temp("nokd");
    link(
        &real.join("text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        &text.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
    );
    let (code, v) = profscope(&["collect", "verify", s(&text), "--export", "text"]);
    assert_eq!(code, 1);
    assert_eq!(v["ranks"][0]["status"], "missing_kernel_details");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&text);
}

/// Two captures of rank 0 in one folder (an earlier run left behind, real db linked twice): the
/// gate fails with `duplicate_rank`, and the older folder names the one `analyze` reads instead
/// (the newer by the timestamp in the folder name; rank 1 has one folder and names none).
#[test]
fn verify_names_the_capture_analyze_reads_for_a_duplicate_rank() {
    let real = common::samples_dir().join("ascend-pt/db/level1");
    let dir = temp("dup");
    let (old, new) = (
        "h_1_20250109075448123_ascend_pt",
        "h_1_20250109081500001_ascend_pt",
    );
    for (folder, r) in [(old, 0), (new, 0), ("h_2_20250109081500002_ascend_pt", 1)] {
        let src = real.join(format!("rank{r}_ascend_pt"));
        let db = format!("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db");
        link(&src.join(&db), &dir.join(folder).join(&db));
        let info = format!("profiler_info_{r}.json");
        link(&src.join(&info), &dir.join(folder).join(&info));
    }
    let (code, v) = profscope(&["collect", "verify", s(&dir), "--expected-ranks", "3"]);
    assert_eq!(code, 1);
    assert_eq!(v["gates_failed"], serde_json::json!(["duplicate_rank"]));
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    assert!(ranks[0]["dir"].as_str().unwrap().ends_with(old));
    assert_eq!(ranks[0]["superseded_by"].as_str(), Some(s(&dir.join(new))));
    assert!(ranks[1].get("superseded_by").is_none());
    assert!(ranks[2].get("superseded_by").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn archive_is_a_valid_root_and_a_copy_failure_keeps_status_ok() {
    let src = common::samples_dir().join("ascend-pt/db/level1");
    let to = temp("archive");
    let (code, v) = profscope(&[
        "collect",
        "archive",
        s(&src),
        "--expected-ranks",
        "2",
        "--to",
        s(&to),
        "--tag",
        "tp2",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["archived"], true);
    assert!(v["archive_error"].is_null());
    let dir = PathBuf::from(v["archive_dir"].as_str().unwrap());
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("tp2_")
    );
    // The archive verifies, and analyses to the same events per rank as the source.
    let (code, _) = profscope(&["collect", "verify", s(&dir), "--expected-ranks", "2"]);
    assert_eq!(code, 0);
    let events = |root: &Path| -> Vec<(i32, u64)> {
        let t = common::ingest(root);
        let r = profscope::analysis::ranks::compute(&t, None);
        r.rows
            .iter()
            .map(|x| (x.rank, x.device_events + x.host_events))
            .collect()
    };
    assert_eq!(events(&dir), events(&src));
    // profiler_info_<r>.json travelled with each rank.
    assert!(dir.join("rank1_ascend_pt/profiler_info_1.json").is_file());

    // Archive into a path that cannot be a folder (a regular file): recorded, status stays ok.
    let blocker = to.join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let (code, v) = profscope(&["collect", "archive", s(&src), "--to", s(&blocker)]);
    assert_eq!(code, 0);
    assert_eq!(
        (v["status"].as_str(), v["archived"].as_bool()),
        (Some("ok"), Some(false))
    );
    assert!(v["archive_error"].as_str().unwrap().contains("not-a-dir"));
    assert!(v["ranks"][0]["archived_path"].is_null());
    let _ = std::fs::remove_dir_all(&to);
}
