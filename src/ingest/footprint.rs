//! Every file and folder a set of input paths can be read from, so that nothing written (a
//! saved report, an HTML page, an export, a cache entry, a collected file) lands on an input:
//! files are known by device and inode (a hard link is the same file) and by real path (a
//! symbolic link is resolved), folders by real path.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Folders nested deeper than this are not looked into (as the input walk).
const MAX_DEPTH: usize = 64;
/// Entries looked at in all; a larger tree is still guarded by its folders' real paths.
const MAX_ENTRIES: usize = 1_000_000;

/// The files and folders under some input paths, walked on first use and once however many
/// outputs a command checks.
#[derive(Debug)]
pub struct Footprint {
    paths: Vec<PathBuf>,
    walked: std::sync::OnceLock<Walked>,
}

/// What the walk found.
#[derive(Debug, Default)]
struct Walked {
    files: HashSet<(u64, u64)>,
    file_paths: Vec<PathBuf>,
    folders: Vec<PathBuf>,
    entries: usize,
}

/// `p` as it would resolve once written: the longest existing ancestor with its links resolved,
/// then the rest of the path (so `link/new/file`, with `link` pointing into an input, resolves
/// into that input).
pub fn resolve_for_writing(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let comps: Vec<Component> = abs.components().collect();
    for cut in (1..=comps.len()).rev() {
        let head: PathBuf = comps[..cut].iter().collect();
        let Ok(mut out) = std::fs::canonicalize(&head) else {
            continue;
        };
        for c in &comps[cut..] {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                c => out.push(c.as_os_str()),
            }
        }
        return out;
    }
    abs
}

impl Footprint {
    /// Everything under `paths` (files as given, folders walked with links followed).
    pub fn of(paths: &[PathBuf]) -> Footprint {
        Footprint {
            paths: paths.to_vec(),
            walked: std::sync::OnceLock::new(),
        }
    }

    fn walked(&self) -> &Walked {
        self.walked.get_or_init(|| {
            let mut w = Walked::default();
            let mut seen = HashSet::new();
            for p in &self.paths {
                w.add(p, None, 0, &mut seen);
            }
            w
        })
    }

    /// Why writing `out` (a file, or a folder written into) would touch an input, if it would:
    /// it is an input file (same inode, or same real path), it holds one, or it lies inside an
    /// input folder and `inside_folders_too`.
    pub fn clash(&self, out: &Path, inside_folders_too: bool) -> Option<String> {
        let w = self.walked();
        let real = resolve_for_writing(out);
        if let Some(f) = w.file_paths.iter().find(|f| **f == real) {
            return Some(format!(
                "{} is the input file {}",
                out.display(),
                f.display()
            ));
        }
        if let Ok(m) = std::fs::metadata(out)
            && w.files.contains(&(m.dev(), m.ino()))
        {
            return Some(format!(
                "{} is an input file (or a link to one)",
                out.display()
            ));
        }
        let holds = w
            .file_paths
            .iter()
            .chain(&w.folders)
            .find(|f| f.starts_with(&real));
        if let Some(f) = holds {
            return Some(format!("{} holds the input {}", out.display(), f.display()));
        }
        if inside_folders_too && let Some(d) = w.folders.iter().find(|d| real.starts_with(d)) {
            return Some(format!(
                "{} is inside the input folder {}",
                out.display(),
                d.display()
            ));
        }
        None
    }
}

impl Walked {
    /// Adds `p`; `real` is its real path when the caller knows it (an entry that is not a link,
    /// inside a folder whose real path is known: no `realpath` per file).
    fn add(&mut self, p: &Path, real: Option<PathBuf>, depth: usize, seen: &mut HashSet<PathBuf>) {
        self.entries += 1;
        if self.entries > MAX_ENTRIES || depth > MAX_DEPTH {
            return;
        }
        let Ok(meta) = std::fs::metadata(p) else {
            return;
        };
        let Some(real) = real.or_else(|| std::fs::canonicalize(p).ok()) else {
            return;
        };
        if meta.is_dir() {
            if !seen.insert(real.clone()) {
                return;
            }
            self.folders.push(real.clone());
            let Ok(rd) = std::fs::read_dir(p) else { return };
            for e in rd.flatten() {
                let link = e.file_type().is_ok_and(|t| t.is_symlink());
                let known = (!link).then(|| real.join(e.file_name()));
                self.add(&e.path(), known, depth + 1, seen);
            }
        } else {
            self.files.insert((meta.dev(), meta.ino()));
            self.file_paths.push(real);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_on_inputs_are_found_however_named() {
        let dir = std::env::temp_dir().join(format!("profscope-footprint-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root/rank0")).unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        let csv = dir.join("root/rank0/step_trace_time.csv");
        std::fs::write(&csv, "Step\n").unwrap();
        std::fs::hard_link(&csv, dir.join("out/hard.csv")).unwrap();
        std::os::unix::fs::symlink(dir.join("root"), dir.join("out/link")).unwrap();
        let fp = Footprint::of(&[dir.join("root")]);
        // The file itself, through a symlinked folder, a hard link, the folder holding it.
        assert!(fp.clash(&csv, false).unwrap().contains("is the input file"));
        assert!(
            fp.clash(&dir.join("out/link/rank0/step_trace_time.csv"), false)
                .is_some()
        );
        assert!(
            fp.clash(&dir.join("out/hard.csv"), false)
                .unwrap()
                .contains("link to one")
        );
        assert!(
            fp.clash(&dir.join("root"), false)
                .unwrap()
                .contains("holds")
        );
        // A new file inside the input: only where folders count (a cache folder).
        assert!(fp.clash(&dir.join("out/link/new/c"), false).is_none());
        assert!(
            fp.clash(&dir.join("out/link/new/c"), true)
                .unwrap()
                .contains("inside")
        );
        // Elsewhere: nothing.
        assert!(fp.clash(&dir.join("out/report.json"), true).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paths_resolve_through_links_before_they_exist() {
        let dir = std::env::temp_dir().join(format!("profscope-resolve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        let real = std::fs::canonicalize(dir.join("real")).unwrap();
        assert_eq!(resolve_for_writing(&dir.join("link/a/b")), real.join("a/b"));
        assert_eq!(
            resolve_for_writing(&dir.join("link/a/../c")),
            real.join("c")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
