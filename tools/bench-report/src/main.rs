//! `bench-report BENCH_ELF GAME_ELF KEYS OUT.md CHART.png`: runs the benchmark ROM until it prints `@@done`, plays
//! the game on the key script for two minutes, then writes the tables as Markdown and the chart as a PNG, and
//! prints the tables. `bench-report record …` records the game's heap
//! traffic for the benchmark to replay (see `record.rs`).
//!
//! The ROM's lines (besides the `@@panic` and `@@done` of every StackShot ROM):
//! - `@@table ID|TITLE|COLUMN|COLUMN...` starts a table;
//! - `@@row ID|CELL|CELL...` adds a row to it;
//! - `@@note ID|TEXT` adds to the paragraph under it (lines are at most 255 bytes, so a note takes several);
//! - `@@bar CATEGORY|SERIES|CYCLES` adds a bar to the chart (bars grouped by category, one colour a series).

mod chart;
mod record;

use harness::elf::Elf;
use harness::emulator::{CYCLES_PER_FRAME, Emulator};
use harness::keys::Script;
use harness::protocol::Message;
use harness::telemetry::{Probe, state};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// The benchmark ROM may run for this many frames (about 10 minutes of GBA time) before it counts as hung.
const FRAME_LIMIT: u64 = 36_000;

#[derive(Default)]
struct Table {
    id: String,
    title: String,
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    notes: Vec<String>,
}

pub struct Bar {
    pub category: String,
    pub series: String,
    pub cycles: f64,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [record, elf, script, frames, out] if record == "record" => match frames.parse() {
            Ok(frames) => record::record(Path::new(elf), Path::new(script), frames, Path::new(out)),
            Err(_) => Err(format!("FRAMES `{frames}` is not a number")),
        },
        [rom, game, keys, markdown, png] => {
            run(Path::new(rom), Path::new(game), Path::new(keys), Path::new(markdown), Path::new(png))
        }
        _ => {
            eprintln!(
                "usage: bench-report BENCH_ELF GAME_ELF KEYS OUT.md CHART.png | bench-report record ELF SCRIPT FRAMES OUT.txt"
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

fn run(rom: &Path, game: &Path, keys: &Path, markdown: &Path, png: &Path) -> Result<(), String> {
    let (mut tables, bars) = collect(rom)?;
    tables.push(game_frames(game, keys)?);
    let mut text = String::from("# Benchmarks\n\n");
    text += "Measured by `make bench`: the benchmark ROM (`bench/`) runs in the headless mGBA harness, which models \
             the GBA's ARM7TDMI at 16.78 MHz with its memory wait states; every figure is a count of CPU cycles or \
             bytes, exactly reproducible. The ROM is built with `opt-level = 3`, LTO, and the GBATEK-recommended \
             wait states (ROM 3/1 with prefetch). Each table says what ran as ARM in IWRAM and what as Thumb in ROM.\n\n";
    let chart_name = png.file_name().and_then(|n| n.to_str()).unwrap_or("benchmarks.png");
    writeln!(text, "![median cycles per operation]({chart_name})\n").unwrap();
    for table in &tables {
        text += &render(table);
    }
    std::fs::write(markdown, &text).map_err(|e| format!("{}: {e}", markdown.display()))?;
    chart::draw(png, &bars)?;
    print!("{text}");
    println!("wrote {} and {}", markdown.display(), png.display());
    Ok(())
}

fn collect(rom: &Path) -> Result<(Vec<Table>, Vec<Bar>), String> {
    let mut emu = Emulator::open(rom)?;
    let mut tables: Vec<Table> = Vec::new();
    let mut bars = Vec::new();
    while emu.frames() < FRAME_LIMIT {
        emu.run_frame();
        for line in emu.take_log() {
            let text = line.text;
            match Message::parse(&text) {
                Message::Done => return Ok((tables, bars)),
                Message::Panic(message) => return Err(format!("the benchmark ROM panicked {message}")),
                _ => {}
            }
            let Some((kind, rest)) = text.strip_prefix("@@").and_then(|t| t.split_once(' ')) else {
                eprintln!("    | {text}");
                continue;
            };
            let fields: Vec<String> = rest.split('|').map(str::to_string).collect();
            let table = |tables: &mut Vec<Table>, id: &str| tables.iter_mut().position(|t| t.id == id);
            match (kind, fields.as_slice()) {
                ("table", [id, title, columns @ ..]) => {
                    tables.push(Table { id: id.clone(), title: title.clone(), columns: columns.to_vec(), ..Table::default() })
                }
                ("row", [id, cells @ ..]) => {
                    let i = table(&mut tables, id).ok_or_else(|| format!("a row for unknown table {id}"))?;
                    tables[i].rows.push(cells.to_vec());
                }
                ("note", [id, note]) => {
                    let i = table(&mut tables, id).ok_or_else(|| format!("a note for unknown table {id}"))?;
                    tables[i].notes.push(note.clone());
                }
                ("bar", [category, series, cycles]) => bars.push(Bar {
                    category: category.clone(),
                    series: series.clone(),
                    cycles: cycles.parse().map_err(|_| format!("bad bar value in `{text}`"))?,
                }),
                _ => return Err(format!("cannot read `{text}`")),
            }
        }
    }
    Err(format!("no @@done within {FRAME_LIMIT} frames"))
}

/// Frames of the game session: two minutes.
const GAME_FRAMES: u64 = 7_200;

/// Plays the game on `keys` and tabulates the cycles each frame of play took (telemetry's `last_cycles`).
fn game_frames(elf: &Path, keys: &Path) -> Result<Table, String> {
    let script = Script::parse(&std::fs::read_to_string(keys).map_err(|e| format!("{}: {e}", keys.display()))?)?;
    let probe = Probe::new(&Elf::read(elf)?)?;
    let mut emu = Emulator::open(elf)?;
    let mut cycles = Vec::new();
    for frame in 0..GAME_FRAMES {
        emu.set_keys(script.keys_at(frame));
        emu.run_frame();
        let t = probe.read(&emu);
        if t.state == state::PLAYING {
            cycles.push(t.last_cycles);
        }
    }
    if cycles.is_empty() {
        return Err("the game never reached play".into());
    }
    let t = probe.read(&emu);
    cycles.sort_unstable();
    let share = |c: u32| format!("{c} ({:.1}%)", f64::from(c) * 100.0 / CYCLES_PER_FRAME as f64);
    Ok(Table {
        id: "game".into(),
        title: "The game: cycles per frame of play".into(),
        columns: ["session", "build", "frames of play", "median", "max", "game overs"].map(String::from).to_vec(),
        rows: vec![vec![
            format!("{} (two minutes)", keys.display()),
            "release; hot paths ARM in IWRAM, the rest Thumb in ROM".into(),
            cycles.len().to_string(),
            share(cycles[cycles.len() / 2]),
            share(cycles[cycles.len() - 1]),
            t.game_overs.to_string(),
        ]],
        notes: vec![format!(
            "A frame is {CYCLES_PER_FRAME} cycles. Counted from the start of the frame's work (after the VBlank \
             copy to OAM) to its end, by the game's own stopwatch; peaks: enemy bullets {}, particles {}, sprite \
             slots {}, heap {} bytes.",
            t.enemy_bullets.peak, t.particles.peak, t.sprite_slots.peak, t.heap_peak
        )],
    })
}

fn render(table: &Table) -> String {
    let mut out = format!("## {}\n\n| {} |\n|{}\n", table.title, table.columns.join(" | "), " --- |".repeat(table.columns.len()));
    for row in &table.rows {
        writeln!(out, "| {} |", row.join(" | ")).unwrap();
    }
    // A note arrives in lines of at most 255 bytes (mGBA's limit); a table's notes make one paragraph.
    if !table.notes.is_empty() {
        write!(out, "\n{}\n", table.notes.join(" ")).unwrap();
    }
    out.push('\n');
    out
}
