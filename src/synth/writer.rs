//! Writes Chrome-trace events byte-exactly in the two real layouts: torch_npu's bare array with
//! string `ts` in µs with 3 decimals (`"ts": "1736408883688177.930"`), and Kineto's
//! object with numeric `ts`. Times come in as integer ns and are written exactly.

use std::fs::File;
use std::io::{BufWriter, Write};

pub enum Sink {
    Plain(BufWriter<File>),
    Gz(Box<flate2::write::GzEncoder<BufWriter<File>>>),
    /// Counts bytes only (a db-only root still sizes itself by its JSON twin).
    Null,
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(b),
            Sink::Gz(w) => w.write(b),
            Sink::Null => Ok(b.len()),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gz(w) => w.flush(),
            Sink::Null => Ok(()),
        }
    }
}

/// An event array being written; counts uncompressed bytes.
pub struct EventWriter {
    out: Sink,
    pub bytes: u64,
    first: bool,
    /// `", "` (torch_npu) or `",\n  "` (Kineto).
    sep: &'static str,
    /// Kineto writes numeric ts; torch_npu writes strings.
    string_ts: bool,
    buf: String,
}

/// `12345678` ns → `12345.678`.
pub fn us3(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

impl EventWriter {
    pub fn new(out: Sink, prefix: &str, string_ts: bool) -> std::io::Result<EventWriter> {
        let mut w = EventWriter {
            out,
            bytes: 0,
            first: true,
            sep: if string_ts { ", " } else { ",\n  " },
            string_ts,
            buf: String::new(),
        };
        w.raw(prefix)?;
        Ok(w)
    }

    fn raw(&mut self, s: &str) -> std::io::Result<()> {
        self.bytes += s.len() as u64;
        self.out.write_all(s.as_bytes())
    }

    fn ts(&self, ns: i64) -> String {
        if self.string_ts {
            format!("\"{}\"", us3(ns))
        } else {
            us3(ns)
        }
    }

    /// Writes one event given its members after `{` (already JSON), with `ts` placed first.
    fn event(&mut self, body: std::fmt::Arguments<'_>) -> std::io::Result<()> {
        use std::fmt::Write as _;
        self.buf.clear();
        if !self.first {
            self.buf.push_str(self.sep);
        }
        self.first = false;
        self.buf.push('{');
        self.buf.write_fmt(body).expect("write to String");
        self.buf.push('}');
        let s = std::mem::take(&mut self.buf);
        let r = self.raw(&s);
        self.buf = s;
        r
    }

    /// A host X event in torch_npu / Kineto style (`ph` first, then `name`, ..., `args`).
    pub fn host_x(
        &mut self,
        name: &str,
        pid: i64,
        tid: i64,
        ts: i64,
        dur: i64,
        (cat, args): (&str, &str),
    ) -> std::io::Result<()> {
        let t = self.ts(ts);
        self.event(format_args!(
            "\"ph\": \"X\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid}, \"ts\": {t}, \"dur\": {}, \"cat\": \"{cat}\", \"args\": {{{args}}}",
            us3(dur)
        ))
    }

    /// A device X event in msprof style (`name` first, `ph` last, args with Task Type etc.).
    pub fn device_x(
        &mut self,
        name: &str,
        pid: i64,
        tid: i64,
        ts: i64,
        dur: i64,
        args: &str,
    ) -> std::io::Result<()> {
        let t = self.ts(ts);
        self.event(format_args!(
            "\"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid}, \"ts\": {t}, \"dur\": {}, \"args\": {{{args}}}, \"ph\": \"X\"",
            us3(dur)
        ))
    }

    /// A vendor X event without args (Overlap Analysis).
    pub fn bare_x(
        &mut self,
        name: &str,
        pid: i64,
        tid: i64,
        ts: i64,
        dur: i64,
    ) -> std::io::Result<()> {
        let t = self.ts(ts);
        self.event(format_args!("\"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid}, \"ts\": {t}, \"dur\": {}, \"ph\": \"X\"", us3(dur)))
    }

    pub fn meta(
        &mut self,
        name: &str,
        pid: i64,
        tid: i64,
        arg_key: &str,
        arg_val: &str,
    ) -> std::io::Result<()> {
        self.event(format_args!("\"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"{arg_key}\": {arg_val}}}, \"ph\": \"M\""))
    }

    pub fn flow(
        &mut self,
        ph: char,
        name: &str,
        cat: &str,
        id: &str,
        (pid, tid): (i64, i64),
        ts: i64,
    ) -> std::io::Result<()> {
        let t = self.ts(ts);
        let bp = if ph == 'f' { ", \"bp\": \"e\"" } else { "" };
        self.event(format_args!("\"name\": \"{name}\", \"ph\": \"{ph}\", \"cat\": \"{cat}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {t}{bp}"))
    }

    pub fn counter(
        &mut self,
        name: &str,
        pid: i64,
        ts: i64,
        key: &str,
        value: f64,
    ) -> std::io::Result<()> {
        let t = self.ts(ts);
        self.event(format_args!("\"name\": \"{name}\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0, \"args\": {{\"{key}\": {value:.1}}}, \"ph\": \"C\""))
    }

    pub fn finish(mut self, suffix: &str) -> std::io::Result<u64> {
        self.raw(suffix)?;
        match self.out {
            Sink::Plain(mut w) => w.flush()?,
            Sink::Gz(w) => {
                w.finish()?.flush()?;
            }
            Sink::Null => {}
        }
        Ok(self.bytes)
    }
}
