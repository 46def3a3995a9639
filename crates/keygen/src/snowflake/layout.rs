//! Where a SNOWFLAKE key's bits go: milliseconds since an epoch, then the worker id, then the
//! sequence, then (gene keys) the low bits of another sharding column's value. ShardingSphere's
//! layout (41 + 10 + 12 bits from 2016-11-01Z) is the default; the `epoch`, `worker-id-bits`,
//! `sequence-bits` and `gene-bits` properties (Keyshard's own) change it, e.g. to keys below
//! 2^53 that JavaScript numbers hold exactly, or to keys that route like the row's user id.

use std::fmt;
use std::time::{Duration, UNIX_EPOCH};

use crate::props::int_in_range;
use crate::{KeyGenError, Props};

/// 2016-11-01T00:00:00Z in milliseconds since the Unix epoch.
pub const EPOCH_MILLIS: i64 = 1_477_958_400_000;

/// `epoch`: when generator time 0 is (RFC 3339, or milliseconds since the Unix epoch).
pub const PROP_EPOCH: &str = "epoch";
/// `worker-id-bits`: 1..=10, default 10.
pub const PROP_WORKER_ID_BITS: &str = "worker-id-bits";
/// `sequence-bits`: 1..=12, default 12 less the gene bits.
pub const PROP_SEQUENCE_BITS: &str = "sequence-bits";
/// `gene-bits`: 0..=10, default 0: the lowest bits of every key, left for the row's gene (the
/// low bits of another sharding column's value, which the proxy puts there).
pub const PROP_GENE_BITS: &str = "gene-bits";

/// JavaScript's numbers hold integers exactly up to 2^53 - 1.
const JS_SAFE_BITS: u32 = 53;

/// A SNOWFLAKE key layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Generator time 0, in milliseconds since the Unix epoch.
    pub epoch_millis: i64,
    /// Bits of worker id: 2^bits worker ids.
    pub worker_id_bits: u32,
    /// Bits of sequence: 2^bits keys per millisecond and worker.
    pub sequence_bits: u32,
    /// The lowest bits, left zero for the row's gene.
    pub gene_bits: u32,
}

impl Default for Layout {
    fn default() -> Self {
        Self::SHARDINGSPHERE
    }
}

impl Layout {
    /// ShardingSphere's: 41 bits of milliseconds since 2016-11-01Z, 10 of worker id, 12 of
    /// sequence.
    pub const SHARDINGSPHERE: Layout = Layout {
        epoch_millis: EPOCH_MILLIS,
        worker_id_bits: 10,
        sequence_bits: 12,
        gene_bits: 0,
    };

    /// The layout `props` ask for; ShardingSphere's where they say nothing. `now_millis`
    /// reads the clock: an `epoch` must not be after it (negative keys), and the time must
    /// fit for years after it.
    pub fn from_props(
        props: &Props,
        now_millis: impl FnOnce() -> i64,
    ) -> Result<Self, KeyGenError> {
        // Read once, and only when needed.
        let (mut clock, mut read) = (Some(now_millis), None);
        let mut now = || *read.get_or_insert_with(|| clock.take().map_or(0, |f| f()));
        let epoch_millis = match props.get(PROP_EPOCH) {
            None => EPOCH_MILLIS,
            Some(raw) => parse_epoch(raw)
                .filter(|epoch| *epoch <= now())
                .ok_or_else(|| KeyGenError::InvalidProperty {
                    name: PROP_EPOCH.to_owned(),
                    value: raw.clone(),
                    expected: "a time in the past: RFC 3339 (2024-01-01T00:00:00Z) or \
                               milliseconds since the Unix epoch"
                        .to_owned(),
                })?,
        };
        let gene_bits = int_in_range(props, PROP_GENE_BITS, 0, 0, 10)?;
        let layout = Self {
            epoch_millis,
            worker_id_bits: int_in_range(props, PROP_WORKER_ID_BITS, 10, 1, 10)?,
            // The gene's bits come out of the sequence's by default, so the time keeps its
            // 41 bits (69 years).
            sequence_bits: int_in_range(
                props,
                PROP_SEQUENCE_BITS,
                12u32.saturating_sub(gene_bits).max(1),
                1,
                12,
            )?,
            gene_bits,
        };
        // Checked here rather than at the first key: the time must fit for years yet (as
        // ShardingSphere's layout does until 2086).
        let years = 10 * 365 * 86_400_000;
        let custom = (
            layout.worker_id_bits,
            layout.sequence_bits + layout.gene_bits,
        ) != (10, 12);
        if custom && layout.compose(now().saturating_add(years), 0, 0).is_none() {
            return Err(KeyGenError::InvalidProperty {
                name: "worker-id-bits + sequence-bits + gene-bits".to_owned(),
                value: layout.to_string(),
                expected: "worker-id-bits + sequence-bits + gene-bits leaving the time at least ten more years (22 bits together from a recent epoch leave 69)"
                    .to_owned(),
            });
        }
        Ok(layout)
    }

    /// The largest worker id.
    pub fn max_worker_id(&self) -> u16 {
        (1u16 << self.worker_id_bits) - 1
    }

    /// The largest sequence number within one millisecond.
    pub fn max_sequence(&self) -> i64 {
        (1i64 << self.sequence_bits) - 1
    }

    /// The most keys one millisecond holds: the largest block handed out as consecutive keys.
    pub fn max_block(&self) -> usize {
        1usize << self.sequence_bits
    }

    fn time_shift(&self) -> u32 {
        self.worker_id_bits + self.sequence_shift()
    }

    fn sequence_shift(&self) -> u32 {
        self.sequence_bits + self.gene_bits
    }

    /// How far apart consecutive keys of one block are: 1, or 2^gene-bits.
    pub fn key_step(&self) -> i64 {
        1 << self.gene_bits
    }

    /// The key for generator millisecond `millis` (Unix), `worker_id` and `sequence` (its gene
    /// bits zero), or `None` once time no longer fits below bit 63.
    pub(crate) fn compose(&self, millis: i64, worker_id: u16, sequence: i64) -> Option<i64> {
        let since = millis.checked_sub(self.epoch_millis)?;
        if since < 0 || since >> (63 - self.time_shift()) != 0 {
            return None;
        }
        Some(
            (since << self.time_shift())
                | (i64::from(worker_id) << self.sequence_shift())
                | (sequence << self.gene_bits),
        )
    }

    /// The last millisecond whose keys stay below 2^53 (JavaScript's exact integers), in
    /// milliseconds since the Unix epoch.
    pub fn js_safe_until(&self) -> i64 {
        let bits = JS_SAFE_BITS.saturating_sub(self.time_shift());
        self.epoch_millis + (1i64 << bits) - 1
    }

    /// Takes `key` apart; negative integers are not SNOWFLAKE keys.
    pub fn decode(&self, key: i64) -> Result<Snowflake, KeyGenError> {
        if key < 0 {
            return Err(KeyGenError::NotASnowflake(key));
        }
        Ok(Snowflake {
            unix_millis: (key >> self.time_shift()) + self.epoch_millis,
            worker_id: ((key >> self.sequence_shift()) & i64::from(self.max_worker_id())) as u16,
            sequence: ((key >> self.gene_bits) & self.max_sequence()) as u16,
            gene: (key & (self.key_step() - 1)) as u16,
        })
    }
}

impl fmt::Display for Layout {
    /// As the properties write it: what instances must agree on.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "epoch={}, worker-id-bits={}, sequence-bits={}",
            self.epoch_millis, self.worker_id_bits, self.sequence_bits
        )?;
        match self.gene_bits {
            0 => Ok(()),
            bits => write!(f, ", gene-bits={bits}"),
        }
    }
}

fn parse_epoch(raw: &str) -> Option<i64> {
    let raw = raw.trim();
    if let Ok(millis) = raw.parse::<i64>() {
        return (millis >= 0).then_some(millis);
    }
    let time = humantime::parse_rfc3339_weak(raw).ok()?;
    i64::try_from(time.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()
}

/// A SNOWFLAKE key taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snowflake {
    /// Milliseconds since the Unix epoch when the key was generated.
    pub unix_millis: i64,
    /// The generating worker.
    pub worker_id: u16,
    /// The sequence number within that millisecond.
    pub sequence: u16,
    /// The gene: the low bits of the row's other sharding column (0 without gene bits).
    pub gene: u16,
}

impl Snowflake {
    /// Takes `key` apart in ShardingSphere's layout.
    pub fn decode(key: i64) -> Result<Self, KeyGenError> {
        Layout::SHARDINGSPHERE.decode(key)
    }

    /// The generation time, RFC 3339 in UTC with milliseconds.
    pub fn timestamp(&self) -> String {
        let time = UNIX_EPOCH + Duration::from_millis(self.unix_millis.unsigned_abs());
        humantime::format_rfc3339_millis(time).to_string()
    }
}

impl fmt::Display for Snowflake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timestamp: {}\nworker-id: {}\nsequence: {}",
            self.timestamp(),
            self.worker_id,
            self.sequence
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::props::props_of as props;

    const NOW: i64 = 1_796_000_000_000;

    #[test]
    fn the_default_is_shardingsphere_s() {
        let layout = Layout::from_props(&Props::new(), || NOW).unwrap();
        assert_eq!(layout, Layout::SHARDINGSPHERE);
        assert_eq!(layout.compose(EPOCH_MILLIS + 1, 0, 0), Some(1 << 22));
        assert_eq!(layout.max_block(), 4096);
    }

    #[test]
    fn a_js_safe_layout_stays_below_2_pow_53_for_decades() {
        let layout = Layout::from_props(
            &props(&[
                ("epoch", "2024-01-01T00:00:00Z"),
                ("worker-id-bits", "5"),
                ("sequence-bits", "7"),
            ]),
            || NOW,
        )
        .unwrap();
        assert_eq!(layout.epoch_millis, 1_704_067_200_000);
        let until = layout.js_safe_until();
        // 2^41 ms: about 69 years.
        assert!(until > layout.epoch_millis + 69 * 365 * 86_400_000);
        let last = layout
            .compose(until, layout.max_worker_id(), layout.max_sequence())
            .unwrap();
        assert!(last < 1 << 53, "{last}");
        assert!(layout.compose(until + 1, 0, 0).unwrap() >= 1 << 53);
        let decoded = layout.decode(last).unwrap();
        assert_eq!(
            (decoded.unix_millis, decoded.worker_id, decoded.sequence),
            (until, 31, 127)
        );
    }

    /// Gene bits come out of the sequence's by default: the time keeps its 41 bits, a
    /// millisecond holds fewer keys, and each key leaves its lowest bits zero for the gene.
    #[test]
    fn gene_bits_are_the_lowest_and_left_zero() {
        let layout = Layout::from_props(&props(&[("gene-bits", "4")]), || NOW).unwrap();
        assert_eq!((layout.sequence_bits, layout.gene_bits), (8, 4));
        assert_eq!(layout.max_block(), 256);
        assert_eq!(layout.key_step(), 16);
        let key = layout.compose(EPOCH_MILLIS + 1_000, 5, 7).unwrap();
        assert_eq!(key, (1_000 << 22) | (5 << 12) | (7 << 4));
        let decoded = layout.decode(key | 0b1011).unwrap();
        assert_eq!(
            (
                decoded.unix_millis,
                decoded.worker_id,
                decoded.sequence,
                decoded.gene
            ),
            (EPOCH_MILLIS + 1_000, 5, 7, 11)
        );
        assert_eq!(
            layout.to_string(),
            format!("epoch={EPOCH_MILLIS}, worker-id-bits=10, sequence-bits=8, gene-bits=4")
        );
        // Taken from the sequence as well, they would leave the time 37 bits: 4 years.
        let err = Layout::from_props(
            &props(&[("gene-bits", "4"), ("sequence-bits", "12")]),
            || NOW,
        )
        .unwrap_err();
        assert!(err.to_string().contains("gene-bits"), "{err}");
    }

    #[test]
    fn bad_layouts_are_refused_naming_the_property() {
        for (name, value) in [
            ("epoch", "2999-01-01T00:00:00Z"),
            ("epoch", "yesterday"),
            ("worker-id-bits", "0"),
            ("worker-id-bits", "11"),
            ("sequence-bits", "13"),
            ("gene-bits", "11"),
        ] {
            let err = Layout::from_props(&props(&[(name, value)]), || NOW).unwrap_err();
            assert!(err.to_string().contains(name), "{name}={value}: {err}");
        }
    }

    #[test]
    fn time_beyond_the_layout_composes_no_key() {
        let layout = Layout {
            epoch_millis: 0,
            worker_id_bits: 10,
            sequence_bits: 12,
            gene_bits: 0,
        };
        assert!(layout.compose((1 << 41) - 1, 0, 0).is_some());
        assert_eq!(layout.compose(1 << 41, 0, 0), None);
        assert_eq!(layout.compose(-1, 0, 0), None);
    }
}
