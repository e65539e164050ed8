//! A guard for the IWRAM stack: it grows down from where the BIOS puts it toward the statics (`.bss`), and
//! nothing stops it when it gets there. [`StackGuard::below_stack`] paints the free stack with a pattern;
//! [`StackGuard::check`] then says how deep the stack has been (the lowest word no longer holding the pattern)
//! and fails if it reached the canary, the lowest [`CANARY_BYTES`] just above the statics: loud, instead of
//! statics silently overwritten.

/// The user stack's top, where the BIOS puts it (GBATEK "BIOS RAM usage": SP_usr = 0x03007F00).
pub const TOP: usize = 0x0300_7F00;
/// Bytes at the bottom of the painted area that the stack must never reach.
pub const CANARY_BYTES: usize = 64;
/// What every free word of the stack holds until the stack grows over it.
const PAINT: u32 = 0x5354_4B21;
/// Words left unpainted below the stack pointer of `below_stack`'s caller: its own frame and its callees'.
const MARGIN: usize = 64;

unsafe extern "C" {
    /// The end of the statics in IWRAM (linker.ld): the deepest the stack may go.
    static __bss_end: u32;
}

/// A painted stretch of unused stack, `[low, high)`, word-aligned.
pub struct StackGuard {
    low: *mut u32,
    high: *mut u32,
}

/// The stack grew into the canary: the deepest word it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    pub deepest: usize,
}

impl StackGuard {
    /// Paints the stack from the end of the statics up to a little below the caller's stack pointer.
    pub fn below_stack() -> StackGuard {
        let sp: usize;
        // SAFETY: reads the stack pointer into a register; no memory access.
        unsafe { core::arch::asm!("mov {0}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
        let low = &raw const __bss_end as *mut u32;
        let high = ((sp - MARGIN * 4) & !3) as *mut u32;
        // SAFETY: the words between the end of the statics and below the current stack pointer belong to no Rust
        // object (only future stack frames, which may overwrite them freely); the interrupt stack is above TOP.
        unsafe { StackGuard::paint(low, high) }
    }

    /// Paints `[low, high)` and guards it.
    ///
    /// # Safety
    /// `low..high` must be word-aligned memory, valid for reads and writes, that no Rust reference points into
    /// while the guard lives (spare stack, or a buffer kept aside for the guard).
    pub unsafe fn paint(low: *mut u32, high: *mut u32) -> StackGuard {
        let mut p = low;
        while p < high {
            // SAFETY: inside `[low, high)`, which the caller gave this guard.
            unsafe {
                p.write_volatile(PAINT);
                p = p.add(1);
            }
        }
        StackGuard { low, high }
    }

    /// The address of the deepest word the stack has changed (`high` if none); `Err` if that is inside the
    /// canary.
    pub fn check(&self) -> Result<usize, Overflow> {
        let mut p = self.low;
        // SAFETY: reads inside `[low, high)` (see `paint`); volatile, as the stack writes it behind the compiler.
        while p < self.high && unsafe { p.read_volatile() } == PAINT {
            // SAFETY: p < high.
            p = unsafe { p.add(1) };
        }
        let deepest = p as usize;
        if deepest < self.low as usize + CANARY_BYTES { Err(Overflow { deepest }) } else { Ok(deepest) }
    }

    /// Bytes of stack in use at most so far, from [`TOP`] (for the real stack).
    pub fn high_water(&self) -> Result<usize, Overflow> {
        self.check().map(|deepest| TOP - deepest)
    }

    /// Bytes the stack may use before it reaches the canary, from [`TOP`].
    pub fn room(&self) -> usize {
        TOP - (self.low as usize + CANARY_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in stack: 64 words, the lowest 16 (CANARY_BYTES) the canary.
    static mut FAKE: [u32; 64] = [0; 64];

    fn fake() -> (StackGuard, *mut u32) {
        let base = (&raw mut FAKE).cast::<u32>();
        // SAFETY: FAKE is used by this test module alone, one test at a time, only through raw pointers.
        (unsafe { StackGuard::paint(base, base.add(64)) }, base)
    }

    #[test_case]
    fn an_untouched_stack_passes() {
        let (guard, base) = fake();
        assert_eq!(guard.check(), Ok(base.wrapping_add(64) as usize));
    }

    #[test_case]
    fn the_deepest_write_is_the_high_water_mark() {
        let (guard, base) = fake();
        // SAFETY: word 40 of the fake stack.
        unsafe { base.add(40).write_volatile(7) };
        assert_eq!(guard.check(), Ok(base.wrapping_add(40) as usize));
    }

    #[test_case]
    fn a_write_into_the_canary_is_an_overflow() {
        let (guard, base) = fake();
        let last_canary_word = CANARY_BYTES / 4 - 1;
        // SAFETY: inside the fake stack.
        unsafe { base.add(last_canary_word).write_volatile(0) };
        assert_eq!(guard.check(), Err(Overflow { deepest: base.wrapping_add(last_canary_word) as usize }));
    }

    #[test_case]
    fn the_real_stack_is_painted_and_unharmed() {
        let guard = StackGuard::below_stack();
        let used = guard.high_water().expect("the test ROM's stack stays clear of the statics");
        assert!(used > 0 && used < guard.room(), "{used} of {} bytes", guard.room());
    }
}
