//! The intrusive free list: each free slot of a raw byte region holds the `u16` index of the next free slot.

use core::marker::PhantomData;
use core::ptr::NonNull;

use super::{CheckError, Pool, PoolError};

/// The most slots: the free list ends with the link `count` (one past the last slot), which must fit a `u16`.
const MAX_SLOTS: usize = u16::MAX as usize;

/// Fixed-size slots carved from a borrowed byte region, with the free list threaded through the free slots.
///
/// Layout: the slot stride is `slot_size` rounded up to a power of two (at least 2, for the link), so `free`
/// turns an address into an index with a shift and a mask (the ARM7 has no divide). The region starts with
/// one live bit a slot (for the double-free check), then padding up to `min(stride, 64)`, then the slots:
/// every slot is therefore aligned to `min(stride, 64)`. `alloc` returns slots with that alignment;
/// `alloc_aligned(a)` for a larger power of two `a <= 64` walks the free list for a slot at a multiple of `a`
/// (O(free), unlinking from the middle), so choose `slot_size >= a` to keep it O(1).
///
/// Bookkeeping: no bytes a slot for the list, 1/8 byte for the live bit, plus the stride rounding and up to
/// 63 bytes of padding. Invariants IN1-IN3 (module docs).
pub struct IntrusivePool<'a> {
    slots: *mut u8,
    live: *mut u8,
    shift: u32,
    count: u32,
    head: u16,
    free: u32,
    _region: PhantomData<&'a mut [u8]>,
}

impl<'a> IntrusivePool<'a> {
    /// The largest alignment `alloc_aligned` serves, and the most the slot area is aligned to.
    pub const MAX_ALIGN: usize = 64;

    /// A pool of as many `slot_size`-byte slots as fit in `region` (up to 65,535), all free; slot 0 is
    /// allocated first. `None` if not one slot fits, including a `slot_size` whose stride would not fit in a
    /// `usize`: every size computation is checked, so no input panics or writes outside `region`.
    pub fn new(region: &'a mut [u8], slot_size: usize) -> Option<Self> {
        let stride = slot_size.max(2).checked_next_power_of_two()?;
        let align = if stride < Self::MAX_ALIGN { stride } else { Self::MAX_ALIGN };
        let (start, len) = (region.as_ptr().addr(), region.len());
        // Where the slot area starts if `count` slots need live bits: after the bits, aligned. `None` if the
        // bits, padding and slots do not fit in `len`.
        let slot_area = |count: usize| {
            let bits = count.div_ceil(8);
            // The padding from `start + bits` up to a multiple of `align`, in wrapping arithmetic: exact, as
            // `align` is a power of two.
            let offset = bits + (start.wrapping_add(bits).wrapping_neg() & (align - 1));
            match count.checked_mul(stride) {
                Some(slots) if slots <= len && offset <= len - slots => Some(offset),
                _ => None,
            }
        };
        // The most slots that fit, by bisection: fitting is monotone in the count (more slots need more bytes
        // and at least as much padding). `lo` fits (or is 0), `hi + 1` does not.
        let (mut lo, mut hi) = (0, if len / stride < MAX_SLOTS { len / stride } else { MAX_SLOTS });
        while lo < hi {
            let mid = hi - (hi - lo) / 2;
            if slot_area(mid).is_some() {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo == 0 {
            return None;
        }
        let (count, offset) = (lo, slot_area(lo)?);
        let live = region.as_mut_ptr();
        // SAFETY: `offset + count * stride <= len` (`slot_area`), so the slots lie in `region`.
        let slots = unsafe { live.add(offset) };
        let mut pool = IntrusivePool {
            slots,
            live,
            shift: stride.trailing_zeros(),
            count: count as u32,
            head: 0,
            free: count as u32,
            _region: PhantomData,
        };
        // SAFETY: the bit bytes `..count.div_ceil(8) <= offset` are in `region`.
        unsafe { live.write_bytes(0, count.div_ceil(8)) };
        let mut i = 0;
        while i < count as u32 {
            // SAFETY: `i < count`: a slot of the region, at least 2-aligned. The last slot links to `count`,
            // the end; `count <= MAX_SLOTS` fits the link.
            unsafe { pool.set_link(i, i as u16 + 1) };
            i += 1;
        }
        Some(pool)
    }

    /// The number of slots.
    pub const fn capacity(&self) -> usize {
        self.count as usize
    }

    /// The slot stride in bytes: `slot_size` rounded up to a power of two.
    pub const fn stride(&self) -> usize {
        1 << self.shift
    }

    /// The number of live slots.
    pub const fn len(&self) -> usize {
        (self.count - self.free) as usize
    }

    /// True when nothing is allocated.
    pub const fn is_empty(&self) -> bool {
        self.free == self.count
    }

    /// The address of slot `i`.
    ///
    /// # Safety
    /// `i < count`.
    #[inline(always)]
    unsafe fn slot(&self, i: u32) -> *mut u8 {
        // SAFETY: `i < count` (caller), and `new` placed `count` slots in the region.
        unsafe { self.slots.add((i as usize) << self.shift) }
    }

    /// The link stored in free slot `i`.
    ///
    /// # Safety
    /// `i < count`.
    #[inline(always)]
    unsafe fn link(&self, i: u32) -> u16 {
        // SAFETY: slot `i` is in the region (caller) and 2-aligned (stride and slot area are).
        unsafe { self.slot(i).cast::<u16>().read() }
    }

    /// Stores `next` in slot `i`.
    ///
    /// # Safety
    /// `i < count`, and slot `i` is free (not the caller's).
    #[inline(always)]
    unsafe fn set_link(&mut self, i: u32, next: u16) {
        // SAFETY: as in `link`; the slot is free, so the pool owns its bytes.
        unsafe { self.slot(i).cast::<u16>().write(next) }
    }

    /// The live-bit byte of slot `i` and its mask.
    ///
    /// # Safety
    /// `i < count`.
    #[inline(always)]
    unsafe fn live_byte(&self, i: u32) -> (*mut u8, u8) {
        // SAFETY: `new` reserved `count.div_ceil(8)` bit bytes, and `i >> 3 < that`.
        (unsafe { self.live.add((i >> 3) as usize) }, 1 << (i & 7))
    }

    fn is_live(&self, i: u32) -> bool {
        // SAFETY: callers pass `i < count`.
        unsafe {
            let (b, m) = self.live_byte(i);
            *b & m != 0
        }
    }

    fn flip(&mut self, i: u32) {
        // SAFETY: callers pass `i < count`.
        unsafe {
            let (b, m) = self.live_byte(i);
            *b ^= m;
        }
    }

    /// The link stored in slot `i`, after checking that the slot is free and its link is a slot of this pool
    /// or the end (`count`). `i` was reached by a link, and a write after free can have put anything in a
    /// link: following it could leave the region or hand out a live slot.
    ///
    /// # Safety
    /// `i < count`.
    #[inline(always)]
    unsafe fn next_free(&self, i: u32) -> Result<u16, Corrupt> {
        // `cold_path`: without it LLVM lays the fast path out through a taken branch (5 cycles in ARM code).
        if self.is_live(i) {
            core::hint::cold_path();
            return Err(Corrupt::LiveOnList { slot: i });
        }
        // SAFETY: `i < count` (caller), and the slot is free, so its first bytes are the pool's link.
        let next = unsafe { self.link(i) };
        if next as u32 > self.count {
            core::hint::cold_path();
            return Err(Corrupt::LinkOutside { slot: i, link: next });
        }
        Ok(next)
    }

    /// Marks free slot `i` live and returns its address.
    ///
    /// # Safety
    /// `i < count`, already unlinked from the free list.
    #[inline(always)]
    unsafe fn take(&mut self, i: u32) -> NonNull<u8> {
        self.free -= 1;
        // SAFETY: `i < count` (caller).
        unsafe {
            let (b, m) = self.live_byte(i);
            *b |= m;
            NonNull::new_unchecked(self.slot(i))
        }
    }

    /// A free slot (`stride()` bytes, aligned to `min(stride(), 64)`, contents unspecified), or `None` when
    /// the pool is full.
    ///
    /// A write after free can overwrite a free slot's link. `alloc` never follows a link outside the pool
    /// and never hands out a live slot: it refuses, with the pool unchanged so that `check()` names the
    /// broken link (`EntryOutOfRange`, `FreeButLive`). In debug builds the refusal is a panic naming the
    /// slot and the link (`IntrusivePool: free slot 0 links to slot 39, outside the pool of 15 slots: ...`);
    /// in release builds `alloc` returns `None`, each time it reaches the broken link.
    #[inline(always)]
    pub fn alloc(&mut self) -> Option<NonNull<u8>> {
        let i = self.head as u32;
        if i >= self.count {
            return None;
        }
        // SAFETY: `i < count`.
        match unsafe { self.next_free(i) } {
            Ok(next) => {
                self.head = next;
                // SAFETY: as above; unlinked just now.
                Some(unsafe { self.take(i) })
            }
            Err(e) => e.refuse(self.count),
        }
    }

    /// A free slot whose address is a multiple of `align` (a power of two up to 64), or `None` if there is
    /// none or `align` is not such a power of two. O(1) when `align <= min(stride(), 64)`, else O(free). A
    /// broken link met on the way is refused as in `alloc`, and so is a list longer than the free count (a
    /// loop).
    pub fn alloc_aligned(&mut self, align: usize) -> Option<NonNull<u8>> {
        if align > Self::MAX_ALIGN || !align.is_power_of_two() {
            return None;
        }
        if align <= self.stride() {
            return self.alloc();
        }
        let (mut prev, mut cur, mut steps) = (None, self.head, 0);
        // The head, and every link followed, is `<= count` (checked), and `count` is the end.
        while (cur as u32) < self.count {
            if steps == self.free {
                return Corrupt::Loop.refuse(self.count);
            }
            // SAFETY: `cur` is the head or a checked link, so `< count`.
            let next = match unsafe { self.next_free(cur as u32) } {
                Ok(next) => next,
                Err(e) => return e.refuse(self.count),
            };
            // SAFETY: as above.
            if unsafe { self.slot(cur as u32) }.addr().is_multiple_of(align) {
                // SAFETY: `prev` is the free slot before `cur` on the list, so it takes `cur`'s link; then
                // `cur` is unlinked.
                unsafe {
                    match prev {
                        None => self.head = next,
                        Some(prev) => self.set_link(prev, next),
                    }
                    return Some(self.take(cur as u32));
                }
            }
            prev = Some(cur as u32);
            cur = next;
            steps += 1;
        }
        None
    }

    /// Frees the slot at `p`; `Err` (pool unchanged) if `p` is outside this pool's slots, not a slot start,
    /// or already free. The slot's first two bytes are overwritten by the link.
    #[inline(always)]
    pub fn free(&mut self, p: NonNull<u8>) -> Result<(), PoolError> {
        let (a, b) = (p.as_ptr().addr(), self.slots.addr());
        if a < b || a - b >= (self.count as usize) << self.shift {
            return Err(PoolError::ForeignHandle);
        }
        if (a - b) & ((1 << self.shift) - 1) != 0 {
            return Err(PoolError::Misaligned);
        }
        let i = ((a - b) >> self.shift) as u32;
        // SAFETY: `i < count` by the range check.
        unsafe {
            let (byte, m) = self.live_byte(i);
            if *byte & m == 0 {
                return Err(PoolError::DoubleFree);
            }
            *byte &= !m;
            self.set_link(i, self.head);
        }
        self.head = i as u16;
        self.free += 1;
        Ok(())
    }

    /// Unflags the first `n` list entries, which `check` flagged.
    fn unmark(&mut self, n: u32) {
        let mut cur = self.head;
        let mut k = 0;
        while k < n {
            self.flip(cur as u32);
            // SAFETY: `check` visited these `n` entries and found each `< count`.
            cur = unsafe { self.link(cur as u32) };
            k += 1;
        }
    }

    /// Verifies IN1-IN3 (module docs), flagging listed slots temporarily (as `Packed24::check` does).
    pub fn check(&mut self) -> Result<(), CheckError> {
        if self.free > self.count {
            return Err(CheckError::CountTooLarge);
        }
        let mut cur = self.head;
        let mut k = 0;
        let mut err = None;
        while cur as u32 != self.count {
            if k == self.free {
                err = Some(CheckError::ListLength);
            } else if cur as u32 >= self.count {
                err = Some(CheckError::EntryOutOfRange { at: k as usize });
            } else if self.is_live(cur as u32) {
                err = Some(CheckError::FreeButLive { slot: cur as usize });
            }
            if err.is_some() {
                break;
            }
            self.flip(cur as u32);
            // SAFETY: `cur < count` was checked above.
            cur = unsafe { self.link(cur as u32) };
            k += 1;
        }
        if err.is_none() && k != self.free {
            err = Some(CheckError::ListLength);
        }
        let mut s = 0;
        while s < self.count && err.is_none() {
            if !self.is_live(s) {
                err = Some(CheckError::Leaked { slot: s as usize });
            }
            s += 1;
        }
        self.unmark(k);
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Pool for IntrusivePool<'_> {
    type Value = ();
    type Handle = NonNull<u8>;
    #[inline(always)]
    fn alloc(&mut self, _: ()) -> Result<NonNull<u8>, ()> {
        IntrusivePool::alloc(self).ok_or(())
    }
    #[inline(always)]
    fn free(&mut self, p: NonNull<u8>) -> Result<(), PoolError> {
        IntrusivePool::free(self, p)
    }
    fn len(&self) -> usize {
        IntrusivePool::len(self)
    }
    fn capacity(&self) -> usize {
        IntrusivePool::capacity(self)
    }
    fn check(&mut self) -> Result<(), CheckError> {
        IntrusivePool::check(self)
    }
}

/// A free list broken by a write after free, as `alloc` and `alloc_aligned` find it.
#[derive(Clone, Copy)]
enum Corrupt {
    /// Free slot `slot`'s link is neither a slot of the pool nor the end.
    LinkOutside { slot: u32, link: u16 },
    /// Slot `slot` is on the free list but live: a link that should name a free slot names it.
    LiveOnList { slot: u32 },
    /// The list goes on past the free count: a link closes a loop.
    Loop,
}

impl Corrupt {
    /// Refuses the allocation (the pool is unchanged): a panic naming the fault in debug builds, `None` in
    /// release builds.
    fn refuse(self, count: u32) -> Option<NonNull<u8>> {
        if cfg!(debug_assertions) {
            match self {
                Corrupt::LinkOutside { slot, link } => panic!(
                    "IntrusivePool: free slot {slot} links to slot {link}, outside the pool of {count} slots: \
                     the slot was written after it was freed"
                ),
                Corrupt::LiveOnList { slot } => panic!(
                    "IntrusivePool: slot {slot} is on the free list but live: a free slot's link was written \
                     after it was freed"
                ),
                Corrupt::Loop => {
                    panic!("IntrusivePool: the free list loops: a free slot's link was written after it was freed")
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(align(64))]
    struct Region([u8; 1024]);

    #[test]
    fn layout_alignment_and_errors() {
        let mut r = Region([0; 1024]);
        let mut p = IntrusivePool::new(&mut r.0[1..], 12).unwrap();
        assert_eq!(p.stride(), 16);
        // 1023 bytes from a 64-aligned address + 1: 8 live-bit bytes, 7 padding to 16, 63 slots of 16.
        assert_eq!(p.capacity(), 63);
        let a = p.alloc().unwrap();
        assert_eq!(a.as_ptr() as usize % 16, 0);
        let b = p.alloc_aligned(64).unwrap();
        assert_eq!(b.as_ptr() as usize % 64, 0);
        assert_ne!(a, b);
        assert_eq!(p.alloc_aligned(128), None);
        assert_eq!(p.alloc_aligned(24), None);
        assert_eq!(p.check(), Ok(()));
        assert_eq!(p.free(b), Ok(()));
        assert_eq!(p.free(b), Err(PoolError::DoubleFree));
        // SAFETY: 4 bytes into slot `a`, inside the region.
        assert_eq!(p.free(unsafe { a.add(4) }), Err(PoolError::Misaligned));
        let mut x = 0u8;
        assert_eq!(p.free(NonNull::from(&mut x)), Err(PoolError::ForeignHandle));
        assert_eq!(p.alloc(), Some(b), "LIFO");
        assert_eq!(p.check(), Ok(()));
        let mut n = 2;
        while p.alloc().is_some() {
            n += 1;
        }
        assert_eq!(n, p.capacity());
        assert!(IntrusivePool::new(&mut [0u8; 2], 2).is_none());
    }

    /// Slot sizes whose stride times the count, or `8 * stride + 1`, overflow `usize` (`1 << 29` on the GBA,
    /// `1 << 61` on a 64-bit host), or whose stride does not exist, give `None`: no panic, no write.
    #[test]
    fn new_refuses_huge_slots_without_overflowing() {
        let mut r = Region([0; 1024]);
        let huge = [1 << (usize::BITS - 3), 1 << (usize::BITS - 2), (1 << (usize::BITS - 1)) + 1, usize::MAX, 1024];
        for slot_size in huge {
            assert!(IntrusivePool::new(&mut r.0, slot_size).is_none(), "slot size {slot_size:#x}");
        }
        assert_eq!(r.0, [0; 1024], "nothing written");
        assert!(IntrusivePool::new(&mut [], 2).is_none());
        // The largest slot that fits: 1 live-bit byte, padding to 64, then 512 bytes.
        assert_eq!(IntrusivePool::new(&mut r.0[..64 + 512], 512).map(|p| p.capacity()), Some(1));
        assert!(IntrusivePool::new(&mut r.0[..64 + 511], 512).is_none());
    }

    /// A 15-slot pool of 16-byte slots in the first 256 bytes of `r`, with slots `..taken` allocated, then
    /// the last of them freed and its link overwritten with `link`: a write after free, the caller's bug.
    fn with_broken_link(r: &mut Region, taken: u32, link: u16) -> IntrusivePool<'_> {
        let mut p = IntrusivePool::new(&mut r.0[..256], 16).unwrap();
        assert_eq!(p.capacity(), 15);
        for _ in 0..taken {
            p.alloc().unwrap();
        }
        // SAFETY: `taken - 1 < count`.
        let last = unsafe { p.slot(taken - 1) };
        p.free(NonNull::new(last).unwrap()).unwrap();
        // SAFETY: the slot is in the region; writing to it after `free` is the bug being simulated.
        unsafe { last.cast::<u16>().write(link) };
        p
    }

    /// A write after free over a free slot's link makes `alloc` refuse (a panic naming the fault in debug
    /// builds, `None` in release, with the pool unchanged for `check()` to report) instead of handing out a
    /// pointer outside the region. Slot 39 would be 640 bytes past slot 0, outside the 256-byte region (but
    /// inside `r`, so a pool that followed the link would not crash the test).
    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "IntrusivePool: free slot 0 links to slot 39"))]
    fn a_write_after_free_never_hands_out_a_slot_outside_the_region() {
        let mut r = Region([0; 1024]);
        let mut p = with_broken_link(&mut r, 1, 39);
        assert_eq!(p.alloc(), None, "slot 0's link, 39, is outside the pool");
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 1 }));
        assert_eq!(p.len(), 0, "unchanged");
    }

    /// The same write after free met by `alloc_aligned`'s walk of the free list: slot 4 is not 64-aligned,
    /// so the walk reads its link, which would take it to slot 39 (64-aligned).
    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "IntrusivePool: free slot 4 links to slot 39"))]
    fn a_write_after_free_stops_the_aligned_walk() {
        let mut r = Region([0; 1024]);
        let mut p = with_broken_link(&mut r, 5, 39);
        assert_eq!(p.alloc_aligned(64), None);
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 1 }));
    }

    /// A link that closes a loop of free slots (slot 4 to itself) would keep `alloc_aligned` walking
    /// forever: it stops after as many links as there are free slots.
    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "IntrusivePool: the free list loops"))]
    fn a_loop_in_the_free_list_stops_the_aligned_walk() {
        let mut r = Region([0; 1024]);
        let mut p = with_broken_link(&mut r, 5, 4);
        assert_eq!(p.alloc_aligned(64), None);
        assert_eq!(p.check(), Err(CheckError::FreeButLive { slot: 4 }));
    }

    /// `new` fits the most slots the layout allows: live bits, padding to `min(stride, 64)`, slots.
    #[test]
    fn new_fits_the_most_slots() {
        let mut r = Region([0; 1024]);
        let lens = if cfg!(miri) { 0..=80 } else { 0..=300 };
        for size in [1_usize, 2, 3, 5, 8, 16, 33, 64, 100, 128] {
            let stride = size.max(2).next_power_of_two();
            for skip in [0, 1, 2, 7, 31, 63] {
                for len in lens.clone() {
                    let start = r.0.as_ptr().addr() + skip;
                    let fits = |c: usize| {
                        let bits_end = start + c.div_ceil(8);
                        bits_end.next_multiple_of(stride.min(64)) + c * stride <= start + len
                    };
                    let mut want = 0;
                    while fits(want + 1) {
                        want += 1;
                    }
                    let got = IntrusivePool::new(&mut r.0[skip..skip + len], size).map_or(0, |p| p.capacity());
                    assert_eq!(got, want, "slot size {size}, {len} bytes at +{skip}");
                }
            }
        }
    }

    /// A link that names a live slot (free slot 1's link names slot 0) would hand that slot out a second
    /// time: `alloc` refuses it too.
    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "IntrusivePool: slot 0 is on the free list but live"))]
    fn a_link_to_a_live_slot_is_refused() {
        let mut r = Region([0; 1024]);
        let mut p = with_broken_link(&mut r, 2, 0);
        assert!(p.alloc().is_some(), "slot 1 itself is free");
        assert_eq!(p.alloc(), None, "slot 0 is live");
        assert_eq!(p.check(), Err(CheckError::FreeButLive { slot: 0 }));
    }

    #[test]
    fn check_reports_corruption() {
        let mut r = Region([0; 1024]);
        let mut p = IntrusivePool::new(&mut r.0[..64 + 2 * 64], 64).unwrap();
        assert_eq!(p.capacity(), 2);
        // SAFETY: slot 0 is free.
        unsafe { p.set_link(0, 0) }; // a loop
        assert_eq!(p.check(), Err(CheckError::FreeButLive { slot: 0 }));
        // SAFETY: as above.
        unsafe { p.set_link(0, 7) };
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 1 }));
        // SAFETY: as above.
        unsafe { p.set_link(0, 2) }; // the end
        assert_eq!(p.check(), Err(CheckError::ListLength));
        // SAFETY: as above.
        unsafe { p.set_link(0, 1) };
        assert_eq!(p.check(), Ok(()));
        p.free = 1;
        assert_eq!(p.check(), Err(CheckError::ListLength));
    }
}
