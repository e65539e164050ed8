//! Everything written with the text layer (BG0): the in-game HUD, banners, and the title, pause, game-over
//! and name-entry screens. The HUD rewrites a field only when its value changed.

use crate::save::HighScores;
use crate::text::{self, Ink, Number};

/// The characters a name can use, in the order UP steps through them.
pub const NAME_CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-!? ";

/// Screen columns and the rows used.
const COLUMNS: u16 = 30;
const TOP: u16 = 0;
const BOTTOM: u16 = 19;
const BANNER: u16 = 9;
const BOSS_BAR: u16 = 1;

fn centred(ink: Ink, y: u16, s: &[u8]) {
    text::draw_in(ink, (COLUMNS - s.len() as u16) / 2, y, s);
}

/// The values on screen, to redraw only what changed; `None` forces a redraw.
#[derive(Default)]
pub struct Hud {
    score: Option<u32>,
    best: Option<u32>,
    lives: Option<u8>,
    bombs: Option<u8>,
    stage: Option<u32>,
    boss: Option<u32>,
}

/// What the HUD shows.
pub struct Shown {
    pub score: u32,
    pub best: u32,
    pub lives: u8,
    pub bombs: u8,
    pub stage: u32,
    /// The boss's health in 28ths (the bar's width), if a boss is up.
    pub boss: Option<u32>,
}

impl Hud {
    /// Clears the screen's text and forgets what was shown.
    pub fn reset(&mut self) {
        text::clear();
        *self = Hud::default();
    }

    pub fn draw(&mut self, s: &Shown) {
        if self.score != Some(s.score) {
            text::draw_in(Ink::Cyan, 0, TOP, "1UP");
            text::draw(4, TOP, Number::padded(s.score, 7));
            self.score = Some(s.score);
        }
        if self.best != Some(s.best) {
            text::draw_in(Ink::Gold, 16, TOP, "HI");
            text::draw(19, TOP, Number::padded(s.best, 7));
            self.best = Some(s.best);
        }
        if self.lives != Some(s.lives) {
            text::draw_in(Ink::Cyan, 0, BOTTOM, "SHIPS");
            text::draw(6, BOTTOM, Number::new(u32::from(s.lives)));
            text::draw(7, BOTTOM, " ");
            self.lives = Some(s.lives);
        }
        if self.bombs != Some(s.bombs) {
            text::draw_in(Ink::Red, 9, BOTTOM, "BOMBS");
            text::draw(15, BOTTOM, Number::new(u32::from(s.bombs)));
            text::draw(16, BOTTOM, " ");
            self.bombs = Some(s.bombs);
        }
        if self.stage != Some(s.stage) {
            text::draw_in(Ink::Gold, 21, BOTTOM, "STAGE");
            text::draw(27, BOTTOM, Number::new(s.stage));
            self.stage = Some(s.stage);
        }
        let boss = s.boss.unwrap_or(u32::MAX);
        if self.boss != Some(boss) {
            text::clear_row(BOSS_BAR);
            if let Some(filled) = s.boss {
                text::draw_in(Ink::Red, 0, BOSS_BAR, "BOSS");
                for i in 0..filled.min(24) as u16 {
                    text::draw_in(Ink::Red, 5 + i, BOSS_BAR, "=");
                }
            }
            self.boss = Some(boss);
        }
    }
}

/// A line across the middle of the screen (`None`: blank it).
pub fn banner(ink: Ink, line: Option<&[u8]>) {
    text::clear_row(BANNER);
    if let Some(line) = line {
        centred(ink, BANNER, line);
    }
}

pub fn title(table: &HighScores) {
    text::clear();
    centred(Ink::Gold, 2, b"S T A C K S H O T");
    centred(Ink::Cyan, 4, b"A GBA SHOOT-EM-UP IN RUST");
    centred(Ink::White, 7, b"HIGH SCORES");
    for (i, entry) in table.entries.iter().enumerate() {
        let y = 9 + i as u16;
        let ink = if i == 0 { Ink::Gold } else { Ink::White };
        text::draw_in(ink, 8, y, Number::new(i as u32 + 1));
        text::draw_in(ink, 10, y, entry.name);
        text::draw_in(ink, 14, y, Number::padded(entry.score, 7));
    }
    centred(Ink::Cyan, 18, b"D-PAD MOVE  A FIRE  B BOMB");
}

/// The title's blinking prompt.
pub fn press_start(visible: bool) {
    text::clear_row(16);
    if visible {
        centred(Ink::White, 16, b"PRESS START");
    }
}

pub fn paused(on: bool) {
    banner(Ink::White, if on { Some(b"PAUSED") } else { None });
}

/// The game-over screen with `score`; with `credits`, the continue prompt (its number drawn by [`countdown`]).
pub fn game_over(score: u32, credits: Option<u8>) {
    text::clear();
    centred(Ink::Red, 6, b"GAME OVER");
    text::draw_in(Ink::Cyan, 9, 9, "SCORE");
    text::draw(15, 9, Number::padded(score, 7));
    match credits {
        Some(credits) => {
            centred(Ink::White, 11, b"CONTINUE?");
            centred(Ink::White, 15, b"START  CONTINUE");
            text::draw_in(Ink::Cyan, 10, 17, "CREDITS");
            text::draw(18, 17, Number::new(u32::from(credits)));
        }
        None => centred(Ink::White, 15, b"START  TITLE"),
    }
}

/// The continue prompt's number: the seconds left to press START.
pub fn countdown(seconds: u16) {
    text::draw_in(Ink::Gold, 14, 13, Number::new(u32::from(seconds)));
}

pub fn name_entry(score: u32, place: usize) {
    text::clear();
    centred(Ink::Gold, 4, b"NEW HIGH SCORE");
    text::draw_in(Ink::Cyan, 9, 7, "SCORE");
    text::draw(15, 7, Number::padded(score, 7));
    text::draw_in(Ink::Cyan, 11, 9, "PLACE");
    text::draw(17, 9, Number::new(place as u32 + 1));
    centred(Ink::White, 15, b"UP DOWN LETTER  A NEXT");
    centred(Ink::White, 17, b"START  DONE");
}

/// The name being entered, with a cursor under the letter being changed.
pub fn name(letters: [u8; 3], cursor: usize) {
    for (i, &c) in letters.iter().enumerate() {
        let x = 13 + 2 * i as u16;
        text::draw_in(Ink::Gold, x, 12, [c]);
        text::draw_in(Ink::Cyan, x, 13, if i == cursor { "^" } else { " " });
    }
}
