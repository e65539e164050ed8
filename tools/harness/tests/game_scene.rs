//! The bullet-hell scene (`src/game/scene.rs`): every pool full, the AI running, and on one frame a bomb and a
//! mass death on top. The frames must fit; their cycles are printed here and tabulated by `make bench`.
mod common;

use common::{Console, Game};
use harness::emulator::CYCLES_PER_FRAME;
use harness::telemetry::{State, Telemetry};

/// `scene::BOMB_AT`: the frame of play with the bomb.
const BOMB_AT: usize = 120;
/// Frames of play run: the bomb's, then as long again for the screen to fill up.
const PLAYED: usize = 2 * BOMB_AT;

fn share(cycles: u32) -> f64 {
    f64::from(cycles) * 100.0 / CYCLES_PER_FRAME as f64
}

#[test]
fn every_pool_full_with_a_bomb_and_a_mass_death_fits_the_frame() {
    let mut g = Game::open(&common::scene_elf(), &common::scene_elf());
    let mut played: Vec<Telemetry> = Vec::new();
    for _ in 0..2 * PLAYED {
        let t = g.frame(0);
        if t.state == State::Playing {
            played.push(t);
        }
        if played.len() == PLAYED {
            break;
        }
    }
    assert_eq!(played.len(), PLAYED, "the scene did not play {PLAYED} frames");
    let before = &played[BOMB_AT - 2];
    let bomb = &played[BOMB_AT - 1];
    // Every pool was full (its peak at capacity) before the bomb, and the heap served the AI.
    let full = [
        ("player bullets", before.player_bullets.peak, 48),
        ("enemy bullets", before.enemy_bullets.peak, 192),
        ("particles", before.particles.peak, 96),
        ("enemies", before.enemies.peak, 32),
        ("sprite slots", before.sprite_slots.peak, 128),
    ];
    for (pool, peak, capacity) in full {
        assert_eq!(peak, capacity, "{pool}: peak {peak} of {capacity}");
    }
    assert!(before.heap_peak > 0, "no enemy took heap scratch");
    // The bomb frame: every enemy destroyed at once, and every enemy bullet turned to sparks.
    assert_eq!(bomb.kills - before.kills, 32, "the bomb's frame destroyed {} enemies", bomb.kills - before.kills);
    assert!(bomb.bombs < before.bombs || before.bombs == 1, "no bomb was dropped");
    let worst = played.iter().map(|t| t.last_cycles).max().unwrap();
    let mut sorted: Vec<u32> = played.iter().map(|t| t.last_cycles).collect();
    sorted.sort_unstable();
    println!(
        "bullet-hell scene: {PLAYED} frames of play, median {} cycles ({:.1}%), bomb and mass death {} ({:.1}%), worst {} ({:.1}%); heap peak {} B, {} fallbacks",
        sorted[PLAYED / 2],
        share(sorted[PLAYED / 2]),
        bomb.last_cycles,
        share(bomb.last_cycles),
        worst,
        share(worst),
        bomb.heap_peak,
        bomb.heap_fallbacks
    );
    assert!(u64::from(worst) < CYCLES_PER_FRAME, "a frame of the scene took {worst} cycles: the game slowed down");
    assert_eq!(bomb.leak_failures, 0);
}
