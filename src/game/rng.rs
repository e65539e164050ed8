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

    /// A roll in `0..n` (`n > 0`).
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }

    /// True `percent` times in a hundred.
    #[inline]
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}
