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
    Ok(c)
}

/// Tables and their columns, as the file declares them.
pub struct Schema {
    tables: HashMap<String, Vec<String>>,
}

impl Schema {
    pub fn probe(c: &Connection, path: &str) -> Result<Schema, IngestError> {
        let mut st = c
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .map_err(|e| err(path, e))?;
        let names: Vec<String> = st
            .query_map([], |r| r.get(0))
            .map_err(|e| err(path, e))?
            .collect::<Result<_, _>>()
            .map_err(|e| err(path, e))?;
        let mut tables = HashMap::new();
        for n in names {
            let mut st = c
                .prepare(&format!(
                    "PRAGMA table_info(\"{}\")",
                    n.replace('"', "\"\"")
                ))
                .map_err(|e| err(path, e))?;
            let cols: Vec<String> = st
                .query_map([], |r| r.get(1))
                .map_err(|e| err(path, e))?
                .collect::<Result<_, _>>()
                .map_err(|e| err(path, e))?;
            tables.insert(n, cols);
        }
        Ok(Schema { tables })
    }

    pub fn has(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    /// The first of `names` that `table` has (version differences such as `blockNum` vs the
    /// older `blockDim`), else `NULL`, as a select expression.
    pub fn col(&self, table: &str, names: &[&str]) -> String {
        self.tables
            .get(table)
            .and_then(|cols| names.iter().find(|n| cols.iter().any(|c| c == *n)))
            .map(|n| format!("\"{n}\""))
            .unwrap_or_else(|| "NULL".to_string())
    }
}
