//! A stable sort of event indices for lists that are sorted but for a few events: a Kineto
//! thread's events are written in start order except where an op is written after the ops it
//! encloses (the real mtia trace's main thread: 4,530 descents in 376,695 events of kineto5x),
//! which a comparison sort of every index pays for in full.

/// Sorts `idx` (ascending indices, file order) by `key`, equal keys in file order: the order of
/// `idx.sort_by_key(key)`. The indices at or above the running maximum key stay where they are,
/// in order; the others are sorted on their own and merged back from the end, so the cost is a
/// pass over `idx` and a sort of the others. When the others are many, the plain sort is used.
pub fn sort_by_key<K: Ord + Copy>(idx: &mut [u32], key: impl Fn(u32) -> K) {
    debug_assert!(idx.windows(2).all(|w| w[0] < w[1]), "indices in file order");
    let mut kept = 0;
    let mut below: Vec<u32> = Vec::new();
    let mut top: Option<K> = None;
    for r in 0..idx.len() {
        let i = idx[r];
        let k = key(i);
        if top.is_none_or(|t| k >= t) {
            top = Some(k);
            idx[kept] = i;
            kept += 1;
        } else {
            below.push(i);
            if below.len() > idx.len() / 8 {
                // Far from sorted: put the rest back and sort the whole list.
                let rest: Vec<u32> = idx[r + 1..].to_vec();
                let all = below.into_iter().chain(rest);
                for (slot, i) in idx[kept..].iter_mut().zip(all) {
                    *slot = i;
                }
                // The index breaks ties: file order, whatever order `idx` is in now.
                idx.sort_unstable_by_key(|&i| (key(i), i));
                return;
            }
        }
    }
    below.sort_by_key(|&i| key(i));
    // Both runs are sorted, equal keys in file order: merge them into `idx` from its end, each
    // run's last key read once. Of two equal keys the kept one is the earlier in the file (a
    // kept index after a set-aside one has a key at least the running maximum the set-aside one
    // was below), so a tie takes the set-aside one first from the end.
    let (mut a, mut b, mut w) = (kept, below.len(), idx.len());
    let mut x = (a > 0).then(|| key(idx[a - 1]));
    let Some(mut y) = below.last().map(|&i| key(i)) else {
        return;
    };
    loop {
        w -= 1;
        if x.is_some_and(|x| x > y) {
            idx[w] = idx[a - 1];
            a -= 1;
            x = (a > 0).then(|| key(idx[a - 1]));
        } else {
            idx[w] = below[b - 1];
            b -= 1;
            match b {
                0 => return,
                _ => y = key(below[b - 1]),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of the standard library's stable sort on random keys with many ties, on lists
    /// from sorted to shuffled (every path: nothing below, a few below, the plain sort), and
    /// on index lists with gaps.
    #[test]
    fn equals_the_stable_sort() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for case in 0..600 {
            let n = rnd(300) as usize;
            let disorder = [0, 1, 3, 20, 100][case % 5];
            let mut keys: Vec<(i64, i64)> = Vec::with_capacity(n);
            let mut ts = 0i64;
            for _ in 0..n {
                ts += rnd(3) as i64;
                let k = if rnd(100) < disorder {
                    ts - rnd(50) as i64
                } else {
                    ts
                };
                keys.push((k, -(rnd(4) as i64)));
            }
            let idx: Vec<u32> = (0..n as u32).filter(|_| rnd(10) > 0).collect();
            let key = |i: u32| keys[i as usize];
            let mut want = idx.clone();
            want.sort_by_key(|&i| key(i));
            let mut got = idx.clone();
            sort_by_key(&mut got, key);
            assert_eq!(got, want, "case {case}");
        }
    }
}
