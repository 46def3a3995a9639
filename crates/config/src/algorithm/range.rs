//! VOLUME_RANGE and BOUNDARY_RANGE: integers split at ascending boundaries, partition `n`
//! holding the values with `n` boundaries at or below them, as ShardingSphere numbers them.

use std::ops::RangeInclusive;

/// The most partitions a range algorithm may make: each is a table or data source.
const MAX_PARTITIONS: i128 = 100_000;

/// Ascending partition boundaries: partition 0 is below the first, the last at or above the
/// last one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundaries {
    values: Vec<i64>,
}

impl Boundaries {
    /// VOLUME_RANGE: `[lower, upper)` cut every `volume`, with a partition below and one above.
    pub fn volume(lower: i64, upper: i64, volume: i64) -> Result<Self, String> {
        let span = i128::from(upper) - i128::from(lower);
        if volume <= 0 {
            return Err(format!("sharding-volume must be positive, got {volume}"));
        }
        if span < i128::from(volume) {
            return Err(format!(
                "range-upper - range-lower ({span}) is smaller than sharding-volume ({volume})"
            ));
        }
        let steps = (span + i128::from(volume) - 1) / i128::from(volume);
        if steps + 2 > MAX_PARTITIONS {
            return Err(format!(
                "the range makes {} partitions; at most {MAX_PARTITIONS} are supported",
                steps + 2
            ));
        }
        // Whole steps from `lower`, then `upper` itself (the last step may be shorter).
        let mut values: Vec<i64> = (0..steps)
            .map(|i| (i128::from(lower) + i * i128::from(volume)) as i64)
            .collect();
        values.push(upper);
        Ok(Self { values })
    }

    /// BOUNDARY_RANGE's `sharding-ranges`: comma-separated integers in any order; entries
    /// that are not integers are skipped, as ShardingSphere skips them.
    pub fn boundary(text: &str) -> Result<Self, String> {
        let mut values: Vec<i64> = text
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        if values.is_empty() {
            return Err(format!("sharding-ranges '{text}' holds no integer"));
        }
        if values.len() as i128 >= MAX_PARTITIONS {
            return Err(format!(
                "sharding-ranges makes more than {MAX_PARTITIONS} partitions"
            ));
        }
        values.sort_unstable();
        Ok(Self { values })
    }

    /// The partition `value` belongs to.
    pub fn partition(&self, value: i64) -> u64 {
        self.values.partition_point(|b| *b <= value) as u64
    }

    /// The partitions a range may reach: from the lower end's to the upper end's (each end's
    /// own partition, open or closed, as ShardingSphere routes it), every one for a missing end.
    pub fn partitions(&self, lower: Option<i64>, upper: Option<i64>) -> RangeInclusive<u64> {
        let first = lower.map_or(0, |v| self.partition(v));
        let last = upper.map_or(self.values.len() as u64, |v| self.partition(v));
        first..=last
    }

    /// How many partitions there are.
    pub fn count(&self) -> u64 {
        self.values.len() as u64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ShardingSphere's VolumeBasedRangeShardingAlgorithmTest and
    // BoundaryBasedRangeShardingAlgorithmTest.
    #[test]
    fn volume_range_as_shardingsphere_tests_it() {
        let volume = Boundaries::volume(10, 45, 10).unwrap();
        assert_eq!(volume.count(), 6);
        assert_eq!(volume.partition(0), 0);
        assert_eq!(volume.partitions(None, Some(12)), 0..=1);
        assert_eq!(volume.partitions(Some(40), None), 4..=5);
        assert_eq!(volume.partitions(Some(12), Some(55)), 1..=5);
        assert!(Boundaries::volume(20, 15, 10).is_err());
        assert!(Boundaries::volume(0, 10, 0).is_err());
        assert!(Boundaries::volume(0, i64::MAX, 1).is_err());
        // The last step ends at range-upper: 40..45 is partition 4, 45 and above 5.
        assert_eq!(volume.partition(44), 4);
        assert_eq!(volume.partition(45), 5);
        assert_eq!(volume.partition(-7), 0);
    }

    #[test]
    fn boundary_range_as_shardingsphere_tests_it() {
        let boundary = Boundaries::boundary("1,5,10").unwrap();
        assert_eq!(boundary.count(), 4);
        assert_eq!(boundary.partition(0), 0);
        assert_eq!(boundary.partitions(Some(2), Some(15)), 1..=3);
        assert_eq!(Boundaries::boundary(" 10, x, 1 ,5").unwrap(), boundary);
        assert!(Boundaries::boundary("x").is_err());
    }
}
