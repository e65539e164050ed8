//! Every hot path is ARM code in IWRAM that never calls back into ROM but to the heap's rare paths (Thumb code in
//! ROM, by the crate's `iwram` feature) and to the heap lock's panic, which stops the game; the heap's code in
//! IWRAM is its common paths alone, within its budget; and no ARM code in IWRAM uses an encoding whose result
//! ARMv4T leaves UNPREDICTABLE, as the ELF shows.
mod common;

use harness::elf::{Elf, Symbol, unpredictable};

/// The functions that must stay fast. Add each new hot path here.
const HOT_PATHS: &[&str] = &[
    "fill_words",
    // The allocators' fast paths, as the game links them. The pools' frees happen in the sweeps
    // (`IndexPool::sweep`, inlined into the game's hot paths below), so the game links no `pool_free`. The
    // game reaches the heap only through its `LockedHeap` (the scratch owners), whose allocate (with the
    // zeroing of each scratch, `boxed_slice_zeroed`) and free take the lock and run the heap's common paths in
    // one ARM function each.
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
    // The music mixer's inner loops (src/mixer.rs): a voice's samples into the frame's sums, and the sums to the
    // speakers' 8-bit samples.
    "mix_voice",
    "to_speakers",
];

/// The allocator crate's code in IWRAM, all of it: the heap's common paths (the bins, the top, the frees with no
/// neighbour or binned ones, the lock), the zeroing of a scratch block, and the pools' calls. Nothing else of the
/// crate may be there.
const ALLOCATOR_IN_IWRAM: &[&str] = &["alloc_block", "free_block", "zero_blocks", "pool_alloc", "pool_get_mut"];

/// The heap's rare paths, Thumb code in ROM that the common paths in IWRAM call: the tree's search and splits,
/// bad and over-aligned requests, the map work of runs over two words, a merge with a tree neighbour, the
/// tree's insert and remove, the count of a refused free.
const HEAP_RARE_PATHS: &[&str] = &[
    "alloc_tree",
    "alloc_other",
    "mark_used_words",
    "clear_words",
    "merge",
    "tree_insert",
    "tree_remove",
    "refuse_free",
];

/// The most bytes of IWRAM the heap's code may take in the game (issue 51): its two locked entry points, the
/// zeroing, and the linker's veneers from them to its rare paths in ROM.
const HEAP_IWRAM_BUDGET: u32 = 3_000;

/// Whether a mangled symbol is the allocator crate's function `name` (or a veneer to it).
fn allocator_fn(symbol: &str, name: &str) -> bool {
    symbol.contains("15stackshot_alloc") && symbol.contains(&format!("{}{name}", name.len()))
}

/// The calls into ROM a hot path may make: the heap's rare paths, and `IrqLock`'s panic on re-entry (stackshot-alloc's
/// irq.rs), out of line from the lock that `LockedHeap`'s ARM functions inline, which never returns.
fn allowed_in_rom(name: &str) -> bool {
    lock_panic(name) || HEAP_RARE_PATHS.iter().any(|rare| allocator_fn(name, rare))
}

fn lock_panic(name: &str) -> bool {
    name.contains("15stackshot_alloc3irq9reentered")
}

/// The allocator crate's functions in IWRAM, veneers included.
fn allocator_in_iwram(elf: &Elf) -> Vec<&Symbol> {
    elf.iwram_functions().into_iter().filter(|f| f.name.contains("15stackshot_alloc")).collect()
}

#[test]
fn hot_paths_are_arm_code_in_iwram() {
    let elf = Elf::read(&common::elf()).unwrap();
    for name in HOT_PATHS {
        let f = elf.check_hot_path_except(name, &allowed_in_rom).unwrap_or_else(|e| panic!("{e}"));
        println!("{name}: ARM, {} bytes at {:#010x}", f.size, f.address);
    }
}

#[test]
fn no_function_in_iwram_calls_into_rom_but_the_heaps_rare_paths() {
    let elf = Elf::read(&common::elf()).unwrap();
    let in_iwram = elf.iwram_functions();
    assert!(!in_iwram.is_empty());
    for f in in_iwram {
        elf.check_hot_path_except(&f.name, &allowed_in_rom).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// What of the allocator crate is in IWRAM is what `ALLOCATOR_IN_IWRAM` names (and the veneers to the rare
/// paths), and the heap's part of it fits its budget; the rare paths are Thumb code in ROM.
#[test]
fn only_the_heaps_common_paths_are_in_iwram() {
    let elf = Elf::read(&common::elf()).unwrap();
    let mut heap_bytes = 0;
    for f in allocator_in_iwram(&elf) {
        let veneer = f.name.contains("LongBXThunk");
        assert!(
            veneer || ALLOCATOR_IN_IWRAM.iter().any(|name| allocator_fn(&f.name, name)),
            "{} ({} bytes) is in IWRAM, and ALLOCATOR_IN_IWRAM does not name it",
            f.name,
            f.size
        );
        if !f.name.contains("pool_") {
            println!("{}: {} bytes", f.name, f.size);
            heap_bytes += f.size;
        }
    }
    println!("the heap's code in IWRAM: {heap_bytes} bytes (budget {HEAP_IWRAM_BUDGET})");
    assert!(
        heap_bytes <= HEAP_IWRAM_BUDGET,
        "the heap's code in IWRAM is {heap_bytes} bytes, over {HEAP_IWRAM_BUDGET}"
    );
    for rare in HEAP_RARE_PATHS {
        let f = elf
            .symbols
            .iter()
            .find(|s| s.function && !s.name.contains("Thunk") && allocator_fn(&s.name, rare))
            .unwrap_or_else(|| panic!("{rare}: not in the ELF"));
        assert!(f.thumb && harness::elf::ROM.contains(&f.address), "{rare} is not Thumb code in ROM: {f:?}");
    }
}

#[test]
fn the_check_rejects_thumb_code_in_rom() {
    let elf = Elf::read(&common::elf()).unwrap();
    let e = elf.check_hot_path("main").unwrap_err();
    assert!(e.contains("not in IWRAM"), "{e}");
}

/// The panic that the exceptions above let through is the heap lock's: `IrqLock` panics when the heap is
/// re-entered (an allocation inside `LockedHeap::with`), with no other way out of `lock`. Without the exception
/// the check sees it.
#[test]
fn the_heap_lock_reaches_rom_only_to_panic() {
    let elf = Elf::read(&common::elf()).unwrap();
    let e = elf.check_hot_path_except("alloc_block", &|name| !lock_panic(name) && allowed_in_rom(name)).unwrap_err();
    assert!(e.contains("(ROM)") && lock_panic(&e), "{e}");
}

/// The heap's common paths do call its rare paths in ROM, and the check sees those calls when not let through.
#[test]
fn the_heaps_common_paths_call_its_rare_paths_in_rom() {
    let elf = Elf::read(&common::elf()).unwrap();
    for entry in ["alloc_block", "free_block"] {
        let e = elf.check_hot_path_except(entry, &lock_panic).unwrap_err();
        assert!(e.contains("(ROM)") && HEAP_RARE_PATHS.iter().any(|rare| allocator_fn(&e, rare)), "{e}");
    }
}

/// What mGBA measures of the code in IWRAM is what a GBA's ARM7TDMI runs: no instruction there is one whose
/// result the architecture leaves UNPREDICTABLE, which an emulator may run one way and the CPU another.
#[test]
fn no_iwram_code_uses_an_unpredictable_encoding() {
    let elf = Elf::read(&common::elf()).unwrap();
    let checked = elf.check_iwram_predictable().unwrap_or_else(|e| panic!("{e}"));
    assert!(checked > 0, "no function in IWRAM");
}

/// The rules the check above applies, on words assembled with `arm-none-eabi-as -march=armv4t` or, where it
/// refuses them, encoded by hand and read back with objdump. The defined ones include a writeback load or store
/// whose data register is its offset register (binutils 2.40's objdump marks those `<UNPREDICTABLE>`; the
/// compiler emits them in the heap's, the pools' and the particles' code), a store of the base when it is the
/// lowest register of the list, a multiply whose destination is its second operand, and an exception return
/// that writes back.
#[test]
fn the_encoding_check_applies_the_architecture_rules() {
    let undefined = [
        (0xE5B1_1004, "ldr r1, [r1, #4]!"),
        (0xE1B1_10B2, "ldrh r1, [r1, r2]!"),
        (0xE480_0004, "str r0, [r0], #4"),
        (0xE4B1_1004, "ldrt r1, [r1], #4"),
        (0xE7B1_0001, "ldr r0, [r1, r1]!"),
        (0xE5BF_0004, "ldr r0, [pc, #4]!"),
        (0xE791_000F, "ldr r0, [r1, pc]"),
        (0xE0F1_00B2, "ldrh r0, [r1], #2 with the W bit set"),
        (0xE5D0_F000, "ldrb pc, [r0]"),
        (0xE1D0_F0B0, "ldrh pc, [r0]"),
        (0xE100_0091, "swp r0, r1, [r0]"),
        (0xE8B0_0003, "ldmia r0!, {r0, r1}"),
        (0xE8A1_0003, "stmia r1!, {r0, r1}"),
        (0xE89F_0001, "ldm pc, {r0}"),
        (0xE890_0000, "ldm r0, {}"),
        (0xE969_0003, "stmdb r9!, {r0, r1}^"),
        (0xE000_0190, "mul r0, r0, r1"),
        (0xE00F_0291, "mul pc, r1, r2"),
        (0xE080_0291, "umull r0, r0, r1, r2"),
        (0xE081_0290, "umull r0, r1, r0, r2"),
    ];
    for (word, asm) in undefined {
        assert!(unpredictable(word).is_some(), "{asm} ({word:#010x}) is UNPREDICTABLE on ARMv4T");
    }
    let defined = [
        (0xE1B2_10B1, "ldrh r1, [r2, r1]!"),
        (0xE1A2_10B1, "strh r1, [r2, r1]!"),
        (0xE5B2_1004, "ldr r1, [r2, #4]!"),
        (0xE4B2_1004, "ldrt r1, [r2], #4"),
        (0xE172_30F6, "ldrsh r3, [r2, #-6]!"),
        (0xE102_0091, "swp r0, r1, [r2]"),
        (0xE8A0_0003, "stmia r0!, {r0, r1}"),
        (0xE8FD_8001, "ldm sp!, {r0, pc}^"),
        (0xE000_0091, "mul r0, r1, r0"),
        (0xE92D_4010, "push {r4, lr}"),
        (0xE8BD_8010, "pop {r4, pc}"),
        (0xE59F_0008, "ldr r0, [pc, #8]"),
    ];
    for (word, asm) in defined {
        assert_eq!(unpredictable(word), None, "{asm} ({word:#010x}) is defined on ARMv4T");
    }
}

/// The literal pools the check skips are found: the heap's free, as the game links it, keeps one (its `$d`
/// mapping symbol), whose constants are data.
#[test]
fn the_encoding_check_skips_literal_pools() {
    let elf = Elf::read(&common::elf()).unwrap();
    let f = elf.symbol("free_block").unwrap();
    let pool = (f.address..f.address + f.size).step_by(4).find(|&a| elf.is_data(a));
    assert!(pool.is_some(), "free_block has no literal pool");
    assert!(!elf.is_data(f.address), "free_block starts with data");
}
