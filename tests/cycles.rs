//! The cycle counters agree with the ARM7TDMI's documented timings.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use stackshot_platform::cycles::{Op, OpTimer, Stopwatch};

// Two ARM functions in IWRAM that differ only by 100 `mov r0, r0`, each one 1 sequential cycle (GBATEK: IWRAM
// has a 32-bit bus and no wait states).
core::arch::global_asm!(
    ".section .iwram.test_nops, \"ax\", %progbits",
    ".arm",
    ".global nops_0",
    "nops_0:",
    "bx lr",
    ".global nops_100",
    "nops_100:",
    ".rept 100",
    "mov r0, r0",
    ".endr",
    "bx lr",
    ".thumb",
);
unsafe extern "C" {
    fn nops_0();
    fn nops_100();
}

struct Empty;
impl Op for Empty {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {}
}

/// A call to `nops_0`, and one to `nops_100`: two types, so that each is timed by straight-line code (a branch
/// between them inside the timed region would add its own cycles to one side).
struct Nops0;
impl Op for Nops0 {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        // SAFETY: the function only executes `bx lr`; it clobbers nothing.
        unsafe { nops_0() }
    }
}

struct Nops100;
impl Op for Nops100 {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        // SAFETY: the function only executes `mov r0, r0` and returns; it clobbers nothing.
        unsafe { nops_100() }
    }
}

#[test_case]
fn op_timer_reads_next_to_nothing_for_nothing() {
    for arm in [true, false] {
        let timer = OpTimer::new(arm);
        for _ in 0..10 {
            let cycles = timer.time(&mut Empty).1;
            // In ROM (Thumb) the prefetch buffer can shift a read by a cycle or two; in IWRAM it is exact.
            assert!(cycles <= if arm { 0 } else { 2 }, "{cycles} cycles for an empty operation (arm: {arm})");
        }
    }
}

#[test_case]
fn op_timer_sees_exactly_one_cycle_per_iwram_nop() {
    for arm in [true, false] {
        let timer = OpTimer::new(arm);
        let (_, zero) = timer.time(&mut Nops0);
        let (_, hundred) = timer.time(&mut Nops100);
        assert_eq!(hundred - zero, 100, "nops_0 took {zero} cycles, nops_100 {hundred} (arm: {arm})");
    }
}

#[test_case]
fn stopwatch_sees_the_same_hundred_cycles() {
    let watch = Stopwatch::start();
    // SAFETY: as above.
    unsafe { nops_0() };
    let zero = watch.elapsed();
    let watch = Stopwatch::start();
    // SAFETY: as above.
    unsafe { nops_100() };
    let hundred = watch.elapsed();
    let difference = hundred - zero;
    // Counting at the CPU clock (not a prescaled one), give or take the cartridge prefetch around the two veneer
    // calls from ROM, which OpTimer's exact test above does not have (it times from a caller of each build).
    assert!((100..=110).contains(&difference), "{difference} cycles for 100 nops");
}

/// Timer 0 running as the music's sample clock (`src/mixer.rs`: a period of 1,254 cycles) changes neither
/// counter: both keep off it, as only timers 0 and 1 can clock the sound FIFOs.
#[test_case]
fn the_counters_keep_off_the_sound_clock() {
    use gba::mmio::{TIMER0_CONTROL, TIMER0_COUNT, TIMER0_RELOAD};
    use gba::timers::TimerControl;
    TIMER0_RELOAD.write(0u16.wrapping_sub(1_254));
    TIMER0_CONTROL.write(TimerControl::new().with_enabled(true));
    let watch = Stopwatch::start();
    // SAFETY: as above.
    unsafe { nops_0() };
    let zero = watch.elapsed();
    let watch = Stopwatch::start();
    // Long enough for timer 0 to wrap a few times.
    for _ in 0..50 {
        // SAFETY: as above.
        unsafe { nops_100() };
    }
    let many = watch.elapsed() - zero;
    let timer = OpTimer::new(true);
    let (_, one) = timer.time(&mut Nops100);
    let (_, none) = timer.time(&mut Nops0);
    // The sound clock still counts in its period: from its reload, 65,536 - 1,254, up, whenever it is read (a
    // counter that had restarted it would have it count from 0).
    let counts = [(); 8].map(|()| {
        // SAFETY: as above.
        unsafe { nops_100() };
        TIMER0_COUNT.read()
    });
    TIMER0_CONTROL.write(TimerControl::new());
    assert!(counts.iter().all(|&c| c >= 0u16.wrapping_sub(1_254)), "timer 0 left its period: {counts:?}");
    assert!((5_000..10_000).contains(&many), "{many} cycles for 50 calls of 100 nops, with timer 0 running");
    assert_eq!(one - none, 100, "OpTimer: {one} - {none} cycles for 100 nops, with timer 0 running");
}
