//! `profscope weights PATH [--tp N] [--dp N] [--expert-parallel]`: a checkpoint's tensors by
//! class with exact bytes and an estimated per-device share (safetensors headers or index only;
//! tensor data is never read).

use crate::analysis::weights::{self, Weights};
use crate::ingest::evidence::safetensors;
use crate::render::{Format, human_bytes};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct WeightsArgs {
    /// A `.safetensors` file, its header `.json`, or a `model.safetensors.index.json`.
    pub path: PathBuf,
    /// Tensor-parallel size: dense weights are divided by it per device.
    #[arg(long, default_value_t = 1)]
    pub tp: u64,
    /// Data-parallel size (with --expert-parallel, experts split over TP x DP).
    #[arg(long, default_value_t = 1)]
    pub dp: u64,
    /// Experts are split across EP = TP x DP ranks (vLLM `--enable-expert-parallel`).
    #[arg(long)]
    pub expert_parallel: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Serialize)]
struct Out<'a> {
    schema_version: &'static str,
    files: &'a [String],
    metadata: &'a Option<String>,
    data_missing: &'a [String],
    shards_not_read: &'a [String],
    weights: &'a Weights,
}

pub fn run(a: WeightsArgs) -> anyhow::Result<ExitCode> {
    if a.tp == 0 || a.dp == 0 {
        anyhow::bail!("--tp and --dp must be at least 1");
    }
    let c = safetensors::read(&a.path)?;
    let w = weights::compute(&c, a.tp, a.dp, a.expert_parallel);
    let text = match a.format {
        Format::Json => {
            let o = Out {
                schema_version: crate::report::SCHEMA_VERSION,
                files: &c.files,
                metadata: &c.metadata,
                data_missing: &c.data_missing,
                shards_not_read: &c.shards_not_read,
                weights: &w,
            };
            serde_json::to_string_pretty(&o)? + "\n"
        }
        f => {
            use crate::render::sections::{Section, sec};
            let mut s: Section = sec(
                format!(
                    "Weights of {} (TP {}, DP {}, EP {})",
                    a.path.display(),
                    w.tp,
                    w.dp,
                    w.ep
                ),
                vec!["class", "strategy", "tensors", "bytes", "per device"],
            );
            let b = |x: Option<u64>| x.map_or("unknown".into(), human_bytes);
            for r in &w.classes {
                s.rows.push(vec![
                    r.class.to_string(),
                    format!("{} /{}", r.strategy, r.divisor),
                    r.tensors.to_string(),
                    b(r.bytes),
                    r.per_device_bytes.map_or_else(
                        || format!("{:.1} tensors", r.per_device_tensors),
                        |x| human_bytes(x as u64),
                    ),
                ]);
            }
            s.notes.push(format!(
                "{} tensors, {} in total ({} on one device); index total_size: {}",
                w.tensors,
                b(w.bytes),
                w.per_device_bytes
                    .map_or("unknown".into(), |x| human_bytes(x as u64)),
                b(w.index_total_size)
            ));
            if let Some(e) = w.experts_per_layer {
                s.notes.push(format!(
                    "{e} experts per layer, {:.1} per device",
                    w.experts_per_device.unwrap_or(e as f64)
                ));
            }
            for m in &c.data_missing {
                s.notes
                    .push(format!("{m}: header only, tensor data not in the file"));
            }
            if !c.shards_not_read.is_empty() {
                s.notes.push(format!(
                    "{} shard(s) not read (names from the index only), e.g. {}",
                    c.shards_not_read.len(),
                    c.shards_not_read[0]
                ));
            }
            s.notes.push(w.estimate_note.into());
            crate::render::render_sections(&[s], f)
        }
    };
    crate::cli::write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
