//! Links the benchmark ROM with the project's linker script.
fn main() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../linker.ld");
    println!("cargo:rustc-link-arg=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());
}
