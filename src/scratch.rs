//! The AI scratch heap's fast paths: the tree-heap's allocate and free as ARM code in IWRAM.

use core::ptr::NonNull;
use stackshot_alloc::heap::{Heap, HeapError};

/// [`Heap::alloc`], as ARM code in IWRAM.
#[unsafe(link_section = ".iwram.heap_alloc")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn heap_alloc(heap: &mut Heap, size: usize, align: usize) -> Result<NonNull<u8>, HeapError> {
    heap.alloc(size, align)
}

/// [`Heap::free`], as ARM code in IWRAM.
#[unsafe(link_section = ".iwram.heap_free")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn heap_free(heap: &mut Heap, ptr: NonNull<u8>) -> Result<(), HeapError> {
    heap.free(ptr)
}
