//! The compiler helpers of the ARM/IWRAM build, which override compiler_builtins' (weak symbols there); the
//! Thumb/ROM build keeps compiler_builtins' own.

/// The number of leading zero bits of `x` (32 for 0), which LLVM calls for `leading_zeros` (talc's and rlsf's
/// size classes): ARMv4T has no count-leading-zeros instruction. compiler_builtins' is Thumb code in ROM; this
/// one is ARM code in IWRAM, so that no timed operation calls into ROM. A binary search on the highest set
/// bit: a handful of compares and shifts, as compiler_builtins' is.
#[cfg(feature = "arm-iwram")]
#[unsafe(no_mangle)]
#[unsafe(link_section = ".iwram.__clzsi2")]
#[instruction_set(arm::a32)]
pub extern "C" fn __clzsi2(x: u32) -> u32 {
    if x == 0 {
        return 32;
    }
    let (mut x, mut n) = (x, 0);
    if x <= 0x0000_FFFF {
        n += 16;
        x <<= 16;
    }
    if x <= 0x00FF_FFFF {
        n += 8;
        x <<= 8;
    }
    if x <= 0x0FFF_FFFF {
        n += 4;
        x <<= 4;
    }
    if x <= 0x3FFF_FFFF {
        n += 2;
        x <<= 2;
    }
    if x <= 0x7FFF_FFFF {
        n += 1;
    }
    n
}

#[cfg(feature = "arm-iwram")]
unsafe extern "C" {
    /// compiler_builtins' unsigned division: returns `n / d` and stores `n % d` in `*rem`.
    fn __udivmodsi4(n: u32, d: u32, rem: *mut u32) -> u32;
}

/// `n / d` in r0 and `n % d` in r1, which LLVM calls for `%` on `u32`. compiler_builtins' returns with
/// `pop {pc}`, which on ARMv4T cannot return to ARM code, and this build's benchmark code is ARM (the
/// `bench-arm` profile): this one returns with `bx lr` to either. Not timed.
#[cfg(feature = "arm-iwram")]
#[unsafe(no_mangle)]
pub extern "C" fn __aeabi_uidivmod(n: u32, d: u32) -> u64 {
    let mut rem = 0;
    // SAFETY: compiler_builtins' division (which `/` reaches too); `rem` is a valid place for the remainder.
    let quotient = unsafe { __udivmodsi4(n, d, &mut rem) };
    u64::from(quotient) | (u64::from(rem) << 32)
}
