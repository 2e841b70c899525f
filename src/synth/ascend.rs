//! One rank's torch_npu `trace_view.json` of an LLM serving run: eager prefill steps, then decode
//! steps as graph replays (NOTIFY_WAIT for update_step_context, CAPTURE_RECORD, the replay's
//! kernels, EVENT_WAIT around HcclAllReduce / allreduceAicpuKernel, SDMA_SQE copies, MEM_WAIT_VALUE
//! before each MTP head), host-side forward_eager / forward_cudagraph with batch and KV markers,
//! Dequeue@aclnn* rows, CANN launches with HostToDevice flows, HBM counters and the vendor's
//! Overlap Analysis. Process layout and arg names follow the real 2025 sample; graph-mode task
//! spellings (NOTIFY_WAIT, CAPTURE_RECORD, MEM_WAIT_VALUE, SDMA_SQE) follow the seeds' rules,
//! since no public trace has them.

use super::db::{DbWriter, TaskInfo};
use super::rng::Rng;
use super::truth::RankTruth;
use super::writer::EventWriter;
use crate::model::Category;
use std::io::Result;

pub const STREAM_COMPUTE: i64 = 2;
pub const STREAM_COMM: i64 = 3;
pub const STREAM_COPY: i64 = 5;

/// (kernel name, task type, min ns, max ns) of one layer of the model, in order.
const LAYER: &[(&str, &str, i64, i64)] = &[
    ("AddRmsNorm", "AI_VECTOR_CORE", 3_000, 6_000),
    ("MatMulV2", "AI_CORE", 18_000, 40_000),
    ("FusedInferAttentionScore", "MIX_AIC", 20_000, 60_000),
    ("MatMulV2", "AI_CORE", 12_000, 25_000),
    ("AddRmsNorm", "AI_VECTOR_CORE", 3_000, 6_000),
    ("MoeInitRoutingV3", "AI_VECTOR_CORE", 5_000, 9_000),
    ("GroupedMatmul", "AI_CORE", 30_000, 70_000),
    ("GroupedMatmul", "AI_CORE", 25_000, 55_000),
    ("ConcatD", "MIX_AIV", 2_000, 5_000),
];

pub struct RankGen<'a> {
    pub rng: Rng,
    pub w: EventWriter,
    /// The same run as a torch_npu db, when asked for.
    pub db: Option<DbWriter>,
    pub truth: &'a mut RankTruth,
    pub pid_py: i64,
    pub pid_hw: i64,
    pub pid_hccl: i64,
    pub pid_cann: i64,
    pub pid_overlap: i64,
    pub pid_mem: i64,
    /// Device clock: end of the last task on the compute stream.
    pub now: i64,
    /// Host clock: the main Python thread is free from here (host scopes never overlap partially).
    host_free: i64,
    task_id: u64,
    conn: u64,
    last_compute_end: Option<i64>,
    last_busy_end: Option<i64>,
    /// The phase of the step being written (`prefill` / `decode`).
    phase: &'static str,
    /// End of the last busy run covered by Overlap Analysis rows.
    overlap_end: Option<i64>,
    /// Why the gap before the next busy interval exists (ground truth of bubble causes);
    /// [`QUEUED`]: nothing but the launch explains it (see `busy`).
    gap_label: &'static str,
    /// Start of the host call that launches the current step's device work.
    launch_at: i64,
    /// This replay's host dispatch is slow (gaps of 2-6 µs between kernels).
    slow_replay: bool,
    gaps: Vec<(i64, i64)>,
    /// Intervals of this step for Overlap Analysis: (start, end, is_comm).
    step_busy: Vec<(i64, i64, bool)>,
    /// Compute kernel durations, percent of normal (100; more for an injected slow rank).
    pub compute_pct: i64,
    /// Graph mode: the capture-time connection id of each task of each graph (model id, ids),
    /// from `capture_graphs`; empty in eager decode.
    graphs: Vec<(i64, Vec<u64>)>,
    /// The replay being written: (index into `graphs`, next task), None outside replays.
    replay: Option<(usize, usize)>,
    /// The last connection id given to a captured launch (far above the steps' ids).
    capture_conn: u64,
    /// The thread of `launch`'s CANN call: the task queue's, or in graph mode the Python main
    /// thread's (NPUGraph.replay calls aclmdlRIExecuteAsync itself).
    launch_tid: i64,
}

/// The tasks of one replay of a generated graph, in the order the generator writes them: the
/// step's record (the MTP head's value wait), then per layer its kernels with the allreduce
/// (HcclAllReduce, allreduceAicpuKernel, EVENT_WAIT) after the fourth.
fn graph_tasks(layers: u64, head: bool) -> Vec<&'static str> {
    let mut v = vec![if head {
        "MEM_WAIT_VALUE"
    } else {
        "CAPTURE_RECORD"
    }];
    for _ in 0..layers {
        for (k, l) in LAYER.iter().enumerate() {
            v.push(l.0);
            if k == 3 {
                v.extend(["HcclAllReduce", "allreduceAicpuKernel", "EVENT_WAIT"]);
            }
        }
    }
    v
}

/// The framework op (`Dequeue@...` on the task-queue thread) that launched a task at capture.
fn captured_op(task: &str) -> String {
    match task {
        "CAPTURE_RECORD" => "Dequeue@aclrtRecordEvent".into(),
        "EVENT_WAIT" => "Dequeue@aclrtStreamWaitEvent".into(),
        "MEM_WAIT_VALUE" => "Dequeue@aclrtValueWait".into(),
        "HcclAllReduce" | "allreduceAicpuKernel" => "Dequeue@HcclAllReduce".into(),
        k => format!("Dequeue@aclnn{k}"),
    }
}

/// Model ids of the generated graphs: the decode step's main graph and the MTP head's.
pub const GRAPH_MAIN: i64 = 1;
pub const GRAPH_MTP: i64 = 2;

/// Ascend's model id of a task outside any graph.
const NO_MODEL: i64 = 4_294_967_295;

/// A gap with no cause but its next task's launch (every generated task is linked to its
/// step's launch call): `host_dispatch` when that call began after the gap began, else
/// `device_scheduling` (docs/analyses/bubbles.md, rules 3 and 8).
const QUEUED: &str = "queued";

fn packed_pid(host_pid: i64, sort_index: i64, device: i64) -> i64 {
    (host_pid << 10) | (sort_index << 5) | device
}

impl<'a> RankGen<'a> {
    pub fn new(rank: u32, seed: u64, w: EventWriter, truth: &'a mut RankTruth, t0: i64) -> Self {
        let host = 3_096_504 + rank as i64 * 17;
        let dev = rank as i64 % 8;
        RankGen {
            rng: Rng::new(seed ^ ((rank as u64 + 1) << 32)),
            w,
            db: None,
            truth,
            pid_py: host,
            pid_hw: packed_pid(host, 14, dev),
            pid_hccl: packed_pid(host, 16, dev),
            pid_cann: packed_pid(host, 7, 31),
            pid_overlap: packed_pid(host, 31, dev) + (1 << 10),
            pid_mem: packed_pid(host, 17, dev),
            now: t0,
            host_free: t0 - 1_000_000,
            task_id: 1,
            conn: 1000,
            last_compute_end: None,
            last_busy_end: None,
            phase: "prefill",
            overlap_end: None,
            gap_label: QUEUED,
            launch_at: i64::MIN,
            slow_replay: false,
            gaps: Vec::new(),
            step_busy: Vec::new(),
            compute_pct: 100,
            graphs: Vec::new(),
            replay: None,
            capture_conn: 900_000_000,
            launch_tid: host + 3,
        }
    }

    /// The device id this rank's NPU processes carry.
    pub fn device(&self) -> i64 {
        self.pid_hw & 31
    }

    fn span(&mut self, ts: i64, dur: i64) {
        let t = &mut *self.truth;
        t.window_start_ns = if t.window_start_ns == 0 {
            ts
        } else {
            t.window_start_ns.min(ts)
        };
        t.window_end_ns = t.window_end_ns.max(ts + dur);
    }

    fn count(&mut self, process: &str, cat: Category, ts: i64, dur: i64) {
        *self
            .truth
            .x_events_by_process
            .entry(process.to_string())
            .or_default() += 1;
        self.truth
            .by_category
            .entry(cat.as_str().to_string())
            .or_default()
            .add(dur);
        self.span(ts, dur);
    }

    pub fn metadata(&mut self) -> Result<()> {
        let procs = [
            (self.pid_py, "Python", "CPU", 0),
            (self.pid_cann, "CANN", "CPU", 7),
            (self.pid_hw, "Ascend Hardware", "NPU", 13),
            (self.pid_hccl, "HCCL", "NPU", 15),
            (self.pid_mem, "NPU MEM", "NPU", 19),
            (self.pid_overlap, "Overlap Analysis", "NPU", 23),
        ];
        for (pid, name, label, sort) in procs {
            self.w
                .meta("process_name", pid, 0, "name", &format!("\"{name}\""))?;
            self.w
                .meta("process_labels", pid, 0, "labels", &format!("\"{label}\""))?;
            self.w.meta(
                "process_sort_index",
                pid,
                0,
                "sort_index",
                &sort.to_string(),
            )?;
            self.truth.metadata += 3;
        }
        for (pid, tid) in [
            (self.pid_py, self.pid_py),
            (self.pid_py, self.pid_py + 3),
            (self.pid_cann, self.pid_py + 3),
        ] {
            self.w.meta(
                "thread_name",
                pid,
                tid,
                "name",
                &format!("\"Thread {tid}\""),
            )?;
            self.truth.metadata += 1;
        }
        for s in [STREAM_COMPUTE, STREAM_COMM, STREAM_COPY] {
            self.w.meta(
                "thread_name",
                self.pid_hw,
                s,
                "name",
                &format!("\"Stream {s}\""),
            )?;
            self.truth.metadata += 1;
        }
        self.w.meta(
            "thread_name",
            self.pid_hccl,
            0,
            "name",
            "\"Group 0 Communication\"",
        )?;
        self.truth.metadata += 1;
        for (tid, name) in [
            (0, "Computing"),
            (1, "Communication"),
            (2, "Communication(Not Overlapped)"),
            (3, "Free"),
        ] {
            self.w.meta(
                "thread_name",
                self.pid_overlap,
                tid,
                "name",
                &format!("\"{name}\""),
            )?;
            self.truth.metadata += 1;
        }
        Ok(())
    }

    /// One device task on Ascend Hardware; returns its end.
    fn task(
        &mut self,
        name: &str,
        task_type: &str,
        stream: i64,
        ts: i64,
        dur: i64,
        cat: Category,
    ) -> Result<i64> {
        self.task_id += 1;
        let (model, conn) = self.replayed_task(name, ts, dur);
        let args = format!(
            "\"Model Id\": {model}, \"Task Type\": \"{task_type}\", \"Physic Stream Id\": {stream}, \"Task Id\": {}, \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": {conn}",
            self.task_id
        );
        self.w.device_x(name, self.pid_hw, stream, ts, dur, &args)?;
        if let Some(db) = &mut self.db {
            // The db's taskType is the host task type: the kernel's, else the task's own name.
            let (tt, info) = match cat {
                Category::ComputeKernel => (
                    task_type,
                    TaskInfo::Kernel {
                        name,
                        op_type: name,
                    },
                ),
                Category::CommKernel => (task_type, TaskInfo::Schedule { name }),
                _ => (name, TaskInfo::None),
            };
            db.task((ts, ts + dur), stream, tt, (conn as i64, model), info)?;
        }
        self.count("Ascend Hardware", cat, ts, dur);
        self.truth.streams.entry(stream).or_default().add(dur);
        match cat {
            Category::ComputeKernel => {
                self.truth
                    .kernels
                    .entry(name.to_string())
                    .or_default()
                    .add(dur);
                self.truth
                    .phase_kernels
                    .entry(self.phase.to_string())
                    .or_default()
                    .add(dur);
            }
            Category::CommKernel => self.truth.comm_kernels.add(dur),
            _ => {}
        }
        if stream == STREAM_COMPUTE {
            if let Some(prev) = self.last_compute_end {
                let gap = ts - prev;
                self.truth.compute_stream_gaps.add(gap);
                self.gaps.push((gap, prev));
            }
            self.last_compute_end = Some(ts + dur);
        }
        if matches!(cat, Category::ComputeKernel | Category::CommKernel) {
            self.step_busy
                .push((ts, ts + dur, cat == Category::CommKernel));
            self.busy(ts, dur);
        }
        Ok(ts + dur)
    }

    /// Device busy time (compute and communication kernels) is placed strictly in sequence, so
    /// the generator knows every idle gap and why it left it (`gap_label`, set by the caller).
    fn busy(&mut self, ts: i64, dur: i64) {
        let t = &mut *self.truth;
        match self.last_busy_end {
            None => t.device_window_start_ns = ts,
            Some(prev) => {
                let gap = ts - prev;
                assert!(gap >= 0, "generator placed overlapping busy time");
                // Serving markers outrank a late launch; every other cause yields to it.
                let label = match self.gap_label {
                    l @ ("update_step_context_sync" | "mtp_wait") => l,
                    _ if self.launch_at > prev => "host_dispatch",
                    QUEUED => "device_scheduling",
                    l => l,
                };
                if gap >= super::truth::BUBBLE_MIN_GAP_NS {
                    t.bubbles.entry(label.to_string()).or_default().add(gap);
                }
            }
        }
        t.device_busy_ns += dur;
        t.device_window_end_ns = ts + dur;
        self.last_busy_end = Some(ts + dur);
        self.gap_label = if self.slow_replay {
            "host_dispatch"
        } else {
            QUEUED
        };
    }

    /// A framework op on the main thread (`cpu_op`), or, with a task-queue correlation id, a
    /// `Dequeue@...` row on the queue thread (`dequeue`); written to the JSON and the db alike.
    fn host(
        &mut self,
        name: &str,
        tid: i64,
        (ts, dur): (i64, i64),
        correlation: Option<i64>,
    ) -> Result<()> {
        let (cat, args, api_type) = match correlation {
            Some(c) => ("dequeue", format!("\"correlation_id\": {c}"), 50002),
            None => (
                "cpu_op",
                "\"Sequence number\": -1, \"Fwd thread id\": 0".to_string(),
                50001,
            ),
        };
        self.w
            .host_x(name, self.pid_py, tid, ts, dur, (cat, &args))?;
        if let Some(db) = &mut self.db {
            db.pytorch_api(name, api_type, (ts, ts + dur), tid, correlation)?;
        }
        self.count("Python", Category::HostOp, ts, dur);
        Ok(())
    }

    /// The host API that launched this step's device work; its connection_id is the one every task
    /// of the step carries (set by `begin_step`), as in real torch_npu exports.
    fn launch(&mut self, api: &str, ts: i64, dur: i64, device_ts: i64) -> Result<()> {
        let args = format!(
            "\"Thread Id\": {}, \"Mode\": \"ACL_RTS\", \"level\": \"acl\", \"id\": \"{api}\", \"item_id\": \"0\", \"connection_id\": {}",
            self.launch_tid, self.conn
        );
        self.w.device_x(
            &format!("AscendCL@{api}"),
            self.pid_cann,
            self.launch_tid,
            ts,
            dur,
            &args,
        )?;
        if let Some(db) = &mut self.db {
            db.cann_api(
                api,
                20000,
                (ts, ts + dur),
                self.launch_tid,
                self.conn as i64,
            )?;
        }
        self.count("CANN", Category::HostOp, ts, dur);
        let id = format!("\"{}\"", self.conn);
        let name = format!("HostToDevice{}", self.conn);
        self.w.flow(
            's',
            &name,
            "HostToDevice",
            &id,
            (self.pid_cann, self.launch_tid),
            ts,
        )?;
        self.w.flow(
            'f',
            &name,
            "HostToDevice",
            &id,
            (self.pid_hw, STREAM_COMPUTE),
            device_ts,
        )?;
        self.truth.flows += 2;
        Ok(())
    }

    /// The kernels of `layers` layers on the compute stream from `t`; allreduce after attention.
    fn layers(&mut self, mut t: i64, layers: u64, scale: i64, graph: bool) -> Result<i64> {
        for _ in 0..layers {
            for (k, &(name, tt, lo, hi)) in LAYER.iter().enumerate() {
                let gap = if graph && self.slow_replay {
                    self.rng.range(2_000, 6_000)
                } else if graph {
                    self.rng.range(0, 800)
                } else {
                    self.rng.range(2_000, 9_000)
                };
                t += gap;
                let dur = self.rng.range(lo, hi) * scale * self.compute_pct / 100;
                t = self.task(name, tt, STREAM_COMPUTE, t, dur, Category::ComputeKernel)?;
                if k == 3 {
                    t = self.allreduce(t)?;
                }
            }
        }
        Ok(t)
    }

    /// EVENT_WAIT on compute while HcclAllReduce + allreduceAicpuKernel run on the comm stream.
    fn allreduce(&mut self, t: i64) -> Result<i64> {
        let c0 = t + 500;
        self.gap_label = "waiting_for_collective";
        let comm = self.rng.range(15_000, 45_000);
        let aicpu = self.rng.range(2_000, 4_000);
        let c1 = self.task(
            "HcclAllReduce",
            "COMMUNICATION",
            STREAM_COMM,
            c0,
            comm,
            Category::CommKernel,
        )?;
        let c2 = self.task(
            "allreduceAicpuKernel",
            "AI_CPU",
            STREAM_COMM,
            c1,
            aicpu,
            Category::CommKernel,
        )?;
        let op = format!(
            "\"connection_id\": {}, \"model id\": 4294967295, \"data_type\": \"BF16\", \"alg_type\": \"MESH\", \"count\": 4194304",
            self.conn
        );
        self.w.device_x(
            "hcom_allReduce__101_0_1",
            self.pid_hccl,
            0,
            c0,
            c2 - c0,
            &op,
        )?;
        if let Some(db) = &mut self.db {
            db.comm_op("hcom_allReduce__101_0_1", (c0, c2), self.conn as i64, "0")?;
        }
        self.count("HCCL", Category::CommKernel, c0, c2 - c0);
        let wait_start = t + 200;
        self.task(
            "EVENT_WAIT",
            "EVENT_WAIT",
            STREAM_COMPUTE,
            wait_start,
            c2 - wait_start,
            Category::WaitSync,
        )
    }

    /// The vendor's Overlap Analysis rows for the busy time placed since the last call, with the
    /// vendor's definitions: Computing = compute kernels, Communication (and Not Overlapped, as
    /// nothing overlaps here) = collectives, Free = gaps between busy runs since the previous run.
    fn overlap_analysis(&mut self) -> Result<()> {
        let mut busy = std::mem::take(&mut self.step_busy);
        busy.sort_unstable();
        let mut runs: Vec<(i64, i64, bool)> = Vec::new();
        for (s, e, comm) in busy {
            match runs.last_mut() {
                Some(last) if last.2 == comm && s <= last.1 => last.1 = last.1.max(e),
                _ => runs.push((s, e, comm)),
            }
        }
        for (s, e, comm) in runs {
            if let Some(prev) = self.overlap_end
                && s > prev
            {
                self.vendor_row("Free", 3, prev, s)?;
            }
            if comm {
                self.vendor_row("Communication", 1, s, e)?;
                self.vendor_row("Communication(Not Overlapped)", 2, s, e)?;
            } else {
                self.vendor_row("Computing", 0, s, e)?;
            }
            self.overlap_end = Some(self.overlap_end.map_or(e, |p| p.max(e)));
        }
        Ok(())
    }

    fn vendor_row(&mut self, name: &str, tid: i64, s: i64, e: i64) -> Result<()> {
        self.w.bare_x(name, self.pid_overlap, tid, s, e - s)?;
        if let Some(db) = &mut self.db {
            db.overlap(tid, (s, e))?;
        }
        self.count("Overlap Analysis", Category::VendorOverlap, s, e - s);
        Ok(())
    }

    fn begin_step(&mut self, phase: &'static str) {
        self.conn += 1;
        self.phase = phase;
    }

    pub fn prefill_step(&mut self, layers: u64) -> Result<()> {
        self.begin_step("prefill");
        let step_start = self.now;
        let host0 = (step_start - 400_000).max(self.host_free);
        self.launch_at = host0 + 41_000;
        let dev0 = step_start + self.rng.range(20_000, 60_000);
        let end = self.layers(dev0, layers, 4, false)?;
        let host_dur = (end - host0 - 50_000).max(60_000);
        self.host_free = host0 + host_dur + 5_000;
        self.host("forward_eager", self.pid_py, (host0, host_dur), None)?;
        self.host(
            "aten::embedding",
            self.pid_py,
            (host0 + 2_000, 30_000),
            None,
        )?;
        self.host(
            "Dequeue@aclnnEmbedding",
            self.pid_py + 3,
            (host0 + 40_000, 9_000),
            Some(1),
        )?;
        self.launch("aclnnEmbedding", self.launch_at, 6_000, dev0)?;
        self.overlap_analysis()?;
        self.truth.prefill_steps += 1;
        self.now = end;
        Ok(())
    }

    pub fn decode_step(&mut self, layers: u64, mtp_heads: u64, batch: u64) -> Result<()> {
        self.begin_step("decode");
        let step_start = self.now;
        let host0 = (step_start - 150_000).max(self.host_free);
        self.launch_at = host0 + 60_000;
        self.slow_replay = self.rng.chance(10);
        self.truth.slow_replays += self.slow_replay as u64;
        // update_step_context sync: mostly short, sometimes long.
        let notify = if self.rng.chance(10) {
            self.rng.range(150_000, 400_000)
        } else {
            self.rng.range(8_000, 40_000)
        };
        let n0 = step_start + self.rng.range(20_000, 120_000);
        let n1 = self.task(
            "NOTIFY_WAIT",
            "NOTIFY_WAIT",
            STREAM_COMPUTE,
            n0,
            notify,
            Category::WaitSync,
        )?;
        let r0 = n1 + self.rng.range(1_000, 5_000);
        self.begin_replay(GRAPH_MAIN, self.launch_at);
        let r1 = self.task(
            "CAPTURE_RECORD",
            "CAPTURE_RECORD",
            STREAM_COMPUTE,
            r0,
            1_000,
            Category::WaitSync,
        )?;
        self.gap_label = "update_step_context_sync";
        let mut t = self.layers(r1, layers, 1, true)?;
        self.replay = None;
        self.truth.notify_wait_ns.push(notify);
        self.truth.replay_ns.push(t - r0);
        let copy = self.rng.range(5_000, 15_000);
        self.task(
            "MEMCPY_ASYNC",
            "SDMA_SQE",
            STREAM_COPY,
            r1 + 10_000,
            copy,
            Category::DataMovement,
        )?;
        let mut mtp_launches = Vec::new();
        for _ in 0..mtp_heads {
            let w0 = t + self.rng.range(500, 2_000);
            let at = self.launch_at + 25_000 + 21_000 * mtp_launches.len() as i64;
            if !self.graphs.is_empty() {
                mtp_launches.push((at, w0));
            }
            self.begin_replay(GRAPH_MTP, at);
            let wait = self.rng.range(3_000, 12_000);
            t = self.task(
                "MEM_WAIT_VALUE",
                "MEM_WAIT_VALUE",
                STREAM_COMPUTE,
                w0,
                wait,
                Category::WaitSync,
            )?;
            self.truth.mem_wait_ns.push(wait);
            self.gap_label = "mtp_wait";
            let head_start = t;
            t = self.layers(t, 1, 1, true)?;
            self.replay = None;
            self.truth.mtp_head_ns.push(t - head_start);
        }
        self.decode_host_ops(host0, batch)?;
        if !self.graphs.is_empty() {
            self.launch_tid = self.pid_py;
        }
        self.launch("aclmdlRIExecuteAsync", self.launch_at, 20_000, r0)?;
        for (at, device_ts) in mtp_launches {
            // Every CANN call has its own connection id.
            let step_conn = self.conn;
            self.capture_conn += 1;
            self.conn = self.capture_conn;
            self.launch("aclmdlRIExecuteAsync", at, 20_000, device_ts)?;
            self.conn = step_conn;
        }
        self.launch_tid = self.pid_py + 3;
        self.truth.graph_launches += !self.graphs.is_empty() as u64 * (1 + mtp_heads);
        self.overlap_analysis()?;
        if self.truth.decode_steps.is_multiple_of(8) {
            let kb = 41_943_040 + (self.truth.decode_steps % 64) as i64 * 1024;
            self.w
                .counter("APP/HBM", self.pid_mem, t, "KB", kb as f64)?;
            if let Some(db) = &mut self.db {
                db.npu_mem(t, kb * 1024)?;
            }
            self.truth.counters += 1;
        }
        self.truth.decode_steps += 1;
        self.now = t + self.rng.range(5_000, 60_000);
        Ok(())
    }

    /// The decode step's host side: forward_cudagraph with its batch and KV-context markers,
    /// update_step_context, and the input copy's dequeue.
    fn decode_host_ops(&mut self, host0: i64, batch: u64) -> Result<()> {
        let kv_min = self.rng.range(100, 2_000);
        let kv_max = kv_min + self.rng.range(0, 1_000);
        let kv_mean = (kv_min + kv_max) as f64 / 2.0;
        self.truth.kv_context.push((kv_min, kv_max, kv_mean));
        let host_dur = 120_000;
        self.host_free = host0 + host_dur + 5_000;
        self.host("forward_cudagraph", self.pid_py, (host0, host_dur), None)?;
        self.host(
            &format!("decode_actual_batch_size={batch}"),
            self.pid_py,
            (host0 + 1_000, host_dur - 2_000),
            None,
        )?;
        self.host(
            &format!("decode_kv_context_min={kv_min},max={kv_max},mean={kv_mean}"),
            self.pid_py,
            (host0 + 2_000, host_dur - 4_000),
            None,
        )?;
        self.host(
            "update_step_context",
            self.pid_py,
            (host0 + 3_000, 25_000),
            None,
        )?;
        self.host(
            "Dequeue@aclnnInplaceCopy",
            self.pid_py + 3,
            (host0 + 30_000, 8_000),
            Some(2),
        )?;
        Ok(())
    }

    /// In a replay: the task's graph and its capture-time connection id, counted in the truth;
    /// else (no graph, the step's connection id).
    fn replayed_task(&mut self, name: &str, ts: i64, dur: i64) -> (i64, u64) {
        let Some((g, k)) = self.replay else {
            return (NO_MODEL, self.conn);
        };
        let (model, conns) = &self.graphs[g];
        let (model, conn) = (*model, conns[k.min(conns.len() - 1)]);
        self.replay = Some((g, k + 1));
        let r = self
            .truth
            .graph_replays
            .last_mut()
            .expect("a replay is open");
        r.tasks += 1;
        r.device_ns += dur;
        r.start_ns = if r.tasks == 1 { ts } else { r.start_ns.min(ts) };
        r.end_ns = r.end_ns.max(ts + dur);
        *self.truth.graph_op_ns.entry(captured_op(name)).or_default() += dur;
        (model, conn)
    }

    /// Opens the replay of graph `model` launched at `launch_ns` (tasks follow through `task`).
    fn begin_replay(&mut self, model: i64, launch_ns: i64) {
        let g = self.graphs.iter().position(|x| x.0 == model);
        self.replay = g.map(|g| (g, 0));
        if g.is_some() {
            self.truth.graph_replays.push(super::truth::ReplayTruth {
                decode_step: self.truth.decode_steps,
                graph: model,
                launch_ns,
                ..Default::default()
            });
        }
    }

    /// A CANN API row on the task-queue thread (`<prefix>@<api>`, JSON and db), without flows.
    /// `item` is the `item_id` arg: `0` for AscendCL calls, the launched op for `Node@launch`
    /// (as real exports write it: `Conv2D1`, `trans_TransData_0`).
    fn cann_call(
        &mut self,
        (prefix, level, code): (&str, &str, i64),
        (api, item): (&str, &str),
        (ts, dur): (i64, i64),
        conn: i64,
    ) -> Result<()> {
        let tid = self.pid_py + 3;
        let args = format!(
            "\"Thread Id\": {tid}, \"Mode\": \"ACL_RTS\", \"level\": \"{level}\", \"id\": \"{api}\", \"item_id\": \"{item}\", \"connection_id\": {conn}"
        );
        self.w.device_x(
            &format!("{prefix}@{api}"),
            self.pid_cann,
            tid,
            ts,
            dur,
            &args,
        )?;
        if let Some(db) = &mut self.db {
            db.cann_api(api, code, (ts, ts + dur), tid, conn)?;
        }
        self.count("CANN", Category::HostOp, ts, dur);
        Ok(())
    }

    /// Graph mode: captures the decode step's main graph and the MTP head's graph on the host,
    /// once, before the first decode step (`aclmdlRICaptureBegin`, then per task a
    /// `Dequeue@<op>` on the task-queue thread around its `Node@launch`, then
    /// `aclmdlRICaptureEnd`). Captured launches run no device task (docs/formats/graph-mode.md).
    pub fn capture_graphs(&mut self, layers: u64, mtp_heads: u64) -> Result<()> {
        const ACL: (&str, &str, i64) = ("AscendCL", "acl", 20000);
        const NODE: (&str, &str, i64) = ("Node", "node", 10000);
        let mut t = self.host_free + 50_000;
        let mut specs = vec![(GRAPH_MAIN, graph_tasks(layers, false))];
        if mtp_heads > 0 {
            specs.push((GRAPH_MTP, graph_tasks(1, true)));
        }
        for (model, names) in specs {
            let begin = t;
            self.capture_conn += 1;
            let id = self.capture_conn as i64;
            self.cann_call(ACL, ("aclmdlRICaptureBegin", "0"), (t, 5_000), id)?;
            t += 6_000;
            let mut conns = Vec::with_capacity(names.len());
            for name in names {
                self.capture_conn += 1;
                let conn = self.capture_conn;
                self.host(&captured_op(name), self.pid_py + 3, (t, 8_000), Some(3))?;
                self.cann_call(NODE, ("launch", name), (t + 2_000, 4_000), conn as i64)?;
                conns.push(conn);
                t += 9_000;
            }
            self.capture_conn += 1;
            let id = self.capture_conn as i64;
            self.cann_call(ACL, ("aclmdlRICaptureEnd", "0"), (t, 5_000), id)?;
            t += 6_000;
            self.truth.captured_launches += conns.len() as u64;
            self.truth.capture_ns += t - 1_000 - begin;
            self.graphs.push((model, conns));
        }
        self.host_free = t + 20_000;
        // The device waits for the capture: the first replay starts after its launch.
        self.now = self.now.max(t + 150_000);
        Ok(())
    }

    /// Records the largest compute-stream gaps in the truth.
    pub fn finish_truth(&mut self) {
        self.gaps.sort_unstable_by(|a, b| b.cmp(a));
        self.truth.largest_gaps_ns = self.gaps.iter().take(10).copied().collect();
    }
}
