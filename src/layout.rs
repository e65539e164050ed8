//! Where each layer of the game's screen keeps its tiles, maps and colours, declared once here in address order
//! (palette RAM at 0x0500_0000, then VRAM at 0x0600_0000) so that no two layers overlap. The layers' code
//! (`src/text.rs`, `src/overlay.rs`, `src/game/stars.rs`, `src/game/flash.rs`) takes its numbers from here.
//!
//! BG VRAM is four 16 KB charblocks of tiles; the 32 2 KB screenblocks of maps share the same 64 KB, screenblock
//! `n` at `0x0600_0000 + n * 0x800`, so the maps here (28..=31) are in charblock 3, which holds no tiles.
//! OBJ tiles are apart, from 0x0601_0000 (the sprites of `assets/`, one after another, 1D mapping).

use gba::mmio::{CHARBLOCK0_4BPP, CHARBLOCK1_4BPP, CHARBLOCK2_4BPP, CHARBLOCK3_4BPP, Safe, VolBlock};
use gba::video::Tile4;

/// [0x0500_0020] BG palette bank 1: the starfield's colours.
pub const STARS_PALBANK: u16 = 1;
/// [0x0500_0160] BG palette bank 11: the allocator overlay's colours.
pub const OVERLAY_PALBANK: u16 = 11;
/// [0x0500_0180] BG palette banks 12..=15: the text layer's four inks (`text::Ink`), one bank each.
pub const TEXT_INKS_PALBANK: u16 = 12;
/// [0x0500_03E0] OBJ palette bank 15: all white, the flash of an enemy that was hit. The sprites' own banks are
/// 0 up, one each, in `assets/`'s order (the build script refuses more than 15).
pub const WHITE_OBJ_PALBANK: u16 = 15;

/// [0x0600_0000] Charblock 0: the text layer's font (BG0), from tile 0 (the space) on.
pub const TEXT_CHARBLOCK: u16 = 0;
/// [0x0600_4000] Charblock 1: the allocator overlay's tiles (BG1): transparent, its font, the strip, the bars.
pub const OVERLAY_CHARBLOCK: u16 = 1;
/// [0x0600_8000] Charblock 2: the starfield's tiles (BG2 and BG3).
pub const STARS_CHARBLOCK: u16 = 2;
/// [0x0600_E000] Screenblock 28: the near starfield's map (BG2).
pub const STARS_NEAR_SCREENBLOCK: u16 = 28;
/// [0x0600_E800] Screenblock 29: the far starfield's map (BG3).
pub const STARS_FAR_SCREENBLOCK: u16 = 29;
/// [0x0600_F000] Screenblock 30: the allocator overlay's map (BG1).
pub const OVERLAY_SCREENBLOCK: u16 = 30;
/// [0x0600_F800] Screenblock 31: the text layer's map (BG0), the last one.
pub const TEXT_SCREENBLOCK: u16 = 31;

// In address order, and no map in a charblock that holds tiles (eight screenblocks to a charblock).
const _: () = {
    let tiles = [TEXT_CHARBLOCK, OVERLAY_CHARBLOCK, STARS_CHARBLOCK];
    let maps = [STARS_NEAR_SCREENBLOCK, STARS_FAR_SCREENBLOCK, OVERLAY_SCREENBLOCK, TEXT_SCREENBLOCK];
    let mut i = 0;
    while i < maps.len() {
        assert!(i == 0 || maps[i - 1] < maps[i]);
        let mut j = 0;
        while j < tiles.len() {
            assert!(j == 0 || tiles[j - 1] < tiles[j]);
            assert!(maps[i] / 8 != tiles[j]);
            j += 1;
        }
        i += 1;
    }
};

/// The tiles of charblock `block` (0..=3), 4bpp: where a layer writes the tiles its control register names.
pub const fn charblock_4bpp(block: u16) -> VolBlock<Tile4, Safe, Safe, 512> {
    match block {
        0 => CHARBLOCK0_4BPP,
        1 => CHARBLOCK1_4BPP,
        2 => CHARBLOCK2_4BPP,
        3 => CHARBLOCK3_4BPP,
        _ => panic!("there are four charblocks"),
    }
}
