//! Run facts into the meta table (META_DATA incl. SCHEMA_VERSION, NPU_INFO, AICORE_FREQ's highest
//! sampled AI Core clock per device, SESSION_TIME_INFO, HOST_INFO, RANK_DEVICE_MAP) and STEP_TIME into the steps table.

use super::Ctx;
use super::open::err;
use super::rows;
use crate::diag::Severity;
use crate::ingest::error::IngestError;

pub(super) fn ingest(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    // (table, select, key prefix): each row gives key = prefix + first column, value = second.
    let sources = [
        ("META_DATA", "SELECT name, value FROM META_DATA", ""),
        ("NPU_INFO", "SELECT id, name FROM NPU_INFO", "npu_info."),
        (
            "SESSION_TIME_INFO",
            "SELECT 'start_ns', startTimeNs FROM SESSION_TIME_INFO UNION ALL SELECT 'end_ns', endTimeNs FROM SESSION_TIME_INFO",
            "session.",
        ),
        (
            "HOST_INFO",
            "SELECT 'uid', hostUid FROM HOST_INFO UNION ALL SELECT 'name', hostName FROM HOST_INFO",
            "host.",
        ),
        (
            "AICORE_FREQ",
            "SELECT deviceId, MAX(freq) FROM AICORE_FREQ GROUP BY deviceId",
            "aicore_freq_mhz.",
        ),
        (
            "RANK_DEVICE_MAP",
            "SELECT rankId, deviceId FROM RANK_DEVICE_MAP",
            "rank_device_map.",
        ),
    ];
    let path = cx.path;
    for (table, sql, prefix) in sources {
        if !cx.schema.has(table) {
            continue;
        }
        let r = pairs(cx, sql, prefix, table == "META_DATA");
        soft(cx, table, r);
    }
    let version = cx.b.intern("SCHEMA_VERSION");
    if cx.b.t.meta.get(cx.file, version).is_none() {
        cx.b.diag().add("schema_version_unknown", Severity::Info, || {
            format!("{path}: no META_DATA SCHEMA_VERSION (older CANN): columns probed with PRAGMA table_info")
        });
    }
    if cx.schema.has("STEP_TIME") {
        let r = steps(cx);
        soft(cx, "STEP_TIME", r);
    }
    Ok(())
}

/// An optional table that cannot be read (a renamed column, a damaged page) is a diagnostic.
fn soft(cx: &mut Ctx<'_>, table: &str, r: Result<(), IngestError>) {
    if let Err(e) = r {
        let (t, e) = (table.to_string(), e.to_string());
        cx.b.diag().add("table_unreadable", Severity::DataLoss, || {
            format!("{e} (reading the optional table {t}; skipped)")
        });
    }
}

/// Key-value rows of one meta source. With `unique` (META_DATA: one row per name, as torch_npu
/// writes it), a row repeating a name already read is not kept; the repeats are counted in a
/// `meta_duplicate` diagnostic per name (100,000 ENV_VARIABLES rows are one, not 100,000).
fn pairs(cx: &mut Ctx<'_>, sql: &str, prefix: &str, unique: bool) -> Result<(), IngestError> {
    let path = cx.path;
    let mut st = cx.c.prepare(sql).map_err(|e| err(path, e))?;
    let mut q = st.query([]).map_err(|e| err(path, e))?;
    let mut seen: std::collections::BTreeMap<crate::model::StrId, u64> = Default::default();
    while let Some(r) = q.next().map_err(|e| err(path, e))? {
        let key = cx.b.intern(&format!("{prefix}{}", rows::text(r, 0)));
        if unique {
            let n = seen.entry(key).or_default();
            *n += 1;
            if *n > 1 {
                continue;
            }
        }
        let value = cx.b.intern(&rows::text(r, 1));
        let m = &mut cx.b.t.meta;
        m.file.push(cx.file);
        m.key.push(key);
        m.value.push(value);
    }
    for (key, n) in seen.into_iter().filter(|&(_, n)| n > 1) {
        let name = crate::diag::cap_text(cx.b.tables().str(key), 200).into_owned();
        cx.b.diag().add_n("meta_duplicate", Severity::Warning, n - 1, || {
            format!("{path}: META_DATA holds {n} rows named `{name}`; the first is read, the other {} are not", n - 1)
        });
    }
    Ok(())
}

fn steps(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    let path = cx.path;
    let source = cx.b.intern("STEP_TIME");
    let mut st =
        cx.c.prepare("SELECT id, startNs, endNs FROM STEP_TIME")
            .map_err(|e| err(path, e))?;
    let mut q = st.query([]).map_err(|e| err(path, e))?;
    while let Some(r) = q.next().map_err(|e| err(path, e))? {
        let s = &mut cx.b.t.steps;
        s.file.push(cx.file);
        s.step.push(rows::int(r, 0));
        s.start_ns.push(rows::int(r, 1));
        s.end_ns.push(rows::int(r, 2));
        s.source.push(source);
    }
    Ok(())
}
