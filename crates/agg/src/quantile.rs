//! Nearest-rank percentiles of small samples (gap and latency distributions).

/// The `p` quantile (0 < p <= 1) of `sorted` (ascending) by nearest rank; 0 when empty.
pub fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let i = ((p * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
    sorted.get(i).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_the_ceiling_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(nearest_rank(&v, 0.5), 2.0);
        assert_eq!(nearest_rank(&v, 0.95), 4.0);
        assert_eq!(nearest_rank(&v, 0.25), 1.0);
        assert_eq!(nearest_rank(&[], 0.5), 0.0);
    }
}
