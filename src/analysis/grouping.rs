//! Grouping by a small integer key without a comparison sort: a counting sort, for the analyses
//! that group tens of millions of device events by step or by launch call.

/// The values of `items` grouped by key (`0..groups`), each group in the order `items` yields
/// them: `values[first[k]..first[k + 1]]` are group k's. `items` is called twice (count, place),
/// so nothing per item is stored but the result.
pub fn counting_sort<T, I>(groups: usize, items: impl Fn() -> I) -> (Vec<usize>, Vec<T>)
where
    T: Copy + Default,
    I: Iterator<Item = (usize, T)>,
{
    let mut first = vec![0usize; groups + 1];
    for (k, _) in items() {
        first[k + 1] += 1;
    }
    for k in 0..groups {
        first[k + 1] += first[k];
    }
    let mut values = vec![T::default(); first[groups]];
    let mut next = first.clone();
    for (k, v) in items() {
        values[next[k]] = v;
        next[k] += 1;
    }
    (first, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_their_order_and_cover_every_item() {
        let items = [(2, 'a'), (0, 'b'), (2, 'c'), (3, 'd'), (0, 'e')];
        let (first, values) = counting_sort(4, || items.iter().copied());
        assert_eq!(first, vec![0, 2, 2, 4, 5]);
        assert_eq!(values, vec!['b', 'e', 'a', 'c', 'd']);
    }
}
