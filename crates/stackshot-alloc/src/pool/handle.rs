//! Typed slot handles for [`IndexPool`](super::IndexPool) and [`FlagPool`](super::FlagPool).

use core::fmt;
use core::marker::PhantomData;

/// A slot index of a pool of `T`, tagged with the pool's id.
///
/// Only pools create handles (or [`Handle::from_raw`]); the pool checks the id and the index on every use,
/// so a handle from another pool or of a freed slot is reported, not trusted. `T` makes a bullet handle and a
/// sprite handle different types; `I` is the pool's index type, so a `u8` pool's handle is two bytes.
pub struct Handle<T, I> {
    index: I,
    pool: u8,
    _of: PhantomData<fn() -> T>,
}

impl<T, I: Copy> Handle<T, I> {
    /// The handle of slot `index` in the pool with id `pool`, e.g. read back from save data or forged by a
    /// test; using it on a pool checks both.
    #[inline(always)]
    pub const fn from_raw(index: I, pool: u8) -> Self {
        Handle { index, pool, _of: PhantomData }
    }

    /// The slot index.
    #[inline(always)]
    pub const fn index(self) -> I {
        self.index
    }

    /// The id of the pool that made this handle.
    #[inline(always)]
    pub const fn pool(self) -> u8 {
        self.pool
    }
}

// Written out because derives would require `T: Clone` etc. although no `T` is stored.
impl<T, I: Copy> Clone for Handle<T, I> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, I: Copy> Copy for Handle<T, I> {}

impl<T, I: PartialEq> PartialEq for Handle<T, I> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.pool == other.pool
    }
}

impl<T, I: Eq> Eq for Handle<T, I> {}

impl<T, I: fmt::Debug> fmt::Debug for Handle<T, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({:?}@{})", self.index, self.pool)
    }
}
