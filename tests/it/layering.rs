//! The layering docs/architecture.md states, checked on the source: renderers read the report
//! (never `analysis/`, `model/` or `ingest/`), clap lives only in `cli/`, the exports and the SQL
//! session are sinks over one file's tables (never `ingest/`), and nothing imports `cli`.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `file: line` for every non-comment line of the files under `src/<dir>` that mentions `needle`.
fn uses(dir: &str, needle: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    if dir.is_empty() {
        rust_files(&root, &mut files);
    } else {
        rust_files(&root.join(dir), &mut files);
    }
    let mut hits = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && code.contains(needle) {
                hits.push(format!("{}:{}: {}", f.display(), n + 1, code));
            }
        }
    }
    hits
}

#[test]
fn the_layers_import_what_the_architecture_says() {
    for needle in ["crate::analysis", "crate::model", "crate::ingest"] {
        assert_eq!(uses("render", needle), Vec::<String>::new(), "{needle}");
    }
    // The report contract (the result types) stands alone: analyses import it, never the reverse.
    assert_eq!(
        uses("report/contract", "crate::analysis"),
        Vec::<String>::new()
    );
    for dir in ["export", "query"] {
        assert_eq!(uses(dir, "crate::ingest"), Vec::<String>::new(), "{dir}");
    }
    let clap_outside_cli: Vec<String> = uses("", "clap")
        .into_iter()
        .filter(|h| !h.contains("/src/cli/"))
        .collect();
    assert_eq!(clap_outside_cli, Vec::<String>::new());
    let cli_importers: Vec<String> = uses("", "crate::cli")
        .into_iter()
        .filter(|h| !h.contains("/src/cli/") && !h.contains("/src/main.rs"))
        .collect();
    assert_eq!(cli_importers, Vec::<String>::new());
}
