//! The starfield: two text backgrounds of scattered stars scrolling down at different speeds (BG3 far and dim,
//! BG2 near and bright), their tiles, maps and colours where `crate::layout` puts them.

use super::rng::Rng;
use crate::layout::{
    STARS_CHARBLOCK as CHARBLOCK, STARS_FAR_SCREENBLOCK as FAR_MAP, STARS_NEAR_SCREENBLOCK as NEAR_MAP,
    STARS_PALBANK as PALBANK, charblock_4bpp,
};
use gba::prelude::*;

/// Star tiles, one row a string: '.' is transparent, a digit a colour of bank PALBANK. Tile 0 stays empty.
const TILES: [[&[u8; 8]; 8]; 4] = [
    [b"........", b"........", b"........", b"...1....", b"........", b"........", b"........", b"........"],
    [b"........", b"........", b"......2.", b"........", b"........", b"........", b"........", b"........"],
    [b"........", b"...3....", b"..343...", b"...3....", b"........", b"........", b"........", b"........"],
    [b"........", b"........", b"........", b"........", b"....5...", b"....1...", b"........", b"........"],
];
const COLOURS: [Color; 5] = [
    Color::from_rgb(8, 9, 14),
    Color::from_rgb(20, 22, 28),
    Color::from_rgb(12, 16, 31),
    Color::from_rgb(31, 31, 31),
    Color::from_rgb(31, 28, 16),
];

fn tile(rows: &[&[u8; 8]; 8]) -> Tile4 {
    core::array::from_fn(|y| {
        let mut word = 0;
        for (x, &c) in rows[y].iter().enumerate() {
            let index = if c == b'.' { 0 } else { u32::from(c - b'0') };
            word |= index << (4 * x);
        }
        word
    })
}

/// Loads the tiles and colours, scatters the stars (the same sky every boot) and shows both layers.
pub fn init() {
    charblock_4bpp(CHARBLOCK).index(0).write([0; 8]);
    for (i, rows) in TILES.iter().enumerate() {
        charblock_4bpp(CHARBLOCK).index(1 + i).write(tile(rows));
    }
    for (i, colour) in COLOURS.iter().enumerate() {
        BG_PALETTE.index(usize::from(PALBANK) * 16 + 1 + i).write(*colour);
    }
    let mut rng = Rng::new(0x57A2_5EED);
    for (block, stars, tiles) in [(FAR_MAP, 9, [1u16, 1, 4]), (NEAR_MAP, 18, [2u16, 3, 4])] {
        let map = TEXT_SCREENBLOCKS.get_frame(usize::from(block)).expect("the layout's screenblocks exist");
        for y in 0..32 {
            for x in 0..32 {
                let star = rng.below(100) < stars;
                let t = if star { tiles[rng.below(3) as usize] } else { 0 };
                map.index(x, y).write(TextEntry::new().with_tile(t).with_palbank(PALBANK));
            }
        }
    }
    let control = BackgroundControl::new().with_charblock(CHARBLOCK).with_priority(3);
    BG3CNT.write(control.with_screenblock(FAR_MAP));
    BG2CNT.write(control.with_screenblock(NEAR_MAP).with_priority(2));
    DISPCNT.write(DISPCNT.read().with_show_bg2(true).with_show_bg3(true));
}

/// Scrolls the sky for frame `frame`: the near layer a pixel every 2 frames, the far one every 5.
pub fn scroll(frame: u32) {
    BG2VOFS.write((frame / 2).wrapping_neg() as u16);
    BG3VOFS.write((frame / 5).wrapping_neg() as u16);
}
