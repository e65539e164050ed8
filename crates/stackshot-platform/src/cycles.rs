//! Counting CPU cycles on the GBA itself. In mGBA the counts are exactly reproducible.
//!
//! - [`Stopwatch`]: timer 0 counts every cycle and timer 1 its overflows: 32 bits, 256 s before it wraps. For
//!   whole tests and frames.
//! - [`OpTimer`]: timer 0 alone, read before and after one short operation inlined into an ARM (IWRAM) or a
//!   Thumb (ROM) caller, minus the cost of the reads. For the cycles of a single allocate or free.
//!
//! They share timer 0: use one at a time.

use gba::mmio::{TIMER0_CONTROL, TIMER0_COUNT, TIMER0_RELOAD, TIMER1_CONTROL, TIMER1_COUNT, TIMER1_RELOAD};
use gba::timers::{TimerControl, TimerScale};

/// Timer 0 counting at the CPU clock, from zero.
fn start_timer0() {
    TIMER0_CONTROL.write(TimerControl::new());
    TIMER0_RELOAD.write(0);
    TIMER0_CONTROL.write(TimerControl::new().with_scale(TimerScale::_1).with_enabled(true));
}

/// A running 32-bit cycle counter.
pub struct Stopwatch;

impl Stopwatch {
    /// Restarts the counter from zero.
    #[inline(always)]
    pub fn start() -> Stopwatch {
        TIMER1_CONTROL.write(TimerControl::new());
        TIMER1_RELOAD.write(0);
        TIMER1_CONTROL.write(TimerControl::new().with_cascade(true).with_enabled(true));
        start_timer0();
        Stopwatch
    }

    /// Cycles since `start`, including the few the timer reads cost.
    #[inline(always)]
    pub fn elapsed(&self) -> u32 {
        loop {
            let high = TIMER1_COUNT.read();
            let low = TIMER0_COUNT.read();
            // Timer 0 may have wrapped between the reads; then timer 1 has moved on: read again.
            if TIMER1_COUNT.read() == high {
                return (u32::from(high) << 16) | u32::from(low);
            }
        }
    }
}

/// One operation for [`OpTimer`]; implementations mark `run` `#[inline(always)]`, so that it inlines whole into
/// the timing function of either build (a closure would stay a Thumb call from ARM code).
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
    unsafe {
        core::arch::asm!("ldrh {0}, [{1}]", out(reg) count, in(reg) 0x0400_0100u32, options(nostack, preserves_flags))
    };
    count
}

/// Runs `op` timed, as ARM code in IWRAM.
#[unsafe(link_section = ".iwram.time_arm")]
#[instruction_set(arm::a32)]
#[inline(never)]
fn time_arm<O: Op>(op: &mut O) -> (O::Out, u16) {
    let before = now();
    let out = op.run();
    let after = now();
    (out, after.wrapping_sub(before))
}

/// Runs `op` timed, as Thumb code in ROM.
#[inline(never)]
fn time_thumb<O: Op>(op: &mut O) -> (O::Out, u16) {
    let before = now();
    let out = op.run();
    let after = now();
    (out, after.wrapping_sub(before))
}

/// Times single operations shorter than 65,536 cycles from a caller of one build: an ARM function in IWRAM
/// or a Thumb function in ROM, with the operation inlined into it, so that a figure is the operation's own
/// cost and not that of a call from elsewhere. The cost of the two timer reads is subtracted. Exact in IWRAM;
/// in ROM a read can move by a cycle or two with the cartridge prefetch buffer.
#[derive(Clone, Copy)]
pub struct OpTimer {
    arm: bool,
    overhead: u16,
}

struct Nothing;
impl Op for Nothing {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {}
}

impl OpTimer {
    /// Starts timer 0 and measures the empty operation in the build (`arm`, or Thumb).
    pub fn new(arm: bool) -> OpTimer {
        OpTimer::calibrated(arm, &mut Nothing)
    }

    /// Like [`OpTimer::new`], but subtracting what `empty` costs instead of nothing (the least of 8 runs).
    pub fn calibrated<O: Op<Out = ()>>(arm: bool, empty: &mut O) -> OpTimer {
        start_timer0();
        let mut overhead = u16::MAX;
        for _ in 0..8 {
            let cycles = if arm { time_arm(empty).1 } else { time_thumb(empty).1 };
            overhead = overhead.min(cycles);
        }
        OpTimer { arm, overhead }
    }

    /// Runs `op` and returns its result and the cycles it took.
    #[inline(always)]
    pub fn time<O: Op>(&self, op: &mut O) -> (O::Out, u16) {
        let (out, cycles) = if self.arm { time_arm(op) } else { time_thumb(op) };
        (out, cycles.saturating_sub(self.overhead))
    }
}
