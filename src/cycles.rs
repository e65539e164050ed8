//! Counting CPU cycles on the GBA itself: timer 0 counts every cycle, timer 1 counts timer 0's overflows, together
//! a 32-bit counter (256 s before it wraps). In mGBA the counts are exactly reproducible.

use gba::mmio::{TIMER0_CONTROL, TIMER0_COUNT, TIMER0_RELOAD, TIMER1_CONTROL, TIMER1_COUNT, TIMER1_RELOAD};
use gba::timers::{TimerControl, TimerScale};

/// A running cycle counter. Only one can run at a time: they share timers 0 and 1.
pub struct Stopwatch;

impl Stopwatch {
    /// Restarts the counter from zero.
    #[inline(always)]
    pub fn start() -> Stopwatch {
        TIMER0_CONTROL.write(TimerControl::new());
        TIMER1_CONTROL.write(TimerControl::new());
        TIMER0_RELOAD.write(0);
        TIMER1_RELOAD.write(0);
        TIMER1_CONTROL.write(TimerControl::new().with_cascade(true).with_enabled(true));
        TIMER0_CONTROL.write(TimerControl::new().with_scale(TimerScale::_1).with_enabled(true));
        Stopwatch
    }

    /// Cycles since `start`, including the few the two timer reads cost.
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
