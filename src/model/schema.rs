//! The one declaration of every table and column of the model, with type, unit and meaning.
//! docs/tables.md is checked against it by a test, so the docs cannot drift from the code.

/// One column.
pub struct ColumnSchema {
    pub name: &'static str,
    pub ty: &'static str,
    pub doc: &'static str,
}

/// One table.
pub struct TableSchema {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: &'static [ColumnSchema],
}

macro_rules! cols {
    ($(($n:literal, $t:literal, $d:literal)),* $(,)?) => {
        &[$(ColumnSchema { name: $n, ty: $t, doc: $d }),*]
    };
}

pub const TABLES: &[TableSchema] = &[
    TableSchema {
        name: "files",
        doc: "One row per ingested input (a capture written in pieces is one row).",
        columns: cols![
            ("path", "string", "Path as given to ingest."),
            (
                "format",
                "enum",
                "chrome_json_array | chrome_json_object | ascend_db | kernel_csv | vendor_summary (a rank kept as the vendor's summaries only: no events)."
            ),
            ("size_bytes", "u64 bytes", "Size on disk."),
            (
                "parsed_bytes",
                "u64 bytes",
                "Bytes parsed (decompressed size for .gz)."
            ),
            ("gzip", "bool", "Input was gzip-compressed."),
            (
                "rank",
                "i32",
                "distributedInfo.rank or from the path; -1 unknown."
            ),
            (
                "world_size",
                "i32",
                "distributedInfo.world_size; -1 unknown."
            ),
            (
                "base_time_ns",
                "i64 ns",
                "Kineto baseTimeNanoseconds (ts_ns is not shifted by it); 0 absent."
            ),
            (
                "display_time_unit",
                "str",
                "displayTimeUnit (display only)."
            ),
            (
                "truncated",
                "bool",
                "The file ended mid-event (events after that point are missing)."
            ),
            (
                "parts",
                "u32",
                "Files read as this row: 1, or the pieces of one capture (legacy per-iteration msprof_*.json, slices)."
            ),
            (
                "captured_spans",
                "list of (i64 ns, i64 ns)",
                "When parts > 1: the union of the parts' [first start, last end] (time between them was not captured); else empty."
            ),
        ],
    },
    TableSchema {
        name: "processes",
        doc: "One row per (file, pid); identified by M metadata, never by a pid formula.",
        columns: cols![
            ("file", "FileId", "Row of files."),
            (
                "pid",
                "i64",
                "pid as written; string pids get a negative synthetic id."
            ),
            ("pid_text", "str", "pid when it was a string, else empty."),
            (
                "name",
                "str",
                "process_name metadata (Ascend Hardware, HCCL, CANN, Python, ...)."
            ),
            (
                "labels",
                "str",
                "process_labels metadata (NPU, NPU 3, CPU, GPU 0)."
            ),
            ("sort_index", "i64", "process_sort_index; i64::MIN absent."),
            (
                "role",
                "enum",
                "ascend_hardware | hccl | overlap_analysis | cann_api | device_counters | kineto_device | host | unknown."
            ),
            (
                "device_id",
                "i32",
                "From labels (NPU 3 / GPU 0) or Kineto args.device; -1 unknown."
            ),
        ],
    },
    TableSchema {
        name: "threads",
        doc: "One row per (process, tid); device streams and HCCL planes are threads.",
        columns: cols![
            ("process", "ProcessId", "Row of processes."),
            (
                "tid",
                "i64",
                "tid as written (stream / plane number on device processes)."
            ),
            ("tid_text", "str", "tid when it was a string, else empty."),
            (
                "name",
                "str",
                "thread_name metadata (Stream 3, Plane 0, Group 0 Communication)."
            ),
            ("sort_index", "i64", "thread_sort_index; i64::MIN absent."),
        ],
    },
    TableSchema {
        name: "events",
        doc: "Timed events: X, matched B/E pairs, instants. Rank/file/side via thread -> process. dur_ns, connection_id and correlation_id are i64 values held in 4 bytes per row when they fit in an i32 (model::narrow); cat, task_type and stream one byte per row while a file has at most 256 distinct values of each (model::coded).",
        columns: cols![
            ("thread", "ThreadId", "Row of threads."),
            (
                "ts_ns",
                "i64 ns",
                "Start, exact decimal conversion of the microsecond ts."
            ),
            (
                "dur_ns",
                "i64 ns",
                "Duration (0 for instants), rounded half away from zero to 1 ns."
            ),
            ("name", "str", "Event name."),
            (
                "cat",
                "str",
                "Chrome-trace cat (cpu_op, kernel, ...); empty when absent."
            ),
            (
                "task_type",
                "str",
                "args Task Type / task type (Ascend); empty elsewhere."
            ),
            (
                "stream",
                "i64",
                "Physic Stream Id, else Stream Id, else args.stream, else the device tid; -1 host."
            ),
            (
                "category",
                "enum",
                "compute_kernel | comm_kernel | wait_sync | data_movement | host_op | python_function | annotation | step | vendor_overlap | other."
            ),
            ("kind", "enum", "complete | instant."),
            (
                "connection_id",
                "i64",
                "Ascend args.connection_id; -1 absent."
            ),
            (
                "correlation_id",
                "i64",
                "args.correlation_id / args.correlation; db: PYTORCH_API queue rows' CONNECTION_IDS id − 5<<28; -1 absent."
            ),
            (
                "graph_id",
                "i64",
                "The graph a device event was replayed from: Ascend args.\"Model Id\" / \"model id\", TASK.modelId, kernel_details.csv Model ID (4294967295 → -1); Kineto args.\"graph id\"; -1 none. One byte per row while a file has at most 256 distinct values."
            ),
            (
                "launched",
                "str",
                "The kernel a host launch call names: HIP runtime args.kernel, Ascend Node@launch args.item_id; empty elsewhere (CUDA runtime calls name none). One byte per row while a file has at most 256 distinct values."
            ),
            (
                "kernel",
                "u32",
                "Row of kernels (db COMPUTE_TASK_INFO); u32::MAX none."
            ),
            (
                "comm_task",
                "u32",
                "Row of comm_tasks (db COMMUNICATION_TASK_INFO, HCCL plane events, Kineto events with `Process Group Name`); u32::MAX none."
            ),
        ],
    },
    TableSchema {
        name: "kernels",
        doc: "Kernel details of device compute tasks (db COMPUTE_TASK_INFO, kernel_details.csv), one row per distinct signature (all columns below), shared by every event with those details; reached from events.kernel.",
        columns: cols![
            (
                "op_type",
                "str",
                "Operator type (MatMulV2); what msprof-analyze compute_op_sum groups by."
            ),
            (
                "task_type",
                "str",
                "The info row's task type (AI_VECTOR_CORE, MIX_AIV, DSA_SQE); TASK's may differ (KERNEL_AIVEC)."
            ),
            (
                "block_num",
                "i64",
                "blockNum (older CANN blockDim); -1 unknown."
            ),
            (
                "mix_block_num",
                "i64",
                "mixBlockNum (older mixBlockDim); -1 unknown."
            ),
            (
                "input_shapes / input_dtypes / input_formats",
                "str",
                "As written (e.g. \"8,3,224,224;64,3,7,7\")."
            ),
            (
                "output_shapes / output_dtypes / output_formats",
                "str",
                "As written."
            ),
        ],
    },
    TableSchema {
        name: "comm_tasks",
        doc: "Per-task communication details (db COMMUNICATION_TASK_INFO; trace_view.json `Plane <n>` events' args `transport type`, `link type`, `src rank`, ...), reached from events.comm_task. Kineto NCCL kernels (and record_param_comms ops) carrying `Process Group Name` have a row too: op_name and group set, transport / link empty, plane -1.",
        columns: cols![
            (
                "op_name",
                "str",
                "The collective op of the task (hcom_allReduce__210_0_1); Kineto `Collective name` (allreduce); empty from trace_view.json (the op is the Group thread's event whose window holds the task)."
            ),
            (
                "group",
                "str",
                "Communication group name; Kineto `Process Group Name`; empty from trace_view.json."
            ),
            (
                "plane",
                "i32",
                "HCCL plane (thread `Plane <n>`); -1 from trace_view.json (read the thread name)."
            ),
            ("src_rank / dst_rank", "i64", "Ranks; -1 unknown."),
            (
                "transport / link / data_type",
                "str",
                "ENUM_HCCL_TRANSPORT_TYPE / _LINK_TYPE / _DATA_TYPE names (SDMA, HCCS, FP16)."
            ),
            ("size_bytes", "i64 bytes", "Bytes moved; -1 unknown."),
            (
                "bandwidth_bytes_per_s",
                "f64 B/s",
                "As the profiler wrote it; NaN unknown."
            ),
            ("notify_id", "i64", "-1 when none (UINT64_MAX)."),
        ],
    },
    TableSchema {
        name: "op_metrics",
        doc: "Per-task operator metrics of device compute tasks, for the advisor's operator rules (docs/advisor.md): db COMPUTE_TASK_INFO.opState and TASK_PMU_INFO (joined by globalTaskId, duration from TASK); kernel_details.csv / op_summary_*.csv `OP State` and pipe-ratio columns, also read beside a text export's trace_view.json. Rows only where the source has an op state or a pipe ratio; self-contained (no event link).",
        columns: cols![
            ("file", "FileId", "Row of files."),
            (
                "name / op_type / task_type",
                "str",
                "Kernel name, operator type, core (AI_CORE, AI_VECTOR_CORE, MIX_AIV)."
            ),
            ("dur_ns", "i64 ns", "Task duration."),
            (
                "op_state",
                "str",
                "`static` / `dynamic` as written; empty when the source has none."
            ),
            (
                "input_shapes / input_dtypes / output_shapes",
                "str",
                "As written."
            ),
            (
                "ratios",
                "[f32; 9]",
                "aic_mac, aic_scalar, aic_mte1, aic_mte2, aic_fixpipe, aiv_vec, aiv_scalar, aiv_mte2, aiv_mte3 `_ratio`: each pipe's busy fraction of the core's time; NaN not written."
            ),
        ],
    },
    TableSchema {
        name: "op_args",
        doc: "Recorded inputs of host operator events (PyTorch profiler record_shapes): Kineto and torch_npu trace_view.json `Input Dims`, `Input type`, `Concrete Inputs` args, one row per event that has them, by event row. Read by the efficiency analysis (docs/analyses/efficiency.md). `analyze` keeps the texts of the ops that analysis models only (`ingest::OpInputs`; the other rows are kept with empty texts, so a capture recorded with shapes still says so); exports, `query` and `sql` keep every text.",
        columns: cols![
            ("event", "u32", "Row of events (rising)."),
            (
                "dims",
                "str",
                "`Input Dims` as written (Kineto: JSON array text `[[1024, 1705], [512]]`; torch_npu: `;`-separated)."
            ),
            (
                "types",
                "str",
                "`Input type` as written (`float`, `c10::BFloat16`)."
            ),
            (
                "concrete",
                "str",
                "`Concrete Inputs` as written (scalar arguments such as strides, `is_causal`); empty when absent."
            ),
        ],
    },
    TableSchema {
        name: "steps",
        doc: "Steps as the profiler recorded them (db STEP_TIME: host span of ProfilerStep#N; a CSV-only text export: kernel_details.csv Step Id, the span of that step's device rows).",
        columns: cols![
            ("file", "FileId", "Row of files."),
            ("step", "i64", "N of ProfilerStep#N (Step Id)."),
            (
                "start_ns / end_ns",
                "i64 ns",
                "Host time span (kernel_details.csv: first start to last end of the step's rows)."
            ),
            ("source", "str", "STEP_TIME | kernel_details.csv Step Id."),
        ],
    },
    TableSchema {
        name: "task_waits",
        doc: "The exporter's wait before each device task of a CSV-only export (kernel_details.csv / op_summary `Wait Time(us)`: start minus the end of the previous task in start order, any stream, over every task the exporter saw); what bubbles reads to tell tasks the file does not list.",
        columns: cols![
            (
                "thread",
                "ThreadId",
                "The task's stream thread (with ts_ns: its event)."
            ),
            ("ts_ns", "i64 ns", "The task's start."),
            ("wait_ns", "i64 ns", "Wait Time(us) × 1000, ≥ 0."),
        ],
    },
    TableSchema {
        name: "memory",
        doc: "Sampled memory totals (db NPU_MEM, NPU_MODULE_MEM, MEMORY_RECORD; text export npu_module_mem.csv, memory_record.csv); bytes, -1 where the source has no such value.",
        columns: cols![
            ("file", "FileId", "Row of files."),
            ("device", "i32", "deviceId; -1 unknown."),
            (
                "source",
                "str",
                "NPU_MEM | NPU_MODULE_MEM | MEMORY_RECORD | npu_module_mem.csv | memory_record.csv."
            ),
            (
                "component",
                "str",
                "NPU_MEM app/device; NPU_MODULE_MEM and npu_module_mem.csv module (HCCL, RUNTIME, ...); MEMORY_RECORD and memory_record.csv PTA/GE/PTA+GE/WORKSPACE/APP."
            ),
            ("ts_ns", "i64 ns", "Sample time."),
            (
                "allocated_bytes / reserved_bytes / active_bytes",
                "i64 bytes",
                "MEMORY_RECORD / memory_record.csv totals (MB × 2^20 in the CSV; NPU_MODULE_MEM fills reserved_bytes)."
            ),
            ("hbm_bytes", "i64 bytes", "NPU_MEM hbm."),
        ],
    },
    TableSchema {
        name: "op_memory",
        doc: "Per-operator allocations (db OP_MEMORY; text export operator_memory.csv, Size(KB) × 1024, totals MB × 2^20, release -1 when empty).",
        columns: cols![
            ("file", "FileId", "Row of files."),
            ("device", "i32", "deviceId."),
            ("name", "str", "Operator (GE ops prefixed cann::)."),
            ("size_bytes", "i64 bytes", "Allocation size."),
            (
                "allocation_ns / release_ns",
                "i64 ns",
                "Times; release -1 when not released in the capture."
            ),
            (
                "allocation_total_allocated / _reserved, release_total_allocated / _reserved",
                "i64 bytes",
                "Allocator totals at allocation and release."
            ),
        ],
    },
    TableSchema {
        name: "meta",
        doc: "Run metadata, key/value per file: META_DATA (SCHEMA_VERSION, ENV_VARIABLES, profiler_metadata keys; the profiler_metadata.json of every torch_npu rank folder, whatever its export, gives ENV_VARIABLES, parallel_group_info, distributed_args and pp_info too), npu_info.<id>, session.start_ns/end_ns, host.uid/name (db HOST_INFO; legacy msprof info.json hostUid, else hostname/mac, as host.uid), rank_device_map.<rank>, parallel_group_info (db META_DATA; a text export's profiler_metadata.json; a Kineto header's distributedInfo.pg_config as {pg_name: {group_name: pg_desc, global_ranks: ranks}}), distributed_args (parallel sizes, rank, world size), pp_info, aicore_freq_mhz.<id> (db AICORE_FREQ: the highest sampled clock), device_info.<id>.ai_core_num / .aic_frequency (PROF_*/device_<n>/info.json.<n>), device_properties (a Kineto header's deviceProperties as JSON).",
        columns: cols![
            ("file", "FileId", "Row of files."),
            ("key", "str", "Key."),
            ("value", "str", "Value as written."),
        ],
    },
    TableSchema {
        name: "vendor_overlap",
        doc: "The vendor's overlap rows (a db's OVERLAP_ANALYSIS rows, a trace's `Overlap Analysis` events) as per-device sums, when the reader was asked for sums (analyze: device_time's vendor comparison needs nothing else); empty when the rows became `Overlap Analysis` events (exports, SQL). A trace's events are summed when metadata earlier in the file (or in the same chunk) named their process `Overlap Analysis` and their thread after a kind; later-named ones stay events (device_time and ranks read both).",
        columns: cols![
            ("file", "FileId", "Row of files."),
            (
                "device_id",
                "i32",
                "OVERLAP_ANALYSIS.deviceId; a trace's: its process's device id when known, else -1."
            ),
            (
                "kind",
                "u8",
                "0 Computing, 1 Communication, 2 Communication(Not Overlapped), 3 Free (OVERLAP_ANALYSIS.type)."
            ),
            ("rows", "u64", "Rows of that device and kind."),
            (
                "dur_ns",
                "i64 ns",
                "Sum of endNs - startNs over those rows."
            ),
        ],
    },
    TableSchema {
        name: "reference",
        doc: "Vendor-derived values kept for comparison only, one row per cell: analysis.db (StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth, CommAnalyzerMatrix) and the text export's step_trace_time.csv, op_statistic.csv, task_time.csv, communication.json, communication_matrix.json (msprof-analyze cluster_* files when read directly). JSON records: the keys above a record are text columns (step, kind, op, link; cluster: group, step, op, rank), nested keys joined with /.",
        columns: cols![
            (
                "file",
                "FileId",
                "Row of files (the rank's main input: the db beside analysis.db, or the text export the files sit beside)."
            ),
            (
                "table",
                "str",
                "Vendor table, or the file name for text files."
            ),
            (
                "row",
                "u32",
                "Row within that table (rowid order; CSV line order; JSON key order)."
            ),
            ("column", "str", "Vendor column."),
            (
                "number",
                "f64",
                "Numeric value in the vendor's unit (µs for StepTraceTime / step_trace_time.csv / CommAnalyzerTime; the unit in the column name otherwise); NaN for text."
            ),
            ("text", "str", "Text value; empty for numbers."),
        ],
    },
    TableSchema {
        name: "counters",
        doc: "C events, one row per numeric arg.",
        columns: cols![
            ("process", "ProcessId", "Row of processes."),
            ("name", "str", "C event name (APP/HBM, AI Core Freq)."),
            ("series", "str", "Arg key of the value (KB, MHz)."),
            ("ts_ns", "i64 ns", "Sample time."),
            ("value", "f64", "Value in the series' own unit."),
        ],
    },
    TableSchema {
        name: "flows",
        doc: "Flow events s/t/f (HostToDevice, async_npu, enqueue_to_dequeue, fwdbwd, ac2g).",
        columns: cols![
            ("thread", "ThreadId", "Row of threads."),
            ("phase", "enum", "start | step | finish."),
            ("cat", "str", "Flow category."),
            ("name", "str", "Flow name."),
            (
                "id",
                "u64",
                "Flow id (numeric strings parsed; other strings hashed)."
            ),
            ("ts_ns", "i64 ns", "Time."),
            ("bind_enclosing", "bool", "bp == e."),
        ],
    },
    TableSchema {
        name: "diagnostics",
        doc: "Counted anomalies (code, severity, count, first examples); see docs/diagnostics.md.",
        columns: cols![
            (
                "code",
                "str",
                "Stable code (truncated, overlapping_events, unknown_phase, ...)."
            ),
            ("severity", "enum", "info | data_loss | error."),
            ("count", "u64", "Occurrences."),
            (
                "examples",
                "list<str>",
                "First few examples with file and byte offset."
            ),
        ],
    },
];

/// The schema as the Markdown that docs/tables.md carries between its schema markers.
pub fn render_markdown() -> String {
    let mut s = String::new();
    for t in TABLES {
        s.push_str(&format!(
            "### `{}`\n\n{}\n\n| column | type | meaning |\n|---|---|---|\n",
            t.name, t.doc
        ));
        for c in t.columns {
            s.push_str(&format!(
                "| `{}` | {} | {} |\n",
                c.name,
                c.ty,
                c.doc.replace('|', "\\|")
            ));
        }
        s.push('\n');
    }
    s
}
