//! The game's art, converted from `assets/*.png` by the build script: sprites for OBJ VRAM and the font.
//!
//! Every sprite has its own palette bank and its own tiles; [`load_sprites`] puts them all in place once, in the
//! 1D OBJ mapping (`DISPCNT` `obj_vram_1d`); the game's sprite table (`game::sprites`) draws them from there.

use gba::prelude::*;

/// One sprite's art (all its frames) and where [`load_sprites`] puts it.
#[derive(Clone, Copy, Debug)]
pub struct Sprite {
    /// Every frame's tiles, frame after frame, each frame's tiles row by row.
    pub tiles: &'static [Tile4],
    /// Entry 0 is transparent.
    pub palette: &'static [Color; 16],
    /// Index in OBJ VRAM of the first tile of frame 0.
    pub first_tile: u16,
    pub tiles_per_frame: u16,
    pub frames: u16,
    /// The OBJ palette bank that holds `palette`.
    pub palbank: u16,
    pub shape: ObjShape,
    /// The OBJ size (0..3), which with `shape` gives the width and height (GBATEK's OBJ size table).
    pub size: u16,
}

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// Copies every sprite's tiles to OBJ VRAM and its palette to its OBJ palette bank.
pub fn load_sprites() {
    for sprite in ALL {
        for (i, tile) in sprite.tiles.iter().enumerate() {
            OBJ_TILES.index(usize::from(sprite.first_tile) + i).write(*tile);
        }
        for (i, colour) in sprite.palette.iter().enumerate() {
            OBJ_PALETTE.index(usize::from(sprite.palbank) * 16 + i).write(*colour);
        }
    }
}
