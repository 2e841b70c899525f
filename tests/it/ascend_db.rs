//! torch_npu / msprof db ingest (first slice of issue 4). Real inputs only:
//! ../shared/samples/ascend-pt/db/level{0,1,2}/rank{0,1}_ascend_pt and ascend-pt/msprof_0.db.
//! Expected values: per-task-type counts and durations from the sqlite3 CLI, recorded below with
//! the query; device-time totals from the vendor's own analysis.db (StepTraceTime) beside each db,
//! read directly from that file.

use crate::common;

use profscope::analysis::{device_time, devices};
use std::collections::BTreeMap;

fn db_root(level: u32, rank: u32) -> std::path::PathBuf {
    common::samples_dir().join(format!("ascend-pt/db/level{level}/rank{rank}_ascend_pt"))
}

/// Per task type: (tasks, Σ dur ns), device events of the Ascend Hardware process.
fn by_task_type(t: &profscope::model::Tables) -> BTreeMap<String, (u64, i64)> {
    let mut m: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for i in 0..t.events.len() {
        if t.event_role(i) == profscope::model::ProcessRole::AscendHardware {
            let e = m
                .entry(t.str(t.events.task_type.at(i)).to_string())
                .or_default();
            e.0 += 1;
            e.1 += t.events.dur_ns.at(i);
        }
    }
    m
}

fn map(v: &[(&str, u64, i64)]) -> BTreeMap<String, (u64, i64)> {
    v.iter().map(|&(k, n, d)| (k.to_string(), (n, d))).collect()
}

#[test]
fn level1_rank0_tasks_match_sqlite3() {
    // sqlite3 -readonly "file:<db>?immutable=1" "select s.value, count(*), sum(t.endNs-t.startNs)
    //   from TASK t join STRING_IDS s on s.id=t.taskType group by 1 order by 1;"  (2026-11-29)
    let want = map(&[
        ("AI_CORE", 9, 102269841),
        ("EVENT_RECORD", 16, 240),
        ("EVENT_WAIT", 10, 79441747),
        ("KERNEL_AICORE", 39, 3073920),
        ("KERNEL_AIVEC", 149, 5803593),
        ("MEMCPY_ASYNC", 24, 866699),
        ("MIX_AIV", 5, 137220),
        ("Notify Wait", 112, 147285446),
        ("PROFILING_DISABLE", 1, 0),
        ("PROFILING_ENABLE", 1, 20),
        ("SDMA", 72, 28715084),
        ("STARS_COMMON", 2, 5460),
        ("Write Value", 112, 82301),
    ]);
    let t = common::ingest(&db_root(1, 0));
    assert_eq!(by_task_type(&t), want);
    assert_eq!(t.files.rank[0], 0, "RANK_DEVICE_MAP");
    // COMMUNICATION_OP: "select count(*), sum(endNs-startNs) from COMMUNICATION_OP" -> 4|102108100
    let on_thread = |prefix: &str| -> Vec<usize> {
        (0..t.events.len())
            .filter(|&i| {
                t.event_role(i) == profscope::model::ProcessRole::Hccl
                    && t.thread_label(t.events.thread[i]).starts_with(prefix)
            })
            .collect()
    };
    let ops = on_thread("Group");
    assert_eq!(
        (
            ops.len(),
            ops.iter().map(|&i| t.events.dur_ns.at(i)).sum::<i64>()
        ),
        (4, 102_108_100)
    );
    // HCCL plane tasks, one per COMMUNICATION_TASK_INFO row, timed by its TASK row:
    // sqlite3: select s.value, count(*), sum(t.endNs-t.startNs) from COMMUNICATION_TASK_INFO c
    //   join STRING_IDS s on s.id=c.taskType join TASK t on t.globalTaskId=c.globalTaskId group by 1
    // The same run's text export (text/level1/rank0 trace_view.json, a separate capture) has the
    // same plane-task counts: Memcpy 36, Notify_Record 112, Notify_Wait 112, Reduce_Inline 36.
    let mut planes: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for i in on_thread("Plane") {
        let e = planes.entry(t.event_name(i).to_string()).or_default();
        e.0 += 1;
        e.1 += t.events.dur_ns.at(i);
    }
    assert_eq!(
        planes,
        map(&[
            ("Memcpy", 36, 12773222),
            ("Notify_Record", 112, 82301),
            ("Notify_Wait", 112, 147285446),
            ("Reduce_Inline", 36, 15941862),
        ])
    );
    assert_eq!(t.comm_tasks.len(), 296);
    // "select count(*) from CANN_API" -> 710; "select count(*) from PYTORCH_API" -> 2460
    let host = |p: &str| {
        (0..t.events.len())
            .filter(|&i| t.process_label(t.event_process(i)).starts_with(p))
            .count()
    };
    assert_eq!((host("CANN"), host("Python")), (710, 2460));
    // Kernel-type tasks without kernel info (the 4 AI_CORE collective envelopes on stream 4 among
    // them) are kept, not counted as compute; the vendor's Computing excludes them too.
    // sqlite3: select count(*) from TASK t join STRING_IDS s on s.id=t.taskType left join
    //   COMPUTE_TASK_INFO ci on ci.globalTaskId=t.globalTaskId where ci.globalTaskId is null and
    //   (s.value like 'AI_CORE%' or 'KERNEL_%' or 'MIX_%' or 'AI_CPU%' or 'AI_VECTOR%') -> 17
    assert_eq!(t.diagnostics.count("task_without_kernel_info"), 17);
}

#[test]
fn msprof_db_ingests() {
    // sqlite3 (same query) on ascend-pt/msprof_0.db: AI_CORE 2|7460, GeluGrad_Tiling 1|50761,
    // aclnnGeluBackwardGetWorkspaceSize 3|5321, aclnnIndexPutImpl 11|663872, aclnnInplaceAdd 3|5861,
    // aclnnLayerNormBackward 3|167263, hcom_allReduce__305_880_1 1|51121 (its STRING_IDS map task
    // types to these names: real data, kept as is); COMMUNICATION_OP empty; CANN_API 4 rows.
    let t = common::ingest(&common::samples_dir().join("ascend-pt/msprof_0.db"));
    let want = map(&[
        ("AI_CORE", 2, 7460),
        ("GeluGrad_Tiling", 1, 50761),
        ("aclnnGeluBackwardGetWorkspaceSize", 3, 5321),
        ("aclnnIndexPutImpl", 11, 663872),
        ("aclnnInplaceAdd", 3, 5861),
        ("aclnnLayerNormBackward", 3, 167263),
        ("hcom_allReduce__305_880_1", 1, 51121),
    ]);
    assert_eq!(by_task_type(&t), want);
}

/// The vendor's StepTraceTime (µs, from analysis.db) vs profscope's device_time from the db.
#[test]
fn every_db_root_matches_the_vendor_analysis_db_exactly() {
    for level in 0..3 {
        for rank in 0..2 {
            let root = db_root(level, rank);
            let adb = root.join("ASCEND_PROFILER_OUTPUT/analysis.db");
            let c = profscope::ingest::ascend_db::open(adb.to_str().unwrap()).unwrap();
            let (comp, not_ov, comm, free): (f64, f64, f64, f64) = c
                .query_row("SELECT computing, communication_not_overlapped, communication, free FROM StepTraceTime", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .unwrap();
            let ns = |us: f64| (us * 1000.0).round() as i64;
            let t = common::ingest(&root);
            let d = &device_time::compute(&t, &devices::devices(&t))[0];
            let tag = format!("level{level} rank{rank}");
            assert_eq!(d.computing_ns, ns(comp), "{tag} computing");
            assert_eq!(d.communication_ns, ns(comm), "{tag} communication");
            assert_eq!(
                d.communication_not_overlapped_ns,
                ns(not_ov),
                "{tag} not overlapped"
            );
            assert_eq!(d.free_ns, ns(free), "{tag} free");
        }
    }
}

/// `analyze` reads OVERLAP_ANALYSIS as per-device sums, not events. The real level1 rank 0 db has
/// 382 rows; by sqlite3, `SELECT deviceId, type, count(*), sum(endNs - startNs) FROM
/// OVERLAP_ANALYSIS GROUP BY 1, 2`: 0|0|187|8903431, 0|1|4|102108100, 0|2|101|98071947,
/// 0|3|90|25258144. Both readings give the same vendor comparison and the same analyses.
#[test]
fn overlap_rows_as_sums_equal_overlap_events() {
    use profscope::ingest::ascend_db::{DbOpts, ingest_file_with};
    let db = db_root(1, 0).join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let read = |overlap_events: bool| {
        let mut b = profscope::ingest::TablesBuilder::new();
        let o = DbOpts {
            overlap_events,
            ..Default::default()
        };
        ingest_file_with(db.to_str().unwrap(), &mut b, o).unwrap();
        b.finish()
    };
    let (events, sums) = (read(true), read(false));
    let v = &sums.vendor_overlap;
    let rows: Vec<(i32, u8, u64, i64)> = (0..v.len())
        .map(|r| (v.device_id[r], v.kind[r], v.rows[r], v.dur_ns[r]))
        .collect();
    assert_eq!(
        rows,
        vec![
            (0, 0, 187, 8_903_431),
            (0, 1, 4, 102_108_100),
            (0, 2, 101, 98_071_947),
            (0, 3, 90, 25_258_144),
        ]
    );
    assert!(events.vendor_overlap.is_empty());
    assert_eq!(events.events.len(), sums.events.len() + 382);
    assert_eq!(sums.diagnostics.count("vendor_overlap_as_sums"), 382);
    let vendor = |t: &profscope::model::Tables| {
        let d = &device_time::compute(t, &devices::devices(t))[0];
        serde_json::to_value(&d.vendor).unwrap()
    };
    assert_eq!(vendor(&sums)["free_ns"], 25_258_144);
    assert_eq!(vendor(&sums), vendor(&events));
    let all = |t: &profscope::model::Tables| {
        serde_json::to_value(profscope::registry::run_all(t, &Default::default())).unwrap()
    };
    assert_eq!(all(&sums), all(&events));
}

/// Inputs are read-only: ingesting leaves the folder byte-for-byte as it was (no journal, WAL or
/// lock files created, nothing modified).
#[test]
fn db_ingest_touches_nothing() {
    let dir = db_root(1, 0).join("ASCEND_PROFILER_OUTPUT");
    let snapshot = || {
        let mut v: Vec<(String, u64, std::time::SystemTime)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let m = e.metadata().unwrap();
                (
                    e.file_name().to_string_lossy().to_string(),
                    m.len(),
                    m.modified().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = snapshot();
    let _ = common::ingest(&db_root(1, 0));
    assert_eq!(snapshot(), before);
}

/// The direct b-tree reader and SQLite give identical tables on every real db (and a generated
/// one with every table family the generator writes).
#[test]
fn direct_btree_reads_equal_sqlite_on_every_db() {
    use profscope::ingest::ascend_db::{DbOpts, ingest_file_with};
    let mut dbs: Vec<std::path::PathBuf> = Vec::new();
    for level in 0..3 {
        for rank in 0..2 {
            dbs.push(db_root(level, rank).join(format!(
                "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"
            )));
        }
    }
    dbs.push(common::samples_dir().join("ascend-pt/msprof_0.db"));
    let g = common::generated_with(
        "btree-eq",
        profscope::synth::SynthOpts {
            ranks: 1,
            target_bytes: 300_000,
            seed: 3,
            kineto: false,
            export: profscope::synth::Export::Db,
            slow: None,
            graph_mode: false,
            capture_apart: false,
        },
    );
    dbs.push(g.dir.join(g.truth.ranks[0].db.as_ref().unwrap()));
    for db in dbs {
        let read = |direct: bool| {
            let mut b = profscope::ingest::TablesBuilder::new();
            ingest_file_with(
                db.to_str().unwrap(),
                &mut b,
                DbOpts {
                    direct,
                    ..Default::default()
                },
            )
            .unwrap();
            b.finish()
        };
        let (a, s) = (read(true), read(false));
        let tag = db.display().to_string();
        assert_eq!(a.diagnostics.count("db_direct_read_fallback"), 0, "{tag}");
        let e = (&a.events, &s.events);
        assert!(
            e.0.len() >= 28,
            "{tag}: msprof_0.db, the smallest, has 24 TASK + 4 CANN_API rows"
        );
        assert_eq!(e.0.len(), e.1.len(), "{tag}");
        assert_eq!(e.0.ts_ns, e.1.ts_ns, "{tag}");
        assert_eq!(e.0.dur_ns, e.1.dur_ns, "{tag}");
        assert_eq!(e.0.stream, e.1.stream, "{tag}");
        assert_eq!(e.0.connection_id, e.1.connection_id, "{tag}");
        assert_eq!(e.0.correlation_id, e.1.correlation_id, "{tag}");
        assert_eq!(e.0.kernel, e.1.kernel, "{tag}");
        assert_eq!(e.0.comm_task, e.1.comm_task, "{tag}");
        assert_eq!(e.0.category, e.1.category, "{tag}");
        let names = |t: &profscope::model::Tables| -> Vec<String> {
            (0..t.events.len())
                .map(|i| format!("{}|{}", t.event_name(i), t.str(t.events.task_type.at(i))))
                .collect()
        };
        assert_eq!(names(&a), names(&s), "{tag}");
        let ops = |t: &profscope::model::Tables| -> Vec<(String, i64, i64)> {
            (0..t.kernels.len())
                .map(|k| {
                    (
                        t.str(t.kernels.op_type[k]).to_string(),
                        t.kernels.block_num[k],
                        t.kernels.mix_block_num[k],
                    )
                })
                .collect()
        };
        assert_eq!(ops(&a), ops(&s), "{tag}");
        assert_eq!(a.flows.len(), s.flows.len(), "{tag}");
    }
}

/// Damaged dbs never panic: a copy of a real db with every page's b-tree header overwritten
/// (cell counts 0xFFFF), one cut in half, and a non-SQLite file named like a db each give an
/// error naming the file, or tables read through the SQLite fallback.
#[test]
fn damaged_dbs_give_errors_not_panics() {
    let src = db_root(1, 1).join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db");
    let bytes = std::fs::read(&src).unwrap();
    let dir = std::env::temp_dir().join(format!("profscope-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    let mut headers = bytes.clone();
    for p in 1..headers.len() / page {
        let h = p * page;
        headers[h + 3] = 0xff;
        headers[h + 4] = 0xff;
    }
    let cases = [
        ("cells", headers),
        ("half", bytes[..bytes.len() / 2].to_vec()),
        ("garbage", b"not a database at all".repeat(100)),
    ];
    for (tag, data) in cases {
        let p = dir.join(format!("{tag}/ascend_pytorch_profiler_1.db"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, data).unwrap();
        let r = std::panic::catch_unwind(|| {
            let mut b = profscope::ingest::TablesBuilder::new();
            profscope::ingest::ascend_db::ingest_file(p.to_str().unwrap(), &mut b).map(|_| ())
        });
        let r = r.unwrap_or_else(|_| panic!("{tag}: panicked"));
        if let Err(e) = r {
            assert!(
                e.to_string().contains("ascend_pytorch_profiler_1.db"),
                "{tag}: {e}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kernel details shared by signature stay each task's own: on every real db sample, the
/// multiset of (op type, task type, block dims, shapes, dtypes, formats) over the events that
/// link a kernels row equals SQLite's join of TASK with COMPUTE_TASK_INFO by globalTaskId
/// (strings through STRING_IDS; these CANN versions write blockDim / mixBlockDim), and the table
/// holds each signature once.
#[test]
fn kernel_rows_are_shared_by_signature_and_match_sqlite() {
    type Sig = (String, String, i64, i64, [String; 6]);
    for level in 0..3 {
        for rank in 0..2 {
            let db = db_root(level, rank).join(format!(
                "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"
            ));
            let tag = db.display().to_string();
            let c = common::open_sample_db(&db);
            let s = |col: &str| {
                format!("COALESCE((SELECT value FROM STRING_IDS WHERE id = c.{col}), '')")
            };
            let sql = format!(
                "SELECT {}, {}, c.blockDim, c.mixBlockDim, {}, {}, {}, {}, {}, {} \
                 FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId",
                s("opType"),
                s("taskType"),
                s("inputShapes"),
                s("inputDataTypes"),
                s("inputFormats"),
                s("outputShapes"),
                s("outputDataTypes"),
                s("outputFormats"),
            );
            let mut want: BTreeMap<Sig, u64> = BTreeMap::new();
            let mut st = c.prepare(&sql).unwrap();
            let mut q = st.query([]).unwrap();
            while let Some(r) = q.next().unwrap() {
                let g = |i: usize| r.get::<_, String>(i).unwrap();
                let sig = (
                    g(0),
                    g(1),
                    r.get(2).unwrap(),
                    r.get(3).unwrap(),
                    [g(4), g(5), g(6), g(7), g(8), g(9)],
                );
                *want.entry(sig).or_default() += 1;
            }
            assert!(want.values().sum::<u64>() > 100, "{tag}: compute tasks");

            let t = common::ingest(&db);
            let sig = |k: usize| -> Sig {
                let k = t.kernels.row(k);
                (
                    t.str(k.op_type).to_string(),
                    t.str(k.task_type).to_string(),
                    k.block_num,
                    k.mix_block_num,
                    k.shapes.map(|s| t.str(s).to_string()),
                )
            };
            let mut got: BTreeMap<Sig, u64> = BTreeMap::new();
            for &k in &t.events.kernel {
                if k != profscope::model::events::NO_ROW {
                    *got.entry(sig(k as usize)).or_default() += 1;
                }
            }
            assert_eq!(got, want, "{tag}");
            assert_eq!(t.kernels.len(), want.len(), "{tag}: one row per signature");
        }
    }
}
