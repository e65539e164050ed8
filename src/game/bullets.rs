//! Bullets, the player's and the enemies' alike: a position and a velocity, moved by an ARM hot path in
//! IWRAM and freed when they leave the screen. The helpers here fire them: straight, aimed, in fans and rings.

use super::Fx;
use super::sprites::Sprited;
use super::sweep::sweep;
use stackshot_alloc::iwram::pool_alloc;
use stackshot_alloc::pool::IndexPool;

#[derive(Clone, Copy, Debug)]
pub struct Bullet {
    pub x: Fx,
    pub y: Fx,
    pub vx: Fx,
    pub vy: Fx,
}

impl Sprited for Bullet {
    #[inline(always)]
    fn centre(&self) -> (Fx, Fx) {
        (self.x, self.y)
    }
}

/// A bullet this far off screen (pixels) is gone.
const MARGIN: i32 = 8;

/// Moves every bullet of `pool` by its velocity and frees those that left the screen: a hot path, ARM code in
/// IWRAM, on raw fixed-point words.
#[unsafe(link_section = ".iwram.move_bullets")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn move_bullets<const N: usize, P>(pool: &mut IndexPool<Bullet, u8, N, P>) {
    sweep!(pool, |b| {
        let x = b.x.to_raw() + b.vx.to_raw();
        let y = b.y.to_raw() + b.vy.to_raw();
        b.x = Fx::from_raw(x);
        b.y = Fx::from_raw(y);
        x > -MARGIN << 8 && x < (240 + MARGIN) << 8 && y > -MARGIN << 8 && y < (160 + MARGIN) << 8
    });
}

/// Fires one bullet; false if the pool is full (the shot is simply not fired).
pub fn fire<const N: usize, P>(pool: &mut IndexPool<Bullet, u8, N, P>, x: Fx, y: Fx, vx: Fx, vy: Fx) -> bool {
    let fired = pool_alloc(pool, Bullet { x, y, vx, vy });
    crate::trace::pool_alloc(pool.id(), &fired);
    fired.is_ok()
}

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

/// `count` bullets fanned `step` 64ths of a turn apart, centred on the direction towards the target.
pub fn fan<const N: usize, P>(
    pool: &mut IndexPool<Bullet, u8, N, P>,
    (x, y): (Fx, Fx),
    (tx, ty): (Fx, Fx),
    speed: Fx,
    count: u32,
    step: u32,
) {
    let (vx, vy) = towards(x, y, tx, ty, speed);
    for i in 0..count {
        // 64 - k turns backwards by k: angles are taken modulo 64.
        let angle = (64 * 4 + i * step).wrapping_sub((count - 1) * step / 2);
        let (bx, by) = rotate(vx, vy, angle);
        fire(pool, x, y, bx, by);
    }
}

/// `count` (1..=64) bullets evenly around a circle, the first at `phase` 64ths of a turn, bullet `i` at
/// `phase + i * 64 / count`. A hot path, ARM code in IWRAM with the pool inline (a mine's death rings, the
/// boss's patterns), so without a divide, which the ARM7 does in a ROM routine: `64 / count` by subtraction once,
/// then the remainder carried from bullet to bullet, which gives `i * 64 / count` exactly.
#[unsafe(link_section = ".iwram.ring")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn ring<const N: usize, P>(
    pool: &mut IndexPool<Bullet, u8, N, P>,
    (x, y): (Fx, Fx),
    speed: Fx,
    count: u32,
    phase: u32,
) {
    if count == 0 {
        return;
    }
    let (mut step, mut rest) = (0, 64);
    while rest >= count {
        rest -= count;
        step += 1;
    }
    let (mut angle, mut carried) = (phase, 0);
    for _ in 0..count {
        // Raw fixed point: `cos(angle) * speed` as agb_fixnum multiplies (exact: the product fits 32 bits).
        let (vx, vy) = ((cos(angle).to_raw() * speed.to_raw()) >> 8, (sin(angle).to_raw() * speed.to_raw()) >> 8);
        let fired = pool.alloc(Bullet { x, y, vx: Fx::from_raw(vx), vy: Fx::from_raw(vy) });
        crate::trace::pool_alloc(pool.id(), &fired);
        angle += step;
        carried += rest;
        if carried >= count {
            carried -= count;
            angle += 1;
        }
    }
}
