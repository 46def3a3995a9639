//! What sessions keep between their statements (user variables, prepared statements, long
//! data, portals) is held from the same budget as statements in flight: each session at most
//! `props.session-memory-bytes`, all sessions together at most half of
//! `props.memory-budget-bytes`, so that statements always have the other half. What does not
//! fit is refused at once, never waited for (a session waiting on what others keep could wait
//! for ever), with an error that names the limit; what the session kept stays as it was.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Semaphore;

use super::UNIT;
use crate::error::{Error, ErrorKind};

/// The part of the budget sessions keep, shared by all of them.
#[derive(Debug)]
pub(crate) struct Kept {
    /// The budget statements in flight hold too, in units.
    budget: Arc<Semaphore>,
    /// Units all sessions keep.
    units: AtomicUsize,
    /// The most units all sessions may keep.
    limit: usize,
    /// The most units one session may keep.
    per_session: usize,
}

impl Kept {
    pub(super) fn new(budget: Arc<Semaphore>, total_units: usize, per_session: usize) -> Self {
        Self {
            budget,
            units: AtomicUsize::new(0),
            limit: total_units / 2,
            per_session: per_session.div_ceil(UNIT),
        }
    }

    /// The account of a new session.
    pub(crate) fn session(self: &Arc<Self>) -> Arc<SessionMemory> {
        Arc::new(SessionMemory {
            kept: Some(Arc::clone(self)),
            units: AtomicUsize::new(0),
        })
    }
}

/// What one session keeps.
#[derive(Debug, Default)]
pub(crate) struct SessionMemory {
    /// `None`: a session outside any budget (unit tests).
    kept: Option<Arc<Kept>>,
    units: AtomicUsize,
}

impl SessionMemory {
    /// Nothing held yet: a charge to grow with [`Charge::resize`].
    pub(crate) fn empty(self: &Arc<Self>) -> Charge {
        Charge {
            session: Arc::clone(self),
            units: 0,
        }
    }

    /// Holds `bytes` for `what` (named in the refusal), or refuses.
    pub(crate) fn charge(
        self: &Arc<Self>,
        bytes: usize,
        what: impl Display,
    ) -> Result<Charge, Error> {
        let mut charge = self.empty();
        charge.resize(bytes, what)?;
        Ok(charge)
    }

    /// Bytes the session keeps.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.units.load(Ordering::Relaxed) * UNIT
    }

    fn take(&self, units: usize, what: impl Display) -> Result<(), Error> {
        let Some(kept) = &self.kept else {
            self.units.fetch_add(units, Ordering::Relaxed);
            return Ok(());
        };
        let mib = |units: usize| (units * UNIT) >> 20;
        let mine = self.units.load(Ordering::Relaxed);
        if mine + units > kept.per_session {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "Out of memory: {what} would make this session keep {} MiB of the proxy's \
                     memory between statements (user variables, prepared statements, long \
                     data, portals), more than props.session-memory-bytes ({} MiB) allows; \
                     deallocate what it no longer needs",
                    mib(mine + units),
                    mib(kept.per_session),
                ),
            ));
        }
        let all = kept.units.fetch_add(units, Ordering::Relaxed) + units;
        let permit = (all <= kept.limit)
            .then(|| u32::try_from(units).ok())
            .flatten()
            .and_then(|n| kept.budget.try_acquire_many(n).ok());
        let Some(permit) = permit else {
            kept.units.fetch_sub(units, Ordering::Relaxed);
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "Out of memory: {what} does not fit in the proxy's memory now (sessions \
                     keep {} MiB, at most half of props.memory-budget-bytes, and statements \
                     in flight hold the rest); try again later",
                    mib(all - units),
                ),
            ));
        };
        // Given back by `give`, when the charge shrinks or is dropped.
        permit.forget();
        self.units.fetch_add(units, Ordering::Relaxed);
        Ok(())
    }

    fn give(&self, units: usize) {
        if units == 0 {
            return;
        }
        self.units.fetch_sub(units, Ordering::Relaxed);
        if let Some(kept) = &self.kept {
            kept.units.fetch_sub(units, Ordering::Relaxed);
            kept.budget.add_permits(units);
        }
    }
}

/// Memory a session keeps for one thing, given back when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    session: Arc<SessionMemory>,
    units: usize,
}

impl Charge {
    /// Holds `bytes` in all for what this charge is for: more, or refused leaving it as it
    /// was; or less, given back.
    pub(crate) fn resize(&mut self, bytes: usize, what: impl Display) -> Result<(), Error> {
        let units = bytes.div_ceil(UNIT);
        if units > self.units {
            self.session.take(units - self.units, what)?;
            self.units = units;
        } else {
            self.shrink_to(bytes);
        }
        Ok(())
    }

    /// Holds no more than `bytes`, giving back the rest.
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        let units = bytes.div_ceil(UNIT).min(self.units);
        self.session.give(self.units - units);
        self.units = units;
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.session.give(self.units);
    }
}

/// About the bytes a thing a session keeps takes.
pub(crate) trait Weigh {
    fn weight(&self) -> usize;
}

impl Weigh for String {
    fn weight(&self) -> usize {
        self.len()
    }
}

impl Weigh for u32 {
    fn weight(&self) -> usize {
        0
    }
}

impl<T: Weigh> Weigh for Arc<T> {
    fn weight(&self) -> usize {
        T::weight(self)
    }
}

impl Weigh for keyshard_types::Value {
    fn weight(&self) -> usize {
        self.size()
    }
}

/// What an entry of a map takes beside its key and value: the map's own slot and hash.
const PER_ENTRY: usize = 64;

/// Things a session keeps by name (user variables, prepared statements), charged by what
/// its entries weigh.
#[derive(Debug)]
pub(crate) struct KeptMap<K, V> {
    /// Looked up by name on every Parse and Bind of the extended protocol: foldhash, as for
    /// the statement shapes (see the workspace's Cargo.toml), where SipHash cost 1k
    /// instructions a statement. A session's names are its own, within its memory.
    entries: foldhash::HashMap<K, V>,
    /// What the entries weigh together.
    weight: usize,
    /// Taken at the first insert, from the session it is given.
    charge: Option<Charge>,
}

impl<K, V> Default for KeptMap<K, V> {
    fn default() -> Self {
        Self {
            entries: HashMap::default(),
            weight: 0,
            charge: None,
        }
    }
}

impl<K: Eq + Hash + Weigh, V: Weigh> KeptMap<K, V> {
    /// Keeps `value` as `key` in place of what it held, charged to `memory`; refused (naming
    /// `what`) leaving the map as it was when the session may not keep that much more.
    pub(crate) fn insert(
        &mut self,
        memory: &Arc<SessionMemory>,
        key: K,
        value: V,
        what: impl Display,
    ) -> Result<Option<V>, Error> {
        let old = self.entries.get(&key).map_or(0, |v| entry(&key, v));
        let weight = self.weight - old + entry(&key, &value);
        if weight != self.weight {
            let charge = self.charge.get_or_insert_with(|| memory.empty());
            charge.resize(weight, what)?;
            self.weight = weight;
        }
        Ok(self.entries.insert(key, value))
    }

    pub(crate) fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (key, value) = self.entries.remove_entry(key)?;
        self.weight -= entry(&key, &value);
        self.shrink();
        Some(value)
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.weight = 0;
        self.shrink();
    }

    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.get(key)
    }

    /// The entry to change in place: what it weighs must not change.
    pub(crate) fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.get_mut(key)
    }

    pub(crate) fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.contains_key(key)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn shrink(&mut self) {
        if let Some(charge) = &mut self.charge {
            charge.shrink_to(self.weight);
        }
    }
}

fn entry<K: Weigh, V: Weigh>(key: &K, value: &V) -> usize {
    key.weight() + value.weight() + PER_ENTRY
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(total: usize, per_session: usize) -> (Arc<Semaphore>, Arc<Kept>) {
        let budget = Arc::new(Semaphore::new(total / UNIT));
        let kept = Arc::new(Kept::new(Arc::clone(&budget), total / UNIT, per_session));
        (budget, kept)
    }

    #[test]
    fn a_session_keeps_at_most_its_limit_and_gets_it_back() {
        let (budget, kept) = kept(64 << 20, 4 << 20);
        let session = kept.session();
        let first = session.charge(3 << 20, "SET @a").unwrap();
        let refused = session.charge(2 << 20, "SET @b").unwrap_err();
        assert_eq!(refused.kind, ErrorKind::OutOfMemory);
        assert!(
            refused.message.contains("session-memory-bytes"),
            "{refused:?}"
        );
        assert_eq!(session.held(), 3 << 20);
        assert_eq!(budget.available_permits(), (61 << 20) / UNIT);
        drop(first);
        assert_eq!(session.held(), 0);
        assert_eq!(budget.available_permits(), (64 << 20) / UNIT);
        // A charge grows and shrinks; a refused growth leaves it as it was.
        let mut long = session.empty();
        long.resize(1 << 20, "long data").unwrap();
        assert!(long.resize(5 << 20, "long data").is_err());
        assert_eq!(session.held(), 1 << 20);
        long.resize(0, "long data").unwrap();
        assert_eq!(session.held(), 0);
    }

    #[test]
    fn a_map_is_charged_by_its_entries_and_a_refused_insert_changes_nothing() {
        let (_, kept) = kept(64 << 20, 4 << 20);
        let session = kept.session();
        let mut map: KeptMap<String, String> = KeptMap::default();
        let big = "x".repeat(3 << 20);
        map.insert(&session, "a".into(), big.clone(), "SET @a")
            .unwrap();
        let refused = map.insert(&session, "b".into(), big.clone(), "SET @b");
        assert!(refused.is_err());
        assert!(!map.contains_key("b"));
        // Replacing an entry charges the difference only.
        map.insert(&session, "a".into(), big.clone() + "y", "SET @a")
            .unwrap();
        assert!(session.held() < 4 << 20);
        map.insert(&session, "a".into(), "small".into(), "SET @a")
            .unwrap();
        map.insert(&session, "b".into(), big, "SET @b").unwrap();
        map.remove("b");
        assert!(session.held() <= 1024);
        map.clear();
        assert_eq!(session.held(), 0);
    }

    #[test]
    fn sessions_together_keep_at_most_half_the_budget() {
        let (budget, kept) = kept(16 << 20, 6 << 20);
        let (one, two) = (kept.session(), kept.session());
        let _a = one.charge(6 << 20, "PREPARE").unwrap();
        let refused = two.charge(3 << 20, "PREPARE").unwrap_err();
        assert!(
            refused.message.contains("memory-budget-bytes"),
            "{refused:?}"
        );
        let _b = two.charge(2 << 20, "PREPARE").unwrap();
        // Statements in flight hold the budget too: what they hold cannot be kept.
        let units = |bytes: usize| (bytes / UNIT) as u32;
        let _statement = budget.try_acquire_many(units(8 << 20)).unwrap();
        drop(_a);
        let _another = budget.try_acquire_many(units(6 << 20)).unwrap();
        let refused = two.charge(1, "SET @x").unwrap_err();
        assert!(
            refused.message.contains("statements in flight"),
            "{refused:?}"
        );
        assert_eq!(two.held(), 2 << 20);
    }
}
