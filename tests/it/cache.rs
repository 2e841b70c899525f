//! The result cache (`analyze --cache DIR`, `--no-cache`): a file served from the cache gives the
//! same report as analysing it, and a changed file is never served. Inputs: every real root of
//! the golden test (report_identity::ROOTS), and copies of real roots (../shared/samples
//! ascend-pt text/level1 and db/level1) in a temp folder that the tests then change (truncate,
//! rewrite in place, touch, replace, a companion, a `-wal`, a renamed `profiler_info`). The
//! expected reports are not hard-coded: each is the `--no-cache` report of the same files at the
//! same moment, and the hit/miss counts are the number of rank files of the root.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// `analyze --format json` of `root` with `cache` (None: `--no-cache`) and `extra` arguments.
fn analyze(root: &Path, cache: Option<&Path>, extra: &[&str]) -> Value {
    let mut c = Command::new(env!("CARGO_BIN_EXE_profscope"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["analyze", "--quiet", "--format", "json"])
        .arg(root)
        .args(extra);
    match cache {
        Some(d) => c.arg("--cache").arg(d),
        None => c.arg("--no-cache"),
    };
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "analyze {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

use crate::common::{diag_count as count, diag_examples as examples};

/// The report without the cache's diagnostics and the three timings.
fn stripped(r: &Value) -> Value {
    let mut r = r.clone();
    let o = r.as_object_mut().unwrap();
    for k in ["ingest_ms", "analysis_ms", "wall_ms"] {
        o.remove(k);
    }
    o["diagnostics"]
        .as_array_mut()
        .unwrap()
        .retain(|d| !d["code"].as_str().unwrap().starts_with("cache_"));
    r
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-cache-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An hour ago: older than the cache's 2 s racy window.
fn an_hour_ago() -> SystemTime {
    SystemTime::now() - Duration::from_secs(3600)
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// Copies the real folder `from` to `to`, every file's mtime an hour back.
fn copy_real(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_real(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
            set_mtime(&dst, an_hour_ago());
        }
    }
}

/// A fresh temp folder `base` holding a copy of the real sample folder `sample` as `base/level1`.
fn real_copy(tag: &str, sample: &str) -> (PathBuf, PathBuf) {
    let base = temp(tag);
    let root = base.join("level1");
    copy_real(&crate::common::samples_dir().join(sample), &root);
    (base, root)
}

#[test]
fn every_real_root_reads_back_from_the_cache_identically() {
    let cache = temp("roots");
    for root in crate::report_identity::ROOTS {
        let root = Path::new(root);
        let fresh = analyze(root, None, &[]);
        let first = analyze(root, Some(&cache), &[]);
        let second = analyze(root, Some(&cache), &[]);
        let files = count(&first, "cache_miss");
        assert!(
            files > 0,
            "{}: the first run analysed no file",
            root.display()
        );
        assert_eq!(count(&first, "cache_hit"), 0, "{}", root.display());
        assert_eq!(
            count(&first, "cache_not_stored"),
            0,
            "{}: {:?}",
            root.display(),
            examples(&first, "cache_not_stored")
        );
        assert_eq!(count(&second, "cache_hit"), files, "{}", root.display());
        assert_eq!(count(&second, "cache_miss"), 0, "{}", root.display());
        assert_eq!(stripped(&first), stripped(&fresh), "{}", root.display());
        assert_eq!(stripped(&second), stripped(&fresh), "{}", root.display());
        assert!(
            fresh["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| !d["code"].as_str().unwrap().starts_with("cache_")),
            "--no-cache reports no cache diagnostics"
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
}

/// The rank-file paths a diagnostic's examples start with.
fn rank_of(example: &str) -> &str {
    if example.contains("/rank0_ascend_pt/") {
        "rank0"
    } else {
        "rank1"
    }
}

/// Asserts the run after a change: `changed` (rank0 / rank1) missed with a reason containing
/// `why`, the other rank hit, and the report equals the `--no-cache` report of the files now.
fn after_change(root: &Path, cache: &Path, changed: &str, why: &str) -> Value {
    let r = analyze(root, Some(cache), &[]);
    let misses = examples(&r, "cache_miss");
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(rank_of(&misses[0]), changed, "{misses:?}");
    assert!(misses[0].contains(why), "{misses:?} should say {why}");
    let hits = examples(&r, "cache_hit");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_ne!(rank_of(&hits[0]), changed);
    assert_eq!(stripped(&r), stripped(&analyze(root, None, &[])));
    r
}

fn device_events(r: &Value, rank: i64) -> u64 {
    r["analyses"]["ranks"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["rank"] == rank)
        .map_or(0, |x| x["device_events"].as_u64().unwrap())
}

#[test]
fn a_changed_text_export_is_never_served() {
    let (base, root) = real_copy("text", "ascend-pt/text/level1");
    let cache = base.join("cache");
    let first = analyze(&root, Some(&cache), &[]);
    assert_eq!(count(&first, "cache_miss"), 2);
    let second = analyze(&root, Some(&cache), &[]);
    assert_eq!(count(&second, "cache_hit"), 2);
    let out = |rank: u32| root.join(format!("rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
    let trace1 = out(1).join("trace_view.json");
    let full = std::fs::read(&trace1).unwrap();

    // Truncated (a rank that died mid-dump), the old mtime put back: the size differs.
    std::fs::write(&trace1, &full[..full.len() / 2]).unwrap();
    set_mtime(&trace1, an_hour_ago());
    let cut = after_change(&root, &cache, "rank1", "bytes,");
    assert!(device_events(&cut, 1) < device_events(&second, 1));
    assert_eq!(device_events(&cut, 0), device_events(&second, 0));

    // Rewritten in place with the same size and mtime, a byte changed in the first 64 KiB.
    let mut same_size = full.clone();
    let at = same_size[..65536]
        .windows(6)
        .position(|w| w == b"\"dur\":")
        .expect("an event duration in the first 64 KiB");
    let digit = same_size[at + 6..]
        .iter()
        .position(|b| b.is_ascii_digit() && *b != b'0')
        .unwrap()
        + at
        + 6;
    std::fs::write(&trace1, &full).unwrap();
    let t = an_hour_ago();
    set_mtime(&trace1, t);
    analyze(&root, Some(&cache), &[]);
    same_size[digit] = if same_size[digit] == b'9' { b'8' } else { b'9' };
    std::fs::write(&trace1, &same_size).unwrap();
    set_mtime(&trace1, t);
    after_change(&root, &cache, "rank1", "content changed");

    // Touched: same bytes, a new mtime. Modified just now, so the fresh result is not stored.
    set_mtime(&trace1, SystemTime::now());
    let r = after_change(&root, &cache, "rank1", "modified since cached");
    assert!(examples(&r, "cache_not_stored")[0].contains("modified less than 2 s ago"));
    set_mtime(&trace1, an_hour_ago());
    analyze(&root, Some(&cache), &[]);

    // Replaced by a copy (another inode), same bytes and mtime.
    let copy = base.join("copy.json");
    std::fs::copy(&trace1, &copy).unwrap();
    let t = std::fs::metadata(&trace1).unwrap().modified().unwrap();
    set_mtime(&copy, t);
    std::fs::rename(&copy, &trace1).unwrap();
    after_change(&root, &cache, "rank1", "replaced by another file");

    // A companion file of rank 0 (kernel_details.csv) one row shorter.
    let kd = out(0).join("kernel_details.csv");
    let text = std::fs::read_to_string(&kd).unwrap();
    let cut_row = text.trim_end().rfind('\n').unwrap();
    std::fs::write(&kd, &text[..cut_row + 1]).unwrap();
    set_mtime(&kd, an_hour_ago());
    after_change(&root, &cache, "rank0", "kernel_details.csv");

    // profiler_info_1.json renamed: the rank of rank1's files comes from that name.
    let info = root.join("rank1_ascend_pt/profiler_info_1.json");
    std::fs::rename(&info, root.join("rank1_ascend_pt/profiler_info_5.json")).unwrap();
    let r = after_change(&root, &cache, "rank1", "profiler_info_");
    assert!(device_events(&r, 5) > 0, "rank 1 is now rank 5");

    // Other options: another entry, then served.
    let gap = analyze(&root, Some(&cache), &["--min-gap-us", "5"]);
    assert_eq!(count(&gap, "cache_miss"), 2);
    assert_eq!(
        count(
            &analyze(&root, Some(&cache), &["--min-gap-us", "5"]),
            "cache_hit"
        ),
        2
    );

    // Damaged entries are misses (and rewritten), never errors: one cut to half its bytes (a full disk), the others overwritten with text.
    for (i, e) in std::fs::read_dir(cache.join("v3"))
        .unwrap()
        .flatten()
        .enumerate()
    {
        let bytes = std::fs::read(e.path()).unwrap();
        let damaged = if i == 0 {
            bytes[..bytes.len() / 2].to_vec()
        } else {
            b"{\"profscope\": ".to_vec()
        };
        std::fs::write(e.path(), damaged).unwrap();
    }
    let r = analyze(&root, Some(&cache), &[]);
    assert_eq!(count(&r, "cache_miss"), 2);
    assert!(examples(&r, "cache_miss")[0].contains("unreadable"));
    assert_eq!(stripped(&r), stripped(&analyze(&root, None, &[])));
    assert_eq!(count(&analyze(&root, Some(&cache), &[]), "cache_hit"), 2);
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_db_with_a_new_wal_beside_it_is_analysed_again() {
    let (base, root) = real_copy("db", "ascend-pt/db/level1");
    let cache = base.join("cache");
    analyze(&root, Some(&cache), &[]);
    assert_eq!(count(&analyze(&root, Some(&cache), &[]), "cache_hit"), 2);
    let db0 = root.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let wal = PathBuf::from(format!("{}-wal", db0.display()));
    std::fs::write(&wal, vec![0u8; 4096]).unwrap();
    set_mtime(&wal, an_hour_ago());
    let r = after_change(&root, &cache, "rank0", "-wal is new");
    assert_eq!(count(&r, "db_wal_not_read"), 1);
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn no_cache_writes_nothing_and_a_cache_inside_an_input_is_refused() {
    let (base, root) = real_copy("off", "ascend-pt/db/level1");
    let xdg = base.join("xdg");
    let run = |args: &[&str], env_off: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_profscope"));
        c.args(["analyze", "--quiet", "--format", "json"])
            .arg(&root)
            .args(args)
            .env("XDG_CACHE_HOME", &xdg)
            .env_remove("PROFSCOPE_NO_CACHE");
        if env_off {
            c.env("PROFSCOPE_NO_CACHE", "1");
        }
        c.output().unwrap()
    };
    assert!(run(&["--no-cache"], false).status.success());
    assert!(run(&[], true).status.success());
    assert!(
        !xdg.exists(),
        "--no-cache and PROFSCOPE_NO_CACHE write nothing"
    );
    // By default the cache is $XDG_CACHE_HOME/profscope.
    assert!(run(&[], false).status.success());
    let entries = std::fs::read_dir(xdg.join("profscope/v3")).unwrap().count();
    assert_eq!(entries, 2, "one entry per rank file");
    let inside = root.join("rank0_ascend_pt/cache");
    let out = run(&["--cache", inside.to_str().unwrap()], false);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("inside the input"), "{err}");
    assert!(!inside.exists());
    let _ = std::fs::remove_dir_all(&base);
}

/// Bytes of the entries (`<sha256>.part`) in `cache`, by file name.
fn entries(cache: &Path) -> std::collections::BTreeMap<String, u64> {
    let entry = |n: &str| {
        n.strip_suffix(".part")
            .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    std::fs::read_dir(cache.join("v3"))
        .map(|d| {
            d.flatten()
                .filter(|e| entry(&e.file_name().to_string_lossy()))
                .map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    (n, e.metadata().unwrap().len())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The size cap keeps the most recently used entries: three copies of real 2-rank db roots
/// (../shared/samples ascend-pt/db/level0..2), each root's entry bytes measured first in a cache
/// of its own (s0, s1, s2), then a cache capped at s0 + max(s1, s2) that sees L0, L1, L0 again
/// (served, so used last) and L2: L1, the least recently used, is the one removed, exactly its
/// bytes, and L0 is still served afterwards. The expected counts follow from the sizes measured,
/// not from the code under test.
#[test]
fn the_size_cap_removes_the_least_recently_used_entries() {
    let base = temp("cap");
    let roots: Vec<PathBuf> = ["level0", "level1", "level2"]
        .iter()
        .map(|l| {
            let root = base.join(l);
            copy_real(
                &crate::common::samples_dir().join("ascend-pt/db").join(l),
                &root,
            );
            root
        })
        .collect();
    let size = |root: &Path, tag: &str| -> u64 {
        let own = base.join(format!("own-{tag}"));
        analyze(root, Some(&own), &[]);
        let e = entries(&own);
        assert_eq!(e.len(), 2, "{}: one entry per rank db", root.display());
        e.values().sum()
    };
    let s: Vec<u64> = roots
        .iter()
        .enumerate()
        .map(|(i, r)| size(r, &i.to_string()))
        .collect();
    let cap = s[0] + s[1].max(s[2]);
    let cache = base.join("capped");
    let capped = cap.to_string();
    let run = |root: &Path| analyze(root, Some(&cache), &["--cache-max-size", &capped]);
    for (root, hits) in [(&roots[0], 0), (&roots[1], 0), (&roots[0], 2)] {
        let r = run(root);
        assert_eq!(count(&r, "cache_hit"), hits, "{}", root.display());
        assert_eq!(count(&r, "cache_pruned"), 0, "{}", root.display());
    }
    assert_eq!(entries(&cache).values().sum::<u64>(), s[0] + s[1]);
    let fourth = run(&roots[2]);
    assert_eq!(count(&fourth, "cache_pruned"), 1);
    let why = &examples(&fourth, "cache_pruned")[0];
    assert!(
        why.contains(&format!("2 least recently used entries ({} bytes)", s[1])),
        "{why}"
    );
    assert!(
        why.contains(&format!("({} bytes kept)", s[0] + s[2])),
        "{why}"
    );
    assert_eq!(entries(&cache).values().sum::<u64>(), s[0] + s[2]);
    assert_eq!(count(&run(&roots[0]), "cache_hit"), 2);
    assert_eq!(count(&run(&roots[2]), "cache_hit"), 2);
    let _ = std::fs::remove_dir_all(&base);
}

/// An entry larger than the cap is removed after it is written (and the report says so), a
/// temporary file older than an hour is removed, a fresh one and a file that is not an entry
/// are left alone. Input: a copy of the real ascend-pt/db/level1 root.
#[test]
fn pruning_removes_over_cap_entries_and_stale_temporaries_only() {
    let (base, root) = real_copy("cap-small", "ascend-pt/db/level1");
    let cache = base.join("cache");
    let dir = cache.join("v3");
    std::fs::create_dir_all(&dir).unwrap();
    // Named as the cache names its temporaries (`<sha256>.tmp.<pid>`); a file of another name
    // is never the cache's, whatever its age.
    let h = "ab".repeat(32);
    let (stale, fresh, other) = (
        dir.join(format!("{h}.tmp.1")),
        dir.join(format!("{h}.tmp.2")),
        dir.join("notes.part"),
    );
    for f in [&stale, &fresh, &other] {
        std::fs::write(f, b"x").unwrap();
    }
    set_mtime(&stale, an_hour_ago() - Duration::from_secs(60));
    set_mtime(&other, an_hour_ago() - Duration::from_secs(60));
    let r = analyze(&root, Some(&cache), &["--cache-max-size", "1K"]);
    assert_eq!(count(&r, "cache_miss"), 2);
    let why = &examples(&r, "cache_pruned")[0];
    assert!(why.contains("2 least recently used entries"), "{why}");
    assert!(why.contains("2 of them larger than the cap"), "{why}");
    assert!(
        examples(&r, "cache_pruned")
            .iter()
            .any(|e| e.contains("1 temporary files of writers that stopped mid-write removed")),
        "{:?}",
        examples(&r, "cache_pruned")
    );
    assert!(entries(&cache).is_empty());
    assert!(!stale.exists() && fresh.exists() && other.exists());
    let again = analyze(&root, Some(&cache), &["--cache-max-size", "1K"]);
    assert_eq!(count(&again, "cache_miss"), 2);
    assert_eq!(stripped(&again), stripped(&analyze(&root, None, &[])));
    let _ = std::fs::remove_dir_all(&base);
}

/// The `.part` entries of `cache`'s current layout, sorted.
fn entry_paths(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache.join("v3"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "part"))
        .collect();
    v.sort();
    v
}

/// A damaged entry is a miss that says why, and the report equals the uncached one: a bit
/// flipped at 12 places spread over each entry (header, identity, results, checksum), an entry
/// replaced by a FIFO (must not hang), by a symbolic link to /dev/zero (must not be read), by a
/// 3 GB sparse file (must not be read: over the cap). Input: a copy of the real
/// ascend-pt/text/level1 root (2 rank files, so 2 entries).
#[test]
fn damaged_or_planted_entries_are_misses_never_hits() {
    let (base, root) = real_copy("damaged", "ascend-pt/text/level1");
    let cache = base.join("cache");
    let fresh = stripped(&analyze(&root, None, &[]));
    analyze(&root, Some(&cache), &[]);
    assert_eq!(count(&analyze(&root, Some(&cache), &[]), "cache_hit"), 2);
    let entries = entry_paths(&cache);
    assert_eq!(entries.len(), 2);
    let good: Vec<Vec<u8>> = entries.iter().map(|e| std::fs::read(e).unwrap()).collect();
    for k in 0..12 {
        for (e, bytes) in entries.iter().zip(&good) {
            let mut b = bytes.clone();
            let at = if k == 11 {
                b.len() - 1
            } else {
                k * (b.len() / 11)
            };
            b[at] ^= 1 << (k % 8);
            std::fs::write(e, &b).unwrap();
        }
        let r = analyze(&root, Some(&cache), &[]);
        assert_eq!(count(&r, "cache_hit"), 0, "flip {k}");
        assert_eq!(count(&r, "cache_miss"), 2, "flip {k}");
        assert!(
            examples(&r, "cache_miss")[0].contains("unreadable"),
            "flip {k}"
        );
        assert_eq!(stripped(&r), fresh, "flip {k}");
    }
    // Planted files instead of entries.
    let plant = |how: &dyn Fn(&Path)| {
        for e in entry_paths(&cache) {
            std::fs::remove_file(&e).unwrap();
            how(&e);
        }
    };
    type Plant = Box<dyn Fn(&Path)>;
    let planted: [(&str, Plant); 3] = [
        (
            "not a regular file",
            Box::new(|p: &Path| {
                let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }),
        ),
        (
            "symbolic link",
            Box::new(|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
        ),
        (
            "over the",
            Box::new(|p: &Path| {
                let f = std::fs::File::create(p).unwrap();
                f.set_len(3 << 30).unwrap();
            }),
        ),
    ];
    for (why, how) in &planted {
        plant(how.as_ref());
        let r = analyze(&root, Some(&cache), &[]);
        assert_eq!(count(&r, "cache_hit"), 0, "{why}");
        assert!(
            examples(&r, "cache_miss").iter().all(|e| e.contains(why)),
            "{why}: {:?}",
            examples(&r, "cache_miss")
        );
        assert_eq!(stripped(&r), fresh, "{why}");
        // The fresh result replaced the planted file with a real entry.
        assert_eq!(
            count(&analyze(&root, Some(&cache), &[]), "cache_hit"),
            2,
            "{why}"
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A same-size edit in the middle of a file (outside both hashed 64 KiB ends) with its mtime put
/// back is not served: the status-change time moved (and a sampled block may differ). Input: a
/// copy of the real ascend-pt/text/level1 root; the edited byte is a digit of a duration in
/// the middle of rank 1's trace_view.json, so the fresh report differs.
#[test]
fn a_same_size_edit_in_the_middle_with_its_mtime_put_back_is_a_miss() {
    let (base, root) = real_copy("middle", "ascend-pt/text/level1");
    let cache = base.join("cache");
    analyze(&root, Some(&cache), &[]);
    let trace = root.join("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let mut bytes = std::fs::read(&trace).unwrap();
    assert!(
        bytes.len() > 4 * 65536,
        "the middle is outside the hashed ends"
    );
    let mid = bytes.len() / 2;
    let at = bytes[mid..]
        .windows(6)
        .position(|w| w == b"\"dur\":")
        .unwrap()
        + mid;
    let digit = bytes[at + 6..]
        .iter()
        .position(|b| (b'1'..=b'8').contains(b))
        .unwrap()
        + at
        + 6;
    let mtime = std::fs::metadata(&trace).unwrap().modified().unwrap();
    bytes[digit] += 1;
    std::fs::write(&trace, &bytes).unwrap();
    set_mtime(&trace, mtime);
    let r = analyze(&root, Some(&cache), &[]);
    assert_eq!(count(&r, "cache_hit"), 1, "rank 0 unchanged");
    assert!(
        examples(&r, "cache_miss")
            .iter()
            .any(|e| e.contains("trace_view.json") && e.contains("since cached")),
        "{:?}",
        examples(&r, "cache_miss")
    );
    assert_eq!(stripped(&r), stripped(&analyze(&root, None, &[])));
    let _ = std::fs::remove_dir_all(&base);
}

/// `--cache link/c`, where `link` points into the input root, is refused before anything is
/// written (the folder does not exist yet, so only resolving its existing ancestor finds it).
#[test]
fn a_cache_folder_reached_through_a_link_into_an_input_is_refused() {
    let (base, root) = real_copy("link", "ascend-pt/text/level1");
    let link = base.join("link");
    std::os::unix::fs::symlink(root.join("rank0_ascend_pt"), &link).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_profscope"))
        .args(["analyze", "--quiet", "--format", "json"])
        .arg(&root)
        .arg("--cache")
        .arg(link.join("c"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("inside the input folder"), "{err}");
    assert!(!root.join("rank0_ascend_pt/c").exists());
    let _ = std::fs::remove_dir_all(&base);
}
