//! Each file read once however it is named: the same path twice, a folder and a folder inside
//! it, a symbolic link or a hard link to a file already found. Paths are compared by their real
//! path (links resolved), files by device and inode.

use super::detect::Input;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The paths to walk, in the order given, without a path whose real path equals or lies inside
/// one kept before or after it (the outer folder is kept); and what was dropped, as `path: why`.
/// A path that cannot be resolved is kept (discovery reports its error).
pub fn distinct_paths(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let real: Vec<Option<PathBuf>> = paths
        .iter()
        .map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let Some(r) = &real[i] else {
            kept.push(p.clone());
            continue;
        };
        // The same real path given earlier, or a folder given anywhere that holds this one.
        let covered = real.iter().enumerate().find(|(j, o)| {
            o.as_ref().is_some_and(|o| {
                (o == r && *j < i) || (o != r && r.starts_with(o) && paths[*j].is_dir())
            })
        });
        match covered {
            Some((j, _)) => dropped.push(format!(
                "{}: already read as part of {}: read once",
                p.display(),
                paths[j].display()
            )),
            None => kept.push(p.clone()),
        }
    }
    (kept, dropped)
}

/// (device, inode) of a file, None when it cannot be examined.
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The inputs without one whose file (or any of its parts) is a file an earlier input reads,
/// by device and inode (a symbolic link and a hard link are the same file); and what was
/// dropped, as `path: why`.
pub fn distinct_inputs(inputs: Vec<Input>) -> (Vec<Input>, Vec<String>) {
    let mut seen: Vec<((u64, u64), String)> = Vec::new();
    let mut ids: HashSet<(u64, u64)> = HashSet::new();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for input in inputs {
        let files: Vec<(u64, u64)> = std::iter::once(&input.path)
            .chain(&input.parts)
            .filter_map(|p| file_id(Path::new(p)))
            .collect();
        if let Some(id) = files.iter().find(|id| ids.contains(id)) {
            let first = seen.iter().find(|(s, _)| s == id).map(|(_, p)| p.as_str());
            dropped.push(format!(
                "{}: the same file as {} (a link or the same path twice): read once",
                input.path,
                first.unwrap_or("another input")
            ));
            continue;
        }
        for id in files {
            ids.insert(id);
            seen.push((id, input.path.clone()));
        }
        kept.push(input);
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(p: &Path) -> Input {
        Input {
            path: p.display().to_string(),
            format: super::super::detect::InputFormat::ChromeJson,
            size_bytes: 0,
            alternates: vec![],
            parts: vec![],
        }
    }

    #[test]
    fn links_and_repeated_paths_are_read_once() {
        let dir = std::env::temp_dir().join(format!("profscope-once-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let a = dir.join("sub/a.json");
        std::fs::write(&a, "[]").unwrap();
        std::fs::write(dir.join("b.json"), "[]").unwrap();
        std::os::unix::fs::symlink(&a, dir.join("sym.json")).unwrap();
        std::fs::hard_link(&a, dir.join("hard.json")).unwrap();
        // Paths: the folder, itself again, its sub-folder, and a file inside it: one kept.
        let (kept, dropped) = distinct_paths(&[
            dir.join("sub"),
            dir.clone(),
            dir.join("."),
            dir.join("sub/a.json"),
        ]);
        assert_eq!(kept, vec![dir.clone()]);
        assert_eq!(dropped.len(), 3, "{dropped:?}");
        // Inputs: a, its symlink and hard link, b: two kept.
        let (kept, dropped) = distinct_inputs(vec![
            input(&a),
            input(&dir.join("sym.json")),
            input(&dir.join("b.json")),
            input(&dir.join("hard.json")),
        ]);
        let kept: Vec<String> = kept.into_iter().map(|i| i.path).collect();
        assert_eq!(
            kept,
            vec![
                a.display().to_string(),
                dir.join("b.json").display().to_string()
            ]
        );
        assert_eq!(dropped.len(), 2);
        assert!(dropped[0].contains("sym.json"), "{dropped:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
