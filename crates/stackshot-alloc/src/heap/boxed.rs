//! [`HeapBox`]: an owned value, or a run of values, in a [`LockedHeap`], freed when dropped. The typed owner
//! for stable Rust (on nightly, `Box::new_in(x, &heap)` with the `allocator-api` feature does the same): the
//! block is freed exactly once, by its owner, so a double or stale free cannot be written in safe code.

use super::{HeapError, LockedHeap};
use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use lock_api::RawMutex;

/// A `T`, or with `T = [E]` a run of `E`s, in a [`LockedHeap`]: `HEAP.boxed(value)` or
/// `HEAP.boxed_slice(len, fill)` makes one; dropping it drops the contents and frees the block.
///
/// ```
/// # use stackshot_alloc::heap::{Heap, HeapBox, HeapError, LockedHeap};
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
/// // An enemy's path: six waypoints, (x, y) each, in one block of the heap.
/// let mut path = heap.boxed_slice(12, 0i16).unwrap();
/// path[0] = 120;
/// assert_eq!((path.len(), path[0], path[11]), (12, 120, 0));
/// assert_eq!(heap.with(|h| h.stats().used_bytes), Ok(24));
/// assert_eq!(heap.boxed_slice(240, 0i16).err(), Some(HeapError::OutOfMemory)); // 480 B: not now
/// assert_eq!(heap.boxed_slice(1000, 0i16).err(), Some(HeapError::TooLarge)); // 2,000 B: never
/// drop(path); // the enemy is gone: so is its block
/// assert_eq!(heap.with(|h| h.stats().used_bytes), Ok(0));
/// ```
pub struct HeapBox<'h, 'a, T: ?Sized, L: RawMutex> {
    ptr: NonNull<T>,
    heap: &'h LockedHeap<'a, L>,
    _owns: PhantomData<T>,
}

// SAFETY: a HeapBox owns its T like a Box does, and reaches the heap only through `&LockedHeap`, which is
// shared across threads only when it is `Sync` (its lock is).
unsafe impl<T: ?Sized + Send, L: RawMutex> Send for HeapBox<'_, '_, T, L> where LockedHeap<'static, L>: Sync {}
// SAFETY: `&HeapBox` gives only `&T`.
unsafe impl<T: ?Sized + Sync, L: RawMutex> Sync for HeapBox<'_, '_, T, L> {}

impl<'a, L: RawMutex> LockedHeap<'a, L> {
    /// Moves `value` into a block of this heap. A full heap (or none installed yet) hands the value back.
    pub fn boxed<T>(&self, value: T) -> Result<HeapBox<'_, 'a, T, L>, T> {
        let layout = Layout::new::<T>();
        let ptr = if layout.size() == 0 {
            NonNull::dangling()
        } else {
            match self.alloc_block(layout, false) {
                Ok(p) => p.cast(),
                Err(_) => return Err(value),
            }
        };
        // SAFETY: ptr is a fresh block of at least size_of::<T>() bytes aligned for T (or, for a zero-size T,
        // a dangling aligned pointer, which is valid for zero-size writes).
        unsafe { ptr.write(value) };
        Ok(HeapBox { ptr, heap: self, _owns: PhantomData })
    }

    /// `len` copies of `fill` in one block of this heap (aligned for `T`). Refused with the heap's reason:
    /// `OutOfMemory` when no free run holds it now, `TooLarge` when none ever could, `NotInitialised` before
    /// [`init`](Self::init). An empty slice (or one of zero-size values) takes no block.
    pub fn boxed_slice<T: Copy>(&self, len: usize, fill: T) -> Result<HeapBox<'_, 'a, [T], L>, HeapError> {
        let mut values = self.boxed_uninit_slice(len)?;
        for v in values.iter_mut() {
            v.write(fill);
        }
        // SAFETY: every element was written just above.
        Ok(unsafe { values.assume_init() })
    }

    /// `len` zeros in one block of this heap, written a block at a time (with the `iwram` feature by ARM code in
    /// IWRAM: a few cycles a word, where a fill value by value compiles to a `memset` from ROM). Refused as
    /// [`boxed_slice`](Self::boxed_slice) is.
    pub fn boxed_slice_zeroed<T: bytemuck::Zeroable>(&self, len: usize) -> Result<HeapBox<'_, 'a, [T], L>, HeapError> {
        let room = self.uninit_slice::<T>(len, true)?;
        // SAFETY: every byte of the values is zero, a value of a `Zeroable` T (a slice of no bytes has none).
        Ok(unsafe { room.assume_init() })
    }

    /// Room for `len` values in one block of this heap, not initialised: fill it your own way (on the GBA,
    /// for instance, with an ARM fill in IWRAM rather than a `memset` from ROM), then
    /// [`assume_init`](HeapBox::assume_init). Refused as [`boxed_slice`](Self::boxed_slice) is.
    pub fn boxed_uninit_slice<T>(&self, len: usize) -> Result<HeapBox<'_, 'a, [MaybeUninit<T>], L>, HeapError> {
        self.uninit_slice::<T>(len, false)
    }

    /// `boxed_uninit_slice`, its block zeroed (by the same call, in IWRAM with the `iwram` feature) if `zeroed`.
    fn uninit_slice<T>(&self, len: usize, zeroed: bool) -> Result<HeapBox<'_, 'a, [MaybeUninit<T>], L>, HeapError> {
        let layout = Layout::array::<T>(len).map_err(|_| HeapError::TooLarge)?;
        let data = if layout.size() == 0 { NonNull::dangling() } else { self.alloc_block(layout, zeroed)?.cast() };
        // `MaybeUninit<T>` needs no initialising, so the block (or for no bytes the dangling, aligned pointer)
        // already holds `len` valid values.
        Ok(HeapBox { ptr: NonNull::slice_from_raw_parts(data, len), heap: self, _owns: PhantomData })
    }
}

impl<'h, 'a, T, L: RawMutex> HeapBox<'h, 'a, [MaybeUninit<T>], L> {
    /// The same block as a slice of `T`s, owned as before.
    ///
    /// # Safety
    /// Every element must have been initialised.
    pub unsafe fn assume_init(self) -> HeapBox<'h, 'a, [T], L> {
        let this = ManuallyDrop::new(self);
        let ptr = NonNull::slice_from_raw_parts(this.ptr.cast::<T>(), this.ptr.len());
        // The block passes to the new owner whole: `this` is never dropped, so it is freed once, by that owner.
        HeapBox { ptr, heap: this.heap, _owns: PhantomData }
    }
}

impl<T: ?Sized, L: RawMutex> HeapBox<'_, '_, T, L> {
    /// Drops the contents and frees the block now, with the heap's answer: `Ok`, or the reason it refused
    /// (only a heap damaged since, or a block freed behind the owner's back, can refuse). Dropping a
    /// `HeapBox` does the same and leaves the refusal to the heap's count, `Stats::bad_frees`. An associated
    /// function, `HeapBox::free(b)`, so that it never hides a method of `T`.
    pub fn free(this: Self) -> Result<(), HeapError> {
        let mut this = ManuallyDrop::new(this);
        // SAFETY: `this` is never used again, nor dropped (ManuallyDrop).
        unsafe { HeapBox::release(&mut this) }
    }

    /// Drops the contents and frees the block.
    ///
    /// # Safety
    /// Called once; the box is not used afterwards.
    unsafe fn release(&mut self) -> Result<(), HeapError> {
        /// Frees the block if dropping the contents panics, on the way out, as `Box` does.
        struct FreeOnUnwind<'b, 'a, L: RawMutex>(&'b LockedHeap<'a, L>, NonNull<u8>);
        impl<L: RawMutex> Drop for FreeOnUnwind<'_, '_, L> {
            fn drop(&mut self) {
                // A refusal is counted in `Stats::bad_frees`, as a dropped box's is.
                let _ = self.0.free_block(self.1);
            }
        }
        // SAFETY: ptr holds a T (or a slice) written when the box was made, owned by the box until now.
        let size = size_of_val(unsafe { self.ptr.as_ref() });
        if size == 0 {
            // SAFETY: as above; the caller promises this runs once, so the contents are dropped exactly once.
            unsafe { self.ptr.drop_in_place() };
            return Ok(()); // no block was taken
        }
        let on_unwind = FreeOnUnwind(self.heap, self.ptr.cast());
        // SAFETY: as above.
        unsafe { self.ptr.drop_in_place() };
        core::mem::forget(on_unwind);
        self.heap.free_block(self.ptr.cast())
    }
}

impl<T: ?Sized, L: RawMutex> Deref for HeapBox<'_, '_, T, L> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: ptr holds a T written by `boxed` or `boxed_slice` and owned by self until drop.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ?Sized, L: RawMutex> DerefMut for HeapBox<'_, '_, T, L> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: ?Sized, L: RawMutex> Drop for HeapBox<'_, '_, T, L> {
    fn drop(&mut self) {
        // A refusal is counted in the heap's `Stats::bad_frees` (`HeapBox::free` returns it).
        // SAFETY: drop runs once and the box is gone after it.
        let _ = unsafe { self.release() };
    }
}

impl<T: ?Sized + fmt::Debug, L: RawMutex> fmt::Debug for HeapBox<'_, '_, T, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}
