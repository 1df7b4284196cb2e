//! Round tick steps: 1, 2 or 5 times a power of ten, so an axis reads `0 2 4 6`, never
//! `0 2.7 5.4`.

/// The smallest round step (1, 2 or 5 times a power of ten, from `smallest`, itself a power of
/// ten) that cuts `span` into at most about `count` ticks: at least `span / count`, and 1.
pub fn round_step(span: u64, count: u64, smallest: u64) -> u64 {
    let target = (span / count.max(1)).max(1);
    let mut power = smallest.max(1);
    loop {
        for factor in [1, 2, 5] {
            if factor * power >= target {
                return factor * power;
            }
        }
        power *= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::round_step;

    #[test]
    fn steps_are_round_and_give_about_the_ticks_asked() {
        const MS: u64 = 1_000_000;
        // About ten ticks over a minute, 19 s and 3 ms of nanoseconds.
        assert_eq!(round_step(60_000 * MS, 10, 1_000), 10_000 * MS);
        assert_eq!(round_step(19_000 * MS, 10, 1_000), 2_000 * MS);
        assert_eq!(round_step(3 * MS, 10, 1_000), 500_000);
        // Never below the smallest step, never zero.
        assert_eq!(round_step(5, 10, 1_000), 1_000);
        assert_eq!(round_step(0, 0, 0), 1);
        assert_eq!(round_step(31, 10, 1), 5);
    }
}
