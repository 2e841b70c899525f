//! How well each device's compute time is used (docs/analyses/efficiency.md): per compute task
//! (Ascend kernel details) or per PyTorch op (Kineto `Input Dims`, its kernels found by
//! correlation), the FLOPs and bytes its op family's model gives, then per op class, family, step
//! and device the achieved TFLOPS and GB/s, MFU against the dtype's peak, arithmetic intensity,
//! roofline class and the time lost to the roofline; Ascend ops beside their PMU `aic_mac_ratio`.
//!
//! Cost: one pass over each device's events; the shape strings are parsed once per distinct
//! kernels row (Ascend) or per distinct recorded-inputs signature (Kineto), never per task.

mod ascend_ops;
mod aten_ops;
pub mod chips;
mod infer_attention;
mod kineto;
pub mod peaks;
mod rows;
mod tensors;
mod work;

pub use crate::contract::efficiency::*;
pub use peaks::PeakOverride;

use super::cross_rank::StepWindows;
use super::devices::Device;
use super::devices::launches::{NO_LAUNCH, launches};
use super::gallop::Gallop;
use crate::model::events::NO_ROW;
use crate::model::hash::FxHashMap;
use crate::model::{Category, FileId, ProcessRole, StrId, Tables};
use kineto::AtenIndex;
use peaks::{DevicePeaks, cube_ops_per_cycle};
use rows::{NoModelAcc, OpAcc, StepAcc};
use work::{Modeled, Work};

/// True for a host op whose recorded inputs (`Input Dims`, `Input type`, `Concrete Inputs`) this
/// analysis reads: the ops it models. `analyze` keeps only these ops' input texts
/// (`ingest::OpInputs`); every other op's row stays, with empty texts.
pub fn reads_inputs_of(name: &str) -> bool {
    aten_ops::is_modelled(name)
}

/// Every device's efficiency (devices without compute tasks are left out).
pub fn compute(
    t: &Tables,
    devices: &[Device],
    windows: &StepWindows,
    o: &PeakOverride,
) -> Vec<DeviceEfficiency> {
    let mut cx = Context {
        windows,
        aten: FxHashMap::default(),
    };
    devices
        .iter()
        .filter_map(|d| {
            let shared = devices.iter().filter(|x| x.file == d.file).count() > 1;
            one(t, d, o, shared, &mut cx)
        })
        .collect()
}

/// What several devices of one set of tables share, built on first use.
struct Context<'w, 't> {
    windows: &'w StepWindows<'t>,
    aten: FxHashMap<FileId, AtenIndex>,
}

/// What a task (Ascend) or an op instance (Kineto) is charged to.
#[derive(Clone, Copy)]
enum Slot {
    Op {
        op: u32,
        flops: u64,
        bytes: u64,
        /// One call's time on the roofline, ns.
        ideal: Option<f64>,
        /// One call's time at the dtype's compute peak, ns.
        at_peak: Option<f64>,
        /// Seconds the FLOPs need on the cores the task used (Ascend cube rate).
        cube_s: Option<f64>,
    },
    NoModel(u32),
}

/// One device's sums while its tasks are read.
struct State<'p> {
    peaks: &'p DevicePeaks,
    ops: Vec<OpAcc>,
    op_index: FxHashMap<(String, crate::contract::Family, String, String), u32>,
    no_model: Vec<NoModelAcc>,
    nm_index: FxHashMap<(String, &'static str), u32>,
    steps: Vec<StepAcc>,
    modeled_tasks: u64,
    modeled_time_ns: i64,
}

impl State<'_> {
    fn no_model(&mut self, op: &str, reason: &'static str) -> Slot {
        let key = (op.to_string(), reason);
        let n = self.no_model.len() as u32;
        let k = *self.nm_index.entry(key).or_insert(n);
        if k == n {
            self.no_model.push(NoModelAcc {
                op: op.to_string(),
                reason,
                calls: 0,
                time_ns: 0,
            });
        }
        Slot::NoModel(k)
    }

    /// The slot of one call of `op` with this work model answer; `cores_used` for the cube
    /// comparison (Ascend block dim); `tf32`: its kernel is a TF32 tensor-core kernel, so fp32
    /// work is charged to the TF32 peak.
    fn slot(&mut self, op: &str, m: Modeled, cores_used: Option<i64>, tf32: bool) -> Slot {
        let mut w: Work = match m {
            Ok(w) => w,
            Err(reason) => return self.no_model(op, reason),
        };
        let mut dtype = w.dtype.map_or("unknown", |d| d.peak_name()).to_string();
        if tf32 && dtype == "fp32" {
            dtype = "tf32".into();
            let tf =
                "fp32 inputs run by a TF32 tensor-core kernel (its name): charged to the TF32 peak";
            w.caveat = Some(w.caveat.map_or(tf.to_string(), |c| format!("{c}; {tf}")));
        }
        let peak = (w.flops > 0).then(|| self.peaks.tflops(&dtype)).flatten();
        let key = (op.to_string(), w.family, dtype.clone(), w.shape.clone());
        let n = self.ops.len() as u32;
        let k = *self.op_index.entry(key).or_insert(n);
        if k == n {
            self.ops.push(OpAcc::new(
                op.to_string(),
                w.family,
                dtype.clone(),
                w.shape,
                peak,
            ));
        }
        let acc = &mut self.ops[k as usize];
        acc.upper_bound |= w.upper_bound;
        if let Some(c) = w.caveat
            && !acc.caveats.contains(&c)
        {
            acc.caveats.push(c);
        }
        let gbps = self.peaks.peaks.gbps;
        let cube_s = match (cube_ops_per_cycle(&dtype), self.peaks.clock_mhz, cores_used) {
            (Some(per), Some(mhz), Some(used)) if used > 0 && w.flops > 0 => {
                let used = self.peaks.cores.map_or(used, |c| used.min(c));
                Some(w.flops as f64 / (used as f64 * per * mhz * 1e6))
            }
            _ => None,
        };
        Slot::Op {
            op: k,
            flops: w.flops,
            bytes: w.bytes,
            ideal: acc.ideal_ns(w.flops, w.bytes, gbps),
            // An upper bound of the work is no measure of a step's MFU.
            at_peak: peak
                .filter(|_| !w.upper_bound)
                .map(|p| w.flops as f64 / (p * 1e3)),
            cube_s,
        }
    }

    /// A call's work (once per task or op instance) into its op and step.
    fn call(&mut self, slot: Slot, step: Option<usize>) {
        let Slot::Op {
            op,
            flops,
            bytes,
            ideal,
            at_peak,
            ..
        } = slot
        else {
            return;
        };
        let a = &mut self.ops[op as usize];
        a.calls += 1;
        a.flops = a.flops.saturating_add(flops);
        a.bytes = a.bytes.saturating_add(bytes);
        if let Some(s) = step.and_then(|k| self.steps.get_mut(k)) {
            s.flops = s.flops.saturating_add(flops);
            s.at_peak_ns += at_peak.unwrap_or(0.0);
            s.lost_ns -= ideal.unwrap_or(0.0);
        }
    }

    /// A task's time (a kernel of the call) into its op or no-model row and step.
    fn time(&mut self, slot: Slot, dur: i64, step: Option<usize>) {
        match slot {
            Slot::NoModel(k) => {
                let n = &mut self.no_model[k as usize];
                n.calls += 1;
                n.time_ns += dur;
            }
            Slot::Op {
                op,
                ideal,
                at_peak,
                cube_s,
                ..
            } => {
                self.modeled_tasks += 1;
                self.modeled_time_ns += dur;
                let a = &mut self.ops[op as usize];
                a.time_ns += dur;
                if let Some(c) = cube_s {
                    a.cube.0 += c;
                    a.cube.1 += dur;
                }
                if let Some(s) = step.and_then(|k| self.steps.get_mut(k)) {
                    s.time_ns += dur;
                    if at_peak.is_some() {
                        s.peak_time_ns += dur;
                    }
                    if ideal.is_some() {
                        s.lost_ns += dur as f64;
                        s.any_ideal = true;
                    }
                }
            }
        }
    }
}

fn one(
    t: &Tables,
    d: &Device,
    o: &PeakOverride,
    shared_file: bool,
    cx: &mut Context,
) -> Option<DeviceEfficiency> {
    let compute: Vec<usize> = (0..d.events.len())
        .filter(|&k| t.events.category[d.events[k] as usize] == Category::ComputeKernel)
        .collect();
    if compute.is_empty() {
        return None;
    }
    let dp = peaks::device_peaks(t, d, o);
    let kineto = t.processes.role[d.process.idx()] == ProcessRole::KinetoDevice;
    // Steps only matter for modelled work: a capture without shapes skips the step windows and
    // the launch links (each a pass over every event).
    let shapes = if kineto {
        t.op_args
            .event
            .iter()
            .any(|&e| (e as usize) < t.events.len() && t.event_file(e as usize) == d.file)
    } else {
        compute
            .iter()
            .any(|&k| t.events.kernel[d.events[k] as usize] != NO_ROW)
    };
    let w = shapes.then(|| cx.windows.get().get(d.file.idx())).flatten();
    let labels: Vec<&str> = w.map_or_else(Vec::new, |w| w.labels().collect());
    let mut st = State {
        peaks: &dp,
        ops: Vec::new(),
        op_index: FxHashMap::default(),
        no_model: Vec::new(),
        nm_index: FxHashMap::default(),
        steps: vec![StepAcc::default(); labels.len()],
        modeled_tasks: 0,
        modeled_time_ns: 0,
    };
    let launch = ((shapes && !labels.is_empty()) || kineto).then(|| launches(t, d));
    let cursor = std::cell::Cell::new(Gallop::default());
    let step_of = |k: usize| -> Option<usize> {
        let w = w.filter(|_| !labels.is_empty())?;
        let own = t.events.ts_ns[d.events[k] as usize];
        let at = launch
            .map(|l| l.launch[k])
            .filter(|&c| c != NO_LAUNCH)
            .map_or(own, |c| t.events.ts_ns[c as usize]);
        let mut c = cursor.get();
        let k = w.index_near(&mut c, at);
        cursor.set(c);
        k
    };
    let time_ns: i64 = compute
        .iter()
        .map(|&k| t.events.dur_ns.at(d.events[k] as usize))
        .sum();
    let (status, kernel_op) = if kineto {
        let aten = cx
            .aten
            .entry(d.file)
            .or_insert_with(|| AtenIndex::build(t, d.file));
        let l = launch.expect("built for Kineto devices");
        kineto_tasks(t, d, &compute, &mut st, aten, l, &step_of)
    } else {
        ascend_tasks(t, d, &compute, &mut st, &step_of)
    };
    if !shared_file && t.processes.role[d.process.idx()] == ProcessRole::AscendHardware {
        pmu_join(t, d.file, &kernel_op, &mut st);
    }
    Some(finish(
        d,
        dp.peaks.clone(),
        st,
        status,
        &labels,
        compute.len() as u64,
        time_ns,
    ))
}

/// The Ascend tasks: each through its kernels row's model (memoised per row). Returns the
/// status and, per kernels row used, its op index (for the PMU join).
fn ascend_tasks(
    t: &Tables,
    d: &Device,
    compute: &[usize],
    st: &mut State<'_>,
    step_of: &dyn Fn(usize) -> Option<usize>,
) -> (EfficiencyStatus, FxHashMap<u32, u32>) {
    // Per kernels row (one per distinct signature): its slot, computed on first use.
    let mut slots: Vec<Option<Slot>> = vec![None; t.kernels.len()];
    let mut bare: FxHashMap<StrId, Slot> = FxHashMap::default();
    let mut any_details = false;
    for &k in compute {
        let i = d.events[k] as usize;
        let row = t.events.kernel[i];
        let slot = if row == NO_ROW {
            // Tasks without details, by task type (one label per type, not per task).
            let tt = t.events.task_type.at(i);
            *bare.entry(tt).or_insert_with(|| {
                let tt = t.str(tt);
                let label = format!(
                    "(no kernel details) {}",
                    if tt.is_empty() { "task" } else { tt }
                );
                st.no_model(
                    &label,
                    "the capture has no kernel details (op type, shapes) for these tasks",
                )
            })
        } else {
            any_details = true;
            match slots[row as usize] {
                Some(s) => s,
                None => {
                    let r = row as usize;
                    let kt = &t.kernels;
                    let shapes = [
                        kt.input_shapes[r],
                        kt.input_dtypes[r],
                        kt.input_formats[r],
                        kt.output_shapes[r],
                        kt.output_dtypes[r],
                        kt.output_formats[r],
                    ]
                    .map(|s| t.str(s));
                    let op = t.str(kt.op_type[r]);
                    let m = ascend_ops::model(&ascend_ops::Details {
                        op_type: op,
                        shapes,
                    });
                    let block = kt.block_num[r];
                    let op = if op.is_empty() { "(no op type)" } else { op };
                    let s = st.slot(op, m, Some(block), false);
                    slots[row as usize] = Some(s);
                    s
                }
            }
        };
        let step = step_of(k);
        st.call(slot, step);
        st.time(slot, t.events.dur_ns.at(i), step);
    }
    let status = status(st, any_details);
    let by_row = slots
        .into_iter()
        .enumerate()
        .filter_map(|(row, s)| match s? {
            Slot::Op { op, .. } => Some((row as u32, op)),
            Slot::NoModel(_) => None,
        })
        .collect();
    (status, by_row)
}

fn status(st: &State<'_>, any_shapes: bool) -> EfficiencyStatus {
    if !st.ops.is_empty() {
        EfficiencyStatus::Estimated
    } else if any_shapes {
        EfficiencyStatus::NoModel
    } else {
        EfficiencyStatus::NoShapes
    }
}

/// The Kineto kernels: each charged to the outermost modelled op around its launch (the op's
/// work counted once, at its first kernel), else named after the op around it.
fn kineto_tasks(
    t: &Tables,
    d: &Device,
    compute: &[usize],
    st: &mut State<'_>,
    aten: &AtenIndex,
    l: &super::devices::launches::Launches,
    step_of: &dyn Fn(usize) -> Option<usize>,
) -> (EfficiencyStatus, FxHashMap<u32, u32>) {
    let mut memo: FxHashMap<(StrId, StrId, StrId, StrId, bool), Slot> = FxHashMap::default();
    let mut instances: FxHashMap<u32, Slot> = FxHashMap::default();
    // No-model rows and TF32 tests by name id: no string work per kernel.
    let mut named: FxHashMap<(StrId, &'static str), Slot> = FxHashMap::default();
    let mut tf32_names: FxHashMap<StrId, bool> = FxHashMap::default();
    let mut no_model = |st: &mut State<'_>, name: StrId, why: &'static str| -> Slot {
        *named
            .entry((name, why))
            .or_insert_with(|| st.no_model(t.str(name), why))
    };
    let no_shapes = "no Input Dims recorded for this op (record_shapes off)";
    for &k in compute {
        let i = d.events[k] as usize;
        let step = step_of(k);
        let call = l.launch[k];
        let slot = if call == NO_LAUNCH {
            no_model(
                st,
                t.events.name[i],
                "no launch link (correlation id) to a host op",
            )
        } else if let Some((op_ev, row)) = aten.modelled_op(t, call) {
            match instances.get(&op_ev) {
                Some(&s) => s,
                None => {
                    let name = t.events.name[op_ev as usize];
                    let tf32 = *tf32_names
                        .entry(t.events.name[i])
                        .or_insert_with(|| is_tf32_kernel(t.event_name(i)));
                    let a = &t.op_args;
                    let key = (name, a.dims[row], a.types[row], a.concrete[row], tf32);
                    let s = match memo.get(&key) {
                        Some(&s) => s,
                        None => {
                            let m = tensors::op_inputs(t.str(key.1), t.str(key.2), t.str(key.3))
                                .ok_or("Input Dims could not be read")
                                .and_then(|inputs| aten_ops::model(t.str(name), &inputs));
                            let s = st.slot(t.str(name), m, None, tf32);
                            memo.insert(key, s);
                            s
                        }
                    };
                    instances.insert(op_ev, s);
                    st.call(s, step);
                    s
                }
            }
        } else {
            match aten.top_op(t, call) {
                Some(op) if aten.has_shapes() => {
                    no_model(st, t.events.name[op as usize], "no model for this op")
                }
                Some(op) => no_model(st, t.events.name[op as usize], no_shapes),
                None => no_model(st, t.events.name[i], "launched outside any PyTorch op"),
            }
        };
        st.time(slot, t.events.dur_ns.at(i), step);
    }
    (status(st, aten.has_shapes()), FxHashMap::default())
}

/// A GPU kernel that runs fp32 matrices on TF32 tensor cores, by its name: cuBLAS / cuDNN
/// `…tf32…`, CUTLASS's SM80 TF32 tensor op `…tensorop_s1688gemm…` (instruction m16n8k8 on
/// single-precision data).
fn is_tf32_kernel(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("tf32") || n.contains("tensorop_s1688")
}

/// The PMU's `aic_mac_ratio` of the file's op_metrics rows, time-weighted into the cube-family
/// op rows with the same (op type, input shapes, input dtypes). Only for files with one device
/// (op_metrics rows name no device).
fn pmu_join(t: &Tables, file: FileId, by_row: &FxHashMap<u32, u32>, st: &mut State<'_>) {
    if by_row.is_empty() || t.op_metrics.is_empty() {
        return;
    }
    let k = &t.kernels;
    let key_of: FxHashMap<(StrId, StrId, StrId), u32> = by_row
        .iter()
        .map(|(&r, &op)| {
            let r = r as usize;
            ((k.op_type[r], k.input_shapes[r], k.input_dtypes[r]), op)
        })
        .collect();
    let m = &t.op_metrics;
    for i in 0..m.len() {
        let mac = m.ratios[i][0];
        if m.file[i] != file || mac.is_nan() {
            continue;
        }
        let Some(&op) = key_of.get(&(m.op_type[i], m.input_shapes[i], m.input_dtypes[i])) else {
            continue;
        };
        let a = &mut st.ops[op as usize];
        if matches!(
            a.family,
            crate::contract::Family::Matmul
                | crate::contract::Family::Conv
                | crate::contract::Family::Attention
        ) {
            let dur = m.dur_ns[i] as f64;
            a.pmu.0 += f64::from(mac) * dur;
            a.pmu.1 += dur;
        }
    }
}

fn finish(
    d: &Device,
    peaks: Peaks,
    st: State<'_>,
    status: EfficiencyStatus,
    labels: &[&str],
    tasks: u64,
    time_ns: i64,
) -> DeviceEfficiency {
    let gbps = peaks.gbps;
    let mut ops: Vec<OpRow> = st.ops.into_iter().map(|a| a.finish(gbps)).collect();
    let total = rows::family_row("all", &ops.iter().collect::<Vec<_>>());
    let families = crate::contract::Family::ALL
        .iter()
        .filter_map(|f| {
            let of: Vec<&OpRow> = ops.iter().filter(|o| o.family == *f).collect();
            (!of.is_empty()).then(|| rows::family_row(f.as_str(), &of))
        })
        .collect();
    let mut pmu = PmuCheck::default();
    for o in &ops {
        match (o.pmu_mac_ratio, o.flops_cube_busy) {
            (Some(p), Some(f)) => {
                pmu.compared += 1;
                pmu.disagree += rows::pmu_disagrees(p, f, o.upper_bound) as u64;
            }
            (Some(_), None) => pmu.pmu_only += 1,
            _ => {}
        }
    }
    ops.sort_by(|a, b| {
        b.time_lost_ns
            .cmp(&a.time_lost_ns)
            .then(b.time_ns.cmp(&a.time_ns))
            .then_with(|| a.op.cmp(&b.op))
    });
    let ops_total = ops.len() as u64;
    ops.truncate(OPS_LISTED);
    let mut no_model: Vec<NoModelRow> = st.no_model.into_iter().map(NoModelAcc::finish).collect();
    no_model.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.op.cmp(&b.op)));
    let no_model_total = no_model.len() as u64;
    no_model.truncate(OPS_LISTED);
    let steps = st
        .steps
        .iter()
        .zip(labels)
        .filter(|(s, _)| s.time_ns > 0)
        .map(|(s, l)| s.finish(l))
        .collect();
    DeviceEfficiency {
        device: d.evidence.clone(),
        status,
        peaks,
        tasks,
        time_ns,
        modeled_tasks: st.modeled_tasks,
        modeled_time_ns: st.modeled_time_ns,
        total,
        families,
        ops,
        ops_total,
        no_model,
        no_model_total,
        steps,
        pmu,
    }
}
