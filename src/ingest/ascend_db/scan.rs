//! Integer-table scans, one interface over two engines: the direct b-tree reader ([`super::btree`],
//! parallel, from the mmap) and SQLite (rowid ranges on separate read-only connections, in
//! parallel waves). Rows arrive in rowid order, in chunks, row-major, one i64 per requested
//! column: NULL is -1, TEXT is parsed as an integer, REAL truncated; a column the table lacks
//! (older CANN) reads as -1.

use super::Ctx;
use super::btree::{BTreeFile, Col};
use super::open::{err, open};
use super::rows;
use crate::diag::Severity;
use crate::ingest::error::IngestError;
use rayon::prelude::*;

/// Rowids per SQLite piece.
const PIECE_ROWS: i64 = 1 << 20;

/// One requested column: the first of these names the table has. A spec that starts with
/// [`MILLIONTHS`] asks for the column as a number × 10^6 (REAL values), [`NO_NUMBER`] when none.
pub type Spec = &'static [&'static str];

/// The marker of a [`Spec`] read in millionths.
pub const MILLIONTHS: &str = "\u{1}millionths";
pub use super::btree::{BAD_NUMBER, NO_NUMBER};

/// Calls `f` with consecutive chunks of `table`'s rows (each `specs.len()` values wide).
pub(super) fn for_each_rows(
    cx: &mut Ctx<'_>,
    table: &str,
    specs: &[Spec],
    mut f: impl FnMut(&mut Ctx<'_>, &[i64]),
) -> Result<(), IngestError> {
    for_each_rows_mapped(cx, table, specs, |_| (), |cx, rows, ()| f(cx, rows))
}

/// [`for_each_rows`] with `map` applied to each chunk first, in parallel on the direct path
/// (right after the chunk is decoded), on this thread through SQLite; `f` gets both, in order.
pub(super) fn for_each_rows_mapped<T: Send>(
    cx: &mut Ctx<'_>,
    table: &str,
    specs: &[Spec],
    map: impl Fn(&[i64]) -> T + Sync,
    mut f: impl FnMut(&mut Ctx<'_>, &[i64], T),
) -> Result<(), IngestError> {
    let Some(root) = cx.schema.table(table).map(|t| t.root) else {
        return Ok(());
    };
    let cols: Vec<Col> = specs
        .iter()
        .map(|names| match names.split_first() {
            Some((&MILLIONTHS, names)) => match cx.schema.column(table, names) {
                Some((i, _)) => Col::Millionths(i),
                None => Col::Null,
            },
            _ => match cx.schema.column(table, names) {
                Some((_, c)) if c.rowid_alias => Col::Rowid,
                Some((i, _)) => Col::Field(i),
                None => Col::Null,
            },
        })
        .collect();
    let mut skip = 0;
    if let Some(bt) = cx.btree.clone()
        && root > 0
    {
        let shape: Option<Vec<bool>> = cx
            .schema
            .table(table)
            .map(|t| t.columns.iter().map(|c| c.integer).collect());
        match direct(&bt, root, &cols, shape.as_deref(), &map, |chunk, m| {
            f(cx, chunk, m)
        }) {
            Ok(()) => return Ok(()),
            Err(Declined(why, delivered, broken)) => {
                let p = cx.path.to_string();
                let table = table.to_string();
                // What the direct reader took for damage is confirmed by SQLite's own check
                // before it is reported; SQLite reads the same pointers, so rows may be missing
                // or misplaced there too.
                if broken && let Some(check) = quick_check(cx.c) {
                    cx.b.diag().add("db_damaged", Severity::DataLoss, || {
                        format!("{p}: {table}: {why}; SQLite's quick_check agrees ({check}); read through SQLite, which follows the same pages, so rows may be missing or misplaced")
                    });
                }
                cx.b.diag()
                    .add("db_direct_read_fallback", Severity::Info, || {
                        let from = if delivered > 0 {
                            format!(" from row {delivered}")
                        } else {
                            String::new()
                        };
                        format!("{p}: {table} read through SQLite{from} ({why})")
                    });
                // Rows already delivered are not delivered twice: both readers walk the table
                // in rowid order, so SQLite resumes at the same row.
                skip = delivered;
            }
        }
    }
    through_sqlite(cx, table, &cols, skip, |cx, rows| {
        let m = map(rows);
        f(cx, rows, m)
    })
}

/// SQLite's `PRAGMA quick_check(1)` answer when it is not `ok` (a failed check is its error).
fn quick_check(c: &rusqlite::Connection) -> Option<String> {
    match c.query_row("PRAGMA quick_check(1)", [], |r| r.get::<_, String>(0)) {
        Ok(s) if s == "ok" => None,
        Ok(s) => Some(crate::diag::cap_text(&s.replace('\n', "; "), 300).into_owned()),
        Err(e) => Some(e.to_string()),
    }
}

/// (why, rows already delivered, the b-tree is damaged).
struct Declined(String, usize, bool);

fn direct<T: Send>(
    bt: &BTreeFile,
    root: u32,
    cols: &[Col],
    fields: Option<&[bool]>,
    map: &(impl Fn(&[i64]) -> T + Sync),
    mut f: impl FnMut(&[i64], T),
) -> Result<(), Declined> {
    let mut delivered = 0;
    bt.scan_table(root, cols, fields, map, |chunk, m| {
        delivered += chunk.len() / cols.len().max(1);
        f(chunk, m);
    })
    .map_err(|u| {
        let broken = u.damaged();
        Declined(u.0, delivered, broken)
    })
}

/// Reads `table` through SQLite after its first `skip` rows. A read that fails midway (a
/// truncated or damaged file) keeps the rows read before the failure and says how many.
fn through_sqlite(
    cx: &mut Ctx<'_>,
    table: &str,
    cols: &[Col],
    skip: usize,
    mut f: impl FnMut(&mut Ctx<'_>, &[i64]),
) -> Result<(), IngestError> {
    let t = cx.schema.table(table).expect("checked by the caller");
    let list: Vec<String> = cols
        .iter()
        .map(|c| match c {
            Col::Rowid => "rowid".to_string(),
            Col::Field(i) => format!("\"{}\"", t.columns[*i].name.replace('"', "\"\"")),
            Col::Millionths(i) => {
                let c = format!("\"{}\"", t.columns[*i].name.replace('"', "\"\""));
                // As the direct reader: NULL, text and blobs are no number, a number past
                // ±9e12 (or infinite) is BAD_NUMBER.
                format!(
                    "CASE WHEN typeof({c}) NOT IN ('integer', 'real') THEN {NO_NUMBER} WHEN abs({c}) < 9e12 THEN CAST(ROUND({c} * 1e6) AS INTEGER) ELSE {BAD_NUMBER} END"
                )
            }
            Col::Null => "NULL".to_string(),
        })
        .collect();
    let select = format!("SELECT {} FROM \"{table}\"", list.join(", "));
    let path = cx.path;
    let width = cols.len();
    let (lo, hi) = rowid_span(cx.c, table);
    // Parallel rowid ranges pay off on big, dense tables; sparse rowids (a span far larger than
    // the file could hold rows) or a resumed read take one ordered query.
    let max_rows = (cx.size_bytes / MIN_ROW_BYTES) as i128;
    let span = hi as i128 - lo as i128;
    if skip > 0 || span < PIECE_ROWS as i128 || span > 2 * max_rows {
        let sql = if skip > 0 {
            format!("{select} ORDER BY rowid LIMIT -1 OFFSET {skip}")
        } else {
            select
        };
        let (rows, failed) = read_range(cx.c, path, &sql, None, width)?;
        f(cx, &rows);
        if let Some(e) = failed {
            lost(cx, table, skip + rows.len() / width.max(1), &e);
        }
        return Ok(());
    }
    let pieces: Vec<(i64, i64)> = (lo..=hi)
        .step_by(PIECE_ROWS as usize)
        .map(|a| (a, a.saturating_add(PIECE_ROWS).min(hi.saturating_add(1))))
        .collect();
    let mut read_rows = 0;
    for wave in pieces.chunks(rayon::current_num_threads().max(1)) {
        let read: Vec<Result<Partial, IngestError>> = wave
            .par_iter()
            .map(|&range| {
                let c = open(path)?;
                read_range(&c, path, &select, Some(range), width)
            })
            .collect();
        for r in read {
            let (rows, failed) = r?;
            read_rows += rows.len() / width.max(1);
            f(cx, &rows);
            if let Some(e) = failed {
                lost(cx, table, read_rows, &e);
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Bytes a table row takes in the file at least (cell pointer, lengths, rowid, record header):
/// bounds row-count estimates by the file size, never by a rowid range.
pub(super) const MIN_ROW_BYTES: u64 = 4;

/// Records that `table` could be read only in part.
fn lost(cx: &mut Ctx<'_>, table: &str, rows: usize, e: &str) {
    let p = cx.path.to_string();
    let (t, e) = (table.to_string(), e.to_string());
    cx.b.note_truncated(&p);
    cx.b.diag().add("truncated", Severity::DataLoss, || {
        format!(
            "{p}: {t}: reading stopped after {rows} rows ({e}); the rest of the table is missing"
        )
    });
}

/// (min rowid, max rowid) of `table`, (0, -1) when empty. Two queries: SQLite answers a lone
/// min() or max() from the b-tree's edge, but scans the whole table for both in one SELECT.
pub(super) fn rowid_span(c: &rusqlite::Connection, table: &str) -> (i64, i64) {
    let edge = |f: &str, none: i64| {
        c.query_row(&format!("SELECT {f}(rowid) FROM \"{table}\""), [], |r| {
            Ok(rows::int_or(r, 0, none))
        })
        .unwrap_or(none)
    };
    (edge("min", 0), edge("max", -1))
}

/// Rows read (row-major) and the error that stopped the read early, if any.
type Partial = (Vec<i64>, Option<String>);

/// The rows of `select` (in `range` of rowids), and the error that stopped the read early, if any
/// (rows before it are kept). Preparing the statement failing is an error.
fn read_range(
    c: &rusqlite::Connection,
    path: &str,
    select: &str,
    range: Option<(i64, i64)>,
    width: usize,
) -> Result<Partial, IngestError> {
    let sql = match range {
        Some(_) => format!("{select} WHERE rowid >= ?1 AND rowid < ?2"),
        None => select.to_string(),
    };
    let mut st = c.prepare(&sql).map_err(|e| err(path, e))?;
    let q = match range {
        Some((a, b)) => st.query([a, b]),
        None => st.query([]),
    };
    let mut q = match q {
        Ok(q) => q,
        Err(e) => return Ok((Vec::new(), Some(e.to_string()))),
    };
    let mut out = Vec::new();
    loop {
        match q.next() {
            Ok(Some(r)) => {
                for i in 0..width {
                    out.push(rows::int(r, i));
                }
            }
            Ok(None) => return Ok((out, None)),
            Err(e) => return Ok((out, Some(e.to_string()))),
        }
    }
}
