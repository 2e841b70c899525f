//! STRING_IDS, loaded once into the interner: raw id → [`StrId`]. CANN ids are small and dense;
//! torch_npu's start at 1<<28 and 2<<28, so those go to a hash map.

use super::open::err;
use super::rows;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::error::IngestError;
use crate::model::StrId;
use crate::model::hash::FxHashMap;
use rusqlite::Connection;

const DENSE: i64 = 1 << 22;

#[derive(Default)]
pub struct StringIds {
    dense: Vec<StrId>,
    sparse: FxHashMap<i64, StrId>,
}

impl StringIds {
    pub fn load(
        c: &Connection,
        path: &str,
        b: &mut TablesBuilder,
    ) -> Result<StringIds, IngestError> {
        let mut s = StringIds::default();
        let mut st = c
            .prepare("SELECT id, value FROM STRING_IDS")
            .map_err(|e| err(path, e))?;
        let mut q = st.query([]).map_err(|e| err(path, e))?;
        while let Some(r) = q.next().map_err(|e| err(path, e))? {
            let id = rows::int(r, 0);
            let v = match r.get_ref(1) {
                Ok(rusqlite::types::ValueRef::Text(t)) => b.intern(&String::from_utf8_lossy(t)),
                _ => b.intern(&rows::text(r, 1)),
            };
            s.insert(id, v);
        }
        Ok(s)
    }

    fn insert(&mut self, id: i64, v: StrId) {
        if (0..DENSE).contains(&id) {
            let i = id as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, StrId::EMPTY);
            }
            self.dense[i] = v;
        } else {
            self.sparse.insert(id, v);
        }
    }

    /// The string of a raw id; empty for unknown ids, NULL (-1) and 4294967295 (empty).
    pub fn get(&self, id: i64) -> StrId {
        if (0..DENSE).contains(&id) {
            self.dense.get(id as usize).copied().unwrap_or(StrId::EMPTY)
        } else {
            self.sparse.get(&id).copied().unwrap_or(StrId::EMPTY)
        }
    }
}

/// An ENUM_* table (id → name) as interned strings; empty when the table is missing.
pub fn load_enum(
    c: &Connection,
    path: &str,
    table: &str,
    b: &mut TablesBuilder,
) -> Result<FxHashMap<i64, StrId>, IngestError> {
    let mut m = FxHashMap::default();
    let mut st = c
        .prepare(&format!("SELECT id, name FROM {table}"))
        .map_err(|e| err(path, e))?;
    let mut q = st.query([]).map_err(|e| err(path, e))?;
    while let Some(r) = q.next().map_err(|e| err(path, e))? {
        let v = b.intern(&rows::text(r, 1));
        m.insert(rows::int(r, 0), v);
    }
    Ok(m)
}
