//! Clock offsets and collective matching by identity (issue 43), on variants of real roots
//! written to temporary folders (the samples are never touched):
//! - text/level1 (real torch_npu text export, 2 ranks, 4 `hcom_allReduce` ops) with every `ts`
//!   of rank 1's trace_view.json and every `Start Time(us)` of its kernel_details.csv moved by
//!   +60 s (one host's clock off by a minute), exactly, as decimal strings;

//! - the legacy CANN root (real MindSpore 2-device msprof, 10 `Default/AllReduce-op534_0` ops,
//!   one name repeated) with rank 1's first AllReduce removed (a warm-up op only one rank ran).
//!
//! Expected values come from the raw files, read here or by hand with python3 (json module):
//! rank 1 of text/level1 ends its 4 ops 6.636, 7.096, 14.796 and 9.176 µs before rank 0 (Group
//! 0 Communication events, ts + dur), so the offset estimate of the shifted root is 60 s minus
//! their median, 8.136 µs.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-clocks-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn analyze(path: &Path) -> Value {
    common::profscope_json(&[
        "analyze",
        "--quiet",
        "--no-cache",
        "--top",
        "100",
        "--format",
        "json",
        path.to_str().unwrap(),
    ])
}

/// Every `"ts": "<int>.<frac>"` / `"ts": <int>.<frac>` of a Chrome trace moved by `by_us`
/// whole microseconds, on the text (no float rounding).
fn shift_ts(text: &str, by_us: i64) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"ts\":") {
        let (head, tail) = rest.split_at(at + 5);
        out.push_str(head);
        let blanks = tail.len() - tail.trim_start().len();
        out.push_str(&tail[..blanks]);
        let tail = &tail[blanks..];
        let quoted = tail.starts_with('"');
        let body = if quoted { &tail[1..] } else { tail };
        let digits = body.find(|c: char| !c.is_ascii_digit()).unwrap();
        let int: i64 = body[..digits].parse().unwrap();
        if quoted {
            out.push('"');
        }
        out.push_str(&(int + by_us).to_string());
        rest = &body[digits..];
    }
    out.push_str(rest);
    out
}

/// kernel_details.csv's `Start Time(us)` (the 9th column, before any quoted cell; values like
/// `1736408883709301.270<TAB>`) moved by `by_us` whole microseconds, on the text: the exporter
/// writes it from the same clock as trace_view.json, so a host a minute off is off in both.
fn shift_csv_starts(text: &str, by_us: i64) -> String {
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let col = header
        .split(',')
        .position(|h| h == "Start Time(us)")
        .unwrap();
    let mut out = format!("{header}\n");
    for line in lines {
        let mut cells: Vec<&str> = line.splitn(col + 2, ',').collect();
        let cell = cells[col];
        let dot = cell.find('.').unwrap();
        let int: i64 = cell[..dot].parse().unwrap();
        let moved = format!("{}{}", int + by_us, &cell[dot..]);
        cells[col] = &moved;
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

fn cohort(r: &Value) -> &Value {
    &r["analyses"]["cross_rank"]["cohorts"][0]
}

#[test]
fn a_rank_a_minute_off_is_corrected_and_every_cross_rank_number_stays() {
    let level1 = common::samples_dir().join("ascend-pt/text/level1");
    let dir = tmp("minute");
    common::copy_dir(&level1, &dir);
    let tv = dir.join("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let text = std::fs::read_to_string(&tv).unwrap();
    let shifted = shift_ts(&text, 60_000_000);
    assert_ne!(shifted, text);
    std::fs::write(&tv, shifted).unwrap();
    let kd = dir.join("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    let csv = std::fs::read_to_string(&kd).unwrap();
    std::fs::write(&kd, shift_csv_starts(&csv, 60_000_000)).unwrap();

    let base = analyze(&level1);
    let moved = analyze(&dir);
    let (b, m) = (cohort(&base), cohort(&moved));

    // Unshifted: rank 1's offset (-8.136 µs) is within the 20 µs floor: left alone.
    let bc = &b["clock"]["ranks"][0];
    assert_eq!(bc["status"], "within_noise");
    assert_eq!(bc["estimate_ns"], -8_136);
    assert_eq!(bc["applied_ns"], 0);
    assert_eq!(bc["collectives"], 4);
    // Shifted: the minute is found and corrected, with its spread and support.
    let mc = &m["clock"]["ranks"][0];
    assert_eq!(mc["status"], "corrected");
    assert_eq!(mc["estimate_ns"], 60_000_000_000i64 - 8_136);
    assert_eq!(mc["applied_ns"], 60_000_000_000i64 - 8_136);
    assert_eq!(mc["spread_ns"], bc["spread_ns"]);
    assert_eq!(mc["collectives"], 4);
    let diag: Vec<&Value> = moved["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "clock_offset")
        .collect();
    assert_eq!(diag.len(), 1);
    assert!(
        diag[0]["examples"][0]
            .as_str()
            .unwrap()
            .contains("rank 1: clock +59999991864 ns against rank 0"),
        "{}",
        diag[0]
    );
    // Not disjoint once corrected, so the cross-rank claims are made as for the original.
    assert_eq!(moved["analyses"]["ranks"]["disjoint"], Value::Array(vec![]));
    assert_eq!(
        moved["verdict"]["cross_rank_status"],
        base["verdict"]["cross_rank_status"]
    );
    assert_eq!(m["waited_for"]["statement"], b["waited_for"]["statement"]);
    assert_eq!(m["slowest"]["statement"], b["slowest"]["statement"]);
    for k in ["with_one_last", "matched", "unmatched"] {
        assert_eq!(m["collectives"][k], b["collectives"][k], "{k}");
    }
    // Every time compared across ranks moves by at most the uncorrected 8.136 µs.
    let noise = 8_136.0;
    let close = |x: &Value, y: &Value, what: &str| {
        let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
        assert!((x - y).abs() <= noise, "{what}: {x} vs {y}");
    };
    for k in ["skew_mean_ns", "skew_p50_ns", "skew_max_ns"] {
        close(&m["collectives"][k], &b["collectives"][k], k);
    }
    close(
        &m["waited_for"]["mean_lateness_ns"],
        &b["waited_for"]["mean_lateness_ns"],
        "lateness",
    );
    close(
        &m["widest_steps"][0]["start_spread_ns"],
        &b["widest_steps"][0]["start_spread_ns"],
        "step start spread",
    );
    // Durations do not move at all.
    for r in 0..2 {
        for k in [
            "step_mean_ns",
            "computing_ns",
            "collective_wait_ns",
            "collective_transit_ns",
        ] {
            assert_eq!(m["ranks"][r][k], b["ranks"][r][k], "rank {r} {k}");
        }
    }
    // The headline says the same but for the warning line naming the correction.
    let hb = base["headline"].as_array().unwrap();
    let hm = moved["headline"].as_array().unwrap();
    assert_eq!(hb.len(), hm.len());
    assert_eq!(hb[..hb.len() - 1], hm[..hm.len() - 1]);
    assert!(
        hm.last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("clock_offset")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_warm_up_collective_on_one_rank_does_not_shift_the_pairing() {
    let legacy = common::samples_dir().join("ascend-msprof-legacy");
    let dir = tmp("warmup");
    common::copy_dir(&legacy, &dir);
    let first = dir
        .join("PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1/timeline/msprof_1_0_1.json");
    let text = std::fs::read_to_string(&first).unwrap();
    let a = text
        .find("{\"name\": \"Default/AllReduce-op534_0\"")
        .unwrap();
    let mut b = a + text[a..].find('}').unwrap() + 1;
    if text[b..].starts_with(", ") {
        b += 2;
    }
    std::fs::write(&first, format!("{}{}", &text[..a], &text[b..])).unwrap();

    let base = analyze(&legacy);
    let cut = analyze(&dir);
    let g = &cohort(&cut)["groups"]["groups"][0];
    assert_eq!(g["matched"], 9);
    assert_eq!(g["unmatched"], 1);
    assert_eq!(g["unmatched_names"][0][0], "Default/AllReduce-op534_0");
    assert_eq!(g["unmatched_names"][0][1], 1);
    assert_eq!(g["realigned"], 1);
    // Each remaining op pairs with the op it paired with before: same occurrence, same skew,
    // same first and last rank.
    let ops = |r: &Value| -> Vec<(u64, i64, i64, i64)> {
        let mut v: Vec<(u64, i64, i64, i64)> = cohort(r)["collectives"]["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["occurrence"].as_u64().unwrap(),
                    t["skew_ns"].as_i64().unwrap(),
                    t["first_rank"].as_i64().unwrap(),
                    t["last_rank"].as_i64().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = ops(&base);
    let after = ops(&cut);
    assert_eq!(before.len(), 10);
    assert_eq!(after[..], before[1..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// torch_npu's `parallel_group_info` names what a group is for: the real db/level1 root with a
/// META_DATA row added (msprof-analyze's layout: the HCCL group name -> {group_name, group_rank,
/// global_ranks}), and the text/level1 root with a profiler_metadata.json carrying it.
#[test]
fn parallel_group_info_names_the_group_kind() {
    let db1 = common::samples_dir().join("ascend-pt/db/level1");
    let dir = tmp("groups-db");
    common::copy_dir(&db1, &dir);
    let group = "90.91.105.46%enp189s0f0_60000_0_1736410538306028";
    for r in 0..2 {
        let db = dir.join(format!(
            "rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db"
        ));
        let c = rusqlite::Connection::open(&db).unwrap();
        let info = format!(
            r#"{{"{group}": {{"group_name": "dp", "group_rank": {r}, "global_ranks": [0, 1]}}}}"#
        );
        c.execute(
            "INSERT INTO META_DATA (name, value) VALUES ('parallel_group_info', ?1)",
            [info],
        )
        .unwrap();
    }
    let r = analyze(&dir);
    let g = &cohort(&r)["groups"]["groups"][0];
    assert_eq!(g["name"], group);
    assert_eq!(g["kind"], "dp");
    assert_eq!(g["ranks"], serde_json::json!([0, 1]));
    // Without the row the kind is not guessed.
    let plain = analyze(&db1);
    assert_eq!(cohort(&plain)["groups"]["groups"][0]["kind"], "");
    std::fs::remove_dir_all(&dir).unwrap();

    let text1 = common::samples_dir().join("ascend-pt/text/level1");
    let dir = tmp("groups-text");
    common::copy_dir(&text1, &dir);
    for r in 0..2 {
        std::fs::write(
            dir.join(format!("rank{r}_ascend_pt/profiler_metadata.json")),
            r#"{"ENV_VARIABLES": {}, "parallel_group_info": {"0": {"group_name": "tp", "group_rank": 0, "global_ranks": [0, 1]}}}"#,
        )
        .unwrap();
    }
    let r = analyze(&dir);
    assert_eq!(cohort(&r)["groups"]["groups"][0]["kind"], "tp");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same on the db export: every time column of rank 1's db (the columns ending in Ns, and
/// MEMORY_RECORD / OP_MEMORY times; `sqlite3 .schema` of the real file) moved by +60 s in a copy.
/// Rank 1 ends its 4 collectives 15.476, 14.275, 9.615, 14.756 µs after rank 0 (COMMUNICATION_OP,
/// sqlite3), median 14.516 µs: the estimate is 60 s plus that.
#[test]
fn a_db_rank_a_minute_off_is_corrected() {
    let db1 = common::samples_dir().join("ascend-pt/db/level1");
    let dir = tmp("minute-db");
    common::copy_dir(&db1, &dir);
    let db = dir.join("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    let columns: &[(&str, &[&str])] = &[
        ("SESSION_TIME_INFO", &["startTimeNs", "endTimeNs"]),
        ("NPU_MEM", &["timestampNs"]),
        ("CANN_API", &["startNs", "endNs"]),
        ("TASK", &["startNs", "endNs"]),
        ("NPU_OP_MEM", &["timestampNs"]),
        ("NPU_MODULE_MEM", &["timestampNs"]),
        ("HBM", &["timestampNs"]),
        ("LLC", &["timestampNs"]),
        ("SOC_BANDWIDTH_LEVEL", &["timestampNs"]),
        ("ACC_PMU", &["timestampNs"]),
        ("AICORE_FREQ", &["timestampNs"]),
        ("COMMUNICATION_OP", &["startNs", "endNs"]),
        ("STEP_TIME", &["startNs", "endNs"]),
        ("PYTORCH_API", &["startNs", "endNs"]),
        ("MEMORY_RECORD", &["timestamp"]),
        (
            "OP_MEMORY",
            &["allocationTime", "releaseTime", "activeReleaseTime"],
        ),
    ];
    for (table, cols) in columns {
        for col in *cols {
            c.execute(
                &format!("UPDATE {table} SET {col} = {col} + 60000000000 WHERE {col} > 0"),
                [],
            )
            .unwrap();
        }
    }
    drop(c);
    let base = analyze(&db1);
    let moved = analyze(&dir);
    let (b, m) = (cohort(&base), cohort(&moved));
    assert_eq!(b["clock"]["ranks"][0]["estimate_ns"], 14_516);
    let mc = &m["clock"]["ranks"][0];
    assert_eq!(mc["status"], "corrected");
    assert_eq!(mc["applied_ns"], 60_000_014_516i64);
    assert_eq!(moved["analyses"]["ranks"]["disjoint"], Value::Array(vec![]));
    assert_eq!(m["waited_for"]["statement"], b["waited_for"]["statement"]);
    assert_eq!(m["slowest"]["statement"], b["slowest"]["statement"]);
    for r in 0..2 {
        for k in ["step_mean_ns", "computing_ns", "collective_wait_ns"] {
            assert_eq!(m["ranks"][r][k], b["ranks"][r][k], "rank {r} {k}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Kineto NCCL kernels are matched within their `Process Group Name`, and the group is named by
/// `distributedInfo.pg_config`'s `pg_desc`. Input: the real Kineto trace
/// torch-traces/nccl_parser_config/nccl_data.json.gz (A100, NCCL 2.17.1; 21 NCCL kernels, every
/// one with `Process Group Name` "0": 15 `allreduce`, 6 `broadcast`, counted with python3's json
/// module). Rank 0 is the file with its 6 broadcast kernels moved to group "7" (ops of a group
/// rank 1 is not in, as a pipeline group's); rank 1 is the file without them. Matched by name
/// alone (one unnamed group, as before this change) rank 0's 6 broadcasts were counted
/// unmatched; by group, group "0" pairs its 15 allreduces with none left over and group "7" (one
/// member) has nothing to compare.
#[test]
fn kineto_collectives_are_matched_within_their_process_group() {
    let src = common::samples_dir().join("torch-traces/nccl_parser_config/nccl_data.json.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(src).unwrap()),
        &mut text,
    )
    .unwrap();
    let trace: Value = serde_json::from_str(&text).unwrap();
    let is_broadcast =
        |e: &Value| e["cat"] == "kernel" && e["args"]["Collective name"] == "broadcast";
    let mut r0 = trace.clone();
    let mut moved = 0;
    for e in r0["traceEvents"].as_array_mut().unwrap() {
        if is_broadcast(e) {
            e["args"]["Process Group Name"] = "7".into();
            moved += 1;
        }
    }
    assert_eq!(moved, 6);
    let mut r1 = trace;
    r1["distributedInfo"]["rank"] = 1.into();
    r1["traceEvents"]
        .as_array_mut()
        .unwrap()
        .retain(|e| !is_broadcast(e));
    let dir = tmp("kineto-groups");
    std::fs::write(dir.join("rank0.json"), r0.to_string()).unwrap();
    std::fs::write(dir.join("rank1.json"), r1.to_string()).unwrap();

    let r = analyze(&dir);
    let g = &r["analyses"]["cross_rank"]["cohorts"][0]["groups"];
    assert_eq!(g["total"], 1, "{g}");
    let g0 = &g["groups"][0];
    assert_eq!(g0["name"], "0");
    assert_eq!(g0["kind"], "default_pg");
    assert_eq!(g0["ranks"], serde_json::json!([0, 1]));
    assert_eq!(g0["matched"], 15);
    assert_eq!(g0["unmatched"], 0, "{g0}");
    let _ = std::fs::remove_dir_all(&dir);
}
