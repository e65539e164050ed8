//! Property drivers: run a [`Heap`] over a caller's buffer against a model of the live allocations and stop at
//! the first difference. `no_std` and allocation-free (the model is a fixed array of [`MAX_LIVE`] entries,
//! 2 KB on the GBA), so the same drivers run on the host and on the GBA's 4 KB IWRAM heap.
//!
//! After every operation the model checks:
//! - the result: a request succeeds exactly when the model says it fits (a gap between live allocations
//!   holds the rounded size from its first suitably aligned address), fails with `TooLarge` exactly when it
//!   would not fit the empty heap, and otherwise with the right [`HeapError`];
//!   frees of live allocations succeed, bad frees fail with the right error; a resize in place succeeds
//!   exactly when it shrinks or the gap behind the allocation holds the growth, and keeps the contents;
//! - returned memory lies in the managed blocks, is aligned, and overlaps no live allocation;
//! - every allocation is filled with a pattern that is verified when it is freed (catches the heap writing
//!   into user memory);
//! - [`Heap::check`] passes and the statistics match the model (used, peak, failed requests, bad frees).
//!
//! When the ops are done every live allocation is freed, and the heap must be one free run again.

use super::{Heap, HeapError, Invariant, Stats};
use crate::rng::Rng;
use core::ptr::NonNull;

/// Most live allocations a driver tracks; when full, drivers free before allocating.
pub const MAX_LIVE: usize = 256;

/// What a driver run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropReport {
    /// Operations performed, each followed by the full check (at least the `ops` asked for; the adversarial
    /// driver finishes its current round, and all drivers free what is left at the end).
    pub ops: u32,
    /// Allocations served.
    pub allocs: u32,
    /// Frees of live allocations.
    pub frees: u32,
    /// Resizes in place that succeeded (grown or shrunk).
    pub resizes: u32,
    /// Calls refused as the model expected (bad input, out of memory, bad frees).
    pub refused: u32,
    /// Most allocations live at once.
    pub max_live: u32,
    /// Most free runs at once.
    pub max_free_runs: u32,
    /// Highest tree seen (measured by the adversarial driver after each of its freeing phases).
    pub max_height: u32,
    /// Free runs at that moment.
    pub runs_at_max_height: u32,
    /// Statistics before the final clean-up.
    pub stats: Stats,
}

/// What differed from the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs, reason = "each variant's doc says what its named fields hold")]
pub enum Mismatch {
    /// `Heap::new` refused the buffer.
    Setup(HeapError),
    /// `Heap::check` found an invariant broken.
    Invariant(Invariant),
    /// An allocation's outcome (`Ok(())` = success) differs from the model's.
    Alloc { size: usize, align: usize, expected: Result<(), HeapError>, got: Result<(), HeapError> },
    /// A free's outcome differs from the model's.
    Free { addr: usize, expected: Result<(), HeapError>, got: Result<(), HeapError> },
    /// A resize's outcome differs from the model's.
    Resize { addr: usize, size: usize, expected: Result<(), HeapError>, got: Result<(), HeapError> },
    /// Returned memory reaches outside the managed blocks.
    OutsideHeap { addr: usize, size: usize },
    /// Returned memory is not aligned as asked.
    Misaligned { addr: usize, align: usize },
    /// Returned memory overlaps the live allocation at `other`.
    Overlap { addr: usize, other: usize },
    /// A live allocation's fill pattern changed at `offset`.
    Clobbered { addr: usize, offset: usize },
    /// The heap's statistics differ from the model's.
    Stats { expected: Stats, got: Stats },
    /// After freeing everything the heap is not a single free run.
    NotCoalesced(Stats),
}

/// The first difference, and the operation (0-based) at which it was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropFailure {
    /// The operation, counted from 0.
    pub step: u32,
    /// What differed.
    pub what: Mismatch,
}

/// Random sizes (1 byte up to the whole heap), alignments 1..512 (3 is refused), zero and too-large
/// requests, frees in random order, resizes in place (zero, smaller, larger, past the heap), double frees and
/// bad pointers.
pub fn random(buf: &mut [u8], seed: u32, ops: u32) -> Result<PropReport, PropFailure> {
    let mut m = Model::new(buf, seed)?;
    let cap = m.cap as u32;
    while m.step < ops {
        let r = m.rng.below(100);
        if (48..55).contains(&r) && m.n > 0 {
            let i = m.rng.below(m.n as u32) as usize;
            let size = match m.rng.below(16) {
                0 => 0,
                1 => cap as usize + 1,
                2..=8 => 1 + m.rng.below(m.live[i].len as u32 + 1) as usize,
                _ => m.live[i].len + 1 + m.rng.below(128) as usize,
            };
            m.resize(i, size)?;
        } else if r < 55 || m.n == 0 {
            if m.n == MAX_LIVE {
                let i = m.rng.below(m.n as u32) as usize;
                m.free(i)?;
                continue;
            }
            let size = match m.rng.below(20) {
                0..=11 => 1 + m.rng.below(64),
                12..=16 => 1 + m.rng.below(cap / 16 + 1),
                17 => 1 + m.rng.below(cap),
                18 => 0,
                _ => cap + 1 + m.rng.below(64),
            };
            let align = if m.rng.chance(2) { 3 } else { 1 << m.rng.below(10) };
            m.alloc(size as usize, align)?;
        } else if r < 92 {
            let i = m.rng.below(m.n as u32) as usize;
            let addr = m.live[i].ptr;
            m.free(i)?;
            if m.rng.chance(10) {
                m.bad_free(addr, HeapError::DoubleFree)?;
            }
        } else {
            m.random_bad_free()?;
        }
    }
    m.finish()
}

/// AI scratch memory: mostly 8–64 byte requests freed soon after (one of the four newest), some 100–400 byte
/// plans, a few 16–64 byte alignments, lists grown or cut in place (`Vec` through the adapter), and now and
/// then a bulk free of half or all live blocks (end of frame).
pub fn game_like(buf: &mut [u8], seed: u32, ops: u32) -> Result<PropReport, PropFailure> {
    let mut m = Model::new(buf, seed)?;
    while m.step < ops {
        let r = m.rng.below(100);
        if (95..100).contains(&r) && m.n > 0 {
            // The newest allocation grows by half (a vector's push past its capacity) or is cut to a quarter.
            let i = m.n - 1;
            let len = m.live[i].len;
            let size = if m.rng.chance(75) { len + len / 2 + 1 } else { len / 4 + 1 };
            m.resize(i, size)?;
        } else if r < 2 && m.n > 0 {
            let every_other = m.rng.chance(50);
            let mut i = m.n;
            while i > 0 {
                i -= 1;
                if !every_other || i % 2 == 0 {
                    m.free(i)?;
                }
            }
        } else if (r < 60 && m.n < MAX_LIVE) || m.n == 0 {
            let (size, align) = if r < 52 {
                let align = if m.rng.chance(10) { 16 << m.rng.below(3) } else { 4 << m.rng.below(2) };
                (8 + m.rng.below(57), align)
            } else {
                (100 + m.rng.below(301), if m.rng.chance(20) { 32 } else { 8 })
            };
            m.alloc(size as usize, align as usize)?;
        } else {
            let newest = if m.n < 4 { m.n } else { 4 };
            let i = m.n - 1 - m.rng.below(newest as u32) as usize;
            m.free(i)?;
        }
    }
    m.finish()
}

/// Rounds built to degenerate an unbalanced tree: fill the heap with 1-block allocations (or a staircase of
/// 1, 2, 3… blocks with 1-block separators), then free every other one in increasing (or decreasing) address
/// order, so free runs enter the tree in sorted key order; then requests that fit nowhere or exactly, then
/// free the rest in random order. Records the tree height after each freeing phase.
pub fn adversarial(buf: &mut [u8], seed: u32, ops: u32) -> Result<PropReport, PropFailure> {
    let mut m = Model::new(buf, seed)?;
    while m.step < ops {
        let variant = m.rng.below(3);
        // Fill.
        let mut stair = 1;
        loop {
            if m.n + 2 >= MAX_LIVE {
                // Out of slots: one allocation takes whatever is left, so the heap is full.
                let rest = m.heap.stats().largest_free as usize;
                if rest != 0 {
                    m.alloc(rest, 8)?;
                }
                break;
            }
            let size = if variant == 1 { stair * 8 } else { 1 + m.rng.below(8) as usize };
            let align = 1 << m.rng.below(4);
            if !m.alloc(size, align)? {
                break;
            }
            if variant == 1 {
                stair += 1;
                if !m.alloc(8, 8)? {
                    break;
                }
            }
        }
        // Free every other allocation in address order (for the staircase: the steps, smallest first).
        m.sort_by_address();
        if variant == 2 {
            let mut i = m.n;
            while i >= 2 {
                i -= 2;
                m.free(i)?;
            }
        } else {
            let mut i = 0;
            while i < m.n {
                m.free(i)?;
                i += 1;
            }
        }
        let h = m.heap.tree_height();
        if h > m.report.max_height {
            m.report.max_height = h;
            m.report.runs_at_max_height = m.heap.stats().free_runs;
        }
        // A request larger than every hole fails; one that fits a hole exactly succeeds.
        let largest = m.heap.stats().largest_free as usize;
        if largest != 0 && m.n < MAX_LIVE {
            m.alloc(largest + 1, 8)?;
            m.alloc(largest, 8)?;
        }
        while m.n > 0 {
            let i = m.rng.below(m.n as u32) as usize;
            m.free(i)?;
        }
    }
    m.finish()
}

#[derive(Clone, Copy)]
struct Live {
    ptr: NonNull<u8>,
    len: usize,
}

struct Model<'a> {
    heap: Heap<'a>,
    rng: Rng,
    /// Live allocations in allocation order (`live[..n]`).
    live: [Live; MAX_LIVE],
    n: usize,
    /// The managed blocks' address range and byte count, computed independently of the heap.
    lo: usize,
    hi: usize,
    cap: usize,
    salt: u8,
    used: usize,
    peak: usize,
    failed: u32,
    bad_frees: u32,
    step: u32,
    report: PropReport,
}

impl<'a> Model<'a> {
    fn new(buf: &'a mut [u8], seed: u32) -> Result<Self, PropFailure> {
        let start = buf.as_ptr() as usize;
        let skip = (8 - (start & 7)) & 7;
        let total = buf.len().saturating_sub(skip) / 8;
        // Header and map blocks: the smallest count that holds 4 bytes plus 2 bits per remaining block.
        let mut first = 1;
        while first < total && 4 + (total - first).div_ceil(4) > 8 * first {
            first += 1;
        }
        let heap = match Heap::new(buf) {
            Ok(h) => h,
            Err(e) => return Err(PropFailure { step: 0, what: Mismatch::Setup(e) }),
        };
        let mut rng = Rng::new(seed);
        let salt = rng.next_u32() as u8;
        let stats = heap.stats();
        Ok(Model {
            heap,
            rng,
            live: [Live { ptr: NonNull::dangling(), len: 0 }; MAX_LIVE],
            n: 0,
            lo: start + skip + first * 8,
            hi: start + skip + total * 8,
            cap: (total - first) * 8,
            salt,
            used: 0,
            peak: 0,
            failed: 0,
            bad_frees: 0,
            step: 0,
            report: PropReport {
                ops: 0,
                allocs: 0,
                frees: 0,
                resizes: 0,
                refused: 0,
                max_live: 0,
                max_free_runs: 0,
                max_height: 0,
                runs_at_max_height: 0,
                stats,
            },
        })
    }

    fn fail<T>(&self, what: Mismatch) -> Result<T, PropFailure> {
        Err(PropFailure { step: self.step, what })
    }

    fn fill(&self, addr: usize, i: usize) -> u8 {
        ((addr >> 3) as u8) ^ (i as u8) ^ ((i >> 8) as u8) ^ self.salt
    }

    /// Ends an operation: the full check and the model's statistics.
    fn verify(&mut self) -> Result<(), PropFailure> {
        if let Err(e) = self.heap.check() {
            return self.fail(Mismatch::Invariant(e));
        }
        let got = self.heap.stats();
        let expected = Stats {
            capacity: self.cap as u32,
            free_bytes: (self.cap - self.used) as u32,
            used_bytes: self.used as u32,
            peak_used: self.peak as u32,
            failed_requests: self.failed,
            bad_frees: self.bad_frees,
            ..got
        };
        if got != expected {
            return self.fail(Mismatch::Stats { expected, got });
        }
        self.report.max_free_runs = self.report.max_free_runs.max(got.free_runs);
        self.step += 1;
        Ok(())
    }

    /// Requests `size` bytes at `align`, checks the outcome; true if a block was handed out.
    fn alloc(&mut self, size: usize, align: usize) -> Result<bool, PropFailure> {
        let rounded = (size + 7) & !7;
        let expected = if size == 0 {
            Err(HeapError::ZeroSize)
        } else if !align.is_power_of_two() {
            Err(HeapError::BadAlign)
        } else if size > self.cap || align_up(self.lo, align) - self.lo + rounded > self.cap {
            Err(HeapError::TooLarge)
        } else if if align <= 8 {
            self.heap.stats().largest_free as usize >= rounded
        } else {
            self.fits(rounded, align)
        } {
            Ok(())
        } else {
            Err(HeapError::OutOfMemory)
        };
        let result = self.heap.alloc(size, align);
        let got = result.map(|_| ());
        if got != expected {
            return self.fail(Mismatch::Alloc { size, align, expected, got });
        }
        let ptr = match result {
            Ok(p) => p,
            Err(_) => {
                self.failed += 1;
                self.report.refused += 1;
                self.verify()?;
                return Ok(false);
            }
        };
        let addr = ptr.as_ptr() as usize;
        if addr < self.lo || addr + rounded > self.hi {
            return self.fail(Mismatch::OutsideHeap { addr, size });
        }
        if !addr.is_multiple_of(align) {
            return self.fail(Mismatch::Misaligned { addr, align });
        }
        for l in &self.live[..self.n] {
            let other = l.ptr.as_ptr() as usize;
            if addr < other + ((l.len + 7) & !7) && other < addr + rounded {
                return self.fail(Mismatch::Overlap { addr, other });
            }
        }
        for i in 0..size {
            // SAFETY: the heap handed out `size` bytes at ptr, checked above to lie in the buffer and overlap
            // no other live allocation.
            unsafe { *ptr.as_ptr().add(i) = self.fill(addr, i) };
        }
        self.live[self.n] = Live { ptr, len: size };
        self.n += 1;
        self.used += rounded;
        self.peak = self.peak.max(self.used);
        self.report.allocs += 1;
        self.report.max_live = self.report.max_live.max(self.n as u32);
        self.verify()?;
        Ok(true)
    }

    /// Whether `rounded` bytes aligned to `align` fit in a gap between live allocations (or the heap's ends),
    /// placed at the gap's first aligned address. Quadratic in the live count, for alignments above a block.
    fn fits(&self, rounded: usize, align: usize) -> bool {
        let live = &self.live[..self.n];
        let end = |l: &Live| l.ptr.as_ptr() as usize + ((l.len + 7) & !7);
        let gap_starts = core::iter::once(self.lo).chain(live.iter().map(end));
        gap_starts.into_iter().any(|start| {
            let next = live.iter().map(|l| l.ptr.as_ptr() as usize).filter(|&a| a >= start).min();
            let gap_end = next.unwrap_or(self.hi);
            let at = align_up(start, align);
            at.checked_add(rounded).is_some_and(|e| e <= gap_end)
        })
    }

    /// Verifies the fill of `live[i]`, frees it, and removes it keeping the order.
    fn free(&mut self, i: usize) -> Result<(), PropFailure> {
        let Live { ptr, len } = self.live[i];
        let addr = ptr.as_ptr() as usize;
        for j in 0..len {
            // SAFETY: live[i] is a live allocation of len bytes handed out by the heap.
            if unsafe { *ptr.as_ptr().add(j) } != self.fill(addr, j) {
                return self.fail(Mismatch::Clobbered { addr, offset: j });
            }
        }
        let got = self.heap.free(ptr);
        if got.is_err() {
            return self.fail(Mismatch::Free { addr, expected: Ok(()), got });
        }
        self.live.copy_within(i + 1..self.n, i);
        self.n -= 1;
        self.used -= (len + 7) & !7;
        self.report.frees += 1;
        self.verify()
    }

    /// Resizes `live[i]` in place to `size` bytes and checks the outcome against the model: refused for 0 bytes
    /// and for more than the heap holds; served when it does not grow in blocks, or when the free gap behind it
    /// (up to the next live allocation or the heap's end) holds the growth; the contents it keeps unchanged.
    fn resize(&mut self, i: usize, size: usize) -> Result<(), PropFailure> {
        let Live { ptr, len } = self.live[i];
        let addr = ptr.as_ptr() as usize;
        let (old, new) = ((len + 7) & !7, (size + 7) & !7);
        let end = addr + old;
        let live = &self.live[..self.n];
        let gap_end = live.iter().map(|l| l.ptr.as_ptr() as usize).filter(|&a| a >= end).min().unwrap_or(self.hi);
        let expected = if size == 0 {
            Err(HeapError::ZeroSize)
        } else if size > self.cap {
            Err(HeapError::TooLarge)
        } else if new > old && end + (new - old) > gap_end {
            Err(HeapError::OutOfMemory)
        } else {
            Ok(())
        };
        let got = self.heap.resize(ptr, size);
        if got != expected {
            return self.fail(Mismatch::Resize { addr, size, expected, got });
        }
        if got.is_err() {
            self.report.refused += 1;
            return self.verify();
        }
        let kept = len.min(size);
        for j in 0..kept {
            // SAFETY: the first `kept` bytes are still the allocation's after a resize in place.
            if unsafe { *ptr.as_ptr().add(j) } != self.fill(addr, j) {
                return self.fail(Mismatch::Clobbered { addr, offset: j });
            }
        }
        for j in kept..size {
            // SAFETY: the heap grew the allocation to `size` bytes in place: checked against the gap above.
            unsafe { *ptr.as_ptr().add(j) = self.fill(addr, j) };
        }
        self.live[i].len = size;
        self.used = self.used + new - old;
        self.peak = self.peak.max(self.used);
        self.report.resizes += 1;
        self.verify()
    }

    /// Frees `ptr`, or one time in four resizes it to a size from 0 to past the capacity: either must be refused
    /// with `expected`, and counted as a bad free.
    fn bad_free(&mut self, ptr: NonNull<u8>, expected: HeapError) -> Result<(), PropFailure> {
        let addr = ptr.as_ptr() as usize;
        if self.rng.below(4) == 0 {
            let size = self.rng.below(self.cap as u32 + 16) as usize;
            let got = self.heap.resize(ptr, size);
            if got != Err(expected) {
                return self.fail(Mismatch::Resize { addr, size, expected: Err(expected), got });
            }
        } else {
            let got = self.heap.free(ptr);
            if got != Err(expected) {
                return self.fail(Mismatch::Free { addr, expected: Err(expected), got });
            }
        }
        self.bad_frees += 1;
        self.report.refused += 1;
        self.verify()
    }

    /// A pointer below or past the managed blocks, or inside a live allocation (needs `n > 0`).
    fn random_bad_free(&mut self) -> Result<(), PropFailure> {
        let i = self.rng.below(self.n as u32) as usize;
        let Live { ptr, len } = self.live[i];
        let addr = ptr.as_ptr() as usize;
        let (target, expected) = match self.rng.below(4) {
            0 => (self.lo - 1 - self.rng.below(8) as usize, HeapError::OutsideHeap),
            1 => (self.hi + self.rng.below(64) as usize, HeapError::OutsideHeap),
            2 if len > 8 => {
                let blocks_after_first = ((len - 1) / 8) as u32;
                (addr + 8 * (1 + self.rng.below(blocks_after_first) as usize), HeapError::NotRunStart)
            }
            _ => (addr + 1 + self.rng.below(7) as usize, HeapError::NotRunStart),
        };
        // Never dereferenced; the offset from a live pointer keeps its provenance for the heap's reads.
        let bad = NonNull::new(ptr.as_ptr().wrapping_add(target.wrapping_sub(addr))).unwrap_or(ptr);
        self.bad_free(bad, expected)
    }

    fn sort_by_address(&mut self) {
        for i in 1..self.n {
            let mut j = i;
            while j > 0 && self.live[j - 1].ptr > self.live[j].ptr {
                self.live.swap(j - 1, j);
                j -= 1;
            }
        }
    }

    /// Frees everything left; the heap must be a single free run again.
    fn finish(mut self) -> Result<PropReport, PropFailure> {
        self.report.stats = self.heap.stats();
        while self.n > 0 {
            self.free(self.n - 1)?;
        }
        let s = self.heap.stats();
        if s.free_runs != 1 || s.free_bytes != s.capacity || s.largest_free != s.capacity {
            return self.fail(Mismatch::NotCoalesced(s));
        }
        self.report.ops = self.step;
        Ok(self.report)
    }
}

/// `x` rounded up to a multiple of `align` (a power of two); saturates instead of overflowing.
fn align_up(x: usize, align: usize) -> usize {
    x.checked_add(align - 1).map_or(usize::MAX, |y| y & !(align - 1))
}
