//! A direct reader of SQLite table b-trees from the mmap'ed file, for the big integer tables
//! (TASK, COMPUTE_TASK_INFO, OVERLAP_ANALYSIS, ...). The SQLite file format is frozen and
//! documented (sqlite.org/fileformat2.html); decoding leaf pages in parallel, without the VDBE,
//! is several times faster than `sqlite3_step`. Anything unusual (a non-empty `-wal` beside the db,
//! a non-UTF-8 database, an unknown page type, payload overflow, a malformed varint) returns
//! [`Unsupported`] and the caller falls back to rusqlite, so results never depend on which path
//! ran (tests/it/ascend_db.rs compares both on every real db).

use crate::ingest::source::{Access, Source};
use rayon::prelude::*;

/// One task's decoded rows and what the scan's map made of them (None: not decoded this wave).
type Decoded<T> = (Vec<i64>, Option<T>);

/// Why the direct path declined; the caller uses SQLite instead.
#[derive(Debug)]
pub struct Unsupported(pub String);

/// How the reason of a declined read starts when the b-tree itself is damaged (rows would be
/// lost or read from elsewhere), not merely unusual.
const DAMAGED: &str = "b-tree damaged: ";

impl Unsupported {
    /// True when the table's b-tree contradicts itself (a cycle, a page out of range or of the
    /// wrong type, rowids out of order or outside their parent's bounds): rows are lost or
    /// misplaced, whoever reads it.
    pub fn damaged(&self) -> bool {
        self.0.starts_with(DAMAGED)
    }
}

fn no<T>(why: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(why.into()))
}

/// Declines with a reason that marks the b-tree as damaged (see [`Unsupported::damaged`]).
fn damaged<T>(why: impl std::fmt::Display) -> Result<T, Unsupported> {
    Err(Unsupported(format!("{DAMAGED}{why}")))
}

/// A leaf page and the rowids its parents allow it: above `lo`, at most `hi`.
#[derive(Debug, Clone, Copy)]
struct Leaf {
    page: u32,
    lo: i64,
    hi: i64,
}

/// Which value of a row to extract.
#[derive(Debug, Clone, Copy)]
pub enum Col {
    /// The rowid (also the value of an `INTEGER PRIMARY KEY` column).
    Rowid,
    /// The n-th column of the record (declared order).
    Field(usize),
    /// A column the table lacks (older CANN): always -1.
    Null,
    /// The n-th column as a number in millionths (value × 10^6, rounded: REAL PMU values);
    /// [`NO_NUMBER`] when NULL or not a number.
    Millionths(usize),
}

/// A [`Col::Millionths`] cell that holds no number.
pub const NO_NUMBER: i64 = i64::MIN;
/// A [`Col::Millionths`] cell whose number no i64 of millionths holds (infinite, or past ±9e12).
pub const BAD_NUMBER: i64 = i64::MIN + 1;

/// The file's bytes: a read-only map, or (fuzzing, tests) bytes in memory.
enum Pages {
    Mapped(Source),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Pages {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Pages::Mapped(m) => m.bytes(),
            Pages::Owned(v) => v,
        }
    }
}

pub struct BTreeFile {
    map: Pages,
    /// The mapped file, opened read-only: leaves are read from it with `pread` (see
    /// [`Self::leaf`]); `None` for bytes in memory.
    file: Option<std::fs::File>,
    page_size: usize,
    usable: usize,
}

/// Leaf pages per parallel task.
const LEAVES_PER_TASK: usize = 256;

impl BTreeFile {
    /// Maps the file read-only (never locks or writes it) and checks the header.
    pub fn open(path: &str) -> Result<BTreeFile, Unsupported> {
        // An empty -wal (left by a reader such as MindStudio Insight) holds no changes.
        if std::fs::metadata(super::open::wal_path(path)).is_ok_and(|m| m.len() > 0) {
            return no("a non-empty -wal file is beside the db");
        }
        let map =
            Source::open_for(path, Access::ByPointer).map_err(|e| Unsupported(e.to_string()))?;
        let file = std::fs::File::open(path).map_err(|e| Unsupported(e.to_string()))?;
        let mut b = Self::from_pages(Pages::Mapped(map))?;
        b.file = Some(file);
        Ok(b)
    }

    /// A b-tree reader over bytes in memory (the fuzz target's entry).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<BTreeFile, Unsupported> {
        Self::from_pages(Pages::Owned(bytes))
    }

    fn from_pages(map: Pages) -> Result<BTreeFile, Unsupported> {
        if map.len() < 100 || &map[..16] != b"SQLite format 3\0" {
            return no("not an SQLite 3 file");
        }
        let ps = u16::from_be_bytes([map[16], map[17]]) as usize;
        let page_size = if ps == 1 { 65536 } else { ps };
        if !page_size.is_power_of_two() || page_size < 512 {
            return no("bad page size");
        }
        // A WAL-mode header is fine: with no (or an empty) -wal, the file is current.
        if u32::from_be_bytes([map[56], map[57], map[58], map[59]]) > 1 {
            return no("text encoding is not UTF-8");
        }
        let usable = page_size - map[20] as usize;
        if usable < 480 {
            return no("bad reserved space per page");
        }
        Ok(BTreeFile {
            map,
            file: None,
            page_size,
            usable,
        })
    }

    /// Leaf page `n` and its header offset. A mapped file's leaves are read with `pread` into
    /// `buf` instead of through the map: a fault maps only the few pages around a leaf (tables
    /// of a db written by interleaved inserts alternate page by page), and releasing decoded
    /// pages from the resident set flushed every thread's TLB; on the 20 M-row db reading
    /// leaves cut 270 K page faults and about a second of system time. A file cut short since
    /// it was opened is an error here, not a SIGBUS.
    fn leaf<'a>(&'a self, n: u32, buf: &'a mut Vec<u8>) -> Result<(&'a [u8], usize), Unsupported> {
        let Some(file) = &self.file else {
            return self.header(n);
        };
        self.page(n)?;
        buf.resize(self.page_size, 0);
        read_at(file, buf, (n as u64 - 1) * self.page_size as u64)
            .map_err(|e| Unsupported(format!("page {n}: {e}")))?;
        Ok((buf, if n == 1 { 100 } else { 0 }))
    }

    fn page(&self, n: u32) -> Result<&[u8], Unsupported> {
        let n = n as usize;
        if n == 0 || n * self.page_size > self.map.len() {
            return no(format!("page {n} out of range"));
        }
        Ok(&self.map[(n - 1) * self.page_size..n * self.page_size])
    }

    /// The b-tree header of page `n` (page 1 has the 100-byte file header first).
    fn header(&self, n: u32) -> Result<(&[u8], usize), Unsupported> {
        let p = self.page(n)?;
        Ok((p, if n == 1 { 100 } else { 0 }))
    }

    /// Pages in the file (the mapping's length over the page size).
    pub(super) fn page_count(&self) -> usize {
        self.map.len() / self.page_size
    }

    /// Leaf pages of the table b-tree rooted at `root`, in rowid order. Every page is visited at
    /// most once (a page reached twice is a cycle or a shared subtree: corrupt), page 1 (the
    /// schema) is never part of a data table, and every offset is checked against the page.
    /// Leaves are not read here: all children of an interior page sit at the same depth, so one
    /// child's page type tells whether they are leaves (reading every leaf's type byte faulted
    /// the whole file in before decoding began); [`Self::decode_leaf`] checks each leaf's type.
    #[cfg(test)]
    fn leaves(&self, root: u32) -> Result<Vec<u32>, Unsupported> {
        Ok(self.bounded_leaves(root)?.iter().map(|l| l.page).collect())
    }

    /// [`Self::leaves`] with the rowid bounds each leaf's parents give it: an interior cell's key
    /// is the largest rowid of its child's subtree, so child k holds rowids above key k-1 and at
    /// most key k, and the right child those above the last key. Keys must rise within a page
    /// and stay inside the page's own bounds.
    fn bounded_leaves(&self, root: u32) -> Result<Vec<Leaf>, Unsupported> {
        if root <= 1 {
            return no(format!("root page {root} is not a data table"));
        }
        let mut seen = vec![0u64; self.page_count() / 64 + 1];
        let mut out = Vec::new();
        let mut children: Vec<(u32, i64, i64)> = Vec::new();
        // A table b-tree is balanced: every leaf sits at the depth of the first one (a child
        // pointer to a page of another level loses the rows below the page it replaced, and
        // SQLite's integrity check says "Child page depth differs").
        let mut leaf_depth: Option<u32> = None;
        let mut at_leaf_depth = |n: u32, depth: u32| match *leaf_depth.get_or_insert(depth) {
            d if d == depth => Ok(()),
            d => damaged(format!(
                "page {n}: a leaf at depth {depth} where the b-tree's other leaves are at depth {d}"
            )),
        };
        // (page, known to be a leaf, rowids above, rowids at most, depth below the root)
        let mut stack = vec![(root, false, i64::MIN, i64::MAX, 0u32)];
        while let Some((n, leaf, lo, hi, depth)) = stack.pop() {
            let bit = (n as usize / 64, 1u64 << (n % 64));
            match seen.get_mut(bit.0) {
                Some(w) if *w & bit.1 == 0 => *w |= bit.1,
                Some(_) => return damaged(format!("page {n} is reached twice (a cycle)")),
                None => return damaged(format!("page {n} out of range")),
            }
            if leaf {
                at_leaf_depth(n, depth)?;
                out.push(Leaf { page: n, lo, hi });
                continue;
            }
            let (p, h) = self.header(n)?;
            match p[h] {
                0x0D => {
                    at_leaf_depth(n, depth)?;
                    out.push(Leaf { page: n, lo, hi });
                }
                0x05 => {
                    let cells = u16::from_be_bytes([p[h + 3], p[h + 4]]) as usize;
                    if h + 12 + 2 * cells > p.len() {
                        return damaged(format!("page {n}: cell count past the page"));
                    }
                    children.clear();
                    let mut below = lo;
                    for k in 0..cells {
                        let at = h + 12 + 2 * k;
                        let off = u16::from_be_bytes([p[at], p[at + 1]]) as usize;
                        let c = p.get(off..off + 4).ok_or_else(|| {
                            Unsupported(format!("{DAMAGED}page {n}: bad cell pointer"))
                        })?;
                        let (key, _) = varint(p, off + 4)?;
                        let key = key as i64;
                        if key <= below || key > hi {
                            return damaged(format!(
                                "page {n}: key {key} outside the rowids its place allows ({below}, {hi}]"
                            ));
                        }
                        children.push((u32::from_be_bytes([c[0], c[1], c[2], c[3]]), below, key));
                        below = key;
                    }
                    let right = u32::from_be_bytes([p[h + 8], p[h + 9], p[h + 10], p[h + 11]]);
                    children.push((right, below, hi));
                    if let Some(&(v, ..)) = children.iter().find(|c| c.0 <= 1) {
                        return damaged(format!("page {n}: child pointer to page {v}"));
                    }
                    let (cp, ch) = self.header(children[0].0)?;
                    let leaves_below = cp[ch] == 0x0D;
                    // Pushed in reverse so pages pop in key order.
                    stack.extend(
                        children
                            .iter()
                            .rev()
                            .map(|&(v, a, b)| (v, leaves_below, a, b, depth + 1)),
                    );
                }
                t => return damaged(format!("page {n}: type {t:#x} in a table b-tree")),
            }
            if out.len() + stack.len() > self.page_count() {
                return damaged("b-tree has more pages than the file");
            }
        }
        Ok(out)
    }

    /// Every row of the table rooted at `root` as `cols.len()` i64 values, row-major, in rowid
    /// order, handed to `f` in chunks (decoded in parallel waves, delivered in order). NULL (and
    /// BLOB) is -1, REAL is truncated, TEXT is parsed as an integer (-1 if not).
    pub fn scan_chunks(
        &self,
        root: u32,
        cols: &[Col],
        mut f: impl FnMut(&[i64]),
    ) -> Result<(), Unsupported> {
        self.scan_mapped(root, cols, |_| (), |chunk, ()| f(chunk))
    }

    /// [`Self::scan_chunks`] with `map` run on each chunk in the pool, right after the chunk is
    /// decoded, and its result handed to `f` with the chunk (in order, on this thread): work
    /// that needs no shared state (sums, lookups) runs in parallel instead of in `f`.
    pub fn scan_mapped<T: Send>(
        &self,
        root: u32,
        cols: &[Col],
        map: impl Fn(&[i64]) -> T + Sync,
        f: impl FnMut(&[i64], T),
    ) -> Result<(), Unsupported> {
        self.scan_table(root, cols, None, map, f)
    }

    /// [`Self::scan_mapped`] of a table whose columns have INTEGER affinity where `shape` is
    /// true: the first record of every leaf must have `shape.len()` fields and no TEXT or BLOB
    /// in an INTEGER column (a leaf of another table reached through a damaged pointer differs;
    /// a table widened by `ALTER TABLE ADD COLUMN` or a string stored in an INTEGER column also
    /// do, so the caller confirms with SQLite before it calls the b-tree damaged).
    pub fn scan_table<T: Send>(
        &self,
        root: u32,
        cols: &[Col],
        fields: Option<&[bool]>,
        map: impl Fn(&[i64]) -> T + Sync,
        mut f: impl FnMut(&[i64], T),
    ) -> Result<(), Unsupported> {
        let leaves = self.bounded_leaves(root)?;
        let tasks = rayon::current_num_threads().max(1) * 4;
        // Two sets of buffers, reused wave after wave (fresh ones would be fresh pages to fault
        // in): the pool decodes the next wave into one while this thread hands the other to `f`.
        let fresh = || -> Vec<Decoded<T>> { (0..tasks).map(|_| (Vec::new(), None)).collect() };
        let (mut ready, mut next) = (fresh(), fresh());
        let waves: Vec<&[Leaf]> = leaves.chunks(LEAVES_PER_TASK * tasks).collect();
        let Some(first) = waves.first() else {
            return Ok(());
        };
        let map = &map;
        self.decode_wave(first, cols, fields, map, &mut ready)?;
        for k in 0..waves.len() {
            let upcoming = waves.get(k + 1);
            let mut decoded = Ok(());
            rayon::in_place_scope(|s| {
                if let Some(u) = upcoming {
                    let (next, decoded) = (&mut next, &mut decoded);
                    s.spawn(move |_| *decoded = self.decode_wave(u, cols, fields, map, next));
                }
                for (buf, mapped) in ready.iter_mut() {
                    if let Some(m) = mapped.take() {
                        f(buf, m);
                    }
                }
            });
            decoded?;
            std::mem::swap(&mut ready, &mut next);
        }
        Ok(())
    }

    /// Decodes one wave of leaves in parallel, `LEAVES_PER_TASK` per buffer, in order, and maps
    /// each buffer.
    fn decode_wave<T: Send>(
        &self,
        wave: &[Leaf],
        cols: &[Col],
        fields: Option<&[bool]>,
        map: &(impl Fn(&[i64]) -> T + Sync),
        bufs: &mut [Decoded<T>],
    ) -> Result<(), Unsupported> {
        for b in bufs.iter_mut() {
            b.0.clear();
            b.1 = None;
        }
        wave.par_chunks(LEAVES_PER_TASK)
            .zip(bufs.par_iter_mut())
            .try_for_each(|(chunk, (out, mapped))| {
                let mut buf = Vec::new();
                for l in chunk {
                    self.decode_leaf(l, self.leaf(l.page, &mut buf)?, cols, fields, out)?;
                }
                *mapped = Some(map(out));
                Ok(())
            })
    }

    /// Decodes leaf `l` (`p`, its b-tree header at `h`); its rowids must rise and stay inside the
    /// bounds its parents give it.
    fn decode_leaf(
        &self,
        l: &Leaf,
        (p, h): (&[u8], usize),
        cols: &[Col],
        fields_declared: Option<&[bool]>,
        out: &mut Vec<i64>,
    ) -> Result<(), Unsupported> {
        let n = l.page;
        if p[h] != 0x0D {
            return damaged(format!(
                "page {n}: type {:#x} where the b-tree's depth puts a leaf",
                p[h]
            ));
        }
        let cells = u16::from_be_bytes([p[h + 3], p[h + 4]]) as usize;
        if h + 8 + 2 * cells > p.len() {
            return damaged(format!("page {n}: cell count past the page"));
        }
        let mut last = l.lo;
        let max_local = self.usable.saturating_sub(35);
        // Offsets of the leading fields up to the last one asked for (any count of columns).
        let wanted = cols
            .iter()
            .filter_map(|c| match c {
                Col::Field(f) | Col::Millionths(f) => Some(f + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        // On the stack for the usual tables; a heap vector only for more than 64 leading columns.
        out.reserve(cells * cols.len());
        let mut small = [(0u64, 0usize); 64];
        let mut big = Vec::new();
        let fields: &mut [(u64, usize)] = if wanted <= small.len() {
            &mut small[..wanted]
        } else {
            big.resize(wanted, (0, 0));
            &mut big
        };
        for k in 0..cells {
            let at = h + 8 + 2 * k;
            let off = u16::from_be_bytes([p[at], p[at + 1]]) as usize;
            let (len, a) = varint(p, off)?;
            let (rowid, b) = varint(p, a)?;
            if (rowid as i64) <= last || (rowid as i64) > l.hi {
                return damaged(format!(
                    "page {n}: rowid {} outside the rowids its place allows ({last}, {}]",
                    rowid as i64, l.hi
                ));
            }
            last = rowid as i64;
            if len > max_local as u64 {
                return no("payload overflow");
            }
            let rec = p
                .get(b..b + len as usize)
                .ok_or_else(|| Unsupported(format!("{DAMAGED}page {n}: record past page end")))?;
            // Record header: its size, then one serial type per column.
            let (hsize, i) = varint(rec, 0)?;
            if hsize > rec.len() as u64 {
                return no(format!("page {n}: record header past payload"));
            }
            if k == 0
                && let Some(want) = fields_declared
            {
                check_first_record(rec, (i, hsize as usize), want, n)?;
            }
            let nf = field_offsets(rec, (i, hsize as usize), fields, n)?;
            for c in cols {
                out.push(match *c {
                    Col::Rowid => rowid as i64,
                    Col::Field(f) if f < nf => value(rec, fields[f]),
                    Col::Millionths(f) if f < nf => millionths(rec, fields[f]),
                    Col::Millionths(_) => NO_NUMBER,
                    // Columns added by ALTER TABLE after the row was written read as NULL.
                    Col::Field(_) | Col::Null => -1,
                });
            }
        }
        // A divider key is the largest rowid of the subtree on its left (SQLite sets it so when
        // it balances, and inserts keep it): a leaf that ends below its divider holds rows of
        // another page, or lost some (the caller confirms with SQLite's quick_check).
        if l.hi != i64::MAX && last != l.hi {
            return damaged(format!(
                "page {n}: its last rowid {last} is not the divider key {} above it",
                l.hi
            ));
        }
        Ok(())
    }
}

/// The first record of a leaf against its table's declaration: as many fields as columns, and
/// no TEXT or BLOB where an INTEGER is declared (a page of another table reads otherwise).
#[cold]
fn check_first_record(
    rec: &[u8],
    (first, hsize): (usize, usize),
    want: &[bool],
    n: u32,
) -> Result<(), Unsupported> {
    let mut count = 0;
    let mut at = first;
    while at < hsize {
        let (st, next) = varint(rec, at)?;
        if want.get(count).is_some_and(|&int| int && st >= 12) {
            return damaged(format!(
                "page {n}: TEXT or BLOB in INTEGER column {count} of its first record"
            ));
        }
        at = next;
        count += 1;
    }
    if count != want.len() {
        return damaged(format!(
            "page {n}: a record of {count} fields in a table of {} columns",
            want.len()
        ));
    }
    Ok(())
}

/// Fills `fields` with the (serial type, body offset) of a record's leading fields, from its
/// header (serial types from byte `first` to `hsize`); returns how many the record has, at most
/// `fields.len()`. Each field is checked to lie in the payload.
#[inline]
fn field_offsets(
    rec: &[u8],
    (first, hsize): (usize, usize),
    fields: &mut [(u64, usize)],
    n: u32,
) -> Result<usize, Unsupported> {
    let mut i = first;
    let mut body = hsize;
    let mut nf = 0;
    while i < hsize {
        let (st, j) = varint(rec, i)?;
        i = j;
        if nf == fields.len() {
            // The fields asked for are found (and checked to lie in the payload).
            break;
        }
        fields[nf] = (st, body);
        nf += 1;
        body = serial_len(st)
            .and_then(|l| body.checked_add(l))
            .filter(|&e| e <= rec.len())
            .ok_or_else(|| Unsupported(format!("page {n}: record body past payload")))?;
    }
    Ok(nf)
}

/// Fills `buf` from `file` at byte `at`.
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut done, mut at) = (0, at);
        while done < buf.len() {
            match std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], at)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                k => (done, at) = (done + k, at + k as u64),
            }
        }
        Ok(())
    }
}

#[inline(always)]
fn varint(b: &[u8], at: usize) -> Result<(u64, usize), Unsupported> {
    // Most varints in a record (lengths, serial types, small values) are one byte.
    match b.get(at) {
        Some(&x) if x < 0x80 => Ok((x as u64, at + 1)),
        _ => varint_long(b, at),
    }
}

#[inline(never)]
fn varint_long(b: &[u8], mut at: usize) -> Result<(u64, usize), Unsupported> {
    let mut v: u64 = 0;
    for k in 0..9 {
        let Some(&x) = b.get(at) else {
            return no("varint past end");
        };
        at += 1;
        if k == 8 {
            return Ok(((v << 8) | x as u64, at));
        }
        v = (v << 7) | (x & 0x7f) as u64;
        if x < 0x80 {
            return Ok((v, at));
        }
    }
    unreachable!()
}

/// Bytes of a value of serial type `st`; None for the reserved types 10 and 11 (corrupt) or a
/// length that does not fit in memory.
fn serial_len(st: u64) -> Option<usize> {
    Some(match st {
        0 | 8 | 9 => 0,
        10 | 11 => return None,
        1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        5 => 6,
        6 | 7 => 8,
        n => usize::try_from((n - 12) / 2).ok()?,
    })
}

#[inline(always)]
/// A numeric field × 10^6, rounded; [`NO_NUMBER`] for NULL, text and blobs, [`BAD_NUMBER`] for
/// a number past ±9e12 or not finite.
fn millionths(rec: &[u8], (st, at): (u64, usize)) -> i64 {
    let v = match st {
        1..=6 | 8 | 9 => value(rec, (st, at)) as f64,
        7 => match rec.get(at..at + 8) {
            Some(w) => f64::from_be_bytes(w.try_into().expect("8 bytes")),
            None => return NO_NUMBER,
        },
        _ => return NO_NUMBER,
    };
    let m = (v * 1e6).round();
    if v.abs() < 9.0e12 {
        m as i64
    } else {
        BAD_NUMBER
    }
}

fn value(rec: &[u8], (st, at): (u64, usize)) -> i64 {
    // A big-endian two's complement integer of n bytes: one 8-byte load shifted into place when
    // 8 bytes are there, else byte by byte (the record's last bytes).
    let be = |n: usize| -> i64 {
        if let Some(w) = rec.get(at..at + 8) {
            let v = i64::from_be_bytes(w.try_into().expect("8 bytes"));
            return v >> (64 - 8 * n);
        }
        let b = &rec[at..at + n];
        let mut v: i64 = if b[0] & 0x80 != 0 { -1 } else { 0 };
        for &x in b {
            v = (v << 8) | x as i64;
        }
        v
    };
    match st {
        1 => be(1),
        2 => be(2),
        3 => be(3),
        4 => be(4),
        5 => be(6),
        6 => be(8),
        7 => f64::from_bits(be(8) as u64) as i64,
        8 => 0,
        9 => 1,
        n if n >= 13 && n % 2 == 1 => {
            let s = &rec[at..at + ((n - 13) / 2) as usize];
            super::rows::text_int(s).unwrap_or(-1)
        }
        _ => -1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_values() {
        assert_eq!(varint(&[0x7f], 0).unwrap(), (127, 1));
        assert_eq!(varint(&[0x81, 0x00], 0).unwrap(), (128, 2));
        assert!(varint(&[0x81], 0).is_err());
        // serial type 2 (big-endian i16) of -2, type 5 (i48) of 2^40.
        assert_eq!(value(&[0xff, 0xfe], (2, 0)), -2);
        assert_eq!(value(&[1, 0, 0, 0, 0, 0], (5, 0)), 1 << 40);
        // TEXT "123" (serial type 13 + 2*3 = 19).
        assert_eq!(value(b"123", (19, 0)), 123);
        assert_eq!(value(b"12a", (19, 0)), -1);
    }

    /// Every integer serial type reads the same value through the 8-byte load (bytes follow it
    /// in the record) and the byte loop (it ends the record), at the two's complement value of
    /// its n bytes.
    #[test]
    fn integers_read_alike_with_and_without_bytes_after_them() {
        for (st, n) in [(1u64, 1usize), (2, 2), (3, 3), (4, 4), (5, 6), (6, 8)] {
            let shift = 64 - 8 * n as u32;
            for v in [0i64, 1, -1, 127, -128, 0x1234, -0x1234, i64::MAX, i64::MIN] {
                let expect = v.wrapping_shl(shift) >> shift;
                let bytes = &v.to_be_bytes()[8 - n..];
                let mut tight = vec![0x55u8; 3];
                tight.extend_from_slice(bytes);
                let mut padded = tight.clone();
                padded.extend([0xAB; 9]);
                assert_eq!(value(&tight, (st, 3)), expect, "type {st} of {v}");
                assert_eq!(value(&padded, (st, 3)), expect, "type {st} of {v}, padded");
            }
        }
    }

    /// The leaves by reading every page's type (the walk `leaves` did before it skipped leaf
    /// reads): the reference for the depth rule.
    fn leaves_reading_every_page(bt: &BTreeFile, root: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let (p, h) = bt.header(n).unwrap();
            if p[h] == 0x0D {
                out.push(n);
                continue;
            }
            let cells = u16::from_be_bytes([p[h + 3], p[h + 4]]) as usize;
            stack.push(u32::from_be_bytes([
                p[h + 8],
                p[h + 9],
                p[h + 10],
                p[h + 11],
            ]));
            for k in (0..cells).rev() {
                let off = u16::from_be_bytes([p[h + 12 + 2 * k], p[h + 13 + 2 * k]]) as usize;
                stack.push(u32::from_be_bytes([
                    p[off],
                    p[off + 1],
                    p[off + 2],
                    p[off + 3],
                ]));
            }
        }
        out
    }

    /// On a real torch_npu db (ascend-pt/db/level1 rank 0), every table interior page as a root
    /// gives the same leaves with and without reading them; a page at leaf depth that is not a
    /// leaf (its type byte overwritten in a copy) makes the scan fail (the caller then reads the
    /// table through SQLite) instead of being decoded as a leaf.
    #[test]
    fn leaves_by_depth_equal_the_full_walk_and_a_wrong_leaf_is_refused() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/samples/ascend-pt/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/",
            "ascend_pytorch_profiler_0.db"
        );
        let bytes = std::fs::read(path).unwrap();
        let bt = BTreeFile::from_bytes(bytes.clone()).unwrap();
        let interiors: Vec<u32> = (2..=bt.page_count() as u32)
            .filter(|&n| bt.header(n).unwrap().0[0] == 0x05)
            .collect();
        assert!(interiors.len() > 10, "{} interior pages", interiors.len());
        let mut target = None;
        for &root in &interiors {
            let got = bt.leaves(root).unwrap();
            assert_eq!(got, leaves_reading_every_page(&bt, root), "root {root}");
            if target.is_none() && got.len() >= 2 && bt.header(got[0]).unwrap().0[0] == 0x0D {
                target = Some((root, got[1]));
            }
        }
        // Leaves read with pread from the file decode exactly as from the bytes in memory.
        let from_file = BTreeFile::open(path).unwrap();
        assert!(from_file.file.is_some());
        let cols = [Col::Rowid, Col::Field(0), Col::Field(1), Col::Field(5)];
        let rows = |bt: &BTreeFile, root| {
            let mut v = Vec::new();
            bt.scan_chunks(root, &cols, |c| v.extend_from_slice(c))
                .map(|()| v)
        };
        let mut values = 0;
        for &root in &interiors {
            let want = rows(&bt, root).ok();
            assert_eq!(rows(&from_file, root).ok(), want, "root {root}");
            values += want.map_or(0, |v| v.len());
        }
        assert!(
            values > 50_000,
            "{values} values: the comparison read real rows"
        );
        let (root, victim) = target.expect("an interior page over leaves");
        let mut broken = bytes;
        broken[(victim as usize - 1) * bt.page_size] = 0x05;
        let bt = BTreeFile::from_bytes(broken).unwrap();
        assert!(bt.leaves(root).unwrap().contains(&victim));
        let err = bt.scan_chunks(root, &[Col::Rowid], |_| {}).unwrap_err();
        assert!(
            err.0.contains("where the b-tree's depth puts a leaf"),
            "{}",
            err.0
        );
    }

    /// A db cut short after it was opened (a copy of the real level1 rank 0 db, truncated
    /// before its last leaf): reading that leaf is an error naming the page, not a SIGBUS or
    /// rows of zeros.
    #[cfg(unix)]
    #[test]
    fn a_leaf_cut_off_after_opening_is_an_error() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/samples/ascend-pt/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/",
            "ascend_pytorch_profiler_0.db"
        );
        let dir = std::env::temp_dir().join(format!("profscope-btree-cut-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("cut.db");
        std::fs::copy(path, &copy).unwrap();
        let bt = BTreeFile::open(copy.to_str().unwrap()).unwrap();
        // The table with the most leaves, and its last leaf.
        let (root, last) = (2..=bt.page_count() as u32)
            .filter_map(|r| bt.leaves(r).ok().map(|l| (r, l)))
            .max_by_key(|(_, l)| l.len())
            .map(|(r, l)| (r, *l.iter().max().unwrap()))
            .unwrap();
        let keep = (last as u64 - 1) * bt.page_size as u64;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_len(keep)
            .unwrap();
        let err = bt.scan_chunks(root, &[Col::Rowid], |_| {}).unwrap_err();
        assert!(err.0.contains(&format!("page {last}")), "{}", err.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
