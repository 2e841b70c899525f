//! The generator behind `profscope synth`: deterministic, realistic Ascend serving profiling
//! roots in the exact on-disk formats of shared/formats (`trace_view.json` and/or the torch_npu
//! db with `analysis.db` per rank, lmdeploy-style Kineto rank files; CSV writers join later), plus
//! `ground_truth.json` with what was injected. JSON and db are written by the same generator
//! calls, so they hold one run. Used for the bundled demo root, tests and benchmarks.
//!
//! Layout written under OUT:
//! ```text
//! rank<r>_ascend_pt/profiler_info_<r>.json
//! rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json                (json, both)
//! rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_<r>.db  (db, both)
//! rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db                     (db, both)
//! lmdeploy/lmdeploy_profile_<r>.json.gz        (with --kineto)
//! capture_traces/rank<r>_ascend_pt/...          (with --graph-mode --capture-apart: the capture session)
//! ground_truth.json
//! ```

mod ascend;
pub mod db;
pub mod job;
mod kineto;
mod rng;
pub mod truth;
mod writer;

pub use truth::{RankTruth, Truth};

use std::path::Path;
use writer::{EventWriter, Sink};

#[derive(Debug, Clone)]
pub struct SynthOpts {
    pub ranks: u32,
    /// Approximate bytes of each rank's trace_view.json.
    pub target_bytes: u64,
    pub seed: u64,
    pub kineto: bool,
    /// Which torch_npu exports to write per rank.
    pub export: Export,
    /// (rank, percent): that rank's compute kernels take `percent`% of their normal time.
    pub slow: Option<(u32, u32)>,
    /// Decode steps replay captured graphs (ACLGraph): see `ascend::RankGen::capture_graphs`.
    pub graph_mode: bool,
    /// With `graph_mode`: the capture is profiled apart from the replays, as its own session
    /// (`capture_traces/rank<r>_ascend_pt/`, trace_view.json only), and the rank's trace holds
    /// the replays alone.
    pub capture_apart: bool,
}

/// torch_npu's `export_type`: text (trace_view.json), db, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Export {
    #[default]
    Json,
    Db,
    Both,
}

impl Export {
    fn json(self) -> bool {
        self != Export::Db
    }
    fn db(self) -> bool {
        self != Export::Json
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("writing {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("bad size `{0}` (use e.g. 500KB, 100MB, 2GB)")]
    BadSize(String),
}

/// `500KB`, `100MB`, `2GB`, `12345` → bytes (decimal units).
pub fn parse_size(s: &str) -> Result<u64, SynthError> {
    crate::units::parse_size(s, crate::units::SizeBase::Decimal)
        .map_err(|_| SynthError::BadSize(s.to_string()))
}

pub const LAYERS: u64 = 2;
pub const MTP_HEADS: u64 = 1;
pub const BATCH: u64 = 4;
pub const PREFILL_STEPS: u64 = 2;

/// Writes a training job's root (see [`job`]) and returns (and writes) the ground truth, whose
/// `job` holds the layout and each rank's numbers.
pub fn generate_job(out: &Path, o: &job::JobOpts) -> Result<Truth, SynthError> {
    let j = job::generate(out, o)?;
    let truth = Truth {
        generator: format!("profscope synth {}", env!("CARGO_PKG_VERSION")),
        seed: o.seed,
        ranks: Vec::new(),
        job: Some(j),
    };
    let tp = out.join("ground_truth.json");
    let text = serde_json::to_string_pretty(&truth).expect("truth serializes");
    std::fs::write(&tp, text + "\n").map_err(|source| SynthError::Io {
        path: tp.display().to_string(),
        source,
    })?;
    Ok(truth)
}

/// Creates torch_npu's folders of one rank under `out` (`rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/`)
/// with its `profiler_info_<r>.json`; returns (the rank folder, its ASCEND_PROFILER_OUTPUT).
pub(crate) fn rank_folder(
    out: &Path,
    rank: u32,
) -> Result<(std::path::PathBuf, std::path::PathBuf), SynthError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| SynthError::Io {
            path: path.clone(),
            source,
        }
    };
    let dir = out.join(format!("rank{rank}_ascend_pt"));
    let prof = dir.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&prof).map_err(io(&prof))?;
    let info = dir.join(format!("profiler_info_{rank}.json"));
    std::fs::write(
        &info,
        format!("{{\"rank_id\": {rank}, \"generated_by\": \"profscope synth\"}}\n"),
    )
    .map_err(io(&info))?;
    Ok((dir, prof))
}

/// Writes the root and returns (and writes) the ground truth.
pub fn generate(out: &Path, o: &SynthOpts) -> Result<Truth, SynthError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| SynthError::Io {
            path: path.clone(),
            source,
        }
    };
    let mut truth = Truth {
        generator: format!("profscope synth {}", env!("CARGO_PKG_VERSION")),
        seed: o.seed,
        ranks: Vec::new(),
        job: None,
    };
    for rank in 0..o.ranks {
        let (_, prof) = rank_folder(out, rank)?;
        let tv = prof.join("trace_view.json");
        let rel = format!("rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT");
        let mut rt = RankTruth {
            rank,
            trace_view: if o.export.json() {
                format!("{rel}/trace_view.json")
            } else {
                String::new()
            },
            db: o
                .export
                .db()
                .then(|| format!("{rel}/ascend_pytorch_profiler_{rank}.db")),
            layers: LAYERS,
            mtp_heads: MTP_HEADS,
            batch_size: BATCH,
            ..Default::default()
        };
        write_trace_view(&tv, rank, o, &mut rt).map_err(io(&tv))?;
        if o.kineto {
            let kdir = out.join("lmdeploy");
            std::fs::create_dir_all(&kdir).map_err(io(&kdir))?;
            let kp = kdir.join(format!("lmdeploy_profile_{rank}.json.gz"));
            kineto::write(&kp, rank, o.ranks, o.seed, &mut rt).map_err(io(&kp))?;
            rt.kineto = Some(format!("lmdeploy/lmdeploy_profile_{rank}.json.gz"));
        }
        truth.ranks.push(rt);
    }
    let tp = out.join("ground_truth.json");
    let text = serde_json::to_string_pretty(&truth).expect("truth serializes");
    std::fs::write(&tp, text + "\n").map_err(io(&tp))?;
    Ok(truth)
}

fn write_trace_view(
    path: &Path,
    rank: u32,
    o: &SynthOpts,
    rt: &mut RankTruth,
) -> std::io::Result<()> {
    let sink = if o.export.json() {
        let file = std::fs::File::create(path)?;
        Sink::Plain(std::io::BufWriter::with_capacity(1 << 20, file))
    } else {
        Sink::Null
    };
    let w = EventWriter::new(sink, "[", true)?;
    let t0 = 1_736_408_883_000_000_000 + rank as i64 * 7_000;
    let mut g = ascend::RankGen::new(rank, o.seed, w, rt, t0);
    if let Some((_, pct)) = o.slow.filter(|s| s.0 == rank) {
        g.compute_pct = pct as i64;
    }
    let dir = path.parent().expect("trace_view.json has a folder");
    if o.export.db() {
        let db = dir.join(format!("ascend_pytorch_profiler_{rank}.db"));
        g.db = Some(db::DbWriter::create(&db, rank, g.device(), g.pid_py)?);
    }
    g.metadata()?;
    for _ in 0..PREFILL_STEPS {
        g.prefill_step(LAYERS)?;
    }
    if o.graph_mode && o.capture_apart {
        capture_apart(&mut g, path, rank)?;
    } else if o.graph_mode {
        g.capture_graphs(LAYERS, MTP_HEADS)?;
    }
    while g.w.bytes < o.target_bytes {
        g.decode_step(LAYERS, MTP_HEADS, BATCH)?;
    }
    g.finish_truth();
    let ascend::RankGen { w, db, .. } = g;
    w.finish("]")?;
    if let Some(db) = db {
        db.finish(&dir.join("analysis.db"))?;
    }
    Ok(())
}

/// The capture written as its own torch_npu session of the same rank and process
/// (`<root>/capture_traces/rank<r>_ascend_pt/`, trace_view.json), as a capture profiled apart
/// from its replays is; the rank's truth keeps describing its own trace (the replays), with the
/// capture's launches, time and per-op replay time and the capture file's path.
fn capture_apart(g: &mut ascend::RankGen, trace_view: &Path, rank: u32) -> std::io::Result<()> {
    let root = trace_view
        .ancestors()
        .nth(3)
        .expect("<root>/rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let dir = root.join(format!("capture_traces/rank{rank}_ascend_pt"));
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out)?;
    std::fs::write(
        dir.join(format!("profiler_info_{rank}.json")),
        format!(
            "{{\"rank_id\": {rank}, \"generated_by\": \"profscope synth (capture session)\"}}\n"
        ),
    )?;
    let path = out.join("trace_view.json");
    let file = std::fs::File::create(&path)?;
    let w = EventWriter::new(Sink::Plain(std::io::BufWriter::new(file)), "[", true)?;
    let main = std::mem::replace(&mut g.w, w);
    let db = g.db.take();
    // What describes the rank's own trace is kept as it was before the capture.
    let t = &*g.truth;
    let kept = (
        (t.window_start_ns, t.window_end_ns),
        t.x_events_by_process.clone(),
        t.by_category.clone(),
        (t.metadata, t.flows, t.counters),
    );
    g.metadata()?;
    g.capture_graphs(LAYERS, MTP_HEADS)?;
    let t = &mut *g.truth;
    (t.window_start_ns, t.window_end_ns) = kept.0;
    t.x_events_by_process = kept.1;
    t.by_category = kept.2;
    (t.metadata, t.flows, t.counters) = kept.3;
    t.capture_file = Some(format!(
        "capture_traces/rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    ));
    g.db = db;
    std::mem::replace(&mut g.w, main).finish("]")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("500KB").unwrap(), 500_000);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("1.5 MB").unwrap(), 1_500_000);
        assert!(parse_size("lots").is_err());
    }
}
