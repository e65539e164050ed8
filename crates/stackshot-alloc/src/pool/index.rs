//! The index pool: a stack of free `u8`/`u16` slot indices, kept partitioned so live slots can be walked.

use core::marker::PhantomData;
use core::mem::{MaybeUninit, size_of};

use super::{CheckError, Handle, Pool, PoolError};

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

/// A pool of up to `N` values of `T` numbered by `I` (`u8`: `N <= 256`, `u16`: `N <= 65,536`), tagged `P`.
///
/// `stack` holds every slot index once: `stack[..free]` the free ones (allocate pops `stack[free - 1]`),
/// `stack[free..]` the live ones; `pos[i]` is where slot `i` sits in `stack`. Freeing swaps the slot's index
/// down to `stack[free]` and grows the free part, so all four operations are O(1) with no search, a double
/// free is `pos[i] < free`, and the live slots are `stack[free..]` (O(live) iteration, in no particular
/// order). `stamp[i]` holds slot `i`'s generation, the count of its allocations modulo 256, in its high byte
/// and the pool's id in its low byte; every handle carries the stamp of its allocation, so one compare refuses
/// a handle that outlived its object ([`PoolError::Stale`]) or belongs to another pool
/// ([`PoolError::ForeignHandle`]). Bookkeeping: `2 * size_of::<I>() + 2` bytes a slot. Invariants IX1-IX5
/// (module docs).
///
/// `P` is the pool's tag, a type of the user's (`struct EnemyShots;`), carried by its handles: two pools of
/// the same `T` with different tags cannot take each other's handles (a compile error). Pools that share a
/// tag (an array of pools) tell their handles apart at run time by an id ([`IndexPool::with_id`]).
///
/// ```compile_fail,E0308
/// use stackshot_alloc::pool::IndexPool;
/// struct PlayerShots;
/// struct EnemyShots;
/// let mut mine: IndexPool<u32, u8, 8, PlayerShots> = IndexPool::new();
/// let mut theirs: IndexPool<u32, u8, 8, EnemyShots> = IndexPool::new();
/// let shot = mine.alloc(1).ok().unwrap();
/// let _ = theirs.free(shot); // a `Handle<u32, u8, PlayerShots>` is not an `EnemyShots` handle
/// ```
// `repr(C)`, the stack first: at offset 0 its entries are read and written without an address sum (a cycle
// less on each path, measured).
#[repr(C)]
pub struct IndexPool<T, I: Index, const N: usize, P = ()> {
    stack: [I; N],
    pos: [I; N],
    /// Generation `<< 8 |` pool id, a slot (IX5).
    stamp: [u16; N],
    slots: [MaybeUninit<T>; N],
    free: usize,
    /// The lowest `free` ever (IX4): `N - low` slots were once live at the same time.
    low: usize,
    _tag: PhantomData<fn() -> P>,
}

impl<T, I: Index, const N: usize, P> IndexPool<T, I, N, P> {
    /// An empty pool; its handles carry id 0 (the tag `P` tells pools apart; see [`with_id`](Self::with_id)).
    pub const fn new() -> Self {
        Self::with_id(0)
    }

    /// An empty pool whose handles carry `id`: for pools with the same tag that could meet each other's
    /// handles, so that the run-time check refuses them ([`PoolError::ForeignHandle`]).
    pub const fn with_id(id: u8) -> Self {
        const { assert!(N > 0 && N <= I::MAX_SLOTS, "IndexPool: N must be 1..=I::MAX_SLOTS") };
        IndexPool {
            stack: reversed(),
            pos: reversed(),
            stamp: [id as u16; N],
            slots: [const { MaybeUninit::uninit() }; N],
            free: N,
            low: N,
            _tag: PhantomData,
        }
    }

    /// The number of slots.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// The most slots that were ever live at once.
    pub const fn peak(&self) -> usize {
        N - self.low
    }

    /// This pool's id, carried by its handles.
    pub const fn id(&self) -> u8 {
        self.stamp[0] as u8
    }

    /// The number of live values.
    pub const fn len(&self) -> usize {
        N - self.free
    }

    /// True when nothing is allocated.
    pub const fn is_empty(&self) -> bool {
        self.free == N
    }

    /// True when `alloc` would hand its value back.
    pub const fn is_full(&self) -> bool {
        self.free == 0
    }

    /// Stores `value` in a free slot and returns its handle, or hands `value` back when the pool is full.
    #[inline(always)]
    pub fn alloc(&mut self, value: T) -> Result<Handle<T, I, P>, T> {
        // Full when `free - 1` is negative (`free <= N <= 65,536`): the subtraction sets the flag the branch
        // tests (`subs`, no separate compare).
        let f = self.free.wrapping_sub(1);
        if (f as isize) < 0 {
            core::hint::cold_path();
            return Err(value);
        }
        self.free = f;
        // SAFETY: `free` was in `1..=N` (IX1), so `f < N`; stack entries are `< N` (IX2).
        unsafe {
            let i = *self.stack.get_unchecked(f);
            let stamp = self.stamp.get_unchecked_mut(i.to_usize());
            // `free` only falls below its low-water mark when a slot never allocated is: one in generation 0
            // (or whose count just wrapped), so the mark is only compared then.
            if *stamp >> 8 == 0 {
                core::hint::cold_path();
                if f < self.low {
                    self.low = f;
                }
            }
            // The next generation: the high byte counts, its carry drops out; the id stays.
            *stamp = stamp.wrapping_add(1 << 8);
            let handle = Handle::from_stamp(i, *stamp);
            self.slots.get_unchecked_mut(i.to_usize()).write(value);
            Ok(handle)
        }
    }

    /// The slot index of `h` if it is a live slot of this pool in the handle's generation.
    #[inline(always)]
    fn live_index(&self, h: Handle<T, I, P>, freed: PoolError) -> Result<usize, PoolError> {
        let i = h.index().to_usize();
        if i >= N {
            return Err(PoolError::OutOfRange);
        }
        // SAFETY: `i < N` was checked above.
        unsafe {
            let stamp = *self.stamp.get_unchecked(i);
            if stamp != h.stamp() {
                core::hint::cold_path();
                return Err(if (stamp ^ h.stamp()) as u8 != 0 { PoolError::ForeignHandle } else { PoolError::Stale });
            }
            if self.pos.get_unchecked(i).to_usize() < self.free {
                core::hint::cold_path();
                return Err(freed);
            }
        }
        Ok(i)
    }

    /// What `free`, `get` and `get_mut` would say of `h`: `Ok` for a live handle, else the error they return.
    /// For tools (the gdb printer's "stale") and tests; it does not touch the pool.
    pub fn status(&self, h: Handle<T, I, P>) -> Result<(), PoolError> {
        self.live_index(h, PoolError::Dangling).map(|_| ())
    }

    /// Frees `h`'s slot and returns its value; `Err` (pool unchanged) for a handle of another pool, an index
    /// out of range, a stale handle (the slot was allocated again since) or a slot already free.
    #[inline(always)]
    #[allow(clippy::question_mark, reason = "hot path: plain `match`, no `Try` trait calls from core")]
    pub fn free(&mut self, h: Handle<T, I, P>) -> Result<T, PoolError> {
        match self.live_index(h, PoolError::DoubleFree) {
            // SAFETY: `live_index` returned a live slot `< N`.
            Ok(i) => Ok(unsafe { self.free_live(i) }),
            Err(e) => Err(e),
        }
    }

    /// Frees live slot `i` and returns its value.
    ///
    /// # Safety
    /// `i < N` and slot `i` is live.
    #[inline(always)]
    unsafe fn free_live(&mut self, i: usize) -> T {
        let f = self.free;
        // SAFETY: slot `i` is live (caller), so `free <= pos[i] < N`: `f < N`. `f` is the lowest live position;
        // moving `i` there and making it free keeps `stack[free..]` the live slots (IX3).
        unsafe { self.place(i, f) };
        self.free = f + 1;
        // SAFETY: slot `i` was live, so initialised (IX3); it is now free, so nothing reads it again.
        unsafe { self.slots.get_unchecked(i).assume_init_read() }
    }

    /// Moves slot `i` to stack position `at`, and the slot that was there to `i`'s old position.
    ///
    /// # Safety
    /// `i < N` and `at < N`.
    #[inline(always)]
    unsafe fn place(&mut self, i: usize, at: usize) {
        // SAFETY: `i < N` and `at < N` (caller); stack entries are `< N` (IX2), so `j < N`; `pos[i] < N` (IX2).
        unsafe {
            let p = *self.pos.get_unchecked(i);
            let j = *self.stack.get_unchecked(at);
            *self.stack.get_unchecked_mut(at) = I::from_usize(i);
            *self.pos.get_unchecked_mut(i) = I::from_usize(at);
            *self.stack.get_unchecked_mut(p.to_usize()) = j;
            *self.pos.get_unchecked_mut(j.to_usize()) = p;
        }
    }

    /// The handle of live slot `i`, in its current generation.
    ///
    /// # Safety
    /// `i < N`.
    #[inline(always)]
    unsafe fn handle(&self, i: I) -> Handle<T, I, P> {
        // SAFETY: `i < N` (caller).
        Handle::from_stamp(i, unsafe { *self.stamp.get_unchecked(i.to_usize()) })
    }

    /// The value of live handle `h`; `Err(Dangling)` if its slot is free, `Err(Stale)` if it was allocated
    /// again since.
    #[inline(always)]
    pub fn get(&self, h: Handle<T, I, P>) -> Result<&T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and slot `i` is live, so initialised (IX3).
            Ok(i) => Ok(unsafe { self.slots.get_unchecked(i).assume_init_ref() }),
            Err(e) => Err(e),
        }
    }

    /// The value of live handle `h`, mutably; errors as [`get`](Self::get).
    #[inline(always)]
    pub fn get_mut(&mut self, h: Handle<T, I, P>) -> Result<&mut T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and slot `i` is live, so initialised (IX3).
            Ok(i) => Ok(unsafe { self.slots.get_unchecked_mut(i).assume_init_mut() }),
            Err(e) => Err(e),
        }
    }

    /// A walk over the live objects that can free and allocate as it goes (see [`Sweep`]): `retain` without a
    /// closure, for ARM code in IWRAM, which inlines this walk but not a Thumb closure.
    #[inline(always)]
    pub fn sweep(&mut self) -> Sweep<'_, T, I, N, P> {
        Sweep { next: self.free, current: N, pool: self }
    }

    /// The live values with their handles, in O(live).
    pub fn iter(&self) -> Iter<'_, T, I, P> {
        Iter {
            live: &self.stack[self.free..],
            slots: self.slots.as_ptr(),
            stamp: &self.stamp,
            _p: PhantomData,
            _tag: PhantomData,
        }
    }

    /// The free slots in the order `alloc` will hand them out (the most recently freed first), in O(free): for
    /// debug views and tests.
    pub fn free_slots(&self) -> impl Iterator<Item = I> + '_ {
        self.stack[..self.free].iter().rev().copied()
    }

    /// The live values with their handles, mutably, in O(live).
    pub fn iter_mut(&mut self) -> IterMut<'_, T, I, P> {
        let slots = self.slots.as_mut_ptr();
        IterMut { live: &self.stack[self.free..], slots, stamp: &self.stamp, _p: PhantomData, _tag: PhantomData }
    }

    /// Calls `keep` on every live value (O(live)) and frees, dropping them, those for which it returns false:
    /// the per-frame "update every bullet, drop the dead ones" loop.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut T) -> bool) {
        let mut walk = self.sweep();
        while let Some((_, v)) = walk.next() {
            if !keep(v) {
                let dropped = walk.free_current();
                debug_assert!(dropped.is_some());
            }
        }
    }

    /// Verifies IX1, IX2, IX4 and IX5 (module docs).
    pub fn check(&self) -> Result<(), CheckError> {
        if self.free > N {
            return Err(CheckError::CountTooLarge);
        }
        if self.low > self.free {
            return Err(CheckError::PeakBelowLive);
        }
        let mut k = 0;
        while k < self.low {
            let slot = self.stack[k].to_usize();
            if slot >= N || self.stamp[slot] >> 8 != 0 {
                return Err(CheckError::PeakBelowLive);
            }
            k += 1;
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
            if self.stamp[i] as u8 != self.stamp[0] as u8 {
                return Err(CheckError::IdMismatch { slot: i });
            }
            i += 1;
        }
        Ok(())
    }
}

impl<T, I: Index, const N: usize, P> Pool for IndexPool<T, I, N, P> {
    type Value = T;
    type Handle = Handle<T, I, P>;
    #[inline(always)]
    fn alloc(&mut self, value: T) -> Result<Self::Handle, T> {
        IndexPool::alloc(self, value)
    }
    #[inline(always)]
    fn free(&mut self, handle: Self::Handle) -> Result<T, PoolError> {
        IndexPool::free(self, handle)
    }
    fn len(&self) -> usize {
        IndexPool::len(self)
    }
    fn capacity(&self) -> usize {
        N
    }
    fn check(&mut self) -> Result<(), CheckError> {
        IndexPool::check(self)
    }
}

impl<T, I: Index, const N: usize, P> Default for IndexPool<T, I, N, P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, I: Index, const N: usize, P> Drop for IndexPool<T, I, N, P> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            // Every live value, going on past one whose `drop` panics.
            super::drop_each(self.free, N, &mut |p| {
                let i = self.stack[p].to_usize();
                // SAFETY: live slots are initialised (IX3) and each is dropped once: `stack` is a permutation, and
                // `drop_each` visits each position once.
                unsafe { self.slots[i].assume_init_drop() };
            });
        }
    }
}

/// `sweep!(pool, |object| { keep })`: runs the block on every live object of `pool` (an `&mut IndexPool`) and
/// frees those for which it evaluates to false, through [`IndexPool::sweep`]. A macro rather than a function
/// with a closure so that the block is written out in place: in ARM code in IWRAM a closure would stay a Thumb
/// call into ROM. A `return` inside the block returns from the enclosing function. With a second block,
/// `sweep!(pool, |object| { keep }, |handle, freed| { on_free })`, `on_free` runs after each free with the handle and
/// the free's result (e.g. to log it).
#[macro_export]
macro_rules! sweep {
    ($pool:expr, |$object:ident| $keep:block) => {
        $crate::sweep!($pool, |$object| $keep, |_handle, _freed| {})
    };
    ($pool:expr, |$object:ident| $keep:block, |$handle:ident, $freed:ident| $on_free:block) => {{
        let mut walk = $pool.sweep();
        while let Some(($handle, $object)) = walk.next() {
            let keep: bool = $keep;
            if !keep {
                // The object just met, which only the walk can free: always `Ok`.
                let $freed: Result<_, $crate::pool::PoolError> =
                    walk.free_current().ok_or($crate::pool::PoolError::DoubleFree);
                $on_free
            }
        }
    }};
}

/// A walk over an [`IndexPool`]'s live objects ([`IndexPool::sweep`]) that meets every object live when it
/// starts exactly once, in O(live), while it frees and allocates in the same pool:
/// ```ignore
/// let mut walk = pool.sweep();
/// while let Some((_, bullet)) = walk.next() {
///     if !bullet.step() {
///         walk.free_current(); // or `walk.free(handle)` for any live object
///     }
/// }
/// ```
/// - An object freed during the walk (the one just met, one met before, or one not yet met) is not met
///   afterwards; every other object live at the start is met once.
/// - An object allocated during the walk is not met by it.
///
/// The walk holds the pool's `&mut`, so freeing and allocating can only go through it: the pool's own
/// `free` and `alloc`, which would move objects under the walk, cannot be called until it ends.
///
/// How: `stack[pool.free..next]` are the objects met (and those allocated during the walk, which `alloc`
/// puts at `free - 1`), `stack[next..]` those still to meet. `free` swaps the freed slot with the lowest
/// live one, `stack[free]`, which the walk has met, so the split holds; freeing an object not yet met first
/// moves it to `next` and counts that position as met.
pub struct Sweep<'a, T, I: Index, const N: usize, P = ()> {
    pool: &'a mut IndexPool<T, I, N, P>,
    next: usize,
    /// The slot of the object `next` returned last, while it is live: what `free_current` frees. `N`: none.
    current: usize,
}

impl<T, I: Index, const N: usize, P> Sweep<'_, T, I, N, P> {
    /// The next object not yet met, with its handle, or `None` when all have been met.
    #[inline(always)]
    #[allow(clippy::should_implement_trait, reason = "the value borrows the walk, which `Iterator` cannot express")]
    pub fn next(&mut self) -> Option<(Handle<T, I, P>, &mut T)> {
        let p = self.next;
        if p >= N {
            return None;
        }
        self.next = p + 1;
        // SAFETY: `p < N`; `p >= pool.free` (`next` starts at `free` and `free` never passes it), so slot `i`
        // is live and initialised (IX3); stack entries are `< N` (IX2).
        unsafe {
            let i = *self.pool.stack.get_unchecked(p);
            self.current = i.to_usize();
            let h = self.pool.handle(i);
            Some((h, self.pool.slots.get_unchecked_mut(i.to_usize()).assume_init_mut()))
        }
    }

    /// Frees `h`'s slot and returns its value, as [`IndexPool::free`] (with the same errors); the walk goes
    /// on without meeting it.
    #[inline(always)]
    #[allow(clippy::question_mark, reason = "hot path: plain `match`, no `Try` trait calls from core")]
    pub fn free(&mut self, h: Handle<T, I, P>) -> Result<T, PoolError> {
        let i = match self.pool.live_index(h, PoolError::DoubleFree) {
            Ok(i) => i,
            Err(e) => return Err(e),
        };
        if i == self.current {
            self.current = N;
        }
        // SAFETY: `live_index` checked `i < N`, and slot `i` is live, so `pos[i] < N`; `next <= pos[i] < N`
        // in the branch.
        unsafe {
            if self.pool.pos.get_unchecked(i).to_usize() >= self.next {
                // Not met yet: move it to `next`, counted as met, so that the slot `free_live` swaps into its
                // place, `stack[free]`, lands among the met ones.
                self.pool.place(i, self.next);
                self.next += 1;
            }
            Ok(self.pool.free_live(i))
        }
    }

    /// Frees the object [`next`](Self::next) returned last and returns its value; `None` if it was freed
    /// already (by [`free`](Self::free)) or none was met yet. No handle to check: the walk knows the object is
    /// live, so this is the pool's free without its checks, for the walk's own "drop the one just met".
    #[inline(always)]
    pub fn free_current(&mut self) -> Option<T> {
        let i = self.current;
        if i >= N {
            return None;
        }
        self.current = N;
        // SAFETY: `current < N` is the slot `next` returned, live since: `free` clears `current` when it frees
        // it, and nothing else frees during the walk. It was met (its position is below `next`), so
        // `free_live`'s swap keeps the met/not-met split (see the type's docs).
        Some(unsafe { self.pool.free_live(i) })
    }

    /// Stores `value` in a free slot, as [`IndexPool::alloc`]; the walk does not meet it.
    #[inline(always)]
    pub fn alloc(&mut self, value: T) -> Result<Handle<T, I, P>, T> {
        self.pool.alloc(value)
    }

    /// The value of live handle `h`, as [`IndexPool::get_mut`].
    #[inline(always)]
    pub fn get_mut(&mut self, h: Handle<T, I, P>) -> Result<&mut T, PoolError> {
        self.pool.get_mut(h)
    }
}

/// Iterator over an [`IndexPool`]'s live values: `(handle, &value)`.
pub struct Iter<'a, T, I, P = ()> {
    live: &'a [I],
    slots: *const MaybeUninit<T>,
    stamp: &'a [u16],
    _p: PhantomData<&'a T>,
    _tag: PhantomData<fn() -> P>,
}

impl<'a, T, I: Index, P> Iterator for Iter<'a, T, I, P> {
    type Item = (Handle<T, I, P>, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&i, rest) = self.live.split_first()?;
        self.live = rest;
        // SAFETY: `live` is the pool's `stack[free..]`, borrowed with the pool for `'a`: live slots, `< N`,
        // initialised (IX2, IX3).
        let v = unsafe { (*self.slots.add(i.to_usize())).assume_init_ref() };
        Some((Handle::from_stamp(i, self.stamp[i.to_usize()]), v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.live.len(), Some(self.live.len()))
    }
}

/// Iterator over an [`IndexPool`]'s live values: `(handle, &mut value)`.
pub struct IterMut<'a, T, I, P = ()> {
    live: &'a [I],
    slots: *mut MaybeUninit<T>,
    stamp: &'a [u16],
    _p: PhantomData<&'a mut T>,
    _tag: PhantomData<fn() -> P>,
}

impl<'a, T, I: Index, P> Iterator for IterMut<'a, T, I, P> {
    type Item = (Handle<T, I, P>, &'a mut T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&i, rest) = self.live.split_first()?;
        self.live = rest;
        // SAFETY: as in `Iter::next`, and the pool is mutably borrowed for `'a`; `stack` is a permutation
        // (IX2), so each slot is yielded once and the `&mut`s do not alias.
        let v = unsafe { (*self.slots.add(i.to_usize())).assume_init_mut() };
        Some((Handle::from_stamp(i, self.stamp[i.to_usize()]), v))
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
        let mut p: IndexPool<u32, u8, 3> = IndexPool::with_id(1);
        let a = p.alloc(10).unwrap();
        let b = p.alloc(11).unwrap();
        let c = p.alloc(12).unwrap();
        assert_eq!((a.index(), b.index(), c.index()), (0, 1, 2));
        assert_eq!(p.alloc(13), Err(13), "a full pool hands the value back");
        assert_eq!(p.free(b), Ok(11));
        assert_eq!(p.free(b), Err(PoolError::DoubleFree));
        assert_eq!(p.get(b), Err(PoolError::Dangling));
        assert_eq!(p.get(Handle::from_raw(0, a.generation(), 2)), Err(PoolError::ForeignHandle));
        assert_eq!(p.free(Handle::from_raw(3, 1, 1)), Err(PoolError::OutOfRange));
        let d = p.alloc(14).unwrap();
        assert_eq!(d.index(), 1, "the last freed slot is reused first");
        assert_eq!(p.get(b), Err(PoolError::Stale), "b's slot now holds d");
        assert_eq!(p.free(b), Err(PoolError::Stale));
        *p.get_mut(c).unwrap() += 100;
        let mut seen = [0u32; 3];
        for (h, v) in p.iter() {
            assert_eq!(p.get(h), Ok(v), "iter's handles are current");
            seen[h.index() as usize] = *v;
        }
        assert_eq!(seen, [10, 14, 112]);
        p.retain(|v| *v != 14);
        assert_eq!(p.len(), 2);
        assert_eq!(p.check(), Ok(()));
    }

    /// The same slot allocated and freed 1,000 times (270 under Miri): every old handle stays refused, except one exactly a
    /// multiple of 256 allocations old, which the wrapped count takes for the live one (the documented limit).
    #[test]
    fn stale_handles_are_refused_across_generations() {
        let mut p: IndexPool<u32, u8, 4> = IndexPool::new();
        extern crate std;
        let mut old = std::vec::Vec::new();
        // Each round checks the kept handles of these ages (in allocations). Under Miri, just past one wrap,
        // only those around it (all 300 took 45 s of each Miri pass; these 2 s).
        let ages: std::vec::Vec<usize> =
            if cfg!(miri) { [1, 2, 254, 255, 256, 257, 258].into() } else { (1..=300).collect() };
        for round in 0..if cfg!(miri) { 270 } else { 1_000u32 } {
            let h = p.alloc(round).unwrap();
            assert_eq!(h.index(), 0);
            for &age in ages.iter().take_while(|&&age| age <= old.len()) {
                let o = old[old.len() - age];
                let want = if age % 256 == 0 { Ok(&round) } else { Err(PoolError::Stale) };
                assert_eq!(p.get(o), want, "round {round}: a handle {age} allocations old");
            }
            assert_eq!(p.get(h), Ok(&round));
            assert_eq!(p.free(h), Ok(round));
            assert_eq!(p.free(h), Err(PoolError::DoubleFree), "round {round}");
            old.push(h);
            if old.len() > 300 {
                old.remove(0);
            }
        }
        assert_eq!(p.check(), Ok(()));
        assert!(p.is_empty());
    }

    /// Pools told apart by their tag: a handle of one does not type-check with the other (the `compile_fail`
    /// example of `IndexPool`'s docs); here, the same handle bits refused at run time by the id.
    #[test]
    fn pools_sharing_a_tag_refuse_each_others_handles_by_id() {
        let mut pools: [IndexPool<u32, u8, 4>; 2] = [IndexPool::with_id(1), IndexPool::with_id(2)];
        let h = pools[0].alloc(5).unwrap();
        pools[1].alloc(6).unwrap();
        assert_eq!(pools[1].free(h), Err(PoolError::ForeignHandle));
        assert_eq!(pools[1].len(), 1);
        assert_eq!(pools[0].free(h), Ok(5));
    }

    #[test]
    fn const_static_and_full_u8_range() {
        static POOL: IndexPool<u8, u8, 256> = IndexPool::with_id(0);
        assert_eq!(POOL.len(), 0);
        let mut p: IndexPool<u8, u8, 256> = IndexPool::with_id(0);
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
            let mut p: IndexPool<D<'_>, u16, 4> = IndexPool::with_id(0);
            let h = p.alloc(D(&n)).ok().unwrap();
            assert!(p.alloc(D(&n)).is_ok());
            drop(p.free(h));
            assert_eq!(n.get(), 1);
        }
        assert_eq!(n.get(), 2);
    }

    #[test]
    fn check_reports_corruption() {
        let mut p: IndexPool<u32, u8, 8> = IndexPool::with_id(0);
        p.alloc(1).unwrap();
        p.pos[3] = 5;
        assert_eq!(p.check(), Err(CheckError::PosMismatch { slot: 3 }));
        p.pos[3] = 9;
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 3 }));
        p.pos[3] = 4; // the original value
        assert_eq!(p.check(), Ok(()));
        p.low = 8;
        assert_eq!(p.check(), Err(CheckError::PeakBelowLive));
        p.low = 7;
        p.stamp[5] ^= 1;
        assert_eq!(p.check(), Err(CheckError::IdMismatch { slot: 5 }));
        p.stamp[5] ^= 1;
        p.free = 9;
        assert_eq!(p.check(), Err(CheckError::CountTooLarge));
    }

    /// IX4's second half: the slots below the low-water mark were never allocated.
    #[test]
    fn check_reports_an_allocated_slot_below_the_low_water_mark() {
        let mut p: IndexPool<u32, u8, 8> = IndexPool::new();
        let h = p.alloc(1).unwrap();
        p.free(h).unwrap();
        assert_eq!((p.free, p.low, p.check()), (8, 7, Ok(())));
        // Slot 0 (allocated once) swapped down to position 0, below the mark: the permutation still holds.
        let (top, bottom) = (p.stack[7], p.stack[0]);
        p.stack.swap(0, 7);
        p.pos[top.to_usize()] = 0;
        p.pos[bottom.to_usize()] = 7;
        assert_eq!(p.check(), Err(CheckError::PeakBelowLive));
    }

    #[test]
    fn a_sweep_meets_every_live_object_once_while_freeing_it() {
        let mut p: IndexPool<u32, u8, 16> = IndexPool::with_id(0);
        let handles: [_; 12] = core::array::from_fn(|i| p.alloc(i as u32).unwrap());
        for h in [handles[2], handles[7], handles[9]] {
            p.free(h).unwrap();
        }
        let mut met = 0u32;
        let mut walk = p.sweep();
        while let Some((h, &mut v)) = walk.next() {
            assert_eq!(met & (1 << v), 0, "met {v} twice");
            met |= 1 << v;
            if v % 2 == 0 {
                assert_eq!(walk.free(h), Ok(v));
            }
        }
        assert_eq!(met, 0b1111_1111_1111 & !(1 << 2 | 1 << 7 | 1 << 9));
        assert_eq!(p.len(), 4, "the odd ones 1, 3, 5, 11 stay");
        assert_eq!(p.check(), Ok(()));
    }

    /// A walk that frees an object it has met and one it has not, allocates, and frees the object it is at:
    /// every object live at the start is met once except the one freed before it was met, and the new one
    /// is not met. (The same walk written with `nth_live`, which this replaces, met two objects twice and
    /// missed two.)
    #[test]
    fn a_sweep_that_frees_others_and_allocates_meets_each_object_once() {
        let mut p: IndexPool<u32, u8, 16> = IndexPool::with_id(0);
        let h: [_; 8] = core::array::from_fn(|i| p.alloc(i as u32).unwrap());
        let mut met = [0u32; 16];
        let (mut k, mut gone) = (0, None);
        let mut walk = p.sweep();
        while let Some((x, &mut v)) = walk.next() {
            let v = v as usize;
            met[v] += 1;
            k += 1;
            if k == 3 {
                let seen = (0..8).find(|&w| met[w] == 1 && w != v).unwrap();
                let ahead = (0..8).find(|&w| met[w] == 0).unwrap();
                assert_eq!(walk.free(h[seen]), Ok(seen as u32));
                assert_eq!(walk.free(h[ahead]), Ok(ahead as u32));
                assert_eq!(walk.free(h[ahead]), Err(PoolError::DoubleFree));
                gone = Some(ahead);
            }
            if k == 5 {
                let new = walk.alloc(8 + k).unwrap();
                assert_eq!(walk.get_mut(new).map(|v| *v), Ok(13));
            }
            if k == 6 {
                assert_eq!(walk.free(x), Ok(v as u32));
            }
        }
        let want: [u32; 16] = core::array::from_fn(|w| (w < 8 && Some(w) != gone) as u32);
        assert_eq!(met, want, "visits per object (objects 0..8 live at the start, {gone:?} freed before it was met)");
        assert_eq!(p.len(), 8 - 3 + 1);
        assert_eq!(p.check(), Ok(()));
    }

    /// Random walks over random pools, freeing the object met, others met or not, and allocating, in any
    /// mix: each object live at the start and not freed before it is reached is met exactly once, no other.
    #[test]
    fn random_sweeps_meet_each_object_once() {
        use crate::rng::Rng;
        const FRESH: u8 = 0;
        const MET: u8 = 1;
        const GONE: u8 = 2; // freed before it was met (before or during the walk)
        const NEW: u8 = 3; // allocated during the walk
        for seed in 1..if cfg!(miri) { 20 } else { 2_000 } {
            let mut rng = Rng::new(seed);
            let mut p: IndexPool<u32, u8, 32> = IndexPool::with_id(5);
            let mut handles = [None; 256];
            let mut state = [FRESH; 256];
            let mut ids = 0;
            // A random pool: some allocations, some freed, so that slots sit in any order.
            for _ in 0..rng.below(60) {
                if rng.chance(65) {
                    if let Ok(h) = p.alloc(ids) {
                        handles[ids as usize] = Some(h);
                        ids += 1;
                    }
                } else if let Some(id) = random_live(&mut rng, &handles[..ids as usize]) {
                    assert_eq!(p.free(handles[id].take().unwrap()), Ok(id as u32));
                    state[id] = GONE;
                }
            }
            let mut walk = p.sweep();
            while let Some((here, &mut v)) = walk.next() {
                let v = v as usize;
                assert_eq!(state[v], FRESH, "seed {seed}: met object {v} in state {}", state[v]);
                state[v] = MET;
                let mut here = Some(here);
                for _ in 0..rng.below(4) {
                    match rng.below(3) {
                        0 if here.is_some() => {
                            let h = here.take().unwrap();
                            if rng.chance(50) {
                                assert_eq!(walk.free(h), Ok(v as u32));
                            } else {
                                assert_eq!(walk.free_current(), Some(v as u32));
                            }
                            assert_eq!(walk.free_current(), None, "seed {seed}: the current object freed twice");
                            handles[v] = None;
                        }
                        1 if ids < 255 => {
                            if let Ok(h) = walk.alloc(ids) {
                                handles[ids as usize] = Some(h);
                                state[ids as usize] = NEW;
                                ids += 1;
                            }
                        }
                        _ => {
                            if let Some(id) = random_live(&mut rng, &handles[..ids as usize]) {
                                assert_eq!(walk.free(handles[id].take().unwrap()), Ok(id as u32));
                                if state[id] == FRESH {
                                    state[id] = GONE;
                                }
                                if Some(id) == here.map(|_| v) {
                                    here = None;
                                }
                            }
                        }
                    }
                }
            }
            let missed = (0..ids as usize).find(|&id| state[id] == FRESH);
            assert_eq!(missed, None, "seed {seed}: never met");
            assert_eq!(p.len(), handles.iter().flatten().count(), "seed {seed}");
            assert_eq!(p.check(), Ok(()), "seed {seed}");
        }
    }

    /// A random live id among `handles`, if any.
    fn random_live(rng: &mut crate::rng::Rng, handles: &[Option<Handle<u32, u8>>]) -> Option<usize> {
        let live = handles.iter().filter(|h| h.is_some()).count();
        let n = rng.below(live.max(1) as u32) as usize;
        handles.iter().enumerate().filter(|(_, h)| h.is_some()).nth(n).map(|(id, _)| id)
    }

    #[test]
    fn peak_remembers_the_most_live_slots() {
        let mut p: IndexPool<u32, u8, 8> = IndexPool::with_id(0);
        let a = p.alloc(1).unwrap();
        let b = p.alloc(2).unwrap();
        p.free(a).unwrap();
        p.alloc(3).unwrap();
        p.free(b).unwrap();
        assert_eq!((p.len(), p.peak()), (1, 2));
        assert_eq!(p.check(), Ok(()));
    }
}
