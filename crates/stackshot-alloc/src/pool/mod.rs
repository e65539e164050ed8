//! Fixed-size pools whose free list is a stack (see the crate README).
//!
//! | type | free list | hands out |
//! |---|---|---|
//! | [`IndexPool`] | stack of `u8`/`u16` indices, partitioned free/live, with a position table | [`Handle`] |
//! | [`Packed24`], [`Packed18`] | stack of 24-/18-bit indices split over a `u16` table and a side table | `u32` index |
//! | [`PtrPool`] | stack of slot addresses | `NonNull<T>` |
//! | [`ValueStack`] | stack of small `Copy` values (the values are the resource) | `V` |
//! | [`IntrusivePool`] | `u16` links stored inside the free slots of a byte region | `NonNull<u8>` |
//! | [`FlagPool`] | none: a flag per slot, scanned on allocate (the baseline) | [`Handle`] |
//!
//! Every pool has `const fn new` or a cheap constructor and no heap allocation, and implements [`Pool`]: the
//! same `alloc`, `free`, `len`, `capacity` and `check` with the same types. A full pool hands the value back,
//! bad frees return a [`PoolError`] and leave the pool unchanged.
//!
//! # Invariants
//!
//! Each pool's `check()` verifies exactly these and returns the [`CheckError`] named in brackets.
//!
//! - **IX1** (`IndexPool`): `live <= N` and `peak <= N` \[`CountTooLarge`\].
//! - **IX2** (`IndexPool`): for every position `k`, the slot `i = stack[k] ^ k` is `< N` \[`EntryOutOfRange`\]
//!   and the low half of its word `meta[i]` holds the same link `i ^ k` \[`PosMismatch`\]; so the positions and
//!   slots are a permutation of `0..N`, all-zero tables the identity, and slot `i`'s position is its link XOR `i`.
//! - **IX3** (`IndexPool`): slot `i` is live iff its position is `< live`, i.e. positions `..live` are the live
//!   slots and `live..` the free ones (position `live` is the next allocated); exactly the live slots hold an
//!   initialised `T`. (Follows from IX2 plus the code; `check` cannot see initialisation.)
//! - **IX4** (`IndexPool`): `live <= peak`: the most slots ever live counts at least the live ones; and the slots
//!   at positions `peak..` were never allocated, in generation 0 (so `live` can only pass `peak` by allocating a
//!   slot in generation 0, the one case in which `alloc` compares them) \[`PeakBelowLive`\].
//! - **IX5** (`IndexPool`): every slot word's stamp carries the same pool id \[`IdMismatch`\] (stored XOR the
//!   type's `ID`; the generation may be anything).
//! - **PK1** (`Packed24`, `Packed18`), **PT1** (`PtrPool`), **VS1** (`ValueStack`), **IN1** (`IntrusivePool`):
//!   the free count is at most the capacity (packed: `top <= fresh <= capacity`) \[`CountTooLarge`\].
//! - **PK2**, **PT2**, **IN2**: every free-stack entry (free-list link) names a slot of this pool (packed: a
//!   slot below `fresh`) \[`EntryOutOfRange`\]; no free entry names a slot whose live bit is set, and none is
//!   listed twice \[`FreeButLive`\]; every slot whose live bit is clear is on the free stack/list
//!   \[`Leaked`\], except the packed stacks' never-used slots `fresh..`, whose live bits are all clear
//!   \[`FreeButLive`\].
//! - **IN3** (`IntrusivePool`): the free list ends (a link equal to the slot count) after exactly `free` links
//!   \[`ListLength`\].
//! - **FL1** (`FlagPool`): the live count equals the number of set flags \[`CountMismatch`\]; exactly the
//!   flagged slots hold an initialised `T`.
//!
//! `PtrPool` and `IntrusivePool` also hold exactly the live slots' `T`/bytes for the caller, who owns them.
//!
//! # What the safety checks cost
//!
//! - Foreign handle: an `IndexPool`'s handle carries the pool's tag type, so a handle of a pool with another tag
//!   does not compile. At run time it also carries the pool's `u8` id (the type's `ID`, 0 unless given, or the
//!   one given to `with_id`), kept beside the generation in each slot's `u16` stamp: one XOR of the handle with
//!   the slot's word and one compare with the live count per `free`/`get` check both, and the double free. Pools
//!   sharing a tag and an id cannot tell each other's handles apart.
//! - Out of range: one compare of the index against the capacity.
//! - Double free (and `get` of a freed handle): `IndexPool` reads slot `i`'s position from the same word as its
//!   stamp and compares it with `live`, in the same compare (the position takes the word's low half, a byte of
//!   padding beside a `u8` one, and also gives O(live) iteration and the O(1) swap that keeps the permutation
//!   partitioned); `FlagPool` reads its flag; the packed stacks and the intrusive list keep
//!   one live bit a slot (1/8 byte; a load, shift and mask per check plus a read-modify-write per
//!   allocate/free); `PtrPool` keeps a `bool` a slot.
//! - Write after free (`IntrusivePool`, whose list links live in the free slots): `alloc` compares the link it
//!   follows with the slot count and tests the live bit of the slot it takes (a byte it loads anyway), and
//!   refuses a broken link (a debug panic, `None` in release) instead of leaving the region.
//! - Stale handle (`IndexPool`): the stamp's high byte counts the slot's allocations and every handle carries
//!   the stamp of its own, so a handle whose object was freed and whose slot was allocated again is refused
//!   ([`PoolError::Stale`]): the same compare per `free`/`get`, a load, add and store per `alloc`. The
//!   count wraps after 256 allocations of one slot: a handle exactly 256 (512, ...) reuses old names the
//!   slot's object again and is taken for it. The other pools hand out bare indices or pointers, with no
//!   generation: an old index or pointer to a slot allocated again is not detected.
//! - `check()` is O(capacity) and meant for tests and debug builds, not for the frame loop.

mod flag;
mod handle;
mod index;
mod intrusive;
mod packed;
#[cfg(any(test, feature = "testing"))]
pub mod props;
mod ptr;
mod value;

pub use flag::FlagPool;
pub use handle::Handle;
pub use index::{Index, IndexPool, Iter, IterMut, Sweep};
pub use intrusive::IntrusivePool;
pub use packed::{Packed18, Packed24};
pub use ptr::PtrPool;
pub use value::ValueStack;

/// Calls `drop_at(k)` for each `k` in `from..end`, going on with the rest when one call panics, as a `Vec` drops its
/// elements: a guard carries on from the next `k` while the panic unwinds (a second panic aborts). The pools'
/// `Drop` use it, so that one value whose `drop` panics does not leak the others.
fn drop_each<F: FnMut(usize)>(from: usize, end: usize, drop_at: &mut F) {
    struct Rest<'f, F: FnMut(usize)> {
        next: usize,
        end: usize,
        drop_at: &'f mut F,
    }
    impl<F: FnMut(usize)> Drop for Rest<'_, F> {
        fn drop(&mut self) {
            drop_each(self.next, self.end, self.drop_at);
        }
    }
    let mut rest = Rest { next: from, end, drop_at };
    while rest.next < rest.end {
        let k = rest.next;
        rest.next += 1;
        (rest.drop_at)(k);
    }
    core::mem::forget(rest);
}

/// What every pool does, whatever its free list: the common interface, for code generic over `P: Pool` (a test
/// driver, a debug overlay, a game that swaps one pool for another). `len` counts the slots handed out, for every
/// pool. Each pool's inherent methods are its own interface, with its extras (`get`, sweeps, `is_live`) and, where
/// it has no value to store, an `alloc` without one (`ValueStack`: `pop` and `push`).
pub trait Pool {
    /// What `alloc` stores and `free` gives back: `()` for pools that hand out bare slots.
    type Value;
    /// What `alloc` hands out and `free` takes back: a handle, an index, a pointer or a value.
    type Handle: Copy;
    /// Takes a free slot for `value` and returns its handle, or hands `value` back when the pool is full.
    fn alloc(&mut self, value: Self::Value) -> Result<Self::Handle, Self::Value>;
    /// Frees `handle`'s slot and returns its value; `Err` (pool unchanged) when `handle` is not live here.
    fn free(&mut self, handle: Self::Handle) -> Result<Self::Value, PoolError>;
    /// The number of live slots.
    fn len(&self) -> usize;
    /// The number of slots.
    fn capacity(&self) -> usize;
    /// True when nothing is allocated.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// True when `alloc` would hand its value back.
    fn is_full(&self) -> bool {
        self.len() == self.capacity()
    }
    /// Verifies the pool's invariants (module docs). `&mut`: some pools mark their free entries while they
    /// walk them, to find one listed twice without memory of their own, and clear the marks before returning.
    fn check(&mut self) -> Result<(), CheckError>;
}

/// Why a `free` (or `get`, or `push`) was refused. The pool is unchanged when one of these is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The slot is already free: the handle, index or pointer was freed before.
    DoubleFree,
    /// `get`/`get_mut` of a handle whose slot is free (it was freed).
    Dangling,
    /// The handle outlived its object: its slot was freed and allocated again since (its generation differs).
    Stale,
    /// The handle belongs to another pool (its pool id differs), or the pointer is outside this pool's slots.
    ForeignHandle,
    /// The index is not below the pool's capacity.
    OutOfRange,
    /// The pointer is inside this pool but not at the start of a slot.
    Misaligned,
    /// `ValueStack::push` onto a full stack: more values returned than were taken out.
    Overflow,
}

/// The invariant (see the module docs) that `check()` found broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs, reason = "each variant's doc says what its named fields hold")]
pub enum CheckError {
    /// IX1, PK1, PT1, VS1, IN1: the free (`IndexPool`: live or peak) count exceeds the capacity.
    CountTooLarge,
    /// IX2, PK2, PT2, IN2: the stack entry (or list link) at position `at` is not a slot of this pool.
    EntryOutOfRange { at: usize },
    /// IX2: `slot`'s word does not hold the link of the position that names it.
    PosMismatch { slot: usize },
    /// PK2, PT2, IN2: `slot` is on the free stack/list but marked live, or is on it twice.
    FreeButLive { slot: usize },
    /// PK2, PT2, IN2: `slot` is marked free but is not on the free stack/list.
    Leaked { slot: usize },
    /// IN3: the free list is longer or shorter than the free count (or loops).
    ListLength,
    /// FL1: the live count differs from the number of set flags.
    CountMismatch,
    /// IX4: the peak is below the number of live slots, or a slot at or above it was allocated.
    PeakBelowLive,
    /// IX5: `slot`'s stamp names another pool id than slot 0's.
    IdMismatch { slot: usize },
}

#[cfg(test)]
mod tests;
