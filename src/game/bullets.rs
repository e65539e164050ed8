//! Bullets, the player's and the enemies' alike: a position and a velocity, moved by an ARM hot path in
//! IWRAM and freed when they leave the screen. The helpers here fire them: straight, aimed, in fans and rings.

use super::fixed::{Fx, cos, rotate, sin, towards};
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
pub fn move_bullets<const N: usize, P, const ID: u8>(pool: &mut IndexPool<Bullet, u8, N, P, ID>) {
    sweep!(pool, |b| {
        let x = b.x.to_raw() + b.vx.to_raw();
        let y = b.y.to_raw() + b.vy.to_raw();
        b.x = Fx::from_raw(x);
        b.y = Fx::from_raw(y);
        x > -MARGIN << 8 && x < (240 + MARGIN) << 8 && y > -MARGIN << 8 && y < (160 + MARGIN) << 8
    });
}

/// Fires one bullet; false if the pool is full (the shot is simply not fired).
pub fn fire<const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<Bullet, u8, N, P, ID>,
    x: Fx,
    y: Fx,
    vx: Fx,
    vy: Fx,
) -> bool {
    let fired = pool_alloc(pool, Bullet { x, y, vx, vy });
    crate::trace::pool_alloc(pool.id(), &fired);
    fired.is_ok()
}

/// `count` bullets fanned `step` 64ths of a turn apart, centred on the direction towards the target.
pub fn fan<const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<Bullet, u8, N, P, ID>,
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
pub fn ring<const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<Bullet, u8, N, P, ID>,
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
