//! `bench-report ARM_ELF THUMB_ELF GAME_BUILD_ELF GAME_ELF KEYS SCENE_ELF OUT.md CHART.png MAP.png`: runs the
//! benchmark ROM's three builds (ARM in IWRAM, Thumb in ROM, and the game's: our heap's rare paths Thumb in ROM)
//! until each prints `@@done`, reads every allocator's code bytes from their ELFs, plays the game on the key
//! script for two minutes and runs the bullet-hell scene (`fixtures/bullet_hell.rs`), then writes the report as
//! Markdown with the goal table, the chart and the heap map as PNGs, and prints the report. `bench-report record …` records the game's heap traffic as a trace (`record.rs`);
//! `bench-report traces DIR` writes the generated traces (`traces.rs`).
//!
//! The ROM's lines (besides the `@@panic` and `@@done` of every StackShot ROM):
//! - `@@table ID|TITLE|COLUMN|COLUMN...` starts a table;
//! - `@@row ID|CELL|CELL...` adds a row to it;
//! - `@@note ID|TEXT` adds to the paragraph under it (lines are at most 255 bytes, so a note takes several);
//! - `@@bar CATEGORY|SERIES|CYCLES` adds a bar to the chart (bars grouped by category, one colour a series);
//! - `@@map TRACE|ALLOCATOR|EVENTS` adds to where an allocator put a trace's blocks (`map.rs`).

mod chart;
mod code;
mod game_build;
mod goals;
mod map;
mod music;
mod record;
mod trace_file;
mod traces;

use harness::elf::Elf;
use harness::emulator::{CYCLES_PER_FRAME, Emulator};
use harness::keys::Script;
use harness::protocol::Message;
use harness::telemetry::{Probe, State, Telemetry};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// A benchmark ROM may run for this many frames (about 10 minutes of GBA time) before it counts as hung.
const FRAME_LIMIT: u64 = 36_000;

#[derive(Default)]
pub struct Table {
    pub id: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
    /// A list after the notes' paragraph, an item each, led by a paragraph of its own (when there are items).
    pub items_lead: String,
    pub items: Vec<String>,
}

impl Table {
    /// The cell of `row` (named by its first cell) in `column`.
    pub fn cell(&self, row: &str, column: &str) -> Result<&str, String> {
        self.cell_in(self.row(row)?, column)
    }

    /// The number in that cell.
    pub fn number(&self, row: &str, column: &str) -> Result<u32, String> {
        self.number_in(self.row(row)?, column)
    }

    /// The first row whose first cell is `name`.
    fn row(&self, name: &str) -> Result<&[String], String> {
        self.rows.iter().find(|r| r[0] == name).map(Vec::as_slice).ok_or(format!("table {}: no row {name}", self.id))
    }

    /// The cell in `column` of `row`, one of this table's rows (for a table whose first cells repeat).
    pub fn cell_in<'a>(&self, row: &'a [String], column: &str) -> Result<&'a str, String> {
        let c =
            self.columns.iter().position(|c| c == column).ok_or(format!("table {}: no column {column}", self.id))?;
        row.get(c).map(String::as_str).ok_or(format!("table {}: row {} is short", self.id, row[0]))
    }

    /// The number in that cell.
    pub fn number_in(&self, row: &[String], column: &str) -> Result<u32, String> {
        let cell = self.cell_in(row, column)?;
        cell.parse().map_err(|_| format!("table {}: `{cell}` ({}, {column}) is not a number", self.id, row[0]))
    }
}

pub struct Bar {
    pub category: String,
    pub series: String,
    pub cycles: f64,
}

/// What one build of the benchmark ROM printed.
pub struct Build {
    pub name: &'static str,
    pub tables: Vec<Table>,
    pub bars: Vec<Bar>,
    pub maps: Vec<map::Placements>,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [record, kind, elf, script, frames, out] if record == "record" => match frames.parse() {
            Ok(frames) => record::record(kind, Path::new(elf), Path::new(script), frames, Path::new(out)),
            Err(_) => Err(format!("FRAMES `{frames}` is not a number")),
        },
        [traces, dir] if traces == "traces" => traces::write(Path::new(dir)),
        [arm, thumb, game_build, game, keys, scene, music, markdown, chart, map] => run(
            [Path::new(arm), Path::new(thumb), Path::new(game_build)],
            [Path::new(game), Path::new(keys), Path::new(scene), Path::new(music)],
            [Path::new(markdown), Path::new(chart), Path::new(map)],
        ),
        _ => {
            eprintln!(
                "usage: bench-report ARM_ELF THUMB_ELF GAME_BUILD_ELF GAME_ELF KEYS SCENE_ELF MUSIC_ELF OUT.md CHART.png MAP.png\n\
                 \x20      bench-report record ai|bullet-hell ELF SCRIPT FRAMES OUT.txt\n\
                 \x20      bench-report traces DIR"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    [arm, thumb, game_build]: [&Path; 3],
    [game, keys, scene, music_elf]: [&Path; 4],
    [markdown, chart_png, map_png]: [&Path; 3],
) -> Result<(), String> {
    let builds = [collect("ARM/IWRAM", arm)?, collect("Thumb/ROM", thumb)?];
    let game_heap = collect("game's", game_build)?;
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let mut text = String::from("# Benchmarks\n\n");
    text += "Measured by `make bench`: the benchmark ROM (`bench/`) runs in the headless mGBA harness, which models \
             the GBA's ARM7TDMI at 16.78 MHz with its memory wait states; every figure is a count of CPU cycles or \
             bytes, exactly reproducible. The ROM is built with `opt-level = 3`, LTO, and the GBATEK-recommended \
             wait states (ROM 3/1 with prefetch).\n\n";
    text += "Every allocator, ours and the peers, is measured in the same two builds, and compared only within one. \
             In each, an operation is inlined into the timing function of that build (but for our heap's \
             out-of-line paths, listed below), so that a figure is the allocator's own code and not a call from \
             elsewhere. The data (the pools, the 4 KB heap region, \
             slab's and thunderdome's storage) is in IWRAM in both. The timing function restarts timer 1 before \
             the operation and reads it after, each in an asm block that builds the timer's address itself, and \
             subtracts what an empty operation measures (`stackshot_platform::cycles`): neither the reading nor \
             the address is held in a register across the operation. The compiler can still move plain \
             arithmetic across the blocks (they order memory accesses only), and the place for the result stays \
             in a register: a few cycles either way, by the code it generates, so a verdict within about five \
             cycles could turn with other code generation.\n\n\
             - **ARM/IWRAM** (`cargo build --profile bench-arm --features arm-iwram -p stackshot-bench`): the timing \
             function is ARM code in IWRAM, and so is everything inlined into it. LLVM will not inline Thumb code \
             into an ARM function, so rustc's MIR inliner does it first, forced (`-Zinline-mir` with raised \
             thresholds, and `-Zcross-crate-inline-threshold=always` for the peers' crates: the profiles in \
             `Cargo.toml`). The benchmark crate itself is ARM code, so that what rustc instantiates in it for the \
             inlined code is ARM too. Our heap's out-of-line paths (the tree's search and splits, bad requests and \
             alignments above a block, the map work of runs over two words, merges with a tree neighbour, the \
             tree's insert, remove and rotation, the counting of refusals) are ARM functions in IWRAM of their own \
             (the crate's `iwram-all` feature), so ours pays their calls where the peers are inlined whole; the count-leading-zeros helper that talc and rlsf call \
             (`__clzsi2`) is an ARM function in IWRAM (`bench/src/helpers.rs`). \
             `tools/harness/tests/bench.rs` reads this build's ELF and fails if a timed function reaches ROM \
             other than on a panic's path (which stops the run): linked_list_allocator's free and slab's and \
             thunderdome's code keep such paths. The one other call into ROM left is slab's and thunderdome's \
             `RawVec::grow_one`, which grows their storage; it costs nothing here, as their storage is reserved \
             up front and no measured operation grows it (checked).\n\
             - **Thumb/ROM** (`--profile bench-thumb`, no feature): the same, all Thumb code in ROM, our heap's \
             out-of-line paths and compiler_builtins' `__clzsi2` included. Our heap's free is one of those paths \
             here, a function of its own without the `iwram` feature (inlined into its caller, its values spill: \
             `Heap::free` says by how much), so ours pays that call too.\n\
             - **The game's build** (`--profile bench-game --features arm-game`): the ARM/IWRAM build with our \
             heap as the game links it (the crate's `iwram` alone): its rare paths Thumb code in ROM. Only our \
             heap differs, so only its figures are compared, with the ARM/IWRAM build's (\"The game's build\", \
             below, with every allocator's code bytes).\n\n\
             Which figures depend on ROM timing ([timing.md](timing.md)): the ARM/IWRAM tables run from IWRAM on \
             data in IWRAM, one-cycle memory that mGBA models exactly, so they hold on hardware as printed. The \
             Thumb/ROM tables and the game's frame figures fetch code from the cartridge, where mGBA's model of \
             the prefetch buffer is approximate: take them as close, and the game's frame budget from \
             timing.md's prefetch-off bound.\n\n";
    writeln!(text, "![median cycles per operation, ARM/IWRAM build]({})\n", name(chart_png)).unwrap();
    for build in &builds {
        writeln!(text, "## {} build\n", build.name).unwrap();
        for table in &build.tables {
            text += &render(table, "###");
        }
    }
    writeln!(text, "## The game's build\n").unwrap();
    text += &render(&game_build::table(&builds[0], &game_heap)?, "###");
    text += &render(&code::table([arm, game_build, thumb], game)?, "###");
    let pictured = map::draw(map_png, &builds[0])?;
    writeln!(text, "## The heap over time\n\n{pictured}\n\n![heap map]({})\n", name(map_png)).unwrap();
    text += "## Goals\n\nEach compares figures of one build only.\n\n";
    for table in goals::tables(&builds)? {
        text += &render(&table, "###");
    }
    let (frames, session, hell) = game_frames(game, keys, scene)?;
    text += &render(&frames, "##");
    text += &render(&goals::frames(&frames)?, "###");
    text += &render(&music::table(music_elf, game, [(SESSION, &session), (SCENE, &hell)])?, "##");
    std::fs::write(markdown, &text).map_err(|e| format!("{}: {e}", markdown.display()))?;
    chart::draw(chart_png, &builds[0].bars)?;
    print!("{text}");
    println!("wrote {}, {} and {}", markdown.display(), chart_png.display(), map_png.display());
    Ok(())
}

/// Runs one build of the benchmark ROM to its `@@done` and gathers what it printed.
fn collect(name: &'static str, rom: &Path) -> Result<Build, String> {
    let mut emu = Emulator::open(rom)?;
    let mut build = Build { name, tables: Vec::new(), bars: Vec::new(), maps: Vec::new() };
    while emu.frames() < FRAME_LIMIT {
        emu.run_frame();
        for line in emu.take_log() {
            let text = line.text;
            match Message::parse(&text) {
                Message::Done => return Ok(build),
                Message::Panic(message) => return Err(format!("the {name} benchmark ROM panicked {message}")),
                _ => {}
            }
            let Some((kind, rest)) = text.strip_prefix("@@").and_then(|t| t.split_once(' ')) else {
                eprintln!("    | {text}");
                continue;
            };
            let fields: Vec<String> = rest.split('|').map(str::to_string).collect();
            let tables = &mut build.tables;
            let mut table =
                |id: &str| tables.iter_mut().position(|t| t.id == id).ok_or(format!("unknown table {id} in `{text}`"));
            match (kind, fields.as_slice()) {
                ("table", [id, title, columns @ ..]) => build.tables.push(Table {
                    id: id.clone(),
                    title: title.clone(),
                    columns: columns.to_vec(),
                    ..Table::default()
                }),
                ("row", [id, cells @ ..]) => {
                    let i = table(id)?;
                    build.tables[i].rows.push(cells.to_vec());
                }
                ("note", [id, note]) => {
                    let i = table(id)?;
                    build.tables[i].notes.push(note.clone());
                }
                ("bar", [category, series, cycles]) => build.bars.push(Bar {
                    category: category.clone(),
                    series: series.clone(),
                    cycles: cycles.parse().map_err(|_| format!("bad bar value in `{text}`"))?,
                }),
                ("map", [trace, allocator, events]) => map::add(&mut build.maps, trace, allocator, events)?,
                _ => return Err(format!("cannot read `{text}`")),
            }
        }
    }
    Err(format!("the {name} ROM printed no @@done within {FRAME_LIMIT} frames"))
}

/// Frames of the game session: two minutes.
const GAME_FRAMES: u64 = 7_200;
/// Frames of play of the bullet-hell scene: its bomb comes at the 120th (`src/game/scene.rs`).
const SCENE_FRAMES: usize = 240;

/// The game table's rows, named for the goals.
pub const SESSION: &str = "two-minute session";
pub const SCENE: &str = "bullet-hell scene";
pub const OVERLAY: &str = "overlay open";
/// The column of the overlay's own cost in the game table.
pub const OVERLAY_OWN: &str = "the overlay's own max";
/// The column of a frame's bound with the music: its worst frame and the music's worst VBlank.
pub const WITH_MUSIC: &str = "max and music's worst";
/// The column of the VBlanks the game's loop did not wait for.
pub const MISSED: &str = "frames missed";
/// The frame of the overlay's session in which SELECT with R opens the overlay: once the game has begun.
const OVERLAY_AT: u64 = 60;

/// The keys of frame `frame` of a session on `script`, after a frame that left telemetry `t`: the script's,
/// and START every 20 frames on the game-over screen (a continue while credits are left, else the title) and
/// on the title once a game has ended, as a player who keeps playing presses it.
pub fn session_keys(script: &Script, frame: u64, t: &Telemetry) -> u32 {
    let again = t.state == State::GameOver || (t.state == State::Title && t.game_overs > 0);
    let start = if again && frame % 20 == 10 { harness::keys::bit("START").unwrap_or(0) } else { 0 };
    script.keys_at(frame) | start
}

/// Cycles of each frame of play (telemetry's `last_cycles`) of the ROM `elf` with `keys` held each frame (given
/// the frame and the telemetry the frame before left), until `frames` frames of play or `limit` frames in all;
/// and the telemetry at the end.
fn frames_of_play(
    elf: &Path,
    keys: impl Fn(u64, &Telemetry) -> u32,
    frames: usize,
    limit: u64,
) -> Result<(Vec<u32>, Telemetry), String> {
    let probe = Probe::new(&Elf::read(elf)?)?;
    let mut emu = Emulator::open(elf)?;
    let mut cycles = Vec::new();
    let mut t = Telemetry::default();
    for frame in 0..limit {
        emu.set_keys(keys(frame, &t));
        emu.run_frame();
        t = probe.read(&emu);
        if t.state == State::Playing {
            cycles.push(t.last_cycles);
        }
        if cycles.len() == frames {
            break;
        }
    }
    if cycles.is_empty() {
        return Err(format!("{} never reached play", elf.display()));
    }
    Ok((cycles, probe.read(&emu)))
}

/// Plays the game on `keys` for two minutes, again with the allocator overlay open, and runs the bullet-hell
/// scene, and tabulates the cycles each frame of play took; for the overlay, also its own cycles: the two
/// sessions' difference, frame for frame (the game ignores SELECT and R, so they play alike).
fn game_frames(elf: &Path, keys: &Path, scene: &Path) -> Result<(Table, Telemetry, Telemetry), String> {
    let script = Script::parse(&std::fs::read_to_string(keys).map_err(|e| format!("{}: {e}", keys.display()))?)?;
    let (session, t) = frames_of_play(elf, |f, t| session_keys(&script, f, t), usize::MAX, GAME_FRAMES)?;
    let chord = harness::keys::bit("SELECT").unwrap_or(0) | harness::keys::bit("R").unwrap_or(0);
    let open_at = |f| if f == OVERLAY_AT { chord } else { 0 };
    let (open, o) = frames_of_play(elf, |f, t| session_keys(&script, f, t) | open_at(f), usize::MAX, GAME_FRAMES)?;
    if (open.len(), o.score, o.game_overs) != (session.len(), t.score, t.game_overs) {
        return Err(format!(
            "the session with the overlay open played otherwise: {} frames of play, score {}, {} game overs, not {}, {}, {}",
            open.len(),
            o.score,
            o.game_overs,
            session.len(),
            t.score,
            t.game_overs
        ));
    }
    let own = open.iter().zip(&session).map(|(a, b)| a.saturating_sub(*b)).max().unwrap_or(0);
    let (hell, h) = frames_of_play(scene, |_, _| 0, SCENE_FRAMES, 2 * SCENE_FRAMES as u64)?;
    let share = |c: u32| format!("{c} ({:.1}%)", f64::from(c) * 100.0 / CYCLES_PER_FRAME as f64);
    let row = |name: String, what: &str, mut cycles: Vec<u32>, own: Option<u32>, t: &Telemetry| {
        cycles.sort_unstable();
        let max = cycles[cycles.len() - 1];
        vec![
            name,
            what.into(),
            cycles.len().to_string(),
            share(cycles[cycles.len() / 2]),
            share(max),
            own.map_or("–".into(), share),
            t.game_overs.to_string(),
            share(t.music_max_cycles),
            share(max + t.music_max_cycles),
            t.missed_frames.to_string(),
        ]
    };
    Ok((
        Table {
            id: "game".into(),
            title: "The game: cycles per frame of play".into(),
            columns: [
                "session",
                "build",
                "frames of play",
                "median",
                "max",
                OVERLAY_OWN,
                "game overs",
                "music's worst VBlank",
                WITH_MUSIC,
                MISSED,
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![
                row(
                    format!("{SESSION}: {} (a bot's play)", keys.display()),
                    "release; hot paths ARM in IWRAM, the rest Thumb in ROM",
                    session,
                    None,
                    &t,
                ),
                row(
                    format!("{OVERLAY}: the same session, SELECT with R at frame {OVERLAY_AT}"),
                    "the same ROM",
                    open,
                    Some(own),
                    &o,
                ),
                row(
                    format!("{SCENE}: every pool full, a bomb and 32 enemies destroyed in frame 120"),
                    "the same code (fixtures/bullet_hell.rs)",
                    hell,
                    None,
                    &h,
                ),
            ],
            notes: vec![format!(
                "A frame is {CYCLES_PER_FRAME} cycles. Counted from the start of the frame's work (after the VBlank \
             copy to OAM) to its end, by the game's own stopwatch, with the music on. The music runs in the \
             VBlank handler, outside that count: its worst VBlank is beside it, and the sum of the two bounds a \
             frame's whole work. A frame missed is a VBlank the game's loop did not wait for (telemetry's \
             `missed_frames`); the scene's count includes its own refills of every pool from empty, before the \
             stopwatch, at its first frame and after the bomb. The overlay's own cost is the most a frame of the session with it open took over \
             the same frame without it. Session peaks: enemy bullets {}, particles {}, \
             sprite slots {}, heap {} bytes. Scene peaks: player bullets {}, enemy bullets {}, particles {}, \
             enemies {}, sprite slots {}, heap {} bytes (the scene tops its pools up before each frame's stopwatch \
             starts).",
                t.enemy_bullets.peak,
                t.particles.peak,
                t.sprite_slots.peak,
                t.heap_peak,
                h.player_bullets.peak,
                h.enemy_bullets.peak,
                h.particles.peak,
                h.enemies.peak,
                h.sprite_slots.peak,
                h.heap_peak
            )],
            ..Table::default()
        },
        t,
        h,
    ))
}

/// A table as Markdown under a heading of `level` (`##`, `###`).
pub fn render(table: &Table, level: &str) -> String {
    let mut out = format!(
        "{level} {}\n\n| {} |\n|{}\n",
        table.title,
        table.columns.join(" | "),
        " --- |".repeat(table.columns.len())
    );
    for row in &table.rows {
        writeln!(out, "| {} |", row.join(" | ")).unwrap();
    }
    // A note arrives in lines of at most 255 bytes (mGBA's limit); a table's notes make one paragraph.
    if !table.notes.is_empty() {
        write!(out, "\n{}\n", table.notes.join(" ")).unwrap();
    }
    if !table.items.is_empty() {
        write!(out, "\n{}\n\n", table.items_lead).unwrap();
        for item in &table.items {
            writeln!(out, "- {item}").unwrap();
        }
    }
    out.push('\n');
    out
}
