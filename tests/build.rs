//! Links every test ROM with the project's linker script (its memory map, the stack's guard, the mailbox).
use std::path::Path;

fn main() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../linker.ld");
    println!("cargo:rustc-link-arg=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());
}
