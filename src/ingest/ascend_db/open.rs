//! Opening a profiler db read-only and immutable, and probing its schema once: which tables
//! exist and with which columns (`PRAGMA table_info`), so readers adapt to older CANN column names
//! and skip missing optional tables.

use super::super::error::IngestError;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;

pub(super) fn err(path: &str, e: rusqlite::Error) -> IngestError {
    IngestError::Db {
        path: path.to_string(),
        what: e.to_string(),
    }
}

/// Opens a db read-only and immutable (the URI form keeps SQLite from locking or journaling, so
/// no `-journal`/`-wal`/`-shm` file is ever created beside a user's db), with reads through mmap.
pub fn open(path: &str) -> Result<Connection, IngestError> {
    // SQLite would block on a FIFO and read a device: only regular files are opened.
    crate::ingest::source::open_regular(std::path::Path::new(path), u64::MAX).map_err(|e| {
        IngestError::Io {
            path: path.to_string(),
            source: e,
        }
    })?;
    let abs = std::fs::canonicalize(path).map_err(|e| IngestError::Io {
        path: path.to_string(),
        source: e,
    })?;
    let uri = format!(
        "file:{}?immutable=1",
        abs.display()
            .to_string()
            .replace('%', "%25")
            .replace('?', "%3f")
            .replace('#', "%23")
    );
    let c = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| err(path, e))?;
    // Page reads through mmap instead of read() copies; 64 GiB covers any profiler db.
    c.pragma_update(None, "mmap_size", 1i64 << 36)
        .map_err(|e| err(path, e))?;
    // A truncated file (its header counts more pages than it has) is otherwise refused whole
    // ("malformed") before any table is read; with this flag SQLite reads the pages that exist
    // and fails only the tables that need missing ones. The connection is read-only: nothing can
    // be written either way.
    c.pragma_update(None, "writable_schema", true)
        .map_err(|e| err(path, e))?;
    Ok(c)
}

/// One declared column.
pub struct Column {
    pub name: String,
    /// True for an `INTEGER PRIMARY KEY` column: an alias of the rowid, stored as NULL in records.
    pub rowid_alias: bool,
    /// True when the declared type gives the column INTEGER affinity (it contains `INT`, the
    /// first of SQLite's affinity rules): its values are stored as NULL, integers or reals.
    pub integer: bool,
}

/// One table: its columns in declared order and its b-tree root page.
pub struct Table {
    pub columns: Vec<Column>,
    pub root: u32,
}

/// Tables and their columns, as the file declares them.
pub struct Schema {
    tables: HashMap<String, Table>,
}

impl Schema {
    pub fn probe(c: &Connection, path: &str) -> Result<Schema, IngestError> {
        let mut st = c
            .prepare("SELECT name, rootpage, sql FROM sqlite_master WHERE type = 'table'")
            .map_err(|e| err(path, e))?;
        let found: Vec<(String, i64, Option<String>)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| err(path, e))?
            .collect::<Result<_, _>>()
            .map_err(|e| err(path, e))?;
        let mut tables = HashMap::new();
        for (n, root, sql) in found {
            let mut st = c
                .prepare(&format!(
                    "PRAGMA table_info(\"{}\")",
                    n.replace('"', "\"\"")
                ))
                .map_err(|e| err(path, e))?;
            let cols: Vec<(String, String, i64)> = st
                .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(5)?)))
                .map_err(|e| err(path, e))?
                .collect::<Result<_, _>>()
                .map_err(|e| err(path, e))?;
            let pks = cols.iter().filter(|c| c.2 > 0).count();
            let without_rowid = sql
                .as_deref()
                .is_some_and(|s| s.to_ascii_uppercase().contains("WITHOUT ROWID"));
            let columns = cols
                .into_iter()
                .map(|(name, ty, pk)| Column {
                    rowid_alias: pk == 1 && pks == 1 && ty.eq_ignore_ascii_case("INTEGER"),
                    integer: ty.to_ascii_uppercase().contains("INT"),
                    name,
                })
                .collect();
            // A WITHOUT ROWID table is an index b-tree: root 0 keeps the direct reader away.
            let root = if without_rowid { 0 } else { root.max(0) as u32 };
            tables.insert(n, Table { columns, root });
        }
        Ok(Schema { tables })
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.get(name)
    }
    /// The first of `names` that `table` has: its position and declaration.
    pub fn column(&self, table: &str, names: &[&str]) -> Option<(usize, &Column)> {
        let t = self.tables.get(table)?;
        names
            .iter()
            .find_map(|n| t.columns.iter().enumerate().find(|(_, c)| c.name == *n))
    }

    pub fn has(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    /// The first of `names` that `table` has (version differences such as `blockNum` vs the
    /// older `blockDim`), else `NULL`, as a select expression.
    pub fn col(&self, table: &str, names: &[&str]) -> String {
        self.column(table, names)
            .map(|(_, c)| format!("\"{}\"", c.name))
            .unwrap_or_else(|| "NULL".to_string())
    }
}

/// The `-wal` file SQLite would use for the db at `path`: beside the real file when `path` is a
/// symbolic link.
pub fn wal_path(path: &str) -> String {
    let real = std::fs::canonicalize(path)
        .map_or_else(|_| path.to_string(), |p| p.to_string_lossy().into_owned());
    format!("{real}-wal")
}
