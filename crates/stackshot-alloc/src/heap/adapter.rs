//! [`LockedHeap`]: a [`Heap`] behind `&self`, for `core::alloc::Allocator` (`Box::new_in`,
//! `Vec::with_capacity_in`) and `GlobalAlloc` (`#[global_allocator]`).
//!
//! The "lock" is a busy flag, not an atomic: it is for a single-core machine (the GBA) where interrupt
//! handlers do not allocate. A call that finds the flag set (re-entry) fails like a full heap instead of
//! corrupting the heap.

use super::Heap;
use core::alloc::{AllocError, Allocator, GlobalAlloc, Layout};
use core::cell::{Cell, UnsafeCell};
use core::ptr::{self, NonNull};

/// A heap usable through a shared reference: `static HEAP: LockedHeap<'static> = LockedHeap::new();` then
/// `HEAP.init(heap)` once at start-up.
pub struct LockedHeap<'a> {
    heap: UnsafeCell<Option<Heap<'a>>>,
    busy: Cell<bool>,
}

// SAFETY: the GBA has one core, and the heap must not be used from interrupt handlers (documented above), so
// two calls never overlap except by re-entry from inside a call, which `busy` turns away before any access.
unsafe impl Sync for LockedHeap<'_> {}

impl Default for LockedHeap<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> LockedHeap<'a> {
    /// An adapter with no heap yet: every request fails until [`init`](Self::init).
    pub const fn new() -> Self {
        LockedHeap { heap: UnsafeCell::new(None), busy: Cell::new(false) }
    }

    /// Installs `heap` if none is installed yet; otherwise hands it back (allocations from the first heap would
    /// otherwise dangle).
    pub fn init(&self, heap: Heap<'a>) -> Result<(), Heap<'a>> {
        match self.with(|slot| slot.is_none()) {
            Some(true) => {}
            _ => return Err(heap),
        }
        self.with(|slot| *slot = Some(heap));
        Ok(())
    }

    /// Runs `f` on the installed heap; `None` if there is none or the heap is busy (re-entry).
    pub fn lock<R>(&self, f: impl FnOnce(&mut Heap<'a>) -> R) -> Option<R> {
        match self.with(|slot| slot.as_mut().map(f)) {
            Some(Some(r)) => Some(r),
            _ => None,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Option<Heap<'a>>) -> R) -> Option<R> {
        if self.busy.get() {
            return None;
        }
        self.busy.set(true);
        // SAFETY: `busy` was clear and is now set until we return, so this is the only reference to the
        // slot (single core, no use from interrupts: see the impl of Sync).
        let r = f(unsafe { &mut *self.heap.get() });
        self.busy.set(false);
        Some(r)
    }
}

// SAFETY: a returned block is `len` bytes (the size rounded up to whole blocks, all inside the region),
// aligned as asked, and stays valid and unaliased until freed: the heap hands each block to one allocation at
// a time and the region is borrowed for 'a, as long as the adapter exists. The adapter is not Clone.
unsafe impl Allocator for LockedHeap<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            // Zero-size blocks need no memory: an aligned dangling pointer, as `Layout` allows.
            // SAFETY: an alignment is never zero.
            let p = unsafe { NonNull::new_unchecked(ptr::without_provenance_mut(layout.align())) };
            return Ok(NonNull::slice_from_raw_parts(p, 0));
        }
        match self.lock(|h| h.alloc(layout.size(), layout.align())) {
            Some(Ok(p)) => Ok(NonNull::slice_from_raw_parts(p, (layout.size() + 7) & !7)),
            _ => Err(AllocError),
        }
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // A refused free (a caller bug) leaves the heap intact and is counted in `Stats::bad_frees`.
            let _ = self.lock(|h| h.free(ptr));
        }
    }
}

// SAFETY: as for `Allocator`; a null return reports failure, as GlobalAlloc requires.
unsafe impl GlobalAlloc for LockedHeap<'_> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.lock(|h| h.alloc(layout.size(), layout.align())) {
            Some(Ok(p)) => p.as_ptr(),
            _ => ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            let _ = self.lock(|h| h.free(p));
        }
    }
}
