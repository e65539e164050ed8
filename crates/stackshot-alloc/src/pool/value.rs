//! The value stack: a stack of small `Copy` values that are themselves the resource (free OAM entries, free
//! tile coordinates packed in a word), returned directly.

use super::{CheckError, Pool, PoolError};

/// Up to `N` values of `V`, last in first out.
///
/// No slots, no handles: `pop` takes a free value, `push` gives one back. Bookkeeping: the values themselves
/// (`size_of::<V>()` a slot) and a count. A value pushed twice cannot be told from two different values, so
/// the only check is `push` onto a full stack (`Overflow`), which catches giving back more than was taken;
/// use an index pool when double frees must be caught one by one. Invariant VS1 (module docs).
pub struct ValueStack<V: Copy, const N: usize> {
    items: [V; N],
    len: usize,
}

impl<V: Copy, const N: usize> ValueStack<V, N> {
    /// An empty stack; `filler` only initialises the unused entries.
    pub const fn empty(filler: V) -> Self {
        ValueStack { items: [filler; N], len: 0 }
    }

    /// A full stack holding `values`; `values[N - 1]` is popped first.
    pub const fn full(values: [V; N]) -> Self {
        ValueStack { items: values, len: N }
    }

    /// The number of values on the stack.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// The most values the stack holds.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// True when `pop` would return `None`.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Takes the most recently pushed value, or `None` when empty.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<V> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: `len` was in `1..=N` (VS1).
        Some(unsafe { *self.items.get_unchecked(self.len) })
    }

    /// Gives `v` back; `Err(Overflow)` (stack unchanged) if the stack is already full.
    #[inline(always)]
    pub fn push(&mut self, v: V) -> Result<(), PoolError> {
        let len = self.len;
        if len >= N {
            return Err(PoolError::Overflow);
        }
        // SAFETY: `len < N` was checked above.
        unsafe { *self.items.get_unchecked_mut(len) = v };
        // From the local: re-reading `self.len` after the byte store would cost a load (it might alias).
        self.len = len + 1;
        Ok(())
    }

    /// The values on the stack, bottom first.
    pub fn as_slice(&self) -> &[V] {
        &self.items[..self.len]
    }

    /// Verifies VS1 (module docs).
    pub fn check(&self) -> Result<(), CheckError> {
        if self.len > N {
            return Err(CheckError::CountTooLarge);
        }
        Ok(())
    }
}

/// As a pool, a value stack hands out its values: `alloc` pops, `free` pushes.
impl<V: Copy, const N: usize> Pool for ValueStack<V, N> {
    type Value = ();
    type Handle = V;
    #[inline(always)]
    fn alloc(&mut self, _: ()) -> Result<V, ()> {
        self.pop().ok_or(())
    }
    #[inline(always)]
    fn free(&mut self, v: V) -> Result<(), PoolError> {
        self.push(v)
    }
    /// The values handed out: the stack's free room (the stack holds what is *not* handed out).
    fn len(&self) -> usize {
        N - self.len
    }
    fn capacity(&self) -> usize {
        N
    }
    fn check(&mut self) -> Result<(), CheckError> {
        ValueStack::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_tile_coordinates() {
        const fn coords() -> [u32; 4] {
            let mut v = [0; 4];
            let mut k = 0;
            while k < 4 {
                v[k] = (k as u32) << 16 | (k as u32 + 10);
                k += 1;
            }
            v
        }
        static FREE: ValueStack<u32, 4> = ValueStack::full(coords());
        assert_eq!(FREE.len(), 4);
        let mut s = ValueStack::full(coords());
        assert_eq!(s.pop(), Some(3 << 16 | 13));
        assert_eq!(s.push(99), Ok(()));
        assert_eq!(s.push(100), Err(PoolError::Overflow));
        assert_eq!(s.as_slice(), &[10, 1 << 16 | 11, 2 << 16 | 12, 99]);
        let mut e: ValueStack<u8, 2> = ValueStack::empty(0);
        assert_eq!(e.pop(), None);
        e.len = 3;
        assert_eq!(e.check(), Err(CheckError::CountTooLarge));
    }
}
