//! What one file tells about the job it belongs to, kept after its tables are dropped: the
//! layout it states (`distributed_args`, `parallel_group_info`, a Kineto header's process
//! groups), whether it is a summary-only rank, the kind of work its device does (its compute
//! kernels by name), its time in pipeline sends and receives per step, its collectives as the
//! vendor's summaries list them (for ranks compared on vendor numbers), and the tokens its
//! experts processed (`GroupedMatmul`). Always computed (it is small), like the evidence.

use super::super::cross_rank::StepWindows;
use super::super::devices::{Device, iv};
use crate::model::files::SourceFormat;
use crate::model::{Category, FileId, StrId, Tables};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Kernel names kept per file for the work signature (the most frequent).
const WORK_NAMES: usize = 48;
/// Vendor op records kept per file (communication.json / CommAnalyzerTime).
const MAX_VENDOR_OPS: usize = 200_000;

/// A group as a file states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatedGroup {
    pub id: String,
    pub name: String,
    pub ranks: Vec<i32>,
}

/// `distributed_args` as stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StatedArgs {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub cp: u32,
    pub ep: u32,
    pub rank: Option<i32>,
    pub world_size: Option<u32>,
}

/// One collective as the vendor's summary lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VendorOp {
    /// `hcom_allReduce__586_0_1`.
    pub name: String,
    /// The group (the vendor's hash of its id).
    pub group: String,
    pub p2p: bool,
    pub step: Option<i64>,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Pipeline sends and receives of one step: (step key, receive ns, send ns).
pub type P2pStep = (i64, i64, i64);

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExpertFacts {
    pub tasks: u64,
    pub tokens: i64,
    pub time_ns: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobFacts {
    pub file: String,
    pub rank: i32,
    #[serde(deserialize_with = "crate::static_names::name")]
    pub format: crate::static_names::Name,
    pub summary_only: bool,
    pub has_device_events: bool,
    /// The header's world size (Kineto), else distributed_args'; -1 unknown.
    pub world_size: i32,
    pub args: Option<StatedArgs>,
    pub groups: Vec<StatedGroup>,
    /// Where `groups` came from: `parallel_group_info` or `distributedInfo.pg_config`.
    pub groups_from: String,
    /// Compute kernels by name, the most frequent first.
    pub work: Vec<(String, u64)>,
    pub p2p: Vec<P2pStep>,
    pub vendor_ops: Vec<VendorOp>,
    pub experts: ExpertFacts,
    /// Malformed layout metadata, named.
    pub problems: Vec<String>,
}

/// The job facts of every file of `t`.
pub fn facts(t: &Tables, devices: &[Device], windows: &StepWindows) -> Vec<JobFacts> {
    let windows = windows.get();
    (0..t.files.len())
        .map(|f| {
            let file = FileId(f as u32);
            let mut problems = Vec::new();
            let args =
                meta(t, file, "distributed_args").and_then(|v| parse_args(&v, &mut problems));
            let groups = meta(t, file, "parallel_group_info")
                .map(|v| parse_groups(&v, &mut problems))
                .unwrap_or_default();
            let format = t.files.format[f];
            let world = t.files.world_size[f];
            let mine: Vec<&Device> = devices.iter().filter(|d| d.file == file).collect();
            JobFacts {
                file: t.files.path[f].clone(),
                rank: t.files.rank[f],
                format: format.map_or("unknown", |x| x.as_str()),
                summary_only: format == Some(SourceFormat::VendorSummary),
                has_device_events: !mine.is_empty(),
                world_size: if world > 0 {
                    world
                } else {
                    args.and_then(|a| a.world_size).map_or(-1, |w| w as i32)
                },
                args,
                groups_from: if format == Some(SourceFormat::ChromeJsonObject) {
                    "distributedInfo.pg_config".into()
                } else {
                    "parallel_group_info".into()
                },
                groups,
                work: work(t, &mine),
                p2p: p2p(t, &mine, &windows[f]),
                vendor_ops: vendor_ops(t, file),
                experts: experts(t, file, &mine),
                problems,
            }
        })
        .collect()
}

fn meta(t: &Tables, f: FileId, key: &str) -> Option<serde_json::Value> {
    let v = t.meta.get(f, t.strings.lookup(key)?)?;
    serde_json::from_str(t.str(v)).ok()
}

fn parse_args(v: &serde_json::Value, problems: &mut Vec<String>) -> Option<StatedArgs> {
    let size = |k: &str| -> Option<u32> {
        let x = v.get(k)?;
        x.as_u64()
            .or_else(|| x.as_str()?.trim().parse().ok())
            .filter(|&n| (1..=1 << 20).contains(&n))
            .map(|n| n as u32)
    };
    let (Some(tp), Some(pp)) = (
        size("tensor_model_parallel_size"),
        size("pipeline_model_parallel_size"),
    ) else {
        problems.push("distributed_args without tensor_model_parallel_size / pipeline_model_parallel_size (or out of range)".into());
        return None;
    };
    let world = size("world_size");
    let cp = size("context_parallel_size").unwrap_or(1);
    let dp = size("data_parallel_size").or_else(|| Some(world? / (tp * pp * cp)))?;
    Some(StatedArgs {
        tp,
        pp,
        dp,
        cp,
        ep: size("expert_model_parallel_size").unwrap_or(1),
        rank: v.get("rank").and_then(|r| r.as_i64()).map(|r| r as i32),
        world_size: world,
    })
}

/// `{id: {group_name, global_ranks}}`; entries without a rank list are kept with none.
fn parse_groups(v: &serde_json::Value, problems: &mut Vec<String>) -> Vec<StatedGroup> {
    let Some(m) = v.as_object() else {
        problems.push("parallel_group_info is not an object".into());
        return Vec::new();
    };
    let mut out: Vec<StatedGroup> = m
        .iter()
        .take(100_000)
        .map(|(id, g)| StatedGroup {
            id: id.clone(),
            name: g
                .get("group_name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string(),
            ranks: g
                .get("global_ranks")
                .and_then(|r| r.as_array())
                .map(|a| {
                    a.iter()
                        .take(1 << 20)
                        .filter_map(|x| x.as_i64())
                        .filter(|&x| (0..1 << 24).contains(&x))
                        .map(|x| x as i32)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    for g in &mut out {
        g.ranks.sort_unstable();
        g.ranks.dedup();
    }
    out
}

/// The devices' compute kernels by name, most frequent first, the first [`WORK_NAMES`].
fn work(t: &Tables, devices: &[&Device]) -> Vec<(String, u64)> {
    let mut by: BTreeMap<StrId, u64> = BTreeMap::new();
    for d in devices {
        for &i in &d.events {
            if t.events.category[i as usize] == Category::ComputeKernel {
                *by.entry(t.events.name[i as usize]).or_default() += 1;
            }
        }
    }
    let mut v: Vec<(String, u64)> = by
        .into_iter()
        .map(|(k, n)| (t.str(k).to_string(), n))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(WORK_NAMES);
    v
}

/// Whether a communication op is a pipeline send or receive: (is receive, is send).
pub fn p2p_kind(name: &str) -> Option<bool> {
    let n = name.to_ascii_lowercase();
    let n = n.strip_prefix("hcom_").unwrap_or(&n);
    if n.starts_with("receive") || n.starts_with("recv") {
        Some(true)
    } else if n.starts_with("send") && !n.starts_with("sendrecv") {
        Some(false)
    } else if n.starts_with("batchsendrecv") || n.contains("sendrecv") {
        // Both directions in one op: counted as a receive (the side that waits).
        Some(true)
    } else {
        None
    }
}

/// Receive and send time per step of the file's devices (by the step the op starts in).
fn p2p(t: &Tables, devices: &[&Device], w: &super::super::cross_rank::Windows) -> Vec<P2pStep> {
    let mut by: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    let mut kinds: BTreeMap<StrId, Option<bool>> = BTreeMap::new();
    for d in devices {
        for &i in &d.comm_ops {
            let name = t.events.name[i as usize];
            let kind = *kinds.entry(name).or_insert_with(|| p2p_kind(t.str(name)));
            let Some(receive) = kind else { continue };
            let (s, e) = iv(t, i);
            let Some(step) = w.step_at(s) else { continue };
            let x = by.entry(step).or_default();
            if receive {
                x.0 += e - s;
            } else {
                x.1 += e - s;
            }
        }
    }
    by.into_iter().map(|(k, (r, s))| (k, r, s)).collect()
}

/// The collectives of the file's communication.json (or analysis.db CommAnalyzerTime when it
/// has no JSON), the first [`MAX_VENDOR_OPS`].
fn vendor_ops(t: &Tables, f: FileId) -> Vec<VendorOp> {
    let r = &t.reference;
    #[derive(Default)]
    struct Rec {
        db: bool,
        op: String,
        group: String,
        kind: String,
        step: Option<i64>,
        start: f64,
        elapse: f64,
    }
    let mut recs: BTreeMap<(StrId, u32), Rec> = BTreeMap::new();
    for k in 0..r.len() {
        if r.file[k] != f {
            continue;
        }
        let table = t.str(r.table[k]);
        let db = table == "CommAnalyzerTime";
        let vendor_json =
            table.starts_with("communication") && !table.starts_with("communication_matrix");
        if !db && !vendor_json {
            continue;
        }
        let e = recs.entry((r.table[k], r.row[k])).or_insert(Rec {
            db,
            start: f64::NAN,
            elapse: f64::NAN,
            ..Rec::default()
        });
        let text = t.str(r.text[k]);
        match t.str(r.column[k]) {
            "step" => {
                e.step = text
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .ok()
            }
            "kind" | "type" => e.kind = text.to_string(),
            "op" | "hccl_op_name" => e.op = text.to_string(),
            "group_name" => e.group = text.to_string(),
            "Communication Time Info/Start Timestamp(us)" | "start_timestamp" => {
                e.start = r.number[k]
            }
            "Communication Time Info/Elapse Time(ms)" | "elapse_time" => e.elapse = r.number[k],
            _ => {}
        }
    }
    let json = recs.values().any(|x| !x.db);
    recs.into_values()
        .filter(|x| {
            x.db != json
                && !x.op.starts_with("Total")
                && x.start.is_finite()
                && x.elapse.is_finite()
        })
        .take(MAX_VENDOR_OPS)
        .map(|x| {
            let (name, group) = match x.op.split_once('@') {
                Some((n, g)) => (n.to_string(), g.to_string()),
                None => (x.op.clone(), x.group.clone()),
            };
            let start_ns = (x.start * 1e3).round() as i64;
            VendorOp {
                p2p: x.kind == "p2p" || p2p_kind(&name).is_some(),
                name,
                group,
                step: x.step,
                start_ns,
                end_ns: start_ns + (x.elapse * 1e6).round() as i64,
            }
        })
        .collect()
}

/// msprof-analyze ep_load_balance's token count of one `GroupedMatmul` input-shapes string: the
/// non-empty `;` parts but the last two (weights, group list), dim 0 of each, summed; None when a
/// part does not parse or there are fewer than two parts.
pub fn grouped_matmul_tokens(shapes: &str) -> Option<i64> {
    let parts: Vec<&str> = shapes
        .trim_matches('"')
        .split(';')
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() <= 1 {
        return None;
    }
    let keep = parts.len().saturating_sub(2);
    let mut sum = 0i64;
    for p in &parts[..keep] {
        sum = sum.checked_add(p.trim().split(',').next()?.trim().parse::<i64>().ok()?)?;
    }
    Some(sum)
}

/// The `GroupedMatmul` tasks of the file: from the device events' kernel details (db, kernel
/// CSV), else from the op-metrics rows a text export's kernel_details.csv gave.
fn experts(t: &Tables, f: FileId, devices: &[&Device]) -> ExpertFacts {
    let Some(gmm) = t.strings.lookup("GroupedMatmul") else {
        return ExpertFacts::default();
    };
    let mut out = ExpertFacts::default();
    let mut memo: BTreeMap<StrId, Option<i64>> = BTreeMap::new();
    let mut add = |shapes: StrId, dur: i64, out: &mut ExpertFacts| {
        out.tasks += 1;
        out.time_ns = out.time_ns.saturating_add(dur);
        let n = *memo
            .entry(shapes)
            .or_insert_with(|| grouped_matmul_tokens(t.str(shapes)));
        out.tokens = out.tokens.saturating_add(n.unwrap_or(0));
    };
    for d in devices {
        for &i in &d.events {
            let row = t.events.kernel[i as usize];
            if row == crate::model::events::NO_ROW || t.kernels.op_type[row as usize] != gmm {
                continue;
            }
            add(
                t.kernels.input_shapes[row as usize],
                t.events.dur_ns.at(i as usize),
                &mut out,
            );
        }
    }
    if out.tasks > 0 {
        return out;
    }
    let m = &t.op_metrics;
    for k in 0..m.file.len() {
        if m.file[k] == f && m.op_type[k] == gmm {
            add(m.input_shapes[k], m.dur_ns[k], &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// msprof-analyze's unit test input `1,3;4,6;;;;;4` counts 1 token; a real-looking
    /// GroupedMatmul (x, weight, five empty optionals, group list) counts x's rows.
    #[test]
    fn tokens_as_the_vendor_counts_them() {
        assert_eq!(grouped_matmul_tokens("1,3;4,6;;;;;4"), Some(1));
        assert_eq!(
            grouped_matmul_tokens("\"4096,4096;8,4096,1408;;;;;8\""),
            Some(4096)
        );
        assert_eq!(grouped_matmul_tokens("10,4;20,4;8,4,6;8"), Some(30));
        assert_eq!(grouped_matmul_tokens("4096,4096"), None);
        assert_eq!(grouped_matmul_tokens("x,4;8,4,6;8"), None);
    }

    #[test]
    fn p2p_names() {
        assert_eq!(p2p_kind("hcom_receive__586_3_1"), Some(true));
        assert_eq!(p2p_kind("hcom_send__586_3_1"), Some(false));
        assert_eq!(p2p_kind("hcom_batchSendRecv__1_0_1"), Some(true));
        assert_eq!(p2p_kind("ncclDevKernel_SendRecv(ncclDevComm*)"), Some(true));
        assert_eq!(p2p_kind("hcom_allReduce__586_0_1"), None);
    }
}
