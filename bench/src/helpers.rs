//! The compiler helpers of the ARM/IWRAM build, which override compiler_builtins' (weak symbols there); the
//! Thumb/ROM build keeps compiler_builtins' own.

/// The number of leading zero bits of `x` (32 for 0), which LLVM calls for `leading_zeros` (talc's and rlsf's
/// size classes): ARMv4T has no count-leading-zeros instruction. compiler_builtins' is Thumb code in ROM; this
/// one is ARM code in IWRAM, so that no timed operation calls into ROM. The same algorithm: a binary search on
/// the highest set bit, unrolled (a loop costs talc and rlsf a dozen cycles more a call).
#[cfg(feature = "arm")]
#[unsafe(no_mangle)]
#[unsafe(link_section = ".iwram.__clzsi2")]
#[instruction_set(arm::a32)]
pub extern "C" fn __clzsi2(x: u32) -> u32 {
    let (mut x, mut n) = (x, 32);
    if x >> 16 != 0 {
        n -= 16;
        x >>= 16;
    }
    if x >> 8 != 0 {
        n -= 8;
        x >>= 8;
    }
    if x >> 4 != 0 {
        n -= 4;
        x >>= 4;
    }
    if x >> 2 != 0 {
        n -= 2;
        x >>= 2;
    }
    if x >> 1 != 0 { n - 2 } else { n - x }
}

#[cfg(feature = "arm")]
unsafe extern "C" {
    /// compiler_builtins' unsigned division: returns `n / d` and stores `n % d` in `*rem`.
    fn __udivmodsi4(n: u32, d: u32, rem: *mut u32) -> u32;
}

/// `n / d` in r0 and `n % d` in r1, which LLVM calls for `%` on `u32`. compiler_builtins' returns with
/// `pop {pc}`, which on ARMv4T cannot return to ARM code, and this build's benchmark code is ARM (the
/// `bench-arm` profile): this one returns with `bx lr` to either. Not timed.
#[cfg(feature = "arm")]
#[unsafe(no_mangle)]
pub extern "C" fn __aeabi_uidivmod(n: u32, d: u32) -> u64 {
    let mut rem = 0;
    // SAFETY: compiler_builtins' division (which `/` reaches too); `rem` is a valid place for the remainder.
    let quotient = unsafe { __udivmodsi4(n, d, &mut rem) };
    u64::from(quotient) | (u64::from(rem) << 32)
}

/// Panics unless this build's helpers give the right answers on numbers around every power of two (a wrong one
/// would make talc's and rlsf's figures, or the report's, wrong without failing).
pub fn check() {
    #[cfg(feature = "arm")]
    for k in 0..32 {
        for x in [1u32 << k, (1 << k) - 1, (1 << k) | 1, u32::MAX >> k] {
            let mut expected = 32;
            while expected > 0 && x >> (32 - expected) != 0 {
                expected -= 1;
            }
            assert_eq!(__clzsi2(x), expected, "__clzsi2({x:#x})");
            let d = (1 << (k / 2)) + 3;
            let (q, r) = (__aeabi_uidivmod(x, d) as u32, (__aeabi_uidivmod(x, d) >> 32) as u32);
            assert!(r < d && u64::from(q) * u64::from(d) + u64::from(r) == u64::from(x), "__aeabi_uidivmod({x}, {d})");
        }
    }
}
