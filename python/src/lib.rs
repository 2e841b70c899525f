//! profscope's Python binding (docs/python.md): one native function, `run(argv)`, the CLI run
//! in-process (`profscope::cli::run_captured`) with the GIL released; the Python package
//! (profscope/__init__.py) builds its API on it, so every number is the CLI's.

use pyo3::prelude::*;

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

#[pymodule]
fn _profscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("ProfscopeError", m.py().get_type::<ProfscopeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
