//! stackshot-alloc in an agb game: a pool of bullets and a heap, both in IWRAM.
//!
//! agb 0.25 installs its own `#[global_allocator]` (a block allocator in EWRAM) and has no feature to turn it
//! off; a second one in the game does not compile. So our heap is an allocator you name: `Vec::new_in(HEAP.heap())`,
//! `Box::new_in(x, HEAP.heap())`. Plain `Vec::new()` still allocates from agb's.
//!
//! `cargo run --release` in this folder plays it in mGBA; the lines it prints go to mGBA's log.
#![no_std]
#![no_main]
#![feature(allocator_api)]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use stackshot_alloc::heap::GlobalHeap;
use stackshot_alloc::irq::IrqLock;
use stackshot_alloc::pool::IndexPool;

#[derive(Debug)]
struct Bullet {
    y: i16,
    dy: i16,
}

/// The bullet pool's tag: its handles are `Handle<Bullet, u8, Shots>`, which no other pool of bullets takes.
struct Shots;

// agb's linker script puts `.bss` in EWRAM, so IWRAM needs an `.iwram.*` section. Its initial value is kept in
// ROM and copied at start-up (the heap's 2 KB of zeros included).
#[unsafe(link_section = ".iwram.bullets")]
static mut BULLETS: IndexPool<Bullet, u8, 32, Shots> = IndexPool::new();

/// The heap: 2 KB of its own region, set up by its first allocation. `IrqLock` masks interrupts for the few
/// cycles of each heap call, so interrupt handlers may use it too.
#[unsafe(link_section = ".iwram.heap")]
static HEAP: GlobalHeap<IrqLock, 2048> = GlobalHeap::new();

#[agb::entry]
fn main(_gba: agb::Gba) -> ! {
    // SAFETY: `main` runs once and is the only code that names BULLETS: this is the one borrow of the pool.
    let bullets = unsafe {
        let pool = &raw mut BULLETS;
        &mut *pool
    };

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
    let mut squares = Vec::new_in(HEAP.heap());
    squares.extend((1..=10u32).map(|n| n * n));
    let boxed = Box::new_in(42u32, HEAP.heap());
    let stats = HEAP.stats().unwrap();
    agb::println!(
        "heap: vec sum {} at {:p}, box {boxed} at {:p}, {} of {} bytes used",
        squares.iter().sum::<u32>(),
        squares.as_ptr(),
        &*boxed,
        stats.used_bytes,
        stats.capacity
    );
    drop((squares, boxed));
    agb::println!("heap: {} bytes used after drop", HEAP.stats().unwrap().used_bytes);

    loop {
        agb::halt();
    }
}
