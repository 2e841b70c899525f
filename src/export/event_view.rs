//! The denormalized events view: one row per event with its file, rank, process, thread, category
//! and kernel op/task type beside the event's own columns. One definition for every sink: the
//! Parquet export writes it as Arrow arrays, `profscope query` (feature `sql`) as a polars frame.
//! Column order and names are a contract (docs/export.md, "Parquet columns").

use crate::model::events::NO_ROW;
use crate::model::{EventKind, ProcessId, Tables, ThreadId};

/// The value type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    I32,
    I64,
}

/// Name and type of every column, in order.
pub const COLUMNS: &[(&str, Kind)] = &[
    ("file", Kind::Str),
    ("file_rank", Kind::I32),
    ("process", Kind::Str),
    ("process_role", Kind::Str),
    ("device_id", Kind::I32),
    ("thread", Kind::Str),
    ("pid", Kind::I64),
    ("tid", Kind::I64),
    ("name", Kind::Str),
    ("cat", Kind::Str),
    ("category", Kind::Str),
    ("kind", Kind::Str),
    ("ts_ns", Kind::I64),
    ("dur_ns", Kind::I64),
    ("stream", Kind::I32),
    ("task_type", Kind::Str),
    ("op_type", Kind::Str),
    ("kernel_task_type", Kind::Str),
    ("connection_id", Kind::I64),
    ("correlation_id", Kind::I64),
    ("graph_id", Kind::I64),
];

/// A column's values, read row by row (`0..rows`).
pub enum Values<'a> {
    Str(Box<dyn Fn(usize) -> &'a str + 'a>),
    I32(Box<dyn Fn(usize) -> i32 + 'a>),
    I64(Box<dyn Fn(usize) -> i64 + 'a>),
}

/// The view over one set of tables; labels are built once.
pub struct EventView<'a> {
    t: &'a Tables,
    thread_labels: Vec<String>,
    process_labels: Vec<String>,
}

impl<'a> EventView<'a> {
    pub fn new(t: &'a Tables) -> EventView<'a> {
        EventView {
            t,
            thread_labels: (0..t.threads.tid.len())
                .map(|k| t.thread_label(ThreadId(k as u32)))
                .collect(),
            process_labels: (0..t.processes.pid.len())
                .map(|k| t.process_label(ProcessId(k as u32)))
                .collect(),
        }
    }

    pub fn rows(&self) -> usize {
        self.t.events.len()
    }

    /// The columns of [`COLUMNS`], in that order.
    pub fn columns(&self) -> Vec<Values<'_>> {
        let t = self.t;
        let ev = &t.events;
        let proc_of = move |i: usize| t.threads.process[ev.thread[i].idx()].idx();
        let file_of = move |i: usize| t.processes.file[proc_of(i)].0 as usize;
        let kernel_str = move |i: usize, col: &'a [crate::model::StrId]| match ev.kernel[i] {
            NO_ROW => "",
            k => t.str(col[k as usize]),
        };
        let cols: Vec<Values<'_>> = vec![
            Values::Str(Box::new(move |i| t.files.path[file_of(i)].as_str())),
            Values::I32(Box::new(move |i| t.files.rank[file_of(i)])),
            Values::Str(Box::new(move |i| self.process_labels[proc_of(i)].as_str())),
            Values::Str(Box::new(move |i| t.processes.role[proc_of(i)].as_str())),
            Values::I32(Box::new(move |i| t.processes.device_id[proc_of(i)])),
            Values::Str(Box::new(move |i| {
                self.thread_labels[ev.thread[i].idx()].as_str()
            })),
            Values::I64(Box::new(move |i| t.processes.pid[proc_of(i)])),
            Values::I64(Box::new(move |i| t.threads.tid[ev.thread[i].idx()])),
            Values::Str(Box::new(move |i| t.str(ev.name[i]))),
            Values::Str(Box::new(move |i| t.str(ev.cat.at(i)))),
            Values::Str(Box::new(move |i| ev.category[i].as_str())),
            Values::Str(Box::new(move |i| match ev.kind[i] {
                EventKind::Complete => "complete",
                EventKind::Instant => "instant",
            })),
            Values::I64(Box::new(move |i| ev.ts_ns[i])),
            Values::I64(Box::new(move |i| ev.dur_ns.at(i))),
            Values::I32(Box::new(move |i| ev.stream.at(i))),
            Values::Str(Box::new(move |i| t.str(ev.task_type.at(i)))),
            Values::Str(Box::new(move |i| kernel_str(i, &t.kernels.op_type))),
            Values::Str(Box::new(move |i| kernel_str(i, &t.kernels.task_type))),
            Values::I64(Box::new(move |i| ev.connection_id.at(i))),
            Values::I64(Box::new(move |i| ev.correlation_id.at(i))),
            Values::I64(Box::new(move |i| ev.graph_id.at(i))),
        ];
        debug_assert_eq!(cols.len(), COLUMNS.len());
        cols
    }
}
