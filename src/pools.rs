//! The fast paths of the game's byte-index pools (bullets, particles): allocate, free and look up in an
//! [`IndexPool`] with `u8` indices, as ARM code in IWRAM. Generic over the object and the capacity; every
//! instantiation is placed in IWRAM, and the pool's `#[inline(always)]` methods inline whole into it. With the
//! `alloc-trace` feature each call is also logged (`src/trace.rs`); without it the trace calls are empty.

use stackshot_alloc::pool::{Handle, IndexPool, PoolError};

/// [`IndexPool::alloc`] as ARM code in IWRAM: a pop from the free stack. `None` when the pool is full.
#[unsafe(link_section = ".iwram.pool_alloc")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn pool_alloc<T, const N: usize>(pool: &mut IndexPool<T, u8, N>, value: T) -> Option<Handle<T, u8>> {
    let handle = pool.alloc(value);
    // Only under the feature: even an empty call's argument would change the code of the fast path.
    #[cfg(feature = "alloc-trace")]
    crate::trace::pool_alloc(pool.id(), handle.map(|h| usize::from(h.index())));
    handle
}

/// [`IndexPool::free`] as ARM code in IWRAM: a push onto the free stack; `Err` for a double free, a handle of
/// another pool or an index out of range, with the pool unchanged.
#[unsafe(link_section = ".iwram.pool_free")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn pool_free<T, const N: usize>(pool: &mut IndexPool<T, u8, N>, handle: Handle<T, u8>) -> Result<T, PoolError> {
    let result = pool.free(handle);
    #[cfg(feature = "alloc-trace")]
    crate::trace::pool_free(pool.id(), usize::from(handle.index()), result.as_ref().map(|_| ()).map_err(|e| *e));
    result
}

/// [`IndexPool::get_mut`] as ARM code in IWRAM.
#[unsafe(link_section = ".iwram.pool_get_mut")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn pool_get_mut<T, const N: usize>(
    pool: &mut IndexPool<T, u8, N>,
    handle: Handle<T, u8>,
) -> Result<&mut T, PoolError> {
    pool.get_mut(handle)
}
