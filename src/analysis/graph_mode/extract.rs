//! What one file's graph mode hands to the run-level finish (in `registry::Part`, never in the
//! report): the launches each capture window recorded with the ops around them, the distinct
//! sequences of device events its replays ran with their device time, how each sequence was
//! matched in the file, and, for an eager map, the device events of its distinct steps with the
//! ops that launched them. Strings are one table per extract; tokens and labels index it.

use serde::{Deserialize, Serialize};

/// "No string" in a [`Token`] or [`Label`].
pub const NO_NAME: u32 = u32::MAX;

/// Kinds of a [`Token`]: a recorded launch and a device event agree when their kinds agree
/// (`ANY` agrees with every kind: Ascend `Node@launch` launches tasks of any kind).
pub const ANY: u8 = 0;
pub const KERNEL: u8 = 1;
pub const COPY: u8 = 2;
pub const SET: u8 = 3;

/// A recorded launch or a device event as the alignment sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Token {
    pub kind: u8,
    /// The kernel name ([`NO_NAME`] when the launch call names none: CUDA runtime calls).
    pub name: u32,
}

impl Token {
    /// Same kind (or `ANY`), and the same kernel name when both sides name one.
    #[inline]
    pub fn agrees(self, o: Token) -> bool {
        (self.kind == ANY || o.kind == ANY || self.kind == o.kind)
            && (self.name == NO_NAME || o.name == NO_NAME || self.name == o.name)
    }

    /// Both sides name a kernel (an agreeing pair was checked by name, not only by kind).
    #[inline]
    pub fn named_with(self, o: Token) -> bool {
        self.name != NO_NAME && o.name != NO_NAME
    }
}

/// The ops around one recorded launch: the innermost host op (else the innermost Python frame),
/// the innermost `nn.Module`, the innermost Python frame outside torch; [`NO_NAME`] when none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Label {
    pub op: u32,
    pub module: u32,
    pub frame: u32,
}

impl Label {
    pub const NONE: Label = Label {
        op: NO_NAME,
        module: NO_NAME,
        frame: NO_NAME,
    };
}

/// Launches recorded in order: a capture window's, or an eager step's device events with the
/// ops that launched them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Recorded {
    /// The window (capture begin .. end, or the eager step), ns on the file's clock.
    pub start_ns: i64,
    pub end_ns: i64,
    /// The host process that recorded it.
    pub pid: i64,
    /// The graph id a capture call names (-1: none does).
    pub graph: i64,
    pub tokens: Vec<Token>,
    pub labels: Vec<Label>,
    /// Ascend: each launch's connection id (-1 none), which its replayed tasks keep when the
    /// capture was profiled in the same session.
    pub conns: Vec<i64>,
}

/// One distinct sequence of device events the file's replays ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Sequence {
    /// The graph id its events carry (-1 none).
    pub graph: i64,
    pub tokens: Vec<Token>,
    /// Connection id of each position (the first replay's; a graph's replays share them).
    pub conns: Vec<i64>,
    /// Replays that ran it, and the earliest launch among them (-1 none in the file).
    pub replays: u32,
    pub first_launch_ns: i64,
    /// Device durations, replay-major (`replays` × `tokens.len()`), ns.
    pub durs: Vec<i64>,
}

/// Where a sequence's ops came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Source {
    #[default]
    None,
    Capture,
    ConnectionId,
    EagerMap,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::None => "none",
            Source::Capture => "capture",
            Source::ConnectionId => "connection_id",
            Source::EagerMap => "eager_map",
        }
    }
}

/// How one sequence was matched to recorded launches.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SeqMatch {
    pub source: Source,
    /// The file that recorded the launches (this file's path for an in-file capture).
    pub from: String,
    pub recorded_at_ns: i64,
    pub recorded_launches: u64,
    /// Per position of the sequence: the ops of its recorded launch (None: unmatched).
    pub labels: Vec<Option<Label>>,
    /// Positions tied to a recorded launch, and those checked by kernel name.
    pub matched: u64,
    pub named: u64,
    /// Why nothing (or not everything) matched, in words.
    pub note: String,
}

/// What one file contributes to matching across files.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GraphExtract {
    pub file: String,
    pub rank: i32,
    /// The file has graph launches, graph tasks or captures (else only `file`, `rank` and
    /// `device_events` are set: a candidate eager map).
    pub active: bool,
    pub device_events: u64,
    /// Host processes that issued the graph launches, and that recorded the captures.
    pub replay_pids: Vec<i64>,
    pub capture_pids: Vec<i64>,
    pub graph_launches: u64,
    pub replays: u64,
    pub capture_windows: u64,
    pub captured_launches: u64,
    pub strings: Vec<String>,
    pub captures: Vec<Recorded>,
    /// Every replayed sequence, with its in-file match, when some sequence is unmatched in the
    /// file (the finish tries the file's companions); empty otherwise.
    pub sequences: Vec<Sequence>,
    pub matches: Vec<SeqMatch>,
    /// An eager map's distinct steps (at most [`super::eager::MAX_STEPS`]).
    pub eager: Vec<Recorded>,
}

/// A string table that hands out ids in first-seen order.
#[derive(Default)]
pub struct Strings {
    pub list: Vec<String>,
    index: crate::model::hash::FxHashMap<String, u32>,
    /// The ids of the tables' interned strings already seen (no string hashing per event).
    memo: crate::model::hash::FxHashMap<crate::model::StrId, u32>,
}

impl Strings {
    pub fn from_list(list: Vec<String>) -> Strings {
        let index = list
            .iter()
            .enumerate()
            .map(|(k, s)| (s.clone(), k as u32))
            .collect();
        Strings {
            list,
            index,
            memo: Default::default(),
        }
    }

    /// The id of the tables' string `id`.
    pub fn of(&mut self, t: &crate::model::Tables, id: crate::model::StrId) -> u32 {
        if let Some(&k) = self.memo.get(&id) {
            return k;
        }
        let k = self.id(t.str(id));
        self.memo.insert(id, k);
        k
    }

    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&k) = self.index.get(s) {
            return k;
        }
        let k = self.list.len() as u32;
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), k);
        k
    }

    /// The id of `s`, [`NO_NAME`] for the empty string.
    pub fn opt(&mut self, s: &str) -> u32 {
        if s.is_empty() { NO_NAME } else { self.id(s) }
    }

    pub fn get(&self, k: u32) -> &str {
        if k == NO_NAME {
            ""
        } else {
            &self.list[k as usize]
        }
    }
}

/// `r`'s tokens and labels with their strings moved from table `from` into `to`.
pub fn moved(r: &Recorded, from: &[String], to: &mut Strings) -> Recorded {
    let mut m = |k: u32| {
        if k == NO_NAME {
            NO_NAME
        } else {
            to.id(&from[k as usize])
        }
    };
    Recorded {
        tokens: r
            .tokens
            .iter()
            .map(|t| Token {
                kind: t.kind,
                name: m(t.name),
            })
            .collect(),
        labels: r
            .labels
            .iter()
            .map(|l| Label {
                op: m(l.op),
                module: m(l.module),
                frame: m(l.frame),
            })
            .collect(),
        start_ns: r.start_ns,
        end_ns: r.end_ns,
        pid: r.pid,
        graph: r.graph,
        conns: r.conns.clone(),
    }
}
