//! Fixed-size pools, 256 slots of `u32` each: cycles per allocate and per free in this build, against the
//! assembly reference (inline and called) and the crates a Rust user reaches for.

use crate::heaps::Region;
use crate::reference;
use crate::report;
use crate::stats::{Cells, Samples, Summary};
use crate::timing::{self, BUILD};
use crate::work::{SAMPLES, SLOTS, Work};
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use stackshot_alloc::iwram::{pool_alloc, pool_free};
use stackshot_alloc::pool::{FlagPool, Handle, IndexPool, IntrusivePool, Packed18, Packed24, PtrPool, ValueStack};
use stackshot_alloc::rng::Rng;
use stackshot_platform::cycles::{Op, OpTimer};

/// Random allocate/free operations after the fill-and-empty phase.
const MIXED_OPS: usize = 1200;

/// A pool under test. `alloc` and `free` are `#[inline(always)]` around the pool's own methods, so that they
/// inline whole into the timing function of this build. Nothing in them may panic: a panic path is a call
/// into ROM, so a refused free is returned and checked outside the timed code.
pub trait Subject {
    type Key: Copy;
    fn alloc(&mut self) -> Option<Self::Key>;
    /// False if the pool refused the free.
    fn free(&mut self, key: Self::Key) -> bool;
    /// False if the pool had to grow its storage (so a measured operation allocated).
    fn storage_unchanged(&self) -> bool {
        true
    }
}

/// Implements [`Subject`] with two expressions.
macro_rules! subject {
    ($ty:ty, $key:ty, |$p:ident| $alloc:expr, |$q:ident, $k:ident| $free:expr) => {
        impl Subject for $ty {
            type Key = $key;
            #[inline(always)]
            fn alloc(&mut self) -> Option<$key> {
                let $p = self;
                $alloc
            }
            #[inline(always)]
            fn free(&mut self, $k: $key) -> bool {
                let $q = self;
                $free.is_ok()
            }
        }
    };
}

/// Ids from the type, as the game's pools have theirs: all zeros when empty, with a non-zero id.
pub type Index8 = IndexPool<u32, u8, SLOTS, (), 1>;
pub type Index16 = IndexPool<u32, u16, SLOTS, (), 2>;
pub type P24 = Packed24<{ SLOTS / 32 }>;
pub type P18 = Packed18<{ SLOTS / 32 }>;
pub type Values = ValueStack<u8, SLOTS>;
pub type Flags = FlagPool<u32, SLOTS>;

subject!(Index8, Handle<u32, u8>, |p| p.alloc(7).ok(), |p, k| p.free(k));
subject!(Index16, Handle<u32, u16>, |p| p.alloc(7).ok(), |p, k| p.free(k));
subject!(P24, u32, |p| p.alloc(), |p, k| p.free(k));
subject!(P18, u32, |p| p.alloc(), |p, k| p.free(k));
subject!(PtrPool<'_, u32, SLOTS>, NonNull<u32>, |p| p.alloc(7).ok(), |p, k| p.free(k));
subject!(Values, u8, |p| p.pop(), |p, k| p.push(k));
subject!(IntrusivePool<'_>, NonNull<u8>, |p| p.alloc(), |p, k| p.free(k));
subject!(Flags, Handle<u32, u16>, |p| p.alloc(7).ok(), |p, k| p.free(k));

/// `IndexPool<u8>` as a game calls it from code that does not inline it: through the crate's
/// `stackshot_alloc::iwram` functions, a call of an ARM function in IWRAM each (in the ARM/IWRAM build; Thumb
/// functions in ROM in the other), like the called reference.
pub struct Called(pub Index8);
impl Subject for Called {
    type Key = Handle<u32, u8>;
    #[inline(always)]
    fn alloc(&mut self) -> Option<Handle<u32, u8>> {
        pool_alloc(&mut self.0, 7).ok()
    }
    #[inline(always)]
    fn free(&mut self, key: Handle<u32, u8>) -> bool {
        pool_free(&mut self.0, key).is_ok()
    }
}

/// `slab` and `thunderdome`, with their storage reserved up front, so that no operation measured here
/// allocates (checked: their capacity does not change).
pub struct Slab(pub slab::Slab<u32>);
impl Subject for Slab {
    type Key = usize;
    #[inline(always)]
    fn alloc(&mut self) -> Option<usize> {
        Some(self.0.insert(7))
    }
    #[inline(always)]
    fn free(&mut self, key: usize) -> bool {
        self.0.try_remove(key).is_some()
    }
    fn storage_unchanged(&self) -> bool {
        self.0.capacity() == SLOTS
    }
}

pub struct Arena(pub thunderdome::Arena<u32>);
impl Subject for Arena {
    type Key = thunderdome::Index;
    #[inline(always)]
    fn alloc(&mut self) -> Option<thunderdome::Index> {
        Some(self.0.insert(7))
    }
    #[inline(always)]
    fn free(&mut self, key: thunderdome::Index) -> bool {
        self.0.remove(key).is_some()
    }
    fn storage_unchanged(&self) -> bool {
        self.0.capacity() == SLOTS
    }
}

struct AllocOp<'a, S>(&'a mut S);
impl<S: Subject> Op for AllocOp<'_, S> {
    type Out = Option<S::Key>;
    #[inline(always)]
    fn run(&mut self) -> Option<S::Key> {
        self.0.alloc()
    }
}

struct FreeOp<'a, S: Subject>(&'a mut S, S::Key);
impl<S: Subject> Op for FreeOp<'_, S> {
    type Out = bool;
    #[inline(always)]
    fn run(&mut self) -> bool {
        self.0.free(self.1)
    }
}

/// Alloc and free medians of one row, for the ratios.
#[derive(Clone, Copy)]
pub struct Medians {
    pub alloc: u16,
    pub free: u16,
}

impl Medians {
    fn sum(self) -> u32 {
        u32::from(self.alloc) + u32::from(self.free)
    }
}

/// The reference's medians, called and inline.
#[derive(Clone, Copy)]
pub struct Reference {
    pub call: Medians,
    pub inline: Medians,
}

/// Fills the pool, empties it in a shuffled order, then runs random allocate/free; every operation timed.
fn measure<S: Subject>(pool: &mut S, timer: OpTimer, work: &mut Work) {
    let (allocs, frees, keys, order) = work.for_pool::<S::Key>();
    allocs.clear();
    frees.clear();
    let free = |pool: &mut S, key: S::Key, frees: &mut Samples<SAMPLES>| {
        let (ok, cycles) = timer.time(&mut FreeOp(pool, key));
        assert!(ok, "the pool refused to free a key it handed out");
        frees.push(cycles);
    };
    for key in keys.iter_mut() {
        let (k, cycles) = timer.time(&mut AllocOp(pool));
        *key = Some(k.expect("256 slots"));
        allocs.push(cycles);
    }
    let mut rng = Rng::new(0x9001);
    for i in (1..SLOTS).rev() {
        order.swap(i, rng.below(i as u32 + 1) as usize);
    }
    for &i in order.iter() {
        free(pool, keys[usize::from(i)].take().expect("live"), frees);
    }
    for _ in 0..MIXED_OPS {
        let i = rng.below(SLOTS as u32) as usize;
        match keys[i].take() {
            Some(key) => free(pool, key, frees),
            None => {
                let (k, cycles) = timer.time(&mut AllocOp(pool));
                keys[i] = Some(k.expect("a free slot exists"));
                allocs.push(cycles);
            }
        }
    }
    for key in keys.iter_mut().filter_map(Option::take) {
        assert!(pool.free(key), "the pool refused to free a key it handed out");
    }
}

/// Builds a pool in `space` with `make` (which returns its bookkeeping bytes per slot ×100), measures it and
/// prints its row (and its bars in the ARM build, if `charted`); returns its medians. The pool is built in place
/// in IWRAM that the heap tables use later, instead of on the stack, where the larger pools and their copies
/// would not fit beside the rest. Not inlined, so that one pool's temporaries are on the stack at a time.
#[inline(never)]
pub fn row<S: Subject>(
    space: &mut Region,
    make: impl FnOnce(&mut MaybeUninit<S>) -> usize,
    name: &str,
    charted: bool,
    reference: Medians,
    work: &mut Work,
) -> Medians {
    assert!(size_of::<S>() <= size_of::<Region>() && align_of::<S>() <= align_of::<Region>(), "{name} does not fit");
    // SAFETY: the region is at least as large and as aligned as `S` (checked above), and borrowed exclusively.
    let slot = unsafe { &mut *(space as *mut Region).cast::<MaybeUninit<S>>() };
    let bytes_per_slot_x100 = make(slot);
    // SAFETY: `make` has written the pool.
    let pool = unsafe { slot.assume_init_mut() };
    let (a, f) = run(pool, work);
    // SAFETY: initialised above and not used again.
    unsafe { slot.assume_init_drop() };
    print(name, charted, bytes_per_slot_x100, a, f, reference)
}

/// The alloc and free summaries of one pool.
fn run<S: Subject>(pool: &mut S, work: &mut Work) -> (Summary, Summary) {
    measure(pool, timing::timer(), work);
    assert!(pool.storage_unchanged(), "a pool grew its storage while it was measured");
    let every = "every pool run allocates and frees";
    (work.allocs.summary().expect(every), work.frees.summary().expect(every))
}

/// `reference`: the medians of the assembly reference timed the same way as the row, inlined or called.
fn print(name: &str, charted: bool, bytes_per_slot_x100: usize, a: Summary, f: Summary, reference: Medians) -> Medians {
    let medians = Medians { alloc: a.median, free: f.median };
    report::row(
        "pools",
        format_args!(
            "{name}|{}.{:02}|{}|{}|{}",
            bytes_per_slot_x100 / 100,
            bytes_per_slot_x100 % 100,
            Cells(Some(a)),
            Cells(Some(f)),
            Ratio::of(medians.sum(), reference.sum())
        ),
    );
    if charted && timing::ARM {
        report::bar(format_args!("pool alloc"), name, a.median);
        report::bar(format_args!("pool free"), name, f.median);
    }
    medians
}

/// A ratio ×100, rounded.
struct Ratio(u32);
impl Ratio {
    fn of(n: u32, d: u32) -> Ratio {
        Ratio((n * 200 + d) / (2 * d))
    }
}
impl core::fmt::Display for Ratio {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        write!(f, "{}.{:02}×", self.0 / 100, self.0 % 100)
    }
}

/// Starts the pool table of this build.
pub fn table() {
    report::table(
        "pools",
        &["Fixed-size pools, 256 slots of u32, ", BUILD, ": cycles per operation"],
        &[
            "pool",
            "bytes/slot",
            "alloc min",
            "alloc median",
            "alloc p99",
            "alloc max",
            "free min",
            "free median",
            "free p99",
            "free max",
            "vs. asm",
        ],
    );
}

/// Measures the reference, called and inline, and prints both rows.
pub fn reference(work: &mut Work) -> Reference {
    let call = run(&mut reference::Call(reference::RefStack::full()), work);
    let inline = run(&mut reference::Inline(reference::RefStack::full()), work);
    let medians = |(a, f): (Summary, Summary)| Medians { alloc: a.median, free: f.median };
    let r = Reference { call: medians(call), inline: medians(inline) };
    print("assembly reference, called", false, 100, call.0, call.1, r.call);
    print("assembly reference, inline", true, 100, inline.0, inline.1, r.inline);
    r
}

/// Bookkeeping bytes per slot ×100: what the pool costs beyond its payload of `payload` bytes a slot.
pub fn overhead_x100(total_bytes: usize, payload: usize) -> usize {
    (total_bytes - payload * SLOTS) * 100 / SLOTS
}

/// Storage a `PtrPool` and an `IntrusivePool` borrow.
pub struct Borrowed {
    pub ptr_slots: [MaybeUninit<u32>; SLOTS],
    /// 256 slots of 4 bytes, plus room for the live bits the pool carves from the front.
    pub intrusive: [u32; SLOTS + 16],
}
