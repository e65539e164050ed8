//! The benchmark's global allocator, which `slab` and `thunderdome` need for their storage: our tree-heap over
//! 4 KB of IWRAM, like their peers' data, reached directly. Not a `LockedHeap`: with the crate's `iwram` feature
//! (the ARM build) its allocate and free call the heap's ARM functions in IWRAM, whose 2.4 KB the ARM build's
//! stack cannot spare; and this allocator is never timed (their storage is reserved before any measurement).

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::{self, NonNull};
use stackshot_alloc::heap::Heap;

/// The bare heap, installed once by [`Global::init`].
pub struct Global(UnsafeCell<Option<Heap<'static>>>);

// SAFETY: the benchmark runs on one core with interrupts off (no handler is installed), so no two calls into
// the heap overlap.
unsafe impl Sync for Global {}

impl Global {
    pub const fn new() -> Global {
        Global(UnsafeCell::new(None))
    }

    /// Installs `heap`; once, before anything allocates.
    pub fn init(&self, heap: Heap<'static>) {
        // SAFETY: see `Sync`: no other reference to the slot is live during this call.
        let slot = unsafe { &mut *self.0.get() };
        assert!(slot.is_none(), "the global allocator was set up twice");
        *slot = Some(heap);
    }

    /// The bytes allocated now.
    pub fn used(&self) -> usize {
        // SAFETY: as in `init`.
        let slot = unsafe { &*self.0.get() };
        slot.as_ref().expect("the global heap is set up").stats().used_bytes as usize
    }
}

// SAFETY: the heap hands each block to one allocation at a time, aligned as asked, inside its region (static
// IWRAM, for the whole program), and only these two methods reach it.
unsafe impl GlobalAlloc for Global {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see `Sync`: no other reference to the heap is live during this call.
        let heap = unsafe { &mut *self.0.get() };
        heap.as_mut().and_then(|h| h.alloc(layout.size(), layout.align()).ok()).map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: as in `alloc`.
        let heap = unsafe { &mut *self.0.get() };
        if let (Some(h), Some(p)) = (heap.as_mut(), NonNull::new(ptr)) {
            // A refused free would be a bug of the caller; the heap counts it and stays intact.
            let _ = h.free(p);
        }
    }
}
