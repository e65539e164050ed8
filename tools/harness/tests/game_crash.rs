//! The crash screen (src/crash.rs) and the stack guard, on the fault fixture `fixtures/faults.rs` (each of its
//! tests ends in a fault) and on the game itself: what a player would see is read from the screen's pixels
//! (`harness::screen`) and compared with what the harness finds itself: the panic's place in the log, the pools'
//! and the heap's state decoded from memory or the game's telemetry, the stack's space from the ELF. The screens
//! are saved in target/crash-test/.
mod common;

use common::{Game, debug_elf, play};
use harness::alloc_state::{self, HeapRegion};
use harness::elf::Elf;
use harness::emulator::Emulator;
use harness::protocol::{MAILBOX, MAILBOX_MAGIC, Message};
use harness::runner::{Limits, Outcome, run_tests};
use harness::screen;
use harness::telemetry::State;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/thumbv4t-none-eabi/release/examples/faults");
    assert!(path.exists(), "{} is missing: `make fixture`", path.display());
    path
}

/// The fixture's tests, in its order.
const MESSAGE: usize = 0;
const INSIDE_THE_HEAP: usize = 1;
const BROKEN_HEAP: usize = 2;
const TOO_DEEP: usize = 3;
const TEN_FRAMES_IN: usize = 4;

/// What fault `index` left: the screen's text, the panic's log line, and the machine.
struct Crash {
    lines: Vec<String>,
    panic: String,
    emu: Emulator,
}

impl Crash {
    fn run(index: usize) -> Crash {
        let mut emu = Emulator::open(&fixture()).unwrap();
        emu.write32(MAILBOX, MAILBOX_MAGIC);
        emu.write32(MAILBOX + 4, index as u32);
        Crash::after(emu, &format!("fault-{index}"))
    }

    /// Runs `emu` to its panic and reads the screen; saves it as target/crash-test/NAME.png.
    fn after(mut emu: Emulator, name: &str) -> Crash {
        let mut panic = None;
        let start = emu.frames();
        while panic.is_none() {
            assert!(emu.frames() - start < 300, "{name}: no panic within 300 frames");
            emu.run_frame();
            panic = emu.take_log().iter().find_map(|l| match Message::parse(&l.text) {
                Message::Panic(p) => Some(p.to_string()),
                _ => None,
            });
        }
        // The crash screen is drawn before the CPU stops; the next frame shows it.
        emu.run_frame();
        emu.run_frame();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/crash-test");
        std::fs::create_dir_all(&dir).unwrap();
        emu.screenshot(&dir.join(format!("{name}.png"))).unwrap();
        let lines = screen::text(&emu);
        println!("{name}:\n{}", screen::dump(&lines));
        Crash { lines, panic: panic.unwrap(), emu }
    }

    fn text(&self) -> String {
        screen::dump(&self.lines)
    }

    /// Whether the screen holds `words` (the crash screen wraps lines between words).
    fn shows(&self, words: &str) -> bool {
        let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        flat(&self.text()).contains(&flat(words))
    }

    /// The last line that starts with `prefix` (the memory summary comes after the message).
    fn line(&self, prefix: &str) -> &str {
        let found = self.lines.iter().rev().find(|l| l.starts_with(prefix));
        found.unwrap_or_else(|| panic!("no line starts with {prefix:?} on the screen:\n{}", self.text())).trim_end()
    }

    /// The panic's message and `file:line`, from its log line (`at FILE:LINE:COLUMN: MESSAGE`).
    fn logged(&self) -> (String, String) {
        let rest = self.panic.strip_prefix("at ").expect("a location");
        let (place, message) = rest.split_once(": ").unwrap();
        let file_line = place.rsplit_once(':').unwrap().0;
        (message.to_uppercase(), file_line.to_uppercase())
    }

    /// The fixture's heap, decoded from memory by the harness (not by the ROM).
    fn heap(&self) -> HeapRegion {
        heap_region(&self.emu, &fixture(), "REGION")
    }

    /// Bytes in use, free runs and the largest free run, from the decoded map.
    fn heap_use(&self) -> (u32, u32, u32) {
        let heap = self.heap();
        let runs: Vec<_> = heap.view_alone().runs().collect();
        let used = runs.iter().filter(|r| r.used).map(|r| r.blocks * 8).sum();
        let free: Vec<u32> = runs.iter().filter(|r| !r.used).map(|r| r.blocks * 8).collect();
        (used, free.len() as u32, free.iter().copied().max().unwrap_or(0))
    }

    fn capacity(&self) -> u32 {
        let heap = self.heap();
        let view = heap.view_alone();
        (view.end() - view.first()) * 8
    }
}

/// The heap region at the symbol `name` of `elf`, decoded from memory.
fn heap_region(emu: &Emulator, elf: &Path, name: &str) -> HeapRegion {
    let elf = Elf::read(elf).unwrap();
    let region = elf.symbol(name).unwrap_or_else(|| panic!("no {name} in the ELF"));
    HeapRegion::read(emu, region.address, region.size as usize)
}

/// The stack's space, from the fixture's symbols.
fn stack_space() -> u32 {
    let elf = Elf::read(&fixture()).unwrap();
    let address = |name: &str| elf.address_of(name).unwrap_or_else(|| panic!("no {name} in the fixture"));
    address("__stack_top") - address("__stack_limit")
}

/// Every fault shows the heading, its message, where it happened, the pool, the stack and the request to
/// report it, whatever the screen showed before.
fn check_common(crash: &Crash) {
    let text = crash.text();
    assert_eq!(crash.lines[0].trim_end(), "STACKSHOT HAS CRASHED", "{text}");
    let (message, file_line) = crash.logged();
    assert!(crash.shows(&message), "the message {message:?} is not on the screen:\n{text}");
    // Rows 7 and 8: `AT FILE:LINE`, cut where a row ends.
    let at = format!("{}{}", crash.lines[7].trim_end(), crash.lines[8].trim_end());
    assert_eq!(at, format!("AT {file_line}"), "{text}");
    assert_eq!(crash.line("BULLETS"), "BULLETS 3/16", "{text}");
    let stack = crash.line("STACK ");
    assert!(stack.contains(&format!("/{} B", stack_space())), "{stack}");
    assert_eq!(crash.lines[19].trim_end(), "PLEASE REPORT THIS SCREEN");
    assert_eq!(crash.emu.read16(0x0400_0000) & 0x0007, 0, "the crash screen is in mode 0");
}

#[test]
fn a_panic_shows_its_message_place_and_the_allocators_from_any_screen() {
    let crash = Crash::run(MESSAGE);
    check_common(&crash);
    assert!(crash.shows("THE SHIELD RAN OUT AT WAVE 7"));
    let (used, runs, largest) = crash.heap_use();
    assert_eq!(used, 24 + 40 + 64);
    assert_eq!(crash.line("HEAP"), format!("HEAP {used}/{} B FREE RUNS {runs}", crash.capacity()));
    assert_eq!(crash.line("LARGEST"), format!("LARGEST FREE {largest} B FAILED 1"));
    assert!(crash.line("STACK ").ends_with("GUARD OK"));
}

/// The heap's `IrqLock` panics at an allocation inside `LockedHeap::with`: a panic inside an allocator call,
/// with the lock taken. The crash screen reads the heap anyway (through the lock it would find it busy).
#[test]
fn a_panic_inside_the_heaps_lock_still_shows_the_heap() {
    let crash = Crash::run(INSIDE_THE_HEAP);
    check_common(&crash);
    assert!(crash.panic.contains("crates/stackshot-alloc/src/irq.rs"), "the lock's own panic: {}", crash.panic);
    let (used, runs, largest) = crash.heap_use();
    assert_eq!(used, 24 + 40 + 64);
    assert_eq!(crash.line("HEAP"), format!("HEAP {used}/{} B FREE RUNS {runs}", crash.capacity()));
    assert_eq!(crash.line("LARGEST"), format!("LARGEST FREE {largest} B FAILED 1"));
}

#[test]
fn a_broken_heap_is_named_not_followed() {
    let crash = Crash::run(BROKEN_HEAP);
    check_common(&crash);
    let heap = crash.heap();
    let (kind, block) = alloc_state::verdict(&heap.view_alone()).expect_err("the fixture damaged the heap");
    let (used, _, largest) = crash.heap_use();
    assert_eq!(crash.line("HEAP"), format!("HEAP {used}/{} B BROKEN:", crash.capacity()));
    assert!(crash.shows(&format!("{} AT BLOCK {block}", kind.to_uppercase())), "{kind} at {block}:\n{}", crash.text());
    assert_eq!(crash.line("LARGEST"), format!("LARGEST FREE {largest} B FAILED ?"));
}

#[test]
fn a_recursion_too_deep_is_caught_by_the_guard_with_a_clear_message() {
    let results = run_tests(&fixture(), Limits::default()).unwrap();
    let Outcome::Failed { reason } = &results[TOO_DEEP].outcome else {
        panic!("{} passed: the stack overflow went unnoticed", results[TOO_DEEP].name)
    };
    assert!(reason.contains("stack overflow: the stack grew past its limit"), "{reason}");
    assert!(reason.contains("src/testing.rs"), "the runner's guard check caught it: {reason}");

    let crash = Crash::run(TOO_DEEP);
    check_common(&crash);
    assert!(crash.shows("STACK OVERFLOW: THE STACK GREW PAST ITS LIMIT"), "{}", crash.text());
    let space = stack_space();
    assert_eq!(crash.line("STACK "), format!("STACK {space}/{space} B OVERFLOWED"), "the whole stack was used");
}

/// The game's own crash screen: the debug build (which checks its allocators every frame) played for a while,
/// then a stray write into the AI heap's last block. The next frame's check panics, and the screen lists every
/// pool the game watches with the use its telemetry reported that frame, and names the broken heap.
#[test]
fn the_games_crash_screen_lists_every_pool_and_names_a_broken_heap() {
    let mut g = Game::open(&debug_elf(), &debug_elf());
    let t = play(&mut g, 3_000, false, |n, t, _| n > 600 && t.state == State::Playing && t.enemy_bullets.now >= 8);
    assert_eq!(t.state, State::Playing);
    let region = heap_region(&g.emu, &debug_elf(), "AI_REGION");
    let view = region.view_alone();
    assert!(!view.runs().last().unwrap().used, "the heap's last run is free");
    // A stray write into the map: the last block of the top, free (`00`), given the spare code (`10`), which no
    // block has.
    let (byte, shift) = view.map_position(view.end() - 1);
    let at = region.base + byte as u32;
    let code = g.emu.read8(at);
    g.emu.write8(at, code & !(3 << shift) | 2 << shift);
    g.emu.set_keys(0);
    let probe = g.probe;
    let crash = Crash::after(g.emu, "game");
    let t = probe.read(&crash.emu);
    for (name, pool, capacity) in [
        ("SHOTS", t.player_bullets, 48),
        ("BULLETS", t.enemy_bullets, 192),
        ("SPARKS", t.particles, 96),
        ("ENEMIES", t.enemies, 32),
        ("ITEMS", t.pickups, 8),
        ("SPRITES", t.sprite_slots, 128),
    ] {
        assert!(
            crash.shows(&format!("{name} {}/{capacity}", pool.now)),
            "{name} {}/{capacity}:\n{}",
            pool.now,
            crash.text()
        );
    }
    assert!(crash.panic.contains("AI heap: invariant broken"), "{}", crash.panic);
    let region = heap_region(&crash.emu, &debug_elf(), "AI_REGION");
    let heap = region.view_alone();
    let used: u32 = heap.runs().filter(|r| r.used).map(|r| r.blocks * 8).sum();
    assert_eq!(crash.line("HEAP"), format!("HEAP {used}/{} B BROKEN:", (heap.end() - heap.first()) * 8));
    assert!(crash.shows(&format!("SPARECODE AT BLOCK {}", heap.end() - 1)), "{}", crash.text());
    assert!(crash.line("STACK ").ends_with("GUARD OK"));
}

/// A crash-screen hook that a stray write damaged is not called (`stackshot_platform::panic`: the hook and the
/// complement of its address are set together): the panic is logged, no screen is drawn, and the CPU stops
/// instead of jumping where the damage points. Damaged once in the check word (the hook still leads to the crash
/// screen) and once in the hook (it leads to the ROM's entry, which would start the ROM again).
#[test]
fn a_damaged_crash_screen_hook_is_not_followed() {
    let elf = Elf::read(&fixture()).unwrap();
    let address = |name: &str| elf.symbol(name).unwrap_or_else(|| panic!("no {name} in the fixture")).address;
    for (n, (what, at, value)) in
        [("check word", address("SCREEN_CHECK"), 0), ("hook", address("SCREEN"), 0x0800_0000)].into_iter().enumerate()
    {
        let mut emu = Emulator::open(&fixture()).unwrap();
        emu.write32(MAILBOX, MAILBOX_MAGIC);
        emu.write32(MAILBOX + 4, TEN_FRAMES_IN as u32);
        // `main` sets the hook first thing; the test panics ten frames later.
        emu.run_frame();
        emu.run_frame();
        emu.write32(at, value);
        let mut crash = Crash::after(emu, &format!("damaged-hook-{n}"));
        assert!(crash.panic.ends_with("ten frames in"), "{}", crash.panic);
        assert!(!crash.shows("STACKSHOT HAS CRASHED"), "drawn through a damaged {what}:\n{}", crash.text());
        for _ in 0..60 {
            crash.emu.run_frame();
            let log = crash.emu.take_log();
            assert!(log.is_empty(), "the CPU went on after the panic with a damaged {what}: {:?}", log[0].text);
        }
    }
}
