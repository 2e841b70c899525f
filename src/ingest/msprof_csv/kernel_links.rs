//! A text export's trace_view.json names its device tasks but not their details; the
//! kernel_details.csv beside it has them (op type, block dims, shapes, dtypes, formats). This
//! links each CSV compute row to its `Ascend Hardware` event, so the kernels table (op_types,
//! efficiency) is the same from a text export as from a db. Rows are matched on (start, name):
//! the CSV's `Start Time(us)` and the event's `ts` are the same decimal µs (3 decimals, CANN's
//! `DivideByPowersOfTenWithPrecision`), so the match is exact.

use crate::ingest::builder::TablesBuilder;
use crate::model::events::NO_ROW;
use crate::model::kernels::KernelRow;
use crate::model::{FileId, StrId};

/// The `Ascend Hardware` events of one file without a kernels row, by (start, name, event row).
pub(super) struct Links {
    events: Vec<(i64, StrId, u32)>,
    pub(super) linked: u64,
    pub(super) unmatched: u64,
}

impl Links {
    /// The candidate events of `file` (none when the file already has kernel rows: a db).
    pub(super) fn new(b: &TablesBuilder, file: FileId) -> Links {
        let t = b.tables();
        let hardware = t.strings.lookup("Ascend Hardware");
        let device: Vec<bool> = (0..t.processes.len())
            .map(|p| t.processes.file[p] == file && Some(t.processes.name[p]) == hardware)
            .collect();
        let mut events: Vec<(i64, StrId, u32)> = Vec::new();
        if hardware.is_some() && device.iter().any(|&d| d) {
            for i in 0..t.events.len() {
                if t.events.kernel[i] == NO_ROW && device[t.event_process(i).idx()] {
                    events.push((t.events.ts_ns[i], t.events.name[i], i as u32));
                }
            }
        }
        events.sort_unstable();
        Links {
            events,
            linked: 0,
            unmatched: 0,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Gives the event starting at `ts_ns` named `name` the kernels row of `row` (the first such
    /// event still without one); counts the rows no event matches.
    pub(super) fn link(&mut self, b: &mut TablesBuilder, ts_ns: i64, name: StrId, row: KernelRow) {
        let lo = self.events.partition_point(|e| (e.0, e.1) < (ts_ns, name));
        let hit = self.events[lo..]
            .iter()
            .take_while(|e| e.0 == ts_ns && e.1 == name)
            .map(|e| e.2 as usize)
            .find(|&i| b.tables().events.kernel[i] == NO_ROW);
        match hit {
            Some(i) => {
                let k = b.kernel_row(row);
                b.t.events.kernel[i] = k;
                self.linked += 1;
            }
            None => self.unmatched += 1,
        }
    }
}
