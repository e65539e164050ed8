//! What the tables need beyond `stackshot::cycles::OpTimer`: the price of a call into IWRAM, measured, so that
//! it can be subtracted from the assembly reference and reported on its own.

use core::arch::asm;
use stackshot::cycles::{Op, OpTimer};

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

/// A timer for an operation that is a call to an ARM function in IWRAM (the assembly reference): it subtracts
/// the cost of calling an empty one from the same place too, leaving the body's cycles.
pub fn without_call(arm: bool) -> OpTimer {
    OpTimer::calibrated(arm, &mut CallIwram)
}

/// Cycles a Thumb caller in ROM pays to call an (empty) ARM function in IWRAM and return: the long-branch
/// veneer, the mode switches and the pipeline refills.
pub fn thumb_to_iwram_call() -> u16 {
    OpTimer::new(false).time(&mut CallIwram).1
}
