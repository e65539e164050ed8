//! The bullet-hell scene (`fixtures/bullet_hell.rs`): the game at its heaviest, on purpose. Every pool is kept
//! full (48 player bullets, 192 enemy bullets, 96 particles, 32 enemies with their AI scratch from the heap,
//! and so all 128 sprite slots), the AI runs, and at frame [`BOMB_AT`] of play the worst moment comes on top:
//! a bomb and a mass death in the same frame (every enemy is left one hit from death, so the bomb destroys all
//! 32: explosions, mines' death rings, drops, the heap frees). The ship cannot be hit. The frames are the game's
//! own, counted by its stopwatch into the telemetry the benchmark report and `tools/harness/tests/game_scene.rs` read.

use super::ai::{World, spawn};
use super::bullets::fire;
use super::enemy::Kind;
use super::fixed::Fx;
use super::input::{Input, key};
use super::memory::Memory;
use super::particles::burst;
use super::state::{Game, Mode};

/// The frame of play (counted from the first) with the bomb and the mass death.
pub const BOMB_AT: u32 = 120;

/// The scene's state: frames of play so far.
#[derive(Default)]
pub struct Scene {
    played: u32,
}

impl Scene {
    /// Readies this frame: starts a game from the title, tops every pool up and keeps the ship safe, and on
    /// [`BOMB_AT`] leaves every enemy one hit from death and presses B. Returns the input the frame gets.
    pub fn prepare(&mut self, game: &mut Game, mem: &mut Memory, input: Input) -> Input {
        match game.mode {
            Mode::Title => return Input::of(0, key::START),
            Mode::Playing => {}
            _ => return input,
        }
        self.played += 1;
        game.player.shield(2);
        game.player.bombs = game.player.bombs.max(1);
        fill(game, mem);
        if self.played == BOMB_AT {
            for (_, enemy) in mem.enemies.iter_mut() {
                enemy.hp = 1;
            }
            return Input::of(key::A | key::B, key::B);
        }
        Input::of(key::A, 0)
    }
}

/// Tops every pool up: enemies of each kind across the top half of the screen, enemy bullets drifting down
/// from them, the ship's bullets, sparks.
fn fill(game: &mut Game, mem: &mut Memory) {
    let (px, py) = (game.player.x, game.player.y);
    let (rank, stage) = (game.stages.rank(), game.stages.stage);
    let (enemies, mut world) = World::lend(mem, &mut game.rng, (px, py), false, rank, stage);
    const KINDS: [Kind; 4] = [Kind::Dart, Kind::Crab, Kind::Saucer, Kind::Mine];
    let mut k = 0;
    while !enemies.is_full() {
        let x = 16 + world.rng.below(208) as i32;
        let y = 8 + world.rng.below(72) as i32;
        spawn(enemies, &mut world, KINDS[k % KINDS.len()], x, y, 0);
        k += 1;
    }
    while !world.bullets.is_full() {
        let (x, y) = (Fx::new(world.rng.below(240) as i32), Fx::new(world.rng.below(80) as i32));
        let vx = Fx::from_raw(world.rng.below(129) as i32 - 64);
        fire(world.bullets, x, y, vx, Fx::from_raw(96 + world.rng.below(96) as i32));
    }
    while !world.particles.is_full() {
        let (x, y) = (Fx::new(world.rng.below(240) as i32), Fx::new(world.rng.below(160) as i32));
        burst(world.particles, world.rng, x, y, 8, Fx::new(2));
    }
    // The world done with, `mem` and the generator are back: the ship's bullets.
    while !mem.player_bullets.is_full() {
        let y = py - Fx::new(game.rng.below(140) as i32);
        fire(mem.player_bullets, px + Fx::new(game.rng.below(33) as i32 - 16), y, Fx::new(0), Fx::new(-6));
    }
}
