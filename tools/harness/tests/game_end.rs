//! How a game ends, played from outside on the release ROM: the last ship lost stays lost through the dying's
//! explosions (never drawn, never hit again, so the end comes on time).
mod common;

use common::{Console, Game, SHIP_TILE, objects};
use harness::keys::Script;
use harness::telemetry::{State, Telemetry};

/// From src/game/modes.rs: the dying's frames.
const DYING_FRAMES: u64 = 120;

/// From the title or from play, frames with no key until the last ship is lost: the first frame of the dying.
fn idle_until_dying(g: &mut Game) -> Telemetry {
    let mut t = g.frame(0);
    while t.state != State::Dying {
        assert!(g.emu.frames() < 30_000, "the last ship was never lost: {t:?}");
        t = g.frame(0);
    }
    t
}

#[test]
fn the_last_ship_lost_is_never_drawn_again_and_the_game_ends_on_time() {
    let mut g = Game::release();
    g.script(&Script::parse("30 START").unwrap());
    // Never moving, never firing: the enemies get through.
    let mut t = idle_until_dying(&mut g);
    let died = g.emu.frames();
    assert_eq!(t.lives, 0);
    while t.state == State::Dying {
        let since = g.emu.frames() - died;
        assert!(since <= DYING_FRAMES, "still dying {since} frames after the last ship was lost: it was hit again");
        if let Some(ship) = objects(&g.emu).iter().find(|o| o.tile == SHIP_TILE) {
            panic!(
                "frame {}: the ship is drawn at ({}, {}) {since} frames after the last one was lost, with {} ships",
                g.emu.frames(),
                ship.x,
                ship.y,
                t.lives
            );
        }
        t = g.frame(0);
    }
    assert_eq!(g.emu.frames() - died, DYING_FRAMES, "the dying took {} frames", g.emu.frames() - died);
    assert!(matches!(State::of(t.state), Some(State::GameOver | State::NameEntry)), "{t:?}");
}
