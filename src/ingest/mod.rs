//! Reading inputs into the model. One module per format ([`chrome_json`] today; the Ascend db
//! and msprof CSV readers join it), one [`builder::TablesBuilder`] that all of them write through,
//! and [`detect`]/[`ingest_paths`] that find the inputs under a path and pick the reader.
//! Inputs are read-only: files are opened for reading only and never locked or modified.

pub mod ascend_db;
pub mod builder;
mod capture_session;
pub mod chrome_json;
pub mod detect;
pub mod device_info;
pub mod error;
pub mod evidence;
pub mod footprint;
pub mod mapping;
pub mod msprof_csv;
mod nearly_sorted;
pub mod once;
mod postpass;
pub mod profiler_metadata;
pub mod progress;
pub mod rank;
pub mod source;
mod vendor_summary;

pub use builder::TablesBuilder;
pub use error::IngestError;
pub use progress::Progress;

use crate::diag::Severity;
use crate::model::Tables;

/// The inputs found under `paths` (files or folders), best export per rank, and what was left out.
pub struct Discovered {
    pub inputs: Vec<detect::Input>,
    pub skipped: Vec<detect::Skipped>,
    /// What the walk could not look into (`path: why`).
    pub unreadable: Vec<String>,
    /// Paths and files named more than once (the same path twice, a folder and a folder inside
    /// it, a symbolic or hard link to a file already found): read once, each as `what: why`.
    pub duplicates: Vec<String>,
}

impl Discovered {
    /// Whole captures left out because a newer one of the same ranks was read: (the root left
    /// out, the root read instead), one per root, sorted.
    pub fn other_captures(&self) -> Vec<(String, String)> {
        let mut captures: Vec<(String, String)> = self
            .skipped
            .iter()
            .filter_map(|s| s.other_capture.clone())
            .collect();
        captures.sort();
        captures.dedup();
        captures
    }

    /// `input_skipped` diagnostics for the left-out files.
    pub fn skipped_diagnostics(&self) -> crate::diag::Diagnostics {
        let mut d = crate::diag::Diagnostics::default();
        // Whole captures left out: one warning per capture root, named in the headline.
        for (root, instead) in self.other_captures() {
            d.add("other_capture_skipped", crate::diag::Severity::Warning, || {
                format!(
                    "{root}: another capture of the same ranks, not read; read {instead}, the newest (by the folder-name timestamp, else mtime); pass {root} to analyse it"
                )
            });
        }
        for sk in self.skipped.iter().filter(|s| s.other_capture.is_none()) {
            d.add("input_skipped", crate::diag::Severity::Info, || {
                format!(
                    "{}: not read; read instead: {}",
                    sk.path,
                    sk.kept.join(", ")
                )
            });
        }
        for u in &self.unreadable {
            d.add("input_unreadable", crate::diag::Severity::DataLoss, || {
                u.clone()
            });
        }
        for u in &self.duplicates {
            d.add("input_duplicate", crate::diag::Severity::Info, || u.clone());
        }
        d
    }
}

/// Finds the inputs under `paths`; a path with none is an error naming it. Each file is read
/// once however it is named ([`once::distinct_paths`], [`once::distinct_inputs`]).
pub fn discover(paths: &[std::path::PathBuf]) -> Result<Discovered, IngestError> {
    let mut inputs = Vec::new();
    let mut skipped = Vec::new();
    let mut unreadable = Vec::new();
    let (paths, mut duplicates) = once::distinct_paths(paths);
    for p in &paths {
        let (found, problems) = detect::find_inputs(p)?;
        unreadable.extend(problems);
        if found.is_empty() {
            return Err(IngestError::NothingFound {
                path: p.display().to_string(),
            });
        }
        let (kept, left) = detect::select(found, p);
        let (kept, left) = capture_session::keep_capture_sessions(kept, left, p);
        inputs.extend(kept);
        skipped.extend(left);
    }
    let (inputs, same) = once::distinct_inputs(inputs);
    duplicates.extend(same);
    Ok(Discovered {
        inputs,
        skipped,
        unreadable,
        duplicates,
    })
}

/// Whose recorded op inputs (`Input Dims`, `Input type`, `Concrete Inputs`) a reader keeps as
/// text: `None` every host op's; `Some(keep)` those of the ops whose name `keep` accepts. An op
/// whose inputs are not kept still has its op_args row, with empty texts, so a capture recorded
/// with shapes still says so. The texts are most of a Kineto trace's distinct strings.
pub type OpInputs = Option<fn(&str) -> bool>;

/// What a consumer reads of an input. The default is everything; the analyses need less.
#[derive(Debug, Clone, Copy)]
pub struct IngestOpts {
    /// The vendor's overlap rows (a db's OVERLAP_ANALYSIS, a trace's `Overlap Analysis` events)
    /// as events, else as per-device sums in vendor_overlap.
    pub vendor_overlap_events: bool,
    /// Whose recorded op inputs are kept ([`OpInputs`]).
    pub op_inputs: OpInputs,
    /// The overlap counts (`improperly_nested_events`, `overlapping_device_events`) left to the
    /// caller ([`overlap_diagnostics`]), which runs them beside its analyses: a serial pass over
    /// every event that nothing else in the tables waits for.
    pub overlaps_later: bool,
}

impl Default for IngestOpts {
    fn default() -> Self {
        IngestOpts {
            vendor_overlap_events: true,
            op_inputs: None,
            overlaps_later: false,
        }
    }
}

impl IngestOpts {
    /// What `analyze` reads: the vendor's overlap rows as sums (they only feed a comparison).
    pub const ANALYSIS: IngestOpts = IngestOpts {
        vendor_overlap_events: false,
        op_inputs: None,
        overlaps_later: false,
    };
}

/// The overlap diagnostics of finished tables read with [`IngestOpts::overlaps_later`]: what
/// the post-pass would have added (info only; no table changes).
pub fn overlap_diagnostics(t: &Tables) -> crate::diag::Diagnostics {
    postpass::overlap_diagnostics(t)
}

/// One input into its own finished tables, everything read (what the exports do per file).
pub fn ingest_one(input: &detect::Input, progress: &Progress) -> Result<Tables, IngestError> {
    ingest_one_with(input, IngestOpts::default(), progress)
}

/// [`ingest_one`] reading what `opts` asks for (`analyze` per file: [`IngestOpts::ANALYSIS`]).
pub fn ingest_one_with(
    input: &detect::Input,
    opts: IngestOpts,
    progress: &Progress,
) -> Result<Tables, IngestError> {
    let size = std::fs::metadata(&input.path).map_or(0, |m| m.len());
    let mut b = TablesBuilder::new();
    let t0 = std::time::Instant::now();
    let r = ingest_input_with(input, opts, &mut b, progress);
    if std::env::var_os("PROFSCOPE_INGEST_TIMING").is_some() {
        eprintln!("ingest read: {:.3} s", t0.elapsed().as_secs_f64());
    }
    if !mapping::shrank(&input.path, size) {
        r?;
        return Ok(b.finish());
    }
    // The file shrank while it was read (pages past its new end read as zeros): read it once
    // more as it is now, and say so.
    let now = std::fs::metadata(&input.path).map_or(0, |m| m.len());
    let mut b = TablesBuilder::new();
    let r = ingest_input_with(input, opts, &mut b, progress);
    let path = &input.path;
    b.note_truncated(path);
    b.diag().add("changed_while_read", Severity::DataLoss, || {
        format!("{path}: the file shrank from {size} to {now} bytes while it was read (still being written, or replaced); read again as it is now")
    });
    r?;
    Ok(b.finish())
}

/// Reads one input into `b` with the reader of its format, everything read.
pub fn ingest_input(
    input: &detect::Input,
    b: &mut TablesBuilder,
    progress: &Progress,
) -> Result<(), IngestError> {
    ingest_input_with(input, IngestOpts::default(), b, progress)
}

fn ingest_input_with(
    input: &detect::Input,
    opts: IngestOpts,
    b: &mut TablesBuilder,
    progress: &Progress,
) -> Result<(), IngestError> {
    b.set_vendor_overlap_sums(!opts.vendor_overlap_events);
    b.set_op_inputs(opts.op_inputs);
    b.set_overlaps_later(opts.overlaps_later);
    match input.format {
        detect::InputFormat::ChromeJson if input.parts.is_empty() => {
            chrome_json::ingest_file(&input.path, b, progress)?
        }
        detect::InputFormat::ChromeJson => {
            b.begin_parts();
            let read = std::iter::once(&input.path)
                .chain(&input.parts)
                .try_for_each(|p| {
                    let r = chrome_json::ingest_file(p, b, progress);
                    b.end_part();
                    r
                });
            b.end_parts();
            read?
        }
        detect::InputFormat::AscendDb => {
            let db = ascend_db::DbOpts {
                overlap_events: opts.vendor_overlap_events,
                ..Default::default()
            };
            let r = ascend_db::ingest_file_with(&input.path, b, db);
            progress.add(input.size_bytes);
            if r.is_ok() {
                profiler_metadata(&input.path, b);
                device_facts(&input.path, b);
            }
            return r;
        }
        detect::InputFormat::KernelCsv => {
            msprof_csv::ingest_file(&input.path, b)?;
            progress.add(input.size_bytes);
        }
        detect::InputFormat::VendorSummary => {
            vendor_summary::ingest(&input.path, input.size_bytes, b)?;
            progress.add(input.size_bytes);
        }
    }
    profiler_metadata(&input.path, b);
    // The db carries its memory tables; a text export has them as CSVs beside it.
    msprof_csv::companions(&input.path, b);
    device_facts(&input.path, b);
    Ok(())
}

/// The `profiler_metadata.json` keys of the torch_npu rank folder `path` is in (the job's layout,
/// the environment) as meta rows of the file just read, for every format (a db's META_DATA rows
/// of the same keys come first); when that file is there but cannot be read, a
/// `metadata_unreadable` diagnostic saying why and the `METADATA_UNREADABLE` row the advisor reads.
fn profiler_metadata(path: &str, b: &mut TablesBuilder) {
    let Some(file) = b.tables().files.len().checked_sub(1) else {
        return;
    };
    let file = crate::model::FileId(file as u32);
    match rank::profiler_metadata(path) {
        Ok(rows) => {
            for (key, value) in rows {
                if !b.has_meta(file, key) {
                    b.add_meta(file, key, &value);
                }
            }
        }
        Err(why) => {
            let key = crate::model::meta::METADATA_UNREADABLE;
            if !b.has_meta(file, key) {
                b.add_meta(file, key, &why);
                b.diag().add("metadata_unreadable", crate::diag::Severity::DataLoss, || {
                    format!("{why}: its environment variables, communicator groups and parallel layout are not read (the advisor lists environment_variables as not checked)")
                });
            }
        }
    }
}

/// The chip facts of the capture (`PROF_*/device_<n>/info.json.<n>`) for the file just read.
fn device_facts(path: &str, b: &mut TablesBuilder) {
    if let Some(file) = b.tables().files.len().checked_sub(1) {
        device_info::ingest(path, crate::model::FileId(file as u32), b);
    }
}

/// Ingests every input found under `paths` into one set of tables (the joint view; `analyze`
/// goes file by file through `pipeline`).
pub fn ingest_paths(
    paths: &[std::path::PathBuf],
    progress: &Progress,
) -> Result<Tables, IngestError> {
    ingest_paths_with(paths, IngestOpts::default(), progress)
}

/// [`ingest_paths`] reading what `opts` asks for.
pub fn ingest_paths_with(
    paths: &[std::path::PathBuf],
    opts: IngestOpts,
    progress: &Progress,
) -> Result<Tables, IngestError> {
    let found = discover(paths)?;
    for i in &found.inputs {
        progress.add_total(i.size_bytes);
    }
    let mut b = TablesBuilder::new();
    b.diag().merge(found.skipped_diagnostics());
    for input in &found.inputs {
        ingest_input_with(input, opts, &mut b, progress)?;
    }
    Ok(b.finish())
}
