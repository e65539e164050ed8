//! [`GlobalHeap`]: a heap with its own region, ready to be a program's `#[global_allocator]` in three lines:
//!
//! ```ignore
//! use stackshot_alloc::{heap::GlobalHeap, irq::IrqLock};
//! #[global_allocator]
//! static HEAP: GlobalHeap<IrqLock, 4096> = GlobalHeap::new();
//! ```
//!
//! The heap is set up by the first allocation, so code that allocates before `main` (std on the host, a
//! runtime's start-up) finds it working.

use super::{Heap, LockedHeap, Stats};
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use lock_api::RawMutex;

/// `N` bytes of region (8-aligned) and a [`LockedHeap`] over it, set up on first use. Meant to be a `static`:
/// its region must not move once allocated from, and a static never moves.
pub struct GlobalHeap<L: RawMutex, const N: usize> {
    region: UnsafeCell<Region<N>>,
    heap: LockedHeap<'static, L>,
}

#[repr(align(8))]
struct Region<const N: usize>([MaybeUninit<u8>; N]);

// SAFETY: the region is reached only through the heap, whose every access holds the lock (see LockedHeap's
// Sync); setting the heap up happens inside that lock too.
unsafe impl<L: RawMutex + Sync, const N: usize> Sync for GlobalHeap<L, N> {}

impl<L: RawMutex, const N: usize> Default for GlobalHeap<L, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<L: RawMutex, const N: usize> GlobalHeap<L, N> {
    pub const fn new() -> Self {
        GlobalHeap { region: UnsafeCell::new(Region([MaybeUninit::uninit(); N])), heap: LockedHeap::new() }
    }

    /// The adapter inside, set up now if no allocation did it yet: for [`LockedHeap::with`] (stats, check),
    /// [`LockedHeap::boxed`] and [`LockedHeap::reset_peak`].
    pub fn heap(&self) -> &LockedHeap<'static, L> {
        self.heap.init_with(|| self.make());
        &self.heap
    }

    fn make(&self) -> Option<Heap<'static>> {
        // SAFETY: the region is N bytes owned by self, which stays in place (a static); only the heap made here
        // ever accesses it, and it is made once: callers run this under the lock, only when no heap is in.
        unsafe { Heap::from_raw(self.region.get().cast(), N) }.ok()
    }

    /// The heap's statistics (all zero before first use if the region is too small for a heap).
    pub fn stats(&self) -> Option<Stats> {
        self.heap().with(|h| h.stats()).ok()
    }
}

// SAFETY: forwarded to LockedHeap's GlobalAlloc, whose guarantees hold for the heap made over self's region.
unsafe impl<L: RawMutex, const N: usize> GlobalAlloc for GlobalHeap<L, N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.heap.alloc_or_init(layout, || self.make()).map_or(core::ptr::null_mut(), |p| p.as_ptr())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.heap.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        unsafe { self.heap.realloc(ptr, layout, new_size) }
    }
}
