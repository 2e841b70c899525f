//! Named, counted data-quality diagnostics. Anomalies in inputs are never dropped silently:
//! each kind gets a stable code, a severity, a count and the first few examples (with file and
//! byte offset where known). Every output format shows them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How bad an anomaly is for the answers built on the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; no data was lost (e.g. overlapping events, kept).
    Info,
    /// The answers may be wrong although all data was used: the input contradicts itself (our
    /// numbers disagree with the vendor's numbers in the same file).
    Warning,
    /// Some data could not be used (e.g. a truncated file, an unmatched `B`).
    DataLoss,
    /// A whole input could not be used.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::DataLoss => "data_loss",
            Severity::Error => "error",
        }
    }
}

/// How many examples each diagnostic keeps.
pub const MAX_EXAMPLES: usize = 5;
/// The longest example kept, in bytes (a 10 MB CSV header or event name is not echoed whole).
pub const MAX_EXAMPLE_BYTES: usize = 1000;

/// `s` cut to at most `max` bytes at a character boundary, with a marker saying how long it was.
pub fn cap_text(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… [cut: {} bytes in all]", &s[..end], s.len()))
}

/// One kind of anomaly, aggregated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Diagnostic {
    #[serde(deserialize_with = "crate::static_names::name")]
    pub code: crate::static_names::Name,
    pub severity: Severity,
    pub count: u64,
    pub examples: Vec<String>,
}

/// All diagnostics of a run, keyed by code.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Diagnostics {
    #[serde(deserialize_with = "crate::static_names::name_keys")]
    by_code: BTreeMap<&'static str, Diagnostic>,
}

impl Diagnostics {
    /// Counts one occurrence; the example is kept while fewer than [`MAX_EXAMPLES`] are stored.
    pub fn add(
        &mut self,
        code: &'static str,
        severity: Severity,
        example: impl FnOnce() -> String,
    ) {
        self.add_n(code, severity, 1, example);
    }

    /// Counts `n` occurrences sharing one example.
    pub fn add_n(
        &mut self,
        code: &'static str,
        severity: Severity,
        n: u64,
        example: impl FnOnce() -> String,
    ) {
        if n == 0 {
            return;
        }
        let d = self.by_code.entry(code).or_insert_with(|| Diagnostic {
            code,
            severity,
            count: 0,
            examples: Vec::new(),
        });
        d.count += n;
        d.severity = d.severity.max(severity);
        if d.examples.len() < MAX_EXAMPLES {
            let e = example();
            d.examples.push(match cap_text(&e, MAX_EXAMPLE_BYTES) {
                std::borrow::Cow::Borrowed(_) => e,
                std::borrow::Cow::Owned(c) => c,
            });
        }
    }

    /// Folds another set in (counts add, examples fill up to the cap).
    pub fn merge(&mut self, other: Diagnostics) {
        for (code, d) in other.by_code {
            let mine = self.by_code.entry(code).or_insert_with(|| Diagnostic {
                code,
                severity: d.severity,
                count: 0,
                examples: Vec::new(),
            });
            mine.count += d.count;
            mine.severity = mine.severity.max(d.severity);
            let room = MAX_EXAMPLES.saturating_sub(mine.examples.len());
            mine.examples.extend(d.examples.into_iter().take(room));
        }
    }

    pub fn get(&self, code: &str) -> Option<&Diagnostic> {
        self.by_code.get(code)
    }

    pub fn count(&self, code: &str) -> u64 {
        self.get(code).map_or(0, |d| d.count)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.by_code.values()
    }

    pub fn is_empty(&self) -> bool {
        self.by_code.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_and_examples_are_capped() {
        let mut a = Diagnostics::default();
        for i in 0..7 {
            a.add("x", Severity::Info, || format!("e{i}"));
        }
        let mut b = Diagnostics::default();
        b.add_n("x", Severity::DataLoss, 3, || "b".into());
        a.merge(b);
        let d = a.get("x").unwrap();
        assert_eq!(d.count, 10);
        assert_eq!(d.severity, Severity::DataLoss);
        assert_eq!(d.examples.len(), MAX_EXAMPLES);
    }
}
