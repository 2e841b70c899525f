//! The vendor's `Overlap Analysis` rows summed while a chunk is parsed, instead of emitted as
//! events for the merge to sum and remove (half the records of an Ascend trace_view.json).
//!
//! The merge sums the events of the threads that metadata has named as vendor overlap rows so
//! far ([`super::merge`]'s `sum_vendor_overlap`). A chunk parsed after some metadata was merged
//! is given those threads ([`KnownOverlap`]) and sums their plain events itself; the merge adds
//! the sums where it would have added the events. The answer is the same only while the names
//! the chunk was given are still the names at its merge: the list's generation moves whenever
//! merged metadata changes the list, and the merge re-parses a chunk without the list when its
//! generation is not the current one or when it holds metadata of a listed process
//! ([`super::waves`]).

use super::local::IdKey;
use std::sync::Arc;

/// The threads of one file that metadata merged so far names as vendor overlap rows, by numeric
/// (pid, tid) in order, with their kind (index into `OVERLAP_KINDS`); and the list's generation
/// (how many times merged metadata changed it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownOverlap {
    pub threads: Vec<((i64, i64), u8)>,
    pub generation: u64,
}

/// A local thread whose kind is not looked up yet.
const UNSEEN: u8 = u8::MAX;
/// A local thread that is not a known vendor overlap thread.
const NOT_OVERLAP: u8 = u8::MAX - 1;

/// One chunk's view of the known overlap threads, and what it summed.
#[derive(Default)]
pub struct ChunkOverlap {
    known: Arc<KnownOverlap>,
    /// Per local thread: its kind, [`NOT_OVERLAP`] or [`UNSEEN`].
    kind: Vec<u8>,
    /// Per local thread: (rows, total dur in ns) summed here.
    sums: Vec<(u64, i64)>,
    /// Rows summed here in all.
    pub rows: u64,
}

impl ChunkOverlap {
    pub fn new(known: Arc<KnownOverlap>) -> ChunkOverlap {
        ChunkOverlap {
            known,
            ..ChunkOverlap::default()
        }
    }

    /// The metadata generation of the list this chunk was given.
    pub fn generation(&self) -> u64 {
        self.known.generation
    }

    /// Whether this chunk was given any thread to sum.
    #[inline]
    pub fn sums_any(&self) -> bool {
        !self.known.threads.is_empty()
    }

    /// Whether metadata of process `pid` could rename a thread this chunk may have summed (a
    /// process on its list).
    pub fn listed_process(&self, pid: IdKey) -> bool {
        let IdKey::Num(p) = pid else {
            return false;
        };
        let t = &self.known.threads;
        t.get(t.partition_point(|&((q, _), _)| q < p))
            .is_some_and(|&((q, _), _)| q == p)
    }

    /// Adds an event of local thread `thread` (`pid`, `tid`) lasting `dur` ns to the sums when
    /// the thread is a known overlap thread; false (nothing done) otherwise.
    #[inline]
    pub fn try_sum(&mut self, thread: u32, pid: IdKey, tid: IdKey, dur: i64) -> bool {
        if self.known.threads.is_empty() {
            return false;
        }
        let t = thread as usize;
        if t >= self.kind.len() {
            self.kind.resize(t + 1, UNSEEN);
            self.sums.resize(t + 1, (0, 0));
        }
        if self.kind[t] == UNSEEN {
            self.kind[t] = match (pid, tid) {
                // Sorted: a file naming many threads costs a binary search per local thread.
                (IdKey::Num(p), IdKey::Num(q)) => {
                    let t = &self.known.threads;
                    t.binary_search_by_key(&(p, q), |&(k, _)| k)
                        .map_or(NOT_OVERLAP, |i| t[i].1)
                }
                _ => NOT_OVERLAP,
            };
        }
        if self.kind[t] == NOT_OVERLAP {
            return false;
        }
        let s = &mut self.sums[t];
        *s = (s.0 + 1, s.1 + dur);
        self.rows += 1;
        true
    }

    /// (local thread, kind, rows, total dur ns) of every thread with rows summed here.
    pub fn summed(&self) -> impl Iterator<Item = (u32, u8, u64, i64)> + '_ {
        self.sums
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 > 0)
            .map(|(t, &(n, dur))| (t as u32, self.kind[t], n, dur))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only numeric (pid, tid) pairs on the list are summed, each under its own kind; threads
    /// are met in any order and thread ids may skip; an empty list sums nothing.
    #[test]
    fn sums_the_listed_threads_only() {
        let known = Arc::new(KnownOverlap {
            threads: vec![((7, 0), 0), ((7, 3), 3)],
            generation: 2,
        });
        let mut c = ChunkOverlap::new(known);
        assert_eq!(c.generation(), 2);
        assert!(c.listed_process(IdKey::Num(7)));
        assert!(!c.listed_process(IdKey::Num(5)));
        assert!(!c.listed_process(IdKey::Text(7)));
        assert!(c.try_sum(4, IdKey::Num(7), IdKey::Num(3), 10));
        assert!(!c.try_sum(0, IdKey::Num(5), IdKey::Num(0), 99));
        assert!(c.try_sum(2, IdKey::Num(7), IdKey::Num(0), 5));
        assert!(c.try_sum(4, IdKey::Num(7), IdKey::Num(3), 1));
        assert!(!c.try_sum(1, IdKey::Text(1), IdKey::Num(0), 8));
        assert_eq!(c.rows, 3);
        let got: Vec<_> = c.summed().collect();
        assert_eq!(got, vec![(2, 0, 1, 5), (4, 3, 2, 11)]);
        let mut none = ChunkOverlap::default();
        assert!(!none.try_sum(0, IdKey::Num(7), IdKey::Num(0), 1));
        assert_eq!(none.summed().count(), 0);
    }
}
