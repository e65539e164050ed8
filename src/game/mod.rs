//! The game: title, play, pause, game over and name entry, one frame at a time. Modules, each named after
//! what it holds:
//!
//! - the frame: `frame_loop` (the boot and the loop), `state` (what the game keeps: `Game` and its mode),
//!   `modes` (the moves between title, play, pause and game over), `name_entry`, `game_over` (the continue
//!   prompt), `play` (one frame of play), `scoring` (extra ships), `draw` (how each thing looks, the sprite
//!   table), `flash`, `banner`, `hud` (every text screen), `stars` (the scrolling sky), `input`, `telemetry`
//!   (what the host tests read), `scene` (the bullet-hell scene);
//! - the world: `memory` (the pools and the AI heap), `player`, `enemy` (what an enemy is) and `ai` (how each
//!   kind acts), `waves` (the stages and their bosses), `bullets`, `particles`, `pickups`, `collide`;
//! - below them: `fixed` (fixed point and trigonometry), `rng`, `sprites` (the shadow sprite table), `sweep`.

mod ai;
mod banner;
mod bullets;
mod collide;
mod draw;
mod enemy;
mod fixed;
mod flash;
mod frame_loop;
mod game_over;
mod hud;
mod input;
pub mod memory;
mod modes;
mod name_entry;
mod particles;
mod pickups;
mod play;
mod player;
mod rng;
mod scene;
mod scoring;
mod sprites;
mod stars;
mod state;
mod sweep;
pub mod telemetry;
mod waves;

/// The game: boots, then plays frame after frame.
pub fn run() -> ! {
    frame_loop::run(|_, _, input| input)
}

/// The bullet-hell scene instead of a player (`scene.rs`, `fixtures/bullet_hell.rs`): the same boot and frames.
pub fn run_scene() -> ! {
    let mut scene = scene::Scene::default();
    frame_loop::run(|game, mem, input| scene.prepare(game, mem, input))
}
