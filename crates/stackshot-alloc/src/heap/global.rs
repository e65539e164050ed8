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

use super::adapter::{alloc_in, free_in, zero_block};
use super::{Heap, LockedHeap, Stats};
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
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
    /// A heap of `N` bytes (16 to 512 KB), not set up yet: `const`, for a `static`.
    pub const fn new() -> Self {
        const { assert!(N >= 16 && N <= 512 * 1024, "a GlobalHeap's region is 16 bytes to 512 KB") };
        GlobalHeap { region: UnsafeCell::new(Region([MaybeUninit::uninit(); N])), heap: LockedHeap::new() }
    }

    /// The adapter inside, set up over this value's region: for [`LockedHeap::with`] (stats, check),
    /// [`LockedHeap::boxed`], `Vec::new_in` and [`LockedHeap::reset_peak`]. What it lends borrows `self`, so
    /// `self` cannot move while anything allocated through it lives.
    pub fn heap(&self) -> &LockedHeap<'static, L> {
        self.placed(|_| ());
        &self.heap
    }

    /// The heap's statistics; `None` only if the heap could not be set up.
    pub fn stats(&self) -> Option<Stats> {
        self.placed(|h| h.stats())
    }

    /// Runs `f` on the heap over this value's region, under the lock. The heap is set up first if there is none,
    /// or if the one installed was made where this value was before it moved (a `GlobalHeap` moved after its
    /// first use, which a `static` never is): that memory is not ours any more, so a fresh heap starts over
    /// here and nothing touches the old place. `None` if the region cannot hold a heap.
    fn placed<R>(&self, f: impl FnOnce(&mut Heap<'static>) -> R) -> Option<R> {
        let here = self.region.get().cast::<u8>();
        self.heap.locked(|slot| {
            if slot.as_ref().is_none_or(|h| !core::ptr::eq(h.base, here)) {
                // SAFETY: the region is N bytes inside self, where self is now; a heap made over it earlier (at
                // this same address) is replaced only when it is not over it, so at most one heap ever reaches
                // these bytes, and only under the lock. Anything allocated through `heap()` borrows self, so self
                // cannot have moved while it was live.
                *slot = unsafe { Heap::from_raw(here, N) }.ok();
            }
            slot.as_mut().map(f)
        })
    }
}

// SAFETY: every call reaches the heap through `placed`, so only a heap over self's region as it is now; blocks
// are handed out and taken back as by LockedHeap's GlobalAlloc.
unsafe impl<L: RawMutex, const N: usize> GlobalAlloc for GlobalHeap<L, N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.placed(|h| alloc_in(h, layout.size(), layout.align()).ok())
            .flatten()
            .map_or(ptr::null_mut(), |p| p.as_ptr())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        let p = unsafe { self.alloc(layout) };
        if let Some(block) = NonNull::new(p) {
            // SAFETY: a fresh block of at least `layout.size()` bytes.
            unsafe { zero_block(block, layout.size()) };
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // A refused free (a caller bug) leaves the heap intact and is counted in `Stats::bad_frees`.
            self.placed(|h| free_in(h, p));
        }
    }

    /// In place when the heap can (`Heap::resize_or_move`), else allocate, copy and free through `alloc` and `dealloc`
    /// (with the `iwram` feature, calls of `iwram::heap_alloc` and `heap_free`); null, with nothing read or
    /// freed, for a pointer the heap refuses. Not `LockedHeap`'s `realloc`: with the `iwram` feature it would
    /// add that type's own ARM functions, a second copy of the heap's code in IWRAM (3 096 bytes, measured in a
    /// game on the `gba` crate whose `Vec` grows).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(p) = NonNull::new(ptr) else { return ptr::null_mut() };
        match self.placed(|h| h.resize_or_move(p, new_size, layout.align())) {
            Some(Ok(true)) => return ptr,
            Some(Ok(false)) => {}
            _ => return ptr::null_mut(),
        }
        // SAFETY: the caller promises that new_size, rounded up to the alignment, does not overflow isize.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a valid layout of non-zero size (new_size > 0: the caller's promise).
        let to = unsafe { self.alloc(new) };
        if !to.is_null() {
            // SAFETY: the heap checked that `ptr` starts a used run (`resize_or_move`), the caller's block of
            // `layout.size()` bytes, and handed out `to`, a free run until now: distinct, each holding the bytes
            // copied. Then `ptr` is freed once, with its layout.
            unsafe {
                ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        to
    }
}
