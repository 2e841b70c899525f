//! A bounded parallel loop: up to `jobs` items at once, and never more estimated bytes in flight
//! than the budget (an item larger than the budget runs alone). Items start in input order; each
//! item's result goes to one sink in input order, while the item still counts against the budget
//! (so a sink that writes one output file by file, like the Perfetto export, holds at most the
//! items in flight). A panicking item releases its budget and its turn, so the others finish and
//! the panic surfaces when the loop ends, never a hang.

use std::sync::{Condvar, Mutex, MutexGuard};

struct State {
    next: usize,
    in_flight_bytes: u64,
    running: usize,
}

/// A lock that outlives a panic elsewhere (the panic itself surfaces at the end of the scope).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gives an item's budget back and, if its result never reached the sink (a panic), its turn.
struct Release<'a, S> {
    i: usize,
    cost: u64,
    state: &'a Mutex<State>,
    freed: &'a Condvar,
    turn: &'a Mutex<(usize, S)>,
    turn_passed: &'a Condvar,
    sunk: bool,
}

impl<S> Drop for Release<'_, S> {
    fn drop(&mut self) {
        if !self.sunk {
            let mut t = lock(self.turn);
            while t.0 < self.i {
                t = self.turn_passed.wait(t).unwrap_or_else(|e| e.into_inner());
            }
            t.0 = t.0.max(self.i + 1);
            self.turn_passed.notify_all();
        }
        let mut st = lock(self.state);
        st.in_flight_bytes -= self.cost;
        st.running -= 1;
        self.freed.notify_all();
    }
}

/// `work(i)` for every `i < costs.len()` (`costs[i]`: item i's estimated peak bytes), each result
/// handed to `sink(i, result)` in order of `i`.
pub fn bounded_ordered<T: Send, S: FnMut(usize, T) + Send>(
    costs: &[u64],
    jobs: usize,
    budget: u64,
    work: impl Fn(usize) -> T + Sync,
    sink: S,
) {
    let n = costs.len();
    let state = Mutex::new(State {
        next: 0,
        in_flight_bytes: 0,
        running: 0,
    });
    let freed = Condvar::new();
    let turn = Mutex::new((0usize, sink));
    let turn_passed = Condvar::new();
    let workers = jobs.clamp(1, n.max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut st = lock(&state);
                        loop {
                            if st.next >= n {
                                return;
                            }
                            let c = costs[st.next];
                            if st.running == 0 || st.in_flight_bytes + c <= budget {
                                break;
                            }
                            st = freed.wait(st).unwrap_or_else(|e| e.into_inner());
                        }
                        let i = st.next;
                        st.next += 1;
                        st.in_flight_bytes += costs[i];
                        st.running += 1;
                        i
                    };
                    let mut release = Release {
                        i,
                        cost: costs[i],
                        state: &state,
                        freed: &freed,
                        turn: &turn,
                        turn_passed: &turn_passed,
                        sunk: false,
                    };
                    let r = work(i);
                    let mut t = lock(&turn);
                    while t.0 < i {
                        t = turn_passed.wait(t).unwrap_or_else(|e| e.into_inner());
                    }
                    (t.1)(i, r);
                    t.0 = i + 1;
                    release.sunk = true;
                    turn_passed.notify_all();
                }
            });
        }
    });
}

/// [`bounded_ordered`] collecting the results, in input order.
pub fn bounded_map<T: Send>(
    costs: &[u64],
    jobs: usize,
    budget: u64,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut out = Vec::with_capacity(costs.len());
    bounded_ordered(costs, jobs, budget, work, |_, r| out.push(r));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn results_in_order_and_budget_respected() {
        let costs = [5, 5, 5, 20, 1, 1];
        let live = AtomicU64::new(0);
        let peak = AtomicU64::new(0);
        let out = bounded_map(&costs, 4, 10, |i| {
            let now = live.fetch_add(costs[i], Ordering::SeqCst) + costs[i];
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(5));
            live.fetch_sub(costs[i], Ordering::SeqCst);
            i * 10
        });
        assert_eq!(out, vec![0, 10, 20, 30, 40, 50]);
        // The 20-byte item runs alone; otherwise at most 10 bytes at once.
        assert_eq!(peak.load(Ordering::SeqCst), 20);
    }

    #[test]
    fn the_sink_sees_items_in_order_even_when_later_ones_finish_first() {
        // Item 0 is the slowest: items 1..4 finish first and wait for their turn.
        let mut seen = Vec::new();
        bounded_ordered(
            &[1; 5],
            5,
            100,
            |i| {
                let ms = if i == 0 { 40 } else { 1 };
                std::thread::sleep(std::time::Duration::from_millis(ms));
                i
            },
            |i, r| seen.push((i, r)),
        );
        assert_eq!(seen, vec![(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]);
    }

    #[test]
    fn a_panicking_item_neither_hangs_the_others_nor_is_hidden() {
        // Budget 1 and cost 1: every item waits for the one before to release its budget, so a
        // panic that kept its budget or its turn would hang this test.
        let sunk = Mutex::new(Vec::new());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            bounded_ordered(
                &[1; 4],
                2,
                1,
                |i| {
                    assert_ne!(i, 1, "item 1 fails");
                    i
                },
                |i, _| lock(&sunk).push(i),
            )
        }));
        assert!(r.is_err(), "the panic surfaces");
        assert_eq!(*lock(&sunk), vec![0, 2, 3]);
    }
}
