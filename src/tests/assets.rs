//! The art converted by the build script: sizes the hardware can draw, and a VRAM layout without overlaps.

use crate::assets::Sprite;
use crate::assets::{self, ALL, BOSS, CRAB, DART, ENEMY_BULLET, EXPLOSION, MINE, PICKUP, PLAYER_BULLET, SAUCER, SHIP};
use gba::prelude::*;

/// Width and height in pixels, from GBATEK's OBJ size table.
fn pixels(sprite: &Sprite) -> (u16, u16) {
    let square = [8, 16, 32, 64][usize::from(sprite.size)];
    match sprite.shape {
        ObjShape::Square => (square, square),
        ObjShape::Horizontal => ([16, 32, 32, 64][usize::from(sprite.size)], [8, 8, 16, 32][usize::from(sprite.size)]),
        ObjShape::Vertical => ([8, 8, 16, 32][usize::from(sprite.size)], [16, 32, 32, 64][usize::from(sprite.size)]),
    }
}

#[test_case]
fn the_art_has_the_sizes_the_game_draws() {
    assert_eq!(pixels(&SHIP), (16, 16));
    for enemy in [DART, SAUCER, CRAB, MINE] {
        assert_eq!(pixels(&enemy), (16, 16));
    }
    assert_eq!(pixels(&BOSS), (32, 32));
    for small in [PLAYER_BULLET, ENEMY_BULLET, PICKUP, EXPLOSION] {
        assert_eq!(pixels(&small), (8, 8));
    }
    assert_eq!(EXPLOSION.frames, 4);
}

#[test_case]
fn sprites_fill_obj_vram_in_order_without_sharing_tiles_or_palettes() {
    let mut next_tile = 0;
    for (bank, sprite) in ALL.iter().enumerate() {
        let (w, h) = pixels(sprite);
        assert_eq!(sprite.tiles_per_frame, w * h / 64);
        assert_eq!(sprite.tiles.len(), usize::from(sprite.tiles_per_frame * sprite.frames));
        assert_eq!(sprite.first_tile, next_tile, "sprite {bank}");
        assert_eq!(usize::from(sprite.palbank), bank);
        assert_eq!(sprite.palette[0], Color(0), "entry 0 is transparent");
        next_tile += sprite.tiles.len() as u16;
    }
    assert!(next_tile <= 1024, "{next_tile} tiles do not fit OBJ VRAM");
}

#[test_case]
fn load_sprites_puts_every_tile_and_colour_in_place() {
    for i in 0..1024 {
        OBJ_TILES.index(i).write([0xDEAD_BEEF; 8]);
    }
    assets::load_sprites();
    for sprite in ALL {
        for (i, tile) in sprite.tiles.iter().enumerate() {
            assert_eq!(OBJ_TILES.index(usize::from(sprite.first_tile) + i).read(), *tile);
        }
        for (i, colour) in sprite.palette.iter().enumerate() {
            assert_eq!(OBJ_PALETTE.index(usize::from(sprite.palbank) * 16 + i).read(), *colour);
        }
    }
    // Every sprite has some opaque pixel: no empty art slipped through.
    assert!(ALL.iter().all(|s| s.tiles.iter().flatten().any(|&row| row != 0)));
}
