//! The event category classifier: maps a raw event (its process role, `cat`, task type and
//! name) to one [`Category`]. Both spellings seen in real Ascend exports map to the same
//! category (db `Notify Wait` / `KERNEL_AIVEC`, trace_view `EVENT_WAIT_SQE` / `AI_CORE`, HCCL plane
//! `Notify_Wait`, the seeds' `NOTIFY_WAIT`, `CAPTURE_RECORD`, `WRITE_VALUE_*`). The rule tables are
//! plain slices so that a new spelling is one line; docs/tables.md lists them.

use serde::Serialize;

/// What an event is, for every analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Category {
    /// A device compute kernel (AI Core / AI Vector / AI CPU / MIX / CUDA kernel).
    ComputeKernel,
    /// A device communication kernel or collective task (HCCL / hcom / NCCL).
    CommKernel,
    /// A device wait / record / synchronisation task (NOTIFY_WAIT, EVENT_WAIT, WRITE_VALUE, ...).
    WaitSync,
    /// A device copy or DMA (SDMA, PCIE_DMA, MEMCPY, memset).
    DataMovement,
    /// A host CPU op: torch op, enqueue/dequeue, CANN / CUDA runtime API call.
    HostOp,
    /// A Python function (torch profiler `with_stack` tracer).
    PythonFunction,
    /// A user annotation, marker or instant event.
    Annotation,
    /// A profiler step: host `ProfilerStep#N`, or a CANN Step Trace `Iteration N` (device side).
    Step,
    /// The vendor's own overlap breakdown (Ascend `Overlap Analysis` process).
    VendorOverlap,
    /// Anything else (profiler bookkeeping such as PROFILING_ENABLE, PLACE_HOLDER_SQE).
    Other,
}

impl Category {
    pub const ALL: [Category; 10] = [
        Category::ComputeKernel,
        Category::CommKernel,
        Category::WaitSync,
        Category::DataMovement,
        Category::HostOp,
        Category::PythonFunction,
        Category::Annotation,
        Category::Step,
        Category::VendorOverlap,
        Category::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::ComputeKernel => "compute_kernel",
            Category::CommKernel => "comm_kernel",
            Category::WaitSync => "wait_sync",
            Category::DataMovement => "data_movement",
            Category::HostOp => "host_op",
            Category::PythonFunction => "python_function",
            Category::Annotation => "annotation",
            Category::Step => "step",
            Category::VendorOverlap => "vendor_overlap",
            Category::Other => "other",
        }
    }

    /// True for categories that run on the device timeline.
    pub fn is_device(self) -> bool {
        matches!(
            self,
            Category::ComputeKernel
                | Category::CommKernel
                | Category::WaitSync
                | Category::DataMovement
        )
    }
}

/// What a process in a trace is, identified from its `M` metadata (never from a pid formula).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum ProcessRole {
    /// Ascend `Ascend Hardware` (task scheduler; threads are physical streams).
    AscendHardware,
    /// Ascend `HCCL` / `Communication` (group ops and plane tasks).
    Hccl,
    /// Ascend `Overlap Analysis` (vendor computing/communication/free breakdown).
    OverlapAnalysis,
    /// Ascend `CANN` (host runtime API calls).
    CannApi,
    /// Other device-labelled Ascend processes (counters: HBM, NPU MEM, AI Core Freq, ...).
    DeviceCounters,
    /// A Kineto accelerator process (label `GPU n` / kernels on it).
    KinetoDevice,
    /// A host process (torch_npu `Python`, Kineto CPU process).
    Host,
    /// No metadata told us what it is.
    Unknown,
}

impl ProcessRole {
    /// Role from the `process_name` and `process_labels` metadata values.
    pub fn from_metadata(name: &str, labels: &str) -> ProcessRole {
        match name {
            "Ascend Hardware" => return ProcessRole::AscendHardware,
            "HCCL" | "Communication" => return ProcessRole::Hccl,
            "Overlap Analysis" => return ProcessRole::OverlapAnalysis,
            "CANN" => return ProcessRole::CannApi,
            _ => {}
        }
        let l = labels.trim();
        if l.starts_with("NPU") {
            ProcessRole::DeviceCounters
        } else if l.starts_with("GPU") || l.starts_with("MTIA") || l.starts_with("XPU") {
            ProcessRole::KinetoDevice
        } else if l.starts_with("CPU") || !name.is_empty() {
            ProcessRole::Host
        } else {
            ProcessRole::Unknown
        }
    }

    pub fn is_device(self) -> bool {
        matches!(
            self,
            ProcessRole::AscendHardware
                | ProcessRole::Hccl
                | ProcessRole::OverlapAnalysis
                | ProcessRole::DeviceCounters
                | ProcessRole::KinetoDevice
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProcessRole::AscendHardware => "ascend_hardware",
            ProcessRole::Hccl => "hccl",
            ProcessRole::OverlapAnalysis => "overlap_analysis",
            ProcessRole::CannApi => "cann_api",
            ProcessRole::DeviceCounters => "device_counters",
            ProcessRole::KinetoDevice => "kineto_device",
            ProcessRole::Host => "host",
            ProcessRole::Unknown => "unknown",
        }
    }
}

/// Name prefixes (lower case) of communication kernels and collective ops.
pub const COMM_NAME_PREFIXES: &[&str] = &[
    "hccl",
    "hcom_",
    "hcom",
    "allreduceaicpukernel",
    "broadcastaicpukernel",
    "allgatheraicpukernel",
    "reducescatteraicpukernel",
    "alltoallaicpukernel",
    "alltoallvaicpukernel",
    "nccl",
    "c10d::",
];

/// Normalised task-type / name prefixes (upper case, `_` for spaces) of wait and sync tasks.
pub const WAIT_SYNC_PREFIXES: &[&str] = &[
    "NOTIFY_",
    "EVENT_",
    "CAPTURE_",
    "WRITE_VALUE",
    "MEM_WAIT",
    "STREAM_WAIT",
    "BARRIER",
];

/// Normalised task-type / name prefixes of data movement. (`DSA_SQE` is not data movement: the
/// DSA engine runs kernels such as `DSAGenBitMask`, and the vendor's Overlap Analysis counts them as
/// Computing; see tests/it/device_time.rs.)
pub const DATA_MOVEMENT_PREFIXES: &[&str] = &[
    "SDMA",
    "PCIE_DMA",
    "MEMCPY",
    "MEMSET",
    "DMA",
    "RDMA",
    "MEMORY_COPY",
];

/// Normalised task types of profiler / scheduler bookkeeping. (`STARS_COMMON` is not: in the real
/// dbs those tasks are the DSA kernels that trace_view shows as `DSA_SQE`, which the vendor counts
/// as Computing.)
pub const BOOKKEEPING_PREFIXES: &[&str] = &[
    "PLACE_HOLDER",
    "PROFILING_ENABLE",
    "PROFILING_DISABLE",
    "MODEL_",
    "MAINTENANCE",
];

/// Normalised task types of device tasks that belong to a collective although they run on an
/// Ascend Hardware stream: HCCL's reduce tasks (`REDUCE_ASYNC_V2` in legacy CANN timelines; the
/// vendor's Overlap Analysis does not count them as Computing, checked on the legacy sample).
pub const COMM_TASK_PREFIXES: &[&str] = &["REDUCE_ASYNC", "REDUCE_INLINE", "REDUCE_TBE"];

/// `cat` values of CANN's Step Trace thread (inside `Ascend Hardware`): iteration markers and
/// the phases the vendor derives from them, not device work. `Iteration Time` is the step itself.
/// From the legacy sample (`Step Trace(Model ID:2)` thread) and CANN's step trace fields.
pub const STEP_TRACE_CATS: &[&str] = &[
    "Iteration Time",
    "FP_BP Time",
    "Iteration Refresh",
    "Reduce",
    "Data_aug Bound",
    "Get Next",
];

/// Kineto `cat` values of device activity.
pub const KINETO_DEVICE_CATS: &[&str] =
    &["kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"];

/// Upper-case with spaces and dashes as `_`, into `buf` (reused; no allocation once warm).
pub fn normalise_into<'b>(s: &str, buf: &'b mut String) -> &'b str {
    buf.clear();
    for c in s.chars() {
        buf.push(match c {
            ' ' | '-' => '_',
            c => c.to_ascii_uppercase(),
        });
    }
    buf
}

fn starts_with_any(s: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| s.starts_with(p))
}

/// True if `name` is a communication kernel or collective op name.
pub fn is_comm_name(name: &str) -> bool {
    let n = name.as_bytes();
    COMM_NAME_PREFIXES
        .iter()
        .any(|p| n.len() >= p.len() && n[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
}

/// The kind of a wait/sync task that the timeline analyses tell apart, from its task type (else
/// its name), normalised: `Notify Wait` / `NOTIFY_WAIT` / `Notify_Wait` are one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKind {
    /// NOTIFY_WAIT: the update_step_context sync.
    Notify,
    /// EVENT_WAIT / STREAM_WAIT: waiting for another stream (a collective).
    Event,
    /// MEM_WAIT_VALUE: the wait before an MTP head.
    MemWait,
    /// CAPTURE_RECORD: the start of a graph replay.
    Capture,
    Other,
}

impl WaitKind {
    pub fn of(task_type: &str, name: &str, buf: &mut String) -> WaitKind {
        let k = normalise_into(
            if task_type.is_empty() {
                name
            } else {
                task_type
            },
            buf,
        );
        if k.starts_with("NOTIFY_WAIT") {
            WaitKind::Notify
        } else if k.starts_with("EVENT_WAIT") || k.starts_with("STREAM_WAIT") {
            WaitKind::Event
        } else if k.starts_with("MEM_WAIT") {
            WaitKind::MemWait
        } else if k.starts_with("CAPTURE_RECORD") {
            WaitKind::Capture
        } else {
            WaitKind::Other
        }
    }
}

/// Inputs of one classification.
#[derive(Debug, Clone, Copy)]
pub struct ClassifyInput<'a> {
    pub role: ProcessRole,
    pub cat: &'a str,
    pub task_type: &'a str,
    pub name: &'a str,
    pub instant: bool,
}

/// Classifies one event. Pure; `buf` is scratch space.
pub fn classify(i: ClassifyInput<'_>, buf: &mut String) -> Category {
    if i.role == ProcessRole::OverlapAnalysis {
        return Category::VendorOverlap;
    }
    if i.name.starts_with("ProfilerStep#") {
        // Kineto copies the step annotation onto the GPU timeline; the step is the CPU one (as
        // in HTA), the copy is an annotation.
        return if i.cat == "gpu_user_annotation" {
            Category::Annotation
        } else {
            Category::Step
        };
    }
    if i.role == ProcessRole::AscendHardware && STEP_TRACE_CATS.contains(&i.cat) {
        return if i.cat == "Iteration Time" {
            Category::Step
        } else {
            Category::Annotation
        };
    }
    if i.instant {
        return Category::Annotation;
    }
    match i.cat {
        "kernel" | "Kernel" => {
            return if is_comm_name(i.name) {
                Category::CommKernel
            } else {
                Category::ComputeKernel
            };
        }
        "gpu_memcpy" | "gpu_memset" | "Memcpy" | "Memset" => return Category::DataMovement,
        // Kineto's stream / event / context synchronisation records on a GPU stream (`Stream
        // Sync`, `Event Sync`): waits, not kernels.
        "cuda_sync" => return Category::WaitSync,
        "gpu_user_annotation" | "user_annotation" | "Trace" | "MsTx" => {
            return Category::Annotation;
        }
        "python_function" => return Category::PythonFunction,
        // Db TASK rows of a kernel type without kernel info (collective envelopes).
        "task_without_kernel_info" => return Category::Other,
        _ => {}
    }
    match i.role {
        ProcessRole::AscendHardware | ProcessRole::Hccl | ProcessRole::KinetoDevice => {
            classify_device_task(i, buf)
        }
        ProcessRole::DeviceCounters => Category::Other,
        ProcessRole::Host | ProcessRole::CannApi => Category::HostOp,
        ProcessRole::Unknown => {
            if i.cat.is_empty() {
                Category::Other
            } else {
                Category::HostOp
            }
        }
        ProcessRole::OverlapAnalysis => Category::VendorOverlap,
    }
}

fn classify_device_task(i: ClassifyInput<'_>, buf: &mut String) -> Category {
    if is_comm_name(i.name) {
        return Category::CommKernel;
    }
    for key in [i.task_type, i.name] {
        if key.is_empty() {
            continue;
        }
        let k = normalise_into(key, buf);
        if starts_with_any(k, WAIT_SYNC_PREFIXES) || k.contains("_WAIT") {
            return Category::WaitSync;
        }
        if starts_with_any(k, DATA_MOVEMENT_PREFIXES) {
            return Category::DataMovement;
        }
        if starts_with_any(k, BOOKKEEPING_PREFIXES) {
            return Category::Other;
        }
        if starts_with_any(k, COMM_TASK_PREFIXES) {
            return Category::CommKernel;
        }
    }
    // HCCL plane tasks that are not waits or copies (Reduce_Inline, Reduce_TBE, ...) are part of
    // the collective; named kernels on compute streams are compute.
    if i.role == ProcessRole::Hccl {
        Category::CommKernel
    } else {
        Category::ComputeKernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(task_type: &str, name: &str) -> Category {
        classify(
            ClassifyInput {
                role: ProcessRole::AscendHardware,
                cat: "",
                task_type,
                name,
                instant: false,
            },
            &mut String::new(),
        )
    }

    #[test]
    fn both_export_spellings_map_to_one_category() {
        for (tt, name) in [
            ("Notify Wait", "Notify_Wait"),
            ("NOTIFY_WAIT", "x"),
            ("EVENT_WAIT_SQE", "EVENT_WAIT"),
            ("EVENT_WAIT", "EVENT_WAIT"),
            ("MEM_WAIT_VALUE", "MEM_WAIT_VALUE"),
            ("CAPTURE_RECORD", "x"),
            ("Write Value", "x"),
            ("WRITE_VALUE_SQE", "x"),
            ("EVENT_RECORD_SQE", "x"),
        ] {
            assert_eq!(dev(tt, name), Category::WaitSync, "{tt}");
        }
        for tt in ["SDMA", "SDMA_SQE", "PCIE_DMA_SQE", "MEMCPY_ASYNC"] {
            assert_eq!(dev(tt, "x"), Category::DataMovement, "{tt}");
        }
        for tt in [
            "AI_CORE",
            "MIX_AIV",
            "KERNEL_AIVEC",
            "KERNEL_AICORE",
            "AI_CPU",
            "Other",
            "",
        ] {
            assert_eq!(dev(tt, "MatMulV2"), Category::ComputeKernel, "{tt}");
        }
        assert_eq!(dev("AI_CPU", "allreduceAicpuKernel"), Category::CommKernel);
        assert_eq!(
            dev("DSA_SQE", "aclnnDropoutGenMaskV2_DSAGenBitMask"),
            Category::ComputeKernel
        );
        assert_eq!(dev("KERNEL_AICORE", "HcclAllReduce"), Category::CommKernel);
        assert_eq!(dev("PLACE_HOLDER_SQE", "PROFILING_ENABLE"), Category::Other);
        // Legacy CANN: HCCL's reduce task on a compute stream is part of the collective.
        assert_eq!(
            dev("REDUCE_ASYNC_V2", "REDUCE_ASYNC_V2"),
            Category::CommKernel
        );
        assert_eq!(
            dev("STARS_COMMON", "aclnnDropoutGenMaskV2_DSAGenBitMask"),
            Category::ComputeKernel
        );
    }

    #[test]
    fn step_trace_markers_are_not_device_work() {
        let st = |cat: &str, name: &str| {
            classify(
                ClassifyInput {
                    role: ProcessRole::AscendHardware,
                    cat,
                    task_type: "",
                    name,
                    instant: false,
                },
                &mut String::new(),
            )
        };
        // Names and cats as in the legacy sample's Step Trace thread.
        assert_eq!(st("Iteration Time", "Iteration 1"), Category::Step);
        assert_eq!(st("FP_BP Time", "FP_BP Time 1"), Category::Annotation);
        assert_eq!(
            st("Iteration Refresh", "Iteration Refresh 1"),
            Category::Annotation
        );
        assert_eq!(st("Reduce", "Reduce_1_0"), Category::Annotation);
        let gpu = classify(
            ClassifyInput {
                role: ProcessRole::KinetoDevice,
                cat: "gpu_user_annotation",
                task_type: "",
                name: "ProfilerStep#3",
                instant: false,
            },
            &mut String::new(),
        );
        assert_eq!(gpu, Category::Annotation);
    }

    #[test]
    fn hccl_planes_and_roles() {
        let h = |name: &str| {
            classify(
                ClassifyInput {
                    role: ProcessRole::Hccl,
                    cat: "",
                    task_type: name,
                    name,
                    instant: false,
                },
                &mut String::new(),
            )
        };
        assert_eq!(h("Notify_Wait"), Category::WaitSync);
        assert_eq!(h("Notify_Record"), Category::WaitSync);
        assert_eq!(h("Memcpy"), Category::DataMovement);
        assert_eq!(h("Reduce_Inline"), Category::CommKernel);
        assert_eq!(
            ProcessRole::from_metadata("python3.8", "GPU 3"),
            ProcessRole::KinetoDevice
        );
        assert_eq!(
            ProcessRole::from_metadata("Python", "CPU"),
            ProcessRole::Host
        );
        assert_eq!(
            ProcessRole::from_metadata("HBM", "NPU"),
            ProcessRole::DeviceCounters
        );
    }
}
