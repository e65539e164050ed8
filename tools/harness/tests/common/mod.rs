//! Paths to what `make` built, and the game driven from outside (scripted keys, a bot that reads the screen),
//! for the tests that check the real ROM.
#![allow(dead_code, reason = "each test file uses the paths and helpers it needs")]
use harness::elf::Elf;
use harness::emulator::Emulator;
use harness::keys::{Script, bit};
use harness::protocol::Message;
use harness::telemetry::{Probe, State, Telemetry};
use std::path::{Path, PathBuf};

fn built(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    assert!(path.exists(), "{} is missing: `make` builds the game, `make examples` the examples", path.display());
    path
}

/// The cartridge image with its fixed header.
pub fn rom() -> PathBuf {
    built("target/stackshot.gba")
}

/// The ELF it was made from, with symbols.
pub fn elf() -> PathBuf {
    built("target/thumbv4t-none-eabi/release/stackshot")
}

/// The bullet-hell scene (`make fixture`): the game with every pool kept full and a bomb and a mass death.
pub fn scene_elf() -> PathBuf {
    built("target/thumbv4t-none-eabi/release/examples/bullet_hell")
}

/// The quick-start ROM on the gba crate's runtime, from its own workspace (ELF; mGBA loads it as it is).
pub fn gba_quickstart() -> PathBuf {
    built("crates/examples/gba-quickstart/target/thumbv4t-none-eabi/release/gba-quickstart")
}

/// The same built with the allocator crate's feature `iwram` (`make examples` keeps a copy).
pub fn gba_quickstart_iwram() -> PathBuf {
    built("crates/examples/gba-quickstart/target/gba-quickstart-iwram")
}

/// The quick-start ROM on agb's runtime, from its own workspace.
pub fn agb_quickstart() -> PathBuf {
    built("crates/examples/agb-quickstart/target/thumbv4t-none-eabi/release/agb-quickstart")
}

/// The benchmark ROM's ARM/IWRAM build (`make bench-arm`).
pub fn bench_elf() -> PathBuf {
    built("target/thumbv4t-none-eabi/bench-arm/stackshot-bench")
}

pub fn key(name: &str) -> u32 {
    bit(name).unwrap()
}

/// A ROM running, with its telemetry.
pub struct Game {
    pub emu: Emulator,
    pub probe: Probe,
}

/// What the tests drive: one frame at a time with keys, and a screen to look at.
pub trait Console {
    /// Runs one frame holding `keys`; panics if the ROM panicked.
    fn frame(&mut self, keys: u32) -> Telemetry;
    /// The console whose screen and memory the bot and the checks read.
    fn emu(&self) -> &Emulator;

    /// Runs `script` from the current frame to its end, and two frames more for the game to act on the last
    /// keys (it reads them at the start of its next frame); returns the last telemetry.
    fn script(&mut self, script: &Script) -> Telemetry {
        let mut t = Telemetry::default();
        while self.emu().frames() <= script.last_frame() + 2 {
            let keys = script.keys_at(self.emu().frames());
            t = self.frame(keys);
        }
        t
    }
}

impl Game {
    pub fn open(rom: &Path, elf: &Path) -> Game {
        Game { emu: Emulator::open(rom).unwrap(), probe: Probe::new(&Elf::read(elf).unwrap()).unwrap() }
    }

    /// [`Game::open`] on dirty RAM (see [`Twins`]).
    pub fn open_dirty(rom: &Path, elf: &Path) -> Game {
        let mut g = Game::open(rom, elf);
        g.emu.fill_ram(0xD1A7_5EED);
        g
    }

    pub fn release() -> Game {
        Game::open(&rom(), &elf())
    }
}

impl Console for Game {
    fn frame(&mut self, keys: u32) -> Telemetry {
        self.emu.set_keys(keys);
        self.emu.run_frame();
        for line in self.emu.take_log() {
            if let Message::Panic(_) = Message::parse(&line.text) {
                panic!("frame {}: {}", self.emu.frames(), line.text);
            }
        }
        self.probe.read(&self.emu)
    }

    fn emu(&self) -> &Emulator {
        &self.emu
    }
}

/// The same ROM in two consoles given the same keys: one starts on RAM as mGBA clears it, the other on EWRAM,
/// IWRAM, palette RAM, VRAM and OAM full of a pattern (`Emulator::fill_ram`), as a flash cart's quick boot can
/// leave them. Every frame both must show the same screen and the same telemetry.
pub struct Twins {
    pub clean: Game,
    pub dirty: Game,
}

impl Twins {
    pub fn open(rom: &Path, elf: &Path) -> Twins {
        Twins { clean: Game::open(rom, elf), dirty: Game::open_dirty(rom, elf) }
    }

    /// Both screens as PNGs in target/screenshots/, for a look at how they differ.
    fn keep_screens(&self, name: &str) -> String {
        let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
        std::fs::create_dir_all(&out).unwrap();
        for (which, g) in [("clean", &self.clean), ("dirty", &self.dirty)] {
            g.emu.screenshot(&out.join(format!("{name}.{which}.png"))).unwrap();
        }
        out.join(format!("{name}.{{clean,dirty}}.png")).display().to_string()
    }
}

impl Console for Twins {
    fn frame(&mut self, keys: u32) -> Telemetry {
        let (clean, dirty) = (self.clean.frame(keys), self.dirty.frame(keys));
        let frame = self.clean.emu.frames();
        let differing = self.clean.emu.pixels().iter().zip(self.dirty.emu.pixels()).filter(|(a, b)| a != b).count();
        if differing > 0 {
            let shots = self.keep_screens(&format!("dirty-ram-frame-{frame}"));
            panic!("frame {frame}: {differing} pixels differ between the clean and the dirty boot (screens: {shots})");
        }
        assert_eq!(clean, dirty, "frame {frame}: the telemetry differs between the clean and the dirty boot");
        clean
    }

    fn emu(&self) -> &Emulator {
        &self.clean.emu
    }
}

/// One sprite on screen, from OAM: its centre and its first tile (which tells what it is).
#[derive(Clone, Copy, Debug)]
pub struct Object {
    pub x: i32,
    pub y: i32,
    pub tile: u16,
}

/// The visible sprites, from OAM.
pub fn objects(emu: &Emulator) -> Vec<Object> {
    (0..128u32)
        .filter_map(|i| {
            let (a0, a1, a2) =
                (emu.read16(0x0700_0000 + 8 * i), emu.read16(0x0700_0002 + 8 * i), emu.read16(0x0700_0004 + 8 * i));
            if a0 & 0x0300 == 0x0200 {
                return None;
            }
            let size = [8, 16, 32, 64][usize::from(a1 >> 14)];
            let (mut x, mut y) = (i32::from(a1 & 0x1FF), i32::from(a0 & 0xFF));
            if x >= 240 {
                x -= 512;
            }
            if y >= 160 {
                y -= 256;
            }
            Some(Object { x: x + size / 2, y: y + size / 2, tile: a2 & 0x3FF })
        })
        .collect()
}

/// First tiles of the art (build.rs lays the sprites out in name order): what the bot tells apart.
pub const SHIP_TILE: u16 = 39;
const ENEMY_BULLET_TILE: u16 = 24;
const ENEMY_TILES: [u16; 5] = [0, 16, 20, 29, 35];

/// A player that reads the screen: fires all the time, moves under the nearest enemy, sidesteps what comes at
/// it and bombs when cornered. It scores, and dies now and then. Returns the keys for this frame.
pub fn bot(emu: &Emulator, t: &Telemetry) -> u32 {
    let objects = objects(emu);
    let Some(ship) = objects.iter().find(|o| o.tile == SHIP_TILE).copied() else { return key("A") };
    let mut keys = key("A");
    let threats: Vec<&Object> = objects
        .iter()
        .filter(|o| o.tile == ENEMY_BULLET_TILE || ENEMY_TILES.contains(&o.tile))
        .filter(|o| (o.x - ship.x).abs() < 22 && o.y < ship.y + 12 && o.y > ship.y - 44)
        .collect();
    if let Some(near) = threats.iter().min_by_key(|o| (o.x - ship.x).abs() + (ship.y - o.y).abs()) {
        let close = (near.x - ship.x).abs() < 7 && (ship.y - near.y).abs() < 10;
        if close && t.bombs > 0 && threats.len() > 2 {
            keys |= key("B");
        }
        let go_left = if ship.x < 24 {
            false
        } else if ship.x > 216 {
            true
        } else {
            near.x >= ship.x
        };
        keys |= if go_left { key("LEFT") } else { key("RIGHT") };
        if near.y > ship.y - 16 && ship.y < 140 {
            keys |= key("DOWN");
        }
    } else if let Some(prey) =
        objects.iter().filter(|o| ENEMY_TILES.contains(&o.tile)).min_by_key(|o| (o.x - ship.x).abs())
    {
        if prey.x < ship.x - 2 {
            keys |= key("LEFT");
        } else if prey.x > ship.x + 2 {
            keys |= key("RIGHT");
        }
        if ship.y < 130 {
            keys |= key("DOWN");
        }
    }
    keys
}

/// The game built with debug assertions (the `soak` profile: release code, `cfg(debug_assertions)` on), whose
/// every frame checks every pool's and the heap's invariants.
pub fn debug_elf() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/thumbv4t-none-eabi/soak/stackshot");
    assert!(path.exists(), "{} is missing: `cargo build --profile soak` at the root (make test does)", path.display());
    path
}

/// Plays from the title with the bot until `done` says so or `limit` frames pass; on the game-over screen it
/// presses START (a continue while credits are left, else back to the title, where START starts a new game) so
/// the session goes on. Returns the last telemetry.
pub fn play(
    g: &mut impl Console,
    limit: u64,
    continues: bool,
    mut done: impl FnMut(u64, &Telemetry, &Emulator) -> bool,
) -> Telemetry {
    let mut t = g.frame(0);
    for n in 0..limit {
        let keys = match State::of(t.state) {
            Some(State::Title) if n % 20 == 10 => key("START"),
            Some(State::Playing) => bot(g.emu(), &t),
            Some(State::GameOver) if continues && n % 20 == 10 => key("START"),
            _ => 0,
        };
        t = g.frame(keys);
        if done(n, &t, g.emu()) {
            break;
        }
    }
    t
}

/// The stack's space in `elf` (linker.ld: from `__stack_limit` up to `__stack_top`), and what is left of it
/// above a measured `peak`: the IWRAM budget, which must keep at least `margin` bytes spare.
pub fn stack_headroom(elf: &Path, peak: u32, margin: u32) -> u32 {
    let elf = Elf::read(elf).unwrap();
    let address = |name: &str| elf.address_of(name).unwrap_or_else(|| panic!("no {name} in the ELF"));
    let space = address("__stack_top") - address("__stack_limit");
    assert!(peak > 0 && peak <= space, "a stack peak of {peak} bytes in {space}");
    let headroom = space - peak;
    println!("stack: deepest {peak} B of {space} B, headroom {headroom} B");
    assert!(headroom >= margin, "only {headroom} bytes of stack to spare (peak {peak} of {space}): IWRAM is too full");
    headroom
}

/// Every line the ROM prints in its first 10 frames (it prints all it has in the first).
pub fn log_of(rom: &Path) -> Vec<String> {
    let mut emu = Emulator::open(rom).unwrap();
    let mut lines = Vec::new();
    for _ in 0..10 {
        emu.run_frame();
        lines.extend(emu.take_log().into_iter().map(|line| line.text));
    }
    lines
}

/// The parts of `line` where `template` has `{}`, if the rest matches exactly.
pub fn capture<'a>(line: &'a str, template: &str) -> Option<Vec<&'a str>> {
    let mut pieces = template.split("{}");
    let mut rest = line.strip_prefix(pieces.next()?)?;
    let mut fields = Vec::new();
    for literal in pieces {
        let end = if literal.is_empty() { rest.len() } else { rest.find(literal)? };
        fields.push(&rest[..end]);
        rest = &rest[end + literal.len()..];
    }
    rest.is_empty().then_some(fields)
}

/// The fields of the one line of `lines` that matches `template`.
pub fn line_like<'a>(lines: &'a [String], template: &str) -> Vec<&'a str> {
    let found: Vec<_> = lines.iter().filter_map(|line| capture(line, template)).collect();
    assert_eq!(found.len(), 1, "expected one line like `{template}`; the ROM printed:\n{}", lines.join("\n"));
    found[0].clone()
}
