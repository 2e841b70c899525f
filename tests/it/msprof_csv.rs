//! kernel_details.csv (torch_npu text export) read on its own, on the real samples in
//! ../shared/samples/ascend-pt/text/level{0,1,2}/rank{0,1}_ascend_pt/ASCEND_PROFILER_OUTPUT.
//!
//! Expected counts and duration sums were taken with Python's csv module, independently of this
//! code (recorded 2026-11-30):
//!   python3 -c "import csv,collections,decimal; rows=list(csv.DictReader(open(P, newline='')));
//!     print(len(rows), collections.Counter(r['Accelerator Core'] for r in rows),
//!           sum(decimal.Decimal(r['Duration(us)']) for r in rows))"
//! The device-time oracle is the vendor's step_trace_time.csv in the same folder (µs).

use crate::common;

use profscope::analysis::{device_time, devices};
use profscope::model::events::NO_ROW;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn output(level: &str, rank: u32) -> PathBuf {
    common::samples_dir().join(format!(
        "ascend-pt/text/{level}/rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"
    ))
}

#[test]
fn kernel_details_rows_counts_and_sums() {
    // (level, rank, rows per Accelerator Core, sum of Duration(us) in ns)
    let l12 = [
        ("AI_VECTOR_CORE", 149),
        ("AI_CORE", 23),
        ("DSA_SQE", 2),
        ("MIX_AIV", 13),
        ("HCCL", 4),
    ];
    type Case<'a> = (&'a str, u32, Vec<(&'a str, u64)>, i64);
    let cases: [Case; 6] = [
        ("level0", 0, vec![("", 187), ("HCCL", 4)], 94_344_340),
        ("level0", 1, vec![("", 187), ("HCCL", 4)], 77_418_862),
        ("level1", 0, l12.to_vec(), 114_865_613),
        ("level1", 1, l12.to_vec(), 109_253_559),
        ("level2", 0, l12.to_vec(), 108_841_491),
        ("level2", 1, l12.to_vec(), 106_357_602),
    ];
    for (level, rank, cores, sum_ns) in cases {
        let tag = format!("{level} rank {rank}");
        let t = common::ingest(&output(level, rank).join("kernel_details.csv"));
        assert_eq!(t.files.format[0].unwrap().as_str(), "kernel_csv", "{tag}");
        assert_eq!(t.files.rank[0], rank as i32, "{tag}");
        assert_eq!(t.events.len(), 191, "{tag}");
        let mut by_core: BTreeMap<&str, u64> = BTreeMap::new();
        for i in 0..t.events.len() {
            // `N/A` cells are read as empty.
            *by_core.entry(t.str(t.events.task_type.at(i))).or_default() += 1;
        }
        let want: BTreeMap<&str, u64> = cores.into_iter().collect();
        assert_eq!(by_core, want, "{tag}");
        assert_eq!(t.events.dur_ns.iter().sum::<i64>(), sum_ns, "{tag}");
        // Every non-HCCL row links a kernels row; rows with the same details share one. The
        // distinct (Type, Accelerator Core, Block Dim, Mix Block Dim, the six shape/dtype/format
        // cells) tuples of the non-HCCL rows, counted with Python's csv module (cells trimmed,
        // `N/A` as empty): 1 in level0 (all `N/A`), 134 in level1 and level2.
        let linked = t.events.kernel.iter().filter(|&&k| k != NO_ROW).count();
        assert_eq!(linked, 187, "{tag}");
        let signatures = if level == "level0" { 1 } else { 134 };
        assert_eq!(t.kernels.len(), signatures, "{tag}");
        // Only information (overlaps: level0 has no Stream ID, so every row is on one thread).
        assert!(
            t.diagnostics
                .iter()
                .all(|d| d.severity == profscope::diag::Severity::Info),
            "{tag}: {:?}",
            t.diagnostics
        );
    }
}

/// step_trace_time.csv as (column -> ns).
fn step_trace(level: &str, rank: u32) -> BTreeMap<String, i64> {
    let text = std::fs::read_to_string(output(level, rank).join("step_trace_time.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    head.iter()
        .zip(row)
        .filter_map(|(h, v)| Some((h.to_string(), (v.parse::<f64>().ok()? * 1e3).round() as i64)))
        .collect()
}

/// A root whose ranks have only kernel_details.csv: device time from it agrees with the vendor's
/// step_trace_time.csv (which torch_npu computed from the full capture) within 0.1 %; the CSV's
/// 3-decimal µs values cost a few ns.
#[test]
fn csv_only_root_device_time_matches_step_trace_time() {
    let dir = std::env::temp_dir().join(format!("profscope-csvonly-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for rank in 0..2 {
        let src = output("level1", rank);
        let out = dir.join(format!("rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(
            src.join("kernel_details.csv"),
            out.join("kernel_details.csv"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            src.parent()
                .unwrap()
                .join(format!("profiler_info_{rank}.json")),
            dir.join(format!("rank{rank}_ascend_pt/profiler_info_{rank}.json")),
        )
        .unwrap();
    }
    let t = common::ingest(&dir);
    assert_eq!(t.files.len(), 2);
    let dt = device_time::compute(&t, &devices::devices(&t));
    assert_eq!(dt.len(), 2);
    for d in &dt {
        let v = step_trace("level1", d.device.rank as u32);
        let close = |ours: i64, col: &str| {
            let want = v[col];
            let diff = (ours - want).abs() as f64 / want as f64;
            assert!(
                diff < 1e-3,
                "rank {} {col}: ours {ours} vendor {want}",
                d.device.rank
            );
        };
        close(d.computing_ns, "Computing");
        close(d.communication_ns, "Communication");
        close(
            d.communication_not_overlapped_ns,
            "Communication(Not Overlapped)",
        );
        close(d.overlapped_ns, "Overlapped");
        close(d.free_ns, "Free");
        close(d.window_ns, "Stage");
        assert_eq!(d.communication_source, "device_comm_kernels");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// With trace_view.json beside it, kernel_details.csv is not read (the same capture) and says so.
#[test]
fn kernel_details_is_skipped_when_a_timeline_exists() {
    let t = common::ingest(output("level1", 0).parent().unwrap());
    assert_eq!(t.files.len(), 1);
    assert_eq!(t.files.format[0].unwrap().as_str(), "chrome_json_array");
    let d = t.diagnostics.get("input_skipped").unwrap();
    assert!(d.examples.iter().any(|e| e.contains("kernel_details.csv")));
}

/// Damaged CSV: a row without a start time is skipped and counted; a file cut inside a quoted
/// shape field keeps the rows before the cut and is marked truncated. Generated from the real
/// level1 file.
#[test]
fn damaged_csv_is_reported_not_fatal() {
    let text = std::fs::read_to_string(output("level1", 0).join("kernel_details.csv")).unwrap();
    let dir = std::env::temp_dir().join(format!("profscope-badcsv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Row 3 (the third data row) loses its start time.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut cells: Vec<String> = lines[3].split(',').map(str::to_string).collect();
    cells[8] = "N/A".into();
    lines[3] = cells.join(",");
    let p = dir.join("kernel_details.csv");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let t = common::ingest(&p);
    assert_eq!(t.events.len(), 190);
    assert_eq!(t.diagnostics.count("csv_row_skipped"), 1);
    // Cut in the middle of row 10's quoted input shapes.
    let cut = text.match_indices("\"\"\"").nth(20).unwrap().0 + 4;
    std::fs::write(&p, &text[..cut]).unwrap();
    let t = common::ingest(&p);
    assert!(t.files.truncated[0]);
    assert!(
        t.events.len() < 191 && t.events.len() >= 5,
        "{}",
        t.events.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Per kernel name: count and summed duration from kernel_details.csv equal those of the device
/// events of the trace_view.json beside it (the same capture, both exports of one torch_npu
/// analyse run): kernels on `Ascend Hardware`, the `hcom_*` collectives on `HCCL`. Counts are
/// exact; durations differ by at most 1 ns per event, because trace_view.json keeps sub-ns digits
/// (`6.280125` µs, rounded to 6280 ns) where the CSV prints 3 decimals (`6.28`), e.g. rank 0 level0
/// `trans_TransData_1` (checked with Python's json and csv modules and Decimal).
#[test]
fn kernel_details_and_trace_view_agree_per_kernel_name() {
    use std::collections::BTreeMap;
    for level in ["level0", "level1", "level2"] {
        for rank in 0..2 {
            let dir = output(level, rank);
            let csv = common::ingest(&dir.join("kernel_details.csv"));
            let tv = common::ingest(&dir.join("trace_view.json"));
            let per_name =
                |t: &profscope::model::Tables, only: Option<&BTreeMap<String, (u64, i64)>>| {
                    let mut m: BTreeMap<String, (u64, i64)> = BTreeMap::new();
                    for i in 0..t.events.len() {
                        let p = t.event_process(i);
                        if !["Ascend Hardware", "HCCL"].contains(&t.str(t.processes.name[p.idx()]))
                        {
                            continue;
                        }
                        let n = t.event_name(i);
                        if only.is_some_and(|o| !o.contains_key(n)) {
                            continue;
                        }
                        let e = m.entry(n.to_string()).or_default();
                        e.0 += 1;
                        e.1 += t.events.dur_ns.at(i);
                    }
                    m
                };
            let want = per_name(&csv, None);
            assert!(want.len() > 50, "{level} rank {rank}: {} names", want.len());
            let got = per_name(&tv, Some(&want));
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "{level} rank {rank}"
            );
            for (name, &(n, sum)) in &want {
                let (m, s) = got[name];
                assert_eq!(m, n, "{level} rank {rank} {name} count");
                assert!(
                    (s - sum).abs() <= n as i64,
                    "{level} rank {rank} {name}: {s} vs {sum}"
                );
            }
        }
    }
}

/// The other real kernel_details files (../shared/samples/ascend-misc/mstt/mstt_test_resources:
/// an older CANN header with `Block Dim`, a level0-like subset without Step Id / Stream ID, and
/// one whose last row has no final line break). Rows and Duration sums by Python's csv module
/// with Decimal: 591 rows / 396807.04 µs, 8 rows, 29 rows / 10061.159 µs.
#[test]
fn mstt_kernel_details_variants() {
    let dir = common::samples_dir().join("ascend-misc/mstt/mstt_test_resources");
    for (file, rows, sum_ns) in [
        ("kernel_details_old_blockdim.csv", 591, Some(396_807_040)),
        ("kernel_details_subset_test.csv", 8, None),
        ("kernel_details_with_opstate.csv", 29, Some(10_061_159)),
    ] {
        let t = common::ingest(&dir.join(file));
        assert_eq!(t.events.len(), rows, "{file}");
        if let Some(s) = sum_ns {
            assert_eq!(t.events.dur_ns.iter().sum::<i64>(), s, "{file}");
        }
        assert!(!t.files.truncated[0], "{file}");
        let unterminated = file == "kernel_details_with_opstate.csv";
        assert_eq!(
            t.diagnostics.count("no_final_line_break"),
            unterminated as u64,
            "{file}"
        );
    }
    // Block Dim (older CANN) is read into block_num.
    let t = common::ingest(&dir.join("kernel_details_old_blockdim.csv"));
    assert!(t.kernels.block_num.iter().any(|&b| b > 0));
}

/// npu_module_mem.csv (torch_npu's MB rewrite of CANN's KB file) is read beside the chosen
/// trace_view.json into the memory table. Expected per component (rows, sum and max of
/// round(MB x 1048576) bytes) by Python csv + Decimal on text/level{0,1}/rank0:
///   level0: 1001 rows; HCCL 13 / 5507973120 / 423690240; APP 13 / 19792920576 / 1522532352
///   level1: 1078 rows; HCCL 14 / 5931663360 / 423690240; APP 14 / 21315452928 / 1522532352;
///           RUNTIME 14 / 1353601024 / 96714752; GE 14 / 1115684864 / 79691776. Device `NPU:0`.
#[test]
fn npu_module_mem_companion() {
    for (level, rows, want) in [
        (
            "level0",
            1001,
            vec![
                ("HCCL", 13, 5_507_973_120, 423_690_240),
                ("APP", 13, 19_792_920_576, 1_522_532_352),
            ],
        ),
        (
            "level1",
            1078,
            vec![
                ("HCCL", 14, 5_931_663_360, 423_690_240),
                ("APP", 14, 21_315_452_928, 1_522_532_352),
                ("RUNTIME", 14, 1_353_601_024, 96_714_752),
                ("GE", 14, 1_115_684_864, 79_691_776),
            ],
        ),
    ] {
        let t = common::ingest(&output(level, 0).join("trace_view.json"));
        let m = &t.memory;
        let ours: Vec<usize> = (0..m.len())
            .filter(|&i| t.str(m.source[i]) == "npu_module_mem.csv")
            .collect();
        assert_eq!(ours.len(), rows, "{level}");
        assert!(ours.iter().all(|&i| m.device[i] == 0 && m.file[i].0 == 0));
        for (comp, n, sum, max) in want {
            let v: Vec<i64> = ours
                .iter()
                .filter(|&&i| t.str(m.component[i]) == comp)
                .map(|&i| m.reserved_bytes[i])
                .collect();
            assert_eq!(
                (v.len(), v.iter().sum::<i64>(), *v.iter().max().unwrap()),
                (n, sum, max),
                "{level} {comp}"
            );
        }
    }
}
