//! One titled table of display strings with notes under it: what the terminal, Markdown and
//! HTML renderers format, and what every section builder fills.

use crate::report::Report;

pub struct Section {
    pub title: String,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    /// Lines printed under the table (denominators, verdicts, statements).
    pub notes: Vec<String>,
}

pub fn sec(title: impl Into<String>, header: Vec<&'static str>) -> Section {
    Section {
        title: title.into(),
        header,
        rows: Vec::new(),
        notes: Vec::new(),
    }
}

/// `path` relative to the input it was found under (the inputs are printed above every
/// report), so a row shows `rank0_ascend_pt/…/ascend_pytorch_profiler_0.db`, not the whole path.
pub fn rel<'a>(r: &Report, path: &'a str) -> &'a str {
    r.inputs
        .iter()
        .filter_map(|i| {
            let i = i.trim_end_matches('/');
            path.strip_prefix(i)?.strip_prefix('/')
        })
        .filter(|p| !p.is_empty())
        .min_by_key(|p| p.len())
        .unwrap_or_else(|| {
            // A file given as the input itself: its name.
            if r.inputs.iter().any(|i| i == path) {
                path.rsplit('/').next().unwrap_or(path)
            } else {
                path
            }
        })
}
