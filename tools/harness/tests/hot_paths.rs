//! Every hot path is ARM code in IWRAM that never calls back into ROM but to the heap lock's panic, which stops
//! the game, as the ELF shows.
mod common;

use harness::elf::{Elf, IWRAM};

/// The functions that must stay fast. Add each new hot path here.
const HOT_PATHS: &[&str] = &[
    "fill_words",
    // The allocators' fast paths, as the game links them. The pools' frees happen in the sweeps
    // (`IndexPool::sweep`, inlined into the game's hot paths below), so the game links no `pool_free`. The
    // game reaches the heap only through its `LockedHeap` (the scratch owners), whose allocate (with the
    // zeroing of each scratch, `boxed_slice_zeroed`) and free take the lock and run the heap in one ARM
    // function each.
    "pool_alloc",
    "pool_get_mut",
    "alloc_block",
    "free_block",
    "zero_blocks",
    // The game's: moving bullets and particles, collisions, building the shadow sprite table.
    "move_bullets",
    "move_particles",
    "bullets_to_sparks",
    "burst",
    "ring",
    "remainder",
    "hit_enemies",
    "hit_player",
    "draw_pool",
    // The stack's high-water scan, on every frame of the overlay.
    "first_unpainted",
];

/// The one call into ROM a hot path may make: `IrqLock`'s panic on re-entry (stackshot-alloc's irq.rs), out of
/// line from the lock that `LockedHeap`'s ARM functions inline. It never returns, so it cannot slow them.
fn lock_panic(name: &str) -> bool {
    name.contains("15stackshot_alloc3irq9reentered")
}

#[test]
fn hot_paths_are_arm_code_in_iwram() {
    let elf = Elf::read(&common::elf()).unwrap();
    for name in HOT_PATHS {
        let f = elf.check_hot_path_except(name, &lock_panic).unwrap_or_else(|e| panic!("{e}"));
        println!("{name}: ARM, {} bytes at {:#010x}", f.size, f.address);
    }
}

#[test]
fn no_function_in_iwram_calls_into_rom() {
    let elf = Elf::read(&common::elf()).unwrap();
    let in_iwram: Vec<_> = elf.symbols.iter().filter(|s| s.function && IWRAM.contains(&s.address)).collect();
    assert!(!in_iwram.is_empty());
    for f in in_iwram {
        elf.check_hot_path_except(&f.name, &lock_panic).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn the_check_rejects_thumb_code_in_rom() {
    let elf = Elf::read(&common::elf()).unwrap();
    let e = elf.check_hot_path("main").unwrap_err();
    assert!(e.contains("not in IWRAM"), "{e}");
}

/// The panic that the exception above lets through is the heap lock's: `IrqLock` panics when the heap is
/// re-entered (an allocation inside `LockedHeap::with`), with no other way out of `lock`. Without the exception
/// the check sees it.
#[test]
fn the_heap_lock_reaches_rom_only_to_panic() {
    let elf = Elf::read(&common::elf()).unwrap();
    let e = elf.check_hot_path("alloc_block").unwrap_err();
    assert!(e.contains("(ROM)") && lock_panic(&e), "{e}");
}
