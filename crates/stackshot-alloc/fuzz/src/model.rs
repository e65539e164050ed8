//! The model the pools' fuzzing shares: which slots are live and what each holds, and the slots freed lately
//! (whose old handles or pointers are stale).

use std::collections::BTreeMap;
use std::fmt::Debug;

/// How many freed slots are remembered for stale frees.
const STALE: usize = 16;

pub struct Live<V> {
    slots: BTreeMap<usize, V>,
    freed: Vec<usize>,
}

impl<V: Copy + Debug + PartialEq> Live<V> {
    pub fn new() -> Self {
        Live { slots: BTreeMap::new(), freed: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn get(&self, slot: usize) -> Option<V> {
        self.slots.get(&slot).copied()
    }

    /// Records `slot` handed out holding `v`; it must not be live already.
    pub fn insert(&mut self, slot: usize, v: V) {
        if let Some(old) = self.slots.insert(slot, v) {
            panic!("slot {slot} handed out while live (holding {old:?})");
        }
    }

    pub fn set(&mut self, slot: usize, v: V) {
        assert!(self.slots.insert(slot, v).is_some(), "slot {slot} set while free");
    }

    /// Records `slot` freed; returns what it held.
    pub fn remove(&mut self, slot: usize) -> V {
        let v = self.slots.remove(&slot).expect("freed slot was live");
        if self.freed.len() == STALE {
            self.freed.remove(0);
        }
        self.freed.push(slot);
        v
    }

    /// The live slot `pick` selects (modulo the live count), if any is live.
    pub fn pick(&self, pick: u16) -> Option<usize> {
        let n = self.slots.len();
        if n == 0 { None } else { self.slots.keys().nth(pick as usize % n).copied() }
    }

    /// A slot freed lately (it may be live again), if any.
    pub fn stale(&self, pick: u16) -> Option<usize> {
        let n = self.freed.len();
        if n == 0 { None } else { Some(self.freed[pick as usize % n]) }
    }

    pub fn iter(&self) -> impl Iterator<Item = (usize, V)> + '_ {
        self.slots.iter().map(|(&s, &v)| (s, v))
    }
}
