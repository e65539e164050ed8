//! The allocators' fast paths as ARM code in IWRAM, for programs on the GBA (with the feature `iwram` on an ARM
//! target; without it, e.g. for a build that is all Thumb code in ROM, or on the host, they are ordinary
//! functions).
//!
//! Code in ROM runs as Thumb through a 16-bit bus with wait states; ARM code in IWRAM runs at full speed. These
//! functions are the pool's and the heap's hot calls with `#[instruction_set(arm::a32)]` and an `.iwram.*`
//! link section, which the program's linker script must place in IWRAM (the `gba` crate's and agb's scripts
//! do). The allocators' methods are `#[inline(always)]`, so each function here is one straight piece of ARM
//! code that calls back into ROM only for the heap's rare paths (the tree's, merges with a tree neighbour, bad
//! and over-aligned requests: Thumb code in ROM, unless the feature `iwram-all` puts them in IWRAM too). Call
//! them from ARM code in IWRAM for full speed, or from Thumb code (a call through an interworking veneer, about
//! 50 cycles).
//!
//! For walks over a pool from ARM code use [`sweep!`](crate::sweep): closures would stay Thumb calls.

use crate::heap::{Heap, HeapError};
use crate::pool::{Handle, IndexPool, PoolError};
use core::ptr::NonNull;

/// [`IndexPool::alloc`] as ARM code in IWRAM: a pop from the free stack. `Err(value)` when the pool is full.
#[cfg_attr(
    all(feature = "iwram", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.pool_alloc")
)]
#[inline(never)]
pub fn pool_alloc<T, const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<T, u8, N, P, ID>,
    value: T,
) -> Result<Handle<T, u8, P>, T> {
    pool.alloc(value)
}

/// [`IndexPool::free`] as ARM code in IWRAM: a push onto the free stack; `Err` for a double free, a stale handle, a handle
/// of another pool or an index out of range, with the pool unchanged.
#[cfg_attr(
    all(feature = "iwram", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.pool_free")
)]
#[inline(never)]
pub fn pool_free<T, const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<T, u8, N, P, ID>,
    handle: Handle<T, u8, P>,
) -> Result<T, PoolError> {
    pool.free(handle)
}

/// [`IndexPool::get_mut`] as ARM code in IWRAM.
#[cfg_attr(
    all(feature = "iwram", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.pool_get_mut")
)]
#[inline(never)]
pub fn pool_get_mut<T, const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<T, u8, N, P, ID>,
    handle: Handle<T, u8, P>,
) -> Result<&mut T, PoolError> {
    pool.get_mut(handle)
}

/// [`Heap::alloc`] as ARM code in IWRAM (alignments above 8 go on to `alloc_aligned`, in IWRAM too).
#[cfg_attr(
    all(feature = "iwram", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.heap_alloc")
)]
#[inline(never)]
pub fn heap_alloc(heap: &mut Heap, size: usize, align: usize) -> Result<NonNull<u8>, HeapError> {
    heap.alloc(size, align)
}

/// [`Heap::free`] as ARM code in IWRAM.
#[cfg_attr(
    all(feature = "iwram", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.heap_free")
)]
#[inline(never)]
pub fn heap_free(heap: &mut Heap, ptr: NonNull<u8>) -> Result<(), HeapError> {
    heap.free(ptr)
}

/// Zeroes the `blocks` 8-byte blocks from `dst`, as ARM code in IWRAM: the heap owner's zeroed runs
/// ([`LockedHeap::boxed_slice_zeroed`](crate::heap::LockedHeap::boxed_slice_zeroed)), two word stores a block.
/// The stores are volatile so that the compiler keeps the loop here rather than calling `memset`, which on the
/// GBA is Thumb code in ROM.
///
/// # Safety
/// `dst` must be 8-aligned and valid for writing `blocks` blocks.
#[cfg_attr(
    all(feature = "iwram", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.zero_blocks")
)]
#[inline(never)]
pub unsafe fn zero_blocks(dst: *mut [u32; 2], blocks: usize) {
    let mut i = 0;
    while i < blocks {
        // SAFETY: i < blocks, and the caller promises `dst..dst + blocks` is aligned and writable.
        unsafe {
            let block = dst.add(i).cast::<u32>();
            block.write_volatile(0);
            block.add(1).write_volatile(0);
        }
        i += 1;
    }
}
