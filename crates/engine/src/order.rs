//! Ordering, in one place: every list the search path sorts goes through [`sort_by_key`], on one
//! key type. The standard library's sorts are large once instantiated (sorting networks, merge
//! and partition code per element type and comparator), and a dozen call sites each sorting
//! their own type with their own closure put ten of them into the browser's module; one
//! `u128` sort replaces them all.

/// Sorts `v` by `key`, smallest first, keeping the order of equal keys (stable).
pub(crate) fn sort_by_key<T>(v: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    // Key above, position below: distinct, so an unstable sort of them is a stable sort of `v`.
    let mut keys: Vec<u128> = v
        .iter()
        .enumerate()
        .map(|(i, x)| (u128::from(key(x)) << 64) | i as u128)
        .collect();
    keys.sort_unstable();
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(keys.iter().filter_map(|k| slots[*k as u64 as usize].take()));
}

/// The key that puts the higher `score` first (in `f32::total_cmp` order), then the smaller
/// `id`.
pub(crate) fn best_first(score: f32, id: u32) -> u64 {
    let bits = score.to_bits();
    // Flipping makes the unsigned order of the bits the total order of the floats.
    let ascending = if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    };
    (u64::from(!ascending) << 32) | u64::from(id)
}

/// Sorts `(id, score)` pairs best first, ties by the smaller id.
pub(crate) fn rank(v: &mut Vec<(u32, f32)>) {
    sort_by_key(v, |&(id, score)| best_first(score, id));
}

/// Sorts ids ascending and drops repeats.
pub(crate) fn sort_dedup(v: &mut Vec<u32>) {
    sort_by_key(v, |&id| u64::from(id));
    v.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_is_best_first_then_smaller_id_as_total_cmp_orders_floats() {
        let scores = [
            0.5,
            -0.0,
            0.0,
            -1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-40,
            -1e-40,
            0.5,
            3.25,
            f32::MIN,
            f32::MAX,
        ];
        let mut v: Vec<(u32, f32)> = scores
            .iter()
            .enumerate()
            .map(|(i, &s)| (i as u32, s))
            .collect();
        v.reverse();
        let mut expected = v.clone();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        rank(&mut v);
        assert_eq!(
            v.iter().map(|p| (p.0, p.1.to_bits())).collect::<Vec<_>>(),
            expected
                .iter()
                .map(|p| (p.0, p.1.to_bits()))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn sort_by_key_is_stable_and_moves_every_element() {
        let mut v: Vec<(u64, String)> = (0..200u64)
            .map(|i| ((i * 7919) % 13, format!("item {i}")))
            .collect();
        let mut expected = v.clone();
        expected.sort_by_key(|p| p.0);
        sort_by_key(&mut v, |p| p.0);
        assert_eq!(v, expected);
        let mut empty: Vec<String> = Vec::new();
        sort_by_key(&mut empty, |_| 0);
        assert!(empty.is_empty());
    }

    #[test]
    fn sort_dedup_leaves_each_id_once_ascending() {
        let mut v = vec![9, 3, 3, u32::MAX, 0, 9, 1];
        sort_dedup(&mut v);
        assert_eq!(v, vec![0, 1, 3, 9, u32::MAX]);
    }
}
