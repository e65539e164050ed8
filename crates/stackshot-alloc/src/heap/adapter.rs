//! [`LockedHeap`]: a [`Heap`] behind `&self` and a lock, for `GlobalAlloc` (`#[global_allocator]`), the typed
//! owner [`HeapBox`](super::HeapBox), and with the `allocator-api` feature (nightly) `core::alloc::Allocator`
//! (`Box::new_in`, `Vec::with_capacity_in`).
//!
//! The lock is any [`lock_api::RawMutex`]: on the GBA [`IrqLock`](crate::irq::IrqLock) (feature `gba`), which
//! masks interrupts while the heap is at work (a zeroed allocation is zeroed after the unlock); on the host a
//! spin lock or a parking mutex. The heap inside is reached mutably only by this module's own allocate, resize
//! and free paths; users see it read-only through [`LockedHeap::with`], so safe code cannot free a block that a
//! `Box` still owns.
//!
//! With the `iwram` feature, `LockedHeap`'s allocate and free are each one ARM function in IWRAM that takes the
//! lock, runs the heap's code and releases the lock, so a caller in Thumb code in ROM makes one call to the fast
//! path; `GlobalHeap` takes the lock around a call of [`iwram::heap_alloc`](crate::iwram::heap_alloc) /
//! [`heap_free`](crate::iwram::heap_free). Without the feature they are inlined.

use super::{Heap, HeapError};
#[cfg(feature = "allocator-api")]
use core::alloc::{AllocError, Allocator};
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::{self, NonNull};
use lock_api::RawMutex;

/// A heap usable through a shared reference. On the host, with any `lock_api` lock:
/// ```
/// # use stackshot_alloc::heap::{Heap, LockedHeap};
/// # struct Spin(core::sync::atomic::AtomicBool);
/// # unsafe impl lock_api::RawMutex for Spin {
/// #     const INIT: Self = Spin(core::sync::atomic::AtomicBool::new(false));
/// #     type GuardMarker = lock_api::GuardSend;
/// #     fn lock(&self) { while !self.try_lock() {} }
/// #     fn try_lock(&self) -> bool { !self.0.swap(true, core::sync::atomic::Ordering::Acquire) }
/// #     unsafe fn unlock(&self) { self.0.store(false, core::sync::atomic::Ordering::Release) }
/// # }
/// #[repr(align(8))] // a heap manages whole 8-byte blocks from the first 8-aligned byte
/// struct Region([u8; 512]);
/// let mut region = Region([0; 512]);
/// let bytes = &mut region.0;
/// let heap: LockedHeap<'_, Spin> = LockedHeap::new();
/// heap.init(Heap::new(bytes).unwrap()).ok().unwrap();
/// let score = heap.boxed(1200u32).unwrap(); // freed when dropped
/// assert_eq!(heap.with(|h| h.stats().used_bytes), Ok(8));
/// drop(score);
/// assert_eq!(heap.with(|h| h.stats().used_bytes), Ok(0));
/// ```
/// On the GBA:
/// `static HEAP: LockedHeap<'static, IrqLock> = LockedHeap::new();` then `HEAP.init(heap)` once at start-up.
pub struct LockedHeap<'a, L: RawMutex> {
    lock: L,
    heap: UnsafeCell<Option<Heap<'a>>>,
}

// SAFETY: every access to `heap` happens while `lock` is held (through a `Held`, see `Held::slot`), and
// `RawMutex` promises that only one holder at a time exists, whatever thread or interrupt context it runs on;
// `Heap` is `Send`, so it may be reached from whichever of them holds the lock.
unsafe impl<L: RawMutex + Sync> Sync for LockedHeap<'_, L> {}

/// Why [`LockedHeap::with`] could not look at the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockError {
    /// [`LockedHeap::init`] has not installed a heap yet.
    NotInitialised,
    /// The lock is held: by another thread, or by the caller itself (a `with` inside a `with`).
    Busy,
}

impl<L: RawMutex> Default for LockedHeap<'_, L> {
    fn default() -> Self {
        Self::new()
    }
}

/// `$body` on the heap slot (`Option<Heap>`, bound to `$slot`) under `$adapter`'s lock: with the `iwram`
/// feature written out with a [`Held`] guard, since a closure would stay a Thumb function in ROM that the ARM
/// code calls (`tests/heap.rs`: `LockedHeap`'s allocation and free 390 / 661 cycles instead of 209 / 279, when
/// this was measured);
/// without it through [`LockedHeap::locked`], whose closure the compiler lays out better in Thumb code (the
/// Thumb/ROM benchmark's `LockedHeap` free median 555 with the guard, 531 with the closure).
macro_rules! under_lock {
    ($adapter:expr, |$slot:ident| $body:expr) => {{
        #[cfg(feature = "iwram")]
        let answer = {
            let mut held = $adapter.hold();
            let answer = {
                let $slot = held.slot();
                $body
            };
            held.release();
            answer
        };
        #[cfg(not(feature = "iwram"))]
        let answer = $adapter.locked(|$slot| $body);
        answer
    }};
}

/// A [`LockedHeap`] whose lock is held, made only right after the lock was taken. `release` (with the `iwram`
/// feature) releases the lock; so does dropping it, which also covers a panic unwinding through the locked
/// section.
struct Held<'l, 'a, L: RawMutex>(&'l LockedHeap<'a, L>);

impl<'a, L: RawMutex> Held<'_, 'a, L> {
    /// The slot, borrowed from the guard: no reference to it outlives the lock.
    #[inline(always)]
    fn slot(&mut self) -> &mut Option<Heap<'a>> {
        // SAFETY: a `Held` exists only while its lock is held (made right after taking it; it releases the lock
        // only when released or dropped, which ends this borrow), and this borrow of it is the only reference to
        // the slot.
        unsafe { &mut *self.0.heap.get() }
    }

    /// Releases the lock, as dropping the guard would, without the drop glue: a function of its own, in ROM,
    /// that the ARM functions below would call.
    #[cfg(feature = "iwram")]
    #[inline(always)]
    fn release(self) {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: as in `drop`, which will not run for this guard.
        unsafe { this.0.lock.unlock() }
    }
}

impl<L: RawMutex> Drop for Held<'_, '_, L> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: a `Held` is made only right after the lock was taken, once, in this context.
        unsafe { self.0.lock.unlock() }
    }
}

impl<'a, L: RawMutex> LockedHeap<'a, L> {
    /// An adapter with no heap yet: every request fails until [`init`](Self::init).
    pub const fn new() -> Self {
        LockedHeap { lock: L::INIT, heap: UnsafeCell::new(None) }
    }

    /// Installs `heap` if none is installed yet; otherwise hands it back (allocations from the first heap would
    /// otherwise dangle).
    pub fn init(&self, heap: Heap<'a>) -> Result<(), Heap<'a>> {
        let mut heap = Some(heap);
        self.locked(|slot| {
            if slot.is_none() {
                *slot = heap.take();
            }
        });
        match heap {
            None => Ok(()),
            Some(h) => Err(h),
        }
    }

    /// Runs `f` on the installed heap, read-only (stats, `check`, the map). Fails rather than waits when the
    /// lock is held. Do not allocate from this heap inside `f`: with `IrqLock` that is reported as re-entry
    /// (a panic), with a spin lock it would wait forever.
    ///
    /// Read-only, so that safe code cannot free a block a `Box` still owns:
    /// ```compile_fail,E0596
    /// # use stackshot_alloc::heap::LockedHeap;
    /// # fn free_behind_a_box<L: lock_api::RawMutex>(heap: &LockedHeap<'_, L>, p: core::ptr::NonNull<u8>) {
    /// let _ = heap.with(|h| h.free(p));
    /// # }
    /// ```
    pub fn with<R>(&self, f: impl FnOnce(&Heap<'a>) -> R) -> Result<R, LockError> {
        if !self.lock.try_lock() {
            return Err(LockError::Busy);
        }
        // The lock was just taken: a `Held` may be made.
        let mut held = Held(self);
        match held.slot() {
            Some(heap) => Ok(f(heap)),
            None => Err(LockError::NotInitialised),
        }
    }

    /// Runs `f` on the heap slot with the lock held (waiting for it); the lock is released even if `f`
    /// panics. Only this module's code runs inside, none of the caller's.
    pub(super) fn locked<R>(&self, f: impl FnOnce(&mut Option<Heap<'a>>) -> R) -> R {
        f(self.hold().slot())
    }

    /// Takes the lock (waiting for it) until the guard it returns is released or dropped.
    #[inline(always)]
    fn hold(&self) -> Held<'_, 'a, L> {
        self.lock.lock();
        Held(self)
    }

    /// Allocates a block for `layout` under the lock, and after the unlock zeroes it (in whole blocks) if
    /// `zeroed`. With the `iwram` feature one ARM function in IWRAM: the lock, the heap's allocation, the unlock
    /// and the zeroing, so that a caller in Thumb code makes one call and one switch to ARM state, where a lock
    /// taken in Thumb around the allocation and a second call to zero would make three (`tests/heap.rs` prints
    /// what an allocation costs the game this way). `zeroed` is an argument, not a const parameter, so that a
    /// program that allocates both ways (`Vec::new_in` beside `boxed_slice_zeroed`) has this code in IWRAM once,
    /// not twice; the test of `zeroed` costs the non-zeroing call a branch.
    #[cfg_attr(feature = "iwram", inline(never))]
    #[cfg_attr(
        all(feature = "iwram", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.locked_alloc")
    )]
    pub(super) fn alloc_block(&self, layout: Layout, zeroed: bool) -> Result<NonNull<u8>, HeapError> {
        let answer = under_lock!(self, |slot| match slot {
            Some(h) => h.alloc(layout.size(), layout.align()),
            None => Err(HeapError::NotInitialised),
        });
        if zeroed && let Ok(p) = answer {
            // SAFETY: a fresh block of at least `layout.size()` bytes, allocated to this caller: nothing else
            // writes it after the unlock.
            unsafe { zero_block(p, layout.size()) };
        }
        answer
    }

    /// Frees the block at `ptr` under the lock, like `alloc_block` one ARM function in IWRAM with the `iwram`
    /// feature. A refused free (a caller bug, or a damaged heap) leaves the heap intact and is counted in
    /// `Stats::bad_frees`.
    #[cfg_attr(feature = "iwram", inline(never))]
    #[cfg_attr(
        all(feature = "iwram", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.locked_free")
    )]
    pub(super) fn free_block(&self, ptr: NonNull<u8>) -> Result<(), HeapError> {
        under_lock!(self, |slot| match slot {
            Some(h) => h.free(ptr),
            None => Err(HeapError::NotInitialised),
        })
    }

    /// Starts the peak over from the bytes in use now (see [`Heap::reset_peak`]).
    pub fn reset_peak(&self) -> Result<(), LockError> {
        self.locked(|slot| slot.as_mut().map(Heap::reset_peak)).ok_or(LockError::NotInitialised)
    }

    /// [`Heap::resize_or_move`] under the lock; `Err(NotInitialised)` with no heap.
    fn resize_or_move(&self, ptr: NonNull<u8>, size: usize, align: usize) -> Result<bool, HeapError> {
        self.locked(|slot| slot.as_mut().map_or(Err(HeapError::NotInitialised), |h| h.resize_or_move(ptr, size, align)))
    }

    /// Moves the block at `ptr` (`old` bytes) to a new block for `new`: allocate, copy, free.
    ///
    /// # Safety
    /// `ptr` is a live block of this heap (checked by the heap: `resize_or_move` said it must move) of at least
    /// `min(old, new.size())` readable bytes.
    unsafe fn relocate(&self, ptr: NonNull<u8>, old: usize, new: Layout) -> Option<NonNull<u8>> {
        let to = self.alloc_block(new, false).ok()?;
        // SAFETY: both blocks are live, so distinct (the heap hands out only free runs, and the old one is not
        // freed yet), and hold at least the bytes copied.
        unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), to.as_ptr(), old.min(new.size())) };
        // A refusal is counted in `Stats::bad_frees`; the caller promised a live block.
        let _ = self.free_block(ptr);
        Some(to)
    }
}

impl Heap<'_> {
    /// What a reallocation of the block at `ptr` to `size` bytes aligned to `align` does: `Ok(true)` when the
    /// heap resized it in place; `Ok(false)` when it must move (it is not so aligned, or the heap cannot); `Err`
    /// when `ptr` is not a block of this heap (refused and counted once, as by `free`): then nothing may be read
    /// from it or freed (or, in place, when `size` is 0).
    pub(super) fn resize_or_move(&mut self, ptr: NonNull<u8>, size: usize, align: usize) -> Result<bool, HeapError> {
        if ptr.as_ptr() as usize & (align - 1) != 0 {
            // It must move: only its being a block is checked.
            return match self.run_start(ptr) {
                Ok(_) => Ok(false),
                Err(e) => self.refuse_free(e).map(|()| false),
            };
        }
        match self.resize(ptr, size) {
            Ok(()) => Ok(true),
            Err(HeapError::OutOfMemory | HeapError::TooLarge) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// [`Heap::alloc`] as `GlobalHeap` runs it: with the `iwram` feature a call of the ARM code in IWRAM, otherwise
/// inlined into the caller.
#[inline(always)]
pub(super) fn alloc_in(heap: &mut Heap, size: usize, align: usize) -> Result<NonNull<u8>, HeapError> {
    #[cfg(feature = "iwram")]
    return crate::iwram::heap_alloc(heap, size, align);
    #[cfg(not(feature = "iwram"))]
    heap.alloc(size, align)
}

/// Zeroes the `bytes` bytes of a block the heap handed out at `p`, in whole blocks (with the `iwram` feature
/// by ARM code in IWRAM: `memset` would be Thumb code in ROM on the GBA).
///
/// # Safety
/// `p` is a live block of this heap of at least `bytes` bytes.
#[inline(always)]
pub(super) unsafe fn zero_block(p: NonNull<u8>, bytes: usize) {
    // SAFETY: the heap hands out whole 8-byte blocks from an 8-aligned base (its layout, heap/mod.rs), so the
    // block starts 8-aligned and its `ceil(bytes / 8)` blocks are all its own.
    unsafe { crate::iwram::zero_blocks(p.as_ptr().cast(), bytes.div_ceil(8)) }
}

/// [`Heap::free`] as `GlobalHeap` runs it, like [`alloc_in`].
#[inline(always)]
pub(super) fn free_in(heap: &mut Heap, ptr: NonNull<u8>) -> Result<(), HeapError> {
    #[cfg(feature = "iwram")]
    return crate::iwram::heap_free(heap, ptr);
    #[cfg(not(feature = "iwram"))]
    heap.free(ptr)
}

/// The length handed out for a request of `size` bytes: whole blocks, all usable.
#[cfg(feature = "allocator-api")]
fn block_len(size: usize) -> usize {
    (size + 7) & !7
}

#[cfg(feature = "allocator-api")]
fn dangling(layout: Layout) -> NonNull<[u8]> {
    // SAFETY: an alignment is never zero.
    let p = unsafe { NonNull::new_unchecked(ptr::without_provenance_mut(layout.align())) };
    NonNull::slice_from_raw_parts(p, 0)
}

// SAFETY: a returned block is `len` bytes (the size rounded up to whole blocks, all inside the region),
// aligned as asked, and stays valid and unaliased until freed: the heap hands each block to one allocation at
// a time, only this impl and `GlobalAlloc` below free or resize blocks (users get the heap read-only), and
// the region is borrowed for 'a, as long as the adapter exists. The adapter is not Clone.
#[cfg(feature = "allocator-api")]
unsafe impl<L: RawMutex> Allocator for LockedHeap<'_, L> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            // Zero-size blocks need no memory: an aligned dangling pointer, as `Layout` allows.
            return Ok(dangling(layout));
        }
        let p = self.alloc_block(layout, false).map_err(|_| AllocError)?;
        Ok(NonNull::slice_from_raw_parts(p, block_len(layout.size())))
    }

    fn allocate_zeroed(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            return Ok(dangling(layout));
        }
        // Zeroed in whole blocks: all `block_len` bytes handed out.
        let p = self.alloc_block(layout, true).map_err(|_| AllocError)?;
        Ok(NonNull::slice_from_raw_parts(p, block_len(layout.size())))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // A refusal is counted in `Stats::bad_frees`.
            let _ = self.free_block(ptr);
        }
    }

    unsafe fn grow(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if old.size() == 0 {
            return self.allocate(new);
        }
        if self.resize_or_move(ptr, new.size(), new.align()).map_err(|_| AllocError)? {
            return Ok(NonNull::slice_from_raw_parts(ptr, block_len(new.size())));
        }
        // SAFETY: the caller promises `ptr` is a live block of `old.size()` bytes from this allocator.
        let to = unsafe { self.relocate(ptr, old.size(), new) }.ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(to, block_len(new.size())))
    }

    unsafe fn grow_zeroed(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { self.grow(ptr, old, new) }?;
        // SAFETY: the block holds `block.len()` bytes, and the first `old.size()` are the old contents.
        unsafe { ptr::write_bytes(block.cast::<u8>().as_ptr().add(old.size()), 0, block.len() - old.size()) };
        Ok(block)
    }

    unsafe fn shrink(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if new.size() == 0 {
            // SAFETY: forwarded from the caller.
            unsafe { self.deallocate(ptr, old) };
            return Ok(dangling(new));
        }
        if self.resize_or_move(ptr, new.size(), new.align()).map_err(|_| AllocError)? {
            return Ok(NonNull::slice_from_raw_parts(ptr, block_len(new.size())));
        }
        // SAFETY: the caller promises `ptr` is a live block of `old.size()` bytes from this allocator.
        let to = unsafe { self.relocate(ptr, old.size(), new) }.ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(to, block_len(new.size())))
    }
}

// SAFETY: as for `Allocator`; a null return reports failure, as GlobalAlloc requires.
unsafe impl<L: RawMutex> GlobalAlloc for LockedHeap<'_, L> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.alloc_block(layout, false).map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.alloc_block(layout, true).map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // A refusal is counted in `Stats::bad_frees`.
            let _ = self.free_block(p);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(p) = NonNull::new(ptr) else { return ptr::null_mut() };
        match self.resize_or_move(p, new_size, layout.align()) {
            Ok(true) => return ptr,
            Ok(false) => {}
            Err(_) => return ptr::null_mut(),
        }
        // SAFETY: the caller promises a valid layout for new_size and that `ptr` is a live block of
        // `layout.size()` bytes from this allocator.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as above.
        unsafe { self.relocate(p, layout.size(), new) }.map_or(ptr::null_mut(), NonNull::as_ptr)
    }
}
