//! The physical reference: the least an ARM7TDMI can do to pop and push a byte index, hand-written in ARM
//! assembly and placed in IWRAM. No checks at all: every pool is reported as a ratio to this.

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

core::arch::global_asm!(
    ".section .iwram.ref_pop, \"ax\", %progbits",
    ".arm",
    ".global ref_pop",
    // r0 = stack; returns the index, or -1 when empty.
    "ref_pop:",
    "ldr r1, [r0]",
    "subs r1, r1, #1",
    "mvnmi r0, #0",
    "bxmi lr",
    "str r1, [r0]",
    "add r0, r0, r1",
    "ldrb r0, [r0, #4]",
    "bx lr",
    ".section .iwram.ref_push, \"ax\", %progbits",
    ".global ref_push",
    // r0 = stack, r1 = index.
    "ref_push:",
    "ldr r2, [r0]",
    "add r3, r0, r2",
    "strb r1, [r3, #4]",
    "add r2, r2, #1",
    "str r2, [r0]",
    "bx lr",
    ".thumb",
);

unsafe extern "C" {
    fn ref_pop(stack: *mut RefStack) -> i32;
    fn ref_push(stack: *mut RefStack, index: u32);
}

/// Pops a free index. Inlined, so that an ARM caller in IWRAM calls the assembly directly.
#[inline(always)]
pub fn pop(stack: &mut RefStack) -> Option<u8> {
    // SAFETY: `stack` is a valid RefStack; ref_pop reads `top` and one slot below it, and writes `top`.
    let index = unsafe { ref_pop(stack) };
    if index < 0 { None } else { Some(index as u8) }
}

/// Pushes a free index back.
#[inline(always)]
pub fn push(stack: &mut RefStack, index: u8) {
    if stack.top >= 256 {
        panic!("reference stack overflow");
    }
    // SAFETY: `top < 256`, so the slot written is inside `slots`.
    unsafe { ref_push(stack, u32::from(index)) };
}
