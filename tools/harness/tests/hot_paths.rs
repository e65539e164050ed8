//! Every hot path is ARM code in IWRAM that never calls back into ROM, as the ELF shows.
mod common;

use harness::elf::{Elf, IWRAM};

/// The functions that must stay fast. Add each new hot path here.
const HOT_PATHS: &[&str] = &[
    "fill_words",
    // The allocators' fast paths, as the game links them. The pools' frees happen in the sweeps
    // (`IndexPool::sweep`, inlined into the game's hot paths below), so the game links no `pool_free`. The
    // game reaches the heap only through its `LockedHeap` (the scratch owners), so `heap_alloc` and
    // `heap_free` are here only if the adapter calls the ARM code rather than inlining the heap as Thumb.
    "pool_alloc",
    "pool_get_mut",
    "heap_alloc",
    "heap_free",
    // The zeroing of each scratch the owners hand out (`boxed_slice_zeroed`).
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

#[test]
fn hot_paths_are_arm_code_in_iwram() {
    let elf = Elf::read(&common::elf()).unwrap();
    for name in HOT_PATHS {
        let f = elf.check_hot_path(name).unwrap_or_else(|e| panic!("{e}"));
        println!("{name}: ARM, {} bytes at {:#010x}", f.size, f.address);
    }
}

#[test]
fn no_function_in_iwram_calls_into_rom() {
    let elf = Elf::read(&common::elf()).unwrap();
    let in_iwram: Vec<_> = elf.symbols.iter().filter(|s| s.function && IWRAM.contains(&s.address)).collect();
    assert!(!in_iwram.is_empty());
    for f in in_iwram {
        elf.check_hot_path(&f.name).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn the_check_rejects_thumb_code_in_rom() {
    let elf = Elf::read(&common::elf()).unwrap();
    let e = elf.check_hot_path("main").unwrap_err();
    assert!(e.contains("not in IWRAM"), "{e}");
}
