//! Fixed-size pools, 256 slots of `u32` each: cycles per allocate and per free, every variant built twice (ARM
//! code in IWRAM and Thumb code in ROM), against the assembly reference and the crates a Rust user reaches for.

use crate::reference::{self, RefStack};
use crate::report;
use crate::stats::Samples;
use stackshot::cycles::{Op, OpTimer};
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use stackshot_alloc::pool::{FlagPool, Handle, IndexPool, IntrusivePool, Packed18, Packed24, PtrPool, ValueStack};
use stackshot_alloc::rng::Rng;

pub const SLOTS: usize = 256;
/// Random allocate/free operations after the fill-and-empty phase.
const MIXED_OPS: usize = 1200;

/// A pool under test. `alloc` and `free` are `#[inline(always)]` around the pool's own `#[inline(always)]`
/// methods, so that they inline whole into the timing function of either build.
pub trait Subject {
    type Key: Copy;
    fn alloc(&mut self) -> Option<Self::Key>;
    fn free(&mut self, key: Self::Key);
}

/// Implements [`Subject`] with two expressions; a bad free panics (the benchmark would be wrong).
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
            fn free(&mut self, $k: $key) {
                let $q = self;
                if $free.is_err() {
                    panic!("the benchmark freed a key that was not live");
                }
            }
        }
    };
}

pub type Index8 = IndexPool<u32, u8, SLOTS>;
pub type Index16 = IndexPool<u32, u16, SLOTS>;
pub type P24 = Packed24<{ SLOTS / 32 }>;
pub type P18 = Packed18<{ SLOTS / 32 }>;
pub type Ptr = PtrPool<'static, u32, SLOTS>;
pub type Values = ValueStack<u8, SLOTS>;
pub type Flags = FlagPool<u32, SLOTS>;

subject!(Index8, Handle<u32, u8>, |p| p.alloc(7), |p, k| p.free(k));
subject!(Index16, Handle<u32, u16>, |p| p.alloc(7), |p, k| p.free(k));
subject!(P24, u32, |p| p.alloc(), |p, k| p.free(k));
subject!(P18, u32, |p| p.alloc(), |p, k| p.free(k));
subject!(Ptr, NonNull<u32>, |p| p.alloc(7), |p, k| p.free(k));
subject!(Values, u8, |p| p.pop(), |p, k| p.push(k));
subject!(IntrusivePool<'static>, NonNull<u8>, |p| p.alloc(), |p, k| p.free(k));
subject!(Flags, Handle<u32, u16>, |p| p.alloc(7), |p, k| p.free(k));

impl Subject for RefStack {
    type Key = u8;
    #[inline(always)]
    fn alloc(&mut self) -> Option<u8> {
        reference::pop(self)
    }
    #[inline(always)]
    fn free(&mut self, key: u8) {
        reference::push(self, key)
    }
}

/// `slab` and `thunderdome` are generic code of their own crates: their methods inline where the compiler
/// chooses, so they are measured as Thumb in ROM, the way a user's code calls them. Their storage is reserved
/// up front, so no operation measured here allocates.
pub struct Slab(pub slab::Slab<u32>);
impl Subject for Slab {
    type Key = usize;
    #[inline(always)]
    fn alloc(&mut self) -> Option<usize> {
        Some(self.0.insert(7))
    }
    #[inline(always)]
    fn free(&mut self, key: usize) {
        self.0.remove(key);
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
    fn free(&mut self, key: thunderdome::Index) {
        if self.0.remove(key).is_none() {
            panic!("the benchmark freed a key that was not live");
        }
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
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        self.0.free(self.1)
    }
}

/// Medians of one run, for the ratio to the reference.
#[derive(Clone, Copy)]
pub struct Medians {
    pub alloc: u16,
    pub free: u16,
}

/// Fills the pool, empties it in a shuffled order, then runs random allocate/free; every operation timed.
pub fn measure<S: Subject>(pool: &mut S, timer: OpTimer, allocs: &mut Samples<2048>, frees: &mut Samples<2048>) {
    let mut keys: [Option<S::Key>; SLOTS] = [None; SLOTS];
    let mut live = 0;
    allocs.clear();
    frees.clear();
    for key in keys.iter_mut() {
        let (k, cycles) = timer.time(&mut AllocOp(pool));
        *key = Some(k.expect("256 slots"));
        allocs.push(cycles);
        live += 1;
    }
    let mut rng = Rng::new(0x9001);
    let mut order: [u16; SLOTS] = core::array::from_fn(|i| i as u16);
    for i in (1..SLOTS).rev() {
        order.swap(i, rng.below(i as u32 + 1) as usize);
    }
    for &i in &order {
        let key = keys[usize::from(i)].take().expect("live");
        let ((), cycles) = timer.time(&mut FreeOp(pool, key));
        frees.push(cycles);
        live -= 1;
    }
    for _ in 0..MIXED_OPS {
        let i = rng.below(SLOTS as u32) as usize;
        match keys[i].take() {
            Some(key) => {
                let ((), cycles) = timer.time(&mut FreeOp(pool, key));
                frees.push(cycles);
                live -= 1;
            }
            None => {
                let (k, cycles) = timer.time(&mut AllocOp(pool));
                keys[i] = Some(k.expect("a free slot exists"));
                allocs.push(cycles);
                live += 1;
            }
        }
    }
    for key in keys.iter_mut().filter_map(Option::take) {
        pool.free(key);
        live -= 1;
    }
    assert_eq!(live, 0);
}

/// Measures `pool` in `arm` or Thumb build and prints its row (and its bars if `charted`); returns the medians.
pub fn row<S: Subject>(
    pool: &mut S,
    name: &str,
    arm: bool,
    charted: bool,
    bytes_per_slot_x100: usize,
    reference: Option<Medians>,
    allocs: &mut Samples<2048>,
    frees: &mut Samples<2048>,
) -> Medians {
    let timer = if reference.is_none() { crate::timing::without_call(arm) } else { OpTimer::new(arm) };
    measure(pool, timer, allocs, frees);
    let (a, f) = (allocs.summary(), frees.summary());
    let medians = Medians { alloc: a.median, free: f.median };
    let build = if arm { "ARM, IWRAM" } else { "Thumb, ROM" };
    let ratio = match reference {
        Some(r) => {
            let x100 = (u32::from(a.median) + u32::from(f.median)) * 100 / (u32::from(r.alloc) + u32::from(r.free));
            Ratio(x100)
        }
        None => Ratio(100),
    };
    report::row("pools", format_args!(
        "{name}|{build}|{}.{:02}|{}|{}|{}|{}|{}|{}|{ratio}",
        bytes_per_slot_x100 / 100, bytes_per_slot_x100 % 100, a.min, a.median, a.max, f.min, f.median, f.max
    ));
    if charted {
        report::bar(format_args!("pool alloc"), name, a.median);
        report::bar(format_args!("pool free"), name, f.median);
    }
    medians
}

struct Ratio(u32);
impl core::fmt::Display for Ratio {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        write!(f, "{}.{:02}×", self.0 / 100, self.0 % 100)
    }
}

/// Measures a pool in both builds, ARM in IWRAM then Thumb in ROM, each on a fresh pool from `make` (which also
/// gives its bookkeeping bytes per slot ×100); the chart shows the ARM build if `charted`. Returns the ARM
/// build's medians.
pub fn both_builds<S: Subject>(
    name: &str,
    charted: bool,
    mut make: impl FnMut() -> (S, usize),
    reference: Medians,
    allocs: &mut Samples<2048>,
    frees: &mut Samples<2048>,
) -> Medians {
    let (mut pool, bytes) = make();
    let arm = row(&mut pool, name, true, charted, bytes, Some(reference), allocs, frees);
    let (mut pool, bytes) = make();
    row(&mut pool, name, false, false, bytes, Some(reference), allocs, frees);
    arm
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
