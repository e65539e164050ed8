//! stackshot-alloc in a game on the `gba` crate: a pool of bullets and the heap, both in IWRAM; the heap is the
//! program's `#[global_allocator]` (the gba crate has none), so `Vec` and `Box` work as usual. mGBA plays the
//! ELF that `cargo build --release` writes; the lines it prints go to mGBA's log.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt::Write;
use gba::mgba::{MgbaBufferedLogger, MgbaMessageLevel};
use stackshot_alloc::heap::GlobalHeap;
use stackshot_alloc::irq::IrqLock;
use stackshot_alloc::pool::IndexPool;

/// Every `Vec`, `Box` and `String` comes from here: 4 KB in IWRAM (a static of the runtime's `.bss`, so no
/// copy in ROM), set up by the first allocation. `IrqLock` masks interrupts for the few cycles of each heap
/// call, so interrupt handlers may allocate too.
#[global_allocator]
static HEAP: GlobalHeap<IrqLock, 4096> = GlobalHeap::new();

#[derive(Debug)]
struct Bullet {
    y: i16,
    dy: i16,
}

/// The bullet pool's tag: its handles are `Handle<Bullet, u8, Shots>`, which no pool with another tag takes (a
/// compile error).
struct Shots;

/// Up to 32 bullets, in IWRAM like every plain static here (the linker script puts `.data` and `.bss` there).
static mut BULLETS: IndexPool<Bullet, u8, 32, Shots> = IndexPool::new();

#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    // SAFETY: `main` runs once and is the only code that names BULLETS: this is the one borrow of the pool. (An
    // interrupt handler must never name it: a pool shared with one goes in an `IrqMutex`.)
    let bullets = unsafe {
        let pool = &raw mut BULLETS;
        &mut *pool
    };

    // Five bullets fly up 15 pixels; those that leave the screen go back to the pool. A full pool would hand
    // the bullet back in its `Err`.
    let shots: [_; 5] = core::array::from_fn(|i| {
        let y = 10 * i as i16;
        bullets.alloc(Bullet { y, dy: -15 }).unwrap()
    });
    for h in shots {
        let b = bullets.get_mut(h).unwrap();
        b.y += b.dy;
        if b.y < 0 {
            bullets.free(h).unwrap();
        }
    }
    // A freed handle is refused, and the pool is unchanged: `Err(Dangling)` to read it, `Err(DoubleFree)` to free it
    // again, and `Err(Stale)` for both once its slot holds a new bullet.
    let live = shots.iter().filter_map(|&h| bullets.get(h).ok());
    let y_sum: i16 = live.map(|b| b.y).sum();
    let twice = bullets.free(shots[0]);
    log(format_args!(
        "pool: {} live, y sum {y_sum}, second free {twice:?}, slots at {:p}",
        bullets.len(),
        &raw const BULLETS
    ));

    // The heap, as the global allocator.
    let squares: Vec<u32> = (1..=10).map(|n| n * n).collect();
    let boxed = Box::new(42u32);
    let stats = HEAP.stats().unwrap();
    log(format_args!(
        "heap: vec sum {} at {:p}, box {boxed} at {:p}, {} of {} bytes used",
        squares.iter().sum::<u32>(),
        squares.as_ptr(),
        &*boxed,
        stats.used_bytes,
        stats.capacity
    ));
    drop((squares, boxed));
    let left = HEAP.stats().unwrap().used_bytes;
    log(format_args!("heap: {left} bytes used after drop"));

    // A game's frame loop would go here. This one halts the CPU, for good: it enables no interrupt.
    loop {
        gba::bios::VBlankIntrWait();
    }
}

/// One line to mGBA's log (nowhere on hardware).
fn log(args: core::fmt::Arguments) {
    if let Ok(mut logger) = MgbaBufferedLogger::try_new(MgbaMessageLevel::Info) {
        let _ = writeln!(logger, "{args}");
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    log(format_args!("panic: {info}"));
    loop {}
}
