//! The physical reference: the least an ARM7TDMI can do to pop and push a byte index, hand-written in assembly
//! for this build (ARM for the ARM/IWRAM build, Thumb for the Thumb/ROM one). No checks at all. It is timed two
//! ways, exactly like the pools: inline (the instructions inlined into the timing function, as the pools' code
//! is) and as a call (a call to a function of this build and memory: ARM in IWRAM, Thumb in ROM). Every pool is
//! reported as a ratio to both.

use crate::pools::Subject;
use core::arch::{asm, global_asm};

/// A stack of 256 free byte indices; `top` counts the free ones.
#[repr(C)]
pub struct RefStack {
    top: u32,
    slots: [u8; 256],
}

impl RefStack {
    /// A full stack: every index 0..256 free.
    pub fn full() -> RefStack {
        RefStack { top: 256, slots: core::array::from_fn(|i| i as u8) }
    }
}

// ref_pop(stack) -> index, or -1 when empty; ref_push(stack, index). `.type` and `.size` make them functions
// of the ELF's symbol table, for the test that follows every call of a timed function.
#[cfg(feature = "arm")]
global_asm!(
    ".section .iwram.ref_pop, \"ax\", %progbits",
    ".arm",
    ".global ref_pop",
    ".type ref_pop, %function",
    "ref_pop:",
    "ldr r1, [r0]",
    "subs r1, r1, #1",
    "mvnmi r0, #0",
    "bxmi lr",
    "str r1, [r0]",
    "add r0, r0, r1",
    "ldrb r0, [r0, #4]",
    "bx lr",
    ".size ref_pop, . - ref_pop",
    ".section .iwram.ref_push, \"ax\", %progbits",
    ".global ref_push",
    ".type ref_push, %function",
    "ref_push:",
    "ldr r2, [r0]",
    "add r3, r0, r2",
    "strb r1, [r3, #4]",
    "add r2, r2, #1",
    "str r2, [r0]",
    "bx lr",
    ".size ref_push, . - ref_push",
);

#[cfg(not(feature = "arm"))]
global_asm!(
    ".section .text.ref_pop, \"ax\", %progbits",
    ".thumb",
    ".global ref_pop",
    ".type ref_pop, %function",
    ".thumb_func",
    "ref_pop:",
    "ldr r1, [r0]",
    "subs r1, r1, #1",
    "bmi 2f",
    "str r1, [r0]",
    "adds r0, r0, r1",
    "ldrb r0, [r0, #4]",
    "bx lr",
    "2:",
    "movs r0, #0",
    "mvns r0, r0",
    "bx lr",
    ".size ref_pop, . - ref_pop",
    ".section .text.ref_push, \"ax\", %progbits",
    ".global ref_push",
    ".type ref_push, %function",
    ".thumb_func",
    "ref_push:",
    "ldr r2, [r0]",
    "adds r3, r0, r2",
    "strb r1, [r3, #4]",
    "adds r2, r2, #1",
    "str r2, [r0]",
    "bx lr",
    ".size ref_push, . - ref_push",
);

unsafe extern "C" {
    fn ref_pop(stack: *mut RefStack) -> i32;
    fn ref_push(stack: *mut RefStack, index: u32);
}

/// The reference called: `ref_pop` / `ref_push`.
pub struct Call(pub RefStack);

/// The reference inlined: the same instructions, straight-line, in the timing function.
pub struct Inline(pub RefStack);

impl Subject for Call {
    type Key = u8;
    #[inline(always)]
    fn alloc(&mut self) -> Option<u8> {
        // SAFETY: a valid RefStack; ref_pop reads `top` and one slot below it, and writes `top`.
        let index = unsafe { ref_pop(&mut self.0) };
        if index < 0 { None } else { Some(index as u8) }
    }
    #[inline(always)]
    fn free(&mut self, key: u8) -> bool {
        // SAFETY: the benchmark frees only keys it holds, so fewer than 256 are free and `slots[top]` exists.
        unsafe { ref_push(&mut self.0, u32::from(key)) };
        true
    }
}

impl Subject for Inline {
    type Key = u8;
    #[inline(always)]
    fn alloc(&mut self) -> Option<u8> {
        let index: i32;
        // SAFETY: as `ref_pop`: reads `top` and the slot below it, writes `top`.
        #[cfg(feature = "arm")]
        unsafe {
            asm!(
                "ldr {top}, [{s}]",
                "subs {top}, {top}, #1",
                "mvnmi {out}, #0",
                "strpl {top}, [{s}]",
                "addpl {top}, {s}, {top}",
                "ldrbpl {out}, [{top}, #4]",
                s = in(reg) &mut self.0, top = out(reg) _, out = out(reg) index, options(nostack),
            )
        };
        // SAFETY: as above.
        #[cfg(not(feature = "arm"))]
        unsafe {
            asm!(
                "ldr {top}, [{s}]",
                "subs {top}, {top}, #1",
                "bmi 2f",
                "str {top}, [{s}]",
                "adds {top}, {s}, {top}",
                "ldrb {out}, [{top}, #4]",
                "b 3f",
                "2:",
                "movs {out}, #0",
                "mvns {out}, {out}",
                "3:",
                s = in(reg) &mut self.0, top = out(reg) _, out = out(reg) index, options(nostack),
            )
        };
        if index < 0 { None } else { Some(index as u8) }
    }
    #[inline(always)]
    fn free(&mut self, key: u8) -> bool {
        // SAFETY: as `ref_push`, and fewer than 256 are free (see `Call::free`).
        unsafe {
            asm!(
                "ldr {top}, [{s}]",
                "adds {slot}, {s}, {top}",
                "strb {i}, [{slot}, #4]",
                "adds {top}, {top}, #1",
                "str {top}, [{s}]",
                s = in(reg) &mut self.0, i = in(reg) u32::from(key), top = out(reg) _, slot = out(reg) _,
                options(nostack),
            )
        };
        true
    }
}
