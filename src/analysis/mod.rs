//! Analyses: pure functions from [`crate::model::Tables`] (and options) to result structs. No
//! I/O here. One module per analysis, named as the domain names it; [`intervals`] is the shared
//! interval algebra and [`devices`] the per-device view every timeline analysis starts from.

pub mod advisor;
pub mod batch_audit;
pub mod bubbles;
pub mod clock;
pub mod cluster;
pub mod collective_match;
pub mod communication;
pub mod communication_ops;
pub mod communication_ops_vendor;
pub mod composition;
pub mod cross_rank;
pub mod device_time;
pub mod devices;
pub mod dispatch;
pub mod efficiency;
pub mod evidence;
pub mod families;
pub mod gallop;
pub mod graph_mode;
pub mod grouping;
pub mod host_calls;
pub mod intervals;
pub mod kernel_types;
pub mod memory;
pub mod mtp;
pub mod op_types;
pub mod phases;
pub mod ranks;
pub mod stats;
pub mod step_sync;
pub mod summary;
pub mod top_events;
pub mod vendor_agreement;
pub mod weights;
