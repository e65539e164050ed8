//! The stack's guard and its high-water mark.
//!
//! The stack grows down from `__stack_top` (0x03007F00, below the BIOS's area) towards `__stack_limit`, under
//! which linker.ld puts 32 bytes of guard between the stack and `.bss`. [`init`] fills the guard with a canary
//! and paints the free stack with a pattern; a stack that grows past its limit overwrites the canary, which
//! [`check`] notices (every frame in debug and soak builds, after every on-target test), and the lowest word
//! that lost the paint is the deepest the stack has been ([`high_water`]).
//!
//! ```ignore
//! stack::init();                   // first thing in `main`
//! stack::check().unwrap();         // panics with where the stack went past its limit
//! let used = stack::high_water();  // bytes, of stack::space()
//! ```

use core::fmt;

unsafe extern "C" {
    // Addresses only (linker.ld): never read as values.
    static __stack_guard: u32;
    static __stack_limit: u32;
    static __stack_top: u32;
}

/// The guard's words.
const CANARY: u32 = 0xDEAD_57AC;
/// The free stack's words until something writes them.
const PAINT: u32 = 0x5757_5757;

/// The first byte of the guard.
pub fn guard() -> usize {
    (&raw const __stack_guard) as usize
}

/// The stack's lowest allowed address (the byte after the guard).
pub fn limit() -> usize {
    (&raw const __stack_limit) as usize
}

/// The stack's top: the stack pointer at boot.
pub fn top() -> usize {
    (&raw const __stack_top) as usize
}

/// The bytes the stack may use.
pub fn space() -> usize {
    top() - limit()
}

/// The stack pointer now.
#[inline(always)]
pub fn pointer() -> usize {
    let sp: usize;
    // SAFETY: copies SP into a register; no memory is touched.
    unsafe { core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// Writes the canary into the guard and paints the stack below the caller: call first thing in `main`, once.
#[inline(never)]
pub fn init() {
    let sp = pointer();
    // SAFETY: the guard is 32 bytes of IWRAM that linker.ld reserves for this and nothing else uses; the
    // words from the limit up to the stack pointer are the free stack, which nothing holds (this function calls
    // nothing while it writes them, and an interrupt handler's frames there are gone when it returns).
    unsafe {
        let mut at = guard();
        while at < limit() {
            (at as *mut u32).write_volatile(CANARY);
            at += 4;
        }
        while at < sp {
            (at as *mut u32).write_volatile(PAINT);
            at += 4;
        }
    }
}

/// The stack went past its limit into `.bss`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// The lowest guard word found overwritten.
    pub at: usize,
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "stack overflow: the stack grew past its limit {:#010x} into .bss (guard word {:#010x} overwritten), it has {} bytes",
            limit(),
            self.at,
            space()
        )
    }
}

/// `Err` if a guard word lost its canary.
pub fn check() -> Result<(), Overflow> {
    let mut at = guard();
    let mut overwritten = None;
    while at < limit() {
        // SAFETY: a word of the guard (see `init`), read only.
        if unsafe { (at as *const u32).read_volatile() } != CANARY {
            overwritten.get_or_insert(at);
        }
        at += 4;
    }
    overwritten.map_or(Ok(()), |at| Err(Overflow { at }))
}

/// The most bytes the stack has held since [`init`]: from the top down to the lowest word that lost its paint
/// (all of [`space`] if the stack reached the limit). A scan of the unused stack, about 5 cycles a word (ARM in
/// IWRAM): for the overlay, game overs and debug builds, not every frame of a release build.
pub fn high_water() -> usize {
    // SAFETY: limit..top is the stack region, word-aligned (linker.ld), readable IWRAM.
    top() - unsafe { first_unpainted(limit() as *const u32, top() as *const u32) } as usize
}

/// The first word in `from..to` that is not [`PAINT`] (`to` if none): ARM code in IWRAM, four words a step.
///
/// # Safety
/// `from..to` must be readable, word-aligned memory.
#[unsafe(link_section = ".iwram.first_unpainted")]
#[instruction_set(arm::a32)]
#[inline(never)]
unsafe fn first_unpainted(from: *const u32, to: *const u32) -> *const u32 {
    let mut at = from;
    // SAFETY: every read is of a word in from..to (the caller's promise); the words below the stack pointer
    // are free and the others belong to live frames, so they are only compared, never written.
    unsafe {
        while (to as usize) - (at as usize) >= 16
            && (*at ^ PAINT) | (*at.add(1) ^ PAINT) | (*at.add(2) ^ PAINT) | (*at.add(3) ^ PAINT) == 0
        {
            at = at.add(4);
        }
        while at < to && *at == PAINT {
            at = at.add(1);
        }
    }
    at
}
