//! What a StackShot ROM and the host harness (`tools/harness`) exchange through memory, defined once for both:
//! the ROM builds this crate for the GBA, the harness for the host.
//!
//! - [`MAILBOX`]: where the harness tells a test ROM which test to start from (`stackshot_platform::testing`).
//! - [`telemetry`]: the block of counters the game writes once a frame and the host tests read.
#![no_std]

pub mod telemetry;

/// The mailbox: two words at the top of EWRAM that linker.ld leaves out and the ROM's start-up never touches.
/// The harness writes them after a reset, before the first frame; the test runner reads and clears them.
pub const MAILBOX: u32 = 0x0203_FFF8;
/// "STRT" in the mailbox's first word says the second word holds the index of the first test to run.
pub const MAILBOX_MAGIC: u32 = 0x5452_5453;
