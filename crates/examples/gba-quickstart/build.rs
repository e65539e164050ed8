// Links with the gba crate's linker script, copied beside Cargo.toml: it puts `.data` and `.bss` in IWRAM.
fn main() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mono_boot.ld");
    println!("cargo:rustc-link-arg-bins=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());
}
