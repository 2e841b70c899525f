//! Analyses: pure functions from [`crate::model::Tables`] (and options) to result structs. No
//! I/O here. One module per analysis, named as the domain names it; [`intervals`] is the shared
//! interval algebra and [`devices`] the per-device view every timeline analysis starts from.

pub mod bubbles;
pub mod device_time;
pub mod devices;
pub mod intervals;
pub mod summary;
