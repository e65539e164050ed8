//! The allocator overlay (`src/overlay.rs`) on screen, in the fixture `fixtures/alloc_state.rs`: every heap block's
//! pixel has the colour of what the map says it is, the pool gauge is as long as the pool is full, the stack
//! gauge shows the high-water mark the harness finds in memory, and SELECT with R hides and shows the layer. The
//! screen is saved as `target/overlay-test/overlay.png`. On the release ROM, in play: a stray SELECT does not
//! open it, and open it costs at most a tenth of a frame.

mod common;

use common::{Console, Game, bot, key};
use harness::alloc_state::{HeapRegion, Report, SLOTS};
use harness::elf::Elf;
use harness::emulator::{Emulator, WIDTH};
use harness::keys::Script;
use harness::screen;
use harness::telemetry::State;
use stackshot_alloc::heap::Block;
use std::path::PathBuf;

/// From src/overlay.rs: the first row, the palette bank and colour indices, the bar's first column.
const TOP: usize = 10;
const PALBANK: u32 = 11;
const FREE: u32 = 4;
const FREE_START: u32 = 5;
const USED: u32 = 6;
const USED_END: u32 = 7;
const GAUGE: u32 = 8;
const STACK: u32 = 11;
const BAR_X: usize = 14 * 8;

fn fixture() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/thumbv4t-none-eabi/release/examples/alloc_state");
    assert!(path.exists(), "{} is missing: cargo build --release --example alloc_state", path.display());
    path
}

/// Palette entry `index` of the overlay's bank as the screen shows it (5-bit channels widened as mGBA does).
fn colour(emu: &Emulator, index: u32) -> [u8; 3] {
    let c = emu.read16(0x0500_0000 + 2 * (PALBANK * 16 + index));
    let widen = |v: u16| ((v << 3) | (v >> 2)) as u8;
    [widen(c & 31), widen((c >> 5) & 31), widen((c >> 10) & 31)]
}

fn pixel(screen: &[u8], x: usize, y: usize) -> [u8; 3] {
    let i = 3 * (y * WIDTH + x);
    [screen[i], screen[i + 1], screen[i + 2]]
}

/// The screen pixel of managed block `i`: one pixel a block, 240 a row, in the middle of the strip's tile rows.
fn block_pixel(screen: &[u8], i: u32) -> [u8; 3] {
    let (x, row) = (i as usize % 240, i as usize / 240);
    pixel(screen, x, (TOP + 1 + row) * 8 + 3)
}

#[test]
fn overlay_shows_every_block_and_the_pool_and_select_toggles_it() {
    let elf = Elf::read(&fixture()).unwrap();
    let mut emu = Emulator::open(&fixture()).unwrap();
    // Past the overlay's second measure of the stack (src/overlay.rs: every 32 frames from the 16th drawn), which
    // sees the stack as deep as every path of the overlay went before it.
    for _ in 0..52 {
        emu.run_frame();
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/overlay-test");
    std::fs::create_dir_all(&dir).unwrap();
    emu.screenshot(&dir.join("overlay.png")).unwrap();
    let screen = emu.screen_rgb();
    let region = elf.symbol("AI_REGION").unwrap();
    let heap = HeapRegion::read(&emu, region.address, region.size as usize);
    let heap = heap.view_alone();
    let report = Report::read(&emu, &elf).unwrap();

    let mut prev_free = false;
    let mut seen = [0; 4];
    for b in heap.first()..heap.end() {
        let block = heap.block(b).expect("a managed block");
        let free = block == Block::Free;
        let (class, name) = match (block, prev_free) {
            (Block::UsedEnd, _) => (USED_END, "used run end"),
            (Block::Used, _) => (USED, "used"),
            (Block::Free, false) => (FREE_START, "free run start"),
            (Block::Free, true) => (FREE, "free"),
        };
        seen[(class - FREE) as usize] += 1;
        let i = b - heap.first();
        assert_eq!(block_pixel(&screen, i), colour(&emu, class), "block {b} ({name}) at strip pixel {i}");
        prev_free = free;
    }
    assert!(seen.iter().all(|&n| n > 0), "the fixture should show all four kinds of block: {seen:?}");

    // The pool's gauge: 128 pixels for the whole pool, filled in proportion.
    let y = (TOP + 4) * 8 + 3;
    let filled = (BAR_X..BAR_X + 128).filter(|&x| pixel(&screen, x, y) == colour(&emu, GAUGE)).count();
    assert_eq!(filled, report.pool_len as usize * 128 / SLOTS);

    // The stack gauge, on the row after the frame's: `STK USED/SPACE` and a bar. The harness measures the stack itself: from
    // the top down to the lowest word that differs from the paint still at the stack's limit.
    let (limit, top) = (elf.address_of("__stack_limit").unwrap(), elf.address_of("__stack_top").unwrap());
    let paint = emu.read32(limit);
    let lowest = (limit..top).step_by(4).find(|&a| emu.read32(a) != paint).unwrap();
    let (used, space) = (top - lowest, top - limit);
    let lines = screen::text(&emu);
    let row = lines
        .iter()
        .position(|l| l.starts_with("STK "))
        .unwrap_or_else(|| panic!("no stack gauge:\n{}", screen::dump(&lines)));
    assert_eq!(lines[row][..BAR_X / 8].trim_end(), format!("STK {used}/{space}"));
    let y = row * 8 + 3;
    let filled = (BAR_X..BAR_X + 128).filter(|&x| pixel(&screen, x, y) == colour(&emu, STACK)).count();
    assert_eq!(filled, (used * 128 / space) as usize);

    // SELECT with R hides the layer (BG1 off), and shows it again.
    let select = key("SELECT") | key("R");
    let bg1 = |emu: &Emulator| emu.read16(0x0400_0000) & (1 << 9) != 0;
    assert!(bg1(&emu));
    for (keys, shown) in [(select, false), (0, false), (select, true), (0, true)] {
        emu.set_keys(keys);
        emu.run_frame();
        emu.run_frame();
        assert_eq!(bg1(&emu), shown);
        let strip = block_pixel(&emu.screen_rgb(), 0);
        assert_eq!(
            strip == colour(&emu, USED) || strip == colour(&emu, FREE_START),
            shown,
            "block 0's pixel {strip:?}"
        );
    }
}

/// DISPCNT's BG1 bit: the overlay's layer shown.
fn overlay_shown(emu: &Emulator) -> bool {
    emu.read16(0x0400_0000) & (1 << 9) != 0
}

/// In play on the release ROM: a stray SELECT leaves the overlay closed, SELECT with R opens it, and again
/// closes it.
#[test]
fn a_stray_select_leaves_the_overlay_closed_and_select_with_r_toggles_it() {
    let mut g = Game::release();
    g.script(&Script::parse("30 START").unwrap());
    let chord = key("SELECT") | key("R");
    // SELECT held on its own, R alone, the chord, R alone again, the chord again.
    let steps = [("SELECT", key("SELECT"), 40, false), ("R", key("R"), 1, false), ("SELECT+R", chord, 1, true)];
    let steps = steps.into_iter().chain([("R", key("R"), 1, true), ("SELECT+R", chord, 1, false)]);
    for (name, keys, held, shown) in steps {
        for _ in 0..held {
            g.frame(keys);
        }
        for _ in 0..4 {
            g.frame(0);
        }
        assert_eq!(overlay_shown(&g.emu), shown, "after {name}: the overlay's layer (BG1) on is not {shown}");
    }
}

/// Frames of each session of the cost test: a minute of play, a game over and continues among them.
const COST_FRAMES: u64 = 3_600;
/// The frame of the session the overlay opens in (SELECT with R), early in the first game.
const OPEN_AT: u64 = 60;

/// The bot's session on the release ROM (as `common::play`, continuing with START), the overlay opened at
/// `open_at` if given: each frame's game frame count and cycles.
fn session(open_at: Option<u64>) -> Vec<(u32, u32)> {
    let mut g = Game::release();
    let mut t = g.frame(0);
    let mut frames = Vec::with_capacity(COST_FRAMES as usize);
    for n in 0..COST_FRAMES {
        let mut keys = match State::of(t.state) {
            Some(State::Title | State::GameOver) if n % 20 == 10 => key("START"),
            Some(State::Playing) => bot(&g.emu, &t),
            _ => 0,
        };
        if open_at == Some(n) {
            keys |= key("SELECT") | key("R");
        }
        t = g.frame(keys);
        frames.push((t.frame, t.last_cycles));
    }
    assert_eq!(open_at.is_some(), overlay_shown(&g.emu));
    frames
}

/// The overlay's own cost, open through a minute of play: the same session with it and without it, frame for
/// frame (the game is deterministic and ignores SELECT and R, so the frames differ by the overlay's work alone),
/// at most a tenth of a frame's 280,896 cycles.
#[test]
fn the_overlay_open_in_play_costs_at_most_a_tenth_of_a_frame() {
    let (with, without) = std::thread::scope(|s| {
        let with = s.spawn(|| session(Some(OPEN_AT)));
        (with.join().unwrap(), session(None))
    });
    let mut worst = (0, 0);
    for (n, (a, b)) in with.iter().zip(&without).enumerate().skip(OPEN_AT as usize) {
        assert_eq!(a.0, b.0, "frame {n}: the game's frames drifted apart with the overlay open (a dropped frame)");
        let extra = a.1.saturating_sub(b.1);
        if extra > worst.1 {
            worst = (n, extra);
        }
    }
    let share = f64::from(worst.1) * 100.0 / 280_896.0;
    println!("overlay open: its worst frame {} took {} cycles more ({share:.1}% of a frame)", worst.0, worst.1);
    assert!(worst.1 <= 28_090, "the overlay took {} cycles in frame {}: {share:.1}% of a frame", worst.1, worst.0);
}
