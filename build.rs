//! Links every ROM binary (the game and the on-target tests) with the project's linker script, and converts the
//! PNG art in `assets/` to tiles and palettes for `src/assets.rs` (see `build/assets.rs`).
#[path = "build/assets.rs"]
mod assets;
#[path = "build/convert.rs"]
mod convert;

use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("linker.ld");
    println!("cargo:rustc-link-arg=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());
    println!("cargo:rerun-if-changed=build");

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("assets.rs");
    if let Err(message) = assets::generate(&root.join("assets"), &out) {
        // Cargo shows this line as the build's error, without a panic's backtrace noise.
        println!("cargo::error={message}");
        std::process::exit(1);
    }
}
