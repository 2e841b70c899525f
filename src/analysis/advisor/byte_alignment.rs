//! Collective data not 512-byte aligned, as msprof-analyze advisor checks it
//! (analyzer/communication/alignment/byte_alignment_checker.py, rules/en/byte_alignment.yaml:
//! `min_size: 512`, `_BASE_SIZE = 512`): an op's SDMA `Memcpy*` / `Reduce*` plane tasks that
//! are not on chip and carry more than 512 bytes; those whose size is not a multiple of 512 are
//! the op's abnormal time. An op's tasks are those after its start (the op that began last
//! before them), as msprof-analyze walks the HCCL timeline.
//!
//! Time at stake: the abnormal tasks' time minus the time their bytes take at the bandwidth the
//! same file's aligned tasks reach (the aligned tasks' bytes over their time); 0 when the file
//! has no aligned task to compare with.

use super::{FileRule, Keyed, finding, where_file};
use crate::analysis::devices::Device;
use crate::model::Tables;
use crate::model::events::NO_ROW;

pub const RULE: FileRule = FileRule {
    name: "byte_alignment",
    run,
};

const BASE: i64 = 512;

/// One op's share of the checked tasks.
#[derive(Default, Clone, Copy)]
struct OpSum {
    bytes: i64,
    ns: i64,
    abnormal_bytes: i64,
    abnormal_ns: i64,
}

fn run(t: &Tables, devices: &[Device]) -> Vec<Keyed> {
    let (Some(sdma), on_chip) = (t.strings.lookup("SDMA"), t.strings.lookup("ON_CHIP")) else {
        return Vec::new();
    };
    // The checked plane tasks, found in one pass over the events (not one per device).
    let c = &t.comm_tasks;
    let tasks: Vec<usize> = (0..t.events.len())
        .filter(|&i| {
            let row = t.events.comm_task[i];
            if row == NO_ROW {
                return false;
            }
            let r = row as usize;
            let name = t.str(t.events.name[i]);
            c.transport[r] == sdma
                && Some(c.link[r]) != on_chip
                && c.size_bytes[r] > BASE
                && (name.starts_with("Memcpy") || name.starts_with("Reduce"))
        })
        .collect();
    let mut out = Vec::new();
    for d in devices.iter().filter(|d| !d.comm_ops.is_empty()) {
        let mut ops: Vec<(i64, u32)> = d
            .comm_ops
            .iter()
            .map(|&i| (t.events.ts_ns[i as usize], i))
            .collect();
        ops.sort_unstable();
        let mut sums = vec![OpSum::default(); ops.len()];
        for &i in tasks.iter().filter(|&&i| t.event_file(i) == d.file) {
            let size = c.size_bytes[t.events.comm_task[i] as usize];
            let ts = t.events.ts_ns[i];
            let k = ops.partition_point(|&(s, _)| s <= ts);
            if k == 0 {
                continue;
            }
            let dur = t.events.dur_ns.at(i);
            let s = &mut sums[k - 1];
            s.bytes += size;
            s.ns += dur;
            if size % BASE != 0 {
                s.abnormal_bytes += size;
                s.abnormal_ns += dur;
            }
        }
        let (aligned_bytes, aligned_ns) = sums.iter().fold((0i64, 0i64), |(b, n), s| {
            (b + s.bytes - s.abnormal_bytes, n + s.ns - s.abnormal_ns)
        });
        let bad: Vec<usize> = (0..ops.len())
            .filter(|&k| sums[k].abnormal_ns > 0)
            .collect();
        if bad.is_empty() {
            continue;
        }
        let saved = |s: &OpSum| -> i64 {
            if aligned_ns <= 0 || aligned_bytes <= 0 {
                return 0;
            }
            let at_aligned = s.abnormal_bytes as f64 * aligned_ns as f64 / aligned_bytes as f64;
            (s.abnormal_ns as f64 - at_aligned).max(0.0).round() as i64
        };
        let mut f = finding(
            "byte_alignment",
            "msprof-analyze advisor: byte_alignment_checker.py, rules/en/byte_alignment.yaml (min_size 512, _BASE_SIZE 512, SDMA, not ON_CHIP)",
        );
        let abnormal: i64 = bad.iter().map(|&k| sums[k].abnormal_ns).sum();
        f.time_at_stake_ns = bad.iter().map(|&k| saved(&sums[k])).sum();
        f.statement = format!(
            "{} collective op(s) move data not 512-byte aligned ({} of their SDMA tasks)",
            bad.len(),
            crate::units::human_duration(abnormal as f64)
        );
        f.estimate = if aligned_ns > 0 && aligned_bytes > 0 {
            format!(
                "the unaligned tasks' {} minus their bytes at the aligned tasks' bandwidth on this device ({:.3} GB/s)",
                crate::units::human_duration(abnormal as f64),
                aligned_bytes as f64 / aligned_ns as f64
            )
        } else {
            "not estimated: no aligned SDMA task on this device to compare the bandwidth with"
                .into()
        };
        for &k in &bad {
            let (s, i) = (sums[k], ops[k].1 as usize);
            f.evidence.push(format!(
                "{}: {} at {} ns: {} bytes in {:.4} µs, unaligned {} bytes in {:.4} µs",
                where_file(t, d.file),
                t.str(t.events.name[i]),
                t.events.ts_ns[i],
                s.bytes,
                s.ns as f64 / 1e3,
                s.abnormal_bytes,
                s.abnormal_ns as f64 / 1e3
            ));
        }
        f.recommendation = "pad or bucket the collective's tensors to a multiple of 512 bytes (e.g. the gradient bucket or the all-reduced hidden size), so every SDMA transfer is aligned".into();
        out.push(Keyed {
            key: "byte_alignment".into(),
            finding: f,
        });
    }
    out
}
