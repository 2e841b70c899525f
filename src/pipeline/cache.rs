//! The result cache for archived roots: one input's per-file results, stored after it was
//! analysed and served instead of reading it again while the file is unchanged.
//!
//! An entry is named by what produced it (the cache layout, profscope's version, the running
//! binary, the input's path as given, the analysis options) and holds the identity of what was
//! read. It is served only when the identity is the same now. The identity of an input is, for
//! the file itself, its parts and its alternates: size, modification time (ns), status-change
//! time (ns: any write or `touch` back moves it, and no user can set it), inode, device and a
//! SHA-256 of the first and last 64 KiB and of [`SAMPLED_BLOCKS`] blocks spread across the rest;
//! and size, modification and status-change time, inode and device of
//! every other file of its folder (companion CSVs, `analysis.db`, a `-wal`), of the folder
//! above an `ASCEND_PROFILER_OUTPUT/` (`profiler_info_<rank>.json` names the rank) and of a legacy
//! `PROF_*` capture's `device_<n>/info.json.<n>` (its `rank_id`). An entry is stored only when the
//! identity was the same before and after reading, and not for a file modified in the last
//! [`RACY_WINDOW`] (a change within the file system's timestamp resolution could go unseen).
//!
//! The folder is kept under a size cap ([`DEFAULT_MAX_BYTES`], `--cache-max-size`): a served
//! entry's modification time is set to now, and after each run the least recently used entries
//! go first until the rest fit (entries of older binaries, never served again, age out this
//! way). Temporary files of writers that died mid-write go after [`STALE_TMP`].
//!
//! An entry is checked before anything in it is used: it is opened without following a
//! symbolic link and without blocking, must be a regular file of at most [`MAX_ENTRY_BYTES`]
//! (and the folder's cap), starts with [`MAGIC`] and ends with a SHA-256 of everything before
//! it, written last. Any doubt is a miss that says why.

use crate::ingest::detect::Input;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The entries' layout; a change makes every older entry unused (a new folder).
const LAYOUT: &str = "v3";
/// The first bytes of every entry of this layout.
const MAGIC: &[u8; 16] = b"profscope-cache3";
/// Bytes of the SHA-256 that ends every entry.
const CHECKSUM_BYTES: usize = 32;
/// The largest entry ever read (a part is a few MB; a 3 GB file in the folder is not one).
pub const MAX_ENTRY_BYTES: u64 = 256 << 20;
/// Bytes hashed at each end of a data file.
const HASHED_END: u64 = 64 * 1024;
/// Blocks of [`SAMPLED_BLOCK`] bytes hashed at even steps between the two ends of a data file.
const SAMPLED_BLOCKS: u64 = 64;
const SAMPLED_BLOCK: u64 = 4096;
/// Entries of a folder taken into the identity at most (a folder of 100,000 files is not an
/// archived rank folder; beyond this the input is not cached).
const MAX_FOLDER_ENTRIES: usize = 4096;
/// A file modified this recently is not stored.
pub const RACY_WINDOW: std::time::Duration = std::time::Duration::from_secs(2);

/// The cache folder's default size cap.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// A temporary entry file older than this was left by a writer that died.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// The default folder: `$XDG_CACHE_HOME/profscope`, else `$HOME/.cache/profscope`.
pub fn default_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        return Some(x.join("profscope"));
    }
    std::env::var_os("HOME")
        .and_then(absolute)
        .map(|h| h.join(".cache/profscope"))
}

/// One file as the identity sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileStamp {
    path: String,
    size: u64,
    mtime_ns: i128,
    /// The status-change time (ns): moved by every write and by setting the mtime back.
    ctime_ns: i128,
    inode: u64,
    device: u64,
    /// SHA-256 of the first and last [`HASHED_END`] bytes and of [`SAMPLED_BLOCKS`] blocks
    /// between them (data files only).
    sample_sha256: Option<String>,
}

/// Everything an input's results depend on, as found on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    files: Vec<FileStamp>,
}

impl Identity {
    /// The identity of `input` now; an error when a file cannot be examined (then nothing is
    /// cached for it).
    pub fn of(input: &Input) -> std::io::Result<Identity> {
        let mut data: Vec<&str> = vec![input.path.as_str()];
        data.extend(input.parts.iter().map(String::as_str));
        data.extend(input.alternates.iter().map(|a| a.path.as_str()));
        let mut files = Vec::new();
        for p in &data {
            files.push(stamp(Path::new(p), true)?);
        }
        let main = Path::new(&input.path);
        let folder = main.parent().filter(|d| !d.as_os_str().is_empty());
        let folder = folder.unwrap_or(Path::new("."));
        let mut around = folder_stamps(folder)?;
        if folder
            .file_name()
            .is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT")
            && let Some(up) = folder.parent().filter(|d| !d.as_os_str().is_empty())
        {
            around.extend(folder_stamps(up)?);
        }
        if let Some(prof) = main.ancestors().find(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("PROF_"))
        }) {
            around.extend(device_info_stamps(prof)?);
        }
        around.retain(|s| !data.contains(&s.path.as_str()));
        files.extend(around);
        Ok(Identity { files })
    }

    /// The newest modification time among the files, ns since the epoch.
    fn newest_ns(&self) -> i128 {
        self.files.iter().map(|f| f.mtime_ns).max().unwrap_or(0)
    }

    /// What differs from `then`, in words, for the first file that differs.
    fn change_from(&self, then: &Identity) -> String {
        for f in &self.files {
            match then.files.iter().find(|t| t.path == f.path) {
                None => return format!("{} is new", f.path),
                Some(t) if t.size != f.size => {
                    return format!("{}: {} bytes, {} when cached", f.path, f.size, t.size);
                }
                Some(t) if t.inode != f.inode || t.device != f.device => {
                    return format!("{}: replaced by another file", f.path);
                }
                Some(t) if t.mtime_ns != f.mtime_ns => {
                    return format!("{}: modified since cached", f.path);
                }
                Some(t) if t.sample_sha256 != f.sample_sha256 => {
                    return format!("{}: content changed since cached", f.path);
                }
                Some(t) if t.ctime_ns != f.ctime_ns => {
                    return format!(
                        "{}: written or its times set since cached (status-change time moved)",
                        f.path
                    );
                }
                Some(_) => {}
            }
        }
        match then
            .files
            .iter()
            .find(|t| !self.files.iter().any(|f| f.path == t.path))
        {
            Some(t) => format!("{} is gone", t.path),
            None => "changed since cached".into(),
        }
    }
}

fn stamp(path: &Path, data: bool) -> std::io::Result<FileStamp> {
    let m = std::fs::metadata(path)?;
    let sample_sha256 = if data && m.is_file() {
        Some(sample_hash(path, m.len())?)
    } else {
        None
    };
    Ok(stamp_of(path, &m, sample_sha256))
}

fn stamp_of(path: &Path, m: &std::fs::Metadata, sample_sha256: Option<String>) -> FileStamp {
    FileStamp {
        path: path.display().to_string(),
        size: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        inode: m.ino(),
        device: m.dev(),
        sample_sha256,
    }
}

/// The byte ranges the sample hash reads of a file of `size` bytes: the first and last
/// [`HASHED_END`] bytes, and [`SAMPLED_BLOCKS`] blocks at even steps between them (none when
/// the ends cover the file).
fn sampled_ranges(size: u64) -> Vec<(u64, u64)> {
    let head = HASHED_END.min(size);
    let tail = size.saturating_sub(HASHED_END).max(head);
    let mut out = vec![(0, head)];
    let middle = tail - head;
    if middle <= SAMPLED_BLOCKS * SAMPLED_BLOCK {
        out.push((head, middle));
    } else {
        let step = middle / SAMPLED_BLOCKS;
        out.extend((0..SAMPLED_BLOCKS).map(|k| (head + k * step, SAMPLED_BLOCK)));
    }
    out.push((tail, size - tail));
    out
}

fn sample_hash(path: &Path, size: u64) -> std::io::Result<String> {
    let f = crate::ingest::source::open_regular(path, u64::MAX)?;
    let mut h = Sha256::new();
    let mut buf = Vec::new();
    for (at, len) in sampled_ranges(size) {
        buf.resize(len as usize, 0);
        f.read_exact_at(&mut buf, at)?;
        h.update(&buf);
    }
    Ok(hex(&h.finalize()))
}

fn folder_stamps(dir: &Path) -> std::io::Result<Vec<FileStamp>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        if out.len() == MAX_FOLDER_ENTRIES {
            return Err(std::io::Error::other("too many files beside the input"));
        }
        let p = e?.path();
        // Files only (a sub-folder's own time changes with what is added inside, not read
        // here); a name that vanished between listing and stat changes nothing read.
        if let Ok(m) = std::fs::metadata(&p)
            && m.is_file()
        {
            out.push(stamp_of(&p, &m, None));
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The `device_<n>/info.json.<n>` files of a legacy `PROF_*` capture (its rank is read there).
fn device_info_stamps(prof: &Path) -> std::io::Result<Vec<FileStamp>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(prof)?.flatten().take(MAX_FOLDER_ENTRIES) {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(n) = name.strip_prefix("device_")
            && let Ok(s) = stamp(&e.path().join(format!("info.json.{n}")), false)
        {
            out.push(s);
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// One stored entry.
#[derive(Serialize, Deserialize)]
struct Entry<T> {
    profscope: String,
    input: String,
    options: String,
    identity: Identity,
    part: T,
}

/// What a lookup found.
pub enum Lookup<T> {
    /// Served from the cache (the entry's path).
    Hit(T, PathBuf),
    /// Not served: why, and the identity to store the fresh result under (None: cannot cache
    /// this input).
    Miss(String, Option<Identity>),
}

/// A cache folder for results produced by this binary with one set of options.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    /// The binary and options the entries were made with.
    producer: String,
    options: String,
    /// [`Cache::prune`] keeps the entries under this many bytes.
    max_bytes: u64,
}

/// What [`Cache::prune`] removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Entries removed, and their bytes.
    pub entries: usize,
    pub bytes: u64,
    /// Removed entries larger than the cap on their own.
    pub over_cap: usize,
    /// Bytes of the entries kept.
    pub kept_bytes: u64,
    /// Temporary files older than [`STALE_TMP`] removed.
    pub stale_temporaries: usize,
}

/// What a file of the cache folder is, by its name: only names this module writes count.
#[derive(Debug, PartialEq, Eq)]
enum CacheFile {
    /// `<64 hex digits>.part`
    Entry,
    /// `<64 hex digits>.tmp.<pid>`, an entry being written.
    Temporary,
    Other,
}

fn cache_file(name: &str) -> CacheFile {
    let hashed = |h: &str| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit());
    match name.split_once('.') {
        Some((h, "part")) if hashed(h) => CacheFile::Entry,
        Some((h, rest))
            if hashed(h)
                && rest.strip_prefix("tmp.").is_some_and(|pid| {
                    !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
                }) =>
        {
            CacheFile::Temporary
        }
        _ => CacheFile::Other,
    }
}

impl Cache {
    /// Entries in `dir` for results made with `options` (any text that names them), kept under
    /// [`DEFAULT_MAX_BYTES`].
    pub fn new(dir: &Path, options: String) -> Cache {
        Cache {
            dir: dir.join(LAYOUT),
            producer: producer(),
            options,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }

    /// The same cache kept under `max_bytes`.
    pub fn with_max_bytes(self, max_bytes: u64) -> Cache {
        Cache { max_bytes, ..self }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Removes the least recently used entries (oldest modification time first) until the rest
    /// fit in the cap, and temporary files older than [`STALE_TMP`]. Only files named as this
    /// module names them (`<sha256>.part`, `<sha256>.tmp.<pid>`) in this layout's folder are
    /// touched; a file that cannot be removed (another user's, a read-only folder) is left and
    /// counted as kept.
    pub fn prune(&self) -> Pruned {
        let mut out = Pruned::default();
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        let now = std::time::SystemTime::now();
        let mut entries = Vec::new();
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(m) = e.metadata() else { continue };
            if !m.is_file() {
                continue;
            }
            let modified = m.modified().unwrap_or(std::time::UNIX_EPOCH);
            match cache_file(&name) {
                CacheFile::Temporary => {
                    let old = now
                        .duration_since(modified)
                        .is_ok_and(|age| age > STALE_TMP);
                    if old && std::fs::remove_file(e.path()).is_ok() {
                        out.stale_temporaries += 1;
                    }
                }
                CacheFile::Entry => entries.push((modified, name, m.len())),
                CacheFile::Other => {}
            }
        }
        // Newest first; the name breaks ties so the order is the same on every run.
        entries.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        // Strictly least recently used: once one entry does not fit, every older one goes too.
        let mut full = false;
        for (_, name, size) in entries {
            full = full || out.kept_bytes + size > self.max_bytes;
            if !full || std::fs::remove_file(self.dir.join(&name)).is_err() {
                out.kept_bytes += size;
                continue;
            }
            out.entries += 1;
            out.bytes += size;
            out.over_cap += (size > self.max_bytes) as usize;
        }
        out
    }

    fn entry_path(&self, input: &Input) -> PathBuf {
        let mut h = Sha256::new();
        for part in [&self.producer, &self.options, &input.path] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        self.dir.join(format!("{}.part", hex(&h.finalize())))
    }

    /// The stored result for `input` if its identity is unchanged.
    pub fn lookup<T: DeserializeOwned>(&self, input: &Input) -> Lookup<T> {
        let now = match Identity::of(input) {
            Ok(i) => i,
            Err(e) => return Lookup::Miss(format!("not cached: {e}"), None),
        };
        let path = self.entry_path(input);
        let cap = self.max_bytes.min(MAX_ENTRY_BYTES);
        let bytes = match read_entry(&path, cap) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Lookup::Miss("not in the cache".into(), Some(now));
            }
            Err(e) => {
                return Lookup::Miss(
                    format!("cache entry {} unreadable: {e}", path.display()),
                    Some(now),
                );
            }
        };
        match decode_entry::<T>(&bytes) {
            Ok(e) if e.identity == now && e.input == input.path && e.options == self.options => {
                // Recently used: the last entries pruning removes (best effort).
                let _ = std::fs::File::options()
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(&path)
                    .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                Lookup::Hit(e.part, path)
            }
            Ok(e) => Lookup::Miss(now.change_from(&e.identity), Some(now)),
            Err(e) => Lookup::Miss(
                format!("cache entry {} unreadable: {e}", path.display()),
                Some(now),
            ),
        }
    }

    /// Stores `part` for `input` if the input still has identity `before` and was not modified
    /// in the last [`RACY_WINDOW`]; says why not otherwise. Written to a temporary file and
    /// renamed, so a reader never sees half an entry.
    pub fn store<T: Serialize>(
        &self,
        input: &Input,
        before: &Identity,
        part: &T,
    ) -> Result<PathBuf, String> {
        let after = Identity::of(input).map_err(|e| e.to_string())?;
        if &after != before {
            return Err(format!("not stored: {}", after.change_from(before)));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        if now - after.newest_ns() < RACY_WINDOW.as_nanos() as i128 {
            return Err(format!(
                "not stored: modified less than {} s ago",
                RACY_WINDOW.as_secs()
            ));
        }
        let entry = Entry {
            profscope: self.producer.clone(),
            input: input.path.clone(),
            options: self.options.clone(),
            identity: after,
            part,
        };
        let path = self.entry_path(input);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
            // A leftover of this pid, or a link planted there, is removed, never followed.
            let _ = std::fs::remove_file(&tmp);
            let file = std::fs::File::options()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)?;
            let mut f = std::io::BufWriter::new(file);
            f.write_all(&seal(
                postcard::to_allocvec(&entry).map_err(std::io::Error::other)?,
            ))?;
            f.flush()?;
            drop(f);
            std::fs::rename(&tmp, &path).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
        };
        write().map_err(|e| format!("cache folder {}: {e}", self.dir.display()))?;
        Ok(path)
    }
}

/// An entry's bytes: [`MAGIC`], the postcard `body`, then a SHA-256 of both (written last, so a
/// cut entry never checks).
pub fn seal(body: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + body.len() + CHECKSUM_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&body);
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// The postcard body of sealed entry bytes, if they are whole: the magic first, the checksum
/// last and equal to the SHA-256 of everything before it.
pub fn unseal(bytes: &[u8]) -> Result<&[u8], &'static str> {
    if bytes.len() < MAGIC.len() + CHECKSUM_BYTES || !bytes.starts_with(MAGIC) {
        return Err("not an entry of this cache layout");
    }
    let (data, sum) = bytes.split_at(bytes.len() - CHECKSUM_BYTES);
    if Sha256::digest(data).as_slice() != sum {
        return Err("checksum mismatch (damaged or cut)");
    }
    Ok(&data[MAGIC.len()..])
}

/// An entry's bytes decoded: the seal checked, then the postcard entry.
fn decode_entry<T: DeserializeOwned>(bytes: &[u8]) -> Result<Entry<T>, String> {
    let body = unseal(bytes).map_err(str::to_string)?;
    postcard::from_bytes::<Entry<T>>(body).map_err(|e| e.to_string())
}

/// Decodes entry bytes as a lookup does ([`decode_entry`]; what the `cache_entry` fuzz target
/// drives with arbitrary bytes, raw and sealed).
pub fn check_entry<T: DeserializeOwned>(bytes: &[u8]) -> Result<(), String> {
    decode_entry::<T>(bytes).map(|_| ())
}

/// The bytes of the entry at `path`: opened without following a link or blocking on a FIFO, a
/// regular file of at most `cap` bytes (the seal is [`decode_entry`]'s to check).
fn read_entry(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                std::io::Error::other("a symbolic link, not an entry")
            } else {
                e
            }
        })?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if m.len() > cap {
        return Err(std::io::Error::other(format!(
            "{} bytes, over the {cap}-byte cap on entries",
            m.len()
        )));
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::other("grew past the cap while read"));
    }
    Ok(bytes)
}

/// profscope's version and the size and modification time of the running executable and of the
/// file this code was loaded from, so a rebuilt build never reads a result an older one made. They
/// differ in the Python package: the executable is the interpreter, the code its extension module
/// (a reinstalled wheel of the same version must not read the old module's results).
fn producer() -> String {
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| format!("{}/{}.{}", m.len(), m.mtime(), m.mtime_nsec()))
            .unwrap_or_default()
    };
    let exe = std::env::current_exe().map_or_else(|_| String::new(), |p| stamp(&p));
    let code = code_file().map_or_else(String::new, |p| stamp(&p));
    format!("{} {exe} {code}", env!("CARGO_PKG_VERSION"))
}

/// The file (executable or shared object) holding this function's code, as the dynamic loader
/// names it; None when it names none.
fn code_file() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: a zeroed Dl_info is a valid out-parameter; dladdr only reads the loader's tables.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let at = code_file as *const libc::c_void;
    // SAFETY: `at` is the address of a function of this object.
    if unsafe { libc::dladdr(at, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set dli_fname to a NUL-terminated string owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
    (!name.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_producer_names_the_file_of_the_running_code() {
        // In a test binary the code is in the executable itself: dladdr names a file whose
        // size is the executable's, and that size is in the producer stamp.
        let code = code_file().expect("dladdr names this code's file");
        let exe = std::env::current_exe().unwrap();
        let len = std::fs::metadata(&exe).unwrap().len();
        assert_eq!(
            std::fs::metadata(&code).map(|m| m.len()).ok(),
            Some(len),
            "{code:?}"
        );
        let p = producer();
        assert_eq!(p.matches(&format!(" {len}/")).count(), 2, "{p}");
    }

    #[test]
    fn the_sample_hash_covers_small_and_large_files() {
        let dir = std::env::temp_dir().join(format!("profscope-cache-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a");
        // Small (one read covers all), exactly two ends, and larger with a middle not hashed.
        for size in [10usize, 2 * HASHED_END as usize, 3 * HASHED_END as usize] {
            let mut bytes = vec![7u8; size];
            std::fs::write(&f, &bytes).unwrap();
            let a = sample_hash(&f, size as u64).unwrap();
            bytes[size - 1] = 8;
            std::fs::write(&f, &bytes).unwrap();
            assert_ne!(
                a,
                sample_hash(&f, size as u64).unwrap(),
                "last byte, size {size}"
            );
            bytes[0] = 9;
            let b = sample_hash(&f, size as u64).unwrap();
            std::fs::write(&f, &bytes).unwrap();
            assert_ne!(
                b,
                sample_hash(&f, size as u64).unwrap(),
                "first byte, size {size}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A same-size edit in the middle of a large file (where the ends are not) changes the hash
    /// when it falls in a sampled block; the sampled ranges stay inside the file and in order.
    #[test]
    fn sampled_blocks_cover_the_middle_and_stay_in_bounds() {
        for size in [
            0u64,
            1,
            65_536,
            131_072,
            131_073,
            400_000,
            1 << 30,
            u64::MAX / 2,
        ] {
            let r = sampled_ranges(size);
            let mut end = 0;
            for &(at, len) in &r {
                assert!(at >= end || len == 0, "size {size}: {r:?}");
                end = at + len;
            }
            assert_eq!(end, size, "size {size}: the last range ends the file");
            let hashed: u64 = r.iter().map(|x| x.1).sum();
            assert!(hashed <= 2 * HASHED_END + SAMPLED_BLOCKS * SAMPLED_BLOCK);
        }
        let dir = std::env::temp_dir().join(format!("profscope-cache-mid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a");
        let size = 8 << 20;
        let mut bytes = vec![b'x'; size];
        std::fs::write(&f, &bytes).unwrap();
        let before = sample_hash(&f, size as u64).unwrap();
        // The first byte of the 32nd sampled block: outside both 64 KiB ends.
        let (at, _) = sampled_ranges(size as u64)[32];
        assert!(at > HASHED_END && at < size as u64 - HASHED_END);
        bytes[at as usize] = b'y';
        std::fs::write(&f, &bytes).unwrap();
        assert_ne!(before, sample_hash(&f, size as u64).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Every single-bit flip of a sealed entry, and every cut, fails the check.
    #[test]
    fn every_flipped_bit_and_every_cut_of_an_entry_is_refused() {
        let body: Vec<u8> = (0..200u32).map(|i| (i * 7 % 251) as u8).collect();
        let sealed = seal(body.clone());
        assert_eq!(unseal(&sealed), Ok(&body[..]));
        for bit in 0..sealed.len() * 8 {
            let mut b = sealed.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(unseal(&b).is_err(), "bit {bit}");
        }
        for cut in 0..sealed.len() {
            assert!(unseal(&sealed[..cut]).is_err(), "cut at {cut}");
        }
    }

    /// Pruning's name test: what `entry_path` and `store` write, nothing else.
    #[test]
    fn only_names_this_module_writes_are_cache_files() {
        let h = "0123456789abcdef".repeat(4);
        assert_eq!(cache_file(&format!("{h}.part")), CacheFile::Entry);
        assert_eq!(cache_file(&format!("{h}.tmp.4242")), CacheFile::Temporary);
        for other in [
            format!("{h}.tmp."),
            format!("{h}.tmp.12a"),
            format!("{h}.part.bak"),
            format!("{}.part", &h[1..]),
            format!("{}.part", h.replace('a', "g")),
            "notes.part".to_string(),
            "x.tmp.1".to_string(),
        ] {
            assert_eq!(cache_file(&other), CacheFile::Other, "{other}");
        }
        // The names the cache really writes.
        let dir =
            std::env::temp_dir().join(format!("profscope-cache-names-{}", std::process::id()));
        let c = Cache::new(&dir, "o".into());
        let input = Input {
            path: "x".into(),
            format: crate::ingest::detect::InputFormat::ChromeJson,
            size_bytes: 0,
            alternates: vec![],
            parts: vec![],
        };
        let entry = c.entry_path(&input);
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(cache_file(&name), CacheFile::Entry);
        let tmp = entry.with_extension(format!("tmp.{}", std::process::id()));
        let tmp = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(cache_file(&tmp), CacheFile::Temporary);
    }

    #[test]
    fn entries_are_named_by_options_and_input() {
        let input = |p: &str| Input {
            path: p.into(),
            format: crate::ingest::detect::InputFormat::ChromeJson,
            size_bytes: 0,
            alternates: vec![],
            parts: vec![],
        };
        let a = Cache::new(Path::new("/c"), "x".into());
        let b = Cache::new(Path::new("/c"), "y".into());
        assert_ne!(
            a.entry_path(&input("/r/0.json")),
            b.entry_path(&input("/r/0.json"))
        );
        assert_ne!(
            a.entry_path(&input("/r/0.json")),
            a.entry_path(&input("/r/1.json"))
        );
        assert_eq!(
            a.entry_path(&input("/r/0.json")),
            a.entry_path(&input("/r/0.json"))
        );
        assert!(a.entry_path(&input("r")).starts_with("/c/v3"));
    }
}
