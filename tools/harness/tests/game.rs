//! The game played from outside, in the emulator, with scripted and generated input: scoring, game over, the
//! high-score table across a reset, reference screenshots, a heavy two-minute session measured, and random play
//! on the soak build with the allocators checked every frame (twenty minutes of it in `make test`, an hour in
//! `make test-long`). The scripted game and the soaks run twice side by side, on RAM as mGBA clears it and on
//! dirty RAM (`common::Twins`): every frame must match.
mod common;

use common::{Console, Game, SHIP_TILE, Twins, debug_elf, key, objects, play, stack_headroom};
use harness::emulator::{CYCLES_PER_FRAME, Emulator, HEIGHT, WIDTH};
use harness::keys::Script;
use harness::telemetry::{State, Telemetry};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

/// The ship's centre, from OAM; runs up to 8 more frames (no keys) while it blinks after a (re)spawn.
fn ship(g: &mut Game) -> (i32, i32) {
    for _ in 0..8 {
        if let Some(o) = objects(&g.emu).iter().find(|o| o.tile == SHIP_TILE) {
            return (o.x, o.y);
        }
        g.frame(0);
    }
    panic!("no ship on screen");
}

#[test]
fn the_ship_moves_shoots_an_enemy_and_the_score_rises() {
    let mut g = Game::release();
    let t = g.script(&Script::parse("30 START").unwrap());
    assert_eq!((State::of(t.state), t.score, t.lives), (Some(State::Playing), 0, 3));
    let before = ship(&mut g);
    let from = g.emu.frames();
    let t = g.script(&Script::parse(&format!("{from}-{} LEFT", from + 29)).unwrap());
    let after = ship(&mut g);
    assert!(after.0 <= before.0 - 40, "LEFT moved the ship from {before:?} to {after:?}");
    assert_eq!(t.kills, 0);
    // START pauses and resumes.
    let from = g.emu.frames();
    assert_eq!(g.script(&Script::parse(&format!("{from} START")).unwrap()).state, State::Paused);
    let from = g.emu.frames();
    assert_eq!(g.script(&Script::parse(&format!("{from} START")).unwrap()).state, State::Playing);
    let t = play(&mut g, 1200, false, |_, t, _| t.kills > 0);
    assert!(t.kills > 0 && t.score > 0, "no enemy destroyed in 1200 frames: {t:?}");
    println!("first kill at frame {}, score {}", g.emu.frames(), t.score);
}

#[test]
fn losing_every_life_ends_the_game_with_everything_freed() {
    let mut g = Game::release();
    let mut t = g.script(&Script::parse("30 START").unwrap());
    // Never moving, never firing: the enemies get through. The last ship's explosion plays out first.
    let mut dying = false;
    while t.state != State::GameOver && t.state != State::NameEntry {
        assert!(g.emu.frames() < 12_000, "no game over after 12,000 frames: {t:?}");
        t = g.frame(0);
        dying |= t.state == State::Dying;
    }
    assert!(dying, "the game ended without the dying phase");
    assert_eq!(t.lives, 0);
    assert_eq!((t.game_overs, t.leak_checks, t.leak_failures), (1, 1, 0), "{t:?}");
    assert_eq!((t.enemies.now, t.enemy_bullets.now, t.particles.now, t.heap_used), (0, 0, 0, 0));
    println!("game over at frame {} with score {}", g.emu.frames(), t.score);
}

const DEFAULT_TABLE: [u32; 5] = [50_000, 40_000, 30_000, 20_000, 10_000];

#[test]
fn a_high_score_survives_a_reset_and_a_corrupt_save_loads_the_defaults() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let save = dir.join("high-score.sav");
    // A damaged record: the magic and version, then garbage. The game must shrug it off.
    let mut corrupt = b"SSHS\x01".to_vec();
    corrupt.resize(32 * 1024, 0x5A);
    std::fs::write(&save, &corrupt).unwrap();

    let mut g = Game::release();
    g.emu.load_save(&save).unwrap();
    g.emu.reset();
    let t = (0..10).map(|_| g.frame(0)).last().unwrap();
    assert_eq!(t.table, DEFAULT_TABLE, "a corrupt save must load as the default table");

    // Play until the score makes the table, then keep the offered name.
    let t = play(&mut g, 30_000, false, |_, t, _| t.state == State::NameEntry);
    assert_eq!(t.state, State::NameEntry, "the bot never made the table: {t:?}");
    let score = t.score;
    let t = g.script(&Script::parse(&format!("{} START", g.emu.frames() + 5)).unwrap());
    assert_eq!(t.state, State::GameOver);
    assert!(t.table.contains(&score), "{score} not in {:?}", t.table);

    g.emu.reset();
    let t = (0..10).map(|_| g.frame(0)).last().unwrap();
    assert_eq!(t.state, State::Title);
    assert!(t.table.contains(&score), "after a reset the table is {:?}, without {score}", t.table);
    drop(g);

    // And from the file alone, in a new console.
    let mut g = Game::release();
    g.emu.load_save(&save).unwrap();
    g.emu.reset();
    let t = (0..10).map(|_| g.frame(0)).last().unwrap();
    assert!(t.table.contains(&score), "from the save file the table is {:?}, without {score}", t.table);
    let sram = std::fs::read(&save).unwrap();
    assert_eq!(&sram[..4], b"SSHS");
    println!("score {score} saved: table {:?}", t.table);
}

/// Compares the screen with `tests/reference/NAME.png` pixel for pixel; `UPDATE_REFERENCES=1` rewrites the
/// reference instead. A mismatch leaves the actual screen in target/screenshots/ and fails with the count.
fn matches_reference(emu: &Emulator, name: &str) -> Result<(), String> {
    let reference = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(format!("{name}.png"));
    if std::env::var_os("UPDATE_REFERENCES").is_some() {
        std::fs::create_dir_all(reference.parent().unwrap()).unwrap();
        emu.screenshot(&reference)?;
        return Ok(());
    }
    let decoder =
        png::Decoder::new(std::fs::File::open(&reference).map_err(|e| format!("{}: {e}", reference.display()))?);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let mut expected = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut expected).map_err(|e| e.to_string())?;
    assert_eq!((info.width as usize, info.height as usize, info.color_type), (WIDTH, HEIGHT, png::ColorType::Rgb));
    let actual = emu.screen_rgb();
    let differing = actual.chunks(3).zip(expected.chunks(3)).filter(|(a, b)| a != b).count();
    if differing == 0 {
        return Ok(());
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    std::fs::create_dir_all(&out).unwrap();
    let path = out.join(format!("{name}.actual.png"));
    emu.screenshot(&path)?;
    Err(format!("{name}: {differing} pixels differ from {}; the screen is in {}", reference.display(), path.display()))
}

fn release_twins() -> Twins {
    Twins::open(&common::rom(), &common::elf())
}

/// The scripted game (title, heavy play, the continue prompt) against the reference screenshots, on a clean and on a
/// dirty boot that must match it frame for frame.
#[test]
fn the_scripted_game_shows_the_reference_screens_on_clean_and_on_dirty_ram() {
    let mut failures = Vec::new();
    let mut g = release_twins();
    g.script(&Script::parse("0-89 R").unwrap());
    failures.extend(matches_reference(g.emu(), "title").err());

    // Heavy play: the first busy moment of the bot's game (deterministic: the bot reads the screen, the game
    // seeds its randomness from the frame count).
    let t = play(&mut g, 7_200, true, |_, t, _| {
        t.state == State::Playing && t.enemy_bullets.now >= 20 && t.enemies.now >= 8
    });
    assert_eq!(t.state, State::Playing);
    failures.extend(matches_reference(g.emu(), "play").err());

    // The continue prompt after an idle game, which without a key runs its ten seconds out to the title.
    let mut g = release_twins();
    let mut t = g.script(&Script::parse("30 START").unwrap());
    while t.state != State::GameOver && t.state != State::NameEntry {
        t = g.frame(0);
    }
    assert_eq!((t.leak_checks, t.leak_failures), (1, 0));
    for _ in 0..30 {
        g.frame(0);
    }
    failures.extend(matches_reference(g.emu(), "continue").err());
    let mut waited = 30;
    while t.state != State::Title {
        assert!(waited <= 10 * 60, "the continue prompt did not run out to the title in 10 s: {t:?}");
        t = g.frame(0);
        waited += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn share(cycles: u32) -> f64 {
    f64::from(cycles) * 100.0 / CYCLES_PER_FRAME as f64
}

/// Frames the heavy sessions idle on the title before the bot plays: the boot is over by then, so the session
/// without the prefetch buffer (switched off here) starts from the same moment as the one with it, and the bot
/// plays the same game in both (the boot itself runs ROM code, whose speed the buffer changes).
const BOOT_FRAMES: u32 = 120;

/// The release ROM, booted and idle on its title for [`BOOT_FRAMES`].
fn booted() -> Game {
    let mut g = Game::release();
    for _ in 0..BOOT_FRAMES {
        g.frame(0);
    }
    g
}

/// The session the benchmark report measures: two minutes of the bot playing (continuing after a game over).
#[test]
fn a_heavy_two_minute_session_never_slows_down() {
    let mut g = booted();
    let t = play(&mut g, 7_200, true, |_, _, _| false);
    println!(
        "heavy session: {} frames, stage {}, score {}, {} enemies destroyed, {} game overs",
        g.emu.frames(),
        t.stage,
        t.score,
        t.kills,
        t.game_overs
    );
    println!("max frame: {} cycles = {:.1}% of {CYCLES_PER_FRAME}", t.max_cycles, share(t.max_cycles));
    println!(
        "peaks: player bullets {}/48, enemy bullets {}/192, particles {}/96, enemies {}/32, pick-ups {}/8, sprite slots {}/128",
        t.player_bullets.peak,
        t.enemy_bullets.peak,
        t.particles.peak,
        t.enemies.peak,
        t.pickups.peak,
        t.sprite_slots.peak
    );
    println!("AI heap: peak {} of 3968 bytes, {} fallbacks", t.heap_peak, t.heap_fallbacks);
    assert!(t.last_cycles > 0 && t.last_cycles <= t.max_cycles);
    assert!(u64::from(t.max_cycles) < CYCLES_PER_FRAME, "a frame took {} cycles: the game slowed down", t.max_cycles);
    assert_eq!(t.leak_failures, 0);
    // The IWRAM budget: the deepest stack of the session (measured at each game over) and 2 KB to spare.
    stack_headroom(&common::elf(), t.stack_peak, 2048);
}

/// WAITCNT (GBATEK): the cartridge's wait states, and bit 14, the prefetch buffer.
const WAITCNT: u32 = 0x0400_0204;
const PREFETCH: u16 = 1 << 14;

/// The heavy session again with the cartridge's prefetch buffer off and the ROM's wait states kept (3 and 1,
/// as `__start` sets them): mGBA's model of the prefetch buffer is approximate, and on hardware it can only make
/// ROM code faster than this, so this is the frame budget's safe side (docs/timing.md).
#[test]
fn a_heavy_session_without_the_prefetch_buffer_still_fits_the_frame() {
    let mut g = booted();
    let waitcnt = g.emu.read16(WAITCNT);
    assert_ne!(waitcnt & PREFETCH, 0, "the ROM runs with the prefetch buffer on: WAITCNT {waitcnt:#06x}");
    g.emu.write32(WAITCNT, u32::from(waitcnt & !PREFETCH));
    let t = play(&mut g, 7_200, true, |_, _, _| false);
    assert_eq!(g.emu.read16(WAITCNT), waitcnt & !PREFETCH, "the ROM turned the prefetch buffer back on");
    println!(
        "without prefetch: {} game overs, score {}, max frame {} cycles = {:.1}% of {CYCLES_PER_FRAME}",
        t.game_overs,
        t.score,
        t.max_cycles,
        share(t.max_cycles)
    );
    assert!(u64::from(t.max_cycles) < CYCLES_PER_FRAME, "a frame took {} cycles without prefetch", t.max_cycles);
}

/// xorshift32, for the soak's input.
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
}

/// One soak session of `frames` frames on the debug-assertions build, on a clean or a dirty boot: the telemetry and
/// a hash of the screen after every frame.
fn soak(dirty: bool, frames: u64) -> Vec<(Telemetry, u64)> {
    let mut g =
        if dirty { Game::open_dirty(&debug_elf(), &debug_elf()) } else { Game::open(&debug_elf(), &debug_elf()) };
    let mut rng = Rng(0x50A6_1234);
    let mut keys = 0;
    let mut t = g.frame(0);
    let mut trace = Vec::with_capacity(frames as usize);
    for n in 0..frames {
        if n % 6 == 0 {
            // Any of A, B and the d-pad; START only to leave the title or the end screens, SELECT never (the
            // overlay's).
            keys = rng.next() & (key("A") | key("B") | key("RIGHT") | key("LEFT") | key("UP") | key("DOWN"));
            if matches!(State::of(t.state), Some(State::Title | State::GameOver | State::NameEntry))
                && rng.next().is_multiple_of(4)
            {
                keys |= key("START");
            }
        }
        t = g.frame(keys);
        let mut screen = DefaultHasher::new();
        g.emu.pixels().hash(&mut screen);
        trace.push((t, screen.finish()));
    }
    trace
}

/// `frames` frames of random play on the debug-assertions build: its every frame checks the allocators' invariants
/// and the stack's guard (a broken one panics), and every game over runs the leak check; no VBlank goes without
/// its frame. Twice, side by side: on a clean boot and on a dirty one, which must match it frame for frame. At
/// least `games` games must end.
fn soak_twice(frames: u64, games: u32) {
    let (clean, dirty) = std::thread::scope(|s| {
        let dirty = s.spawn(|| soak(true, frames));
        (soak(false, frames), dirty.join().unwrap())
    });
    if let Some(frame) = (0..clean.len()).find(|&i| clean[i] != dirty[i]) {
        let (a, b) = (&clean[frame], &dirty[frame]);
        let what = if a.0 != b.0 { format!("telemetry {:?} / {:?}", a.0, b.0) } else { "the screen".into() };
        panic!("frame {}: the clean and the dirty boot differ: {what}", frame + 2);
    }
    let t = clean.last().unwrap().0;
    println!(
        "soak (clean and dirty boot alike): {} frames, {} game frames, {} games over, {} leak checks, {} enemies destroyed, heap peak {} B, {} fallbacks, stack peak {} B, {} frames missed",
        clean.len() + 1,
        t.frame,
        t.game_overs,
        t.leak_checks,
        t.kills,
        t.heap_peak,
        t.heap_fallbacks,
        t.stack_peak,
        t.missed_frames
    );
    assert!(t.game_overs >= games, "only {} games in {frames} frames: is the input reaching the game?", t.game_overs);
    assert_eq!(t.leak_checks, t.game_overs);
    assert_eq!(t.leak_failures, 0, "a game over left a pool or the heap not empty, or the heap refused a free");
    // Music on, the debug build's checks included: every VBlank has its frame.
    assert_eq!(t.missed_frames, 0, "the game's loop missed {} VBlanks", t.missed_frames);
    // The debug build's IWRAM holds bigger code and leaves less stack; measured every frame.
    stack_headroom(&debug_elf(), t.stack_peak, 512);
}

/// The short tier's soak (`make test`): 72,000 frames, twenty minutes of emulated play and about a minute of wall
/// time, enough for several games, each ending in a leak check.
#[test]
fn twenty_minutes_of_random_play_with_invariant_checks_leak_nothing_on_clean_and_on_dirty_ram() {
    soak_twice(72_000, 3);
}

/// An hour of emulated play (216,000 frames), in `make test-long`.
#[test]
#[ignore = "an hour of emulated play: make test-long runs it"]
fn an_hour_of_random_play_with_invariant_checks_leaks_nothing_on_clean_and_on_dirty_ram() {
    soak_twice(216_000, 10);
}
