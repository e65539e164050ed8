//! Typed slot handles for [`IndexPool`](super::IndexPool) and [`FlagPool`](super::FlagPool).

use core::fmt;
use core::marker::PhantomData;
use core::mem::size_of;

use super::Index;

/// A slot of a pool of `T`: its index, the slot's generation when the handle was made, and the pool's id.
///
/// Only pools create handles (or [`Handle::from_raw`]); an [`IndexPool`](super::IndexPool) checks the id, the
/// index and the generation on every use (the [`FlagPool`](super::FlagPool) baseline checks the id and the index
/// only: its handles have generation 0 and no tag), so a handle of another pool, of a freed slot or of a slot freed and allocated again since (a stale
/// handle) is reported, not trusted. `T` makes a bullet handle and a sprite handle different types; `I` is the
/// pool's index type; `P` is the pool's tag ([`IndexPool`](super::IndexPool)'s last parameter), so that two
/// pools of the same `T` given different tags cannot take each other's handles: a compile error, not a run-time
/// check.
///
/// One `u32`, loaded and compared in one go: the index in the low half, the stamp in the high half (the
/// generation in its high byte, the pool id in its low byte), which the pool compares with the slot's stamp.
pub struct Handle<T, I, P = ()> {
    raw: u32,
    _of: PhantomData<Of<T, I, P>>,
}

/// What a handle is of, for its `PhantomData`: covariant, and `Send`/`Sync` whatever `T` is (no `T` is held).
type Of<T, I, P> = fn() -> (T, I, P);

impl<T, I: Index, P> Handle<T, I, P> {
    /// The handle of slot `index` in its `generation` in the pool with id `pool`, e.g. read back from save data
    /// or forged by a test; using it on a pool checks all three.
    #[inline(always)]
    pub const fn from_raw(index: I, generation: u8, pool: u8) -> Self {
        Handle::from_stamp(index, (generation as u16) << 8 | pool as u16)
    }

    /// The handle of slot `index` with the slot's stamp: generation `<< 8 |` pool id.
    #[inline(always)]
    pub(crate) const fn from_stamp(index: I, stamp: u16) -> Self {
        // Read as its integer type, as `Index::to_usize` would (a `const fn` cannot call a trait method).
        let p = &raw const index;
        // SAFETY: `I` is sealed to `u8` and `u16`, so `index` is an initialised integer of that size.
        let index = unsafe { if size_of::<I>() == 1 { *p.cast::<u8>() as u32 } else { *p.cast::<u16>() as u32 } };
        Handle { raw: index | (stamp as u32) << 16, _of: PhantomData }
    }

    /// The handle whose bits are `raw`: the index in the low half, the stamp in the high half.
    #[inline(always)]
    pub(crate) const fn from_bits(raw: u32) -> Self {
        Handle { raw, _of: PhantomData }
    }

    /// The handle's bits, as [`from_bits`](Self::from_bits) takes them: a pool compares them with a slot's word
    /// in one go.
    #[inline(always)]
    pub(crate) const fn bits(self) -> u32 {
        self.raw
    }

    /// The slot index.
    #[inline(always)]
    pub fn index(self) -> I {
        I::from_usize(self.raw as u16 as usize)
    }

    /// The slot's generation when this handle was made: how many times the slot had been allocated, modulo 256.
    #[inline(always)]
    pub const fn generation(self) -> u8 {
        (self.raw >> 24) as u8
    }

    /// The id of the pool that made this handle.
    #[inline(always)]
    pub const fn pool(self) -> u8 {
        (self.raw >> 16) as u8
    }
}

// Written out because derives would require `T: Clone` etc. although no `T` is stored.
impl<T, I, P> Clone for Handle<T, I, P> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, I, P> Copy for Handle<T, I, P> {}

impl<T, I, P> PartialEq for Handle<T, I, P> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<T, I, P> Eq for Handle<T, I, P> {}

impl<T, I: Index, P> fmt::Debug for Handle<T, I, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({:?}g{}@{})", self.index(), self.generation(), self.pool())
    }
}
