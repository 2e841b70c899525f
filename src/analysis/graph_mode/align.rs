//! Sequence alignment for graph mode: the device events of a replay against the launches a
//! capture recorded (or the device events of an eager step). A longest common subsequence under
//! a match predicate, found with Myers' O((N+M)·D) greedy algorithm ("An O(ND) Difference
//! Algorithm and Its Variations", 1986) after the common prefix and suffix are taken off, so the
//! usual case (a few recorded launches without a device event of their own: memsets, host nodes,
//! empty kernels) costs linear time. The edit budget `max_d` bounds time and memory; a pair of
//! sequences that needs more edits is "does not align", never a guess.

/// Pairs `(i, j)` (rising in both) of a longest common subsequence of `0..n` and `0..m` under
/// `eq(i, j)`; None when more than `max_d` insertions and deletions separate them.
pub fn align(
    n: usize,
    m: usize,
    max_d: usize,
    eq: impl Fn(usize, usize) -> bool,
) -> Option<Vec<(u32, u32)>> {
    let mut pre = 0;
    while pre < n && pre < m && eq(pre, pre) {
        pre += 1;
    }
    let mut suf = 0;
    while suf < n - pre && suf < m - pre && eq(n - 1 - suf, m - 1 - suf) {
        suf += 1;
    }
    let mut pairs: Vec<(u32, u32)> = (0..pre).map(|k| (k as u32, k as u32)).collect();
    let (a, b) = (n - pre - suf, m - pre - suf);
    let middle = myers(a, b, max_d, |x, y| eq(pre + x, pre + y))?;
    pairs.extend(
        middle
            .into_iter()
            .map(|(x, y)| ((x as usize + pre) as u32, (y as usize + pre) as u32)),
    );
    pairs.extend((0..suf).map(|k| ((n - suf + k) as u32, (m - suf + k) as u32)));
    Some(pairs)
}

/// Not reached: a diagonal outside the grid or of the other parity.
const NONE: i32 = i32::MIN;

/// The furthest-reaching start on diagonal `k` at edit `d`, from the step before (`prev(k)`,
/// [`NONE`] when not reached): a move down from `k + 1` (an element of b skipped) or right from
/// `k - 1` (an element of a skipped), whichever reaches further and stays in the grid. Returns
/// (down?, x before the snake).
fn step(prev: impl Fn(isize) -> i32, k: isize, n: usize, m: usize) -> Option<(bool, isize)> {
    let down = Some(prev(k + 1))
        .filter(|&x| x != NONE && (x as isize - k) as usize <= m)
        .map(|x| x as isize);
    let right = Some(prev(k - 1))
        .filter(|&x| x != NONE && (x as usize) < n)
        .map(|x| x as isize + 1);
    match (down, right) {
        (Some(a), Some(b)) if a > b => Some((true, a)),
        (_, Some(b)) => Some((false, b)),
        (Some(a), None) => Some((true, a)),
        (None, None) => None,
    }
}

/// Myers' forward greedy search, each edit step's furthest-reaching x per diagonal kept, then
/// the path traced back from the end. Memory: (D+1)² entries of 4 bytes.
fn myers(
    n: usize,
    m: usize,
    max_d: usize,
    eq: impl Fn(usize, usize) -> bool,
) -> Option<Vec<(u32, u32)>> {
    if n == 0 || m == 0 {
        return (n + m <= max_d).then(Vec::new);
    }
    let dmax = max_d.min(n + m) as isize;
    // trace holds, for each step d, x over diagonals -d..=d (2d+1 entries from offset d*d).
    let mut trace: Vec<i32> = Vec::new();
    let at = |trace: &[i32], d: isize, k: isize| -> i32 {
        if k < -d || k > d {
            NONE
        } else {
            trace[(d * d + k + d) as usize]
        }
    };
    let snake = |mut x: isize, k: isize| -> isize {
        while (x as usize) < n && ((x - k) as usize) < m && eq(x as usize, (x - k) as usize) {
            x += 1;
        }
        x
    };
    let mut found = None;
    for d in 0..=dmax {
        let base = trace.len();
        trace.resize(base + (2 * d + 1) as usize, NONE);
        for k in (-d..=d).step_by(2) {
            if k < -(m as isize) || k > n as isize {
                continue;
            }
            let x0 = if d == 0 {
                0
            } else {
                match step(|kk| at(&trace, d - 1, kk), k, n, m) {
                    Some((_, x)) => x,
                    None => continue,
                }
            };
            let x = snake(x0, k);
            trace[base + (k + d) as usize] = x as i32;
            if x as usize == n && (x - k) as usize == m {
                found = Some(d);
                break;
            }
        }
        if found.is_some() {
            break;
        }
    }
    let dfound = found?;
    let mut pairs = Vec::new();
    let (mut x, mut y) = (n as isize, m as isize);
    for d in (0..=dfound).rev() {
        let k = x - y;
        let (sx, sy, px, py) = if d == 0 {
            (0, 0, 0, 0)
        } else {
            let (down, x0) = step(|kk| at(&trace, d - 1, kk), k, n, m)?;
            let (px, pk) = if down { (x0, k + 1) } else { (x0 - 1, k - 1) };
            (x0, x0 - k, px, px - pk)
        };
        while x > sx && y > sy {
            x -= 1;
            y -= 1;
            pairs.push((x as u32, y as u32));
        }
        x = px;
        y = py;
    }
    pairs.reverse();
    Some(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LCS length by dynamic programming, the trivially correct model.
    fn lcs(a: &[u8], b: &[u8]) -> usize {
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in 0..a.len() {
            for j in 0..b.len() {
                t[i + 1][j + 1] = if a[i] == b[j] {
                    t[i][j] + 1
                } else {
                    t[i][j + 1].max(t[i + 1][j])
                };
            }
        }
        t[a.len()][b.len()]
    }

    fn check(a: &[u8], b: &[u8]) {
        let p = align(a.len(), b.len(), a.len() + b.len(), |i, j| a[i] == b[j]).unwrap();
        assert_eq!(p.len(), lcs(a, b), "{a:?} {b:?}");
        for w in p.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1);
        }
        for &(i, j) in &p {
            assert_eq!(a[i as usize], b[j as usize]);
        }
    }

    #[test]
    fn prop_matches_the_dynamic_programme() {
        // A small deterministic generator: every pair of sequences over a 3-letter alphabet up
        // to length 6, then longer pseudo-random ones.
        let mut seqs: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=5 {
            for code in 0..3usize.pow(len) {
                let mut c = code;
                seqs.push(
                    (0..len)
                        .map(|_| {
                            let x = (c % 3) as u8;
                            c /= 3;
                            x
                        })
                        .collect(),
                );
            }
        }
        for a in seqs.iter().step_by(7) {
            for b in seqs.iter().step_by(5) {
                check(a, b);
            }
        }
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..200 {
            let la = (next() % 60) as usize;
            let lb = (next() % 60) as usize;
            let a: Vec<u8> = (0..la).map(|_| (next() % 4) as u8).collect();
            let b: Vec<u8> = (0..lb).map(|_| (next() % 4) as u8).collect();
            check(&a, &b);
        }
    }

    #[test]
    fn one_launch_without_a_device_event() {
        // 1,567 recorded launches, 1,566 device events: the one without an event is skipped.
        let rec: Vec<u32> = (0..1567).collect();
        let dev: Vec<u32> = (0..1567).filter(|&k| k != 700).collect();
        let p = align(dev.len(), rec.len(), 16, |i, j| dev[i] == rec[j]).unwrap();
        assert_eq!(p.len(), 1566);
        assert!(p.iter().all(|&(i, j)| dev[i as usize] == rec[j as usize]));
    }

    #[test]
    fn over_budget_is_none() {
        let a = [0u8; 50];
        let b = [1u8; 50];
        assert!(align(50, 50, 10, |i, j| a[i] == b[j]).is_none());
        assert_eq!(align(0, 3, 3, |_, _| true), Some(vec![]));
        assert_eq!(align(0, 3, 2, |_, _| true), None);
    }
}
