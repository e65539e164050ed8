//! stackshot-alloc in an agb game: a pool of bullets and a heap, both in IWRAM.
//!
//! agb 0.25 installs its own `#[global_allocator]` (a block allocator in EWRAM) and has no feature to turn it
//! off; a second one in the game does not compile. So our heap is an allocator you name: `Vec::new_in(&HEAP)`,
//! `Box::new_in(x, &HEAP)`. Plain `Vec::new()` still allocates from agb's.
//!
//! `cargo run --release` in this folder plays it in mGBA; the lines it prints go to mGBA's log.
#![no_std]
#![no_main]
#![feature(allocator_api)]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use stackshot_alloc::heap::{Heap, LockedHeap};
use stackshot_alloc::irq::IrqLock;
use stackshot_alloc::pool::IndexPool;

#[derive(Debug)]
struct Bullet {
    y: i16,
    dy: i16,
}

// agb's linker script puts `.bss` in EWRAM, so IWRAM needs an `.iwram.*` section. Its initial value is kept in
// ROM and copied at start-up (the heap's 2 KB of zeros included).
#[unsafe(link_section = ".iwram.bullets")]
static mut BULLETS: IndexPool<Bullet, u8, 32> = IndexPool::new(1);

/// The heap's bytes; 8-aligned, the heap's block size.
#[repr(C, align(8))]
struct Region([u8; 2048]);
#[unsafe(link_section = ".iwram.heap")]
static mut REGION: Region = Region([0; 2048]);

/// `IrqLock` masks interrupts for the few cycles of each heap call, so interrupt handlers may use it too.
static HEAP: LockedHeap<'static, IrqLock> = LockedHeap::new();

#[agb::entry]
fn main(_gba: agb::Gba) -> ! {
    // SAFETY: `main` runs once and is the only code that names BULLETS or REGION: this is the one borrow of
    // the pool, and the region is from now on reached only through the heap.
    let (bullets, heap) = unsafe {
        let (pool, region) = (&raw mut BULLETS, &raw mut REGION);
        (&mut *pool, Heap::from_raw(region.cast(), size_of::<Region>()))
    };
    assert!(HEAP.init(heap.expect("2 KB is a valid heap region")).is_ok(), "the heap is installed once");

    // The pool: five bullets fly up 15 pixels; those that leave the screen go back to the pool.
    let shots: [_; 5] = core::array::from_fn(|i| bullets.alloc(Bullet { y: 10 * i as i16, dy: -15 }).unwrap());
    for h in shots {
        let b = bullets.get_mut(h).unwrap();
        b.y += b.dy;
        if b.y < 0 {
            bullets.free(h).unwrap();
        }
    }
    // A freed handle reads as `Err(Dangling)`, and freeing it again is `Err(DoubleFree)`: the pool is unchanged.
    let y_sum: i16 = shots.iter().filter_map(|&h| bullets.get(h).ok()).map(|b| b.y).sum();
    let twice = bullets.free(shots[0]);
    agb::println!(
        "pool: {} live, y sum {y_sum}, second free {twice:?}, slots at {:p}",
        bullets.len(),
        &raw const BULLETS
    );

    // The heap, named as the allocator.
    let mut squares = Vec::new_in(&HEAP);
    squares.extend((1..=10u32).map(|n| n * n));
    let boxed = Box::new_in(42u32, &HEAP);
    let stats = HEAP.with(|h| h.stats()).unwrap();
    agb::println!(
        "heap: vec sum {} at {:p}, box {boxed} at {:p}, {} of {} bytes used",
        squares.iter().sum::<u32>(),
        squares.as_ptr(),
        &*boxed,
        stats.used_bytes,
        stats.capacity
    );
    drop((squares, boxed));
    agb::println!("heap: {} bytes used after drop", HEAP.with(|h| h.stats().used_bytes).unwrap());

    loop {
        agb::halt();
    }
}
