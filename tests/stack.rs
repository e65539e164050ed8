//! The stack's guard and high-water mark (`stackshot_platform::stack`) on the GBA. A test that really overflows
//! the stack is in the fault fixture (fixtures/faults.rs), run from outside by tools/harness/tests/game_crash.rs: here
//! it would fail this ROM.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use core::hint::black_box;
use stackshot_platform::stack::{self, Overflow};

unsafe extern "C" {
    // linker.ld: an address only.
    static __bss_end: u32;
}

#[test_case]
fn the_stack_lies_between_the_guard_after_bss_and_the_bios_area() {
    assert_eq!(stack::top(), 0x0300_7F00, "SP_usr as the BIOS leaves it; above is the BIOS's");
    assert!(stack::guard() >= (&raw const __bss_end) as usize, "the guard must not overlap .bss");
    assert_eq!(stack::limit() - stack::guard(), 32);
    assert!(stack::space() >= 2048, "{} bytes of stack", stack::space());
    let sp = stack::pointer();
    assert!(stack::limit() < sp && sp <= stack::top(), "sp {sp:#x}");
}

#[test_case]
fn the_guard_is_intact_and_a_broken_canary_is_reported_where_it_broke() {
    assert_eq!(stack::check(), Ok(()));
    let word = (stack::guard() + 8) as *mut u32;
    // SAFETY: a word of the guard, which only stackshot_platform::stack reads; restored before the test ends.
    let saved = unsafe { word.read_volatile() };
    // SAFETY: as above: the broken canary is what the check must report.
    unsafe { word.write_volatile(saved ^ 1) };
    let result = stack::check();
    // SAFETY: as above.
    unsafe { word.write_volatile(saved) };
    assert_eq!(result, Err(Overflow { at: word as usize }));
    assert_eq!(stack::check(), Ok(()));
}

/// Holds 2 KB of locals, written, and returns their lowest address.
#[inline(never)]
fn deep() -> usize {
    let mut locals = [0u32; 512];
    for (i, word) in locals.iter_mut().enumerate() {
        *word = i as u32;
    }
    black_box(&mut locals).as_ptr() as usize
}

#[test_case]
fn the_high_water_mark_rises_with_a_deeper_call_and_stays() {
    let before = stack::high_water();
    assert!(before > 0 && before < stack::space(), "{before}");
    let lowest = deep();
    let after = stack::high_water();
    assert!(after >= stack::top() - lowest, "the call reached {lowest:#x}, the mark says {after} bytes");
    assert!(after > before && after <= stack::space());
    assert_eq!(stack::high_water(), after, "the mark keeps the deepest point");
}
