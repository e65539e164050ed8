//! Text on BG0: the font in VRAM, characters in the map, numbers without allocation.

use crate::assets::{FONT_FACE, FONT_PALETTE, FONT_TILES};
use crate::layout::{TEXT_CHARBLOCK, TEXT_SCREENBLOCK};
use crate::text::{self, Ink, Number};
use gba::prelude::*;

fn entry(x: usize, y: usize) -> TextEntry {
    TEXT_SCREENBLOCKS.get_frame(usize::from(TEXT_SCREENBLOCK)).unwrap().index(x, y).read()
}

/// The character an entry shows (its tile is the character's code minus 32) and its ink's palette bank.
fn shown(x: usize, y: usize) -> (u8, u16) {
    let e = entry(x, y);
    (e.tile() as u8 + b' ', e.palbank())
}

#[test_case]
fn init_loads_the_font_and_inks_and_shows_bg0() {
    text::init();
    for (i, tile) in FONT_TILES.iter().enumerate() {
        assert_eq!(CHARBLOCK0_4BPP.index(i).read(), *tile, "glyph {i}");
    }
    for (ink, face) in [(Ink::White, FONT_PALETTE[FONT_FACE]), (Ink::Gold, Color::from_rgb(31, 27, 8))] {
        for (i, &font_colour) in FONT_PALETTE.iter().enumerate().skip(1) {
            let expected = if i == FONT_FACE { face } else { font_colour };
            assert_eq!(BG_PALETTE.index(ink as usize * 16 + i).read(), expected, "{ink:?} entry {i}");
        }
    }
    let control = BG0CNT.read();
    assert_eq!((control.charblock(), control.screenblock(), control.bpp8()), (TEXT_CHARBLOCK, TEXT_SCREENBLOCK, false));
    assert!(DISPCNT.read().show_bg0());
    assert!((0..32).all(|y| (0..32).all(|x| entry(x, y) == TextEntry::new())), "the map starts blank");
}

#[test_case]
fn draw_puts_each_character_in_its_cell_and_returns_the_next_column() {
    text::init();
    assert_eq!(text::draw(2, 3, "SCORE 0:9!"), 12);
    for (i, &c) in b"SCORE 0:9!".iter().enumerate() {
        assert_eq!(shown(2 + i, 3), (c, Ink::White as u16));
    }
    assert_eq!(shown(1, 3), (b' ', 0), "nothing before");
    assert_eq!(shown(12, 3), (b' ', 0), "nothing after");
    text::draw_in(Ink::Red, 0, 19, "Ab~");
    assert_eq!([shown(0, 19), shown(1, 19), shown(2, 19)], [(b'A', 13), (b'B', 13), (b'?', 13)]);
}

#[test_case]
fn text_past_the_map_edge_is_dropped_not_wrapped() {
    text::init();
    assert_eq!(text::draw(30, 5, "WXYZ"), 34);
    assert_eq!([shown(30, 5).0, shown(31, 5).0], [b'W', b'X']);
    assert!((0..32).all(|x| shown(x, 6).0 == b' '), "the next row is untouched");
    assert!((0..30).all(|x| shown(x, 5).0 == b' '), "the row's start is untouched");
    text::draw(0, 32, "OFF THE MAP");
    assert!((0..32).all(|x| shown(x, 0).0 == b' '), "row 32 does not wrap to row 0");
}

#[test_case]
fn clear_and_clear_row_blank_the_map() {
    text::init();
    text::draw(0, 0, "LIVES 3");
    text::draw(0, 1, "BOMBS 2");
    text::clear_row(0);
    assert!((0..32).all(|x| entry(x, 0) == TextEntry::new()));
    assert_eq!(shown(0, 1).0, b'B');
    text::clear();
    assert!((0..32).all(|y| (0..32).all(|x| entry(x, y) == TextEntry::new())));
}

#[test_case]
fn numbers_format_without_allocating() {
    assert_eq!(Number::new(0).as_ref(), b"0");
    assert_eq!(Number::new(7).as_ref(), b"7");
    assert_eq!(Number::new(1200).as_ref(), b"1200");
    assert_eq!(Number::padded(1200, 6).as_ref(), b"001200");
    assert_eq!(Number::padded(0, 3).as_ref(), b"000");
    assert_eq!(Number::padded(123_456, 3).as_ref(), b"123456", "never cut");
    assert_eq!(Number::padded(42, 200).as_ref(), b"0000000042", "at most 10 wide");
    assert_eq!(Number::new(u32::MAX).as_ref(), b"4294967295");
}

#[test_case]
fn a_hud_line_draws_in_a_fraction_of_a_frame() {
    text::init();
    let watch = stackshot_platform::cycles::Stopwatch::start();
    let x = text::draw(0, 0, "SCORE ");
    text::draw(x, 0, Number::padded(1_234_567, 8));
    text::draw(20, 0, "LIVES 3");
    let cycles = watch.elapsed();
    stackshot_platform::info!("HUD line: {cycles} cycles");
    assert_eq!([shown(6, 0).0, shown(13, 0).0], [b'0', b'7']);
    // VBlank is about 83,000 cycles; a HUD update must leave most of it for OAM and the game.
    assert!(cycles < 10_000, "{cycles} cycles");
}
