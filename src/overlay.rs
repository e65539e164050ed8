//! The allocator overlay: SELECT shows, over the game, the AI heap's blocks as a strip of pixels, each pool's
//! occupancy, how much of the frame the last frame used, and the stack's high-water mark.
//!
//! It lives on BG1, where `crate::layout` puts it: its tiles in charblock [`OVERLAY_CHARBLOCK`]
//! (tile 0 transparent, 1..=64 the font on a solid backdrop, then the strip and the bars), its map in screenblock
//! [`OVERLAY_SCREENBLOCK`], its colours in BG palette bank [`OVERLAY_PALBANK`]. Rows [`TOP`]..=18 of the screen
//! (the HUD keeps row 19):
//!
//! ```text
//! HEAP 168/3968 B 3 RUNS            <- used/capacity and free runs, counted from the map
//! [strip: one pixel a block]        <- 3 rows of 240 pixels: free, free-run start, used, used-run end
//! BULLETS  5/16  [bar]              <- one row a pool (at most MAX_POOLS)
//! FRAME 43/100   [bar]              <- last frame's cycles / 280,896, in hundredths
//! STK 812/10208  [bar]              <- the most bytes the stack has held / the bytes it may use
//! ```
//!
//! Off, it costs nothing: BG1 is disabled and [`draw`] returns after reading one flag. On, it measures the stack
//! every frame (a scan of the unused stack).
//!
//! ```ignore
//! // once a frame, in the game loop:
//! overlay::poll(KEYINPUT.read());
//! overlay::draw(&ai_heap, &[PoolGauge::new("BULLETS", bullets.len(), 64)], last_frame_cycles);
//! // a heap behind a lock (the game's): lent only while the overlay shows
//! if overlay::shown() {
//!     let _ = AI_HEAP.with(|heap| overlay::draw(heap, &gauges, last_frame_cycles));
//! }
//! ```

use crate::assets::{FONT_PALETTE, FONT_TILES};
use crate::layout::{OVERLAY_CHARBLOCK, OVERLAY_PALBANK, OVERLAY_SCREENBLOCK, charblock_4bpp};
use crate::text::Number;
use gba::gba_cell::GbaCell;
use gba::mmio::{Safe, VolBlock, VolGrid2d};
use gba::prelude::*;
use stackshot_alloc::heap::{Block, Heap};
use stackshot_platform::fast::fill_words;
use stackshot_platform::stack;
/// The first screen row the overlay draws on.
pub const TOP: u16 = 10;
/// Pools beyond this many are not shown.
pub const MAX_POOLS: usize = 3;
/// Screen rows of the heap strip, and the blocks (pixels) they hold.
pub const STRIP_ROWS: u16 = 3;
pub const STRIP_PIXELS: u32 = STRIP_ROWS as u32 * 240;

/// Colour indices in bank [`OVERLAY_PALBANK`]. 0..=2 are the font's (transparent, outline, face):
/// `assets/font.png` must keep to those three.
pub mod colour {
    pub const BACKDROP: u32 = 3;
    pub const FREE: u32 = 4;
    /// The first block of a free run (its tree node).
    pub const FREE_START: u32 = 5;
    pub const USED: u32 = 6;
    /// The last block of a used run.
    pub const USED_END: u32 = 7;
    pub const GAUGE: u32 = 8;
    pub const GAUGE_EMPTY: u32 = 9;
    pub const FRAME: u32 = 10;
    pub const STACK: u32 = 11;
}
const COLOURS: [(u32, Color); 9] = [
    (colour::BACKDROP, Color::from_rgb(2, 2, 5)),
    (colour::FREE, Color::from_rgb(4, 9, 8)),
    (colour::FREE_START, Color::from_rgb(6, 20, 18)),
    (colour::USED, Color::from_rgb(30, 16, 3)),
    (colour::USED_END, Color::from_rgb(31, 31, 20)),
    (colour::GAUGE, Color::from_rgb(8, 26, 31)),
    (colour::GAUGE_EMPTY, Color::from_rgb(7, 7, 9)),
    (colour::FRAME, Color::from_rgb(28, 8, 26)),
    (colour::STACK, Color::from_rgb(10, 28, 10)),
];

/// Tile numbers in [`OVERLAY_CHARBLOCK`].
const FONT_TILE: u16 = 1;
const STRIP_TILE: u16 = FONT_TILE + FONT_TILES.len() as u16;
const BAR_TILE: u16 = STRIP_TILE + STRIP_ROWS * 30;
/// A bar is 16 tiles (128 pixels) from column 14.
const BAR_TILES: u16 = 16;
const BAR_COLUMN: u16 = 14;
const CYCLES_PER_FRAME: u32 = 280_896;

const TILES: VolBlock<Tile4, Safe, Safe, 512> = charblock_4bpp(OVERLAY_CHARBLOCK);
const MAP: VolGrid2d<TextEntry, Safe, Safe, 32, 32> = match TEXT_SCREENBLOCKS.get_frame(OVERLAY_SCREENBLOCK as usize) {
    Some(map) => map,
    None => panic!("no such screenblock"),
};

static VISIBLE: GbaCell<bool> = GbaCell::new(false);
static SELECT_HELD: GbaCell<bool> = GbaCell::new(false);
static LOADED: GbaCell<bool> = GbaCell::new(false);

/// One pool's occupancy, as the overlay shows it.
#[derive(Clone, Copy, Debug)]
pub struct PoolGauge {
    pub name: &'static str,
    pub len: u16,
    pub capacity: u16,
}

impl PoolGauge {
    pub fn new(name: &'static str, len: usize, capacity: usize) -> PoolGauge {
        PoolGauge { name, len: len as u16, capacity: capacity as u16 }
    }
}

/// Whether the overlay is shown: a caller that must take a lock to lend [`draw`] the heap asks first.
pub fn shown() -> bool {
    VISIBLE.read()
}

/// Shows the overlay if hidden, hides it if shown.
pub fn toggle() {
    let show = !VISIBLE.read();
    if show && !LOADED.read() {
        load();
        LOADED.write(true);
    }
    VISIBLE.write(show);
    DISPCNT.write(DISPCNT.read().with_show_bg1(show));
}

/// Toggles the overlay when SELECT goes down; call once a frame with the keys of that frame.
pub fn poll(keys: KeyInput) {
    let held = keys.select();
    if held && !SELECT_HELD.read() {
        toggle();
    }
    SELECT_HELD.write(held);
}

/// Tiles, colours, an empty map and BG1's control register.
fn load() {
    let tiles = TILES;
    tiles.index(0).write([0; 8]);
    for (i, glyph) in FONT_TILES.iter().enumerate() {
        // The font's transparent pixels become the backdrop, so text stays readable over the game.
        let mut tile = *glyph;
        for row in tile.iter_mut() {
            let mut solid = 0;
            for n in 0..8 {
                let nibble = (*row >> (4 * n)) & 0xF;
                solid |= if nibble == 0 { colour::BACKDROP } else { nibble } << (4 * n);
            }
            *row = solid;
        }
        tiles.index(usize::from(FONT_TILE) + i).write(tile);
    }
    // The font's own colours (outline and face) keep their indices; the overlay's start after them.
    for (i, c) in FONT_PALETTE.iter().enumerate().take(colour::BACKDROP as usize).skip(1) {
        BG_PALETTE.index(usize::from(OVERLAY_PALBANK) * 16 + i).write(*c);
    }
    for (index, c) in COLOURS {
        BG_PALETTE.index(usize::from(OVERLAY_PALBANK) * 16 + index as usize).write(c);
    }
    // SAFETY: the map is one screenblock of VRAM, 2 KB = 512 words, word-aligned and word-writable.
    unsafe { fill_words(MAP.as_usize() as *mut u32, 0, 512) };
    BG1CNT.write(BackgroundControl::new().with_charblock(OVERLAY_CHARBLOCK).with_screenblock(OVERLAY_SCREENBLOCK));
    for row in 0..STRIP_ROWS {
        for column in 0..30 {
            put(column, TOP + 1 + row, STRIP_TILE + row * 30 + column);
        }
    }
}

fn put(x: u16, y: u16, tile: u16) {
    MAP.index(usize::from(x), usize::from(y)).write(TextEntry::new().with_tile(tile).with_palbank(OVERLAY_PALBANK));
}

/// Writes `text` in the font from column `x` of row `y`; returns the column after it.
fn text(x: u16, y: u16, text: impl AsRef<[u8]>) -> u16 {
    let mut column = x;
    for &byte in text.as_ref() {
        let glyph = byte.to_ascii_uppercase().wrapping_sub(b' ');
        let glyph = if usize::from(glyph) < FONT_TILES.len() { glyph } else { b'?' - b' ' };
        put(column, y, FONT_TILE + u16::from(glyph));
        column += 1;
    }
    column
}

/// Blanks (to the backdrop) columns `from..to` of row `y`.
fn blank(from: u16, to: u16, y: u16) {
    for column in from..to {
        put(column, y, FONT_TILE);
    }
}

/// A tile row of 8 pixels of `colour` (4 bits each).
const fn solid(colour: u32) -> u32 {
    colour * 0x1111_1111
}

/// Draws a 128-pixel bar in tiles `first..first + 16` filled to `filled` pixels, at row `y`.
fn bar(first: u16, y: u16, filled: u32, fill: u32) {
    for k in 0..BAR_TILES {
        let mut row = 0;
        for n in 0..8 {
            let px = u32::from(k) * 8 + n;
            row |= if px < filled { fill } else { colour::GAUGE_EMPTY } << (4 * n);
        }
        let tile = [solid(colour::BACKDROP), row, row, row, row, row, row, solid(colour::BACKDROP)];
        TILES.index(usize::from(first + k)).write(tile);
        put(BAR_COLUMN + k, y, first + k);
    }
}

/// Redraws the overlay from the heap's map, the pools' gauges, the last frame's cycle count and the stack's
/// high-water mark. Does nothing while hidden.
pub fn draw(heap: &Heap, pools: &[PoolGauge], last_frame_cycles: u32) {
    if !VISIBLE.read() {
        return;
    }
    let blocks = (heap.capacity() / 8) as u32;
    // Pixels show `per` blocks each when the heap has more blocks than the strip has pixels.
    let per = blocks.div_ceil(STRIP_PIXELS).max(1);
    let (mut used, mut runs, mut prev_free) = (0, 0, false);
    let mut b = 0;
    for tile in 0..u32::from(STRIP_ROWS) * 30 {
        let mut row = 0;
        for n in 0..8 {
            // The pixel takes the most telling code of its blocks: used end, used, free start, free.
            let mut shown = if b < blocks { colour::FREE } else { colour::BACKDROP };
            let mut k = 0;
            while k < per && b < blocks {
                let block = heap.block(b);
                let free = block == Some(Block::Free);
                let here = if !free {
                    used += 1;
                    if block == Some(Block::UsedEnd) { colour::USED_END } else { colour::USED }
                } else if !prev_free {
                    runs += 1;
                    colour::FREE_START
                } else {
                    colour::FREE
                };
                shown = shown.max(here);
                prev_free = free;
                b += 1;
                k += 1;
            }
            row |= shown << (4 * n);
        }
        let pixels = [solid(colour::BACKDROP), row, row, row, row, row, row, solid(colour::BACKDROP)];
        TILES.index(usize::from(STRIP_TILE) + tile as usize).write(pixels);
    }

    let mut x = text(0, TOP, "HEAP ");
    x = text(x, TOP, Number::new(used * 8));
    x = text(x, TOP, "/");
    x = text(x, TOP, Number::new(blocks * 8));
    x = text(x, TOP, " B ");
    x = text(x, TOP, Number::new(runs));
    x = text(x, TOP, " RUNS");
    blank(x, 30, TOP);

    let mut y = TOP + 1 + STRIP_ROWS;
    for (g, pool) in pools.iter().take(MAX_POOLS).enumerate() {
        let mut x = text(0, y, pool.name.as_bytes().get(..8).unwrap_or(pool.name.as_bytes()));
        blank(x, 9, y);
        x = text(x.max(9), y, Number::new(u32::from(pool.len)));
        x = text(x, y, "/");
        x = text(x, y, Number::new(u32::from(pool.capacity)));
        blank(x, BAR_COLUMN, y);
        let filled = u32::from(pool.len) * 128 / u32::from(pool.capacity.max(1));
        bar(BAR_TILE + g as u16 * BAR_TILES, y, filled, colour::GAUGE);
        y += 1;
    }
    // The percentage can pass 100 (a dropped frame); the bar stops at full.
    let percent = last_frame_cycles.min(u32::MAX / 100) * 100 / CYCLES_PER_FRAME;
    let x = text(0, y, "FRAME ");
    let x = text(x, y, Number::new(percent));
    let x = text(x, y, "/100");
    blank(x, BAR_COLUMN, y);
    let filled = last_frame_cycles.min(CYCLES_PER_FRAME) * 128 / CYCLES_PER_FRAME;
    bar(BAR_TILE + MAX_POOLS as u16 * BAR_TILES, y, filled, colour::FRAME);

    let (used, space) = (stack::high_water() as u32, stack::space() as u32);
    let y = y + 1;
    let x = text(0, y, "STK ");
    let x = text(x, y, Number::new(used));
    let x = text(x, y, "/");
    let x = text(x, y, Number::new(space));
    blank(x, BAR_COLUMN, y);
    bar(BAR_TILE + (MAX_POOLS as u16 + 1) * BAR_TILES, y, used.min(space) * 128 / space.max(1), colour::STACK);
}
