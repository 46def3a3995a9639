//! Which of a rule's data nodes a condition leaves: a bit per node, in one machine word for
//! the 64 nodes nearly every configuration stays within. Every routed read, UPDATE and
//! DELETE builds, intersects and joins a few of these; as a small vector of flags, each step
//! copied and walked every node.

/// A set of data nodes, by their index in the rule's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeSet {
    /// Bit `i` holds node `i`, for the first 64.
    first: u64,
    /// Bit `i % 64` of word `i / 64 - 1` holds node `i`, past the first 64: empty (and not
    /// allocated) for nearly every rule.
    rest: Vec<u64>,
    len: usize,
}

/// The low `n` bits (`n` ≤ 64).
fn low_bits(n: usize) -> u64 {
    match n {
        64.. => u64::MAX,
        n => (1 << n) - 1,
    }
}

impl NodeSet {
    /// All `len` nodes.
    pub(crate) fn all(len: usize) -> Self {
        let mut set = Self::none(len);
        set.fill(true);
        set
    }

    /// None of `len` nodes.
    pub(crate) fn none(len: usize) -> Self {
        NodeSet {
            first: 0,
            rest: vec![0; len.saturating_sub(64).div_ceil(64)],
            len,
        }
    }

    /// How many nodes the set is of (kept or not).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether node `i` is kept (`false` past the end).
    pub(crate) fn contains(&self, i: usize) -> bool {
        let word = match i {
            0..64 => self.first,
            _ => self.rest.get(i / 64 - 1).copied().unwrap_or(0),
        };
        word >> (i % 64) & 1 == 1
    }

    /// Keeps every node, or none.
    pub(crate) fn fill(&mut self, keep: bool) {
        if !keep {
            self.first = 0;
            self.rest.iter_mut().for_each(|w| *w = 0);
            return;
        }
        self.first = low_bits(self.len);
        let mut left = self.len.saturating_sub(64);
        for word in &mut self.rest {
            *word = low_bits(left);
            left = left.saturating_sub(64);
        }
    }

    /// Adds node `i` (nothing past the end).
    pub(crate) fn insert(&mut self, i: usize) {
        if i >= self.len {
            return;
        }
        let bit = 1 << (i % 64);
        match i {
            0..64 => self.first |= bit,
            _ => {
                if let Some(word) = self.rest.get_mut(i / 64 - 1) {
                    *word |= bit;
                }
            }
        }
    }

    /// Keeps only the nodes kept in `other` too.
    pub(crate) fn and(&mut self, other: &NodeSet) {
        self.first &= other.first;
        for (w, o) in self.rest.iter_mut().zip(&other.rest) {
            *w &= o;
        }
    }

    /// Adds the nodes kept in `other`.
    pub(crate) fn or(&mut self, other: &NodeSet) {
        self.first |= other.first;
        for (w, o) in self.rest.iter_mut().zip(&other.rest) {
            *w |= o;
        }
    }

    /// Keeps only the first 64 nodes whose bit `mask` sets (see `RemainderNodes`, which
    /// gives masks for rules of at most 64 nodes).
    pub(crate) fn and_mask(&mut self, mask: u64) {
        self.first &= mask;
        self.rest.iter_mut().for_each(|w| *w = 0);
    }

    /// Keeps only the kept nodes `keep` says yes to; asks it of kept nodes only.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let words = std::iter::once(&mut self.first).chain(&mut self.rest);
        for (at, word) in words.enumerate() {
            let mut rest = *word;
            while rest != 0 {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if !keep(at * 64 + bit) {
                    *word &= !(1 << bit);
                }
            }
        }
    }

    /// The kept nodes, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let words = std::iter::once(&self.first).chain(&self.rest);
        words.enumerate().flat_map(|(at, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    at * 64 + bit
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The set as the flags it stands for.
    fn flags(set: &NodeSet) -> Vec<bool> {
        (0..set.len()).map(|i| set.contains(i)).collect()
    }

    #[test]
    fn all_and_none_hold_exactly_their_nodes() {
        for len in [0, 1, 2, 63, 64, 65, 130] {
            assert_eq!(flags(&NodeSet::all(len)), vec![true; len], "{len}");
            assert_eq!(flags(&NodeSet::none(len)), vec![false; len], "{len}");
            assert_eq!(NodeSet::all(len).iter().count(), len);
            assert!(!NodeSet::all(len).contains(len));
        }
    }

    #[test]
    fn operations_match_the_flags_they_replace() {
        // Sets over several words, against vectors of flags doing the same.
        let len = 150;
        let pattern = |seed: usize| -> Vec<bool> { (0..len).map(|i| (i * seed) % 7 < 3).collect() };
        let set_of = |flags: &[bool]| {
            let mut set = NodeSet::none(flags.len());
            flags
                .iter()
                .enumerate()
                .filter(|(_, f)| **f)
                .for_each(|(i, _)| set.insert(i));
            set
        };
        for (a, b) in [(1, 3), (2, 5), (4, 4), (6, 1)] {
            let (fa, fb) = (pattern(a), pattern(b));
            let mut and = set_of(&fa);
            and.and(&set_of(&fb));
            let want: Vec<bool> = fa.iter().zip(&fb).map(|(x, y)| *x && *y).collect();
            assert_eq!(flags(&and), want);
            let mut or = set_of(&fa);
            or.or(&set_of(&fb));
            let want: Vec<bool> = fa.iter().zip(&fb).map(|(x, y)| *x || *y).collect();
            assert_eq!(flags(&or), want);
            let mut kept = set_of(&fa);
            kept.retain(|i| i % 3 != 0);
            let want: Vec<bool> = fa
                .iter()
                .enumerate()
                .map(|(i, x)| *x && i % 3 != 0)
                .collect();
            assert_eq!(flags(&kept), want);
            let listed: Vec<usize> = set_of(&fa).iter().collect();
            let want: Vec<usize> = (0..len).filter(|&i| fa[i]).collect();
            assert_eq!(listed, want);
        }
    }

    #[test]
    fn a_mask_keeps_the_first_word_only() {
        let mut set = NodeSet::all(100);
        set.and_mask(0b1010);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![1, 3]);
        let mut small = NodeSet::all(3);
        small.and_mask(u64::MAX);
        assert_eq!(flags(&small), vec![true; 3]);
    }

    #[test]
    fn retain_asks_only_of_kept_nodes() {
        let mut set = NodeSet::none(70);
        set.insert(2);
        set.insert(66);
        set.insert(70); // past the end: ignored
        let mut asked = Vec::new();
        set.retain(|i| {
            asked.push(i);
            i == 66
        });
        assert_eq!(asked, vec![2, 66]);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![66]);
    }
}
