//! The enemies' AI: how each of the four kinds and the boss moves and fires, with AI scratch of varying size
//! from the 4 KB tree-heap (`enemy.rs`), freed when the enemy dies or leaves the screen (the pool drops it).
//!
//! | kind | scratch (from the heap) | without it (heap full) |
//! | --- | --- | --- |
//! | dart | a path of 3..=6 waypoints; fires aimed shots at some of them | dives straight down, silent |
//! | crab | a formation plan of marching steps, the same for the whole row; fires fans | drifts down, drops shots |
//! | saucer | a list of 3..=8 target points swept across the ship, re-aimed twice | fires straight down |
//! | mine | none: drifts and wobbles; bursts into a ring of bullets when destroyed | — |
//! | boss | an attack script of (pattern, frames) entries; a longer, harder one below half health | rings |

use super::bullets::{fan, fire, ring};
use super::enemy::{AiHeap, Enemy, Kind, Scratch};
use super::fixed::{Fx, isqrt, sin, towards};
use super::memory::{Enemies, EnemyBullets, Memory, Particles, Pickups};
use super::particles::burst;
use super::pickups::Pickup;
use super::rng::Rng;
use crate::sound::{self, Effect};
use stackshot_alloc::iwram::pool_alloc;

/// What enemies act on besides themselves: every other pool, the heap, the ship's position and the difficulty.
pub struct World<'a> {
    pub heap: &'static AiHeap,
    pub fallbacks: &'a mut u32,
    pub bullets: &'a mut EnemyBullets,
    pub particles: &'a mut Particles,
    pub pickups: &'a mut Pickups,
    pub rng: &'a mut Rng,
    /// The ship's centre, which aimed shots aim at.
    pub target: (Fx, Fx),
    /// Whether the ship can be hit now (by a collision with an enemy).
    pub vulnerable: bool,
    /// Difficulty: 0 on the first stage, growing by stage, lap and time.
    pub rank: u32,
    /// Stage 0.. of this lap, for the boss.
    pub stage: u32,
}

/// What the enemies' frame reports back to the game.
#[derive(Default)]
pub struct Report {
    /// Points earned.
    pub score: u32,
    pub boss_destroyed: bool,
    /// An enemy flew into the ship.
    pub rammed: bool,
}

impl<'a> World<'a> {
    /// `mem` lent out for the enemies' frame: their pool, and the world they act on (the rest of `mem`), with
    /// the ship's centre and whether it can be hit now, and the difficulty.
    pub fn lend(
        mem: &'a mut Memory,
        rng: &'a mut Rng,
        target: (Fx, Fx),
        vulnerable: bool,
        rank: u32,
        stage: u32,
    ) -> (&'a mut Enemies, World<'a>) {
        let world = World {
            heap: mem.heap,
            fallbacks: &mut mem.fallbacks,
            bullets: mem.enemy_bullets,
            particles: mem.particles,
            pickups: mem.pickups,
            rng,
            target,
            vulnerable,
            rank,
            stage,
        };
        (mem.enemies, world)
    }

    /// Enemy bullet speed at the current rank.
    fn bullet_speed(&self, base: i32) -> Fx {
        Fx::from_raw(base + 16 * self.rank.min(12) as i32)
    }

    fn aimed(&mut self, x: Fx, y: Fx, speed: Fx) {
        let (vx, vy) = towards(x, y, self.target.0, self.target.1, speed);
        fire(self.bullets, x, y, vx, vy);
    }
}

/// Puts a new enemy in the pool with the scratch its kind asks for. If the pool is full, nothing is spawned
/// (and nothing is kept from the heap).
pub fn spawn(enemies: &mut Enemies, w: &mut World, kind: Kind, x: i32, y: i32, param: i16) {
    let mut e = Enemy::new(kind, x, y, param);
    // Checked first, so that a refused enemy never holds heap memory (a full pool drops what it refuses).
    if enemies.is_full() {
        return;
    }
    let len = match kind {
        Kind::Dart => 2 * (3 + w.rng.below(4) as usize),
        Kind::Crab => 3 * (5 + (w.rank % 4) as usize),
        Kind::Saucer => 2 * (3 + w.rank.min(5) as usize),
        Kind::Mine => 0,
        Kind::Boss => 2 * (4 + 2 * w.stage as usize),
    };
    if len > 0 {
        e.scratch = Scratch::alloc(w.heap, w.fallbacks, len);
    }
    match (kind, &mut e.scratch) {
        (Kind::Dart, Some(path)) => plan_path(path, x, w.rng),
        (Kind::Dart, None) => e.vy = Fx::new(2),
        (Kind::Crab, Some(plan)) => plan_march(plan),
        (Kind::Crab, None) => e.vy = Fx::from_raw(192),
        (Kind::Saucer, _) => e.vx = if x < 120 { Fx::new(1) } else { Fx::new(-1) },
        (Kind::Mine, _) => e.vy = Fx::from_raw(112 + 8 * w.rank.min(8) as i32),
        (Kind::Boss, scratch) => {
            e.hp += 100 * w.stage as i16 + 15 * w.rank.min(12) as i16;
            e.max_hp = e.hp;
            e.vy = Fx::from_raw(128);
            if let Some(script) = scratch {
                plan_attacks(script, w.rng, w.stage, false);
            }
        }
    }
    let kept = pool_alloc(enemies, e);
    crate::trace::pool_alloc(enemies.id(), &kept);
    debug_assert!(kept.is_ok(), "the pool had room: checked above");
}

/// A dart's path: swoops through random points of the upper screen, then off the bottom.
fn plan_path(path: &mut Scratch, x: i32, rng: &mut Rng) {
    let points = path.len() / 2;
    for k in 0..points {
        let (px, py) = if k + 1 == points {
            (16 + rng.below(208) as i32, 200)
        } else if k == 0 {
            ((x + rng.below(80) as i32 - 40).clamp(16, 224), 30 + rng.below(30) as i32)
        } else {
            (16 + rng.below(208) as i32, 40 + rng.below(70) as i32)
        };
        path.set(2 * k, px as i16);
        path.set(2 * k + 1, py as i16);
    }
}

/// A crab row's plan: (vx, vy, frames) steps, raw fixed-point. Down into place, then side to side, a little
/// lower each time; the whole row shares it, so the row keeps its shape.
fn plan_march(plan: &mut Scratch) {
    let steps = plan.len() / 3;
    for k in 0..steps {
        let (vx, vy, frames) = match k {
            0 => (0, 256, 44),
            _ if k % 2 == 1 => (if k % 4 == 1 { 128 } else { -128 }, 16, 64),
            _ => (0, 64, 20),
        };
        plan.set(3 * k, vx);
        plan.set(3 * k + 1, vy);
        plan.set(3 * k + 2, frames);
    }
}

/// Boss patterns.
const FAN: i16 = 0;
const RING: i16 = 1;
const SPIRAL: i16 = 2;
const RAIN: i16 = 3;
const STREAM: i16 = 4;

/// The boss's attack script: (pattern, frames) entries; the second phase's is harder (no pauses, spirals).
fn plan_attacks(script: &mut Scratch, rng: &mut Rng, stage: u32, angry: bool) {
    let entries = script.len() / 2;
    for k in 0..entries {
        let pattern = match (angry, k % 3) {
            (false, 0) => FAN,
            (false, 1) => [RING, STREAM][rng.below(2) as usize],
            (false, _) => [RAIN, FAN, RING][((stage as usize) + k) % 3],
            (true, 0) => SPIRAL,
            (true, 1) => [RING, FAN][rng.below(2) as usize],
            (true, _) => [STREAM, RAIN, SPIRAL][rng.below(3) as usize],
        };
        script.set(2 * k, pattern);
        script.set(2 * k + 1, 90 + rng.below(60) as i16);
    }
}

impl Enemy {
    /// One frame of AI and movement; false when the enemy is gone (destroyed or off screen): the pool's
    /// `retain` then drops it, and its scratch goes back to the heap.
    pub fn step(&mut self, w: &mut World, report: &mut Report) -> bool {
        if self.hp <= 0 {
            self.destroyed(w, report);
            return false;
        }
        self.age = self.age.wrapping_add(1);
        self.flash = self.flash.saturating_sub(1);
        match self.kind {
            Kind::Dart => self.dart(w),
            Kind::Crab => self.crab(w),
            Kind::Saucer => self.saucer(w),
            Kind::Mine => self.mine(w),
            Kind::Boss => self.boss(w),
        }
        self.x += self.vx;
        self.y += self.vy;
        if w.vulnerable && self.touches(w.target) {
            report.rammed = true;
            if self.kind != Kind::Boss {
                self.hp -= 6;
            }
        }
        let (x, y) = (self.x.floor(), self.y.floor());
        (-96..=184).contains(&y) && (-32..=272).contains(&x)
    }

    fn touches(&self, (tx, ty): (Fx, Fx)) -> bool {
        let r = self.kind.reach() - 2;
        let (dx, dy) = ((tx - self.x).floor(), (ty - self.y).floor());
        dx.abs() <= r && dy.abs() <= r
    }

    fn destroyed(&mut self, w: &mut World, report: &mut Report) {
        let big = self.kind == Kind::Boss;
        report.score += self.kind.points() * if big { w.stage + 1 } else { 1 };
        burst(w.particles, w.rng, self.x, self.y, if big { 40 } else { 10 }, Fx::new(if big { 3 } else { 2 }));
        sound::play(Effect::Explosion);
        match self.kind {
            Kind::Mine => ring(w.bullets, (self.x, self.y), w.bullet_speed(256), 8 + w.rank.min(8), self.age.into()),
            Kind::Boss => report.boss_destroyed = true,
            _ => {}
        }
        if self.kind == Kind::Saucer || w.rng.chance(3) {
            let dropped = pool_alloc(w.pickups, Pickup::new(self.x, self.y));
            crate::trace::pool_alloc(w.pickups.id(), &dropped);
        }
    }

    fn dart(&mut self, w: &mut World) {
        let Some(path) = &self.scratch else { return };
        if self.timer > 0 {
            self.timer -= 1;
            return;
        }
        let points = path.len() / 2;
        let k = usize::from(self.step);
        if k >= points {
            return;
        }
        let (px, py) = (Fx::new(path.get(2 * k).into()), Fx::new(path.get(2 * k + 1).into()));
        let speed = Fx::from_raw(320 + 24 * w.rank.min(10) as i32);
        (self.vx, self.vy) = towards(self.x, self.y, px, py, speed);
        let (dx, dy) = ((px - self.x).floor(), (py - self.y).floor());
        self.timer = (isqrt((dx * dx + dy * dy) as u32) * 256 / speed.to_raw() as u32) as u16;
        if k > 0 && k + 1 < points && self.y > Fx::new(8) && w.rng.chance(45 + 5 * w.rank.min(8)) {
            let speed = w.bullet_speed(352);
            w.aimed(self.x, self.y, speed);
        }
        self.step += 1;
    }

    fn crab(&mut self, w: &mut World) {
        let period = 150 - 8 * w.rank.min(10) as u16;
        let fires = self.age % period == (self.param as u16 * 23) % period && self.y > Fx::new(10);
        let Some(plan) = &self.scratch else {
            if fires {
                let speed = w.bullet_speed(288);
                fire(w.bullets, self.x, self.y, Fx::new(0), speed);
            }
            return;
        };
        if self.timer == 0 {
            let k = usize::from(self.step);
            if k < plan.len() / 3 {
                self.vx = Fx::from_raw(plan.get(3 * k).into());
                self.vy = Fx::from_raw(plan.get(3 * k + 1).into());
                self.timer = plan.get(3 * k + 2) as u16;
                self.step += 1;
            } else {
                // The plan is done: the row marches off the bottom.
                (self.vx, self.vy, self.timer) = (Fx::new(0), Fx::from_raw(320), u16::MAX);
            }
        }
        self.timer -= 1;
        if fires {
            let speed = w.bullet_speed(288);
            fan(w.bullets, (self.x, self.y), w.target, speed, 3, 4);
        }
    }

    fn saucer(&mut self, w: &mut World) {
        let hover = Fx::new(self.param.into());
        if self.step == 0 {
            if (self.x - hover).abs() < Fx::new(2) {
                self.vx = Fx::new(0);
                self.step = 1;
                self.aim(w.target);
            }
            return;
        }
        self.timer += 1;
        let Some(targets) = &self.scratch else {
            if self.timer.is_multiple_of(30) {
                let speed = w.bullet_speed(320);
                fire(w.bullets, self.x, self.y, Fx::new(0), speed);
            }
            if self.timer == 240 {
                self.vx = if self.x < Fx::new(120) { Fx::new(-1) } else { Fx::new(1) };
            }
            return;
        };
        let count = targets.len() / 2;
        let shots = usize::from(self.step - 1);
        if shots >= 3 * count {
            return; // leaving
        }
        if self.timer.is_multiple_of(14) {
            let k = shots % count;
            let (tx, ty) = (Fx::new(targets.get(2 * k).into()), Fx::new(targets.get(2 * k + 1).into()));
            let speed = w.bullet_speed(384);
            let (vx, vy) = towards(self.x, self.y, tx, ty, speed);
            fire(w.bullets, self.x, self.y, vx, vy);
            self.step += 1;
            if shots + 1 == 3 * count {
                self.vx = if self.x < Fx::new(120) { Fx::from_raw(-384) } else { Fx::from_raw(384) };
            } else if (shots + 1) % count == 0 {
                self.aim(w.target);
            }
        }
    }

    /// Fills the saucer's target list: points in a line across the ship, swept one shot at a time.
    fn aim(&mut self, (tx, ty): (Fx, Fx)) {
        if let Some(targets) = &mut self.scratch {
            let count = targets.len() / 2;
            for k in 0..count {
                let offset = (k as i32 - count as i32 / 2) * 14;
                targets.set(2 * k, (tx.floor() + offset) as i16);
                targets.set(2 * k + 1, ty.floor() as i16);
            }
        }
    }

    fn mine(&mut self, _w: &mut World) {
        self.vx = sin(u32::from(self.age) / 3 + self.param as u32) * Fx::from_raw(96);
    }

    fn boss(&mut self, w: &mut World) {
        if self.y < Fx::new(38) {
            return; // still entering
        }
        self.vy = Fx::new(0);
        self.x = Fx::new(120) + sin(u32::from(self.age) / 5) * 64;
        self.timer += 1;
        if self.param == 0 && self.hp < self.max_hp / 2 {
            // Phase two: a longer, harder script. If the heap cannot hold it, the boss keeps only rings.
            self.param = 1;
            // The old script goes back first: an assignment would allocate the new one before dropping it.
            self.scratch = None;
            self.scratch = Scratch::alloc(w.heap, w.fallbacks, 2 * (6 + 2 * w.stage as usize));
            if let Some(script) = &mut self.scratch {
                plan_attacks(script, w.rng, w.stage, true);
            }
            self.step = 0;
            self.timer = 0;
            ring(w.bullets, (self.x, self.y), w.bullet_speed(320), 24, 0);
        }
        let at = (self.x, self.y + Fx::new(8));
        let t = self.timer;
        let Some(script) = &self.scratch else {
            if t.is_multiple_of(45) {
                ring(w.bullets, at, w.bullet_speed(288), 12, u32::from(t / 45));
            }
            return;
        };
        let entries = script.len() / 2;
        let k = usize::from(self.step) % entries;
        let (pattern, frames) = (script.get(2 * k), script.get(2 * k + 1) as u16);
        if t >= frames {
            self.step = self.step.wrapping_add(1);
            self.timer = 0;
            return;
        }
        let a = u32::from(self.age);
        match pattern {
            FAN if t.is_multiple_of(36) => {
                fan(w.bullets, at, w.target, w.bullet_speed(352), 5 + self.param as u32 * 2, 4)
            }
            RING if t.is_multiple_of(42) => ring(w.bullets, at, w.bullet_speed(288), 14 + 2 * w.stage, a),
            SPIRAL if t.is_multiple_of(5) => {
                let speed = w.bullet_speed(320);
                ring(w.bullets, at, speed, 3, a * 3 / 2);
            }
            RAIN if t.is_multiple_of(7) => {
                let x = self.x + Fx::new(w.rng.below(48) as i32 - 24);
                let vx = Fx::from_raw(w.rng.below(128) as i32 - 64);
                fire(w.bullets, x, at.1, vx, w.bullet_speed(288));
            }
            STREAM if t.is_multiple_of(10) => {
                let speed = w.bullet_speed(480);
                w.aimed(at.0, at.1, speed);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;
    use super::*;
    use crate::game::memory::{Memory, heap_left_clean};
    use stackshot_alloc::heap::Stats;

    /// With the heap full, every kind still spawns and flies on its simpler behaviour, the refusals are
    /// counted, and nothing touches the heap: the game goes on. With the heap back, enemies take scratch, and
    /// clearing the memory (a game over) gives it all back.
    #[test_case]
    fn enemies_fall_back_when_the_heap_is_full_and_clearing_gives_scratch_back() {
        let mut mem = Memory::take();
        let blocks = mem.heap.with(|h| h.capacity() / 8).unwrap();
        let filler = mem.heap.boxed_slice(blocks, 0u64).expect("one block fills the empty heap");
        let full = mem.heap.with(|h| h.stats()).unwrap();
        assert_eq!(full.free_bytes, 0);
        let mut rng = Rng::new(7);
        let (enemies, mut w) = World::lend(&mut mem, &mut rng, (Fx::new(120), Fx::new(140)), false, 0, 0);
        let kinds = [Kind::Dart, Kind::Crab, Kind::Saucer, Kind::Mine, Kind::Boss];
        for (i, kind) in kinds.into_iter().enumerate() {
            spawn(enemies, &mut w, kind, 30 + 45 * i as i32, 30, i as i16);
        }
        assert_eq!(enemies.len(), kinds.len(), "an enemy was not spawned");
        assert_eq!(*w.fallbacks, 4, "every kind but the mine asks the heap for scratch");
        let refused = w.heap.with(|h| h.stats()).unwrap();
        assert_eq!(refused.failed_requests, full.failed_requests + 4, "the heap did not see the four requests");
        let mut moved = 0;
        for _ in 0..120 {
            enemies.retain(|e| {
                let (x, y) = (e.x, e.y);
                let alive = e.step(&mut w, &mut Report::default());
                if (e.x, e.y) != (x, y) {
                    moved += 1;
                }
                alive
            });
        }
        assert!(moved > 120, "the enemies barely moved on their fallback behaviour ({moved} moves)");
        assert_eq!(w.heap.with(|h| h.stats()).unwrap(), refused, "an enemy without scratch changed the heap");
        stackshot_platform::info!("heap full: 5 enemies, {} refusals, {moved} moves in 120 frames", *w.fallbacks);

        drop(filler);
        for (i, kind) in kinds.into_iter().enumerate() {
            spawn(enemies, &mut w, kind, 30 + 45 * i as i32, 60, i as i16);
        }
        let used = w.heap.with(|h| h.stats().used_bytes).unwrap();
        assert!(used > 0, "the new enemies took no scratch");
        assert_eq!(*w.fallbacks, 4, "a request was refused with the heap free");
        mem.clear();
        assert!(mem.is_empty(), "clearing left something: {:?}", mem.heap.with(|h| h.stats()));
        stackshot_platform::info!("10 enemies held {used} bytes of scratch; cleared, the heap is one free run");

        // A free the heap refused fails the leak check too, though nothing is left in use: no owner's drop
        // could have said so.
        let clean = mem.heap.with(|h| h.stats()).unwrap();
        assert!(heap_left_clean(&clean));
        assert!(!heap_left_clean(&Stats { bad_frees: 1, ..clean }), "the leak check missed a refused free");
    }
}
