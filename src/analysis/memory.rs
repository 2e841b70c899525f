//! HBM attribution per device from serving evidence (issue 5): what holds a device's memory —
//! fixed overhead (the idle npu-smi baseline), model weights (safetensors-derived, cross-checked
//! with the vLLM weights line), KV cache and graph capture (vLLM log), HCCL and CANN runtime
//! (msprof `npu_module_mem` / NPU_MODULE_MEM, only when its device is one of the npu-smi
//! devices), activations (a `peak` npu-smi snapshot minus the `ready` one) — and the residual,
//! which is always shown and never forced to balance.
//!
//! Rules: a missing idle baseline is unknown, never 0; a ready snapshot plus a post-inference
//! one do not establish an activation peak (said, with their difference); process-level msprof
//! data is never added into device totals; any missing evidence makes the result `incomplete`
//! with the list of what is missing. Pure: the caller reads the files.

use crate::model::serving::{NpuSmiChip, NpuSmiSnapshot, VllmLog, VllmRecord, VllmValue};

pub use crate::contract::memory::*;
use crate::units::{GIB, MIB};

pub use crate::model::serving::{ModuleMem, SnapshotRole as Role};

pub struct Snapshot<'a> {
    pub snap: &'a NpuSmiSnapshot,
    pub role: Role,
}

#[derive(Default)]
pub struct Inputs<'a> {
    pub snapshots: Vec<Snapshot<'a>>,
    pub logs: Vec<&'a VllmLog>,
    pub checkpoint: Option<CheckpointWeights>,
    pub module_mem: Vec<ModuleMem>,
}

fn mib(b: i64) -> f64 {
    b as f64 / MIB as f64
}

fn comp(
    name: &'static str,
    bytes: Option<i64>,
    sources: Vec<Source>,
    used: Option<i64>,
) -> Component {
    Component {
        name,
        bytes,
        mib: bytes.map(mib),
        gib: bytes.map(|b| b as f64 / GIB as f64),
        share_pct: bytes
            .zip(used)
            .filter(|(_, u)| *u > 0)
            .map(|(b, u)| 100.0 * b as f64 / u as f64),
        estimate: false,
        sources,
        note: None,
    }
}

fn chip_used(c: &NpuSmiChip) -> i64 {
    c.hbm_used_mb as i64 * MIB
}

fn smi_source(s: &NpuSmiSnapshot, c: &NpuSmiChip, role: Role) -> Source {
    Source {
        file: s.path.clone(),
        line: Some(c.line),
        what: format!(
            "npu-smi ({role:?}) NPU {} chip {}: HBM {} / {} MB",
            c.npu, c.chip, c.hbm_used_mb, c.hbm_total_mb
        ),
    }
}

fn rec_source(log: &VllmLog, r: &VllmRecord, what: &str) -> Source {
    Source {
        file: log.path.clone(),
        line: Some(r.line),
        what: format!(
            "vLLM {} [{}]{}: {what}",
            r.format,
            r.at,
            r.process.as_ref().map_or(String::new(), |p| format!(
                " {p} pid {}",
                r.pid.unwrap_or(0)
            ))
        ),
    }
}

/// One kind of vLLM value: the bytes it gives and a label.
type Pick = fn(&VllmValue) -> Option<(i64, &'static str)>;

fn weights_of(v: &VllmValue) -> Option<(i64, &'static str)> {
    match v {
        VllmValue::Summary { weights_bytes, .. } => Some((*weights_bytes, "weights (summary)")),
        VllmValue::Weights { bytes, .. } => Some((*bytes, "model weights loaded")),
        VllmValue::ProfileSplit { weights_bytes, .. } => {
            Some((*weights_bytes, "model weights (V0 profile)"))
        }
        VllmValue::ProfileResult { weights_bytes, .. } => {
            Some((*weights_bytes, "weights memory (profile)"))
        }
        _ => None,
    }
}
fn kv_of(v: &VllmValue) -> Option<(i64, &'static str)> {
    match v {
        VllmValue::Summary { kv_bytes, .. } => {
            Some((*kv_bytes, "current KV cache memory (summary)"))
        }
        VllmValue::KvAvailable { bytes } => Some((*bytes, "available KV cache memory")),
        VllmValue::KvAvailableAndTotal { kv_bytes, .. } => {
            Some((*kv_bytes, "available memory for KV (bytes)"))
        }
        VllmValue::ProfileSplit { kv_bytes, .. } => {
            Some((*kv_bytes, "memory reserved for KV cache (V0 profile)"))
        }
        _ => None,
    }
}
fn graph_of(v: &VllmValue) -> Option<(i64, &'static str)> {
    match v {
        VllmValue::Summary { graph_bytes, .. } => {
            Some((*graph_bytes, "NPU graph memory (summary)"))
        }
        VllmValue::GraphPool { actual_bytes, .. } => {
            Some((*actual_bytes, "graph pool memory (actual)"))
        }
        VllmValue::GraphCapture { bytes, .. } => Some((*bytes, "graph capture took")),
        _ => None,
    }
}
fn activation_of(v: &VllmValue) -> Option<(i64, &'static str)> {
    match v {
        VllmValue::Summary {
            activation_bytes, ..
        } => Some((*activation_bytes, "peak activation (summary)")),
        VllmValue::ProfileSplit {
            activation_bytes, ..
        } => Some((*activation_bytes, "activation peak (V0 profile)")),
        VllmValue::ProfileResult {
            torch_peak_bytes, ..
        } => Some((*torch_peak_bytes, "torch peak memory increase (profile)")),
        _ => None,
    }
}

/// The value a device gets from the logs: its own worker's (pid match) last line of the kind;
/// else, when every line of the kind states the same value, that value (said so); else unknown.
fn from_logs(
    logs: &[&VllmLog],
    pid: Option<u64>,
    pick: Pick,
) -> (Option<i64>, Vec<Source>, Option<String>) {
    let mut all: Vec<(i64, Source, Option<u64>)> = Vec::new();
    for log in logs {
        for r in &log.records {
            if let Some((b, what)) = pick(&r.value) {
                all.push((
                    b,
                    rec_source(log, r, &format!("{what} {:.4} GiB", b as f64 / GIB as f64)),
                    r.pid,
                ));
            }
        }
    }
    if let Some(pid) = pid
        && let Some((b, s, _)) = all.iter().rev().find(|(_, _, p)| *p == Some(pid))
    {
        return (Some(*b), vec![s.clone()], None);
    }
    let first = match all.first() {
        Some(f) => f.0,
        None => return (None, vec![], None),
    };
    if all.iter().all(|(b, _, _)| *b == first) {
        let n = all.len();
        let note = (n > 1 || pid.is_some()).then(|| {
            format!("no log line from this device's worker by pid; all {n} line(s) of the run state the same value")
        });
        (
            Some(first),
            all.into_iter().map(|(_, s, _)| s).take(3).collect(),
            note,
        )
    } else {
        (
            None,
            all.into_iter().map(|(_, s, _)| s).take(3).collect(),
            Some(
                "log lines of different workers disagree and none matches this device's pid".into(),
            ),
        )
    }
}

fn snapshot_use(s: &Snapshot<'_>) -> SnapshotUse {
    SnapshotUse {
        file: s.snap.path.clone(),
        role: s.role,
        version: s.snap.version.clone(),
        layout: s.snap.layout,
    }
}

/// The snapshots by role, the reference one (the loaded service's), and the msprof module rows
/// on the attributed devices: what every step of [`attribute`] reads.
struct Ctx<'i, 'a> {
    inp: &'i Inputs<'a>,
    idle: Option<&'i Snapshot<'a>>,
    ready: Option<&'i Snapshot<'a>>,
    peak: Option<&'i Snapshot<'a>>,
    post: Option<&'i Snapshot<'a>>,
    reference: Option<&'i Snapshot<'a>>,
    mapped: Vec<&'i ModuleMem>,
}

/// One attributed device: its npu-smi chip (when a snapshot shows it) and its device id.
struct Dev<'a> {
    chip: Option<&'a NpuSmiChip>,
    device: Option<u32>,
}

/// The components of a device, in report order.
const COMPONENTS: [&str; 7] = [
    "fixed_overhead",
    "weights",
    "kv_cache",
    "graph_capture",
    "hccl",
    "cann_runtime",
    "activations",
];

pub fn attribute(inp: &Inputs<'_>) -> Attribution {
    let by_role = |r: Role| inp.snapshots.iter().find(|s| s.role == r);
    let (idle, ready, peak, post) = (
        by_role(Role::Idle),
        by_role(Role::Ready),
        by_role(Role::Peak),
        by_role(Role::PostInference),
    );
    let reference = peak.or(ready).or_else(|| by_role(Role::Loaded)).or(post);
    let mut missing: Vec<String> = Vec::new();
    let mut statements: Vec<String> = Vec::new();
    let devs = devices_of(inp, reference, &mut missing);
    let device_ids: Vec<u32> = devs.iter().filter_map(|d| d.device).collect();
    let (mapped, process_level): (Vec<&ModuleMem>, Vec<&ModuleMem>) = inp
        .module_mem
        .iter()
        .partition(|m| m.device >= 0 && device_ids.contains(&(m.device as u32)));
    let ctx = Ctx {
        inp,
        idle,
        ready,
        peak,
        post,
        reference,
        mapped,
    };
    missing_inputs(&ctx, &mut missing, &mut statements);

    // Unknown components inside each device's residual: device labels per list.
    let mut residual_unknowns: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut devices = Vec::new();
    for d in &devs {
        let m = device_memory(&ctx, d, &mut statements);
        let unknown: Vec<&str> = m
            .components
            .iter()
            .filter(|c| c.bytes.is_none())
            .map(|c| c.name)
            .collect();
        if !unknown.is_empty() && m.residual_bytes.is_some() {
            let label = d.device.map_or("?".into(), |x| x.to_string());
            residual_unknowns
                .entry(unknown.join(", "))
                .or_default()
                .push(label);
        }
        devices.push(m);
    }
    for (unknown, devs) in residual_unknowns {
        statements.push(format!(
            "device(s) {}: the residual includes the unknown component(s) {unknown}",
            devs.join(", ")
        ));
    }
    component_gaps(&ctx, &devices, &mut missing);
    if !process_level.is_empty() {
        statements.push(format!(
            "{} msprof module row(s) are not tied to an npu-smi device and are shown as process-level data only",
            process_level.len()
        ));
    }
    Attribution {
        status: if missing.is_empty() {
            Completeness::Complete
        } else {
            Completeness::Incomplete
        },
        missing,
        share_denominator: "npu-smi HBM used on the device, reference snapshot",
        reference: reference.map(snapshot_use),
        snapshots: inp.snapshots.iter().map(snapshot_use).collect(),
        devices,
        process_level: process_level.into_iter().cloned().collect(),
        statements,
    }
}

/// The devices to attribute: the reference snapshot's chips that hold a process (all of them
/// when none does), else msprof's devices, else one device known only from the logs.
fn devices_of<'a>(
    inp: &Inputs<'a>,
    reference: Option<&Snapshot<'a>>,
    missing: &mut Vec<String>,
) -> Vec<Dev<'a>> {
    if let Some(r) = reference {
        let busy: Vec<&NpuSmiChip> = r
            .snap
            .chips
            .iter()
            .filter(|c| {
                r.snap
                    .processes
                    .iter()
                    .any(|p| p.npu == c.npu && p.chip == c.chip)
            })
            .collect();
        let chips: Vec<&NpuSmiChip> = if busy.is_empty() {
            r.snap.chips.iter().collect()
        } else {
            busy
        };
        return chips
            .into_iter()
            .map(|c| Dev {
                chip: Some(c),
                device: Some(c.device()),
            })
            .collect();
    }
    missing.push("npu-smi snapshot of the loaded service (ready, loaded, post-inference or peak): no device totals, no residual".into());
    let mut ids: Vec<i32> = inp
        .module_mem
        .iter()
        .map(|m| m.device)
        .filter(|d| *d >= 0)
        .collect();
    ids.sort();
    ids.dedup();
    let mut devs: Vec<Dev> = ids
        .into_iter()
        .map(|d| Dev {
            chip: None,
            device: Some(d as u32),
        })
        .collect();
    if devs.is_empty() {
        devs.push(Dev {
            chip: None,
            device: None,
        });
    }
    devs
}

/// The evidence a complete attribution needs and the run lacks.
fn missing_inputs(ctx: &Ctx<'_, '_>, missing: &mut Vec<String>, statements: &mut Vec<String>) {
    let inp = ctx.inp;
    if ctx.idle.is_none() {
        missing.push("idle npu-smi snapshot (fixed overhead)".into());
    }
    if inp.logs.is_empty() {
        missing.push("vLLM start-up log (weights, KV cache, graph capture)".into());
    }
    if inp.module_mem.is_empty() {
        missing.push("msprof npu_module_mem.csv / NPU_MODULE_MEM (HCCL, CANN runtime)".into());
    } else if ctx.mapped.is_empty() {
        missing.push("msprof module memory for the npu-smi devices (the capture's device ids match none of them)".into());
    }
    if ctx.peak.is_none() {
        missing.push("a `peak` npu-smi snapshot beside a `ready` one (activations)".into());
        if let (Some(r), Some(p)) = (ctx.ready, ctx.post) {
            let d: i64 = p.snap.chips.iter().map(chip_used).sum::<i64>()
                - r.snap.chips.iter().map(chip_used).sum::<i64>();
            statements.push(format!(
                "ready and post-inference npu-smi snapshots do not establish an activation peak (the peak passes between them); post-inference minus ready is {:.0} MiB over all chips: memory still held after inference",
                mib(d)
            ));
        }
    }
}

/// One device: every component with its evidence, the residual, the cross-checks.
fn device_memory(ctx: &Ctx<'_, '_>, d: &Dev<'_>, statements: &mut Vec<String>) -> DeviceMemory {
    let inp = ctx.inp;
    let used = d.chip.map(chip_used);
    let r = ctx.reference;
    let pid = d.chip.and_then(|c| {
        r.and_then(|r| {
            r.snap
                .processes
                .iter()
                .filter(|p| p.npu == c.npu && p.chip == c.chip)
                .max_by(|a, b| a.memory_mb.total_cmp(&b.memory_mb))
                .map(|p| (p.pid, p.name.clone()))
        })
    });
    let worker = pid.as_ref().map(|p| p.0);
    let mut comps = vec![fixed_overhead(ctx, d, used)];
    let (log_w, log_w_src, log_w_note) = from_logs(&inp.logs, worker, weights_of);
    let ckpt = inp
        .checkpoint
        .as_ref()
        .and_then(|w| w.per_device_bytes.map(|b| (b.round() as i64, w)));
    comps.push(weights_component(
        ckpt,
        log_w,
        &log_w_src,
        &log_w_note,
        used,
    ));
    for (name, pick) in [
        ("kv_cache", kv_of as Pick),
        ("graph_capture", graph_of as Pick),
    ] {
        let (b, src, note) = from_logs(&inp.logs, worker, pick);
        let mut c = comp(name, b, src, used);
        c.note = note;
        comps.push(c);
    }
    comps.extend(msprof_components(ctx, d, used));
    comps.push(activations(ctx, d, worker, used));

    let sum: i64 = comps.iter().filter_map(|c| c.bytes).sum();
    let residual = used.map(|u| u - sum);
    let process_bytes = d.chip.and_then(|c| {
        r.map(|r| {
            (r.snap
                .processes
                .iter()
                .filter(|p| p.npu == c.npu && p.chip == c.chip)
                .map(|p| p.memory_mb)
                .sum::<f64>()
                * MIB as f64)
                .round() as i64
        })
    });
    let app = ctx
        .mapped
        .iter()
        .filter(|m| Some(m.device as u32) == d.device && m.component == "APP")
        .map(|m| m.max_bytes)
        .max();
    let cross = CrossCheck {
        npu_smi_used_bytes: used,
        component_sum_bytes: sum,
        msprof_app_bytes: app,
        npu_smi_process_bytes: process_bytes,
        npu_smi_unowned_bytes: used.zip(process_bytes).map(|(u, p)| u - p),
        vllm_weights_bytes: log_w,
        checkpoint_weights_bytes: ckpt.map(|c| c.0),
    };
    if let (Some(v), Some(c)) = (cross.vllm_weights_bytes, cross.checkpoint_weights_bytes)
        && v > 0
        && (c - v).abs() as f64 > 0.1 * v as f64
    {
        statements.push(format!(
            "device {}: the checkpoint estimate ({:.2} GiB) and the vLLM weights line ({:.2} GiB) differ by more than 10%: check --tp/--dp/--expert-parallel and that the checkpoint is the served one",
            d.device.map_or("?".into(), |x| x.to_string()),
            c as f64 / GIB as f64,
            v as f64 / GIB as f64
        ));
    }
    let residual_sources = match (r, d.chip) {
        (Some(r), Some(ch)) => vec![smi_source(r.snap, ch, r.role)],
        _ => vec![],
    };
    DeviceMemory {
        device: d.device,
        npu: d.chip.map(|c| c.npu),
        chip: d.chip.map(|c| c.chip),
        name: d.chip.map(|c| c.name.clone()),
        hbm_total_bytes: d.chip.map(|c| c.hbm_total_mb as i64 * MIB),
        worker: pid.as_ref().map(|p| p.1.clone()),
        worker_pid: pid.map(|p| p.0),
        components: comps,
        residual_bytes: residual,
        residual_mib: residual.map(mib),
        residual_share_pct: residual
            .zip(used)
            .filter(|(_, u)| *u > 0)
            .map(|(r, u)| 100.0 * r as f64 / u as f64),
        residual_sources,
        cross_check: cross,
    }
}

/// Fixed overhead: the idle snapshot's HBM used on the same device (and the same card).
fn fixed_overhead(ctx: &Ctx<'_, '_>, d: &Dev<'_>, used: Option<i64>) -> Component {
    let idle_chip = ctx.idle.and_then(|s| {
        d.device.and_then(|id| {
            s.snap
                .chips
                .iter()
                .find(|c| c.device() == id)
                .map(|c| (s, c))
        })
    });
    // The same card: an idle table of another model or HBM size is not this baseline.
    let other_card = idle_chip.filter(|(_, ic)| {
        d.chip
            .is_some_and(|c| c.name != ic.name || c.hbm_total_mb != ic.hbm_total_mb)
    });
    let mut c = match idle_chip {
        Some((s, c)) if other_card.is_none() => comp(
            "fixed_overhead",
            Some(chip_used(c)),
            vec![smi_source(s.snap, c, Role::Idle)],
            used,
        ),
        _ => comp("fixed_overhead", None, vec![], used),
    };
    if let Some((s, ic)) = other_card {
        c.note = Some(format!(
            "the idle snapshot {} shows a different card here ({}, {} MB), not used",
            s.snap.path, ic.name, ic.hbm_total_mb
        ));
    } else if ctx.idle.is_some() && idle_chip.is_none() {
        c.note = Some("the idle snapshot does not show this device".into());
    }
    c
}

/// Weights: the checkpoint estimate first, the vLLM line beside it.
fn weights_component(
    ckpt: Option<(i64, &CheckpointWeights)>,
    log_w: Option<i64>,
    log_w_src: &[Source],
    log_w_note: &Option<String>,
    used: Option<i64>,
) -> Component {
    let mut c = match ckpt {
        Some((b, w)) => {
            let mut c = comp(
                "weights",
                Some(b),
                vec![Source {
                    file: w.path.clone(),
                    line: None,
                    what: format!(
                        "safetensors headers, per-device estimate at TP {} / EP {}",
                        w.tp, w.ep
                    ),
                }],
                used,
            );
            c.estimate = true;
            c.sources.extend(log_w_src.iter().cloned());
            c
        }
        None => {
            let mut c = comp("weights", log_w, log_w_src.to_vec(), used);
            c.note = log_w_note.clone();
            c
        }
    };
    if ckpt.is_some() && log_w.is_none() {
        c.note = Some("no vLLM weights line to cross-check".into());
    }
    c
}

/// HCCL and CANN runtime: msprof module memory on this device.
fn msprof_components(ctx: &Ctx<'_, '_>, d: &Dev<'_>, used: Option<i64>) -> Vec<Component> {
    [("hccl", "HCCL"), ("cann_runtime", "RUNTIME")]
        .into_iter()
        .map(|(name, module)| {
            let rows: Vec<&&ModuleMem> = ctx
                .mapped
                .iter()
                .filter(|m| Some(m.device as u32) == d.device && m.component == module)
                .collect();
            match rows.iter().max_by_key(|m| m.max_bytes) {
                Some(m) => comp(
                    name,
                    Some(m.max_bytes),
                    vec![Source {
                        file: m.file.clone(),
                        line: None,
                        what: format!(
                            "msprof module {module} device {}: max reserved of {} samples (at {} ns)",
                            m.device, m.samples, m.max_ts_ns
                        ),
                    }],
                    used,
                ),
                None => comp(name, None, vec![], used),
            }
        })
        .collect()
}

/// Activations: peak minus ready on the same chip; else vLLM's profile-run peak as a note.
fn activations(
    ctx: &Ctx<'_, '_>,
    d: &Dev<'_>,
    worker: Option<u64>,
    used: Option<i64>,
) -> Component {
    match (ctx.peak, ctx.ready, d.chip) {
        (Some(p), Some(r), Some(ch)) => {
            let pc = p.snap.chips.iter().find(|c| c.device() == ch.device());
            let rc = r.snap.chips.iter().find(|c| c.device() == ch.device());
            match (pc, rc) {
                (Some(pc), Some(rc)) => comp(
                    "activations",
                    Some(chip_used(pc) - chip_used(rc)),
                    vec![
                        smi_source(p.snap, pc, Role::Peak),
                        smi_source(r.snap, rc, Role::Ready),
                    ],
                    used,
                ),
                _ => comp("activations", None, vec![], used),
            }
        }
        _ => {
            let mut c = comp("activations", None, vec![], used);
            let (vb, vs, _) = from_logs(&ctx.inp.logs, worker, activation_of);
            if let Some(v) = vb {
                c.note = Some(format!(
                    "vLLM's profile run peaked at {:.2} GiB of activations (released before the KV cache was allocated; not resident in a ready snapshot)",
                    v as f64 / GIB as f64
                ));
                c.sources = vs;
            }
            c
        }
    }
}

/// Per-component gaps, once per run, unless a missing input already explains them.
fn component_gaps(ctx: &Ctx<'_, '_>, devices: &[DeviceMemory], missing: &mut Vec<String>) {
    let inp = ctx.inp;
    let covered = |name: &str| match name {
        "fixed_overhead" => ctx.idle.is_none(),
        "weights" => inp.logs.is_empty() && inp.checkpoint.is_none(),
        "kv_cache" | "graph_capture" => inp.logs.is_empty(),
        "hccl" | "cann_runtime" => ctx.mapped.is_empty(),
        "activations" => ctx.peak.is_none(),
        _ => false,
    };
    for name in COMPONENTS {
        let unknown_on: Vec<String> = devices
            .iter()
            .filter(|d| {
                d.components
                    .iter()
                    .any(|c| c.name == name && c.bytes.is_none())
            })
            .map(|d| d.device.map_or("?".into(), |x| x.to_string()))
            .collect();
        if !unknown_on.is_empty() && !covered(name) {
            missing.push(format!(
                "{name}: no evidence for device(s) {}",
                unknown_on.join(", ")
            ));
        }
    }
}

pub fn compare(a: &Attribution, b: &Attribution) -> Vec<CompareRow> {
    let mean = |x: &Attribution, name: &str| -> (Option<f64>, usize) {
        let v: Vec<i64> = x
            .devices
            .iter()
            .filter_map(|d| {
                if name == "residual" {
                    d.residual_bytes
                } else if name == "npu_smi_used" {
                    d.cross_check.npu_smi_used_bytes
                } else {
                    d.components.iter().find(|c| c.name == name)?.bytes
                }
            })
            .collect();
        (
            (!v.is_empty()).then(|| v.iter().sum::<i64>() as f64 / v.len() as f64),
            v.len(),
        )
    };
    std::iter::once("npu_smi_used")
        .chain(COMPONENTS)
        .chain(std::iter::once("residual"))
        .map(|name| {
            let (am, an) = mean(a, name);
            let (bm, bn) = mean(b, name);
            CompareRow {
                component: name,
                a_mean_bytes: am,
                a_devices: an,
                b_mean_bytes: bm,
                b_devices: bn,
                delta_bytes: am.zip(bm).map(|(x, y)| y - x),
            }
        })
        .collect()
}

/// Each (file, device, module) of the memory table's driver-module rows (`NPU_MODULE_MEM`,
/// `npu_module_mem.csv`) reduced to its maximum reserved bytes, with when it was sampled.
pub fn module_peaks(t: &crate::model::Tables) -> Vec<ModuleMem> {
    let m = &t.memory;
    let mut out: Vec<ModuleMem> = Vec::new();
    let mut at: std::collections::HashMap<(u32, i32, crate::model::StrId), usize> =
        Default::default();
    for i in 0..m.len() {
        let src = t.str(m.source[i]);
        if src != "NPU_MODULE_MEM" && src != "npu_module_mem.csv" {
            continue;
        }
        let key = (m.file[i].0, m.device[i], m.component[i]);
        let v = m.reserved_bytes[i];
        let k = *at.entry(key).or_insert_with(|| {
            out.push(ModuleMem {
                file: t.files.path[m.file[i].0 as usize].clone(),
                device: m.device[i],
                component: t.str(m.component[i]).to_string(),
                max_bytes: i64::MIN,
                max_ts_ns: 0,
                samples: 0,
            });
            out.len() - 1
        });
        let o = &mut out[k];
        o.samples += 1;
        if v > o.max_bytes {
            o.max_bytes = v;
            o.max_ts_ns = m.ts_ns[i];
        }
    }
    out
}
