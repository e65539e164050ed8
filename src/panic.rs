//! The panic handler of every StackShot ROM: the message and its file:line go to the mGBA log (the harness turns
//! `@@panic` into a failed test or a failed run), then the crash screen (`src/crash.rs`) shows them and the
//! state of the allocators and the stack, and the CPU stops.

use core::panic::PanicInfo;
use gba::gba_cell::GbaCell;

/// [`FIRST_DONE`] once the first panic began: a panic while drawing the crash screen only logs. A word that
/// must hold one exact value, not a flag, because a stack overflow may have written over `.bss`.
static PANICKED: GbaCell<u32> = GbaCell::new(0);
const FIRST_DONE: u32 = 0xC2A5_4ED0;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    gba::mmio::IME.write(false);
    match info.location() {
        Some(at) => crate::error!("@@panic at {}:{}:{}: {}", at.file(), at.line(), at.column(), info.message()),
        None => crate::error!("@@panic: {}", info.message()),
    }
    if PANICKED.read() != FIRST_DONE {
        PANICKED.write(FIRST_DONE);
        crate::crash::show(info);
    }
    loop {
        // With every interrupt masked, Halt never returns: the CPU sleeps instead of spinning.
        gba::bios::IntrWait(true, gba::interrupts::IrqBits::new());
    }
}
