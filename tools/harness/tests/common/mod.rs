//! Paths to what `make` built, for the tests that check the real ROM.
#![allow(dead_code, reason = "each test file uses the paths it needs")]
use std::path::PathBuf;

fn built(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    assert!(path.exists(), "{} is missing: `make` builds the game, `make examples` the examples", path.display());
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

/// The quick-start ROM on the gba crate's runtime (ELF; mGBA loads it as it is).
pub fn gba_quickstart() -> PathBuf {
    built("target/thumbv4t-none-eabi/release/gba-quickstart")
}

/// The quick-start ROM on agb's runtime, from its own workspace.
pub fn agb_quickstart() -> PathBuf {
    built("crates/examples/agb-quickstart/target/thumbv4t-none-eabi/release/agb-quickstart")
}

/// The benchmark ROM's ARM/IWRAM build (`make bench-arm`).
pub fn bench_elf() -> PathBuf {
    built("target/thumbv4t-none-eabi/bench-arm/stackshot-bench")
}
