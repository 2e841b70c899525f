//! Parses one byte range of the top-level event array into chunk-local columns. Runs on its own
//! thread; knows nothing of other chunks. Stops before the first event that starts at or after
//! `limit`, at the closing `]`, at the end of the bytes (truncation), or at a syntax error.

use super::container_memo::ContainerMemo;
use super::key_memo::KeyMemo;
use super::keys::{self, Arg, Member};
use super::lexer::{LexError, Lexer, RawStr};
use super::local::{IdKey, LocalStrings, LocalThreads, PackedKey, StringArena};
use super::member_memo::{Hit as MemberHit, MemberMemo, Read};
use super::number::{parse_f64, parse_i64, three_decimals, us_to_ns};
use super::overlap_row;
use super::overlap_sums::{ChunkOverlap, KnownOverlap};
use super::structural::ScanMode;
use super::value_memo::{Known, Lookup, Reader, ValueMemo};
use crate::ingest::OpInputs;
use crate::model::events::EventKind;
use crate::model::flows::FlowPhase;
use crate::units::{MAX_SPAN_NS, MAX_TS_NS};
use std::sync::Arc;

/// Which metadata record an `M` event carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaKind {
    ProcessName,
    ProcessLabels,
    ProcessSortIndex,
    ThreadName,
    ThreadSortIndex,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MetaRecord {
    pub pid: IdKey,
    pub tid: IdKey,
    pub kind: MetaKind,
    pub text: u32,
    pub int: i64,
}

/// A `B` or `E` event, matched into a complete event by the builder.
pub struct BeginEnd {
    pub thread: u32,
    pub begin: bool,
    pub ts_ns: i64,
    pub name: u32,
    pub cat: u32,
    pub offset: usize,
}

/// How a chunk's parse ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkEnd {
    /// Stopped before an event starting at this offset (the next chunk's first event).
    NextEvent(usize),
    /// Consumed the closing `]`; the offset is just past it.
    ArrayEnd(usize),
    /// Bytes ended inside (or right after) an event: the offset where the incomplete part starts.
    Truncated(usize),
    /// A syntax error at this offset.
    Error { offset: usize, what: &'static str },
}

/// Columns of one chunk, with chunk-local string and thread ids.
#[derive(Default)]
pub struct ChunkOut<'a> {
    pub start: usize,
    pub end: Option<ChunkEnd>,
    /// Strings while parsing (borrowed from the input where possible).
    pub strings: LocalStrings<'a>,
    /// The same strings, owned, once the chunk is finished (what the merge reads).
    pub arena: StringArena,
    pub threads: LocalThreads,
    pub ev_thread: Vec<u32>,
    pub ev_ts: Vec<i64>,
    pub ev_dur: Vec<i64>,
    pub ev_name: Vec<u32>,
    pub ev_cat: Vec<u32>,
    pub ev_task_type: Vec<u32>,
    pub ev_stream: Vec<i64>,
    pub ev_kind: Vec<EventKind>,
    pub ev_conn: Vec<i64>,
    pub ev_corr: Vec<i64>,
    /// Ascend `Model Id` / `model id`, Kineto `graph id`; -1 absent.
    pub ev_graph: Vec<i64>,
    /// HCCL plane task details (`args` with `transport type`), one per such event.
    pub comm: Vec<CommRecord>,
    /// Recorded op inputs (`Input Dims` / `Input type` / `Concrete Inputs`), one per such event.
    pub op_args: Vec<OpArgsRecord>,
    /// (event, kernel name) of the launch calls that name their kernel (HIP `args.kernel`,
    /// Ascend `Node@launch` `args.item_id`): few events, so a list rather than a column.
    pub launched: Vec<(u32, u32)>,
    pub begin_end: Vec<BeginEnd>,
    pub metas: Vec<MetaRecord>,
    /// The last metadata record kept per slot of its key's hash: a record that repeats the
    /// latest one of its process or thread (Kineto writes the same names hundreds of thousands
    /// of times) changes nothing when the merge applies it, so it is not kept.
    meta_recent: Vec<Option<MetaRecord>>,
    pub ctr_pid: Vec<IdKey>,
    pub ctr_name: Vec<u32>,
    pub ctr_series: Vec<u32>,
    pub ctr_ts: Vec<i64>,
    pub ctr_value: Vec<f64>,
    pub flow_thread: Vec<u32>,
    pub flow_phase: Vec<FlowPhase>,
    pub flow_cat: Vec<u32>,
    pub flow_name: Vec<u32>,
    pub flow_id: Vec<u64>,
    pub flow_ts: Vec<i64>,
    pub flow_bp: Vec<bool>,
    /// (local thread, device id) from Kineto `args.device`.
    pub device_hints: Vec<(u32, i32)>,
    /// Events per phase byte (X, B, i, ...), all phases including unknown ones.
    pub phase_counts: Vec<u64>,
    /// (offset, reason) of events skipped for a missing/malformed required field.
    pub skipped: Vec<(usize, &'static str)>,
    pub skipped_count: u64,
    pub ignored_meta: u64,
    /// Events whose graph id is not one ([`INVALID_GRAPH`]), and the byte offset of the first.
    pub graph_invalid: u64,
    pub graph_invalid_at: usize,
    /// The plain events of the vendor overlap threads the chunk was told of, summed rather than
    /// emitted.
    pub overlap: ChunkOverlap,
}

/// The event columns of a merged chunk, emptied, for a later chunk to fill: a chunk's columns are
/// megabytes, and fresh pages cost a fault and a zeroing each, so the waves reuse them.
#[derive(Default)]
pub struct Spare {
    ev_thread: Vec<u32>,
    ev_ts: Vec<i64>,
    ev_dur: Vec<i64>,
    ev_name: Vec<u32>,
    ev_cat: Vec<u32>,
    ev_task_type: Vec<u32>,
    ev_stream: Vec<i64>,
    ev_kind: Vec<EventKind>,
    ev_conn: Vec<i64>,
    ev_corr: Vec<i64>,
    ev_graph: Vec<i64>,
}

impl ChunkOut<'_> {
    /// This chunk's event columns, emptied (capacity kept), once it has been merged.
    pub fn into_spare(self) -> Spare {
        fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
            v.clear();
            v
        }
        Spare {
            ev_thread: emptied(self.ev_thread),
            ev_ts: emptied(self.ev_ts),
            ev_dur: emptied(self.ev_dur),
            ev_name: emptied(self.ev_name),
            ev_cat: emptied(self.ev_cat),
            ev_task_type: emptied(self.ev_task_type),
            ev_stream: emptied(self.ev_stream),
            ev_kind: emptied(self.ev_kind),
            ev_conn: emptied(self.ev_conn),
            ev_corr: emptied(self.ev_corr),
            ev_graph: emptied(self.ev_graph),
        }
    }
}

/// The HCCL details of a plane task (trace_view.json `Plane <n>` events), chunk-local.
#[derive(Debug, Clone, Copy)]
pub struct CommRecord {
    /// Index of the event in the chunk's `ev_*` columns.
    pub event: u32,
    pub transport: u32,
    pub link: u32,
    pub data_type: u32,
    pub src_rank: i64,
    pub dst_rank: i64,
    pub size_bytes: i64,
    pub bandwidth_bytes_per_s: f64,
    pub notify_id: i64,
    /// Kineto NCCL kernels: `Process Group Name` and `Collective name` (chunk-local string ids,
    /// 0 when absent); HCCL plane tasks name neither.
    pub group: u32,
    pub op_name: u32,
}

/// The recorded inputs of a host op event (`args` with `Input Dims` or `Input type`),
/// chunk-local string ids (0 when absent).
#[derive(Debug, Clone, Copy)]
pub struct OpArgsRecord {
    /// Index of the event in the chunk's `ev_*` columns.
    pub event: u32,
    pub dims: u32,
    pub types: u32,
    pub concrete: u32,
}

/// Fields of one event, reused across events (no allocation per event).
#[derive(Default)]
struct Raw {
    ph: u8,
    name: RawStr,
    cat: RawStr,
    pid: IdKey,
    tid: IdKey,
    pid_text: Option<RawStr>,
    tid_text: Option<RawStr>,
    ts: Option<i64>,
    dur: Option<i64>,
    ts_bad: bool,
    id: Option<u64>,
    bp_e: bool,
    task_type: RawStr,
    phys_stream: i64,
    stream_id: i64,
    kineto_stream: i64,
    hccl_stream: i64,
    conn: i64,
    corr: i64,
    graph: i64,
    kernel: RawStr,
    item_id: RawStr,
    device: i64,
    meta_name: RawStr,
    meta_labels: RawStr,
    sort_index: Option<i64>,
    has_name: bool,
    transport: RawStr,
    link: RawStr,
    data_type: RawStr,
    src_rank: i64,
    dst_rank: i64,
    size_bytes: i64,
    bandwidth_gb_s: f64,
    notify_id: i64,
    process_group: RawStr,
    collective: RawStr,
    input_dims: RawStr,
    input_type: RawStr,
    concrete: RawStr,
    /// Inputs were recorded but not kept ([`OpInputs`]): a row with empty texts.
    inputs_dropped: bool,
    /// Whether this event's name keeps its inputs, once the name is read and tested.
    inputs_kept: Option<bool>,
    nums: [(RawStr, (usize, u32)); 16],
    n_nums: usize,
    nums_overflow: bool,
}

impl Raw {
    fn reset(&mut self) {
        self.ph = 0;
        self.name = RawStr::default();
        self.cat = RawStr::default();
        self.pid = IdKey::Num(0);
        self.tid = IdKey::Num(0);
        self.pid_text = None;
        self.tid_text = None;
        self.ts = None;
        self.dur = None;
        self.ts_bad = false;
        self.id = None;
        self.bp_e = false;
        self.task_type = RawStr::default();
        self.phys_stream = -1;
        self.stream_id = -1;
        self.kineto_stream = -1;
        self.hccl_stream = -1;
        self.conn = -1;
        self.corr = -1;
        self.graph = -1;
        self.kernel = RawStr::default();
        self.item_id = RawStr::default();
        self.device = -1;
        self.meta_name = RawStr::default();
        self.meta_labels = RawStr::default();
        self.sort_index = None;
        self.has_name = false;
        self.transport = RawStr::default();
        self.link = RawStr::default();
        self.data_type = RawStr::default();
        self.src_rank = -1;
        self.dst_rank = -1;
        self.size_bytes = -1;
        self.bandwidth_gb_s = f64::NAN;
        self.notify_id = -1;
        self.process_group = RawStr::default();
        self.collective = RawStr::default();
        self.input_dims = RawStr::default();
        self.input_type = RawStr::default();
        self.concrete = RawStr::default();
        self.inputs_dropped = false;
        self.inputs_kept = None;
        self.n_nums = 0;
        self.nums_overflow = false;
    }

    /// Nothing but the event itself: no HCCL details, recorded inputs, launched kernel or device
    /// hint (such an event of an overlap thread is emitted, and the merge sums it).
    #[inline]
    fn plain(&self) -> bool {
        (self.transport.len()
            | self.process_group.len()
            | self.input_dims.len()
            | self.input_type.len()
            | self.kernel.len()
            | self.item_id.len())
            == 0
            && !self.inputs_dropped
            && self.device < 0
    }

    fn stream(&self) -> i64 {
        [
            self.phys_stream,
            self.stream_id,
            self.kineto_stream,
            self.hccl_stream,
        ]
        .into_iter()
        .find(|&s| s >= 0)
        .unwrap_or(-1)
    }
}

/// How a chunk is read: the tokeniser, and whose recorded op inputs are kept.
#[derive(Debug, Clone, Copy)]
pub struct ChunkRead {
    pub scan: ScanMode,
    pub op_inputs: OpInputs,
}

/// Parses events of the array from `start` (an event's `{`, or the first byte after `[`), into
/// the columns of `spare`; the plain events of the threads `known` lists are summed instead.
///
/// The scanner is compiled twice ([`Isa`]): for the baseline instructions, and for AVX2 with
/// BMI1/BMI2/LZCNT/POPCNT (x86-64-v3's integer and vector extensions), which runs where the CPU
/// has them, unless `read.scan` asks for the baseline copy. Both copies are the same source, so
/// they give the same tables (tests/it/scan_modes.rs compares them on every real JSON sample).
pub fn parse_chunk(
    b: &[u8],
    start: usize,
    limit: usize,
    read: ChunkRead,
    spare: Spare,
    known: Arc<KnownOverlap>,
) -> ChunkOut<'_> {
    #[cfg(target_arch = "x86_64")]
    if read.scan != ScanMode::ScalarBaseline && v3_cpu() {
        // SAFETY: `v3_cpu` checked that this CPU has every feature `parse_chunk_v3` enables.
        return unsafe { parse_chunk_v3(b, start, limit, read, spare, known) };
    }
    parse_chunk_in::<Baseline>(b, start, limit, read, spare, known)
}

/// Whether this CPU runs the scanner's AVX2 copy: every feature [`parse_chunk_v3`] enables
/// (the standard library's detection is cached).
#[cfg(target_arch = "x86_64")]
fn v3_cpu() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("popcnt")
}

/// [`parse_chunk`]'s AVX2 copy: the scanner inlined here is compiled with these features.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn parse_chunk_v3(
    b: &[u8],
    start: usize,
    limit: usize,
    read: ChunkRead,
    spare: Spare,
    known: Arc<KnownOverlap>,
) -> ChunkOut<'_> {
    parse_chunk_in::<V3>(b, start, limit, read, spare, known)
}

/// Which copy of the scanner a generic function is part of. Everything generic over it is
/// inlined into the copy's entry ([`parse_chunk_v3`] or [`parse_chunk`]); `parse_args`, kept out
/// of line (inlined, it makes the member loop spill), has one entry per copy.
trait Isa {
    fn parse_args(lx: &mut Lexer<'_>, raw: &mut Raw, memos: &mut Memos) -> Result<(), LexError>;
}

/// The baseline copy.
struct Baseline;

impl Isa for Baseline {
    #[inline(never)]
    fn parse_args(lx: &mut Lexer<'_>, raw: &mut Raw, memos: &mut Memos) -> Result<(), LexError> {
        parse_args(lx, raw, memos)
    }
}

/// The AVX2 copy.
#[cfg(target_arch = "x86_64")]
struct V3;

#[cfg(target_arch = "x86_64")]
impl Isa for V3 {
    #[inline(always)]
    fn parse_args(lx: &mut Lexer<'_>, raw: &mut Raw, memos: &mut Memos) -> Result<(), LexError> {
        // SAFETY: `V3` is only used inside `parse_chunk_v3`, entered after `v3_cpu` checked the
        // features `parse_args_v3` enables (the same ones).
        unsafe { parse_args_v3(lx, raw, memos) }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
#[inline(never)]
fn parse_args_v3(lx: &mut Lexer<'_>, raw: &mut Raw, memos: &mut Memos) -> Result<(), LexError> {
    parse_args(lx, raw, memos)
}

/// The scanner's body, in the copy `I`.
#[inline(always)]
fn parse_chunk_in<I: Isa>(
    b: &[u8],
    start: usize,
    limit: usize,
    read: ChunkRead,
    spare: Spare,
    known: Arc<KnownOverlap>,
) -> ChunkOut<'_> {
    let mut out = ChunkOut {
        start,
        overlap: ChunkOverlap::new(known),
        phase_counts: vec![0; 128],
        ev_thread: spare.ev_thread,
        ev_ts: spare.ev_ts,
        ev_dur: spare.ev_dur,
        ev_name: spare.ev_name,
        ev_cat: spare.ev_cat,
        ev_task_type: spare.ev_task_type,
        ev_stream: spare.ev_stream,
        ev_kind: spare.ev_kind,
        ev_conn: spare.ev_conn,
        ev_corr: spare.ev_corr,
        ev_graph: spare.ev_graph,
        ..Default::default()
    };
    let mut lx = Lexer::with_mode(b, start, read.scan);
    let mut raw = Raw::default();
    let mut memos = Memos {
        op_inputs: read.op_inputs,
        ..Memos::default()
    };
    // The vendor overlap rows of the threads this chunk sums, read by their shape first.
    let rows_by_shape = !lx.indexed() && out.overlap.sums_any();
    let end = loop {
        let c = match lx.peek() {
            Ok(c) => c,
            Err(_) => break ChunkEnd::Truncated(lx.pos),
        };
        match c {
            b']' => break ChunkEnd::ArrayEnd(lx.pos + 1),
            b',' => {
                lx.pos += 1;
                continue;
            }
            b'{' => {}
            _ => {
                break ChunkEnd::Error {
                    offset: lx.pos,
                    what: "expected an event object",
                };
            }
        }
        let ev_start = lx.pos;
        if ev_start >= limit {
            break ChunkEnd::NextEvent(ev_start);
        }
        if rows_by_shape {
            let overlap = &out.overlap;
            if let Some(row) = overlap_row::read(
                &mut lx,
                |p| overlap.listed_process(IdKey::Num(p)),
                time_value,
            ) && sum_row(&mut out, row)
            {
                continue;
            }
            lx.pos = ev_start;
        }
        raw.reset();
        match parse_event::<I>(&mut lx, &mut raw, &mut memos) {
            Ok(()) => emit(&mut out, b, &raw, ev_start),
            Err(LexError::Eof) => break ChunkEnd::Truncated(ev_start),
            Err(LexError::Unexpected { pos, what }) => break ChunkEnd::Error { offset: pos, what },
        }
    };
    out.end = Some(end);
    (out.graph_invalid, out.graph_invalid_at) = memos.graph_invalid;
    out.arena = std::mem::take(&mut out.strings).into_arena();
    out
}

#[inline]
fn id_key(lx: &mut Lexer<'_>, strings_hint: &mut Option<RawStr>) -> Result<IdKey, LexError> {
    if lx.peek()? == b'"' {
        let s = lx.string()?;
        let bytes = lx.bytes(s);
        if let Some(v) = parse_i64(bytes) {
            return Ok(IdKey::Num(v));
        }
        *strings_hint = Some(s);
        Ok(IdKey::Text(u64::from(u32::MAX)))
    } else if let Some(v) = lx.plain_i64() {
        Ok(IdKey::Num(v))
    } else {
        let t = lx.scalar_token()?;
        Ok(IdKey::Num(parse_i64(t).unwrap_or(0)))
    }
}

#[inline]
fn int_value(lx: &mut Lexer<'_>) -> Result<i64, LexError> {
    if lx.peek()? == b'"' {
        let s = lx.string()?;
        return Ok(parse_i64(lx.bytes(s)).unwrap_or(-1));
    }
    match lx.peek()? {
        b'{' | b'[' => {
            lx.skip_value()?;
            Ok(-1)
        }
        _ => match lx.plain_i64() {
            Some(v) => Ok(v),
            None => Ok(parse_i64(lx.scalar_token()?).unwrap_or(-1)),
        },
    }
}

/// The value an event's graph id holds when it is not one a graph can have.
pub const INVALID_GRAPH: i64 = i64::MIN;

/// A graph / model id (`Model Id`, `model id`, `graph id`): an integer from 0 to 4294967295
/// (Ascend's model ids and CUPTI's graph ids are 32-bit unsigned; 4294967295 is Ascend's "no
/// graph"); `null` is none (-1); anything else (a negative or larger number, a fraction, a
/// string, a list) is [`INVALID_GRAPH`], counted by the chunk as a `graph_id_invalid`.
fn graph_value(lx: &mut Lexer<'_>) -> Result<i64, LexError> {
    let v = match lx.peek()? {
        b'"' | b'{' | b'[' => {
            lx.skip_value()?;
            return Ok(INVALID_GRAPH);
        }
        _ => match lx.plain_i64() {
            Some(v) => Some(v),
            None => {
                let t = lx.scalar_token()?;
                if t == b"null" {
                    return Ok(-1);
                }
                parse_i64(t).filter(|_| t.iter().all(|c| c.is_ascii_digit() || *c == b'-'))
            }
        },
    };
    Ok(v.filter(|v| (0..=u32::MAX as i64).contains(v))
        .unwrap_or(INVALID_GRAPH))
}

/// A `ts` or `dur` value as ns: the shape nearly every one has (three decimals, quoted or not:
/// [`three_decimals`]) read here, in the caller, anything else by [`time_value_other`].
#[inline(always)]
pub(super) fn time_value(lx: &mut Lexer<'_>) -> Result<Option<i64>, LexError> {
    if !lx.indexed() {
        let found = if lx.b.get(lx.pos) == Some(&b'"') {
            three_decimals::<true>(lx.b, lx.pos + 1).map(|(ns, end)| (ns, end + 1))
        } else {
            three_decimals::<false>(lx.b, lx.pos)
        };
        if let Some((ns, end)) = found {
            lx.pos = end;
            return Ok(Some(ns));
        }
    }
    time_value_other(lx)
}

/// [`time_value`] of the other shapes: the common ones at the cursor read in one pass here,
/// anything else (blanks first, other shapes, the indexed mode) by [`time_value_rare`].
#[inline(never)]
fn time_value_other(lx: &mut Lexer<'_>) -> Result<Option<i64>, LexError> {
    let scanned = match lx.b.get(lx.pos) {
        Some(b'"') => lx.quoted_us_to_ns(),
        Some(b'0'..=b'9') => lx.plain_us_to_ns(),
        _ => None,
    };
    match scanned {
        Some(ns) => Ok(Some(ns)),
        None => time_value_rare(lx),
    }
}

#[cold]
#[inline(never)]
fn time_value_rare(lx: &mut Lexer<'_>) -> Result<Option<i64>, LexError> {
    let t = if lx.peek()? == b'"' {
        if let Some(ns) = lx.quoted_us_to_ns() {
            return Ok(Some(ns));
        }
        let s = lx.string()?;
        lx.bytes(s)
    } else if let Some(ns) = lx.plain_us_to_ns() {
        return Ok(Some(ns));
    } else {
        lx.scalar_token()?
    };
    Ok(us_to_ns(t))
}

/// The bytes of a scalar value, quoted or not; None (the value skipped) for an object or array.
fn scalar_bytes<'b>(lx: &mut Lexer<'b>) -> Result<Option<&'b [u8]>, LexError> {
    Ok(match lx.peek()? {
        b'"' => {
            let s = lx.string()?;
            Some(lx.bytes(s))
        }
        b'{' | b'[' => {
            lx.skip_value()?;
            None
        }
        _ => Some(lx.scalar_token()?),
    })
}

fn float_value(lx: &mut Lexer<'_>) -> Result<f64, LexError> {
    Ok(scalar_bytes(lx)?.and_then(parse_f64).unwrap_or(f64::NAN))
}

/// A notify id, written as a decimal string; UINT64_MAX (none) and anything unparsable → -1.
fn notify_value(lx: &mut Lexer<'_>) -> Result<i64, LexError> {
    Ok(scalar_bytes(lx)?
        .and_then(|t| std::str::from_utf8(t).ok())
        .and_then(|x| x.parse::<u64>().ok())
        .and_then(|v| i64::try_from(v).ok())
        .unwrap_or(-1))
}

#[inline]
fn string_value(lx: &mut Lexer<'_>) -> Result<RawStr, LexError> {
    if lx.peek()? == b'"' {
        lx.string()
    } else {
        lx.skip_value()?;
        Ok(RawStr::default())
    }
}

/// A string's contents, or any other value's JSON text as written (Kineto writes `Input Dims`
/// as an array of arrays, torch_npu as a string).
fn text_or_raw(
    lx: &mut Lexer<'_>,
    containers: &mut ContainerMemo,
    ordinal: usize,
) -> Result<RawStr, LexError> {
    let (start, len) = match lx.peek()? {
        b'"' => return lx.string(),
        b'[' | b'{' => memo_container(lx, containers, ordinal)?,
        _ => {
            let start = lx.pos;
            lx.skip_value()?;
            (start, lx.pos - start)
        }
    };
    Ok(RawStr::new(start, u32::try_from(len).unwrap_or(0), false))
}

/// The array or object at the cursor, passed over through the container memo (scalar mode
/// only): (start, length in bytes).
#[inline]
fn memo_container(
    lx: &mut Lexer<'_>,
    containers: &mut ContainerMemo,
    ordinal: usize,
) -> Result<(usize, usize), LexError> {
    let at = lx.pos;
    let memo = !lx.indexed();
    if memo && let Some(len) = containers.lookup(lx.b, at, ordinal) {
        lx.pos = at + len;
        return Ok((at, len));
    }
    lx.skip_value()?;
    if memo {
        containers.learn(lx.b, at, lx.pos - at, ordinal);
    }
    Ok((at, lx.pos - at))
}

/// The member names and values of the objects read so far, per kind of object.
#[derive(Default)]
struct Memos {
    event: KeyMemo<Member>,
    args: KeyMemo<Arg>,
    event_members: MemberMemo<Member>,
    arg_members: MemberMemo<Arg>,
    event_values: ValueMemo,
    arg_values: ValueMemo,
    /// Graph ids that are not one ([`INVALID_GRAPH`]), and the byte offset of the first (counted
    /// where the arg is read, so events without one pay nothing).
    graph_invalid: (u64, usize),
    /// Whose recorded inputs are kept ([`OpInputs`]).
    op_inputs: OpInputs,
    /// The arrays and objects of args read whole.
    containers: ContainerMemo,
    /// Whose recorded inputs are kept, by op name.
    kept: NameKeeps,
}

/// A member's value at the cursor through the value memo (scalar mode only): the answer `reader`
/// gave the same bytes before, else `read`'s, memorised when `learnable` says it is one.
#[inline(always)]
fn remembered<T>(
    lx: &mut Lexer<'_>,
    memo: &mut ValueMemo,
    ordinal: usize,
    reader: Reader,
    hit: impl FnOnce(Known, usize) -> Option<T>,
    read: impl FnOnce(&mut Lexer<'_>) -> Result<T, LexError>,
    learnable: impl FnOnce(&T, usize) -> Option<Known>,
) -> Result<T, LexError> {
    let at = lx.pos;
    if lx.indexed() {
        return read(lx);
    }
    let learn = match memo.lookup(lx.b, at, ordinal, reader) {
        Lookup::Hit(known, end) => match hit(known, at) {
            Some(v) => {
                lx.pos = end;
                memo.hit = Some(known);
                return Ok(v);
            }
            None => true,
        },
        Lookup::Miss { learn } => learn,
    };
    let v = read(lx)?;
    if learn && let Some(known) = learnable(&v, at) {
        memo.learn(lx.b, (at, lx.pos), reader, known, ordinal);
    }
    Ok(v)
}

#[inline(always)]
fn memo_int(lx: &mut Lexer<'_>, memo: &mut ValueMemo, ordinal: usize) -> Result<i64, LexError> {
    memo_int_with(lx, memo, ordinal, Reader::Int, int_value)
}

/// [`memo_int`] with another reader of the integer (`reader` names it: readers that differ on
/// some bytes must not share answers).
#[inline(always)]
fn memo_int_with(
    lx: &mut Lexer<'_>,
    memo: &mut ValueMemo,
    ordinal: usize,
    reader: Reader,
    read: fn(&mut Lexer<'_>) -> Result<i64, LexError>,
) -> Result<i64, LexError> {
    remembered(
        lx,
        memo,
        ordinal,
        reader,
        |k, _| match k {
            Known::Int(v) => Some(v),
            _ => None,
        },
        read,
        |&v, _| Some(Known::Int(v)),
    )
}

#[inline(always)]
fn memo_str(lx: &mut Lexer<'_>, memo: &mut ValueMemo, ordinal: usize) -> Result<RawStr, LexError> {
    remembered(
        lx,
        memo,
        ordinal,
        Reader::Str,
        |k, at| matches!(k, Known::Str { .. }).then(|| k.raw_str(at)),
        string_value,
        |&s, at| Known::of_str(s, at),
    )
}

/// A pid or tid; only numeric ones are memorised (a text id also leaves its location in `hint`).
#[inline(always)]
fn memo_id(
    lx: &mut Lexer<'_>,
    memo: &mut ValueMemo,
    ordinal: usize,
    hint: &mut Option<RawStr>,
) -> Result<IdKey, LexError> {
    remembered(
        lx,
        memo,
        ordinal,
        Reader::Id,
        |k, _| match k {
            Known::Int(v) => Some(IdKey::Num(v)),
            _ => None,
        },
        |lx| id_key(lx, hint),
        |&k, _| match k {
            IdKey::Num(v) => Some(Known::Int(v)),
            IdKey::Text(_) => None,
        },
    )
}

/// The next member's name and class, the cursor left at its value: from the memo when the bytes
/// match a memorised prefix (scalar mode only), else by the lexer, teaching the memo.
#[inline(always)]
fn next_member<C: Copy + Default>(
    lx: &mut Lexer<'_>,
    memo: &mut KeyMemo<C>,
    ordinal: usize,
    classify: fn(&[u8]) -> C,
) -> Result<(RawStr, C), LexError> {
    let start = lx.pos;
    if !lx.indexed()
        && let Some(hit) = memo.lookup(lx.b, start, ordinal)
    {
        lx.pos = hit.value_at;
        return Ok((hit.key, hit.class));
    }
    let key = lx.string()?;
    lx.expect(b':', "expected ':'")?;
    lx.ws();
    let class = classify(lx.bytes(key));
    memo.learn(lx.b, start, lx.pos, key, class, ordinal);
    Ok((key, class))
}

/// An event member recognised whole by the member memo: what its member's arm of [`parse_event`]
/// does with the value memo's answer (only those members are memorised).
#[inline(always)]
fn event_member(raw: &mut Raw, b: &[u8], hit: MemberHit<Member>) {
    let s = hit.known.raw_str(hit.value_at);
    let id = match hit.known {
        Known::Int(v) => IdKey::Num(v),
        _ => IdKey::Num(0),
    };
    match hit.class {
        Member::Ph => raw.ph = if !s.is_empty() { b[s.start] } else { 0 },
        Member::Name => {
            raw.name = s;
            raw.has_name = true;
        }
        Member::Cat => raw.cat = s,
        Member::Pid => raw.pid = id,
        Member::Tid => raw.tid = id,
        _ => unreachable!("only the members above are memorised"),
    }
}

#[inline(always)]
fn parse_event<I: Isa>(
    lx: &mut Lexer<'_>,
    raw: &mut Raw,
    memos: &mut Memos,
) -> Result<(), LexError> {
    lx.expect(b'{', "expected '{'")?;
    if lx.peek()? == b'}' {
        lx.pos += 1;
        return Ok(());
    }
    let mut ordinal = 0;
    loop {
        let start = lx.pos;
        if !lx.indexed()
            && let Some(hit) = memos.event_members.lookup(lx.b, start, ordinal)
        {
            event_member(raw, lx.b, hit);
            lx.pos = hit.end;
            ordinal += 1;
            if !lx.comma_or_close(b'}')? {
                break;
            }
            continue;
        }
        let (key, member) = next_member(lx, &mut memos.event, ordinal, keys::member)?;
        let (n, values) = (ordinal, &mut memos.event_values);
        let value_at = lx.pos;
        values.hit = None;
        ordinal += 1;
        match member {
            Member::Ph => {
                let s = memo_str(lx, values, n)?;
                raw.ph = if !s.is_empty() { lx.b[s.start] } else { 0 };
            }
            Member::Name => {
                raw.name = memo_str(lx, values, n)?;
                raw.has_name = true;
            }
            Member::Cat => raw.cat = memo_str(lx, values, n)?,
            Member::Pid => raw.pid = memo_id(lx, values, n, &mut raw.pid_text)?,
            Member::Tid => raw.tid = memo_id(lx, values, n, &mut raw.tid_text)?,
            Member::Ts => {
                raw.ts = time_value(lx)?;
                raw.ts_bad = raw.ts.is_none();
            }
            Member::Dur => raw.dur = time_value(lx)?,
            Member::Id => raw.id = Some(flow_id(lx)?),
            Member::Bp => {
                let s = string_value(lx)?;
                raw.bp_e = lx.bytes(s) == b"e";
            }
            Member::Args => I::parse_args(lx, raw, memos)?,
            Member::Other => lx.skip_value()?,
        }
        if let Some(known) = memos.event_values.hit.take()
            && matches!(
                member,
                Member::Ph | Member::Name | Member::Cat | Member::Pid | Member::Tid
            )
        {
            let read = Read {
                start,
                key,
                class: member,
                known,
                value_at,
                end: lx.pos,
            };
            memos.event_members.learn(lx.b, read, n);
        }
        if !lx.comma_or_close(b'}')? {
            break;
        }
    }
    // Inputs read before the name (args written first): dropped now if the name is not kept,
    // so the tables do not depend on the members' order.
    if (!raw.input_dims.is_empty() || !raw.input_type.is_empty())
        && !inputs_wanted(lx, raw, memos.op_inputs, &mut memos.kept)
    {
        raw.input_dims = RawStr::default();
        raw.input_type = RawStr::default();
        raw.concrete = RawStr::default();
        raw.inputs_dropped = true;
    }
    Ok(())
}

/// True when the recorded inputs of the event in `raw` are kept: every event's when `op_inputs`
/// is `None`; else those of an event whose name `op_inputs` keeps, or whose name is not read yet
/// or is escaped (decided again after the event, or kept).
#[inline]
fn inputs_wanted(lx: &Lexer<'_>, raw: &mut Raw, op_inputs: OpInputs, kept: &mut NameKeeps) -> bool {
    let Some(keep) = op_inputs else {
        return true;
    };
    if !raw.has_name || raw.name.escaped() {
        return true;
    }
    // Asked once per input member and once after the event: the name is tested once.
    *raw.inputs_kept
        .get_or_insert_with(|| kept.decide(lx.b, raw.name, keep))
}

/// The answers of `keep` for the op names met lately (a trace repeats a few hundred names): 64
/// names in a table indexed by their hash, each compared whole before its answer is reused.
struct NameKeeps {
    /// Per slot: where a name was read (offset, length; length 0 = empty slot), and the answer.
    slots: [(usize, u32, bool); 64],
}

impl Default for NameKeeps {
    fn default() -> Self {
        NameKeeps {
            slots: [(0, 0, false); 64],
        }
    }
}

impl NameKeeps {
    #[inline]
    fn decide(&mut self, b: &[u8], name: RawStr, keep: fn(&str) -> bool) -> bool {
        let bytes = &b[name.start..name.start + name.len() as usize];
        let slot = &mut self.slots[(crate::model::hash::bytes_hash(bytes) >> 58) as usize];
        if slot.1 == name.len()
            && !name.is_empty()
            && super::local::Bytes(&b[slot.0..slot.0 + slot.1 as usize])
                == super::local::Bytes(bytes)
        {
            return slot.2;
        }
        let answer = std::str::from_utf8(bytes).map_or(true, keep);
        *slot = (name.start, name.len(), answer);
        answer
    }
}

/// Skips a recorded-input value; true when reading it would have given text (the event then
/// keeps its op_args row, with empty texts).
fn skip_input(
    lx: &mut Lexer<'_>,
    containers: &mut ContainerMemo,
    ordinal: usize,
) -> Result<bool, LexError> {
    let at = lx.pos;
    let c = lx.peek()?;
    if matches!(c, b'[' | b'{') {
        memo_container(lx, containers, ordinal)?;
        return Ok(true);
    }
    lx.skip_value()?;
    Ok(lx.pos - at > if c == b'"' { 2 } else { 0 })
}

fn flow_id(lx: &mut Lexer<'_>) -> Result<u64, LexError> {
    let bytes = if lx.peek()? == b'"' {
        let s = lx.string()?;
        lx.bytes(s)
    } else {
        lx.scalar_token()?
    };
    if let Some(v) = std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| t.parse::<u64>().ok())
    {
        return Ok(v);
    }
    if let Some(v) = parse_i64(bytes) {
        return Ok(v as u64);
    }
    // FNV-1a of a non-numeric id.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in bytes {
        h = (h ^ c as u64).wrapping_mul(0x100_0000_01b3);
    }
    Ok(h)
}

/// An event's `args`, in the copy of the scanner it is inlined into ([`Isa::parse_args`]).
#[inline(always)]
fn parse_args(lx: &mut Lexer<'_>, raw: &mut Raw, memos: &mut Memos) -> Result<(), LexError> {
    let Memos {
        args: memo,
        arg_values: values,
        arg_members: members,
        graph_invalid,
        op_inputs,
        containers,
        kept,
        ..
    } = memos;
    let op_inputs = *op_inputs;
    if lx.peek()? != b'{' {
        return lx.skip_value();
    }
    lx.pos += 1;
    if lx.peek()? == b'}' {
        lx.pos += 1;
        return Ok(());
    }
    let mut ordinal = 0;
    loop {
        let start = lx.pos;
        if !lx.indexed()
            && let Some(hit) = members.lookup(lx.b, start, ordinal)
        {
            arg_member(raw, hit, graph_invalid);
            lx.pos = hit.end;
            ordinal += 1;
            if !lx.comma_or_close(b'}')? {
                return Ok(());
            }
            continue;
        }
        let (key, arg) = next_member(lx, memo, ordinal, keys::arg)?;
        let n = ordinal;
        let value_at = lx.pos;
        values.hit = None;
        ordinal += 1;
        match arg {
            Arg::TaskType => raw.task_type = memo_str(lx, values, n)?,
            Arg::PhysicStreamId => raw.phys_stream = memo_int(lx, values, n)?,
            Arg::StreamId => raw.stream_id = memo_int(lx, values, n)?,
            Arg::Stream => raw.kineto_stream = memo_int(lx, values, n)?,
            Arg::StreamIdLc => raw.hccl_stream = memo_int(lx, values, n)?,
            Arg::ConnectionId => raw.conn = memo_int(lx, values, n)?,
            Arg::Correlation => raw.corr = memo_int(lx, values, n)?,
            Arg::GraphId => {
                let at = lx.pos;
                raw.graph = memo_int_with(lx, values, n, Reader::Graph, graph_value)?;
                if raw.graph == INVALID_GRAPH {
                    invalid_graph(graph_invalid, at);
                }
            }
            Arg::Kernel => raw.kernel = string_value(lx)?,
            Arg::ItemId => raw.item_id = string_value(lx)?,
            Arg::Device => raw.device = memo_int(lx, values, n)?,
            Arg::Name => raw.meta_name = string_value(lx)?,
            Arg::Labels => raw.meta_labels = string_value(lx)?,
            Arg::SortIndex => raw.sort_index = Some(int_value(lx)?),
            Arg::Transport => raw.transport = string_value(lx)?,
            Arg::Link => raw.link = string_value(lx)?,
            Arg::DataType => raw.data_type = string_value(lx)?,
            Arg::SrcRank => raw.src_rank = int_value(lx)?,
            Arg::DstRank => raw.dst_rank = int_value(lx)?,
            Arg::SizeBytes => raw.size_bytes = int_value(lx)?,
            Arg::BandwidthGbS => raw.bandwidth_gb_s = float_value(lx)?,
            Arg::NotifyId => raw.notify_id = notify_value(lx)?,
            Arg::ProcessGroupName => raw.process_group = string_value(lx)?,
            Arg::CollectiveName => raw.collective = string_value(lx)?,
            Arg::InputDims | Arg::InputType | Arg::ConcreteInputs
                if !inputs_wanted(lx, raw, op_inputs, kept) =>
            {
                let text = skip_input(lx, containers, n)?;
                raw.inputs_dropped |= text && arg != Arg::ConcreteInputs;
            }
            Arg::InputDims => raw.input_dims = text_or_raw(lx, containers, n)?,
            Arg::InputType => raw.input_type = text_or_raw(lx, containers, n)?,
            Arg::ConcreteInputs => raw.concrete = text_or_raw(lx, containers, n)?,
            Arg::Other => match lx.peek()? {
                b'"' | b'{' | b'[' | b't' | b'f' | b'n' => lx.skip_value()?,
                _ => {
                    let start = lx.pos;
                    let len = remembered(
                        lx,
                        values,
                        n,
                        Reader::Token,
                        |k, _| match k {
                            Known::Token(len) => Some(len),
                            _ => None,
                        },
                        |lx| Ok(lx.scalar_token()?.len() as u32),
                        |&len, _| Some(Known::Token(len)),
                    )?;
                    push_num(raw, key, (start, len));
                }
            },
        }
        if let Some(known) = values.hit.take()
            && matches!(
                arg,
                Arg::TaskType
                    | Arg::PhysicStreamId
                    | Arg::StreamId
                    | Arg::Stream
                    | Arg::StreamIdLc
                    | Arg::ConnectionId
                    | Arg::Correlation
                    | Arg::GraphId
                    | Arg::Device
                    | Arg::Other
            )
        {
            let read = Read {
                start,
                key,
                class: arg,
                known,
                value_at,
                end: lx.pos,
            };
            members.learn(lx.b, read, n);
        }
        if !lx.comma_or_close(b'}')? {
            return Ok(());
        }
    }
}

/// A numeric arg the event keeps by name (a counter's series).
#[inline(always)]
fn push_num(raw: &mut Raw, key: RawStr, token: (usize, u32)) {
    if raw.n_nums < raw.nums.len() {
        raw.nums[raw.n_nums] = (key, token);
        raw.n_nums += 1;
    } else {
        raw.nums_overflow = true;
    }
}

/// An arg recognised whole by the member memo: what its arm of [`parse_args`] does with the value
/// memo's answer (only those args are memorised).
#[inline(always)]
fn arg_member(raw: &mut Raw, hit: MemberHit<Arg>, graph_invalid: &mut (u64, usize)) {
    let int = match hit.known {
        Known::Int(v) => v,
        _ => -1,
    };
    match hit.class {
        Arg::TaskType => raw.task_type = hit.known.raw_str(hit.value_at),
        Arg::PhysicStreamId => raw.phys_stream = int,
        Arg::StreamId => raw.stream_id = int,
        Arg::Stream => raw.kineto_stream = int,
        Arg::StreamIdLc => raw.hccl_stream = int,
        Arg::ConnectionId => raw.conn = int,
        Arg::Correlation => raw.corr = int,
        Arg::GraphId => {
            raw.graph = int;
            if int == INVALID_GRAPH {
                invalid_graph(graph_invalid, hit.value_at);
            }
        }
        Arg::Device => raw.device = int,
        Arg::Other => {
            if let Known::Token(len) = hit.known {
                push_num(raw, hit.key, (hit.value_at, len));
            }
        }
        _ => unreachable!("only the args above are memorised"),
    }
}

#[inline(always)]
fn resolve_ids<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw) -> (IdKey, IdKey) {
    let pid = match (raw.pid, raw.pid_text) {
        (IdKey::Text(_), Some(s)) => IdKey::Text(u64::from(out.strings.intern(b, s))),
        (k, _) => k,
    };
    let tid = match (raw.tid, raw.tid_text) {
        (IdKey::Text(_), Some(s)) => IdKey::Text(u64::from(out.strings.intern(b, s))),
        (k, _) => k,
    };
    (pid, tid)
}

#[inline(always)]
fn emit<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw, offset: usize) {
    out.phase_counts[(raw.ph & 0x7f) as usize] += 1;
    let (pid, tid) = resolve_ids(out, b, raw);
    let done = match raw.ph {
        b'X' | b'i' | b'I' | b'R' => emit_span(out, b, raw, pid, tid),
        b'B' | b'E' => emit_begin_end(out, b, raw, (pid, tid), offset),
        b'M' => {
            emit_meta(out, b, raw, pid, tid);
            Ok(())
        }
        b'C' => emit_counter(out, b, raw, pid),
        b's' | b't' | b'f' => emit_flow(out, b, raw, pid, tid),
        _ => Ok(()), // counted in phase_counts; reported by the post-pass as unknown_phase
    };
    if let Err(why) = done {
        out.skipped_count += 1;
        if out.skipped.len() < 5 {
            out.skipped.push((offset, why));
        }
    }
}

/// Counts a graph id that is not one, at byte `at`.
#[cold]
fn invalid_graph(count: &mut (u64, usize), at: usize) {
    if count.0 == 0 {
        count.1 = at;
    }
    count.0 += 1;
}

/// Why an event (or part of it) was skipped.
type Skip = Result<(), &'static str>;

/// Why an event's ts or dur is not one a capture holds (readers skip such events as the db
/// reader skips such rows: their sums would overflow and their windows span centuries).
#[cold]
fn implausible(dur: i64) -> &'static str {
    if dur < 0 {
        "negative dur"
    } else if dur > MAX_SPAN_NS {
        "dur longer than a week"
    } else {
        "ts more than 126 years from the epoch (past 2096 or before 1843)"
    }
}

/// Whether `ts` is within ±MAX_TS_NS of the epoch and `dur` from 0 to a week, in one test (every
/// event passes here; a negative dur is a huge u64).
#[inline(always)]
fn plausible(ts: i64, dur: i64) -> bool {
    !((ts.wrapping_add(MAX_TS_NS) as u64 > 2 * MAX_TS_NS as u64)
        | (dur as u64 > MAX_SPAN_NS as u64))
}

/// A vendor overlap row read by its shape, summed as [`emit`] would sum it: false (nothing
/// counted) when the member loop must read it (its times out of bounds, or its thread not summed
/// here).
#[inline(always)]
fn sum_row(out: &mut ChunkOut<'_>, row: overlap_row::Row) -> bool {
    if !plausible(row.ts, row.dur) {
        return false;
    }
    let (pid, tid) = (IdKey::Num(row.pid), IdKey::Num(row.tid));
    let thread = out.threads.get(pid, tid);
    if !out.overlap.try_sum(thread, pid, tid, row.dur) {
        return false;
    }
    out.phase_counts[usize::from(b'X')] += 1;
    true
}

/// A complete (`X`) or instant (`i`, `I`, `R`) event, with its HCCL details and device hint.
#[inline(always)]
fn emit_span<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw, pid: IdKey, tid: IdKey) -> Skip {
    let Some(ts) = raw.ts else {
        return Err(if raw.ts_bad {
            "malformed ts"
        } else {
            "missing ts"
        });
    };
    let (dur, kind) = if raw.ph == b'X' {
        match raw.dur {
            Some(d) => (d, EventKind::Complete),
            None => return Err("X event without a valid dur"),
        }
    } else {
        (0, EventKind::Instant)
    };
    if !plausible(ts, dur) {
        return Err(implausible(dur));
    }
    let thread = out.threads.get(pid, tid);
    if raw.plain() && out.overlap.try_sum(thread, pid, tid, dur) {
        return Ok(());
    }
    out.ev_thread.push(thread);
    out.ev_ts.push(ts);
    out.ev_dur.push(dur);
    let name = out.strings.intern(b, raw.name);
    out.ev_name.push(name);
    let cat = out.strings.intern(b, raw.cat);
    out.ev_cat.push(cat);
    let tt = out.strings.intern(b, raw.task_type);
    out.ev_task_type.push(tt);
    out.ev_stream.push(raw.stream());
    out.ev_kind.push(kind);
    out.ev_conn.push(raw.conn);
    out.ev_corr.push(raw.corr);
    out.ev_graph.push(raw.graph);
    if !raw.transport.is_empty() || !raw.process_group.is_empty() {
        let event = (out.ev_ts.len() - 1) as u32;
        emit_comm(out, b, raw, event);
    }
    if !raw.input_dims.is_empty() || !raw.input_type.is_empty() || raw.inputs_dropped {
        let event = (out.ev_ts.len() - 1) as u32;
        let dims = out.strings.intern(b, raw.input_dims);
        let types = out.strings.intern(b, raw.input_type);
        let concrete = out.strings.intern(b, raw.concrete);
        out.op_args.push(OpArgsRecord {
            event,
            dims,
            types,
            concrete,
        });
    }
    let launched = if !raw.kernel.is_empty() {
        raw.kernel
    } else if !raw.item_id.is_empty()
        && b.get(raw.name.start..raw.name.start + raw.name.len() as usize) == Some(b"Node@launch")
    {
        raw.item_id
    } else {
        RawStr::default()
    };
    if !launched.is_empty() {
        let event = (out.ev_ts.len() - 1) as u32;
        let s = out.strings.intern(b, launched);
        out.launched.push((event, s));
    }
    if raw.device >= 0
        && out
            .device_hints
            .last()
            .is_none_or(|&(t, d)| t != thread || d != raw.device as i32)
    {
        out.device_hints.push((thread, raw.device as i32));
    }
    Ok(())
}

/// The HCCL plane task details of event `event` (`args` with `transport type`), or a Kineto
/// NCCL kernel's communicator group and collective (`args` with `Process Group Name`).
fn emit_comm<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw, event: u32) {
    let transport = out.strings.intern(b, raw.transport);
    let link = out.strings.intern(b, raw.link);
    let data_type = out.strings.intern(b, raw.data_type);
    let group = out.strings.intern(b, raw.process_group);
    let op_name = out.strings.intern(b, raw.collective);
    out.comm.push(CommRecord {
        event,
        transport,
        link,
        data_type,
        src_rank: raw.src_rank,
        dst_rank: raw.dst_rank,
        size_bytes: raw.size_bytes,
        bandwidth_bytes_per_s: raw.bandwidth_gb_s * 1e9,
        notify_id: raw.notify_id,
        group,
        op_name,
    });
}

fn emit_begin_end<'a>(
    out: &mut ChunkOut<'a>,
    b: &'a [u8],
    raw: &Raw,
    (pid, tid): (IdKey, IdKey),
    offset: usize,
) -> Skip {
    let Some(ts) = raw.ts else {
        return Err("B/E without a valid ts");
    };
    if !(-MAX_TS_NS..=MAX_TS_NS).contains(&ts) {
        return Err("ts more than 126 years from the epoch (past 2096 or before 1843)");
    }
    let thread = out.threads.get(pid, tid);
    let name = out.strings.intern(b, raw.name);
    let cat = out.strings.intern(b, raw.cat);
    out.begin_end.push(BeginEnd {
        thread,
        begin: raw.ph == b'B',
        ts_ns: ts,
        name,
        cat,
        offset,
    });
    Ok(())
}

/// One counter row per numeric series of a `C` event.
fn emit_counter<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw, pid: IdKey) -> Skip {
    let Some(ts) = raw.ts else {
        return Err("C event without a valid ts");
    };
    let name = out.strings.intern(b, raw.name);
    for &(key, (start, len)) in &raw.nums[..raw.n_nums] {
        let Some(v) = parse_f64(&b[start..start + len as usize]) else {
            continue;
        };
        let series = out.strings.intern(b, key);
        out.ctr_pid.push(pid);
        out.ctr_name.push(name);
        out.ctr_series.push(series);
        out.ctr_ts.push(ts);
        out.ctr_value.push(v);
    }
    if raw.nums_overflow {
        return Err("C event with more than 16 numeric series (extra series dropped)");
    }
    Ok(())
}

fn emit_flow<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw, pid: IdKey, tid: IdKey) -> Skip {
    let Some(ts) = raw.ts else {
        return Err("flow without a valid ts");
    };
    let Some(id) = raw.id else {
        return Err("flow without an id");
    };
    let thread = out.threads.get(pid, tid);
    out.flow_thread.push(thread);
    out.flow_phase.push(match raw.ph {
        b's' => FlowPhase::Start,
        b't' => FlowPhase::Step,
        _ => FlowPhase::Finish,
    });
    let cat = out.strings.intern(b, raw.cat);
    out.flow_cat.push(cat);
    let name = out.strings.intern(b, raw.name);
    out.flow_name.push(name);
    out.flow_id.push(id);
    out.flow_ts.push(ts);
    out.flow_bp.push(raw.bp_e);
    Ok(())
}

fn emit_meta<'a>(out: &mut ChunkOut<'a>, b: &'a [u8], raw: &Raw, pid: IdKey, tid: IdKey) {
    let name = &b[raw.name.start..raw.name.start + raw.name.len() as usize];
    let kind = match name {
        b"process_name" => MetaKind::ProcessName,
        b"process_labels" => MetaKind::ProcessLabels,
        b"process_sort_index" => MetaKind::ProcessSortIndex,
        b"thread_name" => MetaKind::ThreadName,
        b"thread_sort_index" => MetaKind::ThreadSortIndex,
        _ => {
            out.ignored_meta += 1;
            return;
        }
    };
    let text = match kind {
        MetaKind::ProcessLabels => out.strings.intern(b, raw.meta_labels),
        MetaKind::ProcessName | MetaKind::ThreadName => out.strings.intern(b, raw.meta_name),
        _ => 0,
    };
    let int = raw.sort_index.unwrap_or(i64::MIN);
    let record = MetaRecord {
        pid,
        // A process's records apply to the process whatever thread they name.
        tid: match kind {
            MetaKind::ThreadName | MetaKind::ThreadSortIndex => tid,
            _ => IdKey::Num(0),
        },
        kind,
        text,
        int,
    };
    if out.meta_recent.is_empty() {
        out.meta_recent = vec![None; META_SLOTS];
    }
    let slot = &mut out.meta_recent[meta_slot(&record)];
    if *slot == Some(record) {
        return;
    }
    *slot = Some(record);
    out.metas.push(MetaRecord { tid, ..record });
}

/// Slots of [`ChunkOut::meta_recent`] (a power of two).
const META_SLOTS: usize = 64;

/// The slot of a metadata record's key (process or thread, and kind). Records of one key always
/// share a slot, so a slot holding the key holds its latest record; a slot taken by another key
/// only means the record is kept.
fn meta_slot(m: &MetaRecord) -> usize {
    PackedKey::of(m.pid, m.tid).slot(META_SLOTS, m.kind as u64)
}
