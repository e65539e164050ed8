//! The index pool: a stack of free `u8`/`u16` slot indices, kept partitioned so live slots can be walked.

use core::marker::PhantomData;
use core::mem::{MaybeUninit, size_of};

use super::{CheckError, Handle, PoolError};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

/// A slot index type: `u8` for pools of up to 256 slots, `u16` for up to 65,536. Sealed: the const
/// constructor relies on these being exactly `u8` and `u16`.
pub trait Index: sealed::Sealed + Copy + Eq + core::fmt::Debug {
    /// The most slots an index of this type can number.
    const MAX_SLOTS: usize;
    /// `i` as an index; `i < MAX_SLOTS`.
    fn from_usize(i: usize) -> Self;
    /// The index as a `usize`.
    fn to_usize(self) -> usize;
}

impl Index for u8 {
    const MAX_SLOTS: usize = 256;
    #[inline(always)]
    fn from_usize(i: usize) -> u8 {
        i as u8
    }
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

impl Index for u16 {
    const MAX_SLOTS: usize = 65_536;
    #[inline(always)]
    fn from_usize(i: usize) -> u16 {
        i as u16
    }
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

/// `[N-1, N-2, ..., 0]` as indices, in a `const fn` (which cannot call `Index::from_usize`). As the free stack
/// it makes slot 0 the first allocated; it is also its own inverse, so it serves as the position table.
const fn reversed<I: Index, const N: usize>() -> [I; N] {
    let mut table = MaybeUninit::<[I; N]>::uninit();
    let p = table.as_mut_ptr().cast::<I>();
    let mut k = 0;
    while k < N {
        let v = N - 1 - k;
        // SAFETY: `k < N`, so the write is inside `table`; `I` is sealed to `u8`/`u16`, so the cast to the
        // integer of the same size is the type itself, and `v < N <= I::MAX_SLOTS` fits it.
        unsafe {
            if size_of::<I>() == 1 {
                p.cast::<u8>().add(k).write(v as u8);
            } else {
                p.cast::<u16>().add(k).write(v as u16);
            }
        }
        k += 1;
    }
    // SAFETY: the loop wrote all `N` elements.
    unsafe { table.assume_init() }
}

/// A pool of up to `N` values of `T` numbered by `I` (`u8`: `N <= 256`, `u16`: `N <= 65,536`).
///
/// `stack` holds every slot index once: `stack[..free]` the free ones (allocate pops `stack[free - 1]`),
/// `stack[free..]` the live ones; `pos[i]` is where slot `i` sits in `stack`. Freeing swaps the slot's index
/// down to `stack[free]` and grows the free part, so all four operations are O(1) with no search, a double
/// free is `pos[i] < free`, and the live slots are `stack[free..]` (O(live) iteration, in no particular
/// order). Bookkeeping: `2 * size_of::<I>()` bytes a slot. Invariants IX1-IX3 (module docs).
pub struct IndexPool<T, I: Index, const N: usize> {
    slots: [MaybeUninit<T>; N],
    stack: [I; N],
    pos: [I; N],
    free: usize,
    /// The most slots ever live at once (IX4): what a game sizes the pool by.
    peak: usize,
    id: u8,
}

impl<T, I: Index, const N: usize> IndexPool<T, I, N> {
    /// An empty pool whose handles carry `id`; give each pool that could meet another's handles its own id.
    pub const fn new(id: u8) -> Self {
        const { assert!(N > 0 && N <= I::MAX_SLOTS, "IndexPool: N must be 1..=I::MAX_SLOTS") };
        IndexPool {
            slots: [const { MaybeUninit::uninit() }; N],
            stack: reversed(),
            pos: reversed(),
            free: N,
            peak: 0,
            id,
        }
    }

    /// The most slots that were ever live at once.
    pub const fn peak(&self) -> usize {
        self.peak
    }

    /// This pool's id, carried by its handles.
    pub const fn id(&self) -> u8 {
        self.id
    }

    /// The number of live values.
    pub const fn len(&self) -> usize {
        N - self.free
    }

    /// True when nothing is allocated.
    pub const fn is_empty(&self) -> bool {
        self.free == N
    }

    /// True when `alloc` would return `None`.
    pub const fn is_full(&self) -> bool {
        self.free == 0
    }

    /// Stores `value` in a free slot and returns its handle, or `None` (dropping `value`) when full.
    #[inline(always)]
    pub fn alloc(&mut self, value: T) -> Option<Handle<T, I>> {
        if self.free == 0 {
            return None;
        }
        self.free -= 1;
        if N - self.free > self.peak {
            self.peak = N - self.free;
        }
        // SAFETY: `free` was in `1..=N` (IX1), so `free - 1 < N`.
        let i = unsafe { *self.stack.get_unchecked(self.free) };
        // SAFETY: stack entries are `< N` (IX2).
        unsafe { self.slots.get_unchecked_mut(i.to_usize()) }.write(value);
        Some(Handle::from_raw(i, self.id))
    }

    /// The slot index of `h` if it is a live slot of this pool.
    #[inline(always)]
    fn live_index(&self, h: Handle<T, I>, freed: PoolError) -> Result<usize, PoolError> {
        if h.pool() != self.id {
            return Err(PoolError::ForeignHandle);
        }
        let i = h.index().to_usize();
        if i >= N {
            return Err(PoolError::OutOfRange);
        }
        // SAFETY: `i < N` was checked above.
        if unsafe { self.pos.get_unchecked(i) }.to_usize() < self.free {
            return Err(freed);
        }
        Ok(i)
    }

    /// Frees `h`'s slot and returns its value; `Err` (pool unchanged) for a handle of another pool, an index
    /// out of range, or a slot already free.
    #[inline(always)]
    #[allow(clippy::question_mark, reason = "hot path: plain `match`, no `Try` trait calls from core")]
    pub fn free(&mut self, h: Handle<T, I>) -> Result<T, PoolError> {
        let i = match self.live_index(h, PoolError::DoubleFree) {
            Ok(i) => i,
            Err(e) => return Err(e),
        };
        let f = self.free;
        // SAFETY: `i < N` (checked by `live_index`); `f < N` because slot `i` is live, so
        // `free <= pos[i] < N`; stack entries are `< N` (IX2), so `j < N`; `p = pos[i] < N` (IX2).
        unsafe {
            let p = *self.pos.get_unchecked(i);
            let j = *self.stack.get_unchecked(f);
            // Swap `i` (at `p`) with `j` (at `f`, the lowest live position), then make `f` free.
            *self.stack.get_unchecked_mut(f) = h.index();
            *self.pos.get_unchecked_mut(i) = I::from_usize(f);
            *self.stack.get_unchecked_mut(p.to_usize()) = j;
            *self.pos.get_unchecked_mut(j.to_usize()) = p;
        }
        self.free = f + 1;
        // SAFETY: slot `i` was live, so initialised (IX3); it is now free, so nothing reads it again.
        Ok(unsafe { self.slots.get_unchecked(i).assume_init_read() })
    }

    /// The value of live handle `h`; `Err(Dangling)` if its slot is free.
    #[inline(always)]
    pub fn get(&self, h: Handle<T, I>) -> Result<&T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and slot `i` is live, so initialised (IX3).
            Ok(i) => Ok(unsafe { self.slots.get_unchecked(i).assume_init_ref() }),
            Err(e) => Err(e),
        }
    }

    /// The value of live handle `h`, mutably; `Err(Dangling)` if its slot is free.
    #[inline(always)]
    pub fn get_mut(&mut self, h: Handle<T, I>) -> Result<&mut T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and slot `i` is live, so initialised (IX3).
            Ok(i) => Ok(unsafe { self.slots.get_unchecked_mut(i).assume_init_mut() }),
            Err(e) => Err(e),
        }
    }

    /// The handle of the `n`-th live object (`n < len()`), in O(1), for walks that must not take a closure (an
    /// ARM caller in IWRAM inlines this, not `retain`'s closure). A walk `n = 0, 1, …` meets every live object
    /// once; freeing the object at `n` moves one already met into its place, so after a free the walk stays at
    /// the same `n`:
    /// ```ignore
    /// let mut n = 0;
    /// while let Some(h) = pool.nth_live(n) {
    ///     if keep(pool.get_mut(h)) { n += 1 } else { pool.free(h); }
    /// }
    /// ```
    #[inline(always)]
    pub fn nth_live(&self, n: usize) -> Option<Handle<T, I>> {
        let p = self.free + n;
        if p >= N {
            return None;
        }
        // SAFETY: `p < N` was checked above.
        Some(Handle::from_raw(unsafe { *self.stack.get_unchecked(p) }, self.id))
    }

    /// The live values with their handles, in O(live).
    pub fn iter(&self) -> Iter<'_, T, I> {
        Iter { live: &self.stack[self.free..], slots: self.slots.as_ptr(), id: self.id, _p: PhantomData }
    }

    /// The live values with their handles, mutably, in O(live).
    pub fn iter_mut(&mut self) -> IterMut<'_, T, I> {
        IterMut { live: &self.stack[self.free..], slots: self.slots.as_mut_ptr(), id: self.id, _p: PhantomData }
    }

    /// Calls `keep` on every live value (O(live)) and frees, dropping them, those for which it returns false:
    /// the per-frame "update every bullet, drop the dead ones" loop.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut T) -> bool) {
        // Walk upwards: freeing the value at `p` swaps in the one from `free`, which was already visited.
        let mut p = self.free;
        while p < N {
            let i = self.stack[p];
            // SAFETY: `p >= free`, so slot `i` is live and initialised (IX3); `i < N` (IX2).
            let v = unsafe { self.slots.get_unchecked_mut(i.to_usize()).assume_init_mut() };
            if !keep(v) {
                let dropped = self.free(Handle::from_raw(i, self.id));
                debug_assert!(dropped.is_ok());
            }
            p += 1;
        }
    }

    /// Verifies IX1 and IX2 (module docs).
    pub fn check(&self) -> Result<(), CheckError> {
        if self.free > N {
            return Err(CheckError::CountTooLarge);
        }
        if self.peak < N - self.free || self.peak > N {
            return Err(CheckError::PeakBelowLive);
        }
        let mut k = 0;
        while k < N {
            if self.stack[k].to_usize() >= N || self.pos[k].to_usize() >= N {
                return Err(CheckError::EntryOutOfRange { at: k });
            }
            k += 1;
        }
        let mut i = 0;
        while i < N {
            if self.stack[self.pos[i].to_usize()].to_usize() != i {
                return Err(CheckError::PosMismatch { slot: i });
            }
            i += 1;
        }
        Ok(())
    }
}

impl<T, I: Index, const N: usize> Drop for IndexPool<T, I, N> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            let mut p = self.free;
            while p < N {
                let i = self.stack[p].to_usize();
                // SAFETY: live slots are initialised (IX3) and each is dropped once (`stack` is a permutation).
                unsafe { self.slots[i].assume_init_drop() };
                p += 1;
            }
        }
    }
}

/// Iterator over an [`IndexPool`]'s live values: `(handle, &value)`.
pub struct Iter<'a, T, I> {
    live: &'a [I],
    slots: *const MaybeUninit<T>,
    id: u8,
    _p: PhantomData<&'a T>,
}

impl<'a, T, I: Index> Iterator for Iter<'a, T, I> {
    type Item = (Handle<T, I>, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&i, rest) = self.live.split_first()?;
        self.live = rest;
        // SAFETY: `live` is the pool's `stack[free..]`, borrowed with the pool for `'a`: live slots, `< N`,
        // initialised (IX2, IX3).
        let v = unsafe { (*self.slots.add(i.to_usize())).assume_init_ref() };
        Some((Handle::from_raw(i, self.id), v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.live.len(), Some(self.live.len()))
    }
}

/// Iterator over an [`IndexPool`]'s live values: `(handle, &mut value)`.
pub struct IterMut<'a, T, I> {
    live: &'a [I],
    slots: *mut MaybeUninit<T>,
    id: u8,
    _p: PhantomData<&'a mut T>,
}

impl<'a, T, I: Index> Iterator for IterMut<'a, T, I> {
    type Item = (Handle<T, I>, &'a mut T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&i, rest) = self.live.split_first()?;
        self.live = rest;
        // SAFETY: as in `Iter::next`, and the pool is mutably borrowed for `'a`; `stack` is a permutation
        // (IX2), so each slot is yielded once and the `&mut`s do not alias.
        let v = unsafe { (*self.slots.add(i.to_usize())).assume_init_mut() };
        Some((Handle::from_raw(i, self.id), v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.live.len(), Some(self.live.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_handles_and_errors() {
        let mut p: IndexPool<u32, u8, 3> = IndexPool::new(1);
        let a = p.alloc(10).unwrap();
        let b = p.alloc(11).unwrap();
        let c = p.alloc(12).unwrap();
        assert_eq!((a.index(), b.index(), c.index()), (0, 1, 2));
        assert!(p.alloc(13).is_none());
        assert_eq!(p.free(b), Ok(11));
        assert_eq!(p.free(b), Err(PoolError::DoubleFree));
        assert_eq!(p.get(b), Err(PoolError::Dangling));
        assert_eq!(p.get(Handle::from_raw(0, 2)), Err(PoolError::ForeignHandle));
        assert_eq!(p.free(Handle::from_raw(3, 1)), Err(PoolError::OutOfRange));
        assert_eq!(p.alloc(14).unwrap().index(), 1, "the last freed slot is reused first");
        *p.get_mut(c).unwrap() += 100;
        let mut seen = [0u32; 3];
        for (h, v) in p.iter() {
            seen[h.index() as usize] = *v;
        }
        assert_eq!(seen, [10, 14, 112]);
        p.retain(|v| *v != 14);
        assert_eq!(p.len(), 2);
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn const_static_and_full_u8_range() {
        static POOL: IndexPool<u8, u8, 256> = IndexPool::new(0);
        assert_eq!(POOL.len(), 0);
        let mut p: IndexPool<u8, u8, 256> = IndexPool::new(0);
        for k in 0..256 {
            assert_eq!(p.alloc(k as u8).unwrap().index() as usize, k);
        }
        assert!(p.is_full());
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn drop_drops_live_values_once() {
        use core::cell::Cell;
        struct D<'a>(&'a Cell<u32>);
        impl Drop for D<'_> {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let n = Cell::new(0);
        {
            let mut p: IndexPool<D<'_>, u16, 4> = IndexPool::new(0);
            let h = p.alloc(D(&n)).unwrap();
            p.alloc(D(&n)).unwrap();
            drop(p.free(h));
            assert_eq!(n.get(), 1);
        }
        assert_eq!(n.get(), 2);
    }

    #[test]
    fn check_reports_corruption() {
        let mut p: IndexPool<u32, u8, 8> = IndexPool::new(0);
        p.alloc(1).unwrap();
        p.pos[3] = 5;
        assert_eq!(p.check(), Err(CheckError::PosMismatch { slot: 3 }));
        p.pos[3] = 9;
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 3 }));
        p.pos[3] = 4; // the original value
        assert_eq!(p.check(), Ok(()));
        p.peak = 0;
        assert_eq!(p.check(), Err(CheckError::PeakBelowLive));
        p.peak = 1;
        p.free = 9;
        assert_eq!(p.check(), Err(CheckError::CountTooLarge));
    }

    #[test]
    fn an_nth_live_walk_meets_every_live_object_once_while_freeing() {
        let mut p: IndexPool<u32, u8, 16> = IndexPool::new(0);
        let handles: [_; 12] = core::array::from_fn(|i| p.alloc(i as u32).unwrap());
        for h in [handles[2], handles[7], handles[9]] {
            p.free(h).unwrap();
        }
        let (mut n, mut met) = (0, 0u32);
        while let Some(h) = p.nth_live(n) {
            let v = *p.get(h).unwrap();
            assert_eq!(met & (1 << v), 0, "met {v} twice");
            met |= 1 << v;
            if v % 2 == 0 {
                p.free(h).unwrap();
            } else {
                n += 1;
            }
        }
        assert_eq!(met, 0b1111_1111_1111 & !(1 << 2 | 1 << 7 | 1 << 9));
        assert_eq!(p.len(), 4, "the odd ones 1, 3, 5, 11 stay");
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn peak_remembers_the_most_live_slots() {
        let mut p: IndexPool<u32, u8, 8> = IndexPool::new(0);
        let a = p.alloc(1).unwrap();
        let b = p.alloc(2).unwrap();
        p.free(a).unwrap();
        p.alloc(3).unwrap();
        p.free(b).unwrap();
        assert_eq!((p.len(), p.peak()), (1, 2));
        assert_eq!(p.check(), Ok(()));
    }
}
