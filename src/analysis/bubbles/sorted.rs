//! Events in start order with the running maximum of their ends, so that "the first one that
//! ends after `a`" is a binary search even when they overlap: what the cause rules query for
//! waits, copies, communication tasks and synchronous host calls inside a gap. The gaps come in
//! time order, so the search starts from the previous answer ([`Gallop`]: the same answer as a
//! binary search, without its cache misses over millions of events).

use crate::analysis::devices::iv;
use crate::analysis::gallop::Gallop;
use crate::analysis::intervals::Iv;
use crate::model::Tables;
use std::cell::Cell;

/// Holds indexes, not intervals: 12 bytes per event (a device can have millions of waits and
/// communication tasks).
#[derive(Default)]
pub(super) struct Sorted {
    pub events: Vec<u32>,
    max_end: Vec<i64>,
    /// Where the last query's search ended.
    cursor: Cell<Gallop>,
}

impl Sorted {
    /// `i` must not start before the previous event.
    pub fn push(&mut self, t: &Tables, i: u32) {
        let end = iv(t, i).1;
        self.max_end
            .push(self.max_end.last().map_or(end, |&m| m.max(end)));
        self.events.push(i);
    }

    /// The events of `v` (any order), sorted by start.
    pub fn of(t: &Tables, mut v: Vec<u32>) -> Sorted {
        v.sort_unstable_by_key(|&i| (t.events.ts_ns[i as usize], i));
        let mut s = Sorted {
            events: Vec::with_capacity(v.len()),
            max_end: Vec::with_capacity(v.len()),
            cursor: Cell::default(),
        };
        for i in v {
            s.push(t, i);
        }
        s
    }

    /// The events that overlap `[a, b)`, in start order, with their positions here.
    pub fn overlapping<'s>(
        &'s self,
        t: &'s Tables,
        (a, b): Iv,
    ) -> impl Iterator<Item = (usize, u32)> + 's {
        let mut cursor = self.cursor.get();
        let first = cursor.partition_point(&self.max_end, |&e| e <= a);
        self.cursor.set(cursor);
        (first..self.events.len())
            .map(move |k| (k, self.events[k], iv(t, self.events[k])))
            .take_while(move |x| x.2.0 < b)
            .filter(move |x| x.2.1 > a)
            .map(|x| (x.0, x.1))
    }
}
