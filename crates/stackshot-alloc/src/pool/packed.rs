//! Packed index stacks for large pools: 24-bit entries as `u16` + `u8` (3 bytes), 18-bit entries as `u16` + 2
//! bits (2.25 bytes), plus one live bit a slot for the double-free check.
//!
//! They allocate bare `u32` slot indices; the caller keeps the objects (a big array in EWRAM, tiles in VRAM).
//! Capacity is `32 * G`: storage is in groups of 32 entries because stable const generics cannot size the
//! side tables as `N / 4` or `N / 32`. A new stack is all zeros (so a `static` is `.bss`, with nothing to copy
//! at boot): slots `fresh..` have never been allocated and are free without being on the stack, so allocate
//! pops the stack and, when it is empty, takes `fresh` and bumps it. Invariants PK1, PK2 (module docs), where
//! the free slots are `stack[..top]` plus `fresh..capacity`.

use super::{CheckError, Pool, PoolError};

macro_rules! packed_stack {
    ($(#[$doc:meta])* $name:ident, $hi:ty, $hi_zero:expr, $bits:expr, $get_hi:ident, $set_hi:ident) => {
        $(#[$doc])*
        pub struct $name<const G: usize> {
            lo: [[u16; 32]; G],
            hi: [$hi; G],
            live: [u32; G],
            top: u32,
            fresh: u32,
        }

        impl<const G: usize> $name<G> {
            /// The number of slots, `32 * G`.
            pub const CAPACITY: u32 = (G * 32) as u32;

            /// An empty stack; all zeros.
            pub const fn new() -> Self {
                const { assert!(G > 0 && G * 32 <= 1 << $bits, "capacity must be 32..=2^bits") };
                $name { lo: [[0; 32]; G], hi: [$hi_zero; G], live: [0; G], top: 0, fresh: 0 }
            }

            /// The number of live slots.
            pub const fn len(&self) -> usize {
                (self.fresh - self.top) as usize
            }

            /// The number of slots, `32 * G`.
            pub const fn capacity(&self) -> usize {
                G * 32
            }

            /// True when nothing is allocated.
            pub const fn is_empty(&self) -> bool {
                self.fresh == self.top
            }

            /// Free-stack entry `k`.
            ///
            /// # Safety
            /// `k < CAPACITY`.
            #[inline(always)]
            unsafe fn entry(&self, k: u32) -> u32 {
                let (g, e) = ((k >> 5) as usize, (k & 31) as usize);
                // SAFETY: `k < 32 * G` (caller), so `g < G` and `e < 32`.
                unsafe { *self.lo.get_unchecked(g).get_unchecked(e) as u32 | $get_hi(self.hi.get_unchecked(g), e) << 16 }
            }

            /// Sets free-stack entry `k` to slot `v`.
            ///
            /// # Safety
            /// `k < CAPACITY`.
            #[inline(always)]
            unsafe fn set_entry(&mut self, k: u32, v: u32) {
                let (g, e) = ((k >> 5) as usize, (k & 31) as usize);
                // SAFETY: `k < 32 * G` (caller), so `g < G` and `e < 32`.
                unsafe {
                    *self.lo.get_unchecked_mut(g).get_unchecked_mut(e) = v as u16;
                    $set_hi(self.hi.get_unchecked_mut(g), e, v >> 16);
                }
            }

            /// The live-bit word of slot `i` and its mask.
            ///
            /// # Safety
            /// `i < CAPACITY`.
            #[inline(always)]
            unsafe fn live_word(&mut self, i: u32) -> (&mut u32, u32) {
                // SAFETY: `i < 32 * G` (caller), so `i >> 5 < G`.
                (unsafe { self.live.get_unchecked_mut((i >> 5) as usize) }, 1 << (i & 31))
            }

            /// A free slot index (the most recently freed one first), or `None` when all are live.
            #[inline(always)]
            pub fn alloc(&mut self) -> Option<u32> {
                let i;
                if self.top > 0 {
                    self.top -= 1;
                    // SAFETY: `top < fresh <= CAPACITY` (PK1).
                    i = unsafe { self.entry(self.top) };
                } else if self.fresh < Self::CAPACITY {
                    i = self.fresh;
                    self.fresh += 1;
                } else {
                    return None;
                }
                // SAFETY: free-stack entries and `fresh` are `< CAPACITY` (PK2).
                let (w, m) = unsafe { self.live_word(i) };
                *w |= m;
                Some(i)
            }

            /// Frees slot `i`; `Err` (stack unchanged) if `i` is out of range or already free.
            #[inline(always)]
            pub fn free(&mut self, i: u32) -> Result<(), PoolError> {
                if i >= Self::CAPACITY {
                    return Err(PoolError::OutOfRange);
                }
                // SAFETY: `i < CAPACITY` was checked above.
                let (w, m) = unsafe { self.live_word(i) };
                if *w & m == 0 {
                    return Err(PoolError::DoubleFree);
                }
                *w &= !m;
                // SAFETY: slot `i` was live, so fewer than `CAPACITY` slots are free: `top < CAPACITY`.
                unsafe { self.set_entry(self.top, i) };
                self.top += 1;
                Ok(())
            }

            /// True if slot `i` is allocated.
            pub fn is_live(&self, i: u32) -> bool {
                i < Self::CAPACITY && self.live[(i >> 5) as usize] & 1 << (i & 31) != 0
            }

            fn flip(&mut self, i: u32) {
                self.live[(i >> 5) as usize] ^= 1 << (i & 31);
            }

            /// Clears the live bits that `check` set for free-stack entries `..k`.
            fn unmark(&mut self, k: u32) {
                let mut j = 0;
                while j < k {
                    // SAFETY: `check` verified entries `..k` are `< fresh <= CAPACITY`.
                    let e = unsafe { self.entry(j) };
                    self.flip(e);
                    j += 1;
                }
            }

            /// Verifies PK1 and PK2 (module docs). It temporarily sets the live bit of every free-stack entry
            /// to find duplicates without extra memory, hence `&mut`; the bits are restored before returning.
            pub fn check(&mut self) -> Result<(), CheckError> {
                if self.fresh > Self::CAPACITY || self.top > self.fresh {
                    return Err(CheckError::CountTooLarge);
                }
                let mut s = self.fresh;
                while s < Self::CAPACITY {
                    if self.is_live(s) {
                        return Err(CheckError::FreeButLive { slot: s as usize });
                    }
                    s += 1;
                }
                let mut k = 0;
                while k < self.top {
                    // SAFETY: `k < top <= fresh <= CAPACITY`.
                    let e = unsafe { self.entry(k) };
                    let err = if e >= self.fresh {
                        Some(CheckError::EntryOutOfRange { at: k as usize })
                    } else if self.is_live(e) {
                        Some(CheckError::FreeButLive { slot: e as usize })
                    } else {
                        None
                    };
                    if let Some(err) = err {
                        self.unmark(k);
                        return Err(err);
                    }
                    self.flip(e);
                    k += 1;
                }
                let mut leaked = None;
                let mut s = 0;
                while s < self.fresh && leaked.is_none() {
                    if !self.is_live(s) {
                        leaked = Some(CheckError::Leaked { slot: s as usize });
                    }
                    s += 1;
                }
                self.unmark(self.top);
                match leaked {
                    Some(err) => Err(err),
                    None => Ok(()),
                }
            }
        }

        impl<const G: usize> Pool for $name<G> {
            type Value = ();
            type Handle = u32;
            #[inline(always)]
            fn alloc(&mut self, _: ()) -> Result<u32, ()> {
                $name::alloc(self).ok_or(())
            }
            #[inline(always)]
            fn free(&mut self, i: u32) -> Result<(), PoolError> {
                $name::free(self, i)
            }
            fn len(&self) -> usize {
                $name::len(self)
            }
            fn capacity(&self) -> usize {
                G * 32
            }
            fn check(&mut self) -> Result<(), CheckError> {
                $name::check(self)
            }
        }

        impl<const G: usize> Default for $name<G> {
            fn default() -> Self {
                Self::new()
            }
        }
    };
}

packed_stack!(
    /// A stack of up to 2^24 free slot indices, 3 bytes an entry (`u16` low half, `u8` high byte) plus a live
    /// bit a slot: 3.125 bytes a slot against 4.125 for `u32` entries. Capacity `32 * G`.
    Packed24,
    [u8; 32],
    [0; 32],
    24,
    hi24,
    set_hi24
);

packed_stack!(
    /// A stack of up to 2^18 free slot indices, 2.25 bytes an entry (`u16` low half, 2 high bits in a side
    /// table of two words a group) plus a live bit a slot: 2.375 bytes a slot. Capacity `32 * G`.
    Packed18,
    [u32; 2],
    [0; 2],
    18,
    hi18,
    set_hi18
);

/// The high byte of group entry `e`.
///
/// # Safety
/// `e < 32`.
#[inline(always)]
unsafe fn hi24(hi: &[u8; 32], e: usize) -> u32 {
    // SAFETY: `e < 32` (caller).
    unsafe { *hi.get_unchecked(e) as u32 }
}

/// Sets the high byte of group entry `e` to `v`'s low byte.
///
/// # Safety
/// `e < 32`.
#[inline(always)]
unsafe fn set_hi24(hi: &mut [u8; 32], e: usize, v: u32) {
    // SAFETY: `e < 32` (caller).
    unsafe { *hi.get_unchecked_mut(e) = v as u8 }
}

/// The two high bits of group entry `e`: bits `2 * (e % 16)..` of word `e / 16`.
///
/// # Safety
/// `e < 32`.
#[inline(always)]
unsafe fn hi18(hi: &[u32; 2], e: usize) -> u32 {
    // SAFETY: `e < 32` (caller), so `e >> 4 < 2`.
    let w = unsafe { *hi.get_unchecked(e >> 4) };
    (w >> ((e & 15) * 2)) & 3
}

/// Sets the two high bits of group entry `e` to `v & 3`.
///
/// # Safety
/// `e < 32`.
#[inline(always)]
unsafe fn set_hi18(hi: &mut [u32; 2], e: usize, v: u32) {
    let sh = (e & 15) * 2;
    // SAFETY: `e < 32` (caller), so `e >> 4 < 2`.
    let w = unsafe { hi.get_unchecked_mut(e >> 4) };
    *w = (*w & !(3 << sh)) | (v & 3) << sh;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "2^18 slots take minutes under Miri; `errors` and the drivers cover the code")]
    fn wide_indices_round_trip() {
        // 2^18 slots: the top index needs all 18 bits; walk up to it, free a few and get them back LIFO.
        static mut BIG: Packed18<8192> = Packed18::new();
        // SAFETY: only this test touches BIG.
        let p = unsafe { &mut *core::ptr::addr_of_mut!(BIG) };
        let mut last = 0;
        while let Some(i) = p.alloc() {
            last = i;
        }
        assert_eq!(last, (1 << 18) - 1);
        for i in [0x3_FFFF, 0x2_0001, 0x1_0000, 5] {
            p.free(i).unwrap();
        }
        for i in [5, 0x1_0000, 0x2_0001, 0x3_FFFF] {
            assert_eq!(p.alloc(), Some(i));
        }
        assert_eq!(p.check(), Ok(()));

        // 2^17 slots: indices use the high byte.
        static mut WIDE: Packed24<4096> = Packed24::new();
        // SAFETY: only this test touches WIDE.
        let q = unsafe { &mut *core::ptr::addr_of_mut!(WIDE) };
        while q.alloc().is_some() {}
        for i in [0x1_FFFF, 0x1_0100, 0xFFFF] {
            q.free(i).unwrap();
        }
        for i in [0xFFFF, 0x1_0100, 0x1_FFFF] {
            assert_eq!(q.alloc(), Some(i));
        }
        assert_eq!(q.check(), Ok(()));
        // SAFETY: entry 0 < CAPACITY.
        unsafe { q.set_entry(0, 0xAB_CDEF) };
        // SAFETY: as above.
        assert_eq!(unsafe { q.entry(0) }, 0xAB_CDEF);
    }

    #[test]
    fn errors() {
        let mut p: Packed24<1> = Packed24::new();
        assert_eq!(p.free(0), Err(PoolError::DoubleFree));
        assert_eq!(p.free(32), Err(PoolError::OutOfRange));
        for _ in 0..32 {
            p.alloc().unwrap();
        }
        assert_eq!(p.alloc(), None);
        assert_eq!(p.free(7), Ok(()));
        assert_eq!(p.free(7), Err(PoolError::DoubleFree));
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn check_reports_corruption_and_restores() {
        let mut p: Packed18<1> = Packed18::new();
        for _ in 0..4 {
            p.alloc().unwrap();
        }
        p.free(1).unwrap();
        p.free(2).unwrap();
        let live = p.live;
        assert_eq!(p.check(), Ok(()));
        assert_eq!(p.live, live, "check restores the live bits");
        // SAFETY: entry 1 < CAPACITY.
        unsafe { p.set_entry(1, 1) }; // 1 listed twice, 2 lost
        assert_eq!(p.check(), Err(CheckError::FreeButLive { slot: 1 }));
        assert_eq!(p.live, live);
        // SAFETY: as above.
        unsafe { p.set_entry(1, 9) }; // a never-allocated slot on the stack
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 1 }));
        // SAFETY: as above.
        unsafe { p.set_entry(1, 2) };
        p.live[0] &= !1; // slot 0 marked free but not on the stack
        assert_eq!(p.check(), Err(CheckError::Leaked { slot: 0 }));
        p.live[0] |= 1 << 20;
        assert_eq!(p.check(), Err(CheckError::FreeButLive { slot: 20 }));
    }
}
