//! Hot paths that must be fast on the ARM7TDMI: ARM code placed in IWRAM (32-bit bus, no wait states), where
//! it runs several times faster than Thumb code fetched from the cartridge.

/// Fills `count` words at `dst` with `value`, four words per `stmia`.
///
/// # Safety
/// `dst` must be word-aligned and valid for writing `count` words.
#[unsafe(link_section = ".iwram.fill_words")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub unsafe fn fill_words(dst: *mut u32, value: u32, count: usize) {
    // SAFETY: the caller guarantees `dst..dst + count` is writable and aligned; the asm writes exactly `count`
    // words from `dst` upwards and touches no other memory or registers than those it declares.
    unsafe {
        core::arch::asm!(
            "mov r3, r1",
            "mov r12, r1",
            "mov lr, r1",
            // Four words at a time while at least four are left ...
            "2:",
            "subs r2, r2, #4",
            "stmiage r0!, {{r1, r3, r12, lr}}",
            "bgt 2b",
            // ... then the 0..3 left over: (remaining - 4) & 3 is exactly that count.
            "ands r2, r2, #3",
            "3:",
            "subs r2, r2, #1",
            "strge r1, [r0], #4",
            "bgt 3b",
            inout("r0") dst => _,
            in("r1") value,
            inout("r2") count => _,
            out("r3") _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        );
    }
}
