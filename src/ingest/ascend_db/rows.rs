//! Reading cells whatever their storage class: profiler tables declare NUMERIC and TEXT
//! columns that hold integers (PYTORCH_API times are TEXT), and cells may be NULL.

use rusqlite::Row;
use rusqlite::types::ValueRef;

/// An integer cell; REAL is truncated, TEXT parsed, NULL or unparsable gives `none`.
pub fn int_or(r: &Row<'_>, i: usize, none: i64) -> i64 {
    match r.get_ref(i) {
        Ok(ValueRef::Integer(v)) => v,
        Ok(ValueRef::Real(v)) => v as i64,
        Ok(ValueRef::Text(t)) => text_int(t).unwrap_or(none),
        _ => none,
    }
}

/// An integer stored as TEXT (PYTORCH_API times): trimmed, parsed; None if not an integer.
/// Both readers (SQLite rows and the direct b-tree decoder) parse text through this.
pub fn text_int(t: &[u8]) -> Option<i64> {
    std::str::from_utf8(t).ok()?.trim().parse().ok()
}

/// [`int_or`] with -1 for missing values.
pub fn int(r: &Row<'_>, i: usize) -> i64 {
    int_or(r, i, -1)
}

/// A numeric cell as f64; NaN when NULL or not a number.
pub fn num(r: &Row<'_>, i: usize) -> f64 {
    match r.get_ref(i) {
        Ok(ValueRef::Integer(v)) => v as f64,
        Ok(ValueRef::Real(v)) => v,
        Ok(ValueRef::Text(t)) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// A text cell (numbers rendered); empty for NULL; invalid UTF-8 replaced.
pub fn text(r: &Row<'_>, i: usize) -> String {
    match r.get_ref(i) {
        Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
        Ok(ValueRef::Integer(v)) => v.to_string(),
        Ok(ValueRef::Real(v)) => v.to_string(),
        _ => String::new(),
    }
}
