//! Reading inputs into the model. One module per format ([`chrome_json`] today; the Ascend db
//! and msprof CSV readers join it), one [`builder::TablesBuilder`] that all of them write through,
//! and [`detect`]/[`ingest_paths`] that find the inputs under a path and pick the reader.
//! Inputs are read-only: files are opened for reading only and never locked or modified.

pub mod ascend_db;
pub mod builder;
pub mod chrome_json;
pub mod detect;
pub mod error;
mod postpass;
pub mod progress;
pub mod rank;
pub mod source;

pub use builder::TablesBuilder;
pub use error::IngestError;
pub use progress::Progress;

use crate::model::Tables;

/// Ingests every input found under `paths` (files or folders) into one set of tables.
pub fn ingest_paths(
    paths: &[std::path::PathBuf],
    progress: &Progress,
) -> Result<Tables, IngestError> {
    let mut inputs = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let found = detect::find_inputs(p)?;
        if found.is_empty() {
            return Err(IngestError::NothingFound {
                path: p.display().to_string(),
            });
        }
        let (kept, left) = detect::select(found, p);
        inputs.extend(kept);
        skipped.extend(left);
    }
    for i in &inputs {
        progress.add_total(i.size_bytes);
    }
    let mut b = TablesBuilder::new();
    for sk in &skipped {
        b.diag()
            .add("input_skipped", crate::diag::Severity::Info, || {
                format!(
                    "{}: not read; read instead: {}",
                    sk.path,
                    sk.kept.join(", ")
                )
            });
    }
    for input in &inputs {
        match input.format {
            detect::InputFormat::ChromeJson => {
                chrome_json::ingest_file(&input.path, &mut b, progress)?
            }
            detect::InputFormat::AscendDb => ascend_db::ingest_file(&input.path, &mut b)?,
        }
    }
    Ok(b.finish())
}
