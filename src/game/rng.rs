//! The game's dice: enemy aim jitter, particle spray, star placement, wave variety. xorshift32, one word of
//! state, so a seeded run plays the same every time (the scripted tests and reference screenshots rely on it).

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct Rng(u32);

impl Rng {
    /// A stream from `seed` (xorshift never leaves zero, so a zero seed starts from a fixed odd word instead).
    pub const fn new(seed: u32) -> Self {
        Rng(if seed == 0 { 0x9E37_79B9 } else { seed })
    }

    /// The next 32 random bits: shifts by 13, 17 and 5.
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    /// A roll in `0..n` (`n > 0`): the next word modulo `n`.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        remainder(self.next_u32(), n)
    }

    /// True `percent` times in a hundred.
    #[inline]
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

/// `x % n` (`n > 0`), as ARM code in IWRAM: the ARM7 has no divide, and the compiler's routine for `%` is Thumb
/// code in ROM, about 800 cycles; this long division by shifts takes about 250 with the call. Exactly `%`, so a
/// seeded run plays as before.
#[unsafe(link_section = ".iwram.remainder")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn remainder(x: u32, n: u32) -> u32 {
    debug_assert!(n > 0, "a roll below 0");
    if n == 0 {
        return x;
    }
    // `n` shifted up to the largest `n << k` not above `x` (no overflow: `d <= x / 2` before each doubling).
    let mut d = n;
    while d <= x >> 1 {
        d <<= 1;
    }
    // Then subtracted back down, a bit at a time.
    let mut r = x;
    loop {
        if r >= d {
            r -= d;
        }
        if d == n {
            return r;
        }
        d >>= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::remainder;

    /// The long division agrees with `%` at the edges and on a spread of words, for the divisors the game uses.
    #[test_case]
    fn remainder_is_the_remainder() {
        let mut x = 0x9E37_79B9u32;
        for n in [1, 2, 3, 7, 100, 208, 240, 255, 256, 1000, 0x8000_0000, u32::MAX] {
            for v in [0, 1, n - 1, n, n.wrapping_add(1), u32::MAX, u32::MAX - 1, 0x8000_0000] {
                assert_eq!(remainder(v, n), v % n, "{v} % {n}");
            }
            for _ in 0..200 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                assert_eq!(remainder(x, n), x % n, "{x} % {n}");
            }
        }
    }
}
