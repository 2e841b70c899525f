//! The normalized columnar model every ingest fills and every analysis reads: struct-of-arrays
//! tables, interned strings ([`strings`]), integer nanoseconds, typed row ids ([`ids`]). Columns
//! are declared once, with their docs, in [`schema`]; docs/tables.md mirrors that declaration.

pub mod category;
pub mod checkpoint;
pub mod closed_set;
pub mod coded;
pub mod comm_tasks;
pub mod counters;
pub mod events;
pub mod files;
pub mod flows;
pub mod hash;
pub mod id_map;
pub mod ids;
pub mod kernels;
pub mod memory;
pub mod meta;
pub mod narrow;
pub mod op_args;
pub mod op_metrics;
pub mod reference;
pub mod schema;
pub mod serving;
pub mod steps;
pub mod strings;
pub mod tables;
pub mod task_waits;
pub mod tracks;
pub mod vendor_overlap;

pub use category::{Category, ProcessRole};
pub use events::{EventKind, EventTable};
pub use ids::{FileId, ProcessId, ThreadId};
pub use strings::{Interner, StrId};
pub use tables::Tables;
