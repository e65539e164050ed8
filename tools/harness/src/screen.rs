//! Reads the text on the screen from its pixels, as a player would: each 8×8 cell of the last frame is matched
//! against the glyphs of the font as the ROM loaded it into VRAM. So a line counts as shown only if it really
//! reaches the screen (display on, layer enabled, colours loaded), not merely if its tile numbers are in a map.
//!
//! The glyphs are the text layer's (`src/text.rs`): BG0's charblock, whose tile `n` draws the character
//! `' ' + n`. A cell shows a glyph when the glyph's drawn pixels of one colour index are one colour on screen,
//! those of different indices different colours (but for an ink drawn in the background's own colour, as the
//! overlay draws the shadow), and at most [`STRAYS`] of its transparent pixels have one of those colours: text
//! in any ink, on any layer, over any background (a star can show through a transparent pixel in the colour of
//! the ink). Of the glyphs a cell shows, the one with the fewest strays is read.

use crate::emulator::{Emulator, WIDTH};

/// Text cells across and down the screen.
pub const COLUMNS: usize = 30;
pub const ROWS: usize = 20;
/// The glyphs: `' '` to `'_'` (`assets/font.png`).
const GLYPHS: usize = 64;

/// Transparent pixels in an ink's colour that a cell may have and still show the glyph (a star behind it).
const STRAYS: usize = 2;

/// A tile as 64 colour indices, row by row.
type Glyph = [u8; 64];

/// The screen's text, one string of [`COLUMNS`] characters a row; a cell that shows no glyph reads as a space.
pub fn text(emu: &Emulator) -> Vec<String> {
    let glyphs = font(emu);
    let screen = emu.screen_rgb();
    (0..ROWS)
        .map(|row| {
            (0..COLUMNS)
                .map(|column| {
                    let cell: Vec<[u8; 3]> = (0..64)
                        .map(|i| {
                            let at = 3 * ((row * 8 + i / 8) * WIDTH + column * 8 + i % 8);
                            [screen[at], screen[at + 1], screen[at + 2]]
                        })
                        .collect();
                    // Fewest strays, then most drawn pixels; the space (glyph 0, nothing drawn) when none shows.
                    let best = (1..GLYPHS)
                        .filter_map(|g| strays(&glyphs[g], &cell).map(|s| (s, 64 - drawn(&glyphs[g]), g)))
                        .min();
                    char::from(b' ' + best.map_or(0, |(_, _, g)| g as u8))
                })
                .collect()
        })
        .collect()
}

/// The rows of [`text`] without trailing spaces, joined by newlines: for messages.
pub fn dump(lines: &[String]) -> String {
    lines.iter().map(|l| l.trim_end()).collect::<Vec<_>>().join("\n")
}

/// The font's glyphs from BG0's charblock in VRAM (4 bits a pixel, low nibble first).
fn font(emu: &Emulator) -> Vec<Glyph> {
    let charblock = u32::from(emu.read16(0x0400_0008) >> 2 & 3);
    (0..GLYPHS as u32)
        .map(|g| {
            let bytes = emu.read_bytes(0x0600_0000 + charblock * 0x4000 + g * 32, 32);
            let mut glyph = [0; 64];
            for (i, byte) in bytes.iter().enumerate() {
                glyph[2 * i] = byte & 0xF;
                glyph[2 * i + 1] = byte >> 4;
            }
            glyph
        })
        .collect()
}

fn drawn(glyph: &Glyph) -> usize {
    glyph.iter().filter(|&&i| i != 0).count()
}

/// If `cell` shows `glyph` (see the module docs), its transparent pixels in an ink's colour. Index 0 is
/// transparent. An ink in the colour of the background around it (the overlay draws the font's shadow so) is
/// invisible and not counted; the glyph must have at least one visible ink.
fn strays(glyph: &Glyph, cell: &[[u8; 3]]) -> Option<usize> {
    let mut ink: [Option<[u8; 3]>; 16] = [None; 16];
    for (&index, &pixel) in glyph.iter().zip(cell).filter(|(i, _)| **i != 0) {
        match ink[usize::from(index)] {
            Some(c) if c != pixel => return None,
            Some(_) => {}
            None => ink[usize::from(index)] = Some(pixel),
        }
    }
    let clear: Vec<[u8; 3]> = glyph.iter().zip(cell).filter(|(i, _)| **i == 0).map(|(_, p)| *p).collect();
    let background = clear.iter().max_by_key(|c| clear.iter().filter(|d| d == c).count());
    let inks: Vec<[u8; 3]> = ink.iter().flatten().copied().filter(|c| Some(c) != background).collect();
    let distinct = inks.iter().enumerate().all(|(i, a)| inks[i + 1..].iter().all(|b| a != b));
    let strays = clear.iter().filter(|pixel| inks.contains(pixel)).count();
    (!inks.is_empty() && distinct && strays <= STRAYS).then_some(strays)
}

#[cfg(test)]
mod tests {
    use super::strays;

    fn shows(glyph: &[u8; 64], cell: &[[u8; 3]]) -> bool {
        strays(glyph, cell).is_some()
    }

    #[test]
    fn a_cell_shows_a_glyph_in_any_colours_but_not_another_shape() {
        let mut glyph = [0; 64];
        glyph[9] = 1;
        glyph[10] = 2;
        let (bg, ink, face) = ([0, 0, 0], [9, 9, 9], [200, 10, 10]);
        let mut cell = vec![bg; 64];
        cell[9] = ink;
        cell[10] = face;
        assert!(shows(&glyph, &cell));
        cell[11] = ink;
        cell[12] = ink;
        cell[13] = ink;
        assert!(!shows(&glyph, &cell), "three pixels too many");
        cell[12] = bg;
        cell[13] = bg;
        assert_eq!(strays(&glyph, &cell), Some(1), "a star in the ink's colour behind it");
        cell[11] = bg;
        cell[10] = ink;
        assert!(!shows(&glyph, &cell), "two indices in one colour");
        cell[10] = face;
        cell[40] = [1, 2, 3];
        assert!(shows(&glyph, &cell), "a star behind the text");
        assert!(!shows(&[0; 64], &[bg; 64]), "the space is what nothing else shows");
        cell[9] = bg;
        assert!(shows(&glyph, &cell), "a shadow in the background's colour");
        cell[10] = bg;
        assert!(!shows(&glyph, &cell), "nothing visible");
    }
}
