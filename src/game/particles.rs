//! Explosion particles: sparks that fly apart, slow down and burn out, animated through the explosion frames.

use super::bullets::Bullet;
use super::fixed::{Fx, cos, sin};
use super::rng::Rng;
use super::sprites::Sprited;
use super::sweep::sweep;
use stackshot_alloc::pool::IndexPool;

#[derive(Clone, Copy, Debug, Default)]
pub struct Particle {
    pub x: Fx,
    pub y: Fx,
    pub vx: Fx,
    pub vy: Fx,
    pub age: u8,
    pub life: u8,
}

impl Sprited for Particle {
    #[inline(always)]
    fn centre(&self) -> (Fx, Fx) {
        (self.x, self.y)
    }

    /// Four frames over the particle's life: flash, burst, smoke, embers.
    #[inline(always)]
    fn frame(&self) -> u32 {
        (u32::from(self.age) * 4) >> 5
    }
}

/// Ages and moves every particle of `pool`, with a little drag, and frees the burnt-out ones: a hot path,
/// ARM code in IWRAM.
#[unsafe(link_section = ".iwram.move_particles")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn move_particles<const N: usize, P, const ID: u8>(pool: &mut IndexPool<Particle, u8, N, P, ID>) {
    sweep!(pool, |p| {
        let (vx, vy) = (p.vx.to_raw(), p.vy.to_raw());
        // Lose 1/16 of the speed a frame.
        let (vx, vy) = (vx - (vx >> 4), vy - (vy >> 4));
        p.vx = Fx::from_raw(vx);
        p.vy = Fx::from_raw(vy);
        p.x = Fx::from_raw(p.x.to_raw() + vx);
        p.y = Fx::from_raw(p.y.to_raw() + vy);
        p.age += 1;
        p.age < p.life
    });
}

/// One particle flying out of (`x`, `y`) at up to `speed` pixels a frame, from one random word cut into fields:
/// no divides, which the ARM7 does in software.
#[inline(always)]
fn spark(rng: &mut Rng, x: Fx, y: Fx, speed: Fx) -> Particle {
    let r = rng.next_u32();
    let angle = r & 63;
    // A quarter to all of `speed`, in 256ths.
    let v = (speed.to_raw() * (64 + ((r >> 6) & 191) as i32)) >> 8;
    let life = 16 + ((r >> 14) & 15) as u8;
    let (c, s) = (cos(angle).to_raw(), sin(angle).to_raw());
    Particle { x, y, vx: Fx::from_raw((c * v) >> 8), vy: Fx::from_raw((s * v) >> 8), age: 0, life }
}

/// `count` particles flying out of (`x`, `y`) at up to `speed` pixels a frame; as many as the pool has room for.
/// A hot path, ARM code in IWRAM with the pool inline: an enemy's death, many at once in a bomb's frame.
#[unsafe(link_section = ".iwram.burst")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn burst<const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<Particle, u8, N, P, ID>,
    rng: &mut Rng,
    x: Fx,
    y: Fx,
    count: u32,
    speed: Fx,
) {
    for _ in 0..count {
        if !spawn(pool, rng, x, y, speed) {
            return;
        }
    }
}

/// One spark into `pool`; false if it is full. The random word is drawn either way (a seeded run plays the
/// same), but a full pool is not handed a spark worked out only to come back.
#[inline(always)]
fn spawn<const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<Particle, u8, N, P, ID>,
    rng: &mut Rng,
    x: Fx,
    y: Fx,
    speed: Fx,
) -> bool {
    if pool.is_full() {
        rng.next_u32();
        crate::trace::pool_alloc::<Particle, P>(pool.id(), &Err(Particle::default()));
        return false;
    }
    let spawned = pool.alloc(spark(rng, x, y, speed));
    crate::trace::pool_alloc(pool.id(), &spawned);
    spawned.is_ok()
}

/// Frees every bullet of `bullets`, every other one leaving a slow spark in `particles` (if it has room),
/// and returns how many there were: the bomb's and a lost ship's clearing of the screen, which meets every
/// enemy bullet at once. A hot path, ARM code in IWRAM, the pools inline.
#[unsafe(link_section = ".iwram.bullets_to_sparks")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn bullets_to_sparks<const N: usize, P, const ID: u8, const M: usize, Q, const QID: u8>(
    bullets: &mut IndexPool<Bullet, u8, N, P, ID>,
    particles: &mut IndexPool<Particle, u8, M, Q, QID>,
    rng: &mut Rng,
) -> u32 {
    let mut n = 0;
    sweep!(bullets, |b| {
        n += 1;
        if n % 2 == 0 {
            spawn(particles, rng, b.x, b.y, Fx::from_raw(128));
        }
        false
    });
    n
}
