//! Paths to what `make` built, for the tests that check the real ROM.
#![allow(dead_code, reason = "each test file uses the paths it needs")]
use std::path::PathBuf;

fn built(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    assert!(path.exists(), "{} is missing: build the ROM first with `make`", path.display());
    path
}

/// The cartridge image with its fixed header.
pub fn rom() -> PathBuf {
    built("target/stackshot.gba")
}

/// The ELF it was made from, with symbols.
pub fn elf() -> PathBuf {
    built("target/thumbv4t-none-eabi/release/stackshot")
}

/// The benchmark ROM's ARM/IWRAM build (`make bench-arm`).
pub fn bench_elf() -> PathBuf {
    built("target/thumbv4t-none-eabi/bench-arm/stackshot-bench")
}
