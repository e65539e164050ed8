//! Host-only tests across the pool module: bookkeeping sizes and the long property runs.

extern crate std;

use core::mem::size_of;
use std::println;

use super::props;
use super::{FlagPool, IndexPool, Packed18, Packed24, PtrPool};

/// Bookkeeping bytes a slot: the pool's size minus the payload it stores, over the slot count.
fn per_slot(pool: usize, payload: usize, slots: usize) -> f64 {
    (pool - payload) as f64 / slots as f64
}

/// A `u32` index stack with the same live bits as the packed ones: what they are measured against.
#[allow(dead_code, reason = "only its size is measured; its fields are never read")]
struct U32Stack<const G: usize> {
    entries: [[u32; 32]; G],
    live: [u32; G],
    top: u32,
    fresh: u32,
}

#[test]
fn sizes() {
    type T = u32;
    let p = size_of::<usize>();
    println!("bookkeeping bytes per slot (host, {p}-byte pointers; T = u32):");
    println!("{:<34} {:>10} {:>10}", "variant", "256 slots", "4096 slots");
    let rows: [(&str, f64, f64); 8] = [
        ("IndexPool<T, u8, 256>", per_slot(size_of::<IndexPool<T, u8, 256>>(), 256 * 4, 256), f64::NAN),
        (
            "IndexPool<T, u16, N>",
            per_slot(size_of::<IndexPool<T, u16, 256>>(), 256 * 4, 256),
            per_slot(size_of::<IndexPool<T, u16, 4096>>(), 4096 * 4, 4096),
        ),
        ("Packed24<N / 32>", per_slot(size_of::<Packed24<8>>(), 0, 256), per_slot(size_of::<Packed24<128>>(), 0, 4096)),
        ("Packed18<N / 32>", per_slot(size_of::<Packed18<8>>(), 0, 256), per_slot(size_of::<Packed18<128>>(), 0, 4096)),
        (
            "u32 stack (comparison)",
            per_slot(size_of::<U32Stack<8>>(), 0, 256),
            per_slot(size_of::<U32Stack<128>>(), 0, 4096),
        ),
        (
            "PtrPool<'_, T, N>",
            per_slot(size_of::<PtrPool<'_, T, 256>>(), 0, 256),
            per_slot(size_of::<PtrPool<'_, T, 4096>>(), 0, 4096),
        ),
        (
            "FlagPool<T, N>",
            per_slot(size_of::<FlagPool<T, 256>>(), 256 * 4, 256),
            per_slot(size_of::<FlagPool<T, 4096>>(), 4096 * 4, 4096),
        ),
        // The intrusive pool's list lives in the free slots; only its live bit and fixed header remain.
        (
            "IntrusivePool (live bit + header)",
            0.125 + size_of::<super::IntrusivePool<'_>>() as f64 / 256.0,
            0.125 + size_of::<super::IntrusivePool<'_>>() as f64 / 4096.0,
        ),
    ];
    for (name, a, b) in rows {
        // NaN: the variant does not come in that size (a `u8` pool has at most 256 slots).
        let b = if b.is_nan() { std::string::String::from("-") } else { std::format!("{b:.3}") };
        println!("{name:<34} {a:>10.3} {b:>10}");
    }
    // The packed stacks must beat plain u32 entries (with the same live bits) at both sizes: 3 and 2.25
    // bytes an entry against 4, plus the same 1/8-byte live bit and an 8-byte header.
    assert!(size_of::<Packed18<8>>() < size_of::<Packed24<8>>());
    assert!(size_of::<Packed24<8>>() < size_of::<U32Stack<8>>());
    assert_eq!(size_of::<Packed24<128>>(), 4096 * 3 + 4096 / 8 + 8);
    assert_eq!(size_of::<Packed18<128>>(), 4096 * 9 / 4 + 4096 / 8 + 8);
    assert_eq!(size_of::<U32Stack<128>>(), 4096 * 4 + 4096 / 8 + 8);
    assert_eq!(size_of::<super::Handle<T, u8>>(), 4, "index, and the u16 stamp of generation and pool id");
}

/// Runs every driver with several seeds, `scale` times its base op count (scaled by how slow a step is:
/// the index pools compare 256-300 slots a step), and returns the total number of operations.
fn all(scale: u32) -> u64 {
    let mut total = 0;
    for (name, driver) in props::ALL {
        let (seeds, ops) = match name {
            "index_pool_u8" | "index_pool_u16" => (4, 25 * scale),
            "value_stack" => (4, 100 * scale),
            // Seven seeds: one per slot size.
            "intrusive" => (7, 20 * scale),
            _ => (4, 50 * scale),
        };
        for seed in 1..=seeds {
            if let Err(f) = driver(seed, ops) {
                panic!("{name} seed {seed}: {f}");
            }
        }
        println!("{name}: {} ops", seeds * ops);
        total += (seeds * ops) as u64;
    }
    total
}

/// About two million operations: the default `cargo test` run. Under Miri 1,500: every driver still runs
/// every kind of step, in fewer of them.
#[test]
#[cfg_attr(miri, ignore = "minutes under Miri; `props::tests::drivers_pass` runs the same drivers there")]
fn properties() {
    let total = all(if cfg!(miri) { 1 } else { 1_500 });
    println!("property ops in total: {total}");
}

/// Tens of millions: `cargo test --release -p stackshot-alloc -- --include-ignored`.
#[test]
#[cfg_attr(debug_assertions, ignore = "release-speed: run with --release -- --include-ignored")]
fn properties_long() {
    let total = all(30_000);
    println!("property ops in total (long): {total}");
}

/// The `Pool` trait means the same in every pool: `len` counts what is handed out, `is_full` is exactly when
/// `alloc` refuses, `is_empty` exactly when nothing is out; filling and emptying through the trait alone.
#[test]
fn the_pool_trait_means_the_same_for_every_pool() {
    use super::{IntrusivePool, Pool, ValueStack};
    use core::mem::MaybeUninit;

    fn fill_and_empty<P: Pool>(pool: &mut P, value: impl Fn() -> P::Value, name: &str) {
        let capacity = pool.capacity();
        assert!(pool.is_empty() && !pool.is_full() && pool.len() == 0, "{name}: a new pool is empty");
        let mut out = std::vec::Vec::new();
        while !pool.is_full() {
            out.push(pool.alloc(value()).unwrap_or_else(|_| panic!("{name}: alloc refused before full")));
            assert_eq!(pool.len(), out.len(), "{name}: len counts what is out");
        }
        assert_eq!(out.len(), capacity, "{name}: full at its capacity");
        assert!(pool.alloc(value()).is_err(), "{name}: a full pool refuses");
        assert_eq!(pool.check(), Ok(()), "{name}");
        for h in out {
            assert!(pool.free(h).is_ok(), "{name}: free of what alloc handed out");
        }
        assert!(pool.is_empty() && pool.len() == 0, "{name}: empty again");
        assert_eq!(pool.check(), Ok(()), "{name}");
    }

    fill_and_empty(&mut IndexPool::<u32, u8, 5>::new(), || 7, "IndexPool<u8>");
    fill_and_empty(&mut IndexPool::<u32, u16, 300>::new(), || 7, "IndexPool<u16>");
    fill_and_empty(&mut FlagPool::<u32, 9>::new(1), || 7, "FlagPool");
    fill_and_empty(&mut Packed24::<2>::new(), || (), "Packed24");
    fill_and_empty(&mut Packed18::<2>::new(), || (), "Packed18");
    let mut slots = [const { MaybeUninit::uninit() }; 6];
    fill_and_empty(&mut PtrPool::<u32, 6>::new(&mut slots), || 7, "PtrPool");
    fill_and_empty(&mut ValueStack::<u8, 4>::full([1, 2, 3, 4]), || (), "ValueStack");
    let mut region = [0u8; 256];
    fill_and_empty(&mut IntrusivePool::new(&mut region, 8).unwrap(), || (), "IntrusivePool");
}

/// A value that counts its drops, and panics in the drop of the one numbered `panics`.
struct Counted<'c> {
    n: u32,
    panics: u32,
    drops: &'c core::cell::Cell<u32>,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
        if self.n == self.panics {
            panic!("the drop of value {} panics", self.n);
        }
    }
}

/// Dropping a pool drops every live value, as a `Vec` does, even when one value's `drop` panics.
#[test]
fn a_pool_drops_every_value_when_one_drop_panics() {
    let drops = core::cell::Cell::new(0);
    let mut index: IndexPool<Counted<'_>, u8, 16> = IndexPool::new();
    for n in 0..8 {
        assert!(index.alloc(Counted { n, panics: 3, drops: &drops }).is_ok());
    }
    assert!(std::panic::catch_unwind(core::panic::AssertUnwindSafe(move || drop(index))).is_err());
    assert_eq!(drops.get(), 8, "IndexPool dropped {} of its 8 values", drops.get());

    drops.set(0);
    let mut flag: FlagPool<Counted<'_>, 16> = FlagPool::new(0);
    for n in 0..8 {
        assert!(flag.alloc(Counted { n, panics: 3, drops: &drops }).is_ok());
    }
    assert!(std::panic::catch_unwind(core::panic::AssertUnwindSafe(move || drop(flag))).is_err());
    assert_eq!(drops.get(), 8, "FlagPool dropped {} of its 8 values", drops.get());
}
