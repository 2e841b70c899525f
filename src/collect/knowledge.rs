//! Known-failure signatures (`--knowledge DIR`): JSON files under DIR, each one entry or an
//! array of entries `{"id", "symptom", "resolution", "gates": [..]?}`. On a failed gate, entries
//! are scored against the failure (the share of the symptom's words found in the error message,
//! plus 0.5 when one of the entry's gates failed) and the best ones (score ≥ 0.3, at most 3) are
//! attached to `error.knowledge_matches`.

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    pub id: String,
    pub symptom: String,
    pub resolution: String,
    #[serde(default)]
    pub gates: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct KnowledgeMatch {
    pub id: String,
    pub score: f64,
    pub symptom: String,
    pub resolution: String,
    pub file: String,
}

/// Every entry of every `*.json` under `dir` (not recursive), with its file; unreadable files
/// are returned as errors beside the entries.
pub fn load(dir: &Path) -> (Vec<(Entry, String)>, Vec<String>) {
    let (mut out, mut errors) = (Vec::new(), Vec::new());
    let Ok(rd) = std::fs::read_dir(dir) else {
        errors.push(format!("{}: not a readable folder", dir.display()));
        return (out, errors);
    };
    let mut files: Vec<_> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let parsed: Result<Vec<Entry>, _> = serde_json::from_str::<Vec<Entry>>(&text)
            .or_else(|_| serde_json::from_str::<Entry>(&text).map(|e| vec![e]));
        match parsed {
            Ok(v) => out.extend(v.into_iter().map(|e| (e, f.display().to_string()))),
            Err(e) => errors.push(format!("{}: {e}", f.display())),
        }
    }
    (out, errors)
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 3)
        .map(|w| w.to_lowercase())
        .collect()
}

pub fn best(entries: &[(Entry, String)], message: &str, gates: &[String]) -> Vec<KnowledgeMatch> {
    let have: std::collections::HashSet<String> = words(message)
        .into_iter()
        .chain(gates.iter().map(|g| g.to_lowercase()))
        .collect();
    let mut scored: Vec<KnowledgeMatch> = entries
        .iter()
        .filter_map(|(e, file)| {
            let w = words(&e.symptom);
            let text = if w.is_empty() {
                0.0
            } else {
                w.iter().filter(|x| have.contains(*x)).count() as f64 / w.len() as f64
            };
            let gate = if e.gates.iter().any(|g| gates.contains(g)) {
                0.5
            } else {
                0.0
            };
            let score = ((text + gate) * 1000.0).round() / 1000.0;
            (score >= 0.3).then(|| KnowledgeMatch {
                id: e.id.clone(),
                score,
                symptom: e.symptom.clone(),
                resolution: e.resolution.clone(),
                file: file.clone(),
            })
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    scored.truncate(3);
    scored
}
