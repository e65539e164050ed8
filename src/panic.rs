//! The panic handler of every StackShot ROM: the message and its file:line go to the mGBA log (the harness turns
//! `@@panic` into a failed test or a failed run), then the CPU stops.

use core::panic::PanicInfo;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    match info.location() {
        Some(at) => crate::error!("@@panic at {}:{}:{}: {}", at.file(), at.line(), at.column(), info.message()),
        None => crate::error!("@@panic: {}", info.message()),
    }
    gba::mmio::IME.write(false);
    loop {
        // With every interrupt masked, Halt never returns: the CPU sleeps instead of spinning.
        gba::bios::IntrWait(true, gba::interrupts::IrqBits::new());
    }
}
