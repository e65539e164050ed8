//! Timing one operation from a caller of the same build as the code under test: an ARM function in IWRAM for
//! code that runs there, a Thumb function in ROM for code that runs there. The operation is inlined into the
//! timing function, so a figure is the operation's own cost, not that of a call from elsewhere (which
//! [`thumb_to_iwram_call`] measures on its own). Timer 0 runs at the CPU clock.

use core::arch::asm;

/// One operation to time; implementations mark `run` `#[inline(always)]` so it inlines into both builds.
pub trait Op {
    type Out;
    fn run(&mut self) -> Self::Out;
}

/// Timer 0's count, read with one `ldrh` (an asm block: also a barrier the compiler cannot move memory
/// accesses across).
#[inline(always)]
fn now() -> u16 {
    let count: u16;
    // SAFETY: reads the 16-bit TM0CNT_L register (0x04000100), which has no side effects.
    unsafe { asm!("ldrh {0}, [{1}]", out(reg) count, in(reg) 0x0400_0100u32, options(nostack, preserves_flags)) };
    count
}

/// Runs `op` timed, as ARM code in IWRAM.
#[unsafe(link_section = ".iwram.bench_time_arm")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn arm<O: Op>(op: &mut O) -> (O::Out, u16) {
    let before = now();
    let out = op.run();
    let after = now();
    (out, after.wrapping_sub(before))
}

/// Runs `op` timed, as Thumb code in ROM.
#[inline(never)]
pub fn thumb<O: Op>(op: &mut O) -> (O::Out, u16) {
    let before = now();
    let out = op.run();
    let after = now();
    (out, after.wrapping_sub(before))
}

/// Times operations in one build, minus what the two reads of the timer cost in that build.
#[derive(Clone, Copy)]
pub struct Timer {
    arm: bool,
    overhead: u16,
}

struct Nothing;
impl Op for Nothing {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {}
}

impl Timer {
    /// Starts timer 0 and measures the empty operation in the build (the least of 8: ROM code varies by a
    /// cycle with the prefetch buffer).
    pub fn new(arm: bool) -> Timer {
        Timer::calibrated(arm, &mut Nothing)
    }

    /// For an operation that is a call to an ARM function in IWRAM (the assembly reference): subtracts the cost
    /// of calling an empty one from the same place too, leaving the body's cycles.
    pub fn without_call(arm: bool) -> Timer {
        Timer::calibrated(arm, &mut CallIwram)
    }

    fn calibrated<O: Op<Out = ()>>(arm: bool, empty: &mut O) -> Timer {
        // OpTimer::new starts timer 0 at the CPU clock.
        let _ = stackshot::cycles::OpTimer::new();
        let mut overhead = u16::MAX;
        for _ in 0..8 {
            let cycles = if arm { self::arm(empty).1 } else { thumb(empty).1 };
            overhead = overhead.min(cycles);
        }
        Timer { arm, overhead }
    }

    #[inline(always)]
    pub fn time<O: Op>(&self, op: &mut O) -> (O::Out, u16) {
        let (out, cycles) = if self.arm { arm(op) } else { thumb(op) };
        (out, cycles.saturating_sub(self.overhead))
    }
}

/// An empty ARM function in IWRAM, to price the call itself.
#[unsafe(link_section = ".iwram.bench_empty")]
#[instruction_set(arm::a32)]
#[inline(never)]
fn empty_in_iwram() {
    // SAFETY: an empty asm block: keeps the function from being optimised away, does nothing.
    unsafe { asm!("", options(nostack, preserves_flags)) };
}

struct CallIwram;
impl Op for CallIwram {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        empty_in_iwram()
    }
}

/// Cycles a Thumb caller in ROM pays to call an (empty) ARM function in IWRAM and return: the long-branch
/// veneer, the mode switches and the pipeline refills.
pub fn thumb_to_iwram_call() -> u16 {
    Timer::new(false).time(&mut CallIwram).1
}
