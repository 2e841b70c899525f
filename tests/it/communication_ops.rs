//! Communication depth (per collective op: transit / wait / synchronization / idle, bandwidth per
//! link type, the link matrix) on real inputs, against the vendor's own numbers:
//! - db roots ../shared/samples/ascend-pt/db/level{0,1,2}: msprof-analyze 26.2.0
//!   `cluster -m communication_time` (tables ClusterCommunicationTime, ClusterCommunicationBandwidth)
//!   and `-m communication_matrix` (ClusterCommunicationMatrix), recorded by
//!   tests/tools/run_msprof_analyze.py --modes communication_time,communication_matrix into
//!   tests/expected/msprof_analyze_26.2.0_communication_level{0,1,2}.json (command in the script).
//!   Those modes aggregate torch_npu's analysis.db CommAnalyzer* tables, which CANN computed from the
//!   same HCCL plane tasks profscope reads from the rank db;
//! - text roots ../shared/samples/ascend-pt/text/level{1,2}: the communication.json and
//!   communication_matrix.json torch_npu wrote beside trace_view.json (read here with serde_json).
//!
//! Tolerance: the vendor converts device cycles to fractional nanoseconds and rounds ratios and
//! bandwidths to 4 decimals; times agree within 0.1% + 100 ns, sizes within 1 byte, ratios within
//! 1e-4, bandwidths within 0.1% + 1e-4 GB/s. Every input here is real.

use crate::common;

use profscope::analysis::communication_ops::{self, Band, CommOp, DeviceCommOps, StepTotal};
use profscope::analysis::devices;
use serde_json::Value;
use std::path::Path;

fn run(root: &Path) -> Vec<DeviceCommOps> {
    let t = common::ingest(root);
    let devs = devices::devices(&t);
    let windows = profscope::analysis::cross_rank::StepWindows::new(&t);
    communication_ops::compute(&t, &devs, &windows, usize::MAX)
}

fn expected(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

fn mb(bytes: i64) -> f64 {
    bytes as f64 / 1e6
}

fn time_close(ours_ns: i64, vendor_ms: f64, what: &str) {
    let a = ms(ours_ns);
    assert!(
        (a - vendor_ms).abs() <= 1e-3 * vendor_ms.abs() + 1e-4,
        "{what}: ours {a} ms vs vendor {vendor_ms} ms"
    );
}

fn size_close(ours_bytes: i64, vendor_mb: f64, what: &str) {
    assert!(
        (mb(ours_bytes) - vendor_mb).abs() <= 1e-6,
        "{what}: ours {} MB vs vendor {vendor_mb} MB",
        mb(ours_bytes)
    );
}

fn ratio_close(ours: f64, vendor: f64, what: &str) {
    // The vendor rounds to 4 decimals a ratio of fractional-ns sums; integer ns can land on the
    // other side of a rounding boundary (0.1164496 vs 0.1165 on text level1 rank 1).
    assert!(
        (ours - vendor).abs() <= 1e-4,
        "{what}: ours {ours} vs vendor {vendor}"
    );
}

fn bw_close(ours: f64, vendor: f64, what: &str) {
    assert!(
        (ours - vendor).abs() <= 1e-3 * vendor.abs() + 1e-4,
        "{what}: ours {ours} GB/s vs vendor {vendor} GB/s"
    );
}

fn step_of(label: &str) -> Option<i64> {
    label.strip_prefix("step").and_then(|n| n.parse().ok())
}

fn device(devs: &[DeviceCommOps], rank: i64) -> &DeviceCommOps {
    devs.iter()
        .find(|d| d.device.rank as i64 == rank)
        .unwrap_or_else(|| panic!("no device for rank {rank}"))
}

fn op<'a>(d: &'a DeviceCommOps, name: &str, step: Option<i64>) -> &'a CommOp {
    d.slowest
        .iter()
        .find(|o| o.name == name && o.step == step)
        .unwrap_or_else(|| panic!("rank {}: no op {name} in {step:?}", d.device.rank))
}

fn step_total(d: &DeviceCommOps, step: Option<i64>) -> &StepTotal {
    d.steps.iter().find(|s| s.step == step).unwrap()
}

fn band<'a>(bands: &'a [Band], link: &str) -> &'a Band {
    bands.iter().find(|b| b.link.as_str() == link).unwrap()
}

/// Rows the vendor writes per link type: one per packet size, or one of zeros when the link
/// type moved bytes but keeps no distribution (SDMA, a sum); none when it moved nothing.
fn vendor_rows(bands: &[Band]) -> usize {
    bands
        .iter()
        .filter(|b| b.size_bytes > 0)
        .map(|b| b.sizes.len().max(1))
        .sum()
}

#[test]
fn db_roots_equal_msprof_analyze_communication_modes() {
    for level in ["level1", "level2"] {
        let devs = run(&common::samples_dir().join("ascend-pt/db").join(level));
        let want = expected(&format!("msprof_analyze_26.2.0_communication_{level}.json"));
        let tables = &want["modes"]["communication_time"]["tables"];
        let time_rows = tables["ClusterCommunicationTime"].as_array().unwrap();
        assert_eq!(
            time_rows.len(),
            10,
            "{level}: 4 ops + total on each of 2 ranks"
        );
        let mut ops_per_rank = std::collections::BTreeMap::new();
        for r in time_rows {
            let d = device(&devs, r["rank_id"].as_i64().unwrap());
            let step = step_of(r["step"].as_str().unwrap());
            let name = r["hccl_op_name"].as_str().unwrap();
            let what = format!("{level} rank {} {name}", d.device.rank);
            let times = if name == "Total Op Info" {
                let s = step_total(d, step);
                ratio_close(s.wait_ratio, r["wait_time_ratio"].as_f64().unwrap(), &what);
                ratio_close(
                    s.synchronization_ratio,
                    r["synchronization_time_ratio"].as_f64().unwrap(),
                    &what,
                );
                s.times
            } else {
                *ops_per_rank.entry(d.device.rank).or_insert(0) += 1;
                let o = op(d, name, step);
                assert_eq!(o.master_plane, Some(1), "{what}");
                o.times.unwrap()
            };
            let f = |k: &str| r[k].as_f64().unwrap();
            time_close(
                times.elapsed_ns,
                f("elapsed_time"),
                &format!("{what} elapsed"),
            );
            time_close(
                times.transit_ns,
                f("transit_time"),
                &format!("{what} transit"),
            );
            time_close(times.wait_ns, f("wait_time"), &format!("{what} wait"));
            time_close(
                times.synchronization_ns,
                f("synchronization_time"),
                &format!("{what} sync"),
            );
            time_close(times.idle_ns, f("idle_time"), &format!("{what} idle"));
        }
        for d in &devs {
            assert_eq!(
                d.ops_total, ops_per_rank[&d.device.rank],
                "{level}: same ops"
            );
            assert_eq!((d.ops_without_tasks, d.ops_with_rdma), (0, 0));
        }

        let bw_rows = tables["ClusterCommunicationBandwidth"].as_array().unwrap();
        assert_eq!(bw_rows.len(), 42, "{level}");
        let mut ours_rows = 0;
        for d in &devs {
            ours_rows += vendor_rows(&d.total.bandwidth);
            ours_rows += d
                .slowest
                .iter()
                .map(|o| vendor_rows(&o.bandwidth))
                .sum::<usize>();
        }
        assert_eq!(
            ours_rows,
            bw_rows.len(),
            "{level}: one row per link type and size"
        );
        for r in bw_rows {
            let d = device(&devs, r["rank_id"].as_i64().unwrap());
            let step = step_of(r["step"].as_str().unwrap());
            let name = r["hccl_op_name"].as_str().unwrap();
            let bands = if name == "Total Op Info" {
                &step_total(d, step).bandwidth
            } else {
                &op(d, name, step).bandwidth
            };
            let link = r["band_type"].as_str().unwrap();
            let b = band(bands, link);
            let what = format!("{level} rank {} {name} {link}", d.device.rank);
            let f = |k: &str| r[k].as_f64().unwrap();
            size_close(b.size_bytes, f("transit_size"), &what);
            time_close(b.time_ns, f("transit_time"), &what);
            bw_close(b.bandwidth_gb_s, f("bandwidth"), &what);
            ratio_close(b.large_packet_ratio, f("large_packet_ratio"), &what);
            if f("count") > 0.0 {
                let s = b
                    .sizes
                    .iter()
                    .find(|s| (mb(s.0) - f("package_size")).abs() < 1e-9)
                    .unwrap_or_else(|| panic!("{what}: no packet size {}", f("package_size")));
                assert_eq!(s.1 as f64, f("count"), "{what}");
                time_close(s.2, f("total_duration"), &what);
            } else {
                assert!(b.sizes.is_empty(), "{what}");
            }
        }

        let matrix = want["modes"]["communication_matrix"]["tables"]["ClusterCommunicationMatrix"]
            .as_array()
            .unwrap();
        assert_eq!(matrix.len(), 28, "{level}");
        for r in matrix {
            let src = r["src_rank"].as_f64().unwrap() as i64;
            let dst = r["dst_rank"].as_f64().unwrap() as i64;
            let d = device(&devs, src);
            let step = step_of(r["step"].as_str().unwrap());
            let name = r["hccl_op_name"].as_str().unwrap();
            let what = format!("{level} {name} {src}-{dst}");
            let (size, ns, transport) = if name == "Total Op Info" {
                let cells: Vec<_> = d
                    .matrix
                    .iter()
                    .filter(|c| {
                        c.step == step
                            && c.rank_by_bandwidth.as_str() == "total"
                            && (c.src_rank, c.dst_rank) == (src, dst)
                    })
                    .collect();
                (
                    cells.iter().map(|c| c.size_bytes).sum::<i64>(),
                    cells.iter().map(|c| c.time_ns).sum::<i64>(),
                    cells[0].transport.clone(),
                )
            } else {
                let (ty, rank) = name.split_once('-').unwrap();
                let c = d
                    .matrix
                    .iter()
                    .find(|c| {
                        c.step == step
                            && c.op_type == ty
                            && c.rank_by_bandwidth == rank
                            && (c.src_rank, c.dst_rank) == (src, dst)
                    })
                    .unwrap_or_else(|| panic!("{what}: no cell"));
                let op_name = r["op_name"].as_str().unwrap_or("");
                assert_eq!(c.op.as_deref().unwrap_or(""), op_name, "{what}");
                bw_close(c.bandwidth_gb_s, r["bandwidth"].as_f64().unwrap(), &what);
                (c.size_bytes, c.time_ns, c.transport.clone())
            };
            assert_eq!(transport, r["transport_type"].as_str().unwrap(), "{what}");
            size_close(size, r["transit_size"].as_f64().unwrap(), &what);
            time_close(ns, r["transit_time"].as_f64().unwrap(), &what);
        }
    }
}

#[test]
fn level0_db_has_only_placeholder_tasks_and_says_so() {
    // torch_npu writes no CommAnalyzer tables at Level0, so msprof-analyze has nothing to say
    // (its output is recorded as null). The rank dbs hold COMMUNICATION_TASK_INFO rows, but every
    // one is a placeholder (transport `N/A`, plane UINT32_MAX; counted here with rusqlite): the
    // times of the ops are unknown, not zero.
    let want = expected("msprof_analyze_26.2.0_communication_level0.json");
    assert!(want["modes"]["communication_time"]["tables"]["ClusterCommunicationTime"].is_null());
    let root = common::samples_dir().join("ascend-pt/db/level0");
    let devs = run(&root);
    assert_eq!(devs.len(), 2);
    for d in &devs {
        let db = root.join(format!(
            "rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db",
            r = d.device.rank
        ));
        let c = common::open_sample_db(&db);
        let n = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
        let ops = n("SELECT count(*) FROM COMMUNICATION_OP");
        let tasks = n("SELECT count(*) FROM COMMUNICATION_TASK_INFO");
        let placeholders = n("SELECT count(*) FROM COMMUNICATION_TASK_INFO c \
             JOIN ENUM_HCCL_TRANSPORT_TYPE e ON e.id = c.transportType \
             WHERE e.name = 'N/A' AND c.planeId = 4294967295");
        assert_eq!((ops, tasks, placeholders), (4, 296, 296));
        assert_eq!(d.ops_total, ops as u64);
        assert_eq!((d.plane_tasks, d.ops_without_tasks), (0, ops as u64));
        assert_eq!(d.total.ops, 0);
        assert!(d.slowest.is_empty(), "ops without details are only counted");
        assert!(d.matrix.is_empty());
    }
}

#[test]
fn text_roots_equal_the_vendor_communication_json() {
    for level in ["level1", "level2"] {
        let root = common::samples_dir().join("ascend-pt/text").join(level);
        let devs = run(&root);
        assert_eq!(devs.len(), 2, "{level}");
        for d in &devs {
            let rank = d.device.rank;
            let dir = root.join(format!("rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
            let read = |f: &str| -> Value {
                serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap()
            };
            let comm = read("communication.json");
            let mut vendor_ops = 0;
            for (label, kinds) in comm.as_object().unwrap() {
                let step = step_of(label);
                for (key, o) in kinds["collective"].as_object().unwrap() {
                    let name = key.split('@').next().unwrap();
                    let what = format!("{level} rank {rank} {name}");
                    let ti = &o["Communication Time Info"];
                    let (times, bands) = if name == "Total Op Info" {
                        let s = step_total(d, step);
                        ratio_close(s.wait_ratio, ti["Wait Time Ratio"].as_f64().unwrap(), &what);
                        (s.times, &s.bandwidth)
                    } else {
                        vendor_ops += 1;
                        let x = op(d, name, step);
                        let f = |k: &str| ti[k].as_f64().unwrap();
                        ratio_close(x.wait_ratio.unwrap(), f("Wait Time Ratio"), &what);
                        ratio_close(
                            x.synchronization_ratio.unwrap(),
                            f("Synchronization Time Ratio"),
                            &what,
                        );
                        (x.times.unwrap(), &x.bandwidth)
                    };
                    let f = |k: &str| ti[k].as_f64().unwrap();
                    time_close(times.elapsed_ns, f("Elapse Time(ms)"), &what);
                    time_close(times.transit_ns, f("Transit Time(ms)"), &what);
                    time_close(times.wait_ns, f("Wait Time(ms)"), &what);
                    time_close(
                        times.synchronization_ns,
                        f("Synchronization Time(ms)"),
                        &what,
                    );
                    time_close(times.idle_ns, f("Idle Time(ms)"), &what);
                    for (link, v) in o["Communication Bandwidth Info"].as_object().unwrap() {
                        let b = band(bands, link);
                        let what = format!("{what} {link}");
                        let g = |k: &str| v[k].as_f64().unwrap();
                        size_close(b.size_bytes, g("Transit Size(MB)"), &what);
                        time_close(b.time_ns, g("Transit Time(ms)"), &what);
                        // Total Op Info keeps neither a bandwidth nor a large-packet ratio.
                        if let Some(x) = v.get("Bandwidth(GB/s)").and_then(|x| x.as_f64()) {
                            bw_close(b.bandwidth_gb_s, x, &what);
                        }
                        if let Some(r) = v.get("Large Packet Ratio").and_then(|x| x.as_f64()) {
                            ratio_close(b.large_packet_ratio, r, &what);
                        }
                        let dist = v["Size Distribution"].as_object().unwrap();
                        if link != "SDMA" {
                            assert_eq!(b.sizes.len(), dist.len(), "{what}");
                        }
                        for (size, cn) in dist {
                            let size: f64 = size.parse().unwrap();
                            let s = b.sizes.iter().find(|s| (mb(s.0) - size).abs() < 1e-9);
                            let s = s.unwrap_or_else(|| panic!("{what}: size {size}"));
                            assert_eq!(s.1 as f64, cn[0].as_f64().unwrap(), "{what}");
                            time_close(s.2, cn[1].as_f64().unwrap(), &what);
                        }
                    }
                }
            }
            assert_eq!(d.ops_total, vendor_ops, "{level} rank {rank}: same ops");
            let matrix = read("communication_matrix.json");
            let mut cells = 0;
            for (label, kinds) in matrix.as_object().unwrap() {
                let step = step_of(label);
                for (key, links) in kinds["collective"].as_object().unwrap() {
                    let (ty, rank_by) = key.split('@').next().unwrap().split_once('-').unwrap();
                    for (link, v) in links.as_object().unwrap() {
                        cells += 1;
                        let (src, dst) = link.split_once('-').unwrap();
                        let key = (src.parse::<i64>().unwrap(), dst.parse::<i64>().unwrap());
                        let what = format!("{level} rank {rank} {ty}-{rank_by} {link}");
                        let c = d
                            .matrix
                            .iter()
                            .find(|c| {
                                c.step == step
                                    && c.op_type == ty
                                    && c.rank_by_bandwidth == rank_by
                                    && (c.src_rank, c.dst_rank) == key
                            })
                            .unwrap_or_else(|| panic!("{what}: no cell"));
                        assert_eq!(c.transport, v["Transport Type"].as_str().unwrap(), "{what}");
                        assert_eq!(
                            c.op.as_deref(),
                            v.get("Op Name").and_then(|x| x.as_str()),
                            "{what}"
                        );
                        size_close(c.size_bytes, v["Transit Size(MB)"].as_f64().unwrap(), &what);
                        time_close(c.time_ns, v["Transit Time(ms)"].as_f64().unwrap(), &what);
                        bw_close(
                            c.bandwidth_gb_s,
                            v["Bandwidth(GB/s)"].as_f64().unwrap(),
                            &what,
                        );
                    }
                }
            }
            assert_eq!(
                d.matrix.len(),
                cells,
                "{level} rank {rank}: same matrix cells"
            );
        }
    }
}

#[test]
fn the_slow_rank_is_named_only_when_ranks_wait_differently() {
    // db level1: wait ratios 0.4807 and 0.4885 (vendor Total Op Info above): no slow rank.
    let db = run(&common::samples_dir().join("ascend-pt/db/level1"));
    let s = communication_ops::summarize(&db);
    assert_eq!(s.wait_ratios.len(), 2);
    assert_eq!(s.slow_rank, None);
    // text level1: rank 0 waited 0.6173 of its transfer-and-wait time, rank 1 0.0472
    // (communication.json Total Op Info of each rank), but over 4 collectives per rank: fewer
    // than SLOW_RANK_MIN_OPS (5), so no slow rank is named (docs/evidence.md).
    let root = common::samples_dir().join("ascend-pt/text/level1");
    let text = run(&root);
    let s = communication_ops::summarize(&text);
    assert_eq!(s.wait_ratios.len(), 2);
    assert!(text.iter().all(|d| d.total.ops == 4));
    assert_eq!(s.slow_rank, None);
    // The arrival candidate agrees (rank 1 entered the first allreduce 5.608 ms after rank 0:
    // communication.json Start Timestamp 1736408883737849.2 vs 1736408883732241.5 µs), but it
    // is last into 1 of 4 collectives: P(X >= 1 | 4, 1/2) x 2 ranks = 1.875, capped at 1.
    let t = common::ingest(&root);
    let a = profscope::registry::run_all(&t, &Default::default());
    let w = a.cross_rank.cohorts[0].waited_for.as_ref().unwrap();
    assert_eq!(
        (w.rank, w.last_into, w.of_collectives),
        (1, 1, 4),
        "{}",
        w.statement
    );
    assert!(!w.stands_out && w.p_value == 1.0, "{}", w.statement);
    assert!(w.statement.starts_with("no rank stands out by arrival"));
    // The slowest off-chip link is an HCCS total, below the median of the HCCS links.
    let slow = s.slow_link.unwrap();
    assert_eq!(slow.transport, "HCCS");
    assert!(slow.bandwidth_gb_s <= s.median_link_gb_s.unwrap());
}

#[test]
fn diff_metrics_carry_the_collective_wait_ratio_and_link_bandwidth() {
    // Expected from msprof-analyze's Total Op Info rows of db/level1 (recorded JSON):
    // HCCS 427.596096 MB per rank in 28.57005090625 + 28.7885753125 ms;
    // wait 3.68957371875 + 3.84153675 ms, transit 3.985659625 + 4.02176028125 ms.
    let want = expected("msprof_analyze_26.2.0_communication_level1.json");
    let rows = want["modes"]["communication_time"]["tables"]["ClusterCommunicationBandwidth"]
        .as_array()
        .unwrap();
    let (mut bytes, mut ms) = (0.0, 0.0);
    for r in rows.iter().filter(|r| {
        r["hccl_op_name"] == "Total Op Info"
            && r["band_type"] == "HCCS"
            && r["count"] == 2
            && r["package_size"].as_f64().unwrap() < 1.2
    }) {
        // One row per rank (the smallest packet size) carries the link's totals.
        bytes += r["transit_size"].as_f64().unwrap() * 1e6;
        ms += r["transit_time"].as_f64().unwrap();
    }
    let times = want["modes"]["communication_time"]["tables"]["ClusterCommunicationTime"]
        .as_array()
        .unwrap();
    let (mut wait, mut transit) = (0.0, 0.0);
    for r in times
        .iter()
        .filter(|r| r["hccl_op_name"] == "Total Op Info")
    {
        wait += r["wait_time"].as_f64().unwrap();
        transit += r["transit_time"].as_f64().unwrap();
    }
    let out = crate::common::profscope_command()
        .args(["analyze", "--format", "json"])
        .arg(common::samples_dir().join("ascend-pt/db/level1"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = profscope::report::diff::metrics(&report).unwrap();
    let hccs = &m["link_bandwidth.HCCS"];
    assert_eq!(hccs.unit.as_str(), "GB/s");
    let gb_s = bytes / (ms * 1e6);
    assert!(
        (hccs.value - gb_s).abs() <= 1e-3 * gb_s,
        "{} vs {gb_s}",
        hccs.value
    );
    let w = &m["collective_wait_ratio"];
    let pct = 100.0 * wait / (wait + transit);
    assert!((w.value - pct).abs() <= 1e-3, "{} vs {pct}", w.value);
}
