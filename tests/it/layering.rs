//! The layering docs/architecture.md states, checked on the source: renderers read the report
//! (never `analysis/`, `model/` or `ingest/`), clap lives only in `cli/`, the exports and the SQL
//! session are sinks over one file's tables (never `ingest/`), and nothing imports `cli`.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir` (also read by docs.rs).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
    assert_eq!(uses("contract", "crate::analysis"), Vec::<String>::new());
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

/// The sibling modules of `dir` (files without `.rs`, and folders), with every source file of
/// each (a folder: its whole subtree).
fn siblings(dir: &Path) -> Vec<(String, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            let mut files = Vec::new();
            rust_files(&p, &mut files);
            out.push((name, files));
        } else if p.extension().is_some_and(|x| x == "rs") && name != "mod" && name != "lib" {
            out.push((name, vec![p]));
        }
    }
    out.sort();
    out
}

/// Issue 47: no two modules import each other, directly or in a circle. Checked among the
/// sibling modules of src/ itself (the layers: an edge A → B when a non-comment line under A
/// names `crate::B`) and of every folder under it (an edge A → B when a non-comment line of A
/// names `super::B` from A's own file, or `crate::<folder>::B`).
#[test]
fn no_import_circles_among_sibling_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![root.clone()];
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
                dirs.push(e.path());
            }
        }
    }
    let mut circles = Vec::new();
    for dir in dirs {
        let rel = dir
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let mods = siblings(&dir);
        let names: Vec<&str> = mods.iter().map(|m| m.0.as_str()).collect();
        let mut edges = vec![Vec::new(); mods.len()];
        for (a, (_, files)) in mods.iter().enumerate() {
            for f in files {
                // `super::` from a file directly in `dir` names a sibling; deeper files reach
                // siblings through `crate::<dir>::`.
                let direct = f.parent() == Some(dir.as_path());
                for line in std::fs::read_to_string(f).unwrap().lines() {
                    let code = line.trim_start();
                    // Unit tests may reach across (they are not the module's imports).
                    if code.starts_with("#[cfg(test)]") {
                        break;
                    }
                    if code.starts_with("//") {
                        continue;
                    }
                    for (b, name) in names.iter().enumerate() {
                        let via_super = direct
                            && (code.contains(&format!("super::{name}::"))
                                || code.contains(&format!("super::{name};"))
                                || code.contains(&format!("super::{name},")));
                        let via_crate = if rel.is_empty() {
                            [":", ";", ",", "}"]
                                .iter()
                                .any(|end| code.contains(&format!("crate::{name}{end}")))
                        } else {
                            code.contains(&format!("crate::{rel}::{name}::"))
                        };
                        if a != b && (via_super || via_crate) && !edges[a].contains(&b) {
                            edges[a].push(b);
                        }
                    }
                }
            }
        }
        // A circle: b reaches a while a → b.
        for a in 0..mods.len() {
            for &b in &edges[a] {
                let mut seen = vec![false; mods.len()];
                let mut todo = vec![b];
                while let Some(x) = todo.pop() {
                    if x == a {
                        circles.push(format!("src/{rel}: {} <-> {}", names[a], names[b]));
                        break;
                    }
                    if !std::mem::replace(&mut seen[x], true) {
                        todo.extend(&edges[x]);
                    }
                }
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}
