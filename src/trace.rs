//! Allocation tracing: with the cargo feature `alloc-trace`, every allocate and free the game reports here is
//! a line in mGBA's log; without it (the default) these functions are empty and inline to nothing, so the
//! allocators' ARM fast paths are the same code either way.
//!
//! Call them beside the allocator, after it answers (`enemy::Scratch` does for the heap):
//! ```ignore
//! let r = stackshot_alloc::iwram::pool_alloc(pool, value);
//! trace::pool_alloc(pool.id(), &r);
//! ```
//! The lines read `alloc-trace: heap alloc 40 B align 4 -> 0x03001088`, `alloc-trace: heap free 0x03001088 ->
//! ok`, `alloc-trace: pool 1 alloc -> 3` (or `-> full`), `alloc-trace: pool 1 free 3 -> DoubleFree` (pools by id).

use core::ptr::NonNull;
use stackshot_alloc::heap::HeapError;
use stackshot_alloc::pool::{Handle, PoolError};

/// A pool allocation in the pool with id `pool`: the handle it returned, or the value handed back when the pool
/// was full.
#[inline(always)]
pub fn pool_alloc<T, P>(pool: u8, result: &Result<Handle<T, u8, P>, T>) {
    #[cfg(feature = "alloc-trace")]
    match result {
        Ok(h) => stackshot_platform::info!("alloc-trace: pool {pool} alloc -> {}", h.index()),
        Err(_) => stackshot_platform::info!("alloc-trace: pool {pool} alloc -> full"),
    }
    #[cfg(not(feature = "alloc-trace"))]
    let _ = (pool, result);
}

/// A free of slot `index` in the pool with id `pool`, and its outcome.
#[inline(always)]
pub fn pool_free(pool: u8, index: usize, result: Result<(), PoolError>) {
    #[cfg(feature = "alloc-trace")]
    match result {
        Ok(()) => stackshot_platform::info!("alloc-trace: pool {pool} free {index} -> ok"),
        Err(e) => stackshot_platform::info!("alloc-trace: pool {pool} free {index} -> {e:?}"),
    }
    #[cfg(not(feature = "alloc-trace"))]
    let _ = (pool, index, result);
}

/// A heap allocation of `size` bytes aligned to `align`, and what it returned.
#[inline(always)]
pub fn heap_alloc(size: usize, align: usize, result: Result<NonNull<u8>, HeapError>) {
    #[cfg(feature = "alloc-trace")]
    match result {
        Ok(p) => {
            stackshot_platform::info!("alloc-trace: heap alloc {size} B align {align} -> {:#010x}", p.as_ptr() as usize)
        }
        Err(e) => stackshot_platform::info!("alloc-trace: heap alloc {size} B align {align} -> {e:?}"),
    }
    #[cfg(not(feature = "alloc-trace"))]
    let _ = (size, align, result);
}

/// A heap free of `ptr`, and its outcome.
#[inline(always)]
pub fn heap_free(ptr: NonNull<u8>, result: Result<(), HeapError>) {
    #[cfg(feature = "alloc-trace")]
    match result {
        Ok(()) => stackshot_platform::info!("alloc-trace: heap free {:#010x} -> ok", ptr.as_ptr() as usize),
        Err(e) => stackshot_platform::info!("alloc-trace: heap free {:#010x} -> {e:?}", ptr.as_ptr() as usize),
    }
    #[cfg(not(feature = "alloc-trace"))]
    let _ = (ptr, result);
}
