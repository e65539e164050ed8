//! The allocator overlay: SELECT with R shows, over the game, the AI heap's blocks as a strip of pixels, each
//! pool's occupancy, how much of the frame the last frame used, and the stack's high-water mark; the same chord
//! hides it. A chord, so that a stray press of SELECT alone does not cover the ship.
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
//! Off, it costs nothing: BG1 is disabled and [`draw`] returns after reading one flag. On, it stays within a
//! tenth of a frame (`tools/harness/tests/game_overlay.rs` measures it in play): a number or a bar is written
//! only when it changed, a bar's whole tiles are shared (only the tile where its fill ends is drawn), and the
//! stack, a scan of all its unused words, is measured every [`STACK_EVERY`] frames, in a frame of its own
//! without the strip.
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
/// Frames between two measures of the stack.
pub const STACK_EVERY: u32 = 32;
/// Tiles of the strip (8 pixels each) drawn a frame. The strip is the overlay's dearest part (a map read for
/// every block), so a pass over the game's 4 KB heap takes sixteen frames, a quarter of a second.
pub const STRIP_STEP: u32 = 4;

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

/// The bars, one a row: the pools', the frame's, the stack's; and the colour each fills with.
const BARS: usize = MAX_POOLS + 2;
const FRAME_BAR: usize = MAX_POOLS;
const STACK_BAR: usize = MAX_POOLS + 1;
const BAR_FILLS: [u32; BARS] = [colour::GAUGE, colour::GAUGE, colour::GAUGE, colour::FRAME, colour::STACK];

/// Tile numbers in [`OVERLAY_CHARBLOCK`]: the font, the strip's, then two a bar (the tile its fill ends in, and
/// a whole one of its colour) and the empty one all bars share.
const FONT_TILE: u16 = 1;
const STRIP_TILE: u16 = FONT_TILE + FONT_TILES.len() as u16;
const STRIP_TILES: u32 = STRIP_ROWS as u32 * 30;
const BAR_TILE: u16 = STRIP_TILE + STRIP_TILES as u16;
const EMPTY_BAR_TILE: u16 = BAR_TILE + 2 * BARS as u16;
/// A bar is 16 tiles (128 pixels) from column 14.
const BAR_TILES: u16 = 16;
const BAR_PIXELS: u32 = 8 * BAR_TILES as u32;
const BAR_COLUMN: u16 = 14;
const CYCLES_PER_FRAME: u32 = 280_896;

const TILES: VolBlock<Tile4, Safe, Safe, 512> = charblock_4bpp(OVERLAY_CHARBLOCK);
const MAP: VolGrid2d<TextEntry, Safe, Safe, 32, 32> = match TEXT_SCREENBLOCKS.get_frame(OVERLAY_SCREENBLOCK as usize) {
    Some(map) => map,
    None => panic!("no such screenblock"),
};

static VISIBLE: GbaCell<bool> = GbaCell::new(false);
static CHORD_HELD: GbaCell<bool> = GbaCell::new(false);
/// Frames drawn since boot: when the stack is measured.
static DRAWS: GbaCell<u32> = GbaCell::new(0);
/// The strip's next tile to draw, and what the pass over the heap has counted before it: used blocks, free
/// runs, and whether the block before it is free.
static STRIP_AT: GbaCell<u32> = GbaCell::new(0);
static PASS_USED: GbaCell<u32> = GbaCell::new(0);
static PASS_RUNS: GbaCell<u32> = GbaCell::new(0);
static PREV_FREE: GbaCell<bool> = GbaCell::new(false);

/// A value as the overlay last drew it, so that it is drawn again only when it changes.
struct Drawn(GbaCell<u32>);

impl Drawn {
    /// Nothing drawn yet: no value is `u32::MAX` (packed values keep their top bits clear).
    const fn none() -> Drawn {
        Drawn(GbaCell::new(u32::MAX))
    }

    /// Whether `value` differs from what is on screen; it is taken as drawn.
    fn changed(&self, value: u32) -> bool {
        self.replace(value).is_some()
    }

    /// What was on screen, if `value` differs from it (`Some(u32::MAX)` if nothing was); it is taken as drawn.
    fn replace(&self, value: u32) -> Option<u32> {
        let before = self.0.read();
        self.0.write(value);
        (before != value).then_some(before)
    }
}

/// The heap line (used and runs, 16 bits each), each pool's line (length and capacity), the frame's
/// percentage, the stack's bytes, and how far each bar is filled.
static HEAP_LINE: Drawn = Drawn::none();
static POOL_LINES: [Drawn; MAX_POOLS] = [const { Drawn::none() }; MAX_POOLS];
static FRAME_LINE: Drawn = Drawn::none();
static STACK_LINE: Drawn = Drawn::none();
static BARS_FILLED: [Drawn; BARS] = [const { Drawn::none() }; BARS];

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

/// Shows the overlay if hidden, hides it if shown: a register write, as [`init`] loaded it at boot.
pub fn toggle() {
    let show = !VISIBLE.read();
    VISIBLE.write(show);
    DISPCNT.write(DISPCNT.read().with_show_bg1(show));
}

/// Toggles the overlay when SELECT and R come to be held together; call once a frame with the keys of that
/// frame.
pub fn poll(keys: KeyInput) {
    let held = keys.select() && keys.r();
    if held && !CHORD_HELD.read() {
        toggle();
    }
    CHORD_HELD.write(held);
}

/// `row`, a row of 8 pixels (4 bits each, the leftmost lowest), with every transparent pixel the backdrop.
const fn on_backdrop(row: u32) -> u32 {
    // A nibble's low bit after the ORs is set if any of its bits is: clear for transparent (0) pixels.
    let mut any = row | (row >> 2);
    any |= any >> 1;
    let transparent = !any & 0x1111_1111;
    row | (transparent * colour::BACKDROP)
}

/// Loads the overlay, hidden, at boot: its tiles, colours, the map of the strip and the bars, and BG1's
/// control register. At boot rather than on the first toggle: loading, most of it the font, costs more than the
/// overlay's whole budget for the frame it opens in. The VRAM and the palette bank are the overlay's alone
/// (`crate::layout`), so nothing else overwrites them.
pub fn init() {
    let tiles = TILES;
    tiles.index(0).write([0; 8]);
    for (i, glyph) in FONT_TILES.iter().enumerate() {
        // The font's transparent pixels become the backdrop, so text stays readable over the game.
        tiles.index(usize::from(FONT_TILE) + i).write(glyph.map(on_backdrop));
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
    for tile in 0..STRIP_TILES as u16 {
        tiles.index(usize::from(STRIP_TILE + tile)).write(bar_tile(solid(colour::BACKDROP)));
        put(tile % 30, TOP + 1 + tile / 30, STRIP_TILE + tile);
    }
    for (bar, fill) in BAR_FILLS.into_iter().enumerate() {
        tiles.index(usize::from(BAR_TILE) + 2 * bar + 1).write(bar_tile(solid(fill)));
    }
    tiles.index(usize::from(EMPTY_BAR_TILE)).write(bar_tile(solid(colour::GAUGE_EMPTY)));
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

/// A tile of the strip or a bar: `row` six times between a row of backdrop above and below.
const fn bar_tile(row: u32) -> Tile4 {
    let edge = solid(colour::BACKDROP);
    [edge, row, row, row, row, row, row, edge]
}

/// Draws bar `bar` at row `y` filled to `filled` of its 128 pixels, if that changed: whole tiles of its colour,
/// the tile its fill ends in, then empty tiles. Of the map, only the entries from the old end to the new one
/// are written: a gauge moves a few pixels a frame, and every entry costs a VRAM write.
fn bar(bar: usize, y: u16, filled: u32) {
    let Some(before) = BARS_FILLED[bar].replace(filled) else {
        return;
    };
    let (end, whole) = (BAR_TILE + 2 * bar as u16, BAR_TILE + 2 * bar as u16 + 1);
    let ends_in = (filled / 8) as u16;
    // The end tile's `filled % 8` pixels from the left (the low nibbles) are filled.
    let mask = (1u32 << (4 * (filled % 8))) - 1;
    let row = (solid(BAR_FILLS[bar]) & mask) | (solid(colour::GAUGE_EMPTY) & !mask);
    TILES.index(usize::from(end)).write(bar_tile(row));
    let (from, to) = match before {
        u32::MAX => (0, BAR_TILES - 1),
        _ => {
            let was = (before / 8) as u16;
            (was.min(ends_in), was.max(ends_in).min(BAR_TILES - 1))
        }
    };
    for k in from..=to {
        let tile = if k < ends_in {
            whole
        } else if k == ends_in {
            end
        } else {
            EMPTY_BAR_TILE
        };
        put(BAR_COLUMN + k, y, tile);
    }
}

/// Redraws what changed of the overlay: the next stretch of the heap's map and, once a pass is done, its line;
/// the pools' gauges and the last frame's cycle count; or, one frame in [`STACK_EVERY`], the stack's high-water
/// mark alone. Does nothing while hidden.
pub fn draw(heap: &Heap, pools: &[PoolGauge], last_frame_cycles: u32) {
    if !VISIBLE.read() {
        return;
    }
    let draws = DRAWS.read();
    DRAWS.write(draws.wrapping_add(1));
    let pools = &pools[..pools.len().min(MAX_POOLS)];
    // The rows after the strip: a pool's each, then the frame's, then the stack's.
    let (first, frame_row) = (TOP + 1 + STRIP_ROWS, TOP + 1 + STRIP_ROWS + pools.len() as u16);
    // The stack's frame draws nothing else (the other lines wait a frame), and is not the first draw, which
    // writes every line.
    if draws % STACK_EVERY == STACK_EVERY / 2 {
        draw_stack(frame_row + 1);
        return;
    }
    draw_heap(heap);

    for (g, (pool, y)) in pools.iter().zip(first..).enumerate() {
        if POOL_LINES[g].changed((u32::from(pool.len) << 16) | u32::from(pool.capacity)) {
            let mut x = text(0, y, pool.name.as_bytes().get(..8).unwrap_or(pool.name.as_bytes()));
            blank(x, 9, y);
            x = text(x.max(9), y, Number::new(u32::from(pool.len)));
            x = text(x, y, "/");
            x = text(x, y, Number::new(u32::from(pool.capacity)));
            blank(x, BAR_COLUMN, y);
        }
        bar(g, y, u32::from(pool.len) * BAR_PIXELS / u32::from(pool.capacity.max(1)));
    }
    // The percentage can pass 100 (a dropped frame); the bar stops at full.
    let percent = last_frame_cycles.min(u32::MAX / 100) * 100 / CYCLES_PER_FRAME;
    if FRAME_LINE.changed(percent) {
        let x = text(0, frame_row, "FRAME ");
        let x = text(x, frame_row, Number::new(percent));
        let x = text(x, frame_row, "/100");
        blank(x, BAR_COLUMN, frame_row);
    }
    bar(FRAME_BAR, frame_row, last_frame_cycles.min(CYCLES_PER_FRAME) * BAR_PIXELS / CYCLES_PER_FRAME);
}

/// The next stretch of the strip, [`STRIP_STEP`] tiles of it, a pixel a block (or a few: then the most telling
/// of them); and after its last tile the heap's line, from the blocks the pass counted.
fn draw_heap(heap: &Heap) {
    let blocks = (heap.capacity() / 8) as u32;
    // Pixels show `per` blocks each when the heap has more blocks than the strip has pixels.
    let per = blocks.div_ceil(STRIP_PIXELS).max(1);
    // Past the heap's last block the strip stays the backdrop `init` drew.
    let tiles = blocks.div_ceil(8 * per).min(STRIP_TILES);
    let from = STRIP_AT.read();
    let to = (from + STRIP_STEP).min(tiles);
    let (mut used, mut runs) = if from == 0 { (0, 0) } else { (PASS_USED.read(), PASS_RUNS.read()) };
    let mut prev_free = from != 0 && PREV_FREE.read();
    let mut b = from * 8 * per;
    for tile in from..to {
        let mut row = 0;
        for n in 0..8 {
            // The pixel takes the most telling code of its blocks: used end, used, free start, free.
            let mut shown = if b < blocks { colour::FREE } else { colour::BACKDROP };
            let end = (b + per).min(blocks);
            while b < end {
                let here = match heap.block(b) {
                    Some(Block::Free) if prev_free => colour::FREE,
                    Some(Block::Free) => {
                        runs += 1;
                        colour::FREE_START
                    }
                    Some(Block::UsedEnd) => colour::USED_END,
                    _ => colour::USED,
                };
                used += u32::from(here >= colour::USED);
                prev_free = here <= colour::FREE_START;
                shown = shown.max(here);
                b += 1;
            }
            row |= shown << (4 * n);
        }
        TILES.index(usize::from(STRIP_TILE) + tile as usize).write(bar_tile(row));
    }
    if to < tiles {
        STRIP_AT.write(to);
        PASS_USED.write(used);
        PASS_RUNS.write(runs);
        PREV_FREE.write(prev_free);
        return;
    }
    STRIP_AT.write(0);
    if HEAP_LINE.changed((used << 16) | runs) {
        let mut x = text(0, TOP, "HEAP ");
        x = text(x, TOP, Number::new(used * 8));
        x = text(x, TOP, "/");
        x = text(x, TOP, Number::new(blocks * 8));
        x = text(x, TOP, " B ");
        x = text(x, TOP, Number::new(runs));
        x = text(x, TOP, " RUNS");
        blank(x, 30, TOP);
    }
}

/// The stack's line and bar at row `y`, measured now.
fn draw_stack(y: u16) {
    let (used, space) = (stack::high_water() as u32, stack::space() as u32);
    if STACK_LINE.changed(used) {
        let x = text(0, y, "STK ");
        let x = text(x, y, Number::new(used));
        let x = text(x, y, "/");
        let x = text(x, y, Number::new(space));
        blank(x, BAR_COLUMN, y);
    }
    bar(STACK_BAR, y, used.min(space) * BAR_PIXELS / space.max(1));
}
