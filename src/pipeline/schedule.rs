//! A bounded parallel map: up to `jobs` items at once, and never more estimated bytes in flight
//! than the budget (an item larger than the budget runs alone). Items start in input order and
//! results come back in input order.

use std::sync::{Condvar, Mutex};

struct State {
    next: usize,
    in_flight_bytes: u64,
    running: usize,
}

/// `work(i)` for every `i < costs.len()`, `costs[i]` being item i's estimated peak bytes.
pub fn bounded_map<T: Send>(
    costs: &[u64],
    jobs: usize,
    budget: u64,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let n = costs.len();
    let state = Mutex::new(State {
        next: 0,
        in_flight_bytes: 0,
        running: 0,
    });
    let freed = Condvar::new();
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let workers = jobs.clamp(1, n.max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut st = state.lock().expect("scheduler lock");
                        loop {
                            if st.next >= n {
                                return;
                            }
                            let c = costs[st.next];
                            if st.running == 0 || st.in_flight_bytes + c <= budget {
                                break;
                            }
                            st = freed.wait(st).expect("scheduler lock");
                        }
                        let i = st.next;
                        st.next += 1;
                        st.in_flight_bytes += costs[i];
                        st.running += 1;
                        i
                    };
                    let r = work(i);
                    results.lock().expect("results lock")[i] = Some(r);
                    let mut st = state.lock().expect("scheduler lock");
                    st.in_flight_bytes -= costs[i];
                    st.running -= 1;
                    freed.notify_all();
                }
            });
        }
    });
    results
        .into_inner()
        .expect("results lock")
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
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
}
