//! The test runner itself (`stackshot_platform::testing`) on the GBA.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use stackshot_protocol::{MAILBOX, MAILBOX_MAGIC};

/// The harness started this run through the mailbox; the runner cleared it once read, so that a reset
/// (which leaves EWRAM as it is) cannot replay the request.
#[test_case]
fn the_mailbox_is_cleared_once_read() {
    // SAFETY: the mailbox word, word-aligned EWRAM that only the runner and the harness touch.
    assert_ne!(unsafe { (MAILBOX as *const u32).read_volatile() }, MAILBOX_MAGIC);
}
