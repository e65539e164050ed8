//! The intrusive free list: each free slot of a raw byte region holds the `u16` index of the next free slot.

use core::marker::PhantomData;
use core::ptr::NonNull;

use super::{CheckError, PoolError};

/// The end of the free list; so at most 65,535 slots.
const NIL: u16 = u16::MAX;

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
    /// allocated first. `None` if not one slot fits.
    pub fn new(region: &'a mut [u8], slot_size: usize) -> Option<Self> {
        let stride = if slot_size < 2 { 2 } else { slot_size.next_power_of_two() };
        let align = if stride < Self::MAX_ALIGN { stride } else { Self::MAX_ALIGN };
        let (start, len) = (region.as_mut_ptr() as usize, region.len());
        // At most `len / (stride + 1/8)` slots; fewer if the alignment padding does not fit.
        let mut count = len * 8 / (8 * stride + 1);
        if count > NIL as usize {
            count = NIL as usize;
        }
        let offset = loop {
            if count == 0 {
                return None;
            }
            let offset = (start + count.div_ceil(8)).next_multiple_of(align) - start;
            if offset + count * stride <= len {
                break offset;
            }
            count -= 1;
        };
        let live = region.as_mut_ptr();
        // SAFETY: `offset + count * stride <= len`, so the slots lie in `region`.
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
            let next = if i + 1 < count as u32 { i as u16 + 1 } else { NIL };
            // SAFETY: `i < count`: a slot of the region, at least 2-aligned.
            unsafe { pool.set_link(i, next) };
            i += 1;
        }
        Some(pool)
    }

    /// The number of slots.
    pub const fn capacity(&self) -> u32 {
        self.count
    }

    /// The slot stride in bytes: `slot_size` rounded up to a power of two.
    pub const fn stride(&self) -> usize {
        1 << self.shift
    }

    /// The number of live slots.
    pub const fn len(&self) -> u32 {
        self.count - self.free
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

    /// A free slot (`stride()` bytes, aligned to `min(stride(), 64)`, contents unspecified), or `None`.
    #[inline(always)]
    pub fn alloc(&mut self) -> Option<NonNull<u8>> {
        if self.head == NIL {
            return None;
        }
        let i = self.head as u32;
        // SAFETY: list entries are `< count` (IN2) and free, so the slot holds a link; then it is unlinked.
        unsafe {
            self.head = self.link(i);
            Some(self.take(i))
        }
    }

    /// A free slot whose address is a multiple of `align` (a power of two up to 64), or `None` if there is
    /// none or `align` is not such a power of two. O(1) when `align <= min(stride(), 64)`, else O(free).
    pub fn alloc_aligned(&mut self, align: usize) -> Option<NonNull<u8>> {
        if align > Self::MAX_ALIGN || !align.is_power_of_two() {
            return None;
        }
        if align <= self.stride() {
            return self.alloc();
        }
        let mut prev = NIL;
        let mut cur = self.head;
        while cur != NIL {
            // SAFETY: list entries are `< count` (IN2) and free.
            unsafe {
                let next = self.link(cur as u32);
                if (self.slot(cur as u32) as usize).is_multiple_of(align) {
                    if prev == NIL {
                        self.head = next;
                    } else {
                        self.set_link(prev as u32, next);
                    }
                    return Some(self.take(cur as u32));
                }
                prev = cur;
                cur = next;
            }
        }
        None
    }

    /// Frees the slot at `p`; `Err` (pool unchanged) if `p` is outside this pool's slots, not a slot start,
    /// or already free. The slot's first two bytes are overwritten by the link.
    #[inline(always)]
    pub fn free(&mut self, p: NonNull<u8>) -> Result<(), PoolError> {
        let (a, b) = (p.as_ptr() as usize, self.slots as usize);
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
        while cur != NIL {
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
        unsafe { p.set_link(0, NIL) };
        assert_eq!(p.check(), Err(CheckError::ListLength));
        // SAFETY: as above.
        unsafe { p.set_link(0, 1) };
        assert_eq!(p.check(), Ok(()));
        p.free = 1;
        assert_eq!(p.check(), Err(CheckError::ListLength));
    }
}
