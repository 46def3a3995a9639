//! One bounded cache for everything the proxy keeps per statement shape (the shapes the
//! router learned, the result columns the shards described): at most so many entries and so
//! many bytes, the least used going first by generalised CLOCK (each entry counts its hits, up
//! to [`MAX_USES`]; eviction sweeps a hand over the entries, taking one use from each it
//! passes and dropping the first with none left), with its hits, misses and evictions counted
//! for `/metrics`.
//!
//! A hit only adds to a counter, with no list to relink as an exact LRU would, and a stream of
//! statements that never repeat (an IN list of every length) passes through without evicting
//! what does repeat: a statement used often outlasts [`MAX_USES`] sweeps, one used once a
//! single sweep. Dropping everything when full (what was here before) threw the hot entries
//! away with the cold.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// A cache's bounds, as the configuration gives them.
pub use keyshard_config::CacheBounds as Bounds;

/// What a cache holds and has done, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Entries held now.
    pub entries: usize,
    /// Their weight now.
    pub bytes: usize,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Entries dropped to make room.
    pub evictions: u64,
}

/// The uses an entry is credited with at most: the sweeps it outlasts unused.
const MAX_USES: u8 = 3;

#[derive(Debug)]
struct Slot<K, V> {
    key: K,
    value: V,
    weight: usize,
    /// Hits since the hand last passed, up to [`MAX_USES`].
    uses: u8,
}

/// A bounded map with CLOCK eviction.
#[derive(Debug)]
pub struct Cache<K, V> {
    bounds: Bounds,
    index: foldhash::HashMap<K, usize>,
    slots: Vec<Option<Slot<K, V>>>,
    /// Slots emptied by eviction, reused first.
    free: Vec<usize>,
    hand: usize,
    stats: CacheStats,
}

impl<K: Hash + Eq + Clone, V> Cache<K, V> {
    /// An empty cache within `bounds`.
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            index: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            hand: 0,
            stats: CacheStats::default(),
        }
    }

    /// The value kept under `key`, marked as used.
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let Some(&at) = self.index.get(key) else {
            self.stats.misses += 1;
            return None;
        };
        self.stats.hits += 1;
        let slot = self.slots[at].as_mut()?;
        slot.uses = (slot.uses + 1).min(MAX_USES);
        Some(&slot.value)
    }

    /// Keeps `value` under `key`, weighing `weight` bytes, making room as needed; an entry
    /// heavier than the whole cache is not kept.
    pub fn insert(&mut self, key: K, value: V, weight: usize) {
        if weight > self.bounds.bytes || self.bounds.entries == 0 {
            return;
        }
        if let Some(&at) = self.index.get(&key)
            && let Some(slot) = self.slots[at].as_mut()
        {
            self.stats.bytes = self.stats.bytes - slot.weight + weight;
            // Replaced, not used: it keeps the uses it had.
            slot.value = value;
            slot.weight = weight;
            self.shrink_to(self.bounds.entries, Some(at));
            return;
        }
        self.shrink_to(self.bounds.entries - 1, None);
        while self.stats.bytes + weight > self.bounds.bytes && self.evict_one(None) {}
        let slot = Slot {
            key: key.clone(),
            value,
            weight,
            uses: 0,
        };
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at] = Some(slot);
                at
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        self.index.insert(key, at);
        self.stats.entries += 1;
        self.stats.bytes += weight;
    }

    /// Drops every entry (what they were made from changed); the counts stay.
    pub fn clear(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.free.clear();
        self.hand = 0;
        self.stats.entries = 0;
        self.stats.bytes = 0;
    }

    /// What it holds and has done.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Evicts until at most `entries` are left (and the weight fits), sparing slot `keep`.
    fn shrink_to(&mut self, entries: usize, keep: Option<usize>) {
        while (self.stats.entries > entries || self.stats.bytes > self.bounds.bytes)
            && self.evict_one(keep)
        {}
    }

    /// Moves the hand to the first entry with no use left, taking one from each it passes,
    /// and drops it; `false` when there is nothing to drop.
    fn evict_one(&mut self, keep: Option<usize>) -> bool {
        let candidates = self.stats.entries - usize::from(keep.is_some());
        if candidates == 0 {
            return false;
        }
        // Every entry has run out of uses by the last turn.
        for _ in 0..(usize::from(MAX_USES) + 1) * self.slots.len() {
            let at = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            if Some(at) == keep {
                continue;
            }
            let Some(slot) = self.slots[at].as_mut() else {
                continue;
            };
            if slot.uses > 0 {
                slot.uses -= 1;
                continue;
            }
            if let Some(slot) = self.slots[at].take() {
                self.index.remove(&slot.key);
                self.free.push(at);
                self.stats.entries -= 1;
                self.stats.bytes -= slot.weight;
                self.stats.evictions += 1;
            }
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(entries: usize, bytes: usize) -> Cache<String, u32> {
        Cache::new(Bounds { entries, bytes })
    }

    #[test]
    fn the_entries_used_more_stay() {
        let mut cache = cache(3, 1_000);
        for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
            cache.insert(key.into(), i as u32, 1);
        }
        assert_eq!(cache.get("a"), Some(&0));
        cache.insert("d".into(), 3, 1);
        // `b`, the first with no use, went; `a` was spared.
        assert_eq!(cache.get("b"), None);
        assert_eq!(cache.get("a"), Some(&0));
        assert_eq!(cache.get("d"), Some(&3));
        let stats = cache.stats();
        assert_eq!((stats.entries, stats.evictions), (3, 1));
        assert_eq!((stats.hits, stats.misses), (3, 1));
    }

    #[test]
    fn a_hot_entry_outlives_a_stream_of_statements_seen_once() {
        let mut cache = cache(64, 1 << 20);
        cache.insert("hot".into(), 1, 3);
        for i in 0..10_000 {
            assert!(cache.get("hot").is_some(), "evicted after {i} others");
            cache.insert(format!("once {i}"), 0, 8);
        }
        assert_eq!(cache.stats().entries, 64);
    }

    #[test]
    fn bytes_are_bounded_as_entries_are() {
        let mut cache = cache(100, 10);
        cache.insert("a".into(), 1, 4);
        cache.insert("b".into(), 2, 4);
        cache.insert("c".into(), 3, 4);
        let stats = cache.stats();
        assert!(stats.bytes <= 10 && stats.entries == 2, "{stats:?}");
        // Heavier than the whole cache: not kept, nothing else dropped for it.
        cache.insert("huge".into(), 4, 11);
        assert_eq!(cache.get("huge"), None);
        assert_eq!(cache.stats().entries, 2);
        // A new value under a kept key weighs what it weighs now.
        cache.insert("c".into(), 5, 9);
        assert_eq!(cache.get("c"), Some(&5));
        assert!(cache.stats().bytes <= 10, "{:?}", cache.stats());
        cache.clear();
        assert_eq!(cache.stats().entries, 0);
        assert_eq!(cache.get("c"), None);
        cache.insert("c".into(), 6, 1);
        assert_eq!(cache.get("c"), Some(&6));
    }
}
