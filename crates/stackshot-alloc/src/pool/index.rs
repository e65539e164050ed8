//! The index pool: a permutation of `u8`/`u16` slot indices, partitioned into live and free slots, so that
//! live slots can be walked; its all-zero state is the empty pool.

use core::marker::PhantomData;
use core::mem::{MaybeUninit, size_of};

use super::{CheckError, Handle, Pool, PoolError};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

/// A slot index type: `u8` for pools of up to 256 slots, `u16` for up to 65,536. Sealed: the pool relies on
/// these being exactly `u8` and `u16` (an all-zero table of them is valid, and one fits a slot word's low half).
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

/// Where a slot word's link lives, counted in `I`s from the word's start: its lowest-addressed bytes on a
/// little-endian target, its highest on a big-endian one.
const fn link_offset<I>() -> usize {
    if cfg!(target_endian = "little") { 0 } else { size_of::<u32>() / size_of::<I>() - 1 }
}

/// A pool of up to `N` values of `T` numbered by `I` (`u8`: `N <= 256`, `u16`: `N <= 65,536`), tagged `P`,
/// whose handles carry pool id `ID` unless [`with_id`](IndexPool::with_id) gave another.
///
/// The slots form a permutation, held twice: by position (`stack`) and by slot (the low half of each slot's
/// word, `meta`). Positions `..live` hold the live slots, `live..` the free ones; allocate takes the slot at
/// position `live`, and free swaps the freed slot to position `live - 1` and shrinks the live part, so all four
/// operations are O(1) with no search and the live slots are walked in O(live) (in no particular order). Both
/// tables store, for the slot `i` at position `k`, the *link* `i ^ k`, in `stack[k]` and in `meta[i]`'s low
/// half: so an all-zero table is the identity permutation, and one XOR with the position gives the slot, or
/// with the slot the position. The high half of `meta[i]` is slot `i`'s stamp XOR `ID << 8`: its generation,
/// the count of its allocations modulo 256, in the high byte, and the pool's id XOR `ID` in the low byte.
/// Every handle carries the index and stamp of its allocation, laid out as the slot's word is, so one XOR of
/// the two and one compare with `live` refuse a handle that outlived its object ([`PoolError::Stale`]), belongs
/// to another pool ([`PoolError::ForeignHandle`]) or names a free slot (a double free). Bookkeeping:
/// `size_of::<I>() + 4` bytes a slot. Invariants IX1-IX5 (module docs).
///
/// All zeros is the empty pool with id `ID`, which [`new`](IndexPool::new) builds: a `static` of it (of any
/// capacity) needs no bytes in ROM and no copy at boot, as it goes to `.bss`, which the start-up code zeroes.
/// A pool from `with_id(id)` with `id != ID` stores `id ^ ID` in every slot's word, so as a `static` it is
/// initialised data, copied from ROM.
///
/// `P` is the pool's tag, a type of the user's (`struct EnemyShots;`), carried by its handles: two pools of
/// the same `T` with different tags cannot take each other's handles (a compile error). Pools that share a
/// tag (an array of pools) tell their handles apart at run time by their ids.
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
pub struct IndexPool<T, I: Index, const N: usize, P = (), const ID: u8 = 0> {
    /// By position: `stack[k]` is the link `i ^ k` of the slot `i` at position `k` (IX2).
    stack: [I; N],
    /// By slot: `(stamp ^ ID << 8) << 16 |` link, the link in the word's low `size_of::<I>()` bytes and the
    /// rest of the low half zero (IX2, IX5).
    meta: [u32; N],
    slots: [MaybeUninit<T>; N],
    /// The number of live slots, which sit at positions `..live` (IX1, IX3).
    live: usize,
    /// The most slots ever live at once; positions `peak..` hold slots never allocated (IX4).
    peak: usize,
    _tag: PhantomData<fn() -> P>,
}

impl<T, I: Index, const N: usize, P, const ID: u8> IndexPool<T, I, N, P, ID> {
    /// What XORs a stored slot word into the handle layout (and back): the stamp's id byte stored as `id ^ ID`.
    const FLIP: u32 = (ID as u32) << 16;

    /// An empty pool whose handles carry id `ID`: all zeros, so a `static` of it costs no ROM and no copy at
    /// boot (see the type's docs).
    pub const fn new() -> Self {
        Self::with_id(ID)
    }

    /// An empty pool whose handles carry `id`: for pools with the same tag that could meet each other's
    /// handles, so that the run-time check refuses them ([`PoolError::ForeignHandle`]). Unless `id == ID`, its
    /// slot words are not zero: as a `static` it is initialised data (`ID`, the type's, costs nothing).
    pub const fn with_id(id: u8) -> Self {
        const { assert!(N > 0 && N <= I::MAX_SLOTS, "IndexPool: N must be 1..=I::MAX_SLOTS") };
        IndexPool {
            // SAFETY: `I` is sealed to `u8` and `u16`, for which all zeros is a value (every link 0: IX2).
            stack: unsafe { MaybeUninit::zeroed().assume_init() },
            meta: [((id ^ ID) as u32) << 16; N],
            slots: [const { MaybeUninit::uninit() }; N],
            live: 0,
            peak: 0,
            _tag: PhantomData,
        }
    }

    /// The number of slots.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// The most slots that were ever live at once.
    pub const fn peak(&self) -> usize {
        self.peak
    }

    /// This pool's id, carried by its handles.
    pub const fn id(&self) -> u8 {
        (self.meta[0] >> 16) as u8 ^ ID
    }

    /// The number of live values.
    pub const fn len(&self) -> usize {
        self.live
    }

    /// True when nothing is allocated.
    pub const fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// True when `alloc` would hand its value back.
    pub const fn is_full(&self) -> bool {
        self.live == N
    }

    /// The slot at position `k`.
    ///
    /// # Safety
    /// `k < N`.
    #[inline(always)]
    unsafe fn slot_at(&self, k: usize) -> usize {
        // SAFETY: `k < N` (caller).
        unsafe { self.stack.get_unchecked(k).to_usize() ^ k }
    }

    /// Slot `i`'s link (the low half of its word).
    ///
    /// # Safety
    /// `i < N`.
    #[inline(always)]
    unsafe fn link_of(&self, i: usize) -> usize {
        // SAFETY: `i < N` (caller).
        unsafe { (*self.meta.get_unchecked(i) & 0xFFFF) as usize }
    }

    /// Moves slot `i` from position `p` to position `at`, and the slot that was at `at` to `p`: writes the links
    /// of both into both tables, only the link bytes of the slot words.
    ///
    /// # Safety
    /// `i < N`, `p < N`, `at < N`, and slot `i` is at position `p`.
    #[inline(always)]
    unsafe fn place(&mut self, i: usize, p: usize, at: usize) {
        // SAFETY: `p < N` and `at < N` (caller); the links make a permutation of `0..N` (IX2), so the slot
        // `j` at `at` is `< N`, and so is `i` (caller). The link is `size_of::<I>()` bytes of a `u32` at
        // `link_offset`, inside the slot's word, and any bytes there are a `u32`.
        unsafe {
            let j = self.slot_at(at);
            let (x, y) = (I::from_usize(i ^ at), I::from_usize(j ^ p));
            let links = self.meta.as_mut_ptr().cast::<I>();
            let per_word = size_of::<u32>() / size_of::<I>();
            *self.stack.get_unchecked_mut(at) = x;
            links.add(i * per_word + link_offset::<I>()).write(x);
            *self.stack.get_unchecked_mut(p) = y;
            links.add(j * per_word + link_offset::<I>()).write(y);
        }
    }

    /// Stores `value` in a free slot and returns its handle, or hands `value` back when the pool is full.
    #[inline(always)]
    pub fn alloc(&mut self, value: T) -> Result<Handle<T, I, P>, T> {
        let k = self.live;
        if k >= N {
            core::hint::cold_path();
            return Err(value);
        }
        self.live = k + 1;
        // SAFETY: `k < N`, so the slot at `k` is `< N` (IX2), and free (IX3): its value is not initialised.
        unsafe {
            let i = self.slot_at(k);
            let word = self.meta.get_unchecked_mut(i);
            // The live count only passes its peak when a slot never allocated is: one in generation 0 (or
            // whose count just wrapped), so the peak is only compared then (IX4).
            if *word < 1 << 24 {
                core::hint::cold_path();
                if k >= self.peak {
                    self.peak = k + 1;
                }
            }
            // The next generation: the high byte counts, its carry drops out; the id and the link stay.
            *word = word.wrapping_add(1 << 24);
            // The link is `i ^ k` (IX2), so XOR with `k` leaves the index beside the stamp: the handle.
            let handle = Handle::from_bits(*word ^ k as u32 ^ Self::FLIP);
            self.slots.get_unchecked_mut(i).write(value);
            Ok(handle)
        }
    }

    /// The slot index of `h` and its position, if it is a live slot of this pool in the handle's generation.
    #[inline(always)]
    fn live_index(&self, h: Handle<T, I, P>, freed: PoolError) -> Result<(usize, usize), PoolError> {
        let i = h.index().to_usize();
        if i >= N {
            return Err(PoolError::OutOfRange);
        }
        // SAFETY: `i < N` was checked above.
        let word = unsafe { *self.meta.get_unchecked(i) };
        // The high half: the stamps' difference; the low half: the link XOR the index, the slot's position
        // (IX2). Below `live` only if both stamps agree and the slot is live (IX3): one compare for both.
        let at = (word ^ h.bits() ^ Self::FLIP) as usize;
        if at >= self.live {
            core::hint::cold_path();
            let differ = at >> 16;
            return Err(if differ == 0 {
                freed
            } else if differ as u8 != 0 {
                PoolError::ForeignHandle
            } else {
                PoolError::Stale
            });
        }
        Ok((i, at))
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
            // SAFETY: `live_index` returned a live slot `< N` and its position.
            Ok((i, p)) => Ok(unsafe { self.free_live(i, p) }),
            Err(e) => Err(e),
        }
    }

    /// Frees live slot `i`, at position `p`, and returns its value.
    ///
    /// # Safety
    /// `i < N`, slot `i` is live and at position `p`.
    #[inline(always)]
    unsafe fn free_live(&mut self, i: usize, p: usize) -> T {
        let last = self.live - 1;
        // SAFETY: slot `i` is live (caller), so `p < live <= N` (IX1, IX3) and `last < N`. `last` is the highest
        // live position; moving `i` there and shrinking the live part keeps `..live` the live slots (IX3).
        unsafe { self.place(i, p, last) };
        self.live = last;
        // SAFETY: slot `i` was live, so initialised (IX3); it is now free, so nothing reads it again.
        unsafe { self.slots.get_unchecked(i).assume_init_read() }
    }

    /// The handle of the slot at position `k`, in its current generation.
    ///
    /// # Safety
    /// `k < N`.
    #[inline(always)]
    unsafe fn handle_at(&self, k: usize) -> Handle<T, I, P> {
        // SAFETY: `k < N` (caller), so the slot there is `< N` (IX2).
        unsafe { Handle::from_bits(*self.meta.get_unchecked(self.slot_at(k)) ^ k as u32 ^ Self::FLIP) }
    }

    /// The value of live handle `h`; `Err(Dangling)` if its slot is free, `Err(Stale)` if it was allocated
    /// again since.
    #[inline(always)]
    pub fn get(&self, h: Handle<T, I, P>) -> Result<&T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and slot `i` is live, so initialised (IX3).
            Ok((i, _)) => Ok(unsafe { self.slots.get_unchecked(i).assume_init_ref() }),
            Err(e) => Err(e),
        }
    }

    /// The value of live handle `h`, mutably; errors as [`get`](Self::get).
    #[inline(always)]
    pub fn get_mut(&mut self, h: Handle<T, I, P>) -> Result<&mut T, PoolError> {
        match self.live_index(h, PoolError::Dangling) {
            // SAFETY: `i < N` and slot `i` is live, so initialised (IX3).
            Ok((i, _)) => Ok(unsafe { self.slots.get_unchecked_mut(i).assume_init_mut() }),
            Err(e) => Err(e),
        }
    }

    /// A walk over the live objects that can free and allocate as it goes (see [`Sweep`]): `retain` without a
    /// closure, for ARM code in IWRAM, which inlines this walk but not a Thumb closure.
    #[inline(always)]
    pub fn sweep(&mut self) -> Sweep<'_, T, I, N, P, ID> {
        Sweep { next: self.live, current: N, pool: self }
    }

    /// The live values with their handles, in O(live), in the order a [`sweep`](Self::sweep) meets them.
    pub fn iter(&self) -> Iter<'_, T, I, P> {
        Iter {
            stack: &self.stack[..self.live],
            meta: &self.meta,
            slots: self.slots.as_ptr(),
            flip: Self::FLIP,
            _p: PhantomData,
            _tag: PhantomData,
        }
    }

    /// The free slots in the order `alloc` will hand them out (the most recently freed first), in O(free): for
    /// debug views and tests.
    pub fn free_slots(&self) -> impl Iterator<Item = I> + '_ {
        (self.live..N).map(|k| I::from_usize(self.stack[k].to_usize() ^ k))
    }

    /// The live values with their handles, mutably, in O(live).
    pub fn iter_mut(&mut self) -> IterMut<'_, T, I, P> {
        let slots = self.slots.as_mut_ptr();
        IterMut {
            stack: &self.stack[..self.live],
            meta: &self.meta,
            slots,
            flip: Self::FLIP,
            _p: PhantomData,
            _tag: PhantomData,
        }
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
        if self.live > N || self.peak > N {
            return Err(CheckError::CountTooLarge);
        }
        if self.peak < self.live {
            return Err(CheckError::PeakBelowLive);
        }
        let mut k = 0;
        while k < N {
            let link = self.stack[k].to_usize();
            let slot = link ^ k;
            if slot >= N {
                return Err(CheckError::EntryOutOfRange { at: k });
            }
            if (self.meta[slot] & 0xFFFF) as usize != link {
                return Err(CheckError::PosMismatch { slot });
            }
            if k >= self.peak && self.meta[slot] >> 24 != 0 {
                return Err(CheckError::PeakBelowLive);
            }
            if (self.meta[slot] >> 16) as u8 != (self.meta[0] >> 16) as u8 {
                return Err(CheckError::IdMismatch { slot });
            }
            k += 1;
        }
        Ok(())
    }
}

impl<T, I: Index, const N: usize, P, const ID: u8> Pool for IndexPool<T, I, N, P, ID> {
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

impl<T, I: Index, const N: usize, P, const ID: u8> Default for IndexPool<T, I, N, P, ID> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, I: Index, const N: usize, P, const ID: u8> Drop for IndexPool<T, I, N, P, ID> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            // Every live value, going on past one whose `drop` panics.
            super::drop_each(0, self.live, &mut |k| {
                let i = self.stack[k].to_usize() ^ k;
                // SAFETY: live slots are initialised (IX3) and each is dropped once: the links make a permutation
                // (IX2), and `drop_each` visits each position once.
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
/// How: the walk goes down the live positions. Positions `..next` are the objects still to meet, `next..live`
/// those met (and those allocated during the walk, which `alloc` puts at `live`). `free` swaps the freed slot
/// with the highest live one, at `live - 1`, which the walk has met, so the split holds; freeing an object not
/// yet met first moves it to `next - 1` and counts that position as met.
pub struct Sweep<'a, T, I: Index, const N: usize, P = (), const ID: u8 = 0> {
    pool: &'a mut IndexPool<T, I, N, P, ID>,
    next: usize,
    /// The slot of the object `next` returned last, while it is live: what `free_current` frees. `N`: none.
    current: usize,
}

impl<T, I: Index, const N: usize, P, const ID: u8> Sweep<'_, T, I, N, P, ID> {
    /// The next object not yet met, with its handle, or `None` when all have been met.
    #[inline(always)]
    #[allow(clippy::should_implement_trait, reason = "the value borrows the walk, which `Iterator` cannot express")]
    pub fn next(&mut self) -> Option<(Handle<T, I, P>, &mut T)> {
        if self.next == 0 {
            return None;
        }
        let k = self.next - 1;
        self.next = k;
        // SAFETY: `k < next <= live <= N` (`next` starts at `live`, and `live` never falls below it: frees swap
        // with met positions), so the slot at `k` is live and initialised (IX3) and `< N` (IX2).
        unsafe {
            let i = self.pool.slot_at(k);
            self.current = i;
            let h = self.pool.handle_at(k);
            Some((h, self.pool.slots.get_unchecked_mut(i).assume_init_mut()))
        }
    }

    /// Frees `h`'s slot and returns its value, as [`IndexPool::free`] (with the same errors); the walk goes
    /// on without meeting it.
    #[inline(always)]
    #[allow(clippy::question_mark, reason = "hot path: plain `match`, no `Try` trait calls from core")]
    pub fn free(&mut self, h: Handle<T, I, P>) -> Result<T, PoolError> {
        let (i, mut p) = match self.pool.live_index(h, PoolError::DoubleFree) {
            Ok(found) => found,
            Err(e) => return Err(e),
        };
        if i == self.current {
            self.current = N;
        }
        // SAFETY: `live_index` checked `i < N`, and slot `i` is live at `p < live`; in the branch `next - 1`
        // is `>= p`, so `< N`.
        unsafe {
            if p < self.next {
                // Not met yet: move it to `next - 1`, counted as met, so that the slot `free_live` swaps into
                // its place, from `live - 1`, lands among the met ones.
                self.next -= 1;
                self.pool.place(i, p, self.next);
                p = self.next;
            }
            Ok(self.pool.free_live(i, p))
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
        // it, and nothing else frees during the walk; its position is its link XOR its index (IX2). It was met
        // (its position is at least `next`), so `free_live`'s swap keeps the met/not-met split (see the type's
        // docs).
        Some(unsafe {
            let p = self.pool.link_of(i) ^ i;
            self.pool.free_live(i, p)
        })
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

/// The next live slot of an iterator's remaining positions `stack`, taken from the top, with its handle.
#[inline]
fn next_live<I: Index, T, P>(stack: &mut &[I], meta: &[u32], flip: u32) -> Option<(Handle<T, I, P>, usize)> {
    let (&link, rest) = stack.split_last()?;
    *stack = rest;
    let k = rest.len();
    let i = link.to_usize() ^ k;
    Some((Handle::from_bits(meta[i] ^ k as u32 ^ flip), i))
}

/// Iterator over an [`IndexPool`]'s live values: `(handle, &value)`.
pub struct Iter<'a, T, I, P = ()> {
    /// The live positions not yet yielded: the pool's `stack[..k]`.
    stack: &'a [I],
    meta: &'a [u32],
    slots: *const MaybeUninit<T>,
    flip: u32,
    _p: PhantomData<&'a T>,
    _tag: PhantomData<fn() -> P>,
}

impl<'a, T, I: Index, P> Iterator for Iter<'a, T, I, P> {
    type Item = (Handle<T, I, P>, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (h, i) = next_live(&mut self.stack, self.meta, self.flip)?;
        // SAFETY: `stack` is a prefix of the pool's live positions, borrowed with the pool for `'a`: live
        // slots, `< N`, initialised (IX2, IX3).
        Some((h, unsafe { (*self.slots.add(i)).assume_init_ref() }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.stack.len(), Some(self.stack.len()))
    }
}

/// Iterator over an [`IndexPool`]'s live values: `(handle, &mut value)`.
pub struct IterMut<'a, T, I, P = ()> {
    /// The live positions not yet yielded: the pool's `stack[..k]`.
    stack: &'a [I],
    meta: &'a [u32],
    slots: *mut MaybeUninit<T>,
    flip: u32,
    _p: PhantomData<&'a mut T>,
    _tag: PhantomData<fn() -> P>,
}

impl<'a, T, I: Index, P> Iterator for IterMut<'a, T, I, P> {
    type Item = (Handle<T, I, P>, &'a mut T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (h, i) = next_live(&mut self.stack, self.meta, self.flip)?;
        // SAFETY: as in `Iter::next`, and the pool is mutably borrowed for `'a`; the links make a permutation
        // (IX2), so each slot is yielded once and the `&mut`s do not alias.
        Some((h, unsafe { (*self.slots.add(i)).assume_init_mut() }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.stack.len(), Some(self.stack.len()))
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
        p.meta[3] ^= 5;
        assert_eq!(p.check(), Err(CheckError::PosMismatch { slot: 3 }), "slot 3's link no longer names position 3");
        p.meta[3] ^= 5;
        p.stack[3] = 3 ^ 9;
        assert_eq!(p.check(), Err(CheckError::EntryOutOfRange { at: 3 }), "position 3 names slot 9 of 8");
        p.stack[3] = 0;
        assert_eq!(p.check(), Ok(()));
        p.peak = 0;
        assert_eq!(p.check(), Err(CheckError::PeakBelowLive));
        p.peak = 1;
        p.meta[5] ^= 1 << 16;
        assert_eq!(p.check(), Err(CheckError::IdMismatch { slot: 5 }));
        p.meta[5] ^= 1 << 16;
        p.live = 9;
        assert_eq!(p.check(), Err(CheckError::CountTooLarge));
        p.live = 1;
        p.peak = 9;
        assert_eq!(p.check(), Err(CheckError::CountTooLarge));
    }

    /// IX4's second half: the slots at and above the peak were never allocated.
    #[test]
    fn check_reports_an_allocated_slot_above_the_peak() {
        let mut p: IndexPool<u32, u8, 8> = IndexPool::new();
        let h = p.alloc(1).unwrap();
        p.free(h).unwrap();
        assert_eq!((p.live, p.peak, p.check()), (0, 1, Ok(())));
        // Slot 0 (allocated once) swapped up to position 7, above the peak: the permutation still holds.
        p.stack[0] = 7;
        p.stack[7] = 7;
        p.meta[0] ^= 7;
        p.meta[7] ^= 7;
        assert_eq!(p.check(), Err(CheckError::PeakBelowLive));
    }

    /// All zeros is the empty pool with the type's id: `new` is all zero bytes but for its slots (which it
    /// leaves uninitialised), and a zeroed pool behaves as `new`'s, refusing the handles of a pool whose type
    /// gives another id.
    #[test]
    fn the_empty_pool_is_all_zeros() {
        fn zero<T: Copy + Into<u32>>(table: &[T]) -> bool {
            table.iter().all(|&v| v.into() == 0)
        }
        let p: IndexPool<u32, u16, 1000, (), 7> = IndexPool::new();
        assert!(zero(&p.stack) && zero(&p.meta) && p.live == 0 && p.peak == 0);
        let other: IndexPool<u32, u16, 1000, (), 8> = IndexPool::new();
        assert!(zero(&other.stack) && zero(&other.meta));
        let unnumbered: IndexPool<u32, u8, 8> = IndexPool::new();
        assert!(zero(&unnumbered.stack) && zero(&unnumbered.meta));
        assert!(!zero(&IndexPool::<u32, u8, 8>::with_id(1).meta), "another id is stored in every slot's word");

        // SAFETY: every field of an `IndexPool` has all zeros as a value (the slots are `MaybeUninit`).
        let mut zeroed: IndexPool<u32, u16, 1000, (), 7> = unsafe { core::mem::zeroed() };
        // SAFETY: as above.
        let mut other: IndexPool<u32, u16, 1000, (), 8> = unsafe { core::mem::zeroed() };
        assert_eq!((zeroed.check(), zeroed.len(), zeroed.peak(), zeroed.id()), (Ok(()), 0, 0, 7));
        assert_eq!(other.id(), 8);
        let handles: [_; 3] = core::array::from_fn(|k| zeroed.alloc(k as u32).unwrap());
        assert_eq!(handles.map(|h| (h.index(), h.generation(), h.pool())), [(0, 1, 7), (1, 1, 7), (2, 1, 7)]);
        let theirs = other.alloc(9).unwrap();
        assert_eq!((theirs.index(), theirs.generation(), theirs.pool()), (0, 1, 8));
        assert_eq!(zeroed.free(theirs), Err(PoolError::ForeignHandle), "same index and generation, other id");
        assert_eq!(other.get(handles[0]), Err(PoolError::ForeignHandle));
        assert_eq!(zeroed.free(handles[1]), Ok(1));
        assert_eq!(zeroed.free(handles[1]), Err(PoolError::DoubleFree));
        assert_eq!(zeroed.alloc(5).map(|h| h.index()), Ok(1), "the slot just freed comes back first");
        assert_eq!((zeroed.check(), zeroed.len(), zeroed.peak()), (Ok(()), 3, 3));
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
