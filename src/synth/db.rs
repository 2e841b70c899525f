//! Writes a generated rank as torch_npu's `ascend_pytorch_profiler_<rank>.db` (tables and column
//! types exactly as shared/formats/ascend-formats.md §2.2-2.3 declare them) plus `analysis.db`
//! (StepTraceTime). Fed by the same generator calls that write trace_view.json, so both hold
//! one run: each device task is a TASK row (kernels with COMPUTE_TASK_INFO, AICPU / HCCL
//! scheduling kernels with COMMUNICATION_SCHEDULE_TASK_INFO), collectives COMMUNICATION_OP, host
//! events CANN_API / PYTORCH_API (TEXT times, queue correlation through CONNECTION_IDS), vendor
//! rows OVERLAP_ANALYSIS, HBM samples NPU_MEM.

use crate::ingest::ascend_db::FWK_CONNECTION_BASE;
use rusqlite::{Connection, params};
use std::collections::HashMap;
use std::path::Path;

const SCHEMA: &str = "
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER, endTimeNs INTEGER);
CREATE TABLE NPU_INFO (id INTEGER, name TEXT);
CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
CREATE TABLE HOST_INFO (hostUid TEXT, hostName TEXT);
CREATE TABLE META_DATA (name TEXT, value TEXT);
CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER, modelId INTEGER);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockNum INTEGER, mixBlockNum INTEGER, taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER, opState INTEGER, hf32Eligible INTEGER, gridDim INTEGER, blockDim INTEGER);
CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, taskType INTEGER, opType INTEGER);
CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER, retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER, deviceId INTEGER, rankSize INTEGER);
CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER, connectionId INTEGER PRIMARY KEY, name INTEGER);
CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, type INTEGER);
CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);
CREATE TABLE OVERLAP_ANALYSIS (id INTEGER PRIMARY KEY, deviceId INTEGER, startNs NUMERIC, endNs NUMERIC, type INTEGER);
CREATE TABLE NPU_MEM (type INTEGER, ddr NUMERIC, hbm NUMERIC, timestampNs INTEGER, deviceId INTEGER);
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY, name TEXT);
";

const API_TYPES: &[(i64, &str)] = &[
    (5000, "runtime"),
    (5500, "hccl"),
    (10000, "node"),
    (15000, "model"),
    (20000, "acl"),
    (50001, "op"),
    (50002, "queue"),
    (50003, "trace"),
    (50004, "mstx"),
];

/// torch_npu framework strings start here (START_STRING_ID_FWK_API).
const FWK_STRING_BASE: i64 = 1 << 28;
const UINT32_MAX: i64 = 4_294_967_295;

/// How a device task is described beyond its TASK row.
pub enum TaskInfo<'a> {
    /// A computing kernel: COMPUTE_TASK_INFO (name, op type).
    Kernel { name: &'a str, op_type: &'a str },
    /// An AICPU / HCCL scheduling kernel: COMMUNICATION_SCHEDULE_TASK_INFO.
    Schedule { name: &'a str },
    /// A bare task (waits, records, copies): the name is its task type.
    None,
}

pub struct DbWriter {
    c: Connection,
    strings: HashMap<String, i64>,
    /// Next CANN / framework string id.
    next_cann: i64,
    next_fwk: i64,
    global_task_id: i64,
    op_id: i64,
    overlap_id: i64,
    connection_index: i64,
    rank: u32,
    device: i64,
    host_pid: i64,
    window: (i64, i64),
    /// Vendor totals per kind (Computing, Communication, Not overlapped, Free), ns.
    overlap_ns: [i64; 4],
}

fn sql(e: rusqlite::Error) -> std::io::Error {
    std::io::Error::other(e)
}

impl DbWriter {
    pub fn create(path: &Path, rank: u32, device: i64, host_pid: i64) -> std::io::Result<DbWriter> {
        if path.exists() {
            std::fs::remove_file(path)?;
        }
        let c = Connection::open(path).map_err(sql)?;
        c.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 4096;",
        )
        .map_err(sql)?;
        c.execute_batch(SCHEMA).map_err(sql)?;
        c.execute_batch("BEGIN").map_err(sql)?;
        Ok(DbWriter {
            c,
            strings: HashMap::new(),
            next_cann: 1,
            next_fwk: FWK_STRING_BASE,
            global_task_id: 0,
            op_id: 0,
            overlap_id: 0,
            connection_index: 0,
            rank,
            device,
            host_pid,
            window: (i64::MAX, i64::MIN),
            overlap_ns: [0; 4],
        })
    }

    /// The STRING_IDS id of `s` (CANN range, or the torch_npu range for framework names).
    fn sid(&mut self, s: &str, framework: bool) -> i64 {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        let id = if framework {
            self.next_fwk += 1;
            self.next_fwk - 1
        } else {
            self.next_cann += 1;
            self.next_cann - 1
        };
        self.strings.insert(s.to_string(), id);
        id
    }

    fn span(&mut self, start: i64, end: i64) {
        self.window = (self.window.0.min(start), self.window.1.max(end));
    }

    pub fn task(
        &mut self,
        (start, end): (i64, i64),
        stream: i64,
        task_type: &str,
        (connection_id, model_id): (i64, i64),
        info: TaskInfo<'_>,
    ) -> std::io::Result<()> {
        let gid = self.global_task_id;
        self.global_task_id += 1;
        let tt = self.sid(task_type, false);
        self.c
            .prepare_cached(
                "INSERT INTO TASK VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    start,
                    end,
                    self.device,
                    connection_id,
                    gid,
                    self.host_pid,
                    tt,
                    UINT32_MAX,
                    stream,
                    gid & 0xffff,
                    model_id
                ])
            })
            .map_err(sql)?;
        match info {
            TaskInfo::Kernel { name, op_type } => {
                let (n, o) = (self.sid(name, false), self.sid(op_type, false));
                let empty = UINT32_MAX;
                self.c
                    .prepare_cached("INSERT INTO COMPUTE_TASK_INFO VALUES (?1, ?2, 24, 0, ?3, ?4, ?5, ?5, ?5, ?5, ?5, ?5, ?5, ?5, ?5, ?5, 24)")
                    .and_then(|mut st| st.execute(params![n, gid, tt, o, empty]))
                    .map_err(sql)?;
            }
            TaskInfo::Schedule { name } => {
                let n = self.sid(name, false);
                self.c
                    .prepare_cached(
                        "INSERT INTO COMMUNICATION_SCHEDULE_TASK_INFO VALUES (?1, ?2, ?3, ?1)",
                    )
                    .and_then(|mut st| st.execute(params![n, gid, tt]))
                    .map_err(sql)?;
            }
            TaskInfo::None => {}
        }
        self.span(start, end);
        Ok(())
    }

    pub fn comm_op(
        &mut self,
        name: &str,
        (start, end): (i64, i64),
        connection_id: i64,
        group: &str,
    ) -> std::io::Result<()> {
        let (n, g) = (self.sid(name, false), self.sid(group, false));
        let (alg, op) = (self.sid("MESH", false), self.sid("hcom_allReduce_", false));
        self.op_id += 1;
        self.c
            .prepare_cached("INSERT INTO COMMUNICATION_OP VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, 11, ?7, 4194304, ?8, ?9, 2)")
            .and_then(|mut st| {
                st.execute(params![
                    n,
                    start,
                    end,
                    connection_id,
                    g,
                    self.op_id,
                    alg,
                    op,
                    self.device
                ])
            })
            .map_err(sql)?;
        self.span(start, end);
        Ok(())
    }

    /// A CANN API call of `level` (20000 acl, 10000 node, ...); `api` without the `AscendCL@`.
    pub fn cann_api(
        &mut self,
        api: &str,
        level: i64,
        (start, end): (i64, i64),
        tid: i64,
        connection_id: i64,
    ) -> std::io::Result<()> {
        let n = self.sid(api, false);
        let gtid = (self.host_pid << 32) | tid;
        self.c
            .prepare_cached("INSERT INTO CANN_API VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .and_then(|mut st| st.execute(params![start, end, level, gtid, connection_id, n]))
            .map_err(sql)?;
        self.span(start, end);
        Ok(())
    }

    /// A torch_npu framework row: `api_type` 50001 op, 50002 queue (with its correlation id),
    /// 50003 python trace. Times are stored as TEXT, as torch_npu declares them.
    pub fn pytorch_api(
        &mut self,
        name: &str,
        api_type: i64,
        (start, end): (i64, i64),
        tid: i64,
        correlation: Option<i64>,
    ) -> std::io::Result<()> {
        let n = self.sid(name, true);
        let gtid = (self.host_pid << 32) | tid;
        let index = match correlation {
            Some(c) => {
                let i = self.connection_index;
                self.connection_index += 1;
                self.c
                    .prepare_cached("INSERT INTO CONNECTION_IDS VALUES (?1, ?2)")
                    .and_then(|mut st| st.execute(params![i, FWK_CONNECTION_BASE + c]))
                    .map_err(sql)?;
                Some(i)
            }
            None => None,
        };
        self.c
            .prepare_cached(
                "INSERT INTO PYTORCH_API VALUES (?1, ?2, ?3, ?4, ?5, -1, 0, ?6, ?6, NULL, ?7)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    start.to_string(),
                    end.to_string(),
                    gtid,
                    index,
                    n,
                    UINT32_MAX,
                    api_type
                ])
            })
            .map_err(sql)?;
        self.span(start, end);
        Ok(())
    }

    /// A vendor Overlap Analysis row: kind 0 Computing, 1 Communication, 2 Not Overlapped, 3 Free.
    pub fn overlap(&mut self, kind: i64, (start, end): (i64, i64)) -> std::io::Result<()> {
        self.overlap_id += 1;
        self.overlap_ns[kind as usize] += end - start;
        self.c
            .prepare_cached("INSERT INTO OVERLAP_ANALYSIS VALUES (?1, ?2, ?3, ?4, ?5)")
            .and_then(|mut st| st.execute(params![self.overlap_id, self.device, start, end, kind]))
            .map_err(sql)?;
        Ok(())
    }

    pub fn npu_mem(&mut self, ts: i64, hbm_bytes: i64) -> std::io::Result<()> {
        let app = self.sid("app", false);
        self.c
            .prepare_cached("INSERT INTO NPU_MEM VALUES (?1, 0, ?2, ?3, ?4)")
            .and_then(|mut st| st.execute(params![app, hbm_bytes, ts, self.device]))
            .map_err(sql)?;
        Ok(())
    }

    /// Writes the run tables and STRING_IDS, commits, and writes `analysis.db` beside the db.
    pub fn finish(mut self, analysis_db: &Path) -> std::io::Result<()> {
        let c = &self.c;
        let exec = |q: &str, p: &[&dyn rusqlite::ToSql]| c.execute(q, p).map(|_| ()).map_err(sql);
        exec(
            "INSERT INTO SESSION_TIME_INFO VALUES (?1, ?2)",
            &[&self.window.0, &self.window.1],
        )?;
        exec(
            "INSERT INTO NPU_INFO VALUES (?1, 'Ascend910B')",
            &[&self.device],
        )?;
        exec(
            "INSERT INTO RANK_DEVICE_MAP VALUES (?1, ?2)",
            &[&self.rank, &self.device],
        )?;
        exec("INSERT INTO HOST_INFO VALUES ('0', 'profscope-synth')", &[])?;
        for (k, v) in [
            ("SCHEMA_VERSION", "1.2.0"),
            ("SCHEMA_VERSION_MAJOR", "1"),
            ("SCHEMA_VERSION_MINOR", "2"),
            ("SCHEMA_VERSION_MICRO", "0"),
        ] {
            exec("INSERT INTO META_DATA VALUES (?1, ?2)", &[&k, &v])?;
        }
        for (id, name) in API_TYPES {
            exec("INSERT INTO ENUM_API_TYPE VALUES (?1, ?2)", &[id, name])?;
        }
        exec("INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (11, 'BFP16')", &[])?;
        let mut strings: Vec<(&String, &i64)> = self.strings.iter().collect();
        strings.sort_by_key(|x| *x.1);
        for (s, id) in strings {
            exec("INSERT INTO STRING_IDS VALUES (?1, ?2)", &[id, s])?;
        }
        c.execute_batch("CREATE INDEX TaskIndex ON TASK (startNs, globalTaskId); COMMIT")
            .map_err(sql)?;
        self.write_analysis_db(analysis_db)
    }

    /// StepTraceTime of the whole capture (µs, as torch_npu writes it) from the vendor rows.
    fn write_analysis_db(&mut self, path: &Path) -> std::io::Result<()> {
        if path.exists() {
            std::fs::remove_file(path)?;
        }
        let c = Connection::open(path).map_err(sql)?;
        c.execute_batch("CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)")
            .map_err(sql)?;
        let us = |ns: i64| ns as f64 / 1000.0;
        let [comp, comm, not_ov, free] = self.overlap_ns;
        c.execute(
            "INSERT INTO StepTraceTime VALUES (?1, '', ?2, ?3, ?4, ?5, ?6, 0, 0, ?3, 0)",
            params![
                self.device,
                us(comp),
                us(not_ov),
                us(comm - not_ov),
                us(comm),
                us(free)
            ],
        )
        .map_err(sql)?;
        Ok(())
    }
}
