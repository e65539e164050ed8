//! Links with StackShot's memory map (the repository's linker.ld), which puts `.data` and `.bss` in IWRAM as
//! the gba crate's runtime expects. A game of its own passes its own script the same way; the gba crate's
//! `linker_scripts/mono_boot.ld` is the usual start.
use std::path::Path;

fn main() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../linker.ld");
    println!("cargo:rustc-link-arg-bins=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());
}
