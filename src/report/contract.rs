//! What a renderer may read besides [`super::Report`]: the result types the report holds and the
//! few constants its text quotes (thresholds the notes name). Renderers import these from here,
//! never from `analysis/`, so this list is the report contract's surface. The types are still
//! defined beside the analyses that fill them (moving their definitions here is the next step of
//! issue 22); docs/json-output.md documents their JSON.

pub use crate::analysis::batch_audit::Range;
pub use crate::analysis::bubbles::{Cause, DeviceBubbles, Neighbour};
pub use crate::analysis::communication_ops::{
    BandwidthRank, CommunicationOps, DeviceCommOps, LinkType, MatrixCell, SLOW_RANK_MARGIN,
};
pub use crate::analysis::devices::DeviceRef;
pub use crate::analysis::dispatch::Link;
pub use crate::analysis::memory::{Attribution, Completeness, Component, DeviceMemory, Source};
pub use crate::analysis::ranks::OVERSIZED_FACTOR;
pub use crate::analysis::stats::pct as percent_of;
pub use crate::units::MIB;
