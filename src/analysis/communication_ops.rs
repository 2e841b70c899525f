//! Communication depth: per collective op and rank, where its time went (transit, wait,
//! synchronization, idle), per link type how fast the bytes moved, and the link matrix
//! (src rank → dst rank), with the definitions CANN's communication analyser uses for
//! communication.json / communication_matrix.json (torch_npu's analysis.db CommAnalyzer* tables,
//! which msprof-analyze's `communication_time` / `communication_matrix` modes aggregate).
//!
//! Inputs: the collective ops of a device's file (HCCL `Group … Communication` events) and the
//! HCCL plane tasks (`Plane <n>` events with a comm_tasks row: db COMMUNICATION_TASK_INFO, or
//! trace_view.json args). A plane task belongs to the op whose window holds its start (and whose
//! name it carries, when the task names its op). Rules (docs/analyses/communication_ops.md):
//! - master plane: the lowest plane that carries a task to another rank;
//! - on the master plane, in time order: transit = SDMA `Memcpy` / `Reduce_Inline` tasks off chip,
//!   plus RDMA send groups; wait = `Notify_Wait` tasks; synchronization = the waits before the
//!   first transit; idle = elapsed − transit − wait;
//! - bandwidth (all planes): bytes and time of the transit tasks per link type (HCCS_SW counts as
//!   HCCS; other links as SDMA), SDMA = HCCS + PCIE + SIO + other, GB/s = MB / ms;
//! - matrix (all planes): the same tasks, on chip included (`LOCAL`), per src-dst link; per op
//!   type and link the ops sorted by bandwidth give top1, middle, bottom1-3 and the total.

use super::devices::{CommSource, Device, iv};
pub use crate::contract::communication_ops::*;
use crate::model::hash::FxHashMap;
use crate::model::{ProcessRole, StrId, Tables};

/// Message sizes above which a packet is "large" (MB, decimal), as CANN's analyser sets them.
const LARGE_PACKET_MB_SDMA: f64 = 32.0;
const LARGE_PACKET_MB_RDMA: f64 = 0.5;
/// Tasks of an RDMA send group: RDMASend, RDMASend, Notify_Wait, RDMASend, Notify_Wait.
const RDMA_GROUP: usize = 5;
/// `dst rank` of a task with no peer (UINT32_MAX).
const NO_RANK: i64 = u32::MAX as i64;

/// Link types reported per op, in the vendor's order.
pub const BANDS: [LinkType; 5] = [
    LinkType::Rdma,
    LinkType::Hccs,
    LinkType::Pcie,
    LinkType::Sdma,
    LinkType::Sio,
];

impl OpTimes {
    fn add(&mut self, o: &OpTimes) {
        self.elapsed_ns += o.elapsed_ns;
        self.transit_ns += o.transit_ns;
        self.wait_ns += o.wait_ns;
        self.synchronization_ns += o.synchronization_ns;
        self.idle_ns += o.idle_ns;
    }
    /// wait / (wait + transit); 0 when both are 0.
    pub fn wait_ratio(&self) -> f64 {
        ratio(self.wait_ns, self.wait_ns + self.transit_ns)
    }
    /// synchronization / (synchronization + transit); 0 when both are 0.
    pub fn synchronization_ratio(&self) -> f64 {
        ratio(
            self.synchronization_ns,
            self.synchronization_ns + self.transit_ns,
        )
    }
}

fn ratio(a: i64, b: i64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Band {
    fn new(link: LinkType) -> Self {
        Band {
            link,
            size_bytes: 0,
            time_ns: 0,
            bandwidth_gb_s: 0.0,
            large_packet_ratio: 0.0,
            sizes: Vec::new(),
        }
    }

    fn finish(&mut self, threshold_mb: f64) {
        self.bandwidth_gb_s = gb_s(self.size_bytes, self.time_ns);
        let n: u64 = self.sizes.iter().map(|s| s.1).sum();
        let large: u64 = self
            .sizes
            .iter()
            .filter(|s| s.0 as f64 / 1e6 > threshold_mb)
            .map(|s| s.1)
            .sum();
        self.large_packet_ratio = if n == 0 { 0.0 } else { large as f64 / n as f64 };
    }
}

fn gb_s(bytes: i64, ns: i64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / ns as f64
    }
}

/// One plane task: event index, plane, comm_tasks row.
#[derive(Clone, Copy)]
struct Task {
    ev: u32,
    plane: i32,
    row: u32,
}

/// Interned names the rules compare against (absent names never match).
struct Names {
    sdma: Option<StrId>,
    rdma: Option<StrId>,
    memcpy: Option<StrId>,
    reduce_inline: Option<StrId>,
    notify_wait: Option<StrId>,
    rdma_send: Option<StrId>,
    on_chip: Option<StrId>,
}

impl Names {
    fn new(t: &Tables) -> Names {
        let l = |s| t.strings.lookup(s);
        Names {
            sdma: l("SDMA"),
            rdma: l("RDMA"),
            memcpy: l("Memcpy"),
            reduce_inline: l("Reduce_Inline"),
            notify_wait: l("Notify_Wait"),
            rdma_send: l("RDMASend"),
            on_chip: l("ON_CHIP"),
        }
    }
}

struct View<'a> {
    t: &'a Tables,
    n: Names,
}

impl View<'_> {
    fn kind(&self, task: &Task) -> StrId {
        let i = task.ev as usize;
        let tt = self.t.events.task_type.at(i);
        if tt == StrId::EMPTY {
            self.t.events.name[i]
        } else {
            tt
        }
    }
    fn is(&self, s: StrId, want: Option<StrId>) -> bool {
        want == Some(s)
    }
    fn dur(&self, task: &Task) -> i64 {
        self.t.events.dur_ns.at(task.ev as usize)
    }
    /// An SDMA copy of the collective's data (Memcpy / Reduce_Inline), on chip or not.
    fn sdma_copy(&self, task: &Task) -> bool {
        let c = &self.t.comm_tasks;
        let k = self.kind(task);
        self.is(c.transport[task.row as usize], self.n.sdma)
            && (self.is(k, self.n.memcpy) || self.is(k, self.n.reduce_inline))
    }
    fn on_chip(&self, task: &Task) -> bool {
        self.is(self.t.comm_tasks.link[task.row as usize], self.n.on_chip)
    }
    /// An RDMA send group starting at `i`: RDMA transport, then RDMASend, Notify_Wait.
    fn rdma_group(&self, tasks: &[Task], i: usize) -> bool {
        i + RDMA_GROUP <= tasks.len()
            && self.is(
                self.t.comm_tasks.transport[tasks[i].row as usize],
                self.n.rdma,
            )
            && self.is(self.kind(&tasks[i + 1]), self.n.rdma_send)
            && self.is(self.kind(&tasks[i + 2]), self.n.notify_wait)
    }
    fn size(&self, task: &Task) -> i64 {
        self.t.comm_tasks.size_bytes[task.row as usize].max(0)
    }
    fn peer(&self, task: &Task) -> (i64, i64) {
        let c = &self.t.comm_tasks;
        let src = c.src_rank[task.row as usize];
        let dst = c.dst_rank[task.row as usize];
        (src, if dst == NO_RANK || dst < 0 { src } else { dst })
    }
}

/// Communication depth of every device whose file has collective ops.
pub fn compute(
    t: &Tables,
    devices: &[Device],
    windows: &super::cross_rank::StepWindows,
    top_n: usize,
) -> Vec<DeviceCommOps> {
    let v = View {
        t,
        n: Names::new(t),
    };
    let tasks = plane_tasks(t);
    let steps = windows.get();
    devices
        .iter()
        .filter(|d| {
            d.comm_source == CommSource::HcclGroupOps
                && t.processes.role[d.process.idx()] == ProcessRole::AscendHardware
        })
        .map(|d| one(&v, d, &tasks[d.file.idx()], &steps[d.file.idx()], top_n))
        .collect()
}

/// Plane tasks with details per file, by start. Level0 captures write every task with transport
/// `N/A` (and plane UINT32_MAX): such rows say only that a task ran, so they are left out.
fn plane_tasks(t: &Tables) -> Vec<Vec<Task>> {
    let mut out: Vec<Vec<Task>> = vec![Vec::new(); t.files.len()];
    let mut planes: FxHashMap<u32, i32> = FxHashMap::default();
    let no_detail = [Some(StrId::EMPTY), t.strings.lookup("N/A")];
    for i in 0..t.events.len() {
        let row = t.events.comm_task[i];
        if row == crate::model::events::NO_ROW
            || no_detail.contains(&Some(t.comm_tasks.transport[row as usize]))
        {
            continue;
        }
        let th = t.events.thread[i];
        let plane = *planes.entry(th.0).or_insert_with(|| {
            let name = t.str(t.threads.name[th.idx()]);
            name.strip_prefix("Plane ")
                .and_then(|n| n.trim().parse::<i32>().ok())
                .unwrap_or(t.comm_tasks.plane[row as usize])
        });
        out[t.event_file(i).idx()].push(Task {
            ev: i as u32,
            plane,
            row,
        });
    }
    for v in &mut out {
        v.sort_by_key(|x| (t.events.ts_ns[x.ev as usize], x.ev));
    }
    out
}

/// Per link key (src, dst): transport, bytes, time.
type Links = Vec<((i64, i64), String, i64, i64)>;

fn one(
    v: &View<'_>,
    d: &Device,
    tasks: &[Task],
    steps: &super::cross_rank::Windows,
    top_n: usize,
) -> DeviceCommOps {
    let t = v.t;
    // Ops with plane tasks; their names stay interned until the top N are chosen (a db of 20 M
    // rows has 1.5 M collectives).
    let mut ops: Vec<CommOp> = Vec::new();
    let mut names: Vec<StrId> = Vec::new();
    let mut op_links: Vec<Links> = Vec::new();
    let (mut plane_tasks, mut rdma_ops, mut without) = (0u64, 0u64, 0u64);
    let mut mine: Vec<Task> = Vec::new();
    for &op in &d.comm_ops {
        let (a, b) = iv(t, op);
        let name = t.events.name[op as usize];
        let lo = tasks.partition_point(|x| t.events.ts_ns[x.ev as usize] < a);
        let hi = tasks.partition_point(|x| t.events.ts_ns[x.ev as usize] <= b);
        mine.clear();
        mine.extend(tasks[lo..hi].iter().copied().filter(|x| {
            let own = t.comm_tasks.op_name[x.row as usize];
            own == StrId::EMPTY || own == name
        }));
        // Planes in order, each plane's tasks in time order.
        if mine.is_empty() {
            without += 1;
            continue;
        }
        mine.sort_by_key(|x| (x.plane, t.events.ts_ns[x.ev as usize], x.ev));
        plane_tasks += mine.len() as u64;
        if mine
            .iter()
            .any(|x| v.is(t.comm_tasks.transport[x.row as usize], v.n.rdma))
        {
            rdma_ops += 1;
        }
        let (times, master) = times_of(v, &mine, b - a);
        op_links.push(links_of(v, &mine));
        names.push(name);
        ops.push(CommOp {
            name: String::new(),
            step: steps.step_at(a),
            start_ns: a,
            wait_ratio: times.map(|x| x.wait_ratio()),
            synchronization_ratio: times.map(|x| x.synchronization_ratio()),
            times,
            master_plane: master,
            plane_tasks: mine.len() as u64,
            bandwidth: bands_of(v, &mine),
        });
    }
    let name_of = |k: usize| t.str(names[k]);
    // Per step while the steps are few; over the whole capture (step null) beyond top N steps,
    // so the matrix stays bounded on long captures.
    let mut step_ids: Vec<Option<i64>> = ops.iter().map(|o| o.step).collect();
    step_ids.sort_unstable();
    step_ids.dedup();
    let per_step = step_ids.len() <= top_n.max(1);
    let matrix = matrix(&ops, &name_of, &op_links, per_step);
    let (by_step, total) = totals(ops.iter().filter(|o| o.times.is_some()));
    let ops_total = d.comm_ops.len() as u64;
    let mut listed: Vec<(StrId, CommOp)> = names.into_iter().zip(ops).collect();
    listed.sort_by(|(_, x), (_, y)| {
        let e = |o: &CommOp| o.times.map_or(0, |t| t.elapsed_ns);
        e(y).cmp(&e(x)).then(x.start_ns.cmp(&y.start_ns))
    });
    listed.truncate(top_n);
    let slowest: Vec<CommOp> = listed
        .into_iter()
        .map(|(name, mut o)| {
            o.name = t.str(name).to_string();
            o
        })
        .collect();
    DeviceCommOps {
        device: d.evidence.clone(),
        source: None,
        ops_total,
        plane_tasks,
        ops_without_tasks: without,
        ops_with_rdma: rdma_ops,
        slowest,
        steps: by_step,
        total,
        matrix,
    }
}

/// The ops summed per step (by step) and over all of them (the vendor's "Total Op Info").
pub(super) fn totals<'a>(ops: impl Iterator<Item = &'a CommOp>) -> (Vec<StepTotal>, StepTotal) {
    let mut by_step: Vec<StepTotal> = Vec::new();
    let mut total = empty_total(None);
    for op in ops {
        let k = match by_step.iter().position(|s| s.step == op.step) {
            Some(k) => k,
            None => {
                by_step.push(empty_total(op.step));
                by_step.len() - 1
            }
        };
        for s in [&mut by_step[k], &mut total] {
            add_op(s, op);
        }
    }
    by_step.sort_by_key(|s| s.step);
    for s in by_step.iter_mut().chain(std::iter::once(&mut total)) {
        finish_total(s);
    }
    (by_step, total)
}

fn empty_total(step: Option<i64>) -> StepTotal {
    StepTotal {
        step,
        ops: 0,
        times: OpTimes::default(),
        wait_ratio: 0.0,
        synchronization_ratio: 0.0,
        bandwidth: BANDS.into_iter().map(Band::new).collect(),
    }
}

fn add_op(s: &mut StepTotal, op: &CommOp) {
    s.ops += 1;
    if let Some(x) = &op.times {
        s.times.add(x);
    }
    for (acc, b) in s.bandwidth.iter_mut().zip(&op.bandwidth) {
        acc.size_bytes += b.size_bytes;
        acc.time_ns += b.time_ns;
        if acc.link != LinkType::Sdma {
            for &(size, n, ns) in &b.sizes {
                match acc.sizes.binary_search_by_key(&size, |s| s.0) {
                    Ok(k) => {
                        acc.sizes[k].1 += n;
                        acc.sizes[k].2 += ns;
                    }
                    Err(k) => acc.sizes.insert(k, (size, n, ns)),
                }
            }
        }
    }
}

fn finish_total(s: &mut StepTotal) {
    s.wait_ratio = s.times.wait_ratio();
    s.synchronization_ratio = s.times.synchronization_ratio();
    for b in &mut s.bandwidth {
        b.finish(threshold(b.link));
    }
}

fn threshold(link: LinkType) -> f64 {
    if link == LinkType::Rdma {
        LARGE_PACKET_MB_RDMA
    } else {
        LARGE_PACKET_MB_SDMA
    }
}

/// The time split on the master plane; None without tasks.
fn times_of(v: &View<'_>, mine: &[Task], elapsed: i64) -> (Option<OpTimes>, Option<i32>) {
    if mine.is_empty() {
        return (None, None);
    }
    let t = v.t;
    let remote = |x: &Task| {
        let c = &t.comm_tasks;
        let (s, d) = (c.src_rank[x.row as usize], c.dst_rank[x.row as usize]);
        d >= 0 && d != NO_RANK && d != s
    };
    let master = mine
        .iter()
        .filter(|x| remote(x))
        .map(|x| x.plane)
        .min()
        .unwrap_or(mine[0].plane);
    let lo = mine.partition_point(|x| x.plane < master);
    let hi = mine.partition_point(|x| x.plane <= master);
    let plane = &mine[lo..hi];
    let mut o = OpTimes {
        elapsed_ns: elapsed,
        ..OpTimes::default()
    };
    let mut transit_seen = false;
    let mut i = 0;
    while i < plane.len() {
        let x = &plane[i];
        if v.sdma_copy(x) && !v.on_chip(x) {
            o.transit_ns += v.dur(x);
            transit_seen = true;
        } else if v.rdma_group(plane, i) {
            o.transit_ns += plane[i..i + RDMA_GROUP]
                .iter()
                .map(|x| v.dur(x))
                .sum::<i64>();
            transit_seen = true;
            i += RDMA_GROUP;
            continue;
        } else if v.is(v.kind(x), v.n.notify_wait) {
            o.wait_ns += v.dur(x);
            if !transit_seen {
                o.synchronization_ns += v.dur(x);
            }
        }
        i += 1;
    }
    o.idle_ns = o.elapsed_ns - o.transit_ns - o.wait_ns;
    (Some(o), Some(master))
}

/// Which of [`BANDS`] an off-chip SDMA copy counts under.
fn band_of(v: &View<'_>, x: &Task) -> usize {
    match v.t.str(v.t.comm_tasks.link[x.row as usize]) {
        "HCCS" | "HCCS_SW" => 1,
        "PCIE" => 2,
        "SIO" => 4,
        _ => 3,
    }
}

/// Bytes and time per link type over every plane.
fn bands_of(v: &View<'_>, mine: &[Task]) -> Vec<Band> {
    let mut bands: Vec<Band> = BANDS.into_iter().map(Band::new).collect();
    let mut add = |k: usize, size: i64, ns: i64| {
        let b = &mut bands[k];
        b.size_bytes += size;
        b.time_ns += ns;
        match b.sizes.binary_search_by_key(&size, |s| s.0) {
            Ok(j) => {
                b.sizes[j].1 += 1;
                b.sizes[j].2 += ns;
            }
            Err(j) => b.sizes.insert(j, (size, 1, ns)),
        }
    };
    for_each_transfer(v, mine, false, |x, size, ns, rdma| {
        add(if rdma { 0 } else { band_of(v, x) }, size, ns)
    });
    // SDMA: the sum of the on-node links, without a size distribution of its own.
    let (size, ns) = [1usize, 2, 3, 4].iter().fold((0, 0), |acc, &k| {
        (acc.0 + bands[k].size_bytes, acc.1 + bands[k].time_ns)
    });
    bands[3].sizes.clear();
    bands[3].size_bytes = size;
    bands[3].time_ns = ns;
    for b in &mut bands {
        b.finish(threshold(b.link));
    }
    bands
}

/// Calls `f(first task, bytes, ns, is_rdma)` for every transfer of the op's tasks, plane by
/// plane: SDMA copies (off chip only unless `with_local`) and RDMA send groups.
fn for_each_transfer(
    v: &View<'_>,
    mine: &[Task],
    with_local: bool,
    mut f: impl FnMut(&Task, i64, i64, bool),
) {
    let mut start = 0;
    while start < mine.len() {
        let plane = mine[start].plane;
        let end = start + mine[start..].partition_point(|x| x.plane == plane);
        let p = &mine[start..end];
        let mut i = 0;
        while i < p.len() {
            let x = &p[i];
            if v.sdma_copy(x) && (with_local || !v.on_chip(x)) {
                f(x, v.size(x), v.dur(x), false);
            } else if v.rdma_group(p, i) {
                let ns = p[i..i + RDMA_GROUP].iter().map(|x| v.dur(x)).sum();
                f(x, v.size(x), ns, true);
                i += RDMA_GROUP;
                continue;
            }
            i += 1;
        }
        start = end;
    }
}

/// Per src-dst link of one op: transport, bytes, time (on-chip copies as LOCAL).
fn links_of(v: &View<'_>, mine: &[Task]) -> Links {
    let mut out: Links = Vec::new();
    for_each_transfer(v, mine, true, |x, size, ns, rdma| {
        let key = v.peer(x);
        let transport = if rdma {
            "RDMA".to_string()
        } else if v.on_chip(x) {
            "LOCAL".to_string()
        } else {
            match v.t.str(v.t.comm_tasks.link[x.row as usize]) {
                "HCCS_SW" => "HCCS".to_string(),
                other => other.to_string(),
            }
        };
        match out.iter_mut().find(|l| l.0 == key) {
            Some(l) => {
                l.1 = transport;
                l.2 += size;
                l.3 += ns;
            }
            None => out.push((key, transport, size, ns)),
        }
    });
    out
}

/// The op type in lower case: `hcom_allReduce__210_0_1` → `allreduce` (the text between the
/// first `_` and the next `__`, the vendor's rule); names without the `hcom_` prefix (MindSpore's
/// `Default/AllReduce-op534_0`) → the leading letters of the last path segment.
pub fn op_type(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    let ty = match base.strip_prefix("hcom_") {
        Some(rest) => rest.split_once("__").map_or(rest, |x| x.0),
        None => base
            .split(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or(base),
    };
    ty.to_lowercase()
}

/// The matrix: per (step, op type, link) the ops ranked by bandwidth, and the total.
fn matrix<'a>(
    ops: &[CommOp],
    name_of: &dyn Fn(usize) -> &'a str,
    links: &[Links],
    per_step: bool,
) -> Vec<MatrixCell> {
    /// (step, op type index, link).
    type Key = (Option<i64>, usize, (i64, i64));
    /// (bandwidth, op index, link index) of every op with this key.
    type Members = Vec<(f64, usize, usize)>;
    let mut groups: Vec<(Key, Members)> = Vec::new();
    let mut index: FxHashMap<Key, usize> = FxHashMap::default();
    let mut types: Vec<String> = Vec::new();
    let mut type_ids: FxHashMap<String, usize> = FxHashMap::default();
    for (k, (op, l)) in ops.iter().zip(links).enumerate() {
        if l.is_empty() {
            continue;
        }
        let ty = op_type(name_of(k));
        let ty = match type_ids.get(&ty) {
            Some(&i) => i,
            None => {
                types.push(ty.clone());
                type_ids.insert(ty, types.len() - 1);
                types.len() - 1
            }
        };
        for (j, link) in l.iter().enumerate() {
            let key: Key = (op.step.filter(|_| per_step), ty, link.0);
            let g = *index.entry(key).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push((gb_s(link.2, link.3), k, j));
        }
    }
    let mut out = Vec::new();
    for ((step, ty, (src, dst)), mut v) in groups {
        let ty = &types[ty];
        // Highest bandwidth first; ties keep op order (a stable sort, as the vendor's).
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        let cell = |rank: BandwidthRank, e: &(f64, usize, usize)| {
            let l = &links[e.1][e.2];
            MatrixCell {
                step,
                op_type: ty.clone(),
                rank_by_bandwidth: rank,
                op: Some(name_of(e.1).to_string()),
                src_rank: src,
                dst_rank: dst,
                transport: l.1.clone(),
                size_bytes: l.2,
                time_ns: l.3,
                bandwidth_gb_s: e.0,
            }
        };
        let n = v.len();
        out.push(cell(BandwidthRank::Top1, &v[0]));
        out.push(cell(BandwidthRank::Middle, &v[n / 2]));
        out.push(cell(BandwidthRank::Bottom1, &v[n - 1]));
        if n >= 2 {
            out.push(cell(BandwidthRank::Bottom2, &v[n - 2]));
        }
        if n >= 3 {
            out.push(cell(BandwidthRank::Bottom3, &v[n - 3]));
        }
        let (size, ns) = v.iter().fold((0, 0), |acc, e| {
            let l = &links[e.1][e.2];
            (acc.0 + l.2, acc.1 + l.3)
        });
        let first = &links[v[0].1][v[0].2];
        out.push(MatrixCell {
            step,
            op_type: ty.clone(),
            rank_by_bandwidth: BandwidthRank::Total,
            op: None,
            src_rank: src,
            dst_rank: dst,
            transport: first.1.clone(),
            size_bytes: size,
            time_ns: ns,
            bandwidth_gb_s: gb_s(size, ns),
        });
    }
    out
}

/// The slow rank (lowest wait ratio, two or more ranks) and the slow off-chip link.
pub fn summarize(devices: &[DeviceCommOps]) -> CommOpsSummary {
    let mut s = CommOpsSummary {
        wait_ratios: devices
            .iter()
            .filter(|d| d.total.ops > 0 && d.device.rank >= 0)
            .map(|d| (d.device.rank, d.total.wait_ratio))
            .collect(),
        ..CommOpsSummary::default()
    };
    if let Some(&(rank, low)) = s.wait_ratios.iter().min_by(|a, b| a.1.total_cmp(&b.1))
        && s.wait_ratios.len() >= 2
        && devices
            .iter()
            .filter(|d| d.device.rank >= 0)
            .all(|d| d.total.ops >= SLOW_RANK_MIN_OPS)
        && s.wait_ratios
            .iter()
            .all(|x| x.0 == rank || x.1 - low >= SLOW_RANK_MARGIN)
    {
        s.slow_rank = Some(rank);
    }
    let totals = || {
        devices.iter().flat_map(|d| {
            d.matrix
                .iter()
                .filter(|c| c.rank_by_bandwidth == BandwidthRank::Total && c.transport != "LOCAL")
                .map(move |c| (d.device.rank, c))
        })
    };
    if let Some((rank, slow)) =
        totals().min_by(|a, b| a.1.bandwidth_gb_s.total_cmp(&b.1.bandwidth_gb_s))
    {
        let mut same: Vec<f64> = totals()
            .filter(|x| x.1.transport == slow.transport)
            .map(|x| x.1.bandwidth_gb_s)
            .collect();
        same.sort_by(f64::total_cmp);
        let n = same.len();
        s.median_link_gb_s = Some(if n % 2 == 1 {
            same[n / 2]
        } else {
            (same[n / 2 - 1] + same[n / 2]) / 2.0
        });
        s.slow_link_rank = Some(rank);
        s.slow_link = Some(slow.clone());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_type_is_the_vendor_spelling() {
        assert_eq!(op_type("hcom_allReduce__210_0_1"), "allreduce");
        assert_eq!(op_type("hcom_broadcast__586_1_1"), "broadcast");
        assert_eq!(op_type("Default/AllReduce-op534_0"), "allreduce");
        assert_eq!(op_type("noseparator"), "noseparator");
    }

    #[test]
    fn ratios_are_zero_when_nothing_moved() {
        let o = OpTimes::default();
        assert_eq!(o.wait_ratio(), 0.0);
        let o = OpTimes {
            transit_ns: 3,
            wait_ns: 1,
            synchronization_ns: 1,
            ..OpTimes::default()
        };
        assert_eq!(o.wait_ratio(), 0.25);
        assert_eq!(o.synchronization_ratio(), 0.25);
    }
}
