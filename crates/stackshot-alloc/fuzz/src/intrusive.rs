//! The intrusive pool, `IntrusivePool`: slots carved from a byte region, the free list threaded through them.

use std::ptr::NonNull;

use arbitrary::Arbitrary;
use stackshot_alloc::pool::{IntrusivePool, PoolError};

use crate::model::Live;

/// The pool's slot size and how far into the (64-aligned) region it starts, so its padding varies.
#[derive(Arbitrary, Debug)]
pub struct Layout {
    slot_size: u8,
    skip: u8,
}

#[derive(Arbitrary, Debug)]
pub enum Op {
    Alloc,
    /// Allocate until the pool is full and refuses.
    Fill,
    /// `alloc_aligned(1 << a)` for `a < 8` (up to 128, above the 64 served), else `alloc_aligned(a)`.
    AllocAligned(u8),
    /// Free a live slot.
    Free(u16),
    /// Free a slot freed lately (a double free, or a free of its new owner).
    FreeStale(u16),
    /// Free the address `offset` bytes from the first slot: before, inside (at a slot start or not) or after.
    FreeRaw(i16),
    /// Free a pointer to memory the pool does not own.
    FreeForeign,
}

#[repr(align(64))]
pub struct Region([u8; 1024]);

impl Region {
    pub fn new() -> Self {
        Region([0; 1024])
    }
}

pub struct Fuzzed<'a> {
    pool: IntrusivePool<'a>,
    /// The first slot, learned from the first allocation (slot 0 comes first).
    base: *mut u8,
    cap: usize,
    stride: usize,
    /// Each live slot's fill byte.
    live: Live<u8>,
    tag: u8,
    outside: u8,
}

impl<'a> Fuzzed<'a> {
    /// `None` when not one slot fits (a layout the fuzzer may pick).
    pub fn new(region: &'a mut Region, layout: &Layout) -> Option<Self> {
        let mut pool = IntrusivePool::new(&mut region.0[layout.skip as usize % 64..], layout.slot_size as usize)?;
        let first = pool.alloc().expect("alloc from a new pool");
        assert_eq!(pool.free(first), Ok(()));
        let (cap, stride) = (pool.capacity(), pool.stride());
        assert_eq!(first.as_ptr() as usize % stride.min(IntrusivePool::MAX_ALIGN), 0, "slot area misaligned");
        Some(Fuzzed { pool, base: first.as_ptr(), cap, stride, live: Live::new(), tag: 0, outside: 0 })
    }

    fn addr(&self, slot: usize) -> *mut u8 {
        self.base.wrapping_add(slot * self.stride)
    }

    /// Allocates a slot; false if the pool was full (which the model must agree with).
    fn alloc(&mut self) -> bool {
        let p = self.pool.alloc();
        self.took(p, self.stride.min(IntrusivePool::MAX_ALIGN), self.live.len() < self.cap)
    }

    /// Records the slot at `p` handed out and fills it; `None` (refused) must agree with `fits`, whether a
    /// free slot at a multiple of `align` exists. False if refused.
    fn took(&mut self, p: Option<NonNull<u8>>, align: usize, fits: bool) -> bool {
        let Some(p) = p else {
            assert!(!fits, "alloc (align {align}) refused with a fitting slot free");
            return false;
        };
        let offset = (p.as_ptr() as usize).wrapping_sub(self.base as usize);
        assert!(
            offset < self.cap * self.stride && offset.is_multiple_of(self.stride),
            "pointer at offset {offset} is no slot"
        );
        assert_eq!(p.as_ptr() as usize % align, 0, "slot not aligned to {align}");
        self.tag = self.tag.wrapping_add(1);
        self.live.insert(offset / self.stride, self.tag);
        // SAFETY: the slot is live and `stride` bytes long.
        unsafe { p.as_ptr().write_bytes(self.tag, self.stride) };
        true
    }

    /// Frees the address `offset` bytes from the first slot.
    fn free_at(&mut self, offset: isize) {
        let want = if offset < 0 || offset as usize >= self.cap * self.stride {
            Err(PoolError::ForeignHandle)
        } else if !(offset as usize).is_multiple_of(self.stride) {
            Err(PoolError::Misaligned)
        } else if self.live.get(offset as usize / self.stride).is_some() {
            Ok(())
        } else {
            Err(PoolError::DoubleFree)
        };
        let p = NonNull::new(self.base.wrapping_offset(offset)).unwrap();
        assert_eq!(self.pool.free(p), want, "free at offset {offset}");
        if want.is_ok() {
            self.live.remove(offset as usize / self.stride);
        }
    }

    pub fn step(&mut self, op: Op) {
        match op {
            Op::Alloc => {
                self.alloc();
            }
            Op::Fill => while self.alloc() {},
            Op::AllocAligned(a) => {
                let align = if a < 8 { 1 << a } else { a as usize };
                let p = self.pool.alloc_aligned(align);
                if !align.is_power_of_two() || align > IntrusivePool::MAX_ALIGN {
                    assert_eq!(p, None, "alloc_aligned({align}) served");
                } else {
                    let fits = (0..self.cap)
                        .any(|s| self.live.get(s).is_none() && (self.addr(s) as usize).is_multiple_of(align));
                    self.took(p, align, fits);
                }
            }
            Op::Free(pick) => {
                if let Some(slot) = self.live.pick(pick) {
                    self.free_at((slot * self.stride) as isize);
                }
            }
            Op::FreeStale(pick) => {
                if let Some(slot) = self.live.stale(pick) {
                    self.free_at((slot * self.stride) as isize);
                }
            }
            Op::FreeRaw(offset) => self.free_at(offset as isize),
            Op::FreeForeign => {
                let p = NonNull::from(&mut self.outside);
                assert_eq!(self.pool.free(p), Err(PoolError::ForeignHandle), "foreign free");
            }
        }
        self.verify();
    }

    fn verify(&mut self) {
        if let Err(e) = self.pool.check() {
            panic!("check: {e:?}");
        }
        assert_eq!(self.pool.len(), self.live.len(), "live count");
        for (slot, tag) in self.live.iter() {
            // SAFETY: the slot is live and `stride` bytes long.
            let bytes = unsafe { std::slice::from_raw_parts(self.addr(slot), self.stride) };
            assert!(bytes.iter().all(|&b| b == tag), "live slot {slot} changed: {bytes:?}");
        }
    }

    /// Frees everything; the pool must be empty and whole.
    pub fn finish(&mut self) {
        while let Some(slot) = self.live.pick(0) {
            self.free_at((slot * self.stride) as isize);
        }
        self.verify();
    }
}
