//! The game's build against the ARM/IWRAM build: our heap's cycles when only its common paths are ARM code in
//! IWRAM and its rare paths Thumb code in ROM (the crate's `iwram`, as the game links it), beside every path in
//! IWRAM (`iwram-all`, the fair build), on the same traces.

use crate::{Build, Table};
use harness::emulator::CYCLES_PER_FRAME;

/// The trace tables, by id, in the report's order.
const TRACES: [&str; 5] = ["AI scratch", "bullet hell", "agb Vec<u8>", "random mix", "adversarial"];
const OURS: &str = "tree-heap (ours)";
/// Each figure the table compares: the trace tables' column, and how the table names it.
const FIGURES: [(&str, &str); 4] = [
    ("alloc median", "alloc median"),
    ("alloc max", "alloc max"),
    ("free median", "free median"),
    ("free max", "free max"),
];

fn table_of<'a>(build: &'a Build, id: &str) -> Result<&'a Table, String> {
    build.tables.iter().find(|t| t.id == id).ok_or(format!("the {} build printed no table {id}", build.name))
}

/// A cell of both builds: the ARM/IWRAM figure, the game's build's, and the difference.
fn pair(all: u32, game: u32) -> String {
    let d = i64::from(game) - i64::from(all);
    if d == 0 { format!("{all} / {game}") } else { format!("{all} / {game} ({d:+})") }
}

/// The table, and a note on what the slowest operations cost the game.
pub fn table(arm: &Build, game: &Build) -> Result<Table, String> {
    let mut rows = Vec::new();
    let mut slowest = (0, String::new());
    for id in TRACES {
        let (a, g) = (table_of(arm, id)?, table_of(game, id)?);
        let mut row = vec![id.to_string()];
        for (column, _) in FIGURES {
            let (x, y) = (a.number(OURS, column)?, g.number(OURS, column)?);
            row.push(pair(x, y));
            if column.ends_with("max") && y > slowest.0 {
                slowest = (y, format!("the {id} trace's slowest {}", &column[..column.len() - 4]));
            }
        }
        rows.push(row);
    }
    let (a, g) = (table_of(arm, "worst case")?, table_of(game, "worst case")?);
    let (last_a, last_g) = (a.rows.last().ok_or("no worst-case row")?, g.rows.last().ok_or("no worst-case row")?);
    let runs = &last_a[0];
    let (alloc_a, alloc_g) = (a.number_in(last_a, "slowest alloc")?, g.number_in(last_g, "slowest alloc")?);
    let (free_a, free_g) = (a.number_in(last_a, "slowest free")?, g.number_in(last_g, "slowest free")?);
    rows.push(vec![
        format!("worst case, {runs} free runs in the tree"),
        "–".into(),
        pair(alloc_a, alloc_g),
        "–".into(),
        pair(free_a, free_g),
    ]);
    let share = |c: u32| format!("{:.2}%", f64::from(c) * 100.0 / CYCLES_PER_FRAME as f64);
    let mut columns = vec!["trace".to_string()];
    columns.extend(FIGURES.map(|(_, name)| format!("{name}: ARM/IWRAM / game's build")));
    Ok(Table {
        id: "game build".into(),
        title: "The game's build: our heap with its rare paths in ROM, cycles".into(),
        columns,
        rows,
        notes: vec![format!(
            "Our heap in the benchmark's ARM/IWRAM build (every path ARM code in IWRAM: the crate's `iwram-all`) \
             and in the game's build (`cargo build --profile bench-game --features arm-game -p stackshot-bench`: \
             the crate's `iwram` alone, as the game links it: the bins, the top and the frees with no tree \
             neighbour ARM code in IWRAM, the tree's search, insert, remove and rotation, merges with a tree \
             neighbour, over-aligned requests and the map work of runs over two words Thumb code in ROM, called \
             through the linker's veneers), the same traces on the same region; in brackets the game's build's \
             difference. The medians are the common paths, the same code in both. A maximum is a rare path, \
             slower from ROM: in the traces the slowest is {}, {} cycles, {} of a frame's {CYCLES_PER_FRAME}; \
             the heap at its worst ({runs} tree runs) takes {} cycles to allocate and {} to free, {} and {} of a \
             frame. The game's own frames, below, are measured on this build.",
            slowest.1,
            slowest.0,
            share(slowest.0),
            alloc_g,
            free_g,
            share(alloc_g),
            share(free_g),
        )],
        ..Table::default()
    })
}
