//! What the game tells the host tests about itself: the static [`STACKSHOT_STATS`], whose format
//! (`stackshot_protocol::telemetry`) the harness reads with the same types.

pub use stackshot_protocol::telemetry::{State, Telemetry};

/// The host tests read this (by its symbol, `stackshot_protocol::telemetry::SYMBOL`) between frames; the game
/// writes it once a frame.
#[unsafe(no_mangle)]
pub static mut STACKSHOT_STATS: Telemetry = Telemetry::BOOT;

/// The one reference to [`STACKSHOT_STATS`].
#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
pub fn take() -> &'static mut Telemetry {
    static TAKEN: gba::gba_cell::GbaCell<bool> = gba::gba_cell::GbaCell::new(false);
    assert!(!TAKEN.read(), "the telemetry is taken once");
    TAKEN.write(true);
    // SAFETY: the guard makes this the only reference ever made; the host reads the memory only between
    // frames, from outside the emulated CPU.
    unsafe { &mut *(&raw mut STACKSHOT_STATS) }
}
