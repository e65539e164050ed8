//! The game. For now a placeholder: one ship that the d-pad moves around the screen.

use crate::fast::fill_words;
use gba::prelude::*;

/// An 8×8 tile, one row a string: '.' is transparent, a digit is a palette index.
const SHIP: [&[u8; 8]; 8] = [
    b"...11...",
    b"...11...",
    b"..1221..",
    b".112211.",
    b"11122111",
    b"11111111",
    b"1.1331.1",
    b"..3..3..",
];
const SHIP_COLOURS: [Color; 3] = [Color::from_rgb(24, 26, 31), Color::from_rgb(6, 20, 31), Color::from_rgb(31, 16, 4)];

/// Packs a row of palette indices into a 4bpp tile row (the leftmost pixel in the low nibble).
const fn tile_row(row: &[u8; 8]) -> u32 {
    let mut word = 0;
    let mut i = 0;
    while i < 8 {
        let index = if row[i] == b'.' { 0 } else { (row[i] - b'0') as u32 };
        word |= index << (4 * i);
        i += 1;
    }
    word
}

/// Sprite table entries are two words: attributes 0 and 1, then attribute 2 and an unused (affine) half.
const OAM_WORDS: usize = 128 * 2;
/// Attribute 0 with the "not displayed" style: a sprite the hardware skips.
const HIDDEN: u32 = 0x0200;
const SCREEN_W: u16 = 240;
const SCREEN_H: u16 = 160;
const SHIP_SIZE: u16 = 8;

pub fn run() -> ! {
    let tile: Tile4 = core::array::from_fn(|i| tile_row(SHIP[i]));
    OBJ_TILES.index(1).write(tile);
    for (i, colour) in SHIP_COLOURS.iter().enumerate() {
        OBJ_PALETTE.index(1 + i).write(*colour);
    }
    BACKDROP_COLOR.write(Color::from_rgb(1, 2, 6));
    DISPCNT.write(DisplayControl::new().with_show_obj(true).with_obj_vram_1d(true));
    DISPSTAT.write(DisplayStatus::new().with_irq_vblank(true));
    IE.write(IrqBits::VBLANK);
    IME.write(true);

    let mut shadow = [0u32; OAM_WORDS];
    let (mut x, mut y) = ((SCREEN_W - SHIP_SIZE) / 2, SCREEN_H - 24);
    loop {
        let keys = KEYINPUT.read();
        if keys.left() && x > 0 {
            x -= 1;
        }
        if keys.right() && x < SCREEN_W - SHIP_SIZE {
            x += 1;
        }
        if keys.up() && y > 0 {
            y -= 1;
        }
        if keys.down() && y < SCREEN_H - SHIP_SIZE {
            y += 1;
        }
        // SAFETY: `shadow` is a word-aligned array of exactly OAM_WORDS words.
        unsafe { fill_words(shadow.as_mut_ptr(), HIDDEN, OAM_WORDS) };
        shadow[0] = u32::from(y) | (u32::from(x) << 16);
        shadow[1] = 1; // tile 1, palette bank 0
        VBlankIntrWait();
        copy_to_oam(&shadow);
    }
}

/// Copies the shadow sprite table to OAM; called right after VBlank starts so no line is drawn half-updated.
fn copy_to_oam(shadow: &[u32; OAM_WORDS]) {
    let oam = 0x0700_0000 as *mut u32;
    for (i, word) in shadow.iter().enumerate() {
        // SAFETY: OAM is 1 KB of 32-bit-writable video memory at 0x07000000; i < 256 stays inside it.
        unsafe { oam.add(i).write_volatile(*word) };
    }
}
