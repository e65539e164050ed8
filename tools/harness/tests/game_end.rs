//! How a game ends, played from outside on the release ROM: the last ship lost stays lost through the dying's
//! explosions (never drawn, never hit again, so the end comes on time), and the game-over screen offers a
//! continue that only START takes: A and B, still under the player's fingers from play, never continue. Each
//! continue costs a credit; with none left the screen goes to the title.
mod common;

use common::{Console, Game, SHIP_TILE, key, objects};
use harness::keys::Script;
use harness::screen;
use harness::telemetry::{State, Telemetry};

/// From src/game/modes.rs and src/game/game_over.rs: the dying's frames, the countdown's first number, the frames
/// a number shows, the frames the prompt ignores every key, and the credits a game starts with.
const DYING_FRAMES: u64 = 120;
const COUNT_FROM: u64 = 9;
const SECOND: u64 = 60;
const GRACE: u64 = 30;
const CREDITS: u32 = 3;

/// From the title or from play, frames with no key until the last ship is lost: the first frame of the dying.
fn idle_until_dying(g: &mut Game) -> Telemetry {
    let mut t = g.frame(0);
    while t.state != State::Dying {
        assert!(g.emu.frames() < 30_000, "the last ship was never lost: {t:?}");
        t = g.frame(0);
    }
    t
}

/// The screen's text rows, and them as one message.
fn rows(g: &Game) -> (Vec<String>, String) {
    let lines = screen::text(&g.emu);
    let dump = screen::dump(&lines);
    (lines, dump)
}

/// The continue prompt's number on screen, if the prompt is up.
fn countdown(g: &Game) -> Option<u64> {
    let (lines, _) = rows(g);
    if !lines.iter().any(|l| l.contains("CONTINUE?")) {
        return None;
    }
    lines[13].trim().parse().ok()
}

/// The credits the prompt shows.
fn credits_shown(g: &Game) -> Option<u32> {
    let (lines, _) = rows(g);
    lines.iter().find_map(|l| l.trim().strip_prefix("CREDITS ")?.trim().parse().ok())
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

#[test]
fn firing_through_the_game_over_never_continues_and_start_does() {
    let mut g = Game::release();
    g.script(&Script::parse("30 START").unwrap());
    let t = idle_until_dying(&mut g);
    let score = t.score;
    // A and B pressed again and again, from the last ship's loss through five seconds of the prompt.
    let (mut prompt_from, mut wrong_numbers) = (None, Vec::new());
    for n in 0..DYING_FRAMES + 5 * SECOND {
        let keys = match n % 4 {
            0 => key("A"),
            2 => key("A") | key("B"),
            _ => 0,
        };
        let t = g.frame(keys);
        assert_ne!(t.state, State::Playing, "frame {}: A or B continued the game (score {})", g.emu.frames(), t.score);
        assert_eq!(t.score, score, "frame {}: the score changed on the game-over screen", g.emu.frames());
        if t.state == State::GameOver {
            let from = *prompt_from.get_or_insert(n);
            let want = COUNT_FROM - (n - from) / SECOND;
            if countdown(&g) != Some(want) {
                wrong_numbers.push(format!("{} frames into the prompt, not {want}:\n{}", n - from, rows(&g).1));
            }
        }
    }
    assert!(prompt_from.is_some(), "no game-over screen:\n{}", rows(&g).1);
    assert!(wrong_numbers.is_empty(), "the countdown shows a second a number from 9; {}", wrong_numbers[0]);
    assert_eq!(credits_shown(&g), Some(CREDITS), "{}", rows(&g).1);

    let t = g.frame(key("START"));
    let t = if t.state == State::Playing { t } else { g.frame(0) };
    assert_eq!(t.state, State::Playing, "START did not continue:\n{}", rows(&g).1);
    assert_eq!((t.score, t.lives), (0, 3), "a continue starts from no score with three ships");
}

#[test]
fn each_continue_takes_a_credit_and_with_none_left_the_game_over_goes_to_the_title() {
    let mut g = Game::release();
    g.script(&Script::parse("30 START").unwrap());
    for credits in (1..=CREDITS).rev() {
        idle_until_dying(&mut g);
        let mut t = g.frame(0);
        while t.state == State::Dying {
            t = g.frame(0);
        }
        assert_eq!(t.state, State::GameOver);
        // START in the prompt's first moments, a press left from play, does nothing.
        let t = g.frame(key("START"));
        assert_eq!(t.state, State::GameOver, "START in the prompt's first frame left it");
        for _ in 0..GRACE {
            g.frame(0);
        }
        assert_eq!(credits_shown(&g), Some(credits), "{}", rows(&g).1);
        g.frame(key("START"));
        let t = g.frame(0);
        assert_eq!(t.state, State::Playing, "START did not continue with {credits} credits:\n{}", rows(&g).1);
    }
    idle_until_dying(&mut g);
    let mut t = g.frame(0);
    while t.state == State::Dying {
        t = g.frame(0);
    }
    assert_eq!(t.state, State::GameOver);
    for _ in 0..GRACE {
        g.frame(0);
    }
    let (lines, dump) = rows(&g);
    assert!(lines[6].contains("GAME OVER") && !dump.contains("CONTINUE") && !dump.contains("CREDITS"), "{dump}");
    // START on it goes to the title, not into play.
    g.frame(key("START"));
    let t = g.frame(0);
    assert_eq!(t.state, State::Title, "{}", rows(&g).1);
}
