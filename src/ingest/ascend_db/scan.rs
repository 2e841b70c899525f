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

/// One requested column: the first of these names the table has.
pub type Spec = &'static [&'static str];

/// Calls `f` with consecutive chunks of `table`'s rows (each `specs.len()` values wide).
pub(super) fn for_each_rows(
    cx: &mut Ctx<'_>,
    table: &str,
    specs: &[Spec],
    mut f: impl FnMut(&mut Ctx<'_>, &[i64]),
) -> Result<(), IngestError> {
    let Some(root) = cx.schema.table(table).map(|t| t.root) else {
        return Ok(());
    };
    let cols: Vec<Col> = specs
        .iter()
        .map(|names| match cx.schema.column(table, names) {
            Some((_, c)) if c.rowid_alias => Col::Rowid,
            Some((i, _)) => Col::Field(i),
            None => Col::Null,
        })
        .collect();
    if let Some(bt) = cx.btree.clone()
        && root > 0
    {
        match direct(&bt, root, &cols, |chunk| f(cx, chunk)) {
            Ok(()) => return Ok(()),
            Err(why) => {
                let p = cx.path.to_string();
                let table = table.to_string();
                cx.b.diag()
                    .add("db_direct_read_fallback", Severity::Info, || {
                        format!("{p}: {table} read through SQLite ({})", why.0)
                    });
                // Anything already delivered must not be delivered twice.
                if why.1 {
                    return Err(IngestError::Db {
                        path: cx.path.to_string(),
                        what: format!("{table}: direct read failed midway: {}", why.0),
                    });
                }
            }
        }
    }
    through_sqlite(cx, table, &cols, f)
}

/// (why, whether rows were already delivered).
struct Declined(String, bool);

fn direct(
    bt: &BTreeFile,
    root: u32,
    cols: &[Col],
    mut f: impl FnMut(&[i64]),
) -> Result<(), Declined> {
    let mut delivered = false;
    bt.scan_chunks(root, cols, |chunk| {
        delivered = true;
        f(chunk);
    })
    .map_err(|u| Declined(u.0, delivered))
}

fn through_sqlite(
    cx: &mut Ctx<'_>,
    table: &str,
    cols: &[Col],
    mut f: impl FnMut(&mut Ctx<'_>, &[i64]),
) -> Result<(), IngestError> {
    let t = cx.schema.table(table).expect("checked by the caller");
    let list: Vec<String> = cols
        .iter()
        .map(|c| match c {
            Col::Rowid => "rowid".to_string(),
            Col::Field(i) => format!("\"{}\"", t.columns[*i].name),
            Col::Null => "NULL".to_string(),
        })
        .collect();
    let select = format!("SELECT {} FROM \"{table}\"", list.join(", "));
    let path = cx.path;
    let (lo, hi) = rowid_span(cx.c, table);
    let width = cols.len();
    if hi - lo < PIECE_ROWS {
        let rows = read_range(cx.c, path, &select, None, width)?;
        f(cx, &rows);
        return Ok(());
    }
    let pieces: Vec<(i64, i64)> = (lo..=hi)
        .step_by(PIECE_ROWS as usize)
        .map(|a| (a, (a + PIECE_ROWS).min(hi + 1)))
        .collect();
    for wave in pieces.chunks(rayon::current_num_threads().max(1)) {
        let read: Vec<Result<Vec<i64>, IngestError>> = wave
            .par_iter()
            .map(|&range| {
                let c = open(path)?;
                read_range(&c, path, &select, Some(range), width)
            })
            .collect();
        for rows in read {
            f(cx, &rows?);
        }
    }
    Ok(())
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

fn read_range(
    c: &rusqlite::Connection,
    path: &str,
    select: &str,
    range: Option<(i64, i64)>,
    width: usize,
) -> Result<Vec<i64>, IngestError> {
    let sql = match range {
        Some(_) => format!("{select} WHERE rowid >= ?1 AND rowid < ?2"),
        None => select.to_string(),
    };
    let mut st = c.prepare(&sql).map_err(|e| err(path, e))?;
    let mut q = match range {
        Some((a, b)) => st.query([a, b]),
        None => st.query([]),
    }
    .map_err(|e| err(path, e))?;
    let mut out = Vec::new();
    while let Some(r) = q.next().map_err(|e| err(path, e))? {
        for i in 0..width {
            out.push(rows::int(r, i));
        }
    }
    Ok(out)
}
