//! The vendor's OVERLAP_ANALYSIS rows (Computing, Communication, Communication(Not Overlapped),
//! Free per device) kept as per-device sums, when the reader was asked for sums instead of one
//! event per row (`analyze` needs only the sums, for device_time's vendor comparison; exports and
//! SQL read the rows as `Overlap Analysis` events). Empty when the rows became events.

use super::ids::FileId;

/// The vendor's overlap kinds, in ENUM_OVERLAP_ANALYSIS_TYPE order (also the `Overlap Analysis`
/// thread names of trace_view.json).
pub const OVERLAP_KINDS: [&str; 4] = [
    "Computing",
    "Communication",
    "Communication(Not Overlapped)",
    "Free",
];

#[derive(Debug, Clone, Default)]
pub struct VendorOverlapTable {
    pub file: Vec<FileId>,
    pub device_id: Vec<i32>,
    /// Index into [`OVERLAP_KINDS`].
    pub kind: Vec<u8>,
    pub rows: Vec<u64>,
    pub dur_ns: Vec<i64>,
}

impl VendorOverlapTable {
    pub fn len(&self) -> usize {
        self.file.len()
    }
    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }
    pub fn push(&mut self, file: FileId, device_id: i32, kind: u8, rows: u64, dur_ns: i64) {
        self.file.push(file);
        self.device_id.push(device_id);
        self.kind.push(kind);
        self.rows.push(rows);
        self.dur_ns.push(dur_ns);
    }
}
