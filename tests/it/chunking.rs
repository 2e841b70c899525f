//! Chunk-boundary independence: parsing a real trace in one chunk or in chunks of any size
//! (down to a few hundred bytes, so that candidate boundaries fall everywhere, including inside
//! strings that contain `}, {`) gives identical tables. Inputs: real files plus one generated
//! adversarial array.

use crate::common;

use profscope::ingest::chrome_json::ingest_slice;
use profscope::model::Tables;

/// One event, with strings resolved: name, thread, ts, dur, stream, category, task type.
type EventPrint = (String, String, i64, i64, i32, String, String);

/// Everything observable about the events, in table order, with strings resolved.
fn fingerprint(t: &Tables) -> Vec<EventPrint> {
    (0..t.events.len())
        .map(|i| {
            (
                t.event_name(i).to_string(),
                t.thread_label(t.events.thread[i]),
                t.events.ts_ns[i],
                t.events.dur_ns.at(i),
                t.events.stream.at(i),
                t.events.category[i].as_str().to_string(),
                t.str(t.events.task_type.at(i)).to_string(),
            )
        })
        .collect()
}

#[test]
fn real_traces_parse_identically_at_any_chunk_size() {
    for rel in [
        "ascend-pt/text/level2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "torch-cpu/torch_cpu_tiny_transformer_trace.json",
    ] {
        let b = std::fs::read(common::samples_dir().join(rel)).unwrap();
        let one = ingest_slice(rel, &b, usize::MAX / 2).unwrap();
        let want = fingerprint(&one);
        for chunk in [300, 4096, 65_536, 1 << 20] {
            let t = ingest_slice(rel, &b, chunk).unwrap();
            assert_eq!(fingerprint(&t), want, "{rel} with {chunk}-byte chunks");
            assert_eq!(t.counters.len(), one.counters.len());
            assert_eq!(t.flows.len(), one.flows.len());
        }
    }
}

#[test]
fn false_boundaries_inside_strings_are_repaired() {
    let mut s = String::from("[");
    for i in 0..500 {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!(
            r#"{{"ph": "X", "name": "op{i} }}, {{\"fake\": 1}}, {{", "pid": 1, "tid": 2, "ts": "{}.000", "dur": 1.5, "args": {{"s": "}}, {{x"}}}}"#,
            1000 + i
        ));
    }
    s.push(']');
    let one = ingest_slice("adversarial.json", s.as_bytes(), usize::MAX / 2).unwrap();
    assert_eq!(one.events.len(), 500);
    for chunk in [1, 7, 50, 333] {
        let t = ingest_slice("adversarial.json", s.as_bytes(), chunk).unwrap();
        assert_eq!(fingerprint(&t), fingerprint(&one), "chunk {chunk}");
    }
    assert_eq!(one.event_name(3), "op3 }, {\"fake\": 1}, {");
}

/// The streaming path (gzip files) gives the same tables as the mapped path for any block size,
/// including blocks smaller than one event.
#[test]
fn streamed_blocks_parse_identically() {
    use profscope::ingest::chrome_json::ingest_slice_streamed;
    for rel in [
        "ascend-pt/text/level0/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "torch-cpu/torch_cpu_tiny_transformer_trace.json",
    ] {
        let b = std::fs::read(common::samples_dir().join(rel)).unwrap();
        let want = ingest_slice(rel, &b, usize::MAX / 2).unwrap();
        for (block, chunk) in [
            (97, 50),
            (1000, 300),
            (4096, 4096),
            (65_536, 10_000),
            (1 << 22, 1 << 20),
        ] {
            let t = ingest_slice_streamed(rel, &b, block, chunk).unwrap();
            assert_eq!(
                fingerprint(&t),
                fingerprint(&want),
                "{rel}: block {block}, chunk {chunk}"
            );
            assert_eq!(t.counters.len(), want.counters.len());
            assert_eq!(t.flows.len(), want.flows.len());
            assert_eq!(t.files.rank, want.files.rank);
            assert!(t.diagnostics.is_empty() == want.diagnostics.is_empty());
        }
    }
}

/// The vendor overlap rows and the events, as `analyze` reads a trace (overlap rows as sums).
type Summed = (Vec<(u32, i32, u8, u64, i64)>, usize, u64);

fn summed(t: &Tables) -> (Summed, Vec<EventPrint>) {
    let v = &t.vendor_overlap;
    let rows = (0..v.len())
        .map(|r| {
            (
                v.file[r].0,
                v.device_id[r],
                v.kind[r],
                v.rows[r],
                v.dur_ns[r],
            )
        })
        .collect();
    let diag = t.diagnostics.count("vendor_overlap_as_sums");
    ((rows, t.events.len(), diag), fingerprint(t))
}

/// Overlap rows summed while chunks are parsed ([`profscope::ingest::chrome_json::overlap_sums`])
/// give the tables the merge gives when it sums them all, at every chunk size. Real file: the
/// level1 trace_view.json (2.2 MB) whose 382 `Overlap Analysis` rows are also the db's 382
/// OVERLAP_ANALYSIS rows (tests/it/ascend_db.rs; `python3 -c` counting the events whose pid is
/// the process named `Overlap Analysis`: 382).
#[test]
fn overlap_rows_summed_while_parsing_equal_the_merge_sums() {
    use profscope::ingest::chrome_json::ingest_slice_summing;
    let rel = "ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
    let b = std::fs::read(common::samples_dir().join(rel)).unwrap();
    for chunk in [usize::MAX / 2, 300, 4096, 65_536] {
        let (merged, none) = ingest_slice_summing(rel, &b, chunk, false).unwrap();
        let (t, early) = ingest_slice_summing(rel, &b, chunk, true).unwrap();
        let want = summed(&merged);
        let total: u64 = want.0.0.iter().map(|r| r.3).sum();
        assert_eq!((total, want.0.2, none), (382, 382, 0));
        assert_eq!(summed(&t), want, "{chunk}-byte chunks");
        // One chunk: nothing is parsed after metadata merged. Small chunks: those parsed after
        // the first chunk's metadata merged sum their rows themselves.
        if chunk == usize::MAX / 2 {
            assert_eq!(early, 0);
        } else {
            assert!(early > total / 2, "{chunk}: {early} of {total}");
        }
    }
}

/// Generated trace whose overlap rows are written in eight ways: the shape torch_npu and msprof
/// write (read without the member loop, [`profscope::ingest::chrome_json::overlap_row`]), the
/// legacy roots' unquoted two-decimal times, an escaped name, and five that the member loop must
/// read (no blank after a colon, another member order, a quoted pid, a malformed ts, a thread
/// that is not an overlap row). Every chunk size gives the tables the merge gives when it sums
/// every row itself, and the sums computed here by hand: 250 rows of each way; Computing (tid 0)
/// sums the first, third and fifth ways (1.125 + 2 + 3 µs each), Free (tid 3) the second,
/// fourth and sixth (0.25 + 1.5 + 0.5 µs); the malformed ts is skipped; the other thread's
/// rows stay events beside the 2,000 kernels.
#[test]
fn overlap_rows_written_every_way_are_summed_as_the_member_loop_sums_them() {
    use profscope::ingest::chrome_json::ingest_slice_summing;
    let meta = |name: &str, tid: u32, value: &str| {
        format!(
            r#"{{"name": "{name}", "pid": 7, "tid": {tid}, "args": {{"name": "{value}"}}, "ph": "M"}}"#
        )
    };
    let mut ev = vec![
        meta("process_name", 0, "Overlap Analysis"),
        meta("thread_name", 0, "Computing"),
        meta("thread_name", 3, "Free"),
    ];
    for i in 0..2000u64 {
        let ts = 1_000_000 + 10 * i;
        ev.push(format!(
            r#"{{"name": "MatMul", "pid": 9, "tid": 2, "ts": "{ts}.000", "dur": 2.5, "args": {{"Task Type": "AI_CORE"}}, "ph": "X"}}"#
        ));
        ev.push(match i % 8 {
            0 => format!(r#"{{"name": "Computing", "pid": 7, "tid": 0, "ts": "{ts}.000", "dur": 1.125, "ph": "X"}}"#),
            1 => format!(r#"{{"name": "Free", "pid": 7, "tid": 3, "ts": {ts}.25, "dur": 0.25, "ph": "X"}}"#),
            2 => format!(r#"{{"name": "Comp\"uting", "pid": 7, "tid": 0, "ts": "{ts}.000", "dur": 2, "ph": "X"}}"#),
            3 => format!(r#"{{"name": "Free", "pid":7, "tid": 3, "ts": "{ts}.000", "dur": 1.5, "ph": "X"}}"#),
            4 => format!(r#"{{"ph": "X", "name": "Computing", "pid": 7, "tid": 0, "ts": "{ts}.000", "dur": 3.000}}"#),
            5 => format!(r#"{{"name": "Free", "pid": "7", "tid": 3, "ts": "{ts}.000", "dur": 0.5, "ph": "X"}}"#),
            6 => r#"{"name": "Computing", "pid": 7, "tid": 0, "ts": "abc", "dur": 1.000, "ph": "X"}"#.to_string(),
            _ => format!(r#"{{"name": "Other", "pid": 7, "tid": 5, "ts": "{ts}.000", "dur": 4.000, "ph": "X"}}"#),
        });
    }
    let text = format!("[{}]", ev.join(", "));
    let b = text.as_bytes();
    let computing = 250 * (1_125 + 2_000 + 3_000);
    let free = 250 * (250 + 1_500 + 500);
    for chunk in [usize::MAX / 2, 200, 1000, 4096, 30_000] {
        let (merged, _) = ingest_slice_summing("shapes.json", b, chunk, false).unwrap();
        let (t, early) = ingest_slice_summing("shapes.json", b, chunk, true).unwrap();
        assert_eq!(summed(&t), summed(&merged), "{chunk}-byte chunks");
        let sums: Vec<(u8, u64, i64)> = (0..t.vendor_overlap.len())
            .map(|r| {
                let v = &t.vendor_overlap;
                (v.kind[r], v.rows[r], v.dur_ns[r])
            })
            .collect();
        assert_eq!(sums, vec![(0, 750, computing), (3, 750, free)], "{chunk}");
        assert_eq!(t.events.len(), 2_250, "{chunk}");
        if chunk == 1000 {
            assert!(early > 1_000, "{chunk}: {early} of 1,500");
        }
    }
}

/// Generated trace whose overlap threads are renamed mid-file (a kind changes, the process stops
/// and starts again being `Overlap Analysis`), with overlap events that carry a device hint (not
/// plain: emitted, then summed by the merge): chunks parsed under names that changed before
/// their merge are read again, and every chunk size gives the tables the merge gives alone at
/// that size (the merge applies a chunk's metadata before summing its rows, so the sums depend
/// on where chunks start when names change mid-file; real traces name every thread first).
#[test]
fn overlap_rows_renamed_mid_file_are_summed_under_their_current_names() {
    use profscope::ingest::chrome_json::ingest_slice_summing;
    let meta = |name: &str, pid: u32, tid: u32, value: &str| {
        format!(
            r#"{{"name": "{name}", "pid": {pid}, "tid": {tid}, "args": {{"name": "{value}"}}, "ph": "M"}}"#
        )
    };
    let mut ev = vec![
        meta("process_name", 7, 0, "Overlap Analysis"),
        meta("thread_name", 7, 0, "Computing"),
        meta("thread_name", 7, 3, "Free"),
        meta("process_name", 9, 0, "Ascend Hardware"),
        meta("thread_name", 9, 2, "Stream 2"),
    ];
    for i in 0..3000u64 {
        // Metadata of another process all through the file: it never makes a chunk stale.
        if i % 2 == 0 {
            ev.push(meta("thread_name", 11, (i % 3) as u32, "Thread 1"));
        }
        match i {
            1500 => ev.push(meta("thread_name", 7, 0, "Communication")),
            2200 => ev.push(meta("process_name", 7, 0, "Elsewhere")),
            2600 => ev.push(meta("process_name", 7, 0, "Overlap Analysis")),
            _ => {}
        }
        let ts = 1_000_000 + 10 * i;
        ev.push(format!(
            r#"{{"name": "MatMul", "pid": 9, "tid": 2, "ts": "{ts}.000", "dur": 2.5, "args": {{"Task Type": "AI_CORE"}}, "ph": "X"}}"#
        ));
        ev.push(format!(
            r#"{{"name": "Computing", "pid": 7, "tid": 0, "ts": "{ts}.000", "dur": {}.125, "ph": "X"}}"#,
            1 + i % 5
        ));
        let hint = if i % 97 == 0 {
            r#", "args": {"device": 0}"#
        } else {
            ""
        };
        ev.push(format!(
            r#"{{"name": "Free", "pid": 7, "tid": 3, "ts": "{}.500", "dur": 7.5{hint}, "ph": "X"}}"#,
            ts + 3
        ));
    }
    let text = format!("[{}]", ev.join(", "));
    let b = text.as_bytes();
    // One chunk: the last names hold for every row (Computing renamed Communication, kind 1).
    let (one, _) = ingest_slice_summing("renamed.json", b, usize::MAX / 2, true).unwrap();
    let kinds: Vec<(u8, u64)> = one
        .vendor_overlap
        .kind
        .iter()
        .copied()
        .zip(one.vendor_overlap.rows.iter().copied())
        .collect();
    assert_eq!(kinds, vec![(1, 3000), (3, 3000)]);
    assert_eq!(one.events.len(), 3000);
    let mut differs = 0;
    for chunk in [150, 1000, 4096, 30_000] {
        let (merged, _) = ingest_slice_summing("renamed.json", b, chunk, false).unwrap();
        let (t, early) = ingest_slice_summing("renamed.json", b, chunk, true).unwrap();
        assert_eq!(summed(&t), summed(&merged), "{chunk}-byte chunks");
        differs += (summed(&merged).0 != summed(&one).0) as u32;
        // Most rows are summed while parsing: the other process's metadata in nearly every
        // chunk does not send them back to the merge, only the three renames do.
        let rows: u64 = summed(&t).0.0.iter().map(|r| r.3).sum();
        if chunk == 1000 || chunk == 4096 {
            assert!(early > rows / 2, "{chunk}: {early} of {rows}");
        }
    }
    // The renames matter at these sizes (rows between the renames stay events or change kind).
    assert!(differs > 0);
}

/// Generated trace repeating its metadata (as Kineto's MTIA traces do: 310,046 of kineto5x's
/// 1.04 M records) and renaming processes and threads back and forth between the repeats: at any
/// chunk size the tables hold each process's and thread's last name, labels and sort index in
/// file order, computed here by replaying the records (independently of the parser), and the
/// processes and threads in the order they were first named.
#[test]
fn repeated_metadata_keeps_the_last_value_in_file_order() {
    use std::collections::BTreeMap;
    // (kind, pid, tid, value): kind 0 process_name, 1 process_labels, 2 process_sort_index,
    // 3 thread_name, 4 thread_sort_index.
    let mut records: Vec<(u8, u32, u32, String)> = Vec::new();
    let mut rng = common::Lcg(0x2545_F491_4F6C_DD1D);
    let mut next = |n: u64| rng.next(n as usize) as u64;
    let mut ev = Vec::new();
    for i in 0..4000u64 {
        let pid = 1 + next(3) as u32;
        let tid = next(4) as u32;
        let kind = next(5) as u8;
        // Mostly the same few values, so most records repeat the latest of their key.
        let value = match kind {
            2 | 4 => format!("{}", next(3) * 10),
            _ => format!("name {}", next(2)),
        };
        let (name, arg) = match kind {
            0 => ("process_name", format!(r#""name": "{value}""#)),
            1 => ("process_labels", format!(r#""labels": "{value}""#)),
            2 => ("process_sort_index", format!(r#""sort_index": {value}"#)),
            3 => ("thread_name", format!(r#""name": "{value}""#)),
            _ => ("thread_sort_index", format!(r#""sort_index": {value}"#)),
        };
        ev.push(format!(
            r#"{{"name": "{name}", "ph": "M", "ts": 0.000, "pid": {pid}, "tid": {tid}, "args": {{{arg}}}}}"#
        ));
        records.push((kind, pid, tid, value));
        if i % 3 == 0 {
            ev.push(format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "op", "pid": {pid}, "tid": {tid}, "ts": {}.5, "dur": 1.0}}"#,
                100 + i
            ));
        }
    }
    let text = format!("[{}]", ev.join(",\n"));
    let b = text.as_bytes();
    let mut want_p: BTreeMap<(u32, u8), String> = BTreeMap::new();
    let mut want_t: BTreeMap<(u32, u32, u8), String> = BTreeMap::new();
    for (kind, pid, tid, value) in &records {
        if *kind < 3 {
            want_p.insert((*pid, *kind), value.clone());
        } else {
            want_t.insert((*pid, *tid, *kind), value.clone());
        }
    }
    let one = ingest_slice("meta.json", b, usize::MAX / 2).unwrap();
    for chunk in [200, 1000, 4096, 50_000, usize::MAX / 2] {
        let t = ingest_slice("meta.json", b, chunk).unwrap();
        let p = &t.processes;
        let mut got_p: BTreeMap<(u32, u8), String> = BTreeMap::new();
        for i in 0..p.pid.len() {
            let pid = p.pid[i] as u32;
            for (kind, v) in [
                (0u8, t.str(p.name[i]).to_string()),
                (1, t.str(p.labels[i]).to_string()),
            ] {
                if want_p.contains_key(&(pid, kind)) {
                    got_p.insert((pid, kind), v);
                }
            }
            if want_p.contains_key(&(pid, 2)) {
                got_p.insert((pid, 2), p.sort_index[i].to_string());
            }
        }
        assert_eq!(got_p, want_p, "{chunk}-byte chunks: processes");
        let th = &t.threads;
        let mut got_t: BTreeMap<(u32, u32, u8), String> = BTreeMap::new();
        for i in 0..th.tid.len() {
            let pid = p.pid[th.process[i].idx()] as u32;
            let tid = th.tid[i] as u32;
            if want_t.contains_key(&(pid, tid, 3)) {
                got_t.insert((pid, tid, 3), t.str(th.name[i]).to_string());
            }
            if want_t.contains_key(&(pid, tid, 4)) {
                got_t.insert((pid, tid, 4), th.sort_index[i].to_string());
            }
        }
        assert_eq!(got_t, want_t, "{chunk}-byte chunks: threads");
        assert_eq!(t.events.len(), 1334, "{chunk}-byte chunks: events");
        // The same processes and threads as one chunk gives (their order follows where chunks
        // start, with or without repeated records: the same at 200-byte chunks before and after
        // repeats were dropped).
        let keys = |t: &Tables| {
            let mut v: Vec<(i64, i64)> = (0..t.threads.len())
                .map(|i| {
                    (
                        t.processes.pid[t.threads.process[i].idx()],
                        t.threads.tid[i],
                    )
                })
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(keys(&t), keys(&one), "{chunk}");
        assert_eq!(p.len(), one.processes.len(), "{chunk}");
    }
}
