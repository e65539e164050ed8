//! Tests that run on the GBA's CPU, in the emulator, each timed in cycles.
//!
//! A test ROM is an integration test (`tests/*.rs`), or a library's own tests, using this runner through
//! `custom_test_frameworks`:
//! ```ignore
//! #![no_std]
//! #![no_main]
//! #![feature(custom_test_frameworks)]
//! #![test_runner(stackshot_platform::testing::run)]
//! #![reexport_test_harness_main = "test_main"]
//! stackshot_platform::testing::test_main!();
//!
//! #[test_case]
//! fn adds() { assert_eq!(1 + 1, 2); }
//! ```
//! `cargo test` builds it and runs it in the harness (cargo's runner), which reads the protocol described in
//! `tools/harness/src/protocol.rs`, and starts from the test the harness left in the mailbox
//! ([`stackshot_protocol::MAILBOX`]). This side prints `@@tests`, `@@run`, `@@ok` and `@@done`; the panic
//! handler prints `@@panic`. After each test the stack's guard is checked ([`stack`]): a test that grew the
//! stack past its limit fails with a stack-overflow panic.

use crate::cycles::Stopwatch;
use crate::{info, stack};
use stackshot_protocol::{MAILBOX, MAILBOX_MAGIC};

/// Anything that can run as a test; every `fn()` is one.
pub trait Testable {
    fn name(&self) -> &'static str;
    fn run_timed(&self) -> u32;
}

impl<T: Fn()> Testable for T {
    fn name(&self) -> &'static str {
        core::any::type_name::<T>()
    }

    fn run_timed(&self) -> u32 {
        let watch = Stopwatch::start();
        self();
        watch.elapsed()
    }
}

/// The test runner: runs each test from the one the harness asked for, printing its cycle count, and fails a
/// test that overflowed the stack.
pub fn run(tests: &[&dyn Testable]) {
    stack::init();
    info!("@@tests {}", tests.len());
    // SAFETY: the mailbox is EWRAM that nothing else in the program uses (see linker.ld); word-aligned. It is
    // cleared once read: nothing clears EWRAM at a reset, and a stale request must not start the next run.
    let first = unsafe {
        let mailbox = MAILBOX as *mut u32;
        let first = if mailbox.read_volatile() == MAILBOX_MAGIC { mailbox.add(1).read_volatile() as usize } else { 0 };
        mailbox.write_volatile(0);
        first
    };
    for (index, test) in tests.iter().enumerate().skip(first) {
        info!("@@run {index} {}", test.name());
        let cycles = test.run_timed();
        if let Err(overflow) = stack::check() {
            panic!("{overflow}");
        }
        info!("@@ok {index} {cycles}");
    }
    info!("@@done");
}

/// Defines the `main` of a test ROM: run the tests, then sleep.
#[macro_export]
macro_rules! test_main {
    () => {
        #[unsafe(no_mangle)]
        extern "C" fn main() -> ! {
            test_main();
            loop {
                gba::bios::VBlankIntrWait();
            }
        }
    };
}
pub use test_main;
