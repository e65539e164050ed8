//! The high-score save as a cartridge meets it: a save cut at every byte (a reset or power loss part-way
//! through the write), garbage in SRAM, and each copy of the table damaged alone. The table is read from the
//! title screen of a fresh boot, as a player sees it, and never from the ROM's own account.
//!
//! The harness cuts a save by letting the first N SRAM byte writes through and dropping the rest until the
//! reset (`Emulator::cut_sram_after`). A save is made from one state of the game (the name entry after the bot
//! made the table) kept with `Emulator::save_state`, each time with another name, so that every save writes a
//! different table.
mod common;

use common::{Console, Game, key, play};
use harness::screen;
use harness::telemetry::State;

/// The title's high-score rows (src/game/hud.rs: rows 9 to 13).
const TABLE_ROWS: std::ops::Range<usize> = 9..14;

/// The table on the title screen after a reset: its five rows as the screen shows them.
fn table_after_reset(g: &mut Game) -> Vec<String> {
    g.emu.reset();
    for _ in 0..10 {
        g.frame(0);
    }
    let lines = screen::text(&g.emu);
    assert!(lines[2].contains("S T A C K S H O T"), "not the title screen:\n{}", screen::dump(&lines));
    lines[TABLE_ROWS].to_vec()
}

/// The name entry, kept to save from again and again.
struct NameEntry {
    state: Vec<u8>,
}

/// What one save did: the SRAM writes it made (cut ones included), the table a reset then shows, and SRAM.
struct Saved {
    writes: u64,
    table: Vec<String>,
    sram: Vec<u8>,
}

impl NameEntry {
    /// Plays with the bot from a blank save until the score makes the table.
    fn reach(g: &mut Game) -> NameEntry {
        let t = play(g, 30_000, false, |_, t, _| t.state == State::NameEntry);
        assert_eq!(t.state, State::NameEntry, "the bot never made the table: {t:?}");
        NameEntry { state: g.emu.save_state() }
    }

    /// From the name entry with SRAM holding `sram`: UP `ups` times on the first letter (a name of its own),
    /// START, with SRAM cut after `cut` writes; then a reset and the title's table.
    fn save(&self, g: &mut Game, sram: &[u8], ups: usize, cut: Option<u64>) -> Saved {
        g.emu.load_state(&self.state);
        g.emu.set_sram(sram).unwrap();
        g.emu.cut_sram_after(cut);
        let before = g.emu.sram_writes();
        for _ in 0..ups {
            g.frame(key("UP"));
            g.frame(0);
        }
        let mut t = g.frame(key("START"));
        for _ in 0..5 {
            t = g.frame(0);
        }
        assert_eq!(t.state, State::GameOver, "START did not end the name entry");
        let writes = g.emu.sram_writes() - before;
        let sram = g.emu.sram();
        Saved { writes, table: table_after_reset(g), sram }
    }
}

/// Saves `ups` from `old` (whose table is `old_table`) cut at every write, and checks each boot shows the old
/// or the new table, never the defaults. Returns the uncut save.
fn cut_everywhere(g: &mut Game, entry: &NameEntry, old: &Saved, ups: usize, defaults: &[String]) -> Saved {
    let new = entry.save(g, &old.sram, ups, None);
    assert_ne!(new.table, old.table, "the new save must change the table");
    assert!(new.writes > 0);
    let mut outcomes = Vec::new();
    for cut in 0..=new.writes {
        let table = entry.save(g, &old.sram, ups, Some(cut)).table;
        let which = if table == old.table {
            "old"
        } else if table == new.table {
            "new"
        } else if table == defaults {
            panic!(
                "save {} cut after {cut} of {} SRAM writes: the title shows the defaults\n{}",
                ups + 1,
                new.writes,
                table.join("\n")
            )
        } else {
            panic!(
                "save {} cut after {cut} of {} SRAM writes: neither table\n{}",
                ups + 1,
                new.writes,
                table.join("\n")
            )
        };
        outcomes.push(which);
    }
    assert_eq!(outcomes.last(), Some(&"new"), "the whole write must load the new table");
    println!(
        "save {}: {} SRAM writes; a cut after 0..={} of them loads: {}",
        ups + 1,
        new.writes,
        new.writes,
        outcomes.join(" ")
    );
    new
}

#[test]
fn a_save_cut_at_any_byte_loads_the_old_or_the_new_table_and_damage_loads_the_other_copy() {
    let mut g = Game::release();
    let defaults = table_after_reset(&mut g);
    let blank = g.emu.sram();
    assert_eq!(blank.len(), 32 << 10, "the ROM's boot must have set up 32 KB of SRAM");
    assert!(defaults[0].contains("ACE") && defaults[0].contains("50000"), "{}", defaults.join("\n"));

    let entry = NameEntry::reach(&mut g);
    let first = entry.save(&mut g, &blank, 0, None);
    assert_ne!(first.table, defaults);
    // The second save writes beside the first; the third over the older of the two.
    let second = cut_everywhere(&mut g, &entry, &first, 1, &defaults);
    let third = cut_everywhere(&mut g, &entry, &second, 2, &defaults);

    // Every byte the saves wrote, damaged alone, loads one of the two tables: the other copy survives.
    let used: Vec<usize> = (0..third.sram.len()).filter(|&i| third.sram[i] != blank[i]).collect();
    // The first byte whose damage loads the older table (a byte of the newest copy), and the reverse.
    let (mut loads_older, mut loads_newest) = (None, None);
    for &at in &used {
        let mut damaged = third.sram.clone();
        damaged[at] ^= 0xA5;
        g.emu.set_sram(&damaged).unwrap();
        let table = table_after_reset(&mut g);
        if table == second.table {
            loads_older.get_or_insert(at);
        } else if table == third.table {
            loads_newest.get_or_insert(at);
        } else {
            panic!("byte {at} damaged: the title shows neither saved table\n{}", table.join("\n"));
        }
    }
    let (Some(in_newest), Some(in_older)) = (loads_older, loads_newest) else {
        panic!("damage loaded only one table (the older from {loads_older:?}, the newest from {loads_newest:?})")
    };
    // Both copies damaged: the defaults, never a mix.
    let mut both = third.sram.clone();
    both[in_newest] ^= 0xA5;
    both[in_older] ^= 0xA5;
    g.emu.set_sram(&both).unwrap();
    assert_eq!(table_after_reset(&mut g), defaults, "both copies damaged (bytes {in_newest} and {in_older})");
    println!(
        "{} bytes in use; damage in the newest copy (first at byte {in_newest}) loads the older, and the reverse",
        used.len()
    );
}

#[test]
fn garbage_in_sram_loads_the_defaults_and_a_save_over_it_loads_back() {
    let mut g = Game::release();
    let defaults = table_after_reset(&mut g);
    let size = g.emu.sram().len();
    let mut x = 0x2545_F491_u32;
    let garbage: Vec<u8> = (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    g.emu.set_sram(&garbage).unwrap();
    assert_eq!(table_after_reset(&mut g), defaults, "garbage must load as the defaults");

    let entry = NameEntry::reach(&mut g);
    let saved = entry.save(&mut g, &garbage, 0, None);
    assert_ne!(saved.table, defaults, "a save over garbage must load back");
}
