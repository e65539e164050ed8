//! The name editor, for a score that made the high-score table: three letters, UP and DOWN change the one under
//! the cursor, LEFT and RIGHT (or A) move it; START, or the time running out, takes the name as it stands.

use super::hud;
use super::input::{Input, key};

/// A name is taken as it stands after this long.
const NAME_FRAMES: u16 = 30 * 60;

pub struct NameEntry {
    letters: [u8; 3],
    cursor: usize,
    /// The place in the table the score made.
    pub place: usize,
    /// Frames left.
    left: u16,
}

impl NameEntry {
    /// Shows the editor for `score`, which made `place`, with "YOU" to start from.
    pub fn open(score: u32, place: usize) -> NameEntry {
        let entry = NameEntry { letters: *b"YOU", cursor: 0, place, left: NAME_FRAMES };
        hud::name_entry(score, place);
        hud::name(entry.letters, entry.cursor);
        entry
    }

    /// One frame of editing; the name, once it is taken.
    pub fn edit(&mut self, input: Input) -> Option<[u8; 3]> {
        self.left = self.left.saturating_sub(1);
        let letter = &mut self.letters[self.cursor];
        if input.pressed(key::UP) {
            *letter = step(*letter, 1);
        }
        if input.pressed(key::DOWN) {
            *letter = step(*letter, hud::NAME_CHARS.len() - 1);
        }
        if input.pressed(key::LEFT) {
            self.cursor = self.cursor.saturating_sub(1);
        }
        if input.pressed(key::RIGHT) || input.pressed(key::A) {
            self.cursor = (self.cursor + 1).min(2);
        }
        if input.pressed(key::START) || self.left == 0 {
            return Some(self.letters);
        }
        hud::name(self.letters, self.cursor);
        None
    }
}

/// The character `by` places after `c` in the name characters, wrapping round.
fn step(c: u8, by: usize) -> u8 {
    let at = hud::NAME_CHARS.iter().position(|&n| n == c).unwrap_or(0);
    hud::NAME_CHARS[(at + by) % hud::NAME_CHARS.len()]
}
