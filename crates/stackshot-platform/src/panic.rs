//! The panic handler of every StackShot ROM: the message and its file:line go to the mGBA log (the harness turns
//! `@@panic` into a failed test or a failed run), then the ROM's crash screen if it chose one ([`set_screen`]:
//! the game's is `stackshot::crash::show`, which knows its text layer and its allocators), and the CPU stops.

use core::panic::PanicInfo;
use gba::gba_cell::GbaCell;

/// [`FIRST_DONE`] once the first panic began: a panic while drawing the crash screen only logs. A word that
/// must hold one exact value, not a flag, because a stack overflow may have written over `.bss`.
static PANICKED: GbaCell<u32> = GbaCell::new(0);
const FIRST_DONE: u32 = 0xC2A5_4ED0;

/// The crash screen and the complement of its address, written only by [`set_screen`]: a screen whose check
/// word no longer matches (a stray write) is not called. In `.data`, below `.bss`, out of reach of a stack that
/// overflowed into `.bss`.
#[unsafe(link_section = ".data.panic_screen")]
static mut SCREEN: Option<fn(&PanicInfo)> = None;
#[unsafe(link_section = ".data.panic_screen_check")]
static mut SCREEN_CHECK: usize = 0;

/// Makes `screen` what a panic shows after logging its message: called once, with interrupts off, before the
/// CPU stops. It must allocate nothing and take no lock (the panic may be inside an allocator call). Call it
/// first thing in `main`: a panic before it only logs.
pub fn set_screen(screen: fn(&PanicInfo)) {
    // SAFETY: plain stores to the two statics, which only this function writes; the panic handler reads them.
    // No interrupt handler panics between the two stores with this ROM's handlers (and if one did, the check
    // word would not match and the panic would only log).
    unsafe {
        (&raw mut SCREEN).write_volatile(Some(screen));
        (&raw mut SCREEN_CHECK).write_volatile(!(screen as usize));
    }
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    gba::mmio::IME.write(false);
    match info.location() {
        Some(at) => crate::error!("@@panic at {}:{}:{}: {}", at.file(), at.line(), at.column(), info.message()),
        None => crate::error!("@@panic: {}", info.message()),
    }
    if PANICKED.read() != FIRST_DONE {
        PANICKED.write(FIRST_DONE);
        // SAFETY: reads of the two statics (see `set_screen`), word-aligned and always initialised.
        let (screen, check) =
            unsafe { ((&raw const SCREEN).read_volatile(), (&raw const SCREEN_CHECK).read_volatile()) };
        if let Some(screen) = screen.filter(|&s| s as usize == !check) {
            screen(info);
        }
    }
    loop {
        // With every interrupt masked, Halt never returns: the CPU sleeps instead of spinning.
        gba::bios::IntrWait(true, gba::interrupts::IrqBits::new());
    }
}
