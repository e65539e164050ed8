//! The tree-heap, `Heap`, over 4 KB (the game's AI heap): placement, errors and statistics against a model of
//! the live allocations, and the bytes of every live allocation kept intact.

use std::ptr::NonNull;

use arbitrary::Arbitrary;
use stackshot_alloc::heap::{Heap, HeapError, Stats};

use crate::model::Live;

const LEN: usize = 4096;

#[derive(Arbitrary, Debug)]
pub enum Op {
    /// `size`: below 128 when the top bit is clear (0 included), else up to past the capacity. `align`: by
    /// `align % 16`, 1 << 0..=13 (up to 8 KB: past 3 KB or so no longer placeable in the 4 KB region), 0, or 24.
    Alloc { size: u16, align: u8 },
    /// Free a live allocation.
    Free(u16),
    /// Free an address `offset` bytes into a live allocation's blocks (0: its start, a good free).
    FreeInside(u16, u8),
    /// Free an allocation freed lately: a double free, inside a newer allocation, or that allocation's start
    /// (which no heap without generations can tell from a good free).
    FreeStale(u16),
    /// Free any address from the region's start (header and map) to a little past its end.
    FreeRaw(u16),
    /// Free a pointer to memory the heap does not own.
    FreeForeign,
    /// Resize a live allocation in place to `size` bytes (read as for `Alloc`).
    Resize(u16, u16),
}

/// The heap's buffer: 8-aligned, so its managed blocks are its last `capacity()` bytes.
pub struct Region([u64; LEN / 8]);

impl Region {
    pub fn new() -> Self {
        Region([0; LEN / 8])
    }
}

pub struct Fuzzed<'a> {
    heap: Heap<'a>,
    /// The region's first byte, and the managed blocks' range, computed without asking the heap.
    base: *mut u8,
    lo: usize,
    hi: usize,
    /// Live allocations by address.
    live: Live<Block>,
    tag: u8,
    used: usize,
    peak: usize,
    failed: u32,
    bad_frees: u32,
    outside: u64,
}

/// A live allocation: the pointer the heap gave, the size asked and the byte it is filled with.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Block {
    ptr: NonNull<u8>,
    size: usize,
    tag: u8,
}

/// A request's size in whole 8-byte blocks, in bytes.
fn rounded(size: usize) -> usize {
    size.div_ceil(8) * 8
}

impl<'a> Fuzzed<'a> {
    pub fn new(region: &'a mut Region) -> Self {
        // SAFETY: the u64s are initialised, any byte is a valid u8, and the slice borrows the region exclusively.
        let bytes = unsafe { std::slice::from_raw_parts_mut(region.0.as_mut_ptr().cast::<u8>(), LEN) };
        let base = bytes.as_mut_ptr();
        let heap = Heap::new(bytes).expect("a 4 KB region");
        let hi = base as usize + LEN;
        let lo = hi - heap.capacity();
        Fuzzed { heap, base, lo, hi, live: Live::new(), tag: 0, used: 0, peak: 0, failed: 0, bad_frees: 0, outside: 0 }
    }

    /// The free gaps between live allocations (in bytes), as the heap's free runs must be.
    fn gaps(&self) -> Vec<usize> {
        let mut gaps = Vec::new();
        let mut at = self.lo;
        for (addr, b) in self.live.iter() {
            if addr > at {
                gaps.push(addr - at);
            }
            at = addr + rounded(b.size);
        }
        if self.hi > at {
            gaps.push(self.hi - at);
        }
        gaps
    }

    /// Whether `size` bytes aligned to `align` fit some free gap, placed at the gap's first aligned address
    /// (the heap places by each run's real address).
    fn fits(&self, size: usize, align: usize) -> bool {
        let mut at = self.lo;
        let mut ends = Vec::new();
        for (addr, b) in self.live.iter() {
            ends.push((at, addr));
            at = addr + rounded(b.size);
        }
        ends.push((at, self.hi));
        ends.iter().any(|&(start, end)| align_up(start, align).is_some_and(|a| a + rounded(size) <= end))
    }

    fn alloc(&mut self, size: usize, align: usize) {
        let cap = self.hi - self.lo;
        let ptr = match self.heap.alloc(size, align) {
            Ok(p) => p,
            Err(e) => {
                let allowed = match e {
                    HeapError::ZeroSize => size == 0,
                    HeapError::BadAlign => size != 0 && !align.is_power_of_two(),
                    // Larger than the heap, or more than even the empty heap can place.
                    HeapError::TooLarge => {
                        size > cap || align_up(self.lo, align).is_none_or(|a| a + rounded(size) > self.hi)
                    }
                    HeapError::OutOfMemory => !self.fits(size, align),
                    _ => false,
                };
                assert!(allowed, "alloc({size}, {align}) refused with {e:?}; free gaps {:?}", self.gaps());
                self.failed += 1;
                return;
            }
        };
        let addr = ptr.as_ptr() as usize;
        assert!(size != 0 && size <= cap && align.is_power_of_two(), "alloc({size}, {align}) served");
        assert!(
            addr >= self.lo && addr + rounded(size) <= self.hi,
            "alloc({size}, {align}) at {addr:#x} outside the heap"
        );
        assert_eq!(addr % align.max(8), 0, "alloc({size}, {align}) misaligned");
        for (other, b) in self.live.iter() {
            assert!(addr + rounded(size) <= other || other + rounded(b.size) <= addr, "overlaps {other:#x}");
        }
        self.tag = self.tag.wrapping_add(1);
        self.live.insert(addr, Block { ptr, size, tag: self.tag });
        // SAFETY: the heap handed out `size` bytes at `ptr`, inside the region and overlapping nothing live.
        unsafe { ptr.as_ptr().write_bytes(self.tag, size) };
        self.used += rounded(size);
        self.peak = self.peak.max(self.used);
    }

    fn free_at(&mut self, addr: usize) {
        let want = if addr < self.lo || addr >= self.hi {
            Err(HeapError::OutsideHeap)
        } else if !addr.is_multiple_of(8) {
            Err(HeapError::NotRunStart)
        } else if self.live.get(addr).is_some() {
            Ok(())
        } else if self.live.iter().any(|(a, b)| a < addr && addr < a + rounded(b.size)) {
            Err(HeapError::NotRunStart)
        } else {
            Err(HeapError::DoubleFree)
        };
        // The heap reads only its own memory, never through the pointer freed.
        let p = NonNull::new(self.base.wrapping_add(addr.wrapping_sub(self.base as usize))).unwrap();
        assert_eq!(self.heap.free(p), want, "free of {addr:#x}");
        match want {
            Ok(()) => self.used -= rounded(self.live.remove(addr).size),
            Err(_) => self.bad_frees += 1,
        }
    }

    /// Resizes the live allocation at `addr` in place: refused for 0 bytes, for more than the heap holds (as too
    /// large) and for growth the free gap behind it cannot hold; otherwise served, keeping the bytes it keeps.
    fn resize(&mut self, addr: usize, size: usize) {
        let b = self.live.get(addr).unwrap();
        let (old, new) = (rounded(b.size), rounded(size));
        let gap_end = self.live.iter().map(|(a, _)| a).find(|&a| a > addr).unwrap_or(self.hi);
        let want = if size == 0 {
            Err(HeapError::ZeroSize)
        } else if size > self.hi - self.lo {
            Err(HeapError::TooLarge)
        } else if addr + new > gap_end {
            Err(HeapError::OutOfMemory)
        } else {
            Ok(())
        };
        assert_eq!(self.heap.resize(b.ptr, size), want, "resize of {addr:#x} from {} to {size}", b.size);
        if want.is_ok() {
            if size > b.size {
                // SAFETY: the allocation now holds `size` bytes at `b.ptr` (checked against the gap above).
                unsafe { b.ptr.as_ptr().add(b.size).write_bytes(b.tag, size - b.size) };
            }
            self.live.set(addr, Block { size, ..b });
            self.used = self.used + new - old;
            self.peak = self.peak.max(self.used);
        }
    }

    pub fn step(&mut self, op: Op) {
        let size_of =
            |size: u16| if size & 0x8000 == 0 { size as usize % 128 } else { (size & 0x7FFF) as usize % 4200 };
        match op {
            Op::Alloc { size, align } => {
                let size = size_of(size);
                let align = match align % 16 {
                    14 => 0,
                    15 => 24,
                    a => 1 << a,
                };
                self.alloc(size, align);
            }
            Op::Free(pick) => {
                if let Some(addr) = self.live.pick(pick) {
                    self.free_at(addr);
                }
            }
            Op::FreeInside(pick, offset) => {
                if let Some(addr) = self.live.pick(pick) {
                    let size = self.live.get(addr).unwrap().size;
                    self.free_at(addr + offset as usize % rounded(size));
                }
            }
            Op::FreeStale(pick) => {
                if let Some(addr) = self.live.stale(pick) {
                    self.free_at(addr);
                }
            }
            Op::FreeRaw(offset) => self.free_at(self.base as usize + offset as usize % (LEN + 64)),
            Op::Resize(pick, size) => {
                if let Some(addr) = self.live.pick(pick) {
                    self.resize(addr, size_of(size));
                }
            }
            Op::FreeForeign => {
                let p = NonNull::from(&mut self.outside).cast::<u8>();
                assert_eq!(self.heap.free(p), Err(HeapError::OutsideHeap), "foreign free");
                self.bad_frees += 1;
            }
        }
        self.verify();
    }

    fn verify(&self) {
        if let Err(e) = self.heap.check() {
            panic!("check: {e:?}");
        }
        let gaps = self.gaps();
        let cap = self.hi - self.lo;
        let want = Stats {
            capacity: cap as u32,
            free_bytes: (cap - self.used) as u32,
            used_bytes: self.used as u32,
            largest_free: gaps.iter().copied().max().unwrap_or(0) as u32,
            free_runs: gaps.len() as u32,
            peak_used: self.peak as u32,
            failed_requests: self.failed,
            bad_frees: self.bad_frees,
        };
        assert_eq!(self.heap.stats(), want, "stats");
        for (addr, b) in self.live.iter() {
            // SAFETY: a live allocation of `b.size` bytes, which the heap handed out at `b.ptr`.
            let bytes = unsafe { std::slice::from_raw_parts(b.ptr.as_ptr(), b.size) };
            assert!(bytes.iter().all(|&x| x == b.tag), "live allocation at {addr:#x} changed");
        }
    }

    /// Frees everything; the heap must be one free run again.
    pub fn finish(&mut self) {
        while let Some(addr) = self.live.pick(0) {
            self.free_at(addr);
        }
        self.verify();
        assert_eq!(self.heap.stats().free_runs, 1, "not coalesced");
    }
}

/// `x` rounded up to a multiple of `align` (a power of two), or `None` past the address space.
fn align_up(x: usize, align: usize) -> Option<usize> {
    x.checked_add(align - 1).map(|y| y & !(align - 1))
}
