//! The game-over screen. With a credit left it is the continue prompt: a countdown from 9, a second a number,
//! that START stops to continue. A and B do nothing there: they are fire and bomb, still under the player's
//! fingers as the game ends, so neither may take a continue (nor waste one). With no credit left it shows the
//! score for a while. Either screen goes to the title when its time is up, and the last one on START too.
//! For half a second after it opens no key counts, so a press meant for play or the name entry does nothing.

use super::hud;
use super::input::{Input, key};

/// Continues a game starts with. Three: with three ships each, a new player sees all three stages and their
/// bosses, and the table still means something (a credit's score is its own: `modes.rs`).
pub const CREDITS: u8 = 3;
/// The prompt's first number.
const COUNT_FROM: u16 = 9;
const SECOND: u16 = 60;
/// Frames after opening during which no key counts.
const GRACE: u16 = SECOND / 2;
/// Frames the last game-over screen shows without a key.
const LAST_FRAMES: u16 = 5 * SECOND;

pub struct GameOver {
    /// Frames left; on the prompt, the number shown is the seconds left after this one.
    left: u16,
    /// Frames since it opened.
    age: u16,
    /// Whether START continues: a credit is left.
    prompt: bool,
}

/// What the screen asks for at the end of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Wait,
    Continue,
    Title,
}

impl GameOver {
    /// Shows the game-over screen for `score`: the continue prompt if `credits` are left.
    pub fn open(score: u32, credits: u8) -> GameOver {
        let prompt = credits > 0;
        hud::game_over(score, prompt.then_some(credits));
        let left = if prompt { (COUNT_FROM + 1) * SECOND } else { LAST_FRAMES };
        let screen = GameOver { left, age: 0, prompt };
        screen.show();
        screen
    }

    /// One frame of the screen.
    pub fn step(&mut self, input: Input) -> Choice {
        self.age = self.age.saturating_add(1);
        self.left -= 1;
        if self.age > GRACE && input.pressed(key::START) {
            return if self.prompt { Choice::Continue } else { Choice::Title };
        }
        if self.left == 0 {
            return Choice::Title;
        }
        self.show();
        Choice::Wait
    }

    fn show(&self) {
        if self.prompt {
            hud::countdown((self.left - 1) / SECOND);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{COUNT_FROM, Choice, GRACE, GameOver, LAST_FRAMES, SECOND};
    use crate::game::input::{Input, key};

    fn pressing(keys: u16) -> Input {
        Input::of(keys, keys)
    }

    /// A and B pressed every frame never continue: the prompt runs its ten seconds out to the title.
    #[test_case]
    fn only_start_continues() {
        let mut prompt = GameOver::open(1234, 2);
        for frame in 1..(COUNT_FROM + 1) * SECOND {
            assert_eq!(prompt.step(pressing(key::A | key::B)), Choice::Wait, "frame {frame}");
        }
        assert_eq!(prompt.step(pressing(key::A)), Choice::Title);

        let mut prompt = GameOver::open(1234, 1);
        for _ in 0..GRACE {
            assert_eq!(prompt.step(pressing(key::START)), Choice::Wait, "START in the first half second");
        }
        assert_eq!(prompt.step(pressing(key::START)), Choice::Continue);
    }

    /// With no credit, START (after the grace) or the time running out goes to the title.
    #[test_case]
    fn the_last_game_over_goes_to_the_title() {
        let mut last = GameOver::open(1234, 0);
        for _ in 1..LAST_FRAMES {
            assert_eq!(last.step(Input::default()), Choice::Wait);
        }
        assert_eq!(last.step(Input::default()), Choice::Title);
        let mut last = GameOver::open(1234, 0);
        for _ in 0..=GRACE {
            last.step(Input::default());
        }
        assert_eq!(last.step(pressing(key::START)), Choice::Title);
    }
}
