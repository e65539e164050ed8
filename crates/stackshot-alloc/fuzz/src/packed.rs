//! The packed index stacks, `Packed24` and `Packed18` (through `props::Packed`): bare `u32` slot indices.

use arbitrary::Arbitrary;
use stackshot_alloc::pool::PoolError;
use stackshot_alloc::pool::props::Packed;

use crate::model::Live;

#[derive(Arbitrary, Debug)]
pub enum Op {
    Alloc,
    /// Allocate until the stack is empty and refuses.
    Fill,
    /// Free a live index.
    Free(u16),
    /// Free an index freed lately (a double free, or a free of its new owner).
    FreeStale(u16),
    /// Free any index, mostly just past the capacity.
    FreeRaw(u32),
}

pub struct Fuzzed<P> {
    pool: P,
    live: Live<()>,
}

impl<P: Packed> Fuzzed<P> {
    pub fn new(pool: P) -> Self {
        Fuzzed { pool, live: Live::new() }
    }

    /// Allocates an index; false if all were live (which the model must agree with).
    fn alloc(&mut self) -> bool {
        match self.pool.alloc(()).ok() {
            Some(i) => {
                assert!(i < P::CAP, "index {i} out of range");
                self.live.insert(i as usize, ());
                true
            }
            None => {
                assert_eq!(self.live.len(), P::CAP as usize, "alloc refused with free slots");
                false
            }
        }
    }

    fn free(&mut self, i: u32) {
        let want = if i >= P::CAP {
            Err(PoolError::OutOfRange)
        } else if self.live.get(i as usize).is_some() {
            Ok(())
        } else {
            Err(PoolError::DoubleFree)
        };
        assert_eq!(self.pool.free(i), want, "free of {i}");
        if want.is_ok() {
            self.live.remove(i as usize);
        }
    }

    pub fn step(&mut self, op: Op) {
        match op {
            Op::Alloc => {
                self.alloc();
            }
            Op::Fill => while self.alloc() {},
            Op::Free(pick) => {
                if let Some(i) = self.live.pick(pick) {
                    self.free(i as u32);
                }
            }
            Op::FreeStale(pick) => {
                if let Some(i) = self.live.stale(pick) {
                    self.free(i as u32);
                }
            }
            // Mostly near the capacity, where an off-by-one would show; sometimes anywhere.
            Op::FreeRaw(raw) => self.free(if raw & 1 == 0 { (raw >> 1) % (2 * P::CAP) } else { raw }),
        }
        self.verify();
    }

    fn verify(&mut self) {
        if let Err(e) = self.pool.check() {
            panic!("check: {e:?}");
        }
        assert_eq!(self.pool.len(), self.live.len(), "live count");
        for i in 0..P::CAP + 2 {
            assert_eq!(self.pool.is_live(i), self.live.get(i as usize).is_some(), "is_live({i})");
        }
    }

    /// Frees everything; the stack must be empty and whole.
    pub fn finish(&mut self) {
        while let Some(i) = self.live.pick(0) {
            self.free(i as u32);
        }
        self.verify();
    }
}
