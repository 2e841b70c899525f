//! The report contract: every result type the JSON report holds (docs/json-output.md), one file
//! per analysis, defined here and returned by the analyses (`analysis/` computes them and keeps
//! their methods), plus the few constants the report's text quotes. Renderers import from here,
//! never from `analysis/`; every type is re-exported at this module's root.

pub mod advisor;
pub mod batch_audit;
pub mod bubbles;
pub mod clock;
pub mod communication;
pub mod communication_ops;
pub mod composition;
pub mod cross_rank;
pub mod device_time;
pub mod devices;
pub mod dispatch;
pub mod efficiency;
pub mod evidence;
pub mod graph_mode;
pub mod kernel_types;
pub mod layout;
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

pub use advisor::*;
pub use batch_audit::*;
pub use bubbles::*;
pub use clock::*;
pub use communication::*;
pub use communication_ops::*;
pub use composition::*;
pub use cross_rank::*;
pub use device_time::*;
pub use devices::*;
pub use dispatch::*;
pub use efficiency::*;
pub use evidence::*;
pub use graph_mode::*;
pub use kernel_types::*;
pub use layout::*;
pub use memory::*;
pub use mtp::*;
pub use op_types::*;
pub use phases::*;
pub use ranks::*;
pub use stats::*;
pub use step_sync::*;
pub use summary::*;
pub use top_events::*;
pub use vendor_agreement::*;
pub use weights::*;

pub use crate::units::MIB;
pub use crate::units::percent as percent_of;
