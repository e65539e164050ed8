//! Static pools that cost nothing: an empty `IndexPool` is all zeros, so a static one goes to `.bss`, which the
//! start-up code zeroes, and takes no bytes of `.data` (copied from ROM at boot). Read from the ELFs: the
//! zeroed-pool fixture's 1,000-slot `u16` pool (which its tests also use on the GBA) and the game's five pools.
mod common;

use harness::elf::{Elf, Symbol};
use harness::runner::{Limits, Outcome, run_tests};
use std::path::PathBuf;

fn fixture() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/thumbv4t-none-eabi/release/examples/zeroed_pool");
    assert!(path.exists(), "{} is missing: `make fixture`", path.display());
    path
}

/// `symbol` has no byte in `.data` and all of them in `.bss`, a section with no bytes in the file.
fn costs_no_rom(elf: &Elf, symbol: &Symbol) {
    let (in_data, _) = elf.bytes_in_section(symbol, ".data").expect("the ELF has a .data section");
    assert_eq!(in_data, 0, "{} has {in_data} of its {} bytes in .data", symbol.name, symbol.size);
    let (in_bss, loaded) = elf.bytes_in_section(symbol, ".bss").expect("the ELF has a .bss section");
    assert_eq!(in_bss, symbol.size, "{} is not in .bss", symbol.name);
    assert!(!loaded, ".bss has bytes in the file");
}

#[test]
fn the_fixtures_thousand_slot_pool_has_no_bytes_in_data() {
    let elf = Elf::read(&fixture()).unwrap();
    let pool = elf.symbol("ZEROED_POOL").expect("the fixture's pool");
    // 1,000 slots of a u32 value, a u16 stack entry and a u32 slot word, and the two counts.
    assert_eq!(pool.size, 1000 * (4 + 2 + 4) + 8, "{pool:?}");
    costs_no_rom(&elf, pool);
}

#[test]
fn the_fixtures_pool_works_on_the_gba() {
    let results = run_tests(&fixture(), Limits::default()).unwrap();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert!(matches!(r.outcome, Outcome::Passed { .. }), "{}: {:?}", r.name, r.outcome);
    }
}

#[test]
fn the_games_pools_are_not_in_data() {
    let elf = Elf::read(&common::elf()).unwrap();
    for name in ["PLAYER_BULLET_POOL", "ENEMY_BULLET_POOL", "PARTICLE_POOL", "ENEMY_POOL", "PICKUP_POOL"] {
        let pool = elf.symbol(name).unwrap_or_else(|| panic!("{name}: not in the game's ELF"));
        println!("{name}: {} bytes at {:#010x}", pool.size, pool.address);
        costs_no_rom(&elf, pool);
    }
}
