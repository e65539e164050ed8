//! Sets `cfg(gba_target)` when building for the GBA's own targets, `thumbv4t-none-eabi` and `armv4t-none-eabi`:
//! the feature `gba` (`IrqLock`, which writes the GBA's IME at 0x0400_0208) builds only there. By the target's
//! name, as ARM's target features (`v5te` and the like) are unstable in `cfg`, and stable rustc reports none.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(gba_target)");
    println!("cargo::rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if matches!(target.as_str(), "thumbv4t-none-eabi" | "armv4t-none-eabi") {
        println!("cargo::rustc-cfg=gba_target");
    }
}
