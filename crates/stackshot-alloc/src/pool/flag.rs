//! The flag-loop pool: a `bool` a slot, and allocate scans for the first clear one. The baseline the stack pools
//! are measured against: O(N) allocate and iterate, O(1) free.

use core::mem::MaybeUninit;

use super::{CheckError, Handle, Pool, PoolError};

/// A pool of up to `N <= 65,536` values of `T` with `u16` handles, allocated by scanning a flag array.
///
/// Bookkeeping: one `bool` a slot (a bitset would be 1/8 byte but needs a second const parameter); the flag
/// is also the double-free check. Invariant FL1 (module docs).
pub struct FlagPool<T, const N: usize> {
    slots: [MaybeUninit<T>; N],
    used: [bool; N],
    live: usize,
    id: u8,
}

impl<T, const N: usize> FlagPool<T, N> {
    /// An empty pool whose handles carry `id`.
    pub const fn new(id: u8) -> Self {
        const { assert!(N > 0 && N <= 65_536, "FlagPool: N must be 1..=65536") };
        FlagPool { slots: [const { MaybeUninit::uninit() }; N], used: [false; N], live: 0, id }
    }

    /// This pool's id, carried by its handles.
    pub const fn id(&self) -> u8 {
        self.id
    }

    /// The number of live values.
    pub const fn len(&self) -> usize {
        self.live
    }

    /// The number of slots.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// True when nothing is allocated.
    pub const fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Stores `value` in the lowest free slot, or hands `value` back when full. Its handles have no
    /// generation (always 0): the baseline does not catch stale handles.
    #[inline(always)]
    pub fn alloc(&mut self, value: T) -> Result<Handle<T, u16>, T> {
        let mut i = 0;
        while i < N {
            // SAFETY: `i < N`.
            let used = unsafe { self.used.get_unchecked_mut(i) };
            if !*used {
                *used = true;
                self.live += 1;
                // SAFETY: `i < N`.
                unsafe { self.slots.get_unchecked_mut(i) }.write(value);
                return Ok(Handle::from_raw(i as u16, 0, self.id));
            }
            i += 1;
        }
        Err(value)
    }

    #[inline(always)]
    fn live_index(&self, h: Handle<T, u16>, freed: PoolError) -> Result<usize, PoolError> {
        let i = h.index() as usize;
        if i >= N {
            return Err(PoolError::OutOfRange);
        }
        if h.pool() != self.id {
            return Err(PoolError::ForeignHandle);
        }
        // SAFETY: `i < N` was checked above.
        if !unsafe { *self.used.get_unchecked(i) } {
            return Err(freed);
        }
        Ok(i)
    }

    /// Frees `h`'s slot and returns its value; `Err` (pool unchanged) as for `IndexPool::free`.
    #[inline(always)]
    #[allow(clippy::question_mark, reason = "hot path: plain `match`, no `Try` trait calls from core")]
    pub fn free(&mut self, h: Handle<T, u16>) -> Result<T, PoolError> {
        let i = match self.live_index(h, PoolError::DoubleFree) {
            Ok(i) => i,
            Err(e) => return Err(e),
        };
        self.live -= 1;
        // SAFETY: `i < N`, and slot `i` was flagged, so initialised (FL1); unflagged, it is not read again.
        unsafe {
            *self.used.get_unchecked_mut(i) = false;
            Ok(self.slots.get_unchecked(i).assume_init_read())
        }
    }

    /// The value of live handle `h`; `Err(Dangling)` if its slot is free.
    #[inline(always)]
    pub fn get(&self, h: Handle<T, u16>) -> Result<&T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and flagged, so initialised (FL1).
            Ok(i) => Ok(unsafe { self.slots.get_unchecked(i).assume_init_ref() }),
            Err(e) => Err(e),
        }
    }

    /// The value of live handle `h`, mutably; `Err(Dangling)` if its slot is free.
    #[inline(always)]
    pub fn get_mut(&mut self, h: Handle<T, u16>) -> Result<&mut T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and flagged, so initialised (FL1).
            Ok(i) => Ok(unsafe { self.slots.get_unchecked_mut(i).assume_init_mut() }),
            Err(e) => Err(e),
        }
    }

    /// Calls `f` on every live value with its handle, scanning all `N` flags.
    pub fn for_each(&self, mut f: impl FnMut(Handle<T, u16>, &T)) {
        let mut i = 0;
        while i < N {
            if self.used[i] {
                // SAFETY: flagged, so initialised (FL1).
                f(Handle::from_raw(i as u16, 0, self.id), unsafe { self.slots[i].assume_init_ref() });
            }
            i += 1;
        }
    }

    /// Verifies FL1 (module docs).
    pub fn check(&self) -> Result<(), CheckError> {
        let mut n = 0;
        let mut i = 0;
        while i < N {
            n += self.used[i] as usize;
            i += 1;
        }
        if n != self.live {
            return Err(CheckError::CountMismatch);
        }
        Ok(())
    }
}

impl<T, const N: usize> Pool for FlagPool<T, N> {
    type Value = T;
    type Handle = Handle<T, u16>;
    #[inline(always)]
    fn alloc(&mut self, value: T) -> Result<Self::Handle, T> {
        FlagPool::alloc(self, value)
    }
    #[inline(always)]
    fn free(&mut self, handle: Self::Handle) -> Result<T, PoolError> {
        FlagPool::free(self, handle)
    }
    fn len(&self) -> usize {
        self.live
    }
    fn capacity(&self) -> usize {
        N
    }
    fn check(&mut self) -> Result<(), CheckError> {
        FlagPool::check(self)
    }
}

impl<T, const N: usize> Drop for FlagPool<T, N> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            // Every flagged value, going on past one whose `drop` panics.
            super::drop_each(0, N, &mut |i| {
                if self.used[i] {
                    // SAFETY: flagged, so initialised (FL1); dropped once, as the pool goes away: `drop_each`
                    // visits each slot once.
                    unsafe { self.slots[i].assume_init_drop() };
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_free_first_and_errors() {
        let mut p: FlagPool<u32, 3> = FlagPool::new(4);
        let a = p.alloc(1).unwrap();
        let b = p.alloc(2).unwrap();
        assert_eq!(p.free(a), Ok(1));
        assert_eq!(p.free(a), Err(PoolError::DoubleFree));
        assert_eq!(p.get(a), Err(PoolError::Dangling));
        assert_eq!(p.get(Handle::from_raw(1, 0, 5)), Err(PoolError::ForeignHandle));
        assert_eq!(p.free(Handle::from_raw(3, 0, 4)), Err(PoolError::OutOfRange));
        assert_eq!(p.alloc(3), Ok(a), "lowest free slot");
        *p.get_mut(b).unwrap() = 20;
        let mut sum = 0;
        p.for_each(|_, v| sum += v);
        assert_eq!(sum, 23);
        assert_eq!(p.check(), Ok(()));
        p.used[2] = true;
        assert_eq!(p.check(), Err(CheckError::CountMismatch));
        p.used[2] = false;
    }
}
