//! Compiles the C shim over Debian's libmgba (package `libmgba-dev`).
fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    cc::Build::new().file("src/shim.c").warnings(true).compile("mgba_shim");
    println!("cargo:rustc-link-lib=mgba");
}
