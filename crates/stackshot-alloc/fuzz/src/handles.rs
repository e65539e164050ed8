//! The pools that hand out typed handles: `IndexPool` (`u8` and `u16` indices) and `FlagPool`.

use arbitrary::Arbitrary;
use stackshot_alloc::pool::{CheckError, FlagPool, Handle, Index, IndexPool, PoolError};

use crate::model::Live;

#[derive(Arbitrary, Debug)]
pub enum Op {
    Alloc(u32),
    /// Allocate until the pool is full and refuses.
    Fill(u32),
    /// Free a live handle.
    Free(u16),
    /// Free the handle of a slot freed lately: a double free, or (if the slot was handed out again) a stale
    /// handle, which `IndexPool` refuses by its generation and `FlagPool` (none) cannot tell from the new owner.
    FreeStale(u16),
    /// Free or get a handle made from raw parts: any index, this pool's id or another's.
    FreeRaw {
        index: u16,
        foreign: bool,
    },
    GetRaw {
        index: u16,
        foreign: bool,
    },
    /// Overwrite a live value through `get_mut`.
    Set(u16, u32),
    /// Free every value divisible by `2 + m % 5` with the pool's own sweep (`IndexPool`: `retain`, or its
    /// `sweep` walk).
    Sweep {
        m: u8,
        by_walk: bool,
    },
}

/// What the fuzzing needs of a handle pool of `u32`s.
pub trait HandlePool {
    type I: Index;
    const N: usize;
    /// Whether the pool counts generations (so its handles go stale when their slot is handed out again).
    const GENERATIONS: bool;
    fn id(&self) -> u8;
    fn alloc(&mut self, v: u32) -> Result<Handle<u32, Self::I>, u32>;
    fn free(&mut self, h: Handle<u32, Self::I>) -> Result<u32, PoolError>;
    fn get(&self, h: Handle<u32, Self::I>) -> Result<u32, PoolError>;
    fn get_mut(&mut self, h: Handle<u32, Self::I>) -> Result<&mut u32, PoolError>;
    fn len(&self) -> usize;
    fn check(&self) -> Result<(), CheckError>;
    /// The live `(slot, value)`s, sorted, by each way the pool has to walk them (which must agree).
    fn walks(&self) -> Vec<Vec<(usize, u32)>>;
    /// Frees the values `drop` picks by the pool's own sweep; false if it has none.
    fn sweep(&mut self, by_walk: bool, drop: &dyn Fn(u32) -> bool) -> bool;
}

impl<I: Index, const N: usize> HandlePool for IndexPool<u32, I, N> {
    type I = I;
    const N: usize = N;
    const GENERATIONS: bool = true;
    fn id(&self) -> u8 {
        IndexPool::id(self)
    }
    fn alloc(&mut self, v: u32) -> Result<Handle<u32, I>, u32> {
        IndexPool::alloc(self, v)
    }
    fn free(&mut self, h: Handle<u32, I>) -> Result<u32, PoolError> {
        IndexPool::free(self, h)
    }
    fn get(&self, h: Handle<u32, I>) -> Result<u32, PoolError> {
        IndexPool::get(self, h).copied()
    }
    fn get_mut(&mut self, h: Handle<u32, I>) -> Result<&mut u32, PoolError> {
        IndexPool::get_mut(self, h)
    }
    fn len(&self) -> usize {
        IndexPool::len(self)
    }
    fn check(&self) -> Result<(), CheckError> {
        IndexPool::check(self)
    }
    fn walks(&self) -> Vec<Vec<(usize, u32)>> {
        let by_iter = self.iter().map(|(h, &v)| (h.index().to_usize(), v)).collect();
        // A read-only walk with `sweep` (it needs `&mut`, so on a copy of the handles' view: a fresh pool
        // walked by value would change nothing).
        sorted(vec![by_iter])
    }
    fn sweep(&mut self, by_walk: bool, drop: &dyn Fn(u32) -> bool) -> bool {
        if by_walk {
            let mut walk = IndexPool::sweep(self);
            while let Some((h, v)) = walk.next() {
                if drop(*v) {
                    walk.free(h).expect("free of the object the sweep just met");
                }
            }
        } else {
            self.retain(|v| !drop(*v));
        }
        true
    }
}

impl<const N: usize> HandlePool for FlagPool<u32, N> {
    type I = u16;
    const N: usize = N;
    const GENERATIONS: bool = false;
    fn id(&self) -> u8 {
        FlagPool::id(self)
    }
    fn alloc(&mut self, v: u32) -> Result<Handle<u32, u16>, u32> {
        FlagPool::alloc(self, v)
    }
    fn free(&mut self, h: Handle<u32, u16>) -> Result<u32, PoolError> {
        FlagPool::free(self, h)
    }
    fn get(&self, h: Handle<u32, u16>) -> Result<u32, PoolError> {
        FlagPool::get(self, h).copied()
    }
    fn get_mut(&mut self, h: Handle<u32, u16>) -> Result<&mut u32, PoolError> {
        FlagPool::get_mut(self, h)
    }
    fn len(&self) -> usize {
        FlagPool::len(self)
    }
    fn check(&self) -> Result<(), CheckError> {
        FlagPool::check(self)
    }
    fn walks(&self) -> Vec<Vec<(usize, u32)>> {
        let mut all = Vec::new();
        self.for_each(|h, &v| all.push((h.index() as usize, v)));
        sorted(vec![all])
    }
    fn sweep(&mut self, _by_walk: bool, _drop: &dyn Fn(u32) -> bool) -> bool {
        false
    }
}

fn sorted(mut walks: Vec<Vec<(usize, u32)>>) -> Vec<Vec<(usize, u32)>> {
    for w in &mut walks {
        w.sort_unstable();
    }
    walks
}

pub struct Fuzzed<P> {
    pool: P,
    live: Live<u32>,
    /// Each slot's generation as the model counts it: its allocations, modulo 256 (0 without generations).
    generation: Vec<u8>,
    /// Handles freed lately, as `(slot, generation)`.
    freed: Vec<(usize, u8)>,
}

impl<P: HandlePool> Fuzzed<P> {
    pub fn new(pool: P) -> Self {
        Fuzzed { pool, live: Live::new(), generation: vec![0; P::I::MAX_SLOTS], freed: Vec::new() }
    }

    fn handle(&self, slot: usize, generation: u8, foreign: bool) -> Handle<u32, P::I> {
        let id = if foreign { self.pool.id().wrapping_add(1) } else { self.pool.id() };
        Handle::from_raw(P::I::from_usize(slot), generation, id)
    }

    /// The current handle of `slot` as the model knows it (live or not).
    fn current(&self, slot: usize, foreign: bool) -> Handle<u32, P::I> {
        self.handle(slot, self.generation[slot], foreign)
    }

    /// What a free (or get, with `freed` = `Dangling`) of `slot`'s handle of `generation` must return.
    fn expected(&self, slot: usize, generation: u8, foreign: bool, freed: PoolError) -> Result<u32, PoolError> {
        if slot >= P::N {
            Err(PoolError::OutOfRange)
        } else if foreign {
            Err(PoolError::ForeignHandle)
        } else if generation != self.generation[slot] {
            Err(PoolError::Stale)
        } else {
            self.live.get(slot).ok_or(freed)
        }
    }

    /// Allocates `v`; false if the pool was full (which the model must agree with).
    fn alloc(&mut self, v: u32) -> bool {
        match self.pool.alloc(v) {
            Ok(h) => {
                assert!(self.live.len() < P::N, "alloc from a full pool");
                assert_eq!(h.pool(), self.pool.id(), "handle of another pool");
                let slot = h.index().to_usize();
                assert!(slot < P::N, "slot {slot} out of range");
                if P::GENERATIONS {
                    self.generation[slot] = self.generation[slot].wrapping_add(1);
                }
                assert_eq!(h, self.current(slot, false), "the handle's generation differs from the model's");
                self.live.insert(slot, v);
                true
            }
            Err(back) => {
                assert_eq!(back, v, "a full pool must hand the value back");
                assert_eq!(self.live.len(), P::N, "alloc refused with free slots");
                false
            }
        }
    }

    fn free(&mut self, slot: usize, generation: u8, foreign: bool) {
        let want = self.expected(slot, generation, foreign, PoolError::DoubleFree);
        let got = self.pool.free(self.handle(slot, generation, foreign));
        assert_eq!(got, want, "free of slot {slot} generation {generation} (foreign: {foreign})");
        if want.is_ok() {
            self.live.remove(slot);
            if self.freed.len() == 64 {
                self.freed.remove(0);
            }
            self.freed.push((slot, generation));
        }
    }

    pub fn step(&mut self, op: Op) {
        match op {
            Op::Alloc(v) => {
                self.alloc(v);
            }
            Op::Fill(v) => while self.alloc(v) {},
            Op::Free(pick) => {
                if let Some(slot) = self.live.pick(pick) {
                    self.free(slot, self.generation[slot], false);
                }
            }
            Op::FreeStale(pick) => {
                if !self.freed.is_empty() {
                    let (slot, generation) = self.freed[pick as usize % self.freed.len()];
                    let want = self.expected(slot, generation, false, PoolError::Dangling);
                    assert_eq!(self.pool.get(self.handle(slot, generation, false)), want, "get of a freed handle");
                    self.free(slot, generation, false);
                }
            }
            Op::FreeRaw { index, foreign } => {
                let slot = index as usize % P::I::MAX_SLOTS;
                self.free(slot, self.generation[slot], foreign)
            }
            Op::GetRaw { index, foreign } => {
                let slot = index as usize % P::I::MAX_SLOTS;
                let want = self.expected(slot, self.generation[slot], foreign, PoolError::Dangling);
                assert_eq!(self.pool.get(self.current(slot, foreign)), want, "get of slot {slot}");
            }
            Op::Set(pick, v) => {
                if let Some(slot) = self.live.pick(pick) {
                    *self.pool.get_mut(self.current(slot, false)).expect("get_mut of a live slot") = v;
                    self.live.set(slot, v);
                }
            }
            Op::Sweep { m, by_walk } => {
                let m = 2 + m as u32 % 5;
                if self.pool.sweep(by_walk, &|v| v % m == 0) {
                    let gone: Vec<usize> = self.live.iter().filter(|&(_, v)| v % m == 0).map(|(s, _)| s).collect();
                    for slot in gone {
                        self.live.remove(slot);
                    }
                }
            }
        }
        self.verify();
    }

    fn verify(&self) {
        if let Err(e) = self.pool.check() {
            panic!("check: {e:?}");
        }
        assert_eq!(self.pool.len(), self.live.len(), "live count");
        let want: Vec<(usize, u32)> = self.live.iter().collect();
        for walk in self.pool.walks() {
            assert_eq!(walk, want, "live set");
        }
    }

    /// Frees everything; the pool must be empty and whole.
    pub fn finish(&mut self) {
        while let Some(slot) = self.live.pick(0) {
            self.free(slot, self.generation[slot], false);
        }
        self.verify();
    }
}
