//! profscope's Python binding (docs/python.md): `run(argv)`, the CLI run in-process
//! (`profscope::cli::run_captured`), on which the Python package (profscope/__init__.py) builds
//! analyze / diff / memory, so every number is the CLI's; and `load_tables(paths)`, the model's
//! tables (`profscope::export::arrow_tables`) as Arrow C streams for pyarrow, without a copy;
//! and `bound(tool, json, max_bytes)`, a JSON result through profscope's one trimmer of bounded
//! outputs (`profscope::report::budget`), what `Report.brief` returns. All release the GIL while
//! profscope works.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

pyo3::create_exception!(
    _profscope,
    ProfscopeError,
    pyo3::exceptions::PyRuntimeError,
    "An error profscope reported: the message the CLI prints after `profscope: error: `."
);

/// Runs `profscope <argv...>` in this process and returns (stdout, exit code); exit 1 means the
/// command ran and found problems (a crossed `diff --fail-on` gate). Errors raise
/// ProfscopeError with the CLI's message. The GIL is released while profscope works.
#[pyfunction]
fn run(py: Python<'_>, argv: Vec<String>) -> PyResult<(String, u8)> {
    match py.detach(|| profscope::cli::run_captured(&argv)) {
        Ok(c) => Ok((c.stdout, c.code)),
        Err(e) => Err(ProfscopeError::new_err(e)),
    }
}

/// Ingests `paths` (files or folders, as the CLI takes them) and returns the model's tables as
/// (name, capsule) pairs, each capsule an Arrow C stream (`arrow_array_stream`) of one batch.
#[pyfunction]
fn load_tables(py: Python<'_>, paths: Vec<String>) -> PyResult<Vec<(String, Py<PyCapsule>)>> {
    let batches = py
        .detach(|| -> Result<Vec<(&'static str, RecordBatch)>, String> {
            let paths: Vec<std::path::PathBuf> = paths.iter().map(Into::into).collect();
            let progress = profscope::ingest::Progress::default();
            let t =
                profscope::ingest::ingest_paths(&paths, &progress).map_err(|e| e.to_string())?;
            profscope::export::arrow_tables::record_batches(&t).map_err(|e| e.to_string())
        })
        .map_err(ProfscopeError::new_err)?;
    let mut out = Vec::with_capacity(batches.len());
    for (name, b) in batches {
        let schema = b.schema();
        let reader = RecordBatchIterator::new(vec![Ok(b)], schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        let capsule = PyCapsule::new_with_value(py, stream, c"arrow_array_stream")?;
        out.push((name.to_string(), capsule.unbind()));
    }
    Ok(out)
}

/// `json` (the JSON result of `tool`: `analyze`, `diff`, `memory`) bounded to `max_bytes`, filled
/// by importance as the MCP tools are: the wrapper `{schema_version, tool, truncated,
/// full_bytes, result, cut}` as JSON text of at most `max_bytes` bytes. A bound too small for
/// the verdict and the headline raises ProfscopeError naming the smallest that fits.
#[pyfunction]
fn bound(py: Python<'_>, tool: String, json: String, max_bytes: usize) -> PyResult<String> {
    py.detach(|| -> Result<String, String> {
        let v: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
        profscope::report::budget::bound(&tool, &v, max_bytes)
            .map(|b| b.text)
            .map_err(|e| e.to_string())
    })
    .map_err(ProfscopeError::new_err)
}

#[pymodule]
fn _profscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(load_tables, m)?)?;
    m.add_function(wrap_pyfunction!(bound, m)?)?;
    m.add("ProfscopeError", m.py().get_type::<ProfscopeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
