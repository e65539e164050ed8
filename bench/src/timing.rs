//! Which build this ROM is, and how it times an operation: every operation of every allocator is inlined into
//! `stackshot_platform::cycles::OpTimer`'s timing function of this build, ARM code in IWRAM or Thumb code in ROM.

use core::arch::asm;
use stackshot_platform::cycles::{Op, OpTimer};

/// True in the builds whose timing functions are ARM code in IWRAM (feature `arm`: the ARM/IWRAM build and the
/// game's), false in the Thumb/ROM build.
pub const ARM: bool = cfg!(feature = "arm");
/// True in the game's build (feature `arm-game`): our heap's rare paths are Thumb code in ROM.
pub const GAME: bool = cfg!(feature = "arm-game");
/// The build, as the tables name it.
pub const BUILD: &str = if GAME {
    "the game's build"
} else if ARM {
    "ARM, IWRAM"
} else {
    "Thumb, ROM"
};

pub fn timer() -> OpTimer {
    OpTimer::new(ARM)
}

/// Panics unless this crate's code is in the instruction set the feature says: the ARM builds need the
/// `bench-arm` profile (which compiles this crate as ARM code), the game's build `bench-game`, the Thumb/ROM build
/// the `bench-thumb` one.
pub fn check_build() {
    // A function's address has bit 0 set for Thumb code.
    let thumb = (check_build as fn() as usize) & 1 == 1;
    assert!(
        thumb != ARM,
        "built with the wrong profile: use --profile bench-arm or bench-game with --features arm-iwram or \
         arm-game, else bench-thumb"
    );
}

/// An empty ARM function in IWRAM, to price a call into it.
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
/// veneer, the mode switches and the pipeline refills. What the game pays to reach its ARM hot paths.
pub fn thumb_to_iwram_call() -> u16 {
    OpTimer::new(false).time(&mut CallIwram).1
}
