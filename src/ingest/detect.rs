//! Which files under a path are inputs, and in which format: Chrome-trace JSON (`*.json`,
//! `*.json.gz`) recognised by content (the first non-blank byte is `[`, or `{` with a `traceEvents`
//! member) so that `profiler_info.json` and friends are skipped, not failed; profiler dbs by
//! name (`ascend_pytorch_profiler[_<rank>].db`, `msprof_<digits>.db`); kernel CSVs by name
//! (`kernel_details.csv`, `op_summary_*.csv`). Per torch_npu rank folder
//! only the best export is read ([`best_per_rank`]): an `export_type=both` run, or a rank folder
//! that still holds `PROF_*/mindstudio_profiler_output/msprof_*.json`, describes one capture
//! several times. When several rank folders hold the same rank, the newest capture is read
//! ([`newest_per_rank`]).

use super::error::IngestError;
use crate::model::closed_set::closed_set;
use std::io::Read;
use std::path::Path;

closed_set! {
    pub enum InputFormat {
        ChromeJson = "chrome_json",
        /// `ascend_pytorch_profiler[_<rank>].db` or `msprof_<digits>.db`.
        AscendDb = "ascend_db",
        /// `kernel_details.csv`, `op_summary_*.csv`: read when a capture has nothing better.
        KernelCsv = "kernel_csv",
        /// The vendor's summaries of a rank folder with no timeline, db or kernel CSV
        /// (`analysis.db`, `step_trace_time.csv`, `communication.json`): read as a rank with no
        /// events ([`SUMMARY_FILES`]).
        VendorSummary = "vendor_summary",
    }
}

/// The vendor summaries that make a rank folder a summary-only rank when nothing better is
/// there, best first (the input's path; the reader reads them all).
pub const SUMMARY_FILES: [&str; 3] = ["analysis.db", "step_trace_time.csv", "communication.json"];

/// Whether `p` is one of [`SUMMARY_FILES`] inside an `ASCEND_PROFILER_OUTPUT/` folder.
fn is_summary(p: &Path) -> bool {
    let name = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
    SUMMARY_FILES.contains(&name)
        && p.parent()
            .and_then(|d| d.file_name())
            .is_some_and(|d| d == "ASCEND_PROFILER_OUTPUT")
}

/// A torch_npu or msprof profiler db by its file name (`analysis.db` is vendor-derived, not read yet).
fn is_profiler_db(name: &str) -> bool {
    let Some(file) = std::path::Path::new(name)
        .file_name()
        .and_then(|f| f.to_str())
    else {
        return false;
    };
    let Some(stem) = file.strip_suffix(".db") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    stem == "ascend_pytorch_profiler"
        || stem
            .strip_prefix("ascend_pytorch_profiler_")
            .is_some_and(digits)
        || stem.strip_prefix("msprof_").is_some_and(digits)
}

#[derive(Debug, Clone)]
pub struct Input {
    pub path: String,
    pub format: InputFormat,
    pub size_bytes: u64,
    /// Other exports of the same capture, best first, read instead if this one cannot be read
    /// at all (a damaged db beside a readable trace_view.json).
    pub alternates: Vec<Input>,
    /// More files of the same capture read after `path` into the same tables, as one file:
    /// CANN timelines written in pieces (`msprof_<dev>_<model>_<iteration>.json` per iteration in
    /// legacy roots, `msprof_*_slice_<n>.json` slices), in natural name order.
    pub parts: Vec<String>,
}

fn is_json_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// True if the start of the file looks like a Chrome trace (array, or object naming traceEvents
/// in its first 64 KiB, which is where every writer puts it or the small header before it); an
/// error if the file cannot be opened.
pub fn looks_like_chrome_trace(path: &Path) -> std::io::Result<bool> {
    let file = super::source::open_regular(path, u64::MAX)?;
    let mut head = Vec::with_capacity(65536);
    let name = path.to_string_lossy();
    let read = if name.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(file)
            .take(65536)
            .read_to_end(&mut head)
    } else {
        file.take(65536).read_to_end(&mut head)
    };
    if let Err(e) = read
        && head.is_empty()
    {
        return if name.ends_with(".gz") {
            Ok(false)
        } else {
            Err(e)
        };
    }
    let first = head
        .iter()
        .copied()
        .find(|c| !c.is_ascii_whitespace() && *c != 0xEF && *c != 0xBB && *c != 0xBF);
    Ok(match first {
        Some(b'[') => array_of_events(&head),
        Some(b'{') => memchr::memmem::find(&head, b"\"traceEvents\"").is_some(),
        _ => false,
    })
}

/// A JSON array is a trace when its first item is an object and an event key (`"ph"`) appears in
/// the head, or when it is empty or cut right after `[` (a rank that died at once): a pip
/// package's `issue.json` list or a list of numbers is not.
fn array_of_events(head: &[u8]) -> bool {
    let Some(open) = head.iter().position(|&c| c == b'[') else {
        return false;
    };
    match head[open + 1..].iter().find(|c| !c.is_ascii_whitespace()) {
        None | Some(b']') => true,
        Some(b'{') => memchr::memmem::find(head, b"\"ph\"").is_some(),
        Some(_) => false,
    }
}

/// Every input under `path` (a file is taken as given; a folder is walked, sorted by path), and
/// what the walk could not look into (unreadable folders, dangling links, names that are not
/// UTF-8), each as `path: why`.
pub fn find_inputs(path: &Path) -> Result<(Vec<Input>, Vec<String>), IngestError> {
    let io = |e: std::io::Error| IngestError::Io {
        path: path.display().to_string(),
        source: e,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(IngestError::NotRegular {
            path: path.display().to_string(),
        });
    }
    if meta.is_file() {
        let Some(name) = path.to_str().map(str::to_string) else {
            return Err(IngestError::NotUtf8 {
                path: path.display().to_string(),
            });
        };
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
        let format = if is_profiler_db(&name) {
            InputFormat::AscendDb
        } else if is_json_name(&name) {
            InputFormat::ChromeJson
        } else if super::msprof_csv::is_kernel_csv(file) {
            InputFormat::KernelCsv
        } else {
            return Err(IngestError::Unsupported { path: name });
        };
        return Ok((
            vec![Input {
                path: name,
                format,
                size_bytes: meta.len(),
                alternates: Vec::new(),
                parts: Vec::new(),
            }],
            Vec::new(),
        ));
    }
    let mut w = Walk::default();
    w.dir(path, 0).map_err(io)?;
    w.out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((w.out, w.problems))
}

/// An input left out because the same rank has a better export of the same capture, or because
/// it belongs to another capture of the same ranks.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub path: String,
    /// The inputs kept for that rank folder.
    pub kept: Vec<String>,
    /// When the whole capture was left out: (its root, the root read instead).
    pub other_capture: Option<(String, String)>,
}

/// How good an export is, per torch_npu rank folder (lower is better): the profiler db, then
/// trace_view.json, then CANN's own msprof db, then CANN's merged timelines (`msprof_*.json`),
/// then other timelines (the legacy per-kind subsets `task_time_*`, `hccl_*`, `step_trace_*`,
/// which repeat events of `msprof_*`). All of them describe the same capture, so reading two would
/// count every event twice.
fn preference(path: &str, format: InputFormat) -> u8 {
    let p = Path::new(path);
    let file = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
    let in_output = p
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|d| d == "ASCEND_PROFILER_OUTPUT");
    match format {
        InputFormat::AscendDb if file.starts_with("ascend_pytorch_profiler") => 0,
        InputFormat::ChromeJson if in_output && file.starts_with("trace_view.json") => 1,
        InputFormat::AscendDb => 2,
        InputFormat::ChromeJson if file.starts_with("msprof") => 3,
        InputFormat::ChromeJson => 4,
        InputFormat::KernelCsv if file.starts_with("kernel_details") => 5,
        InputFormat::KernelCsv => 6,
        InputFormat::VendorSummary => {
            7 + SUMMARY_FILES.iter().position(|s| *s == file).unwrap_or(3) as u8
        }
    }
}

/// The capture folder of an input: the outermost ancestor (up to `root`) that is a torch_npu rank
/// folder (holds `ASCEND_PROFILER_OUTPUT/` or is named `*_ascend_pt`) or a CANN msprof folder
/// (`PROF_*`). Outermost, because a torch_npu rank folder holds its `PROF_*` folder, and both
/// describe one capture.
fn rank_folder(path: &str, root: &Path) -> Option<std::path::PathBuf> {
    let mut found = None;
    let mut dir = Path::new(path).parent();
    while let Some(d) = dir {
        let name = d.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if d.join("ASCEND_PROFILER_OUTPUT").is_dir()
            || is_rank_folder_name(d)
            || name.starts_with("PROF_")
        {
            found = Some(d.to_path_buf());
        }
        if d == root {
            break;
        }
        dir = d.parent();
    }
    found
}

/// Whether `dir` is named as a torch_npu rank folder (`*_ascend_pt`).
pub fn is_rank_folder_name(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with("_ascend_pt"))
}

/// Every torch_npu rank folder (`*_ascend_pt`) under `root` (or `root` itself when it is one),
/// sorted; rank folders are not looked into. Links are followed as the input walk follows them:
/// a folder reached twice is walked once, and nothing deeper than [`MAX_DEPTH`]. The finder
/// `collect verify` uses, so it checks the folders `analyze` would read.
pub fn rank_folders(root: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    fn walk(
        d: &Path,
        out: &mut Vec<std::path::PathBuf>,
        seen: &mut std::collections::HashSet<std::path::PathBuf>,
        depth: usize,
    ) -> std::io::Result<()> {
        if depth > MAX_DEPTH || !seen.insert(std::fs::canonicalize(d)?) {
            return Ok(());
        }
        for e in std::fs::read_dir(d)? {
            let p = e?.path();
            if !p.is_dir() {
                continue;
            }
            if is_rank_folder_name(&p) {
                out.push(p);
            } else {
                walk(&p, out, seen, depth + 1)?;
            }
        }
        Ok(())
    }
    if is_rank_folder_name(root) {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut out = Vec::new();
    walk(root, &mut out, &mut Default::default(), 0)?;
    out.sort();
    Ok(out)
}

/// The capture time of a torch_npu rank folder, from its name
/// `{worker}_{pid}_{YYYYmmddHHMMSSfff}_ascend_pt` (17 digits), else the folder's mtime in ms.
fn folder_time(dir: &Path) -> (u8, u128) {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stamp = name
        .strip_suffix("_ascend_pt")
        .and_then(|s| s.rsplit('_').next())
        .filter(|d| d.len() == 17 && d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|d| d.parse::<u128>().ok());
    match stamp {
        Some(t) => (1, t),
        None => (
            0,
            std::fs::metadata(dir)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis()),
        ),
    }
}

type Folder = Option<std::path::PathBuf>;

/// The inputs to read under `root`: per rank, the newest capture ([`newest_per_rank`]), and in
/// it the best export ([`best_per_rank`]). Rank folders are looked up once per input.
pub fn select(inputs: Vec<Input>, root: &Path) -> (Vec<Input>, Vec<Skipped>) {
    let tagged = tag_folders(inputs, root);
    let (tagged, mut skipped) = newest(tagged);
    quiet_summaries(&mut skipped);
    let (tagged, summaries) = summary_only(tagged);
    let (mut kept, more) = best(tagged);
    skipped.extend(more);
    kept.extend(summaries);
    kept.sort_by(|a, b| a.path.cmp(&b.path));
    (join_parts(kept, root), skipped)
}

/// Keeps one skipped entry per rank folder for its summaries, and none when the folder's exports
/// were skipped too (they name the capture read instead).
fn quiet_summaries(skipped: &mut Vec<Skipped>) {
    let folder = |s: &Skipped| {
        Path::new(&s.path)
            .ancestors()
            .find(|d| d.file_name().is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT"))
            .map(Path::to_path_buf)
    };
    let mut named: std::collections::BTreeSet<std::path::PathBuf> = skipped
        .iter()
        .filter(|s| !is_summary(Path::new(&s.path)))
        .filter_map(folder)
        .collect();
    skipped
        .retain(|s| !is_summary(Path::new(&s.path)) || folder(s).is_some_and(|f| named.insert(f)));
}

/// Splits off the vendor summaries: a rank folder with an export keeps none (its reader reads
/// them beside it); a rank folder with summaries only becomes one [`InputFormat::VendorSummary`]
/// input, the best of [`SUMMARY_FILES`] present; summaries outside a rank folder are dropped.
fn summary_only(inputs: Vec<(Input, Folder)>) -> (Vec<(Input, Folder)>, Vec<Input>) {
    use std::collections::BTreeMap;
    let (summaries, exports): (Vec<_>, Vec<_>) = inputs
        .into_iter()
        .partition(|(i, _)| i.format == InputFormat::VendorSummary);
    let has_export: std::collections::BTreeSet<&std::path::PathBuf> =
        exports.iter().filter_map(|(_, f)| f.as_ref()).collect();
    let mut best: BTreeMap<std::path::PathBuf, Input> = BTreeMap::new();
    for (i, f) in summaries {
        let Some(f) = f.filter(|f| !has_export.contains(f)) else {
            continue;
        };
        let p = preference(&i.path, i.format);
        if best
            .get(&f)
            .is_none_or(|b| p < preference(&b.path, b.format))
        {
            best.insert(f, i);
        }
    }
    (exports, best.into_values().collect())
}

/// Joins the CANN timelines that one capture folder wrote in pieces (same folder, both named
/// `msprof*`: per-iteration files of legacy roots, slices of newer ones) into one input whose
/// `parts` follow its `path`, in natural name order (`_2` before `_10`).
pub fn join_parts(inputs: Vec<Input>, root: &Path) -> Vec<Input> {
    use std::collections::BTreeMap;
    let piece = |i: &Input| {
        let p = Path::new(&i.path);
        let named = p
            .file_name()
            .and_then(|f| f.to_str())
            .is_some_and(|f| f.starts_with("msprof") && is_json_name(f));
        (i.format == InputFormat::ChromeJson && named && rank_folder(&i.path, root).is_some())
            .then(|| p.parent().map(Path::to_path_buf))
            .flatten()
    };
    let mut groups: BTreeMap<std::path::PathBuf, Vec<Input>> = BTreeMap::new();
    let mut out: Vec<Option<Input>> = Vec::new();
    let mut slot: BTreeMap<std::path::PathBuf, usize> = BTreeMap::new();
    for i in inputs {
        match piece(&i) {
            Some(dir) => {
                slot.entry(dir.clone()).or_insert_with(|| {
                    out.push(None);
                    out.len() - 1
                });
                groups.entry(dir).or_default().push(i);
            }
            None => out.push(Some(i)),
        }
    }
    for (dir, mut g) in groups {
        g.sort_by(|a, b| natural_cmp(&a.path, &b.path));
        let mut first = g.remove(0);
        for p in g {
            first.size_bytes += p.size_bytes;
            first.parts.push(p.path);
        }
        out[slot[&dir]] = Some(first);
    }
    out.into_iter().flatten().collect()
}

/// Compares names with digit runs as numbers (`x_2` < `x_10`).
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (&a[..da], &b[..db]);
                let strip = |n: &[u8]| -> usize { n.iter().take_while(|&&c| c == b'0').count() };
                let (na, nb) = (&na[strip(na)..], &nb[strip(nb)..]);
                let o = na.len().cmp(&nb.len()).then(na.cmp(nb));
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
                a = &a[da..];
                b = &b[db..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

/// When several torch_npu rank folders hold the same rank (`profiler_info_<rank>.json`), keeps
/// the newest capture (timestamp in the folder name, else mtime) and skips the others' inputs.
pub fn newest_per_rank(inputs: Vec<Input>, root: &Path) -> (Vec<Input>, Vec<Skipped>) {
    let (kept, skipped) = newest(tag_folders(inputs, root));
    (kept.into_iter().map(|(i, _)| i).collect(), skipped)
}

/// Keeps, per torch_npu rank folder, only the best export present (see [`preference`]);
/// inputs outside rank folders are all kept. Returns (kept, skipped), in path order.
pub fn best_per_rank(inputs: Vec<Input>, root: &Path) -> (Vec<Input>, Vec<Skipped>) {
    best(tag_folders(inputs, root))
}

fn tag_folders(inputs: Vec<Input>, root: &Path) -> Vec<(Input, Folder)> {
    inputs
        .into_iter()
        .map(|i| {
            let f = rank_folder(&i.path, root);
            (i, f)
        })
        .collect()
}

/// Per rank, one capture. Rank folders are grouped by the folder holding them (a capture root:
/// `level1/` of `level1/rank0_ascend_pt`); roots are taken newest first (their newest rank
/// folder's time), and a root whose ranks overlap a root already taken is another capture of the
/// same job and is left out whole, so two sessions are never mixed rank by rank (roots with
/// disjoint ranks, such as one per node, are all read). Inside a root, a rank written twice keeps
/// its newest folder.
fn newest(inputs: Vec<(Input, Folder)>) -> (Vec<(Input, Folder)>, Vec<Skipped>) {
    use std::collections::{BTreeMap, BTreeSet};
    type PathBuf = std::path::PathBuf;
    type Stamp = (u8, u128);
    type Root = (BTreeSet<i32>, Stamp);
    let mut rank_of: BTreeMap<PathBuf, (i32, Stamp)> = BTreeMap::new();
    for f in inputs.iter().filter_map(|(_, f)| f.as_ref()) {
        if rank_of.contains_key(f) {
            continue;
        }
        if let Some(r) = super::rank::profiler_info_rank(f) {
            rank_of.insert(f.clone(), (r, folder_time(f)));
        }
    }
    let root_of = |f: &Path| f.parent().map(Path::to_path_buf).unwrap_or_default();
    // Per capture root: its ranks and its newest folder time.
    let mut roots: BTreeMap<PathBuf, Root> = BTreeMap::new();
    for (f, (r, t)) in &rank_of {
        let e = roots.entry(root_of(f)).or_default();
        e.0.insert(*r);
        e.1 = e.1.max(*t);
    }
    let mut order: Vec<(&PathBuf, &Root)> = roots.iter().collect();
    order.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
    // Left-out root → the taken root it overlaps.
    let mut instead: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
    let mut taken_roots: Vec<&PathBuf> = Vec::new();
    for (root, (ranks, _)) in &order {
        match taken_roots
            .iter()
            .find(|t| !roots[**t].0.is_disjoint(ranks))
        {
            Some(t) => {
                instead.insert(root, t);
            }
            None => taken_roots.push(root),
        }
    }
    // Inside a taken root: the newest folder per rank.
    let mut newest: BTreeMap<(PathBuf, i32), (PathBuf, Stamp)> = BTreeMap::new();
    for (f, (r, t)) in &rank_of {
        let key = (root_of(f), *r);
        if newest.get(&key).is_none_or(|(_, best)| *best < *t) {
            newest.insert(key, (f.clone(), *t));
        }
    }
    let mut kept = Vec::new();
    let mut skipped = Vec::new();
    for (i, f) in inputs {
        let Some((folder, (r, _))) = f.as_ref().and_then(|f| rank_of.get_key_value(f)) else {
            kept.push((i, f));
            continue;
        };
        let root = root_of(folder);
        if let Some(t) = instead.get(&root) {
            skipped.push(Skipped {
                path: i.path,
                kept: vec![format!(
                    "{} (the newest capture of the same ranks)",
                    t.display()
                )],
                other_capture: Some((root.display().to_string(), t.display().to_string())),
            });
            continue;
        }
        let w = &newest[&(root, *r)].0;
        if w != folder {
            skipped.push(Skipped {
                path: i.path,
                kept: vec![format!("{} (newer capture of the same rank)", w.display())],
                other_capture: None,
            });
        } else {
            kept.push((i, f));
        }
    }
    (kept, skipped)
}

fn best(inputs: Vec<(Input, Folder)>) -> (Vec<Input>, Vec<Skipped>) {
    use std::collections::BTreeMap;
    let pref = |i: &Input| preference(&i.path, i.format);
    let mut best: BTreeMap<&std::path::PathBuf, u8> = BTreeMap::new();
    for (i, f) in &inputs {
        if let Some(f) = f {
            let p = pref(i);
            best.entry(f).and_modify(|b| *b = (*b).min(p)).or_insert(p);
        }
    }
    let mut keep: Vec<bool> = inputs
        .iter()
        .map(|(i, f)| f.as_ref().is_none_or(|f| best[f] == pref(i)))
        .collect();
    one_profiler_db_per_folder(&inputs, &mut keep);
    // What each rank folder keeps, named in the skipped entries.
    let mut kept_in: BTreeMap<&std::path::PathBuf, Vec<String>> = BTreeMap::new();
    for ((i, f), &k) in inputs.iter().zip(&keep) {
        if let (Some(f), true) = (f, k) {
            kept_in.entry(f).or_default().push(i.path.clone());
        }
    }
    let skipped = inputs
        .iter()
        .zip(&keep)
        .filter(|(_, k)| !**k)
        .map(|((i, f), _)| Skipped {
            path: i.path.clone(),
            kept: f
                .as_ref()
                .and_then(|f| kept_in.get(f))
                .cloned()
                .unwrap_or_default(),
            other_capture: None,
        })
        .collect();
    // Fallbacks: when a folder keeps one input, the single-file levels it skipped, best first.
    let mut alternates: BTreeMap<&std::path::PathBuf, Vec<(u8, Input)>> = BTreeMap::new();
    for ((i, f), &k) in inputs.iter().zip(&keep) {
        if let (Some(f), false) = (f, k) {
            let p = pref(i);
            let same_level = inputs
                .iter()
                .filter(|(j, g)| g.as_ref() == Some(f) && pref(j) == p)
                .count();
            if same_level == 1 && kept_in.get(f).is_some_and(|v| v.len() == 1) {
                alternates.entry(f).or_default().push((p, i.clone()));
            }
        }
    }
    let kept = inputs
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|((i, f), _)| {
            let mut i = i.clone();
            if let Some(alt) = f.as_ref().and_then(|f| alternates.get(f)) {
                let mut alt = alt.clone();
                alt.sort_by_key(|a| a.0);
                i.alternates = alt.into_iter().map(|a| a.1).collect();
            }
            i
        })
        .collect();
    (kept, skipped)
}

/// The profiler db of a torch_npu rank folder that is read when it holds several (a re-export or a
/// copy beside the original): the newest by modification time, then by path. Each db is a whole
/// capture, so reading two would count every event twice. `collect verify` checks this one.
pub fn newest_of(dbs: &[&Path]) -> Option<usize> {
    let mtimes: Vec<std::time::SystemTime> = dbs
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH)
        })
        .collect();
    (0..dbs.len()).max_by_key(|&k| (mtimes[k], dbs[k]))
}

/// Keeps one `ascend_pytorch_profiler*.db` per capture folder ([`newest_of`]); the others become
/// skipped inputs.
fn one_profiler_db_per_folder(inputs: &[(Input, Folder)], keep: &mut [bool]) {
    use std::collections::BTreeMap;
    let mut dbs: BTreeMap<&std::path::PathBuf, Vec<usize>> = BTreeMap::new();
    for (k, (i, f)) in inputs.iter().enumerate() {
        if let Some(f) = f
            && keep[k]
            && preference(&i.path, i.format) == 0
        {
            dbs.entry(f).or_default().push(k);
        }
    }
    for group in dbs.values().filter(|g| g.len() > 1) {
        let paths: Vec<&Path> = group
            .iter()
            .map(|&k| Path::new(&inputs[k].0.path))
            .collect();
        let newest = newest_of(&paths).map(|n| group[n]);
        for &k in group {
            keep[k] = Some(k) == newest;
        }
    }
}

/// A name that could be an input (`.db`, `.json`, `.json.gz`, `.csv`).
fn looks_like_input_name(p: &Path) -> bool {
    p.file_name().map(|f| f.to_string_lossy()).is_some_and(|f| {
        f.ends_with(".db") || f.ends_with(".json") || f.ends_with(".json.gz") || f.ends_with(".csv")
    })
}

/// What kind of file that is not regular `meta` describes, in words.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// Folders nested deeper than this are not walked (a bound for link farms).
const MAX_DEPTH: usize = 64;

/// A walk of a folder, following symbolic links (archives often link rank folders or files): a
/// folder reached twice (a link loop) is walked once; what cannot be looked into is noted.
#[derive(Default)]
struct Walk {
    out: Vec<Input>,
    problems: Vec<String>,
    seen: std::collections::HashSet<std::path::PathBuf>,
}

impl Walk {
    /// Walks `dir`; only the top folder's own failure is an error, deeper ones are problems.
    fn dir(&mut self, dir: &Path, depth: usize) -> std::io::Result<()> {
        if !self.seen.insert(std::fs::canonicalize(dir)?) {
            return Ok(());
        }
        if depth > MAX_DEPTH {
            self.problems.push(format!(
                "{}: nested more than {MAX_DEPTH} folders deep: not walked",
                dir.display()
            ));
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)? {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    self.problems.push(format!("{}: {e}", dir.display()));
                    continue;
                }
            };
            let p = entry.path();
            let meta = match std::fs::metadata(&p) {
                Ok(m) => m,
                Err(e) => {
                    let what = if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                        format!("dangling symbolic link ({e})")
                    } else {
                        e.to_string()
                    };
                    self.problems.push(format!("{}: {what}", p.display()));
                    continue;
                }
            };
            if meta.is_dir() {
                if let Err(e) = self.dir(&p, depth + 1) {
                    self.problems
                        .push(format!("{}: folder not walked: {e}", p.display()));
                }
            } else if meta.is_file() {
                self.file(&p, &meta);
            } else if looks_like_input_name(&p) {
                // A FIFO, socket or device named like a trace: never opened (a FIFO would block),
                // but never passed over silently either.
                self.problems.push(format!(
                    "{}: not a regular file ({}): not read",
                    p.display(),
                    kind_of(&meta)
                ));
            }
        }
        Ok(())
    }

    fn file(&mut self, p: &Path, meta: &std::fs::Metadata) {
        let Some(name) = p.to_str().map(str::to_string) else {
            if looks_like_input_name(p) {
                self.problems.push(format!(
                    "{}: the path is not valid UTF-8: not read (rename the folder or file)",
                    p.display()
                ));
            }
            return;
        };
        let file = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
        let format = if is_summary(p) {
            InputFormat::VendorSummary
        } else if is_profiler_db(&name) {
            InputFormat::AscendDb
        } else if is_json_name(&name) {
            match looks_like_chrome_trace(p) {
                Ok(true) => InputFormat::ChromeJson,
                Ok(false) => return,
                Err(e) => {
                    self.problems
                        .push(format!("{}: cannot be read: {e}", p.display()));
                    return;
                }
            }
        } else if super::msprof_csv::is_kernel_csv(file) {
            InputFormat::KernelCsv
        } else {
            return;
        };
        self.out.push(Input {
            path: name,
            format,
            size_bytes: meta.len(),
            alternates: Vec::new(),
            parts: Vec::new(),
        });
    }
}

#[cfg(test)]
mod rank_folder_tests {
    use super::*;

    /// Creates `root/rel` holding `[]` and returns it as a Chrome-JSON input.
    fn touch(root: &Path, rel: &str) -> Input {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "[]").unwrap();
        Input {
            path: p.display().to_string(),
            format: InputFormat::ChromeJson,
            size_bytes: 2,
            alternates: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// Rank folders `dirs` (name, rank) under `root`, each with a trace_view.json input and its
    /// profiler_info_<rank>.json.
    fn rank_folders(root: &Path, dirs: &[(&str, i32)]) -> Vec<Input> {
        dirs.iter()
            .map(|(d, r)| {
                let input = touch(root, &format!("{d}/ASCEND_PROFILER_OUTPUT/trace_view.json"));
                std::fs::write(root.join(d).join(format!("profiler_info_{r}.json")), "{}").unwrap();
                input
            })
            .collect()
    }

    #[test]
    fn keeps_the_best_export_per_rank_folder() {
        let root = std::env::temp_dir().join(format!("profscope-detect-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let files = [
            "r0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
            "r0_ascend_pt/PROF_1/mindstudio_profiler_output/msprof_0.json",
            "r0_ascend_pt/PROF_1/mindstudio_profiler_output/msprof_0_slice_1.json",
            "r1_ascend_pt/PROF_2/mindstudio_profiler_output/msprof_1.json",
            "r1_ascend_pt/PROF_2/mindstudio_profiler_output/msprof_1_slice_1.json",
            "lmdeploy/lmdeploy_profile_0.json",
        ];
        let inputs: Vec<Input> = files.iter().map(|f| touch(&root, f)).collect();
        let (kept, skipped) = best_per_rank(inputs, &root);
        let rel = |p: &str| {
            p.strip_prefix(&format!("{}/", root.display()))
                .unwrap()
                .to_string()
        };
        let kept: Vec<String> = kept.iter().map(|i| rel(&i.path)).collect();
        // r0: trace_view.json beats CANN's timeline slices; r1 has only slices, both kept;
        // lmdeploy files are not in a rank folder.
        assert_eq!(kept, vec![files[0], files[3], files[4], files[5]]);
        assert_eq!(skipped.len(), 2);
        assert_eq!(rel(&skipped[0].kept[0]), files[0]);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A rank folder holding two profiler dbs (a copy beside the original): only the newer by
    /// mtime is read, the other is skipped naming it; another rank's single db is untouched.
    #[test]
    fn reads_one_profiler_db_per_rank_folder() {
        let root = std::env::temp_dir().join(format!("profscope-twodb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let db = |rel: &str, age_s: u64| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let f = std::fs::File::create(&p).unwrap();
            let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
            f.set_modified(t).unwrap();
            Input {
                path: p.display().to_string(),
                format: InputFormat::AscendDb,
                size_bytes: 0,
                alternates: Vec::new(),
                parts: Vec::new(),
            }
        };
        let inputs = vec![
            db(
                "r0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
                60,
            ),
            db(
                "r0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0_copy.db",
                3600,
            ),
            db(
                "r1_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db",
                7200,
            ),
        ];
        let (kept, skipped) = best_per_rank(inputs.clone(), &root);
        let kept: Vec<&str> = kept.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(kept, vec![inputs[0].path.as_str(), inputs[2].path.as_str()]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].path, inputs[1].path);
        assert_eq!(skipped[0].kept, vec![inputs[0].path.clone()]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn keeps_the_newest_folder_of_a_rank() {
        let root = std::env::temp_dir().join(format!("profscope-newest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // Two captures of rank 0 (names carry YYYYmmddHHMMSSfff) and one of rank 1.
        let dirs = [
            ("host_1_20250109075448123_ascend_pt", 0),
            ("host_1_20250109081500001_ascend_pt", 0),
            ("host_2_20250109075448999_ascend_pt", 1),
        ];
        let inputs = rank_folders(&root, &dirs);
        let (kept, skipped) = newest_per_rank(inputs, &root);
        let has = |v: &[String], d: &str| v.iter().any(|p| p.contains(d));
        let kept: Vec<String> = kept.into_iter().map(|i| i.path).collect();
        assert_eq!(kept.len(), 2);
        assert!(has(&kept, dirs[1].0) && has(&kept, dirs[2].0));
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].path.contains(dirs[0].0));
        assert!(skipped[0].kept[0].contains(dirs[1].0));
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Three capture roots under one folder: `old/` and `new/` hold the same ranks (0, 1), so only
    /// the newer is read, whole (its rank 0 is not swapped for `old/`'s even where `old/` has a
    /// newer rank-0 folder name); `node1/` holds other ranks (2, 3): a second node of the newest
    /// capture, read too.
    #[test]
    fn one_capture_per_rank_set_never_mixed() {
        let root = std::env::temp_dir().join(format!("profscope-captures-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dirs = [
            ("old/h_1_20250109090000000_ascend_pt", 0),
            ("old/h_2_20250101000000000_ascend_pt", 1),
            ("new/h_1_20250105000000000_ascend_pt", 0),
            ("new/h_2_20250110000000000_ascend_pt", 1),
            ("node1/h_3_20250105000000000_ascend_pt", 2),
            ("node1/h_4_20250105000000000_ascend_pt", 3),
        ];
        let inputs = rank_folders(&root, &dirs);
        let (kept, skipped) = newest_per_rank(inputs, &root);
        let kept: Vec<String> = kept.into_iter().map(|i| i.path).collect();
        assert_eq!(kept.len(), 4, "{kept:?}");
        for (d, _) in &dirs[2..] {
            assert!(kept.iter().any(|p| p.contains(d)), "{d} kept");
        }
        assert_eq!(skipped.len(), 2);
        for s in &skipped {
            assert!(s.path.contains("/old/"), "{}", s.path);
            let (from, to) = s.other_capture.as_ref().unwrap();
            assert!(
                from.ends_with("/old") && to.ends_with("/new"),
                "{from} {to}"
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
