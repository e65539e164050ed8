//! Fixed-point numbers and the trigonometry the game moves and aims with: angles in 64ths of a turn, no
//! floating point (the GBA has no FPU) and no divides in what the ARM hot paths inline.

use agb_fixnum::Num;

/// Positions and velocities: pixels with 8 fractional bits.
pub type Fx = Num<i32, 8>;

/// 256·sin of the first quarter turn in 64ths of a turn.
const QUARTER: [i32; 17] = [0, 25, 50, 74, 98, 121, 142, 162, 181, 198, 213, 226, 237, 245, 251, 255, 256];

/// sin of `angle` 64ths of a turn, as a fixed-point number. Inlined, for the ARM hot paths.
#[inline(always)]
pub fn sin(angle: u32) -> Fx {
    let a = (angle & 63) as usize;
    let raw = match a {
        0..=16 => QUARTER[a],
        17..=32 => QUARTER[32 - a],
        33..=48 => -QUARTER[a - 32],
        _ => -QUARTER[64 - a],
    };
    Fx::from_raw(raw)
}

/// cos of `angle` 64ths of a turn; angle 0 points right, 16 down (the screen's y grows downwards).
#[inline(always)]
pub fn cos(angle: u32) -> Fx {
    sin(angle + 16)
}

/// The integer square root, by bits (no divide).
pub fn isqrt(n: u32) -> u32 {
    let (mut root, mut bit, mut rest) = (0u32, 1u32 << 30, n);
    while bit > n {
        bit >>= 2;
    }
    while bit != 0 {
        if rest >= root + bit {
            rest -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    root
}

/// The velocity of `speed` pixels a frame from (`x`, `y`) towards (`tx`, `ty`); straight down if they coincide.
pub fn towards(x: Fx, y: Fx, tx: Fx, ty: Fx, speed: Fx) -> (Fx, Fx) {
    let dx = (tx - x).floor();
    let dy = (ty - y).floor();
    let len = isqrt((dx * dx + dy * dy) as u32) as i32;
    if len == 0 {
        return (Fx::new(0), speed);
    }
    (Fx::from_raw(dx * speed.to_raw() / len), Fx::from_raw(dy * speed.to_raw() / len))
}

/// (`vx`, `vy`) turned by `angle` 64ths of a turn.
pub fn rotate(vx: Fx, vy: Fx, angle: u32) -> (Fx, Fx) {
    let (c, s) = (cos(angle), sin(angle));
    (vx * c - vy * s, vx * s + vy * c)
}
