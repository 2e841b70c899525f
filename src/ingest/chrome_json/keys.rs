//! Constant-time dispatch on JSON member names: a key's length and first 7 bytes packed into one
//! u64 `tag`, matched against constants, so the hot loop compares integers instead of calling
//! memcmp once per candidate. Keys longer than 7 bytes are confirmed with one slice compare in the
//! matching arm.

/// Length in the top byte, then up to the first 7 bytes little-endian.
#[inline(always)]
pub const fn tag(k: &[u8]) -> u64 {
    let n = if k.len() < 7 { k.len() } else { 7 };
    let mut x = 0u64;
    let mut i = 0;
    while i < n {
        x |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    x | ((k.len() as u64 & 0xff) << 56)
}

/// The last 8 bytes (keys of 8..=16 bytes): with [`tag`] it identifies such a key exactly.
#[inline(always)]
pub const fn tail(k: &[u8]) -> u64 {
    if k.len() < 8 {
        return 0;
    }
    let mut x = 0u64;
    let mut i = 0;
    while i < 8 {
        x |= (k[k.len() - 8 + i] as u64) << (8 * i);
        i += 1;
    }
    x
}

/// True when `k` is exactly `want` (a constant of at most 16 bytes), by two integer compares.
#[inline(always)]
pub fn is(k: &[u8], want: &'static [u8]) -> bool {
    k.len() == want.len() && tag(k) == tag(want) && tail(k) == tail(want)
}

pub const PH: u64 = tag(b"ph");
pub const NAME: u64 = tag(b"name");
pub const CAT: u64 = tag(b"cat");
pub const PID: u64 = tag(b"pid");
pub const TID: u64 = tag(b"tid");
pub const TS: u64 = tag(b"ts");
pub const DUR: u64 = tag(b"dur");
pub const ID: u64 = tag(b"id");
pub const BP: u64 = tag(b"bp");
pub const ARGS: u64 = tag(b"args");

pub const TASK_TYPE: u64 = tag(b"Task Type");
pub const TASK_TYPE_LC: u64 = tag(b"task type");
pub const PHYSIC_STREAM_ID: u64 = tag(b"Physic Stream Id");
pub const STREAM_ID: u64 = tag(b"Stream Id");
pub const STREAM: u64 = tag(b"stream");
pub const STREAM_ID_LC: u64 = tag(b"stream id");
pub const CONNECTION_ID: u64 = tag(b"connection_id");
pub const CORRELATION_ID: u64 = tag(b"correlation_id");
pub const CORRELATION: u64 = tag(b"correlation");
pub const MODEL_ID: u64 = tag(b"Model Id");
pub const MODEL_ID_UC: u64 = tag(b"Model ID");
pub const MODEL_ID_LC: u64 = tag(b"model id");
pub const GRAPH_ID: u64 = tag(b"graph id");
pub const KERNEL: u64 = tag(b"kernel");
pub const ITEM_ID: u64 = tag(b"item_id");
pub const DEVICE: u64 = tag(b"device");
pub const LABELS: u64 = tag(b"labels");
pub const SORT_INDEX: u64 = tag(b"sort_index");
pub const TRANSPORT_TYPE: u64 = tag(b"transport type");
pub const LINK_TYPE: u64 = tag(b"link type");
pub const DATA_TYPE: u64 = tag(b"data type");
pub const SRC_RANK: u64 = tag(b"src rank");
pub const DST_RANK: u64 = tag(b"dst rank");
pub const SIZE_BYTE: u64 = tag(b"size(Byte)");
pub const BANDWIDTH_GB_S: u64 = tag(b"bandwidth(GB/s)");
pub const NOTIFY_ID: u64 = tag(b"notify_id");
pub const PROCESS_GROUP_NAME: u64 = tag(b"Process Group Name");
pub const COLLECTIVE_NAME: u64 = tag(b"Collective name");
pub const INPUT_DIMS: u64 = tag(b"Input Dims");
pub const INPUT_TYPE: u64 = tag(b"Input type");
pub const CONCRETE_INPUTS: u64 = tag(b"Concrete Inputs");

/// What a member of an event object is to the scanner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Member {
    #[default]
    Other,
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Bp,
    Args,
}

/// The member an event key names (every one is at most 7 bytes, so its tag is exact).
#[inline]
pub fn member(k: &[u8]) -> Member {
    match tag(k) {
        PH => Member::Ph,
        NAME => Member::Name,
        CAT => Member::Cat,
        PID => Member::Pid,
        TID => Member::Tid,
        TS => Member::Ts,
        DUR => Member::Dur,
        ID => Member::Id,
        BP => Member::Bp,
        ARGS => Member::Args,
        _ => Member::Other,
    }
}

/// What a member of an event's `args` is to the scanner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Arg {
    #[default]
    Other,
    TaskType,
    PhysicStreamId,
    StreamId,
    /// Kineto's `stream`.
    Stream,
    /// HCCL's `stream id`.
    StreamIdLc,
    ConnectionId,
    Correlation,
    /// Ascend `Model Id` / `Model ID` / HCCL `model id`, Kineto `graph id`.
    GraphId,
    /// HIP runtime launch calls' `kernel`: the kernel they launch.
    Kernel,
    /// Ascend CANN calls' `item_id` (`Node@launch`: the op it launches).
    ItemId,
    Device,
    Name,
    Labels,
    SortIndex,
    Transport,
    Link,
    DataType,
    SrcRank,
    DstRank,
    SizeBytes,
    BandwidthGbS,
    NotifyId,
    /// Kineto NCCL kernels and record_param_comms: the communicator group (`Process Group Name`).
    ProcessGroupName,
    /// Kineto NCCL kernels: `Collective name` (`allreduce`, `allgather`, ...).
    CollectiveName,
    /// PyTorch ops recorded with shapes: `Input Dims`, `Input type`, `Concrete Inputs`.
    InputDims,
    InputType,
    ConcreteInputs,
}

/// The `args` member a key names.
#[inline]
pub fn arg(k: &[u8]) -> Arg {
    match tag(k) {
        TASK_TYPE if is(k, b"Task Type") => Arg::TaskType,
        TASK_TYPE_LC if is(k, b"task type") => Arg::TaskType,
        PHYSIC_STREAM_ID if is(k, b"Physic Stream Id") => Arg::PhysicStreamId,
        STREAM_ID if is(k, b"Stream Id") => Arg::StreamId,
        STREAM => Arg::Stream,
        STREAM_ID_LC if is(k, b"stream id") => Arg::StreamIdLc,
        CONNECTION_ID if is(k, b"connection_id") => Arg::ConnectionId,
        CORRELATION_ID if is(k, b"correlation_id") => Arg::Correlation,
        CORRELATION if is(k, b"correlation") => Arg::Correlation,
        MODEL_ID if is(k, b"Model Id") => Arg::GraphId,
        MODEL_ID_UC if is(k, b"Model ID") => Arg::GraphId,
        MODEL_ID_LC if is(k, b"model id") => Arg::GraphId,
        GRAPH_ID if is(k, b"graph id") => Arg::GraphId,
        KERNEL => Arg::Kernel,
        ITEM_ID => Arg::ItemId,
        DEVICE => Arg::Device,
        NAME => Arg::Name,
        LABELS => Arg::Labels,
        SORT_INDEX if is(k, b"sort_index") => Arg::SortIndex,
        TRANSPORT_TYPE if is(k, b"transport type") => Arg::Transport,
        LINK_TYPE if is(k, b"link type") => Arg::Link,
        DATA_TYPE if is(k, b"data type") => Arg::DataType,
        SRC_RANK if is(k, b"src rank") => Arg::SrcRank,
        DST_RANK if is(k, b"dst rank") => Arg::DstRank,
        SIZE_BYTE if is(k, b"size(Byte)") => Arg::SizeBytes,
        BANDWIDTH_GB_S if is(k, b"bandwidth(GB/s)") => Arg::BandwidthGbS,
        NOTIFY_ID if is(k, b"notify_id") => Arg::NotifyId,
        PROCESS_GROUP_NAME if k == b"Process Group Name" => Arg::ProcessGroupName,
        COLLECTIVE_NAME if is(k, b"Collective name") => Arg::CollectiveName,
        INPUT_DIMS if is(k, b"Input Dims") => Arg::InputDims,
        INPUT_TYPE if is(k, b"Input type") => Arg::InputType,
        CONCRETE_INPUTS if is(k, b"Concrete Inputs") => Arg::ConcreteInputs,
        _ => Arg::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_distinct_where_it_matters() {
        let all = [
            PH,
            NAME,
            CAT,
            PID,
            TID,
            TS,
            DUR,
            ID,
            BP,
            ARGS,
            TASK_TYPE,
            TASK_TYPE_LC,
            PHYSIC_STREAM_ID,
            STREAM_ID,
            STREAM,
            STREAM_ID_LC,
            CONNECTION_ID,
            CORRELATION_ID,
            CORRELATION,
            MODEL_ID,
            MODEL_ID_LC,
            GRAPH_ID,
            KERNEL,
            ITEM_ID,
            DEVICE,
            LABELS,
            SORT_INDEX,
            TRANSPORT_TYPE,
            LINK_TYPE,
            DATA_TYPE,
            SRC_RANK,
            DST_RANK,
            SIZE_BYTE,
            BANDWIDTH_GB_S,
            NOTIFY_ID,
            INPUT_DIMS,
            INPUT_TYPE,
            CONCRETE_INPUTS,
        ];
        let mut v = all.to_vec();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), all.len());
        assert_ne!(tag(b"Task Typo"), tag(b"Task Typ")); // length is part of the tag
        assert_eq!(tag(b"Task Typo"), TASK_TYPE); // same prefix and length: arms confirm with `is`
        assert!(is(b"Task Type", b"Task Type") && !is(b"Task Typo", b"Task Type"));
        assert!(
            is(b"Physic Stream Id", b"Physic Stream Id")
                && !is(b"Physic Stream Ix", b"Physic Stream Id")
        );
    }
}
