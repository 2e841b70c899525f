//! Typed row indexes into the tables, so that a thread index cannot be used as a process index.

use serde::Serialize;

macro_rules! row_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub struct $name(pub u32);
        impl $name {
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

row_id!(
    /// Row of [`super::FileTable`].
    FileId
);
row_id!(
    /// Row of [`super::ProcessTable`].
    ProcessId
);
row_id!(
    /// Row of [`super::ThreadTable`].
    ThreadId
);
