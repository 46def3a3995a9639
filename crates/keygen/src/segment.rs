//! LEAF_SEGMENT: consecutive keys from segments of a named sequence, as Meituan Leaf's segment
//! mode with its double buffer (ShardingSphere 4's property names).
//!
//! A repository (another crate) hands out segments of the sequence `leaf.key` as inclusive
//! ranges of `leaf.segment.step` values; instances sharing the repository get disjoint ones.
//! Keys come from the current segment. Once 10% of it is used the generator asks for the next
//! one through the fetcher (a callback that wakes a background task; no I/O happens here), so
//! that in steady state the next segment is buffered before the current one runs out. A call
//! that no buffered segment can serve fails at once: it runs on async runtime threads and must
//! never wait for the repository.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::props::{check_known, int_in_range};
use crate::snowflake::PROP_GENE_BITS;
use crate::{Key, KeyGenError, KeyGenerator, Props};

const TYPE_NAME: &str = "LEAF_SEGMENT";
const PROP_LEAF_KEY: &str = "leaf.key";
const PROP_INITIAL_VALUE: &str = "leaf.segment.id.initial.value";
const PROP_STEP: &str = "leaf.segment.step";

const DEFAULT_INITIAL_VALUE: i64 = 1;
const DEFAULT_STEP: i64 = 10_000;
/// Largest `leaf.segment.step`: far above any useful segment, and small enough that segment
/// arithmetic (a sequence's maximum plus a step, counts in `usize` on 32-bit targets) never
/// overflows.
pub const MAX_STEP: i64 = 1_000_000_000;

/// A LEAF_SEGMENT generator.
#[derive(Debug)]
pub struct SegmentGenerator {
    key: String,
    initial: i64,
    step: i64,
    /// `gene-bits` (Keyshard's own): each key is the segment's number shifted left this far,
    /// its lowest bits left zero for the row's gene.
    gene_bits: u32,
    buffers: Mutex<Buffers>,
}

/// The callback that asks the background task for a segment.
#[derive(Clone)]
struct Fetcher(Arc<dyn Fn() + Send + Sync>);

impl fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fetcher")
    }
}

/// The double buffer.
#[derive(Debug, Default)]
struct Buffers {
    /// Keys are taken from here; `left == 0` when there is none.
    current: Segment,
    /// The next segment, once fetched.
    spare: Option<Segment>,
    /// The fetcher was called and no segment was supplied since, so it is not called again on
    /// every key. Retrying a failed fetch is the background task's business
    /// ([`SegmentGenerator::wants_segment`]).
    requested: bool,
    fetcher: Option<Fetcher>,
    /// A segment fetched for statements larger than `leaf.segment.step`, sized to the
    /// largest asked for; only such statements take from it.
    sized: Segment,
    /// The keys the largest such statement waiting for one wants; 0: none.
    sized_wanted: u64,
}

/// The unused part of a segment.
#[derive(Debug, Default, Clone, Copy)]
struct Segment {
    /// The next key; meaningless when `left == 0` (it may have wrapped past `i64::MAX`).
    next: i64,
    /// Keys not handed out yet.
    left: u64,
    /// With this many keys left or fewer, at least 10% of the segment is used and the next
    /// one is wanted.
    refill_at: u64,
}

impl Segment {
    /// The segment `first..=last`; `None` when it is empty.
    fn new(first: i64, last: i64) -> Option<Self> {
        if last < first {
            return None;
        }
        // Saturates only for i64::MIN..=i64::MAX, whose 2^64 values do not fit a u64: one key
        // of it is never handed out.
        let len = last.abs_diff(first).saturating_add(1);
        Some(Self {
            next: first,
            left: len,
            // "At least 10% used" is used * 10 ≥ len, i.e. used ≥ ⌈len / 10⌉.
            refill_at: len - len.div_ceil(10),
        })
    }
}

impl Buffers {
    /// Takes `count` consecutive keys and returns the first; `None` when no buffered segment
    /// holds `count` more.
    fn take(&mut self, count: u64) -> Option<i64> {
        if self.current.left < count {
            // The keys of one call must be consecutive, so a remainder too short for this call
            // is skipped: wasting a few keys is cheaper than a statement with wrong keys.
            self.current = self.spare.take().unwrap_or_default();
            if self.current.left < count {
                // Nothing can serve the call. A remainder that could not serve it counts as
                // used up, so `wants_segment` asks for the next segment even if it was
                // barely touched.
                self.current.left = 0;
                return None;
            }
        }
        let first = self.current.next;
        self.current.left -= count;
        // Wraps only when the segment ends at i64::MAX and is now used up, and then `next`
        // is never read again.
        self.current.next = first.wrapping_add(count as i64);
        Some(first)
    }

    /// Whether the next segment is wanted: none is buffered, and the current one is (at least
    /// 10%) used or missing.
    fn wants_segment(&self) -> bool {
        self.current.left <= self.current.refill_at && self.spare.is_none()
    }

    /// The fetcher to call once the lock is released, when the next segment is wanted and not
    /// asked for yet; marks it asked for.
    fn fetch_now(&mut self) -> Option<Fetcher> {
        if self.requested || !self.wants_segment() {
            return None;
        }
        let fetcher = self.fetcher.clone()?;
        self.requested = true;
        Some(fetcher)
    }
}

impl SegmentGenerator {
    /// Builds a generator from ShardingSphere 4's properties: `leaf.key` (the sequence's
    /// name in the repository, required), `leaf.segment.id.initial.value` (where a new
    /// sequence starts, ≥ 1, default 1) and `leaf.segment.step` (keys per segment,
    /// 1..=[`MAX_STEP`], default 10000).
    pub fn from_props(props: &Props) -> Result<Self, KeyGenError> {
        check_known(
            TYPE_NAME,
            props,
            &[PROP_LEAF_KEY, PROP_INITIAL_VALUE, PROP_STEP, PROP_GENE_BITS],
        )?;
        let key = match props.get(PROP_LEAF_KEY) {
            Some(key) if !key.trim().is_empty() => key.clone(),
            other => {
                return Err(KeyGenError::InvalidProperty {
                    name: PROP_LEAF_KEY.to_owned(),
                    value: other.cloned().unwrap_or_default(),
                    expected: "a non-empty sequence name".to_owned(),
                });
            }
        };
        Ok(Self {
            key,
            // ShardingSphere refuses non-positive initial values.
            initial: int_in_range(
                props,
                PROP_INITIAL_VALUE,
                DEFAULT_INITIAL_VALUE,
                1,
                i64::MAX,
            )?,
            step: int_in_range(props, PROP_STEP, DEFAULT_STEP, 1, MAX_STEP)?,
            gene_bits: int_in_range(props, PROP_GENE_BITS, 0, 0, 10)?,
            buffers: Mutex::new(Buffers::default()),
        })
    }

    /// `leaf.key`: the sequence's name in the repository.
    pub fn leaf_key(&self) -> &str {
        &self.key
    }

    /// `leaf.segment.id.initial.value`.
    pub fn initial_value(&self) -> i64 {
        self.initial
    }

    /// `leaf.segment.step`.
    pub fn step(&self) -> i64 {
        self.step
    }

    /// Sets the callback that asks for the next segment in the background, replacing any
    /// earlier one. It must be cheap and must not block (it wakes a task that fetches and
    /// calls [`SegmentGenerator::supply`]); it is never called with the generator's lock
    /// held, so it may call `supply` itself.
    ///
    /// If a segment is wanted already (at start-up, none is buffered), it is called at once.
    pub fn set_fetcher(&self, fetch: impl Fn() + Send + Sync + 'static) {
        let fetch = {
            let mut buffers = self.lock();
            buffers.fetcher = Some(Fetcher(Arc::new(fetch)));
            // A fetch asked of an earlier fetcher may never be answered by this one.
            buffers.requested = false;
            buffers.fetch_now()
        };
        if let Some(Fetcher(fetch)) = fetch {
            fetch();
        }
    }

    /// A segment `first..=last` fetched from the repository: the current one if the current
    /// one is used up, else the next one.
    ///
    /// An empty range is ignored. A segment that arrives while both buffers are full (two
    /// fetches raced) is dropped: its keys are never handed out, which wastes them but keeps
    /// every key unique.
    pub fn supply(&self, first: i64, last: i64) {
        let mut buffers = self.lock();
        // Whatever arrives answers the request; if it is unusable, the next key asks again.
        buffers.requested = false;
        let Some(segment) = Segment::new(first, last) else {
            return;
        };
        if buffers.current.left == 0 {
            // Keys stay in the order the repository handed the segments out.
            if let Some(spare) = buffers.spare.take() {
                buffers.current = spare;
            }
        }
        if buffers.current.left == 0 {
            buffers.current = segment;
        } else if buffers.spare.is_none() {
            buffers.spare = Some(segment);
        }
    }

    /// Whether a segment should be fetched now: none is buffered as the next one, and the
    /// current one is missing or at least 10% used. Unlike the fetcher, this stays true after
    /// a fetch was asked for, until a segment arrives: the background task uses it to retry a
    /// failed fetch and to fetch at start-up.
    pub fn wants_segment(&self) -> bool {
        self.lock().wants_segment()
    }

    /// Takes `count` consecutive keys and returns the first.
    fn next_block(&self, count: usize) -> Result<i64, KeyGenError> {
        // Lossless: usize is at most 64 bits wide.
        let wanted = count as u64;
        if wanted > self.step.unsigned_abs() {
            return self.sized_block(count);
        }
        let (first, fetch) = {
            let mut buffers = self.lock();
            let first = buffers.take(wanted);
            (first, buffers.fetch_now())
        };
        // After the lock is released: the fetcher may supply synchronously.
        if let Some(Fetcher(fetch)) = fetch {
            fetch();
        }
        first.ok_or_else(|| KeyGenError::SegmentExhausted {
            key: self.key.clone(),
        })
    }

    /// `count` consecutive keys for a statement larger than `leaf.segment.step`, from a
    /// segment fetched to its size: taken when one is buffered; otherwise it is asked for, and
    /// the statement is told to wait (`SegmentExhausted`), as when a burst outruns the
    /// segments. Without a repository to fetch from, refused.
    fn sized_block(&self, count: usize) -> Result<i64, KeyGenError> {
        let wanted = count as u64;
        let fetch = {
            let mut buffers = self.lock();
            let Some(fetcher) = buffers.fetcher.clone() else {
                return Err(KeyGenError::BlockLargerThanStep {
                    key: self.key.clone(),
                    count,
                    step: self.step,
                });
            };
            if buffers.sized.left >= wanted {
                let first = buffers.sized.next;
                buffers.sized.left -= wanted;
                buffers.sized.next = first.wrapping_add(count as i64);
                return Ok(first);
            }
            buffers.sized_wanted = buffers.sized_wanted.max(wanted);
            fetcher
        };
        (fetch.0)();
        Err(KeyGenError::SegmentExhausted {
            key: self.key.clone(),
        })
    }

    /// The size of segment a statement larger than `leaf.segment.step` waits for, if one does.
    pub fn wants_sized(&self) -> Option<i64> {
        let buffers = self.lock();
        let wanted = buffers.sized_wanted;
        (wanted > buffers.sized.left).then(|| i64::try_from(wanted).unwrap_or(i64::MAX))
    }

    /// A segment `first..=last` fetched because of [`SegmentGenerator::wants_sized`]: it
    /// replaces what is left of an earlier one (whose keys are never handed out: unique still).
    pub fn supply_sized(&self, first: i64, last: i64) {
        let mut buffers = self.lock();
        if let Some(segment) = Segment::new(first, last) {
            if segment.left >= buffers.sized_wanted {
                buffers.sized_wanted = 0;
            }
            buffers.sized = segment;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buffers> {
        // Nothing under the lock panics halfway through an update, so a poisoned lock still
        // guards consistent buffers.
        self.buffers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl KeyGenerator for SegmentGenerator {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn next_key(&self) -> Result<Key, KeyGenError> {
        let mut key = Vec::with_capacity(1);
        self.next_keys(1, &mut key)?;
        key.pop().ok_or(KeyGenError::SegmentExhausted {
            key: self.key.clone(),
        })
    }

    /// All `count` keys are consecutive (2^gene-bits apart with gene bits), or none is handed
    /// out: a statement of more than `leaf.segment.step` keys is refused, since clients
    /// compute row `i`'s key as `first + i`.
    fn next_keys(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError> {
        if count == 0 {
            return Ok(());
        }
        let first = self.next_block(count)?;
        // first + count - 1 is in the segment, so no addition overflows; the shift may.
        let last = first + (count as i64 - 1);
        if last.leading_zeros() <= self.gene_bits {
            return Err(KeyGenError::SegmentExhausted {
                key: self.key.clone(),
            });
        }
        out.extend((0..count as i64).map(|i| Key::Int((first + i) << self.gene_bits)));
        Ok(())
    }

    fn max_block(&self) -> usize {
        usize::try_from(self.step()).unwrap_or(usize::MAX)
    }

    fn gene_bits(&self) -> u32 {
        self.gene_bits
    }
}

#[cfg(test)]
mod tests;
