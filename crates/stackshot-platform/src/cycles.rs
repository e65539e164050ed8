//! Counting CPU cycles on the GBA itself. In mGBA the counts are exactly reproducible.
//!
//! - [`Stopwatch`]: timer 2 counts every cycle and timer 3 its overflows: 32 bits, 256 s before it wraps. For
//!   whole tests and frames.
//! - [`OpTimer`]: timer 1 alone, restarted before and read after one short operation inlined into an ARM (IWRAM)
//!   or a Thumb (ROM) caller, minus the cost of the restart and the read. For the cycles of a single allocate or
//!   free.
//!
//! They use different timers, so a Stopwatch (the test runner's, around every test) keeps counting while an
//! OpTimer times operations. Timer 0 is the music's sample clock (only timers 0 and 1 can clock DirectSound's
//! FIFOs, GBATEK "GBA Sound Controller"): neither touches it.

use core::mem::MaybeUninit;
use gba::mmio::{
    TIMER1_CONTROL, TIMER1_RELOAD, TIMER2_CONTROL, TIMER2_COUNT, TIMER2_RELOAD, TIMER3_CONTROL, TIMER3_COUNT,
    TIMER3_RELOAD,
};
use gba::timers::{TimerControl, TimerScale};

/// Timer 2 counting at the CPU clock, from zero.
fn start_timer2() {
    TIMER2_CONTROL.write(TimerControl::new());
    TIMER2_RELOAD.write(0);
    TIMER2_CONTROL.write(TimerControl::new().with_scale(TimerScale::_1).with_enabled(true));
}

/// A running 32-bit cycle counter.
pub struct Stopwatch;

impl Stopwatch {
    /// Restarts the counter from zero.
    #[inline(always)]
    pub fn start() -> Stopwatch {
        TIMER3_CONTROL.write(TimerControl::new());
        TIMER3_RELOAD.write(0);
        TIMER3_CONTROL.write(TimerControl::new().with_cascade(true).with_enabled(true));
        start_timer2();
        Stopwatch
    }

    /// Cycles since `start`, including the few the timer reads cost.
    #[inline(always)]
    pub fn elapsed(&self) -> u32 {
        loop {
            let high = TIMER3_COUNT.read();
            let low = TIMER2_COUNT.read();
            // Timer 2 may have wrapped between the reads; then timer 3 has moved on: read again.
            if TIMER3_COUNT.read() == high {
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

/// Defines a timing function, `time_arm` or `time_thumb`. It restarts timer 1 from zero before the operation and
/// reads its count after it, each in an asm block that builds the timer's address itself (0x04000100 into `t`
/// by the build's instructions `$base`, then TM1CNT_L at +4 and its control TM1CNT_H at +6): neither the first
/// reading nor the address is in a register across the operation, where the compiler would spill it or build the
/// address again inside the timed window, at a cost that depends on the operation's own register use. The blocks
/// are also barriers the compiler cannot move memory accesses across, and the operation's result is stored after
/// the read, so that no work on it (such as packing it into return registers) falls inside the window.
///
/// What is left: `out` stays in a register across the operation, and plain arithmetic can move across the
/// blocks, a few cycles either way by the code generated. (Passing `out` through a static and `op` through the
/// restart's block removed those too, but the literal that needs in each copy of the read took 770 bytes of
/// IWRAM, more than the ARM benchmark's stack could spare.) The restart loads the reload value, which
/// `OpTimer::calibrated` sets to 0.
macro_rules! timing_function {
    ($(#[$attr:meta])* $name:ident, [$($base:literal),*]) => {
        $(#[$attr])*
        #[inline(never)]
        fn $name<O: Op>(op: &mut O, out: &mut MaybeUninit<O::Out>) -> u16 {
            // SAFETY: writes timer 1's control (disabled, then enabled at the CPU clock, which restarts the count
            // from its reload value, 0), which only OpTimer uses, one operation at a time.
            unsafe {
                core::arch::asm!(
                    $($base,)*
                    "movs {v}, #0",
                    "strh {v}, [{t}, #6]",
                    "movs {v}, #0x80",
                    "strh {v}, [{t}, #6]",
                    t = out(reg) _,
                    v = out(reg) _,
                    options(nostack)
                )
            };
            let result = op.run();
            let count: u16;
            // SAFETY: reads TM1CNT_L, which has no side effects.
            unsafe {
                core::arch::asm!(
                    $($base,)*
                    "ldrh {t}, [{t}, #4]",
                    t = out(reg) count,
                    options(nostack)
                )
            };
            out.write(result);
            count
        }
    };
}

timing_function!(
    /// Runs `op` timed, as ARM code in IWRAM.
    #[unsafe(link_section = ".iwram.time_arm")]
    #[instruction_set(arm::a32)]
    time_arm,
    ["mov {t}, #0x04000000", "add {t}, {t}, #0x100"]
);

timing_function!(
    /// Runs `op` timed, as Thumb code in ROM.
    time_thumb,
    ["movs {t}, #1", "lsls {t}, {t}, #18", "adds {t}, {t}, #1", "lsls {t}, {t}, #8"]
);

/// Times single operations shorter than 65,536 cycles from a caller of one build: an ARM function in IWRAM
/// or a Thumb function in ROM, with the operation inlined into it, so that a figure is the operation's own
/// cost and not that of a call from elsewhere. The cost of restarting and reading the timer is subtracted.
/// Exact in IWRAM; in ROM a read can move by a cycle or two with the cartridge prefetch buffer.
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
    /// Starts timer 1 and measures the empty operation in the build (`arm`, or Thumb).
    pub fn new(arm: bool) -> OpTimer {
        OpTimer::calibrated(arm, &mut Nothing)
    }

    /// Like [`OpTimer::new`], but subtracting what `empty` costs instead of nothing (the least of 8 runs).
    pub fn calibrated<O: Op<Out = ()>>(arm: bool, empty: &mut O) -> OpTimer {
        // Reload value 0, which each restart loads.
        TIMER1_RELOAD.write(0);
        TIMER1_CONTROL.write(TimerControl::new().with_scale(TimerScale::_1).with_enabled(true));
        let mut overhead = u16::MAX;
        for _ in 0..8 {
            let mut out = MaybeUninit::uninit();
            let cycles = if arm { time_arm(empty, &mut out) } else { time_thumb(empty, &mut out) };
            overhead = overhead.min(cycles);
        }
        OpTimer { arm, overhead }
    }

    /// Runs `op` and returns its result and the cycles it took.
    #[inline(always)]
    pub fn time<O: Op>(&self, op: &mut O) -> (O::Out, u16) {
        let mut out = MaybeUninit::uninit();
        let cycles = if self.arm { time_arm(op, &mut out) } else { time_thumb(op, &mut out) };
        // SAFETY: `time_arm` and `time_thumb` write the operation's result before they return.
        (unsafe { out.assume_init() }, cycles.saturating_sub(self.overhead))
    }
}
