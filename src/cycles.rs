//! Counting CPU cycles on the GBA itself. In mGBA the counts are exactly reproducible.
//!
//! - [`Stopwatch`]: timer 0 counts every cycle and timer 1 its overflows: 32 bits, 256 s before it wraps. For
//!   whole tests and frames.
//! - [`OpTimer`]: timer 0 alone, read before and after one short operation, minus the cost of the reads
//!   themselves measured once. For the cycles of a single allocate or free.
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

/// Times single operations shorter than 65,536 cycles. Exact for code in IWRAM; code in ROM may read a cycle or
/// two off, with the prefetch buffer.
pub struct OpTimer {
    /// What two back-to-back reads of the counter cost, subtracted from every measurement.
    overhead: u16,
}

impl OpTimer {
    /// Starts timer 0 and measures the cost of reading it: the least of several tries, because code running
    /// from ROM varies by a cycle or two with the state of the cartridge prefetch buffer.
    pub fn new() -> OpTimer {
        start_timer0();
        let mut timer = OpTimer { overhead: 0 };
        let mut least = u16::MAX;
        for _ in 0..8 {
            least = least.min(timer.time(|| ()).1);
        }
        timer.overhead = least;
        timer
    }

    /// Runs `op` and returns its result and the cycles it took.
    #[inline(always)]
    pub fn time<R>(&self, op: impl FnOnce() -> R) -> (R, u16) {
        barrier();
        let before = TIMER0_COUNT.read();
        barrier();
        let result = op();
        barrier();
        let after = TIMER0_COUNT.read();
        barrier();
        (result, after.wrapping_sub(before).saturating_sub(self.overhead))
    }
}

impl Default for OpTimer {
    fn default() -> Self {
        OpTimer::new()
    }
}

/// Keeps the compiler from moving memory accesses across this point; emits no instruction. (`compiler_fence`
/// would do, but on ARMv4T it becomes a call to `__sync_synchronize`, which does not exist here.)
#[inline(always)]
fn barrier() {
    // SAFETY: an empty asm block does nothing; without `nomem` the compiler must assume it reads and writes memory.
    unsafe { core::arch::asm!("", options(nostack, preserves_flags)) };
}
