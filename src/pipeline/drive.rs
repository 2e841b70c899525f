//! The one per-file loop every use case runs on (analyze, the exports, the SQL frames): each
//! input is read into its own tables (or, if it cannot be read, the first of its alternates that
//! can), handed to `work` in parallel within the job and memory limits, and `work`'s result goes
//! to one sink in input order. A file that cannot be read reaches `work` as its error, once.

use super::schedule::bounded_ordered;
use crate::diag::Severity;
use crate::ingest::detect::{Input, InputFormat};
use crate::ingest::{IngestError, IngestOpts, Progress, ingest_one_with};
use crate::model::Tables;

/// How many files at once and how many estimated bytes in flight.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Files read at once (at least 1).
    pub jobs: usize,
    /// Estimated peak bytes allowed in flight; a larger file runs alone.
    pub max_memory: u64,
}

impl Default for Limits {
    /// One file per CPU, three quarters of the memory available now.
    fn default() -> Limits {
        Limits {
            jobs: rayon::current_num_threads(),
            max_memory: default_max_memory(),
        }
    }
}

/// Estimated peak resident bytes of ingesting and analysing one input (measured ratios in
/// docs/performance.md: JSON about 0.52x the file, `.json.gz` about 8x compressed JSON, the db about
/// 1.3x; rounded up).
pub fn estimate_bytes(i: &Input) -> u64 {
    let factor = match i.format {
        InputFormat::AscendDb => 1.5,
        InputFormat::ChromeJson if i.path.ends_with(".gz") => 6.0,
        InputFormat::ChromeJson => 0.7,
        InputFormat::KernelCsv => 0.7,
        // The summaries beside it are read whole: a few times their size.
        InputFormat::VendorSummary => 4.0,
    };
    (i.size_bytes as f64 * factor) as u64 + (16 << 20)
}

/// Three quarters of the memory available now (`MemAvailable`), else 8 GiB.
pub fn default_max_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(8 * crate::units::GIB as u64, |kb| {
            kb * crate::units::KIB as u64 / 4 * 3
        })
}

/// One input as read: its tables or why it could not be read, and the time reading took.
pub struct FileRead {
    pub tables: Result<Tables, IngestError>,
    pub ingest_ms: f64,
}

/// Reads every input (`what`: which tables to fill), runs `work` on each file's tables or error
/// in parallel, and gives the results to `sink` in input order.
pub fn each_file<T: Send>(
    inputs: &[Input],
    limits: Limits,
    what: IngestOpts,
    progress: &Progress,
    work: impl Fn(&Input, FileRead) -> T + Sync,
    sink: impl FnMut(&Input, T) + Send,
) {
    for i in inputs {
        progress.add_total(i.size_bytes);
    }
    let costs: Vec<u64> = inputs.iter().map(estimate_bytes).collect();
    let mut sink = sink;
    bounded_ordered(
        &costs,
        limits.jobs,
        limits.max_memory,
        |i| {
            let t0 = std::time::Instant::now();
            let tables = ingest_with_fallback(&inputs[i], what, progress);
            let ingest_ms = t0.elapsed().as_secs_f64() * 1e3;
            work(&inputs[i], FileRead { tables, ingest_ms })
        },
        |i, r| sink(&inputs[i], r),
    );
}

/// The input's tables; if it cannot be read at all, or was read with data lost (a cut or damaged
/// file: `truncated`, `table_unreadable`, ...), the first of its alternates (other exports of the
/// same capture) that reads completely, with an `input_fallback` diagnostic naming both. A
/// damaged input with no complete alternate is kept as read (its diagnostics say what is lost).
fn ingest_with_fallback(
    input: &Input,
    what: IngestOpts,
    progress: &Progress,
) -> Result<Tables, IngestError> {
    let first = ingest_one_with(input, what, progress);
    let why = match &first {
        Ok(t) => match data_lost(t) {
            None => return first,
            Some(lost) => format!("{}: read with data lost ({lost})", input.path),
        },
        Err(e) => e.to_string(),
    };
    for alt in &input.alternates {
        let Ok(mut t) = ingest_one_with(alt, what, progress) else {
            continue;
        };
        if first.is_ok() && data_lost(&t).is_some() {
            continue;
        }
        t.diagnostics.add("input_fallback", Severity::DataLoss, || {
            format!(
                "{why}; read {} (another export of the same capture) instead",
                alt.path
            )
        });
        return Ok(t);
    }
    first
}

/// Data-loss codes about values beside the timeline (run metadata, PMU ratios, graph ids): the
/// timeline was read whole, and another export of the capture would lose its detail without
/// reading those values any better, so they never make a file fall back.
const BESIDE_THE_TIMELINE: [&str; 3] = [
    "metadata_unreadable",
    "pmu_ratio_invalid",
    "graph_id_invalid",
];

/// The codes of the data-loss and error diagnostics of `t` that make another export of the
/// capture worth reading, when it has any.
fn data_lost(t: &Tables) -> Option<String> {
    let codes: Vec<&str> = t
        .diagnostics
        .iter()
        .filter(|d| matches!(d.severity, Severity::DataLoss | Severity::Error))
        .filter(|d| !BESIDE_THE_TIMELINE.contains(&d.code))
        .map(|d| d.code)
        .collect();
    (!codes.is_empty()).then(|| codes.join(", "))
}
