//! The pointer pool, `PtrPool`: slot addresses on its free stack, `NonNull<u32>`s handed out.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use arbitrary::Arbitrary;
use stackshot_alloc::pool::{PoolError, PtrPool};

use crate::model::Live;

const N: usize = 64;
const SLOT: usize = size_of::<u32>();

#[derive(Arbitrary, Debug)]
pub enum Op {
    Alloc(u32),
    /// Allocate until the pool is full and refuses.
    Fill(u32),
    /// Free a live pointer.
    Free(u16),
    /// Free a pointer freed lately (a double free, or a free of its new owner).
    FreeStale(u16),
    /// Free the address `offset` bytes from the first slot: before, inside (at a slot start or not) or after.
    FreeRaw(i16),
    /// Free a pointer to memory the pool does not own.
    FreeForeign,
    /// Overwrite a live value through its pointer.
    Set(u16, u32),
}

pub struct Slots([MaybeUninit<u32>; N]);

impl Slots {
    pub fn new() -> Self {
        Slots([MaybeUninit::uninit(); N])
    }
}

pub struct Fuzzed<'a> {
    pool: PtrPool<'a, u32, N>,
    /// The first slot, learned from the first allocation (slot 0 comes first).
    base: *mut u32,
    live: Live<u32>,
    outside: u32,
}

impl<'a> Fuzzed<'a> {
    pub fn new(slots: &'a mut Slots) -> Self {
        let mut pool = PtrPool::new(&mut slots.0);
        let first = pool.alloc(0).expect("alloc from a new pool");
        assert_eq!(pool.free(first), Ok(0));
        Fuzzed { pool, base: first.as_ptr(), live: Live::new(), outside: 0 }
    }

    fn slot_ptr(&self, slot: usize) -> NonNull<u32> {
        NonNull::new(self.base.wrapping_add(slot)).unwrap()
    }

    /// Allocates `v`; false if the pool was full (which the model must agree with).
    fn alloc(&mut self, v: u32) -> bool {
        match self.pool.alloc(v) {
            Ok(p) => {
                let offset = (p.as_ptr() as usize).wrapping_sub(self.base as usize);
                assert!(offset < N * SLOT && offset.is_multiple_of(SLOT), "pointer at offset {offset} is no slot");
                self.live.insert(offset / SLOT, v);
                true
            }
            Err(back) => {
                assert_eq!(back, v, "a full pool must hand the value back");
                assert_eq!(self.live.len(), N, "alloc refused with free slots");
                false
            }
        }
    }

    /// Frees the address `offset` bytes from the first slot.
    fn free_at(&mut self, offset: isize) {
        let want = if offset < 0 || offset as usize >= N * SLOT {
            Err(PoolError::ForeignHandle)
        } else if !(offset as usize).is_multiple_of(SLOT) {
            Err(PoolError::Misaligned)
        } else {
            self.live.get(offset as usize / SLOT).ok_or(PoolError::DoubleFree)
        };
        let p = NonNull::new(self.base.wrapping_byte_offset(offset)).unwrap();
        assert_eq!(self.pool.free(p), want, "free at offset {offset}");
        if want.is_ok() {
            self.live.remove(offset as usize / SLOT);
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
                    self.free_at((slot * SLOT) as isize);
                }
            }
            Op::FreeStale(pick) => {
                if let Some(slot) = self.live.stale(pick) {
                    self.free_at((slot * SLOT) as isize);
                }
            }
            Op::FreeRaw(offset) => self.free_at(offset as isize),
            Op::FreeForeign => {
                let p = NonNull::from(&mut self.outside);
                assert_eq!(self.pool.free(p), Err(PoolError::ForeignHandle), "foreign free");
            }
            Op::Set(pick, v) => {
                if let Some(slot) = self.live.pick(pick) {
                    // SAFETY: the slot is live: its pointer is valid until freed.
                    unsafe { self.slot_ptr(slot).write(v) };
                    self.live.set(slot, v);
                }
            }
        }
        self.verify();
    }

    fn verify(&mut self) {
        if let Err(e) = self.pool.check() {
            panic!("check: {e:?}");
        }
        assert_eq!(self.pool.len(), self.live.len(), "live count");
        for slot in 0..N {
            let p = self.slot_ptr(slot);
            let want = self.live.get(slot);
            assert_eq!(self.pool.is_live(p), want.is_some(), "is_live of slot {slot}");
            if let Some(v) = want {
                // SAFETY: the slot is live.
                assert_eq!(unsafe { p.read() }, v, "value of slot {slot}");
            }
        }
    }

    /// Frees everything; the pool must be empty and whole.
    pub fn finish(&mut self) {
        while let Some(slot) = self.live.pick(0) {
            self.free_at((slot * SLOT) as isize);
        }
        self.verify();
    }
}
