//! [`HeapBox`]: an owned value in a [`LockedHeap`], freed when dropped. The typed owner for stable Rust (on
//! nightly, `Box::new_in(x, &heap)` with the `allocator-api` feature does the same): the block is freed
//! exactly once, by its owner, so a double or stale free cannot be written in safe code.

use super::LockedHeap;
use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use lock_api::RawMutex;

/// A `T` in a [`LockedHeap`]: `HEAP.boxed(value)` makes one; dropping it drops the value and frees the block.
pub struct HeapBox<'h, 'a, T, L: RawMutex> {
    ptr: NonNull<T>,
    heap: &'h LockedHeap<'a, L>,
    _owns: PhantomData<T>,
}

// SAFETY: a HeapBox owns its T like a Box does, and reaches the heap only through `&LockedHeap`, which is
// shared across threads only when it is `Sync` (its lock is).
unsafe impl<T: Send, L: RawMutex> Send for HeapBox<'_, '_, T, L> where LockedHeap<'static, L>: Sync {}
// SAFETY: `&HeapBox` gives only `&T`.
unsafe impl<T: Sync, L: RawMutex> Sync for HeapBox<'_, '_, T, L> {}

impl<'a, L: RawMutex> LockedHeap<'a, L> {
    /// Moves `value` into a block of this heap. A full heap hands the value back.
    pub fn boxed<T>(&self, value: T) -> Result<HeapBox<'_, 'a, T, L>, T> {
        let layout = Layout::new::<T>();
        let ptr = if layout.size() == 0 {
            NonNull::dangling()
        } else {
            match self.alloc_block(layout) {
                Some(p) => p.cast(),
                None => return Err(value),
            }
        };
        // SAFETY: ptr is a fresh block of at least size_of::<T>() bytes aligned for T (or, for a zero-size T,
        // a dangling aligned pointer, which is valid for zero-size writes).
        unsafe { ptr.write(value) };
        Ok(HeapBox { ptr, heap: self, _owns: PhantomData })
    }
}

impl<T, L: RawMutex> Deref for HeapBox<'_, '_, T, L> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: ptr holds a T written by `boxed` and owned by self until drop.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T, L: RawMutex> DerefMut for HeapBox<'_, '_, T, L> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T, L: RawMutex> Drop for HeapBox<'_, '_, T, L> {
    fn drop(&mut self) {
        // SAFETY: ptr holds a T that is dropped exactly once, here.
        unsafe { self.ptr.drop_in_place() };
        if size_of::<T>() != 0 {
            self.heap.free_block(self.ptr.cast());
        }
    }
}

impl<T: fmt::Debug, L: RawMutex> fmt::Debug for HeapBox<'_, '_, T, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}
