//! The pointer stack: the free list holds the free slots' addresses, so allocate returns a pointer directly.

use core::marker::PhantomData;
use core::mem::{MaybeUninit, size_of};
use core::ptr::NonNull;

use super::{CheckError, Pool, PoolError};

/// A pool of `N` slots of `T` in caller-provided storage, whose free stack holds slot addresses.
///
/// Allocation is a pop and a store with no index arithmetic on the way out; `free` turns the address back
/// into an index (range compare, then a division by `size_of::<T>()`: a shift when that is a power of two, a
/// multiply on ARM otherwise) to check a `bool` live flag. Bookkeeping: a pointer plus a flag, 5 bytes a
/// slot on the GBA. Live values are the caller's: dropping the pool does not drop them. Invariants PT1, PT2.
pub struct PtrPool<'a, T, const N: usize> {
    stack: [*mut T; N],
    live: [bool; N],
    top: usize,
    base: *mut T,
    _slots: PhantomData<&'a mut [MaybeUninit<T>; N]>,
}

impl<'a, T, const N: usize> PtrPool<'a, T, N> {
    /// A pool over `slots`, all free; slot 0 is allocated first.
    pub const fn new(slots: &'a mut [MaybeUninit<T>; N]) -> Self {
        let mut place = MaybeUninit::uninit();
        Self::new_in(&mut place, slots);
        // SAFETY: `new_in` has written every field.
        unsafe { place.assume_init() }
    }

    /// A pool over `slots`, all free, built in `place`: as [`new`](Self::new), but with no copy of the pool
    /// on the stack, which `new`'s value may take (a pointer and a flag a slot: 1.25 KB for 256 slots, a third
    /// of a GBA stack in IWRAM).
    pub const fn new_in<'p>(place: &'p mut MaybeUninit<Self>, slots: &'a mut [MaybeUninit<T>; N]) -> &'p mut Self {
        const { assert!(size_of::<T>() > 0, "PtrPool needs a sized T") };
        let base = slots.as_mut_ptr().cast::<T>();
        let p = place.as_mut_ptr();
        // SAFETY: `p` points to `place`, valid for writes and aligned; each field is written once through a raw
        // pointer to it, with no reference to the uninitialised pool. `N - 1 - k < N`: inside `slots`. All
        // fields are written before `place` is assumed initialised.
        unsafe {
            let stack = (&raw mut (*p).stack).cast::<*mut T>();
            let mut k = 0;
            while k < N {
                stack.add(k).write(base.add(N - 1 - k));
                k += 1;
            }
            (&raw mut (*p).live).write_bytes(0, 1);
            (&raw mut (*p).top).write(N);
            (&raw mut (*p).base).write(base);
            (&raw mut (*p)._slots).write(PhantomData);
            place.assume_init_mut()
        }
    }

    /// The number of live values.
    pub const fn len(&self) -> usize {
        N - self.top
    }

    /// True when nothing is allocated.
    pub const fn is_empty(&self) -> bool {
        self.top == N
    }

    /// The number of slots.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// The slot index of `p`, if it is the start of one of this pool's slots. Only `p`'s address is used.
    #[inline(always)]
    fn index_of(&self, p: *mut T) -> Result<usize, PoolError> {
        let (a, b) = (p.addr(), self.base.addr());
        if a < b || a - b >= N * size_of::<T>() {
            return Err(PoolError::ForeignHandle);
        }
        if (a - b) % size_of::<T>() != 0 {
            return Err(PoolError::Misaligned);
        }
        Ok((a - b) / size_of::<T>())
    }

    /// Moves `value` into a free slot and returns its address, or hands `value` back when full. The pointer is
    /// valid for reads and writes until it is passed to `free`.
    #[inline(always)]
    pub fn alloc(&mut self, value: T) -> Result<NonNull<T>, T> {
        if self.top == 0 {
            return Err(value);
        }
        self.top -= 1;
        // SAFETY: `top` was in `1..=N` (PT1).
        let p = unsafe { *self.stack.get_unchecked(self.top) };
        // Stack entries are slot starts (PT2), so `index_of` succeeds; `i < N`.
        let i = (p.addr() - self.base.addr()) / size_of::<T>();
        // SAFETY: `i < N`; `p` is a free slot inside the storage borrowed for `'a` (PT2), so no one else
        // holds it.
        unsafe {
            *self.live.get_unchecked_mut(i) = true;
            p.write(value);
            Ok(NonNull::new_unchecked(p))
        }
    }

    /// Frees the slot at `p` and returns its value; `Err` (pool unchanged) if `p` is outside this pool, not a
    /// slot start, or already free. Only `p`'s address is used: the value is read, and the slot later handed
    /// out, through the pool's own pointer to the slot (derived from the storage it borrowed).
    #[inline(always)]
    #[allow(clippy::question_mark, reason = "hot path: plain `match`, no `Try` trait calls from core")]
    pub fn free(&mut self, p: NonNull<T>) -> Result<T, PoolError> {
        let i = match self.index_of(p.as_ptr()) {
            Ok(i) => i,
            Err(e) => return Err(e),
        };
        // SAFETY: `index_of` returned `i < N`.
        let live = unsafe { self.live.get_unchecked_mut(i) };
        if !*live {
            return Err(PoolError::DoubleFree);
        }
        *live = false;
        // The pool's pointer to slot `i`: `p`'s address (slot `i`'s start, checked by `index_of`) with the
        // provenance of `base`, the borrowed storage. (The same as `base.add(i)`, without the multiply.)
        let slot = self.base.with_addr(p.addr().get());
        // SAFETY: slot `i` was live, so fewer than `N` slots are free (PT2): `top < N`. `slot` is slot `i` of
        // the borrowed storage. The slot holds the value written by `alloc` (the caller may have changed it
        // through the pointer `alloc` returned), read out once.
        unsafe {
            *self.stack.get_unchecked_mut(self.top) = slot;
            self.top += 1;
            Ok(slot.read())
        }
    }

    /// True if `p` is a live slot of this pool.
    pub fn is_live(&self, p: NonNull<T>) -> bool {
        match self.index_of(p.as_ptr()) {
            Ok(i) => self.live[i],
            Err(_) => false,
        }
    }

    /// Verifies PT1 and PT2 (module docs). Like `Packed24::check` it temporarily flags the free entries to
    /// find duplicates, and restores them.
    pub fn check(&mut self) -> Result<(), CheckError> {
        if self.top > N {
            return Err(CheckError::CountTooLarge);
        }
        let mut k = 0;
        let mut err = None;
        while k < self.top {
            match self.index_of(self.stack[k]) {
                Err(_) => err = Some(CheckError::EntryOutOfRange { at: k }),
                Ok(i) if self.live[i] => err = Some(CheckError::FreeButLive { slot: i }),
                Ok(i) => self.live[i] = true,
            }
            if err.is_some() {
                break;
            }
            k += 1;
        }
        if err.is_none() {
            let mut i = 0;
            while i < N && err.is_none() {
                if !self.live[i] {
                    err = Some(CheckError::Leaked { slot: i });
                }
                i += 1;
            }
        }
        // Unflag the entries flagged above: `..k` (all of them when no entry failed).
        let mut j = 0;
        while j < k {
            if let Ok(i) = self.index_of(self.stack[j]) {
                self.live[i] = false;
            }
            j += 1;
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl<T, const N: usize> Pool for PtrPool<'_, T, N> {
    type Value = T;
    type Handle = NonNull<T>;
    #[inline(always)]
    fn alloc(&mut self, value: T) -> Result<NonNull<T>, T> {
        PtrPool::alloc(self, value)
    }
    #[inline(always)]
    fn free(&mut self, p: NonNull<T>) -> Result<T, PoolError> {
        PtrPool::free(self, p)
    }
    fn len(&self) -> usize {
        PtrPool::len(self)
    }
    fn capacity(&self) -> usize {
        N
    }
    fn check(&mut self) -> Result<(), CheckError> {
        PtrPool::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_and_errors() {
        let mut slots = [const { MaybeUninit::<[u16; 3]>::uninit() }; 4];
        let mut p = PtrPool::new(&mut slots);
        let a = p.alloc([1, 2, 3]).unwrap();
        let b = p.alloc([4, 5, 6]).unwrap();
        // SAFETY: `b` is live and points at a `[u16; 3]`, 2-aligned.
        unsafe { (*b.as_ptr())[0] = 40 };
        assert_eq!(p.free(b), Ok([40, 5, 6]));
        assert_eq!(p.free(b), Err(PoolError::DoubleFree));
        // SAFETY: two bytes into slot 0, still inside the storage.
        let mid = unsafe { NonNull::new_unchecked(a.as_ptr().cast::<u8>().add(2).cast::<[u16; 3]>()) };
        assert_eq!(p.free(mid), Err(PoolError::Misaligned));
        let mut other = [1u16, 2, 3];
        assert_eq!(p.free(NonNull::from(&mut other)), Err(PoolError::ForeignHandle));
        assert_eq!(p.alloc([7, 8, 9]), Ok(b), "LIFO");
        assert!(p.alloc([0; 3]).is_ok() && p.alloc([0; 3]).is_ok());
        assert_eq!(p.alloc([0; 3]), Err([0; 3]), "full: the value comes back");
        assert_eq!(p.check(), Ok(()));
    }

    /// `free` works from the pool's own pointer to the slot, never the caller's: a pointer with the slot's
    /// address but no provenance (made in safe code) frees the slot, and the value is read, and the next
    /// value written, through the pool's pointer. Reading or writing through `fake` would be undefined
    /// behaviour, which only Miri shows: run this under `cargo miri test` (crate README).
    #[test]
    fn free_uses_the_pools_own_pointer() {
        let mut slots = [const { MaybeUninit::<u32>::uninit() }; 2];
        let mut p = PtrPool::new(&mut slots);
        let a = p.alloc(7).unwrap();
        let fake = NonNull::new(core::ptr::without_provenance_mut::<u32>(a.as_ptr().addr())).unwrap();
        assert_eq!(p.free(fake), Ok(7));
        assert_eq!(p.free(fake), Err(PoolError::DoubleFree));
        let b = p.alloc(8).unwrap();
        assert_eq!(b, a, "the same slot again");
        // SAFETY: `b` is live.
        unsafe { b.as_ptr().write(b.as_ptr().read() + 1) };
        assert_eq!(p.free(b), Ok(9));
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn a_pool_built_in_place_is_the_pool_new_builds() {
        // Over dirty memory: every field must be written.
        let mut place = MaybeUninit::<PtrPool<'_, u32, 5>>::uninit();
        // SAFETY: any byte pattern is a valid [u8; size_of::<PtrPool>()]; the pool is built over it below.
        unsafe { place.as_mut_ptr().cast::<u8>().write_bytes(0xA5, size_of::<PtrPool<'_, u32, 5>>()) };
        let mut slots = [const { MaybeUninit::<u32>::uninit() }; 5];
        let base = slots.as_mut_ptr().cast::<u32>();
        let p = PtrPool::new_in(&mut place, &mut slots);
        assert_eq!((p.len(), p.check()), (0, Ok(())));
        let mut slots2 = [const { MaybeUninit::<u32>::uninit() }; 5];
        let q = PtrPool::new(&mut slots2);
        assert_eq!((p.top, p.live, p.base), (q.top, q.live, base));
        // The same order of slots as `new`: slot 0 first, then up.
        for k in 0..5 {
            assert_eq!(p.alloc(k as u32).unwrap().as_ptr(), base.wrapping_add(k));
        }
        assert_eq!(p.alloc(9), Err(9));
    }

    #[test]
    fn check_reports_corruption() {
        let mut slots = [const { MaybeUninit::<u32>::uninit() }; 4];
        let mut p = PtrPool::new(&mut slots);
        let a = p.alloc(1).unwrap();
        p.live[0] = false;
        assert_eq!(p.check(), Err(CheckError::Leaked { slot: 0 }));
        p.live[0] = true;
        p.stack[0] = p.stack[1];
        assert_eq!(p.check(), Err(CheckError::FreeButLive { slot: 2 }));
        assert_eq!(p.live, [true, false, false, false], "flags restored");
        p.stack[0] = a.as_ptr().wrapping_add(9);
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 0 }));
    }
}
