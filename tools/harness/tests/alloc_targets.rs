//! The allocator crate's feature `gba` (`IrqLock`, which masks the GBA's IME at 0x0400_0208) builds for the GBA's
//! own targets and is a compile error on any other ARM target, where that address is not IME (armv7 Linux, where
//! safe code would write into the process; a Cortex-M board). Checked by building the crate for each with cargo;
//! nightly, `core` from source. In `make test-long`: each target checks `core` first.
use std::path::Path;
use std::process::Command;

/// `cargo check` of the crate with `gba` for `target`: whether it built, and what cargo printed.
fn check_gba_feature_for(target: &str) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("cargo")
        .args(["+nightly", "check", "-p", "stackshot-alloc", "--features", "gba", "--target", target])
        .args(["-Zbuild-std=core", "--target-dir", "target/gba-feature-check"])
        .current_dir(&root)
        // The test's own cargo (stable) sets these for its children; the nightly check must pick its own.
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .output()
        .expect("cargo runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
#[ignore = "checks core for three targets: make test-long runs it"]
fn the_gba_feature_builds_for_the_gba_and_refuses_other_arm_targets() {
    let (built, log) = check_gba_feature_for("thumbv4t-none-eabi");
    assert!(built, "the gba feature must build for the GBA:\n{log}");
    for target in ["armv7-unknown-linux-gnueabihf", "thumbv6m-none-eabi"] {
        let (built, log) = check_gba_feature_for(target);
        assert!(!built, "the gba feature built for {target}");
        assert!(log.contains("builds only for the GBA's targets"), "{target}: not the crate's error:\n{log}");
    }
}
