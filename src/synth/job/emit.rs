//! Writes one rank of a generated training job as torch_npu's text export writes it: the
//! `trace_view.json` (Python steps, CANN launches with their HostToDevice flows, compute tasks on
//! Ascend Hardware stream 2, HCCL ops on one `Group <group> Communication` thread per group, the
//! vendor's Overlap Analysis rows), `kernel_details.csv` (the tasks with their input shapes), and
//! the vendor summaries a trimmed archive keeps (`step_trace_time.csv` with torch_npu's
//! definitions, `communication.json`, `analysis.db`), plus `profiler_info_<rank>.json` and
//! `profiler_metadata.json` (`distributed_args`, `parallel_group_info`).

use super::super::writer::{EventWriter, Sink, us3};
use super::schedule::{CommOp, OpKind, RankTimeline, StepSpan};
use super::topology::{JobGroup, Topology};
use crate::model::hash::vendor_group_hash;
use std::io::{Result, Write};
use std::path::Path;

const PID_PY: i64 = 3_096_504;
const PID_CANN: i64 = 3_170_820_320;
const PID_HW: i64 = 3_170_820_512;
const PID_HCCL: i64 = 3_170_820_576;
const PID_OVERLAP: i64 = 3_170_820_832;
const STREAM: i64 = 2;
const CONN_BASE: u64 = 1_000;

/// The decimal vendor hash a group is named by in communication.json and the HCCL threads.
pub fn group_label(g: &JobGroup) -> String {
    vendor_group_hash(&g.id).to_string()
}

/// An op's name: `<stem>_<last 3 digits of the group hash>_<n>_1`, n counting the rank's ops of
/// that group (the real export's `hcom_allReduce__586_0_1` ... `_3_1`).
pub fn op_names(ops: &[CommOp], groups: &[JobGroup]) -> Vec<String> {
    let mut seen = vec![0u64; groups.len()];
    ops.iter()
        .map(|o| {
            let n = seen[o.group];
            seen[o.group] += 1;
            let tail = vendor_group_hash(&groups[o.group].id) % 1000;
            format!("{}_{tail:03}_{n}_1", o.kind.stem())
        })
        .collect()
}

/// `trace_view.json` of one rank.
pub fn trace_view(path: &Path, rank: u32, tl: &RankTimeline, groups: &[JobGroup]) -> Result<u64> {
    let file = std::fs::File::create(path)?;
    let mut w = EventWriter::new(
        Sink::Plain(std::io::BufWriter::with_capacity(1 << 20, file)),
        "[",
        true,
    )?;
    let procs = [
        (PID_PY, "Python", "CPU", 0),
        (PID_CANN, "CANN", "CPU", 7),
        (PID_HW, "Ascend Hardware", "NPU", 13),
        (PID_HCCL, "HCCL", "NPU", 15),
        (PID_OVERLAP, "Overlap Analysis", "NPU", 23),
    ];
    for (pid, name, label, sort) in procs {
        w.meta("process_name", pid, 0, "name", &format!("\"{name}\""))?;
        w.meta("process_labels", pid, 0, "labels", &format!("\"{label}\""))?;
        w.meta(
            "process_sort_index",
            pid,
            0,
            "sort_index",
            &sort.to_string(),
        )?;
    }
    w.meta(
        "thread_name",
        PID_HW,
        STREAM,
        "name",
        &format!("\"Stream {STREAM}\""),
    )?;
    let mine: Vec<usize> = (0..groups.len())
        .filter(|&g| groups[g].ranks.contains(&rank))
        .collect();
    for &g in &mine {
        let name = format!("\"Group {} Communication\"", group_label(&groups[g]));
        w.meta("thread_name", PID_HCCL, g as i64, "name", &name)?;
    }
    for (tid, name) in [
        "Computing",
        "Communication",
        "Communication(Not Overlapped)",
        "Free",
    ]
    .iter()
    .enumerate()
    {
        w.meta(
            "thread_name",
            PID_OVERLAP,
            tid as i64,
            "name",
            &format!("\"{name}\""),
        )?;
    }
    for s in &tl.steps {
        w.host_x(
            &format!("ProfilerStep#{}", s.number),
            PID_PY,
            PID_PY,
            s.host_start,
            s.end - s.host_start,
            ("cpu_op", "\"Sequence number\": -1, \"Fwd thread id\": 0"),
        )?;
    }
    let tid = PID_PY + 3;
    for (k, &(at, first)) in tl.launches.iter().enumerate() {
        let conn = CONN_BASE + k as u64;
        let args = format!(
            "\"Thread Id\": {tid}, \"Mode\": \"ACL_OP\", \"level\": \"acl\", \"id\": \"aclnnMatmul\", \"item_id\": \"0\", \"connection_id\": {conn}"
        );
        w.device_x("AscendCL@aclnnMatmul", PID_CANN, tid, at, 20_000, &args)?;
        let id = format!("\"{conn}\"");
        let name = format!("HostToDevice{conn}");
        w.flow('s', &name, "HostToDevice", &id, (PID_CANN, tid), at)?;
        w.flow('f', &name, "HostToDevice", &id, (PID_HW, STREAM), first)?;
    }
    for (k, t) in tl.tasks.iter().enumerate() {
        let args = format!(
            "\"Model Id\": 4294967295, \"Task Type\": \"{}\", \"Physic Stream Id\": {STREAM}, \"Task Id\": {}, \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": {}",
            t.task_type,
            k + 1,
            CONN_BASE + t.launch as u64
        );
        w.device_x(t.name, PID_HW, STREAM, t.start, t.dur, &args)?;
    }
    for (o, name) in tl.ops.iter().zip(op_names(&tl.ops, groups)) {
        let args = "\"model id\": 4294967295, \"data_type\": \"BF16\", \"alg_type\": \"MESH\", \"count\": 4194304";
        w.device_x(
            &name,
            PID_HCCL,
            o.group as i64,
            o.start,
            o.end - o.start,
            args,
        )?;
    }
    for (tid, s, e) in overlap_rows(tl) {
        let name = [
            "Computing",
            "Communication",
            "Communication(Not Overlapped)",
            "Free",
        ][tid];
        w.bare_x(name, PID_OVERLAP, tid as i64, s, e - s)?;
    }
    w.finish("]")
}

/// The vendor's Overlap Analysis rows: compute and communication runs (they never overlap in
/// the generated schedule, so communication is all not overlapped) and the free gaps between.
fn overlap_rows(tl: &RankTimeline) -> Vec<(usize, i64, i64)> {
    let mut busy: Vec<(i64, i64, bool)> = tl
        .tasks
        .iter()
        .map(|t| (t.start, t.start + t.dur, false))
        .collect();
    busy.extend(tl.ops.iter().map(|o| (o.start, o.end, true)));
    busy.sort_unstable();
    let mut runs: Vec<(i64, i64, bool)> = Vec::new();
    for (s, e, comm) in busy {
        match runs.last_mut() {
            Some(last) if last.2 == comm && s <= last.1 => last.1 = last.1.max(e),
            _ => runs.push((s, e, comm)),
        }
    }
    let mut out = Vec::new();
    let mut prev: Option<i64> = None;
    for (s, e, comm) in runs {
        if let Some(p) = prev.filter(|&p| s > p) {
            out.push((3, p, s));
        }
        if comm {
            out.push((1, s, e));
            out.push((2, s, e));
        } else {
            out.push((0, s, e));
        }
        prev = Some(prev.map_or(e, |p| p.max(e)));
    }
    out
}

/// One step's vendor numbers as torch_npu's step_trace_time.csv computes them (its
/// `_trace_step_time_parser.py`): Computing / Communication / Communication(Not Overlapped) /
/// Free = the Overlap Analysis rows that start in the step, Bubble = the `hcom_receive` ops
/// that start in it, Stage = first-to-last of those rows minus Bubble, Preparing = first task
/// minus the step's host start; ns.
pub struct VendorStep {
    pub number: i64,
    pub computing: i64,
    pub comm_not_overlapped: i64,
    pub communication: i64,
    pub free: i64,
    pub stage: i64,
    pub bubble: i64,
    pub preparing: i64,
}

pub fn vendor_steps(tl: &RankTimeline) -> Vec<VendorStep> {
    let rows = overlap_rows(tl);
    let in_step = |s: &StepSpan, ts: i64| s.host_start <= ts && ts < s.end + 1;
    tl.steps
        .iter()
        .map(|s| {
            let mut sums = [0i64; 4];
            let (mut first, mut last) = (i64::MAX, i64::MIN);
            let mut first_task = i64::MAX;
            for &(k, a, b) in rows.iter().filter(|r| in_step(s, r.1)) {
                sums[k] += b - a;
                first = first.min(a);
                last = last.max(b);
                if k < 2 {
                    first_task = first_task.min(a);
                }
            }
            let bubble: i64 = tl
                .ops
                .iter()
                .filter(|o| o.kind == OpKind::Receive && in_step(s, o.start))
                .map(|o| o.end - o.start)
                .sum();
            VendorStep {
                number: s.number,
                computing: sums[0],
                communication: sums[1],
                comm_not_overlapped: sums[2],
                free: sums[3],
                stage: (last - first) - bubble,
                bubble,
                preparing: first_task - s.host_start,
            }
        })
        .collect()
}

fn us(ns: i64) -> String {
    us3(ns)
}

/// `step_trace_time.csv` (µs with 3 decimals, as the real file's floats read).
pub fn step_trace_time(path: &Path, steps: &[VendorStep]) -> Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        f,
        "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing"
    )?;
    for s in steps {
        writeln!(
            f,
            "{},{},{},{},{},{},{},{},{},{}",
            s.number,
            us(s.computing),
            us(s.comm_not_overlapped),
            us(s.communication - s.comm_not_overlapped),
            us(s.communication),
            us(s.free),
            us(s.stage),
            us(s.bubble),
            us(s.comm_not_overlapped - s.bubble),
            us(s.preparing)
        )?;
    }
    f.flush()
}

/// `communication.json`: per step, `collective` and `p2p` ops keyed `<name>@<group hash>`, each
/// with its Communication Time Info (start µs, elapse / transit / wait ms: transit is the
/// group's common transfer, wait the rest).
pub fn communication_json(path: &Path, tl: &RankTimeline, groups: &[JobGroup]) -> Result<()> {
    let names = op_names(&tl.ops, groups);
    let mut root = serde_json::Map::new();
    for s in &tl.steps {
        let (mut coll, mut p2p) = (serde_json::Map::new(), serde_json::Map::new());
        for (o, name) in tl.ops.iter().zip(&names) {
            if o.start < s.host_start || o.start > s.end {
                continue;
            }
            let elapse = (o.end - o.start) as f64 / 1e6;
            let info = serde_json::json!({
                "Communication Time Info": {
                    "Start Timestamp(us)": o.start as f64 / 1e3,
                    "Elapse Time(ms)": elapse,
                    "Transit Time(ms)": 0.0,
                    "Wait Time(ms)": 0.0,
                    "Synchronization Time(ms)": 0.0,
                    "Idle Time(ms)": elapse,
                    "Wait Time Ratio": 0.0,
                    "Synchronization Time Ratio": 0.0
                }
            });
            let key = format!("{name}@{}", group_label(&groups[o.group]));
            match o.kind {
                OpKind::Send | OpKind::Receive => p2p.insert(key, info),
                _ => coll.insert(key, info),
            };
        }
        root.insert(
            format!("step{}", s.number),
            serde_json::json!({ "collective": coll, "p2p": p2p }),
        );
    }
    std::fs::write(
        path,
        serde_json::to_vec_pretty(&serde_json::Value::Object(root))?,
    )
}

/// `analysis.db` with StepTraceTime (µs, as torch_npu writes it).
pub fn analysis_db(path: &Path, steps: &[VendorStep]) -> Result<()> {
    let _ = std::fs::remove_file(path);
    let io = |e: rusqlite::Error| std::io::Error::other(e.to_string());
    let c = rusqlite::Connection::open(path).map_err(io)?;
    c.execute_batch("CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC);")
        .map_err(io)?;
    let f = |ns: i64| ns as f64 / 1e3;
    for s in steps {
        c.execute(
            "INSERT INTO StepTraceTime VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            rusqlite::params![
                s.number.to_string(),
                f(s.computing),
                f(s.comm_not_overlapped),
                f(s.communication - s.comm_not_overlapped),
                f(s.communication),
                f(s.free),
                f(s.stage),
                f(s.bubble),
                f(s.comm_not_overlapped - s.bubble),
                f(s.preparing)
            ],
        )
        .map_err(io)?;
    }
    Ok(())
}

/// `kernel_details.csv` with the columns the op-metrics and expert readers use.
pub fn kernel_details(path: &Path, tl: &RankTimeline) -> Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        f,
        "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats"
    )?;
    let mut step = 0usize;
    for (k, t) in tl.tasks.iter().enumerate() {
        while step + 1 < tl.steps.len() && t.start >= tl.steps[step].end {
            step += 1;
        }
        let shapes = if t.tokens > 0 {
            format!("\"\"\"{},4096;8,4096,1408;;;;;8\"\"\"", t.tokens)
        } else {
            "\"\"\"4096,4096;4096,4096\"\"\"".to_string()
        };
        writeln!(
            f,
            "{},4294967295,{},{STREAM},{}_{k},{},static,{},{}\t,{},0,40,0,{shapes},BF16;BF16,ND;ND,\"\"\"4096,4096\"\"\",BF16,ND",
            tl.steps.get(step).map_or(0, |s| s.number),
            k + 1,
            t.name,
            t.name,
            t.task_type,
            us3(t.start),
            us3(t.dur)
        )?;
    }
    f.flush()
}

/// `profiler_metadata.json`: `distributed_args` and the rank's `parallel_group_info` entries
/// (the groups it is a member of, with its index in each), as Megatron jobs write them.
pub fn profiler_metadata(path: &Path, rank: u32, t: &Topology, groups: &[JobGroup]) -> Result<()> {
    let mut info = serde_json::Map::new();
    for g in groups.iter().filter(|g| g.ranks.contains(&rank)) {
        info.insert(
            g.id.clone(),
            serde_json::json!({
                "group_name": g.name,
                "group_rank": g.ranks.iter().position(|&r| r == rank),
                "global_ranks": g.ranks,
            }),
        );
    }
    let v = serde_json::json!({
        "ENV_VARIABLES": {"ASCEND_GLOBAL_LOG_LEVEL": "", "HCCL_RDMA_TC": "", "HCCL_RDMA_SL": "", "ACLNN_CACHE_LIMIT": "", "HOST_CACHE_CAPACITY": "", "ASCEND_ENHANCE_ENABLE": "", "PYTORCH_NPU_ALLOC_CONF": "", "ASCEND_LAUNCH_BLOCKING": ""},
        "distributed_args": {
            "tensor_model_parallel_size": t.tp,
            "pipeline_model_parallel_size": t.pp,
            "data_parallel_size": t.dp,
            "context_parallel_size": 1,
            "expert_model_parallel_size": t.ep,
            "sequence_parallel": false,
            "rank": rank,
            "world_size": t.world(),
        },
        "parallel_group_info": info,
    });
    std::fs::write(path, serde_json::to_vec_pretty(&v)?)
}
