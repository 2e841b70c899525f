//! A device's peaks: Ascend from the capture's own chip facts (msprof-analyze's operator_mfu
//! method: AI cores × AI Core clock × cube ops per cycle), GPUs from the chip table by their
//! Kineto `deviceProperties`, or the user's `--peak-tflops` / `--peak-gbps`. A peak that cannot
//! be known is "not estimated" with the reason, never guessed.

use super::chips::{self, GpuProps};
use crate::analysis::devices::Device;
use crate::contract::{DtypePeak, PeakSource, Peaks};
use crate::model::{FileId, ProcessRole, Tables};

/// The user's peaks (`--peak-tflops`, `--peak-gbps`): they replace every dtype's compute peak
/// and the bandwidth.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PeakOverride {
    pub tflops: Option<f64>,
    pub gbps: Option<f64>,
}

/// FLOPs (ops) per cycle of one Ascend AI Core's cube, per dtype: 16×16×16 multiply-adds for
/// fp16 (bf16 charged the same), 16×32×16 for int8 (msprof-analyze
/// cluster_analyse/cluster_kernels_analysis/operator_mfu/chip_peak_flops.py `OPS_PER_CYCLE`;
/// its operator_flops.py maps BF16 to the FLOAT16 peak). No public figure for FLOAT.
pub fn cube_ops_per_cycle(dtype: &str) -> Option<f64> {
    match dtype {
        "fp16" | "bf16" => Some(16.0 * 16.0 * 16.0 * 2.0),
        "int8" => Some(16.0 * 32.0 * 16.0 * 2.0),
        _ => None,
    }
}

/// A device's peaks, and for Ascend the clock and cores the PMU comparison needs.
pub struct DevicePeaks {
    pub peaks: Peaks,
    /// Ascend: the AI Core clock, MHz, when known (per-core cube rate = ops per cycle × clock).
    pub clock_mhz: Option<f64>,
    /// Ascend: AI cores, when known (a task uses at most this many).
    pub cores: Option<i64>,
}

impl DevicePeaks {
    /// The compute peak charged to `dtype`, TFLOPS.
    pub fn tflops(&self, dtype: &str) -> Option<f64> {
        self.peaks
            .tflops
            .iter()
            .find(|p| p.dtype == dtype || p.dtype == "*")
            .map(|p| p.tflops)
    }
}

fn meta<'t>(t: &'t Tables, file: FileId, key: &str) -> Option<&'t str> {
    let k = t.strings.lookup(key)?;
    t.meta.get(file, k).map(|v| t.str(v))
}

/// The meta value `<prefix><device>`, else the only `<prefix>*` of the file.
fn per_device<'t>(
    t: &'t Tables,
    file: FileId,
    prefix: &str,
    suffix: &str,
    dev: i32,
) -> Option<&'t str> {
    if dev >= 0
        && let Some(v) = meta(t, file, &format!("{prefix}{dev}{suffix}"))
    {
        return Some(v);
    }
    let mut found = (0..t.meta.len()).filter(|&i| {
        t.meta.file[i] == file && {
            let k = t.str(t.meta.key[i]);
            k.starts_with(prefix) && k.ends_with(suffix)
        }
    });
    let first = found.next()?;
    found.next().is_none().then(|| t.str(t.meta.value[first]))
}

pub fn device_peaks(t: &Tables, d: &Device, o: &PeakOverride) -> DevicePeaks {
    let mut p = match t.processes.role[d.process.idx()] {
        ProcessRole::KinetoDevice => gpu(t, d),
        _ => ascend(t, d),
    };
    if let Some(x) = o.tflops {
        p.peaks.tflops = vec![DtypePeak {
            dtype: "*".into(),
            tflops: x,
            basis: "--peak-tflops (every dtype)".into(),
        }];
        p.peaks.source = PeakSource::Override;
        p.peaks.not_estimated.retain(|r| r.starts_with("bandwidth"));
    }
    if let Some(x) = o.gbps {
        p.peaks.gbps = Some(x);
        p.peaks.gbps_basis = "--peak-gbps".into();
        p.peaks
            .not_estimated
            .retain(|r| !r.starts_with("bandwidth"));
    }
    p
}

fn ascend(t: &Tables, d: &Device) -> DevicePeaks {
    let (f, dev) = (d.file, d.evidence.device_id);
    let chip = per_device(t, f, "npu_info.", "", dev)
        .unwrap_or("")
        .to_string();
    let cores =
        per_device(t, f, "device_info.", ".ai_core_num", dev).and_then(|v| v.parse::<i64>().ok());
    let info_clock =
        per_device(t, f, "device_info.", ".aic_frequency", dev).and_then(|v| v.parse::<f64>().ok());
    let sampled = per_device(t, f, "aicore_freq_mhz.", "", dev)
        .and_then(|v| v.parse::<f64>().ok())
        .or_else(|| counter_max(t, f, "AI Core Freq"));
    let clock = info_clock.or(sampled).filter(|c| *c > 0.0);
    let cores = cores.filter(|c| *c > 0);
    let mut peaks = Peaks {
        chip: chip.clone(),
        ai_cores: cores.unwrap_or(-1),
        clock_mhz: clock.unwrap_or(f64::NAN),
        ..Default::default()
    };
    let clock_from = if info_clock.is_some() {
        "info.json aic_frequency"
    } else {
        "the highest sampled AI Core clock (AICORE_FREQ / AI Core Freq)"
    };
    match (cores, clock) {
        (Some(n), Some(mhz)) => {
            for dtype in ["fp16", "bf16", "int8"] {
                let per = cube_ops_per_cycle(dtype).unwrap_or(0.0);
                peaks.tflops.push(DtypePeak {
                    dtype: dtype.into(),
                    tflops: n as f64 * mhz * 1e6 * per / 1e12,
                    basis: format!("{n} AI cores (info.json ai_core_num) × {mhz} MHz ({clock_from}) × {per} ops per cycle (msprof-analyze operator_mfu chip_peak_flops.py OPS_PER_CYCLE)"),
                });
            }
            peaks.source = PeakSource::Capture;
            peaks.not_estimated.push("fp32: no public per-cycle cube figure for FLOAT on Ascend (msprof-analyze charges FLOAT to the FP16 peak; profscope does not): pass --peak-tflops".into());
        }
        _ => {
            let name = if chip.is_empty() {
                "the chip".to_string()
            } else {
                format!("`{chip}`")
            };
            let missing = match (cores, clock) {
                (None, None) => "no AI core count and no AI Core clock",
                (None, _) => "no AI core count",
                _ => "no AI Core clock",
            };
            peaks.not_estimated.push(format!(
                "compute: the capture records {missing} (PROF_*/device_*/info.json.* ai_core_num / aic_frequency, AICORE_FREQ); {name} alone does not fix them (Ascend910B covers 910B1–B4: 20 or 24 AI cores): pass --peak-tflops"
            ));
        }
    }
    peaks.not_estimated.push("bandwidth: no HBM bandwidth in the capture and no public per-chip figure profscope can match to it: pass --peak-gbps".into());
    DevicePeaks {
        peaks,
        clock_mhz: clock,
        cores,
    }
}

/// The largest value of the counters named `name` in `file` (the text export's `AI Core Freq`).
fn counter_max(t: &Tables, file: FileId, name: &str) -> Option<f64> {
    let id = t.strings.lookup(name)?;
    let c = &t.counters;
    (0..c.len())
        .filter(|&i| c.name[i] == id && t.process_file(c.process[i]) == file)
        .map(|i| c.value[i])
        .filter(|v| v.is_finite())
        .reduce(f64::max)
}

/// The `deviceProperties` entry of a Kineto device (by `id`, else its position).
fn gpu_props(t: &Tables, f: FileId, dev: i32) -> Option<GpuProps> {
    let v: serde_json::Value = serde_json::from_str(meta(t, f, "device_properties")?).ok()?;
    let list = v.as_array()?;
    let e = list
        .iter()
        .find(|e| e.get("id").and_then(|i| i.as_i64()) == Some(dev as i64))
        .or_else(|| if list.len() == 1 { list.first() } else { None })?;
    let int = |k: &str| e.get(k).and_then(|x| x.as_i64()).unwrap_or(-1);
    Some(GpuProps {
        name: e.get("name")?.as_str()?.to_string(),
        mem_bytes: int("totalGlobalMem").max(0) as u64,
        sms: int("numSms").max(0) as u64,
        cc: (int("computeMajor"), int("computeMinor")),
    })
}

fn gpu(t: &Tables, d: &Device) -> DevicePeaks {
    let mut peaks = Peaks {
        ai_cores: -1,
        clock_mhz: f64::NAN,
        ..Default::default()
    };
    match gpu_props(t, d.file, d.evidence.device_id) {
        None => peaks.not_estimated.push(
            "compute: the trace has no deviceProperties entry for this GPU (name, SM count): pass --peak-tflops".into(),
        ),
        Some(g) => {
            peaks.chip = g.name.clone();
            match chips::lookup(&g) {
                Some(c) => {
                    peaks.table_row = c.row.to_string();
                    peaks.source = PeakSource::Table;
                    peaks.tflops = c
                        .peaks()
                        .into_iter()
                        .map(|(dtype, tflops)| DtypePeak {
                            dtype: dtype.into(),
                            tflops,
                            basis: c.source.to_string(),
                        })
                        .collect();
                    peaks.gbps = Some(c.gbps);
                    peaks.gbps_basis = c.source.to_string();
                }
                None => peaks.not_estimated.push(format!(
                    "compute: `{}` ({} SMs / CUs, {} GB) matches no row of profscope's chip table: pass --peak-tflops",
                    g.name,
                    g.sms,
                    g.mem_bytes / 1_000_000_000
                )),
            }
        }
    }
    if peaks.gbps.is_none() {
        peaks
            .not_estimated
            .push("bandwidth: no chip-table row for this GPU: pass --peak-gbps".into());
    }
    DevicePeaks {
        peaks,
        clock_mhz: None,
        cores: None,
    }
}
