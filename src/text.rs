//! Text on background 0 with the 8x8 font of `assets/font.png`: title, HUD, pause and game-over screens.
//!
//! BG0 is a 32x32-tile text layer (4bpp, priority 0, so above the other layers) whose characters are the
//! font's tiles in charblock [`TEXT_CHARBLOCK`] and whose map is screenblock [`TEXT_SCREENBLOCK`], its inks BG
//! palette banks [`TEXT_INKS_PALBANK`]..+4 (all in `crate::layout`). The screen shows the map's
//! top-left 30x20 tiles.
//!
//! ```ignore
//! text::init();
//! text::draw(1, 0, "SCORE");
//! text::draw(7, 0, Number::padded(score, 6));
//! text::draw_in(Ink::Gold, 10, 9, "GAME OVER");
//! ```

use crate::assets::{FONT_FACE, FONT_PALETTE, FONT_TILES};
use crate::layout::{TEXT_CHARBLOCK, TEXT_INKS_PALBANK, TEXT_SCREENBLOCK, charblock_4bpp};
use gba::mmio::{Safe, VolBlock, VolGrid2d};
use gba::prelude::*;
use stackshot_platform::fast::fill_words;
/// Rows of the map (the visible screen is 20 of them).
pub const ROWS: u16 = 32;

const TILES: VolBlock<Tile4, Safe, Safe, 512> = charblock_4bpp(TEXT_CHARBLOCK);
const MAP: VolGrid2d<TextEntry, Safe, Safe, 32, 32> = match TEXT_SCREENBLOCKS.get_frame(TEXT_SCREENBLOCK as usize) {
    Some(map) => map,
    None => panic!("no such screenblock"),
};
/// The first character the font has a glyph for, and the last.
const FIRST: u8 = b' ';
const LAST: u8 = FIRST + FONT_TILES.len() as u8 - 1;

/// The colour of the letters' face: each ink is a BG palette bank holding the font's colours with another face.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ink {
    White = TEXT_INKS_PALBANK as isize + 3,
    Gold = TEXT_INKS_PALBANK as isize + 2,
    Red = TEXT_INKS_PALBANK as isize + 1,
    Cyan = TEXT_INKS_PALBANK as isize,
}

impl Ink {
    const ALL: [Ink; 4] = [Ink::White, Ink::Gold, Ink::Red, Ink::Cyan];

    fn face(self) -> Color {
        match self {
            Ink::White => FONT_PALETTE[FONT_FACE],
            Ink::Gold => Color::from_rgb(31, 27, 8),
            Ink::Red => Color::from_rgb(31, 9, 10),
            Ink::Cyan => Color::from_rgb(14, 29, 31),
        }
    }
}

/// Loads the font and the inks, sets up BG0 on an empty map and shows it. Call once, with the display off or
/// during VBlank if a frame is being drawn.
pub fn init() {
    load_font();
    clear();
    BG0CNT.write(BackgroundControl::new().with_charblock(TEXT_CHARBLOCK).with_screenblock(TEXT_SCREENBLOCK));
    DISPCNT.write(DISPCNT.read().with_show_bg0(true));
}

/// Puts the font's tiles in charblock [`TEXT_CHARBLOCK`] and the inks in their palette banks (plain ROM code, which the
/// crash screen relies on).
pub fn load_font() {
    for (i, tile) in FONT_TILES.iter().enumerate() {
        TILES.index(i).write(*tile);
    }
    for ink in Ink::ALL {
        for (i, colour) in FONT_PALETTE.iter().enumerate() {
            let colour = if i == FONT_FACE { ink.face() } else { *colour };
            BG_PALETTE.index(ink as usize * 16 + i).write(colour);
        }
    }
}

/// Blanks the whole map (every entry tile 0, the space).
pub fn clear() {
    // SAFETY: the map is one screenblock of VRAM, 2 KB = 512 words, word-aligned and word-writable.
    unsafe { fill_words(MAP.as_usize() as *mut u32, 0, 512) };
}

/// Blanks row `y` (nothing if `y` is off the map).
pub fn clear_row(y: u16) {
    if let Some(row) = MAP.get_row(usize::from(y)) {
        for entry in row.iter() {
            entry.write(TextEntry::new());
        }
    }
}

/// Draws `text` in white from column `x` of row `y`, see [`draw_in`].
pub fn draw(x: u16, y: u16, text: impl AsRef<[u8]>) -> u16 {
    draw_in(Ink::White, x, y, text)
}

/// Draws `text` in `ink` from column `x` of row `y` and returns the column after it. Lower case is drawn as
/// upper case and characters the font lacks as '?'; what falls off the map's right or bottom edge is dropped.
pub fn draw_in(ink: Ink, x: u16, y: u16, text: impl AsRef<[u8]>) -> u16 {
    let mut column = x;
    for &byte in text.as_ref() {
        if let Some(entry) = MAP.get(usize::from(column), usize::from(y)) {
            entry.write(TextEntry::new().with_tile(u16::from(glyph(byte) - FIRST)).with_palbank(ink as u16));
        }
        column = column.saturating_add(1);
    }
    column
}

/// The character whose glyph shows `byte`.
fn glyph(byte: u8) -> u8 {
    match byte.to_ascii_uppercase() {
        c @ FIRST..=LAST => c,
        _ => b'?',
    }
}

/// A number as decimal digits, without allocating: `draw(x, y, Number::padded(score, 6))`.
#[derive(Clone, Copy, Debug)]
pub struct Number {
    digits: [u8; 10],
    start: u8,
}

impl Number {
    /// `value`'s digits, no leading zeros.
    pub fn new(value: u32) -> Number {
        Number::padded(value, 1)
    }

    /// `value`'s digits, led by zeros to at least `width` (at most 10, the digits of `u32::MAX`).
    pub fn padded(mut value: u32, width: u8) -> Number {
        let mut number = Number { digits: [b'0'; 10], start: 10 };
        while value > 0 {
            number.start -= 1;
            number.digits[usize::from(number.start)] = b'0' + (value % 10) as u8;
            value /= 10;
        }
        number.start = number.start.min(10 - width.clamp(1, 10));
        number
    }
}

impl AsRef<[u8]> for Number {
    fn as_ref(&self) -> &[u8] {
        &self.digits[usize::from(self.start)..]
    }
}
