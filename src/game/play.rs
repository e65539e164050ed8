//! One frame of play: the ship, the bullets, the enemies and the stage, the collisions, the bomb, a ship lost,
//! the pick-ups collected, then the sprite table, the banner and the HUD.

use super::ai::{Report, World};
use super::bullets::move_bullets;
use super::collide::{hit_enemies, hit_player};
use super::enemy::Kind;
use super::fixed::Fx;
use super::hud;
use super::input::Input;
use super::memory::Memory;
use super::particles::{bullets_to_sparks, burst, move_particles};
use super::player;
use super::state::{Game, Mode};
use crate::sound::{self, Effect};
use stackshot_alloc::iwram::pool_get_mut;

impl Game {
    /// One frame of play: the ship, the bullets, the enemies, the stage, the collisions, and the drawing.
    /// Returns the enemies destroyed.
    pub fn play(&mut self, input: Input, mem: &mut Memory) -> u32 {
        mem.shadow.begin();
        if self.player.step(input, mem.player_bullets) {
            self.bomb(mem);
        }
        move_bullets(mem.player_bullets);
        move_bullets(mem.enemy_bullets);
        move_particles(mem.particles);

        // Player bullets against the enemies as they stand.
        self.targets.list(mem.enemies);
        if hit_enemies(mem.player_bullets, &mut self.targets) > 0 {
            sound::play(Effect::Hit);
            for (handle, hits) in self.targets.hit() {
                if let Ok(enemy) = pool_get_mut(mem.enemies, handle) {
                    enemy.hp -= i16::from(hits);
                    enemy.flash = 3;
                }
            }
        }

        let target = (self.player.x, self.player.y);
        let (rank, stage) = (self.stages.rank(), self.stages.stage);
        let (enemies, mut world) = World::lend(mem, &mut self.rng, target, self.player.vulnerable(), rank, stage);
        let mut report = Report::default();
        let mut kills = 0;
        enemies.retain(|enemy| {
            let kept = enemy.step(&mut world, &mut report);
            if !kept && enemy.hp <= 0 {
                kills += 1;
            }
            kept
        });
        if matches!(self.mode, Mode::Playing) {
            self.stages.step(enemies, &mut world, report.boss_destroyed);
        }
        self.add_score(report.score);
        if report.boss_destroyed {
            self.cancel_bullets(mem, true);
        }

        if self.player.vulnerable()
            && (report.rammed
                || hit_player(mem.enemy_bullets, self.player.x.floor(), self.player.y.floor(), player::REACH))
        {
            self.ship_lost(mem);
        }
        self.collect_pickups(mem);
        self.draw(mem);
        self.banner.update(&self.stages);
        let boss = mem
            .enemies
            .iter()
            .find(|(_, e)| e.kind == Kind::Boss)
            .map(|(_, e)| (e.hp.max(0) as u32 * 24).div_ceil(e.max_hp.max(1) as u32));
        let best = self.table.entries[0].score.max(self.score);
        self.hud.draw(&hud::Shown {
            score: self.score,
            best,
            lives: self.player.lives,
            bombs: self.player.bombs,
            stage: self.stages.number(),
            boss,
        });
        kills
    }

    /// B: every enemy bullet becomes sparks (10 points each), every enemy takes damage, the screen flashes.
    fn bomb(&mut self, mem: &mut Memory) {
        sound::play(Effect::Bomb);
        self.flash.start();
        self.player.shield(60);
        self.cancel_bullets(mem, true);
        for (_, enemy) in mem.enemies.iter_mut() {
            enemy.hp -= if enemy.kind == Kind::Boss { 24 } else { 10 };
            enemy.flash = 6;
        }
    }

    /// Removes every enemy bullet, each leaving a spark (every other one, to spare the particle pool); with
    /// `pay`, 10 points a bullet.
    fn cancel_bullets(&mut self, mem: &mut Memory, pay: bool) {
        let n = bullets_to_sparks(mem.enemy_bullets, mem.particles, &mut self.rng);
        if pay {
            self.add_score(10 * n);
        }
    }

    fn ship_lost(&mut self, mem: &mut Memory) {
        sound::play(Effect::Explosion);
        burst(mem.particles, &mut self.rng, self.player.x, self.player.y, 24, Fx::new(3));
        self.player.hit();
        self.cancel_bullets(mem, false);
        if self.player.lives == 0 {
            self.enter_dying();
        }
    }

    fn collect_pickups(&mut self, mem: &mut Memory) {
        let (px, py) = (self.player.x, self.player.y);
        let flying = self.player.flying();
        let mut collected = 0;
        mem.pickups.retain(|p| {
            if !p.step() {
                return false;
            }
            let near = (p.x - px).abs() < Fx::new(10) && (p.y - py).abs() < Fx::new(10);
            if flying && near {
                collected += 1;
                return false;
            }
            true
        });
        for _ in 0..collected {
            sound::play(Effect::PickUp);
            if !self.player.power_up() {
                self.add_score(2000);
            }
        }
    }
}
