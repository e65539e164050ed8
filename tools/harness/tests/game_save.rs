//! The save as a cartridge meets it: a save cut at every byte (a reset or power loss part-way through the
//! write), garbage in SRAM, each copy of the record damaged alone, and a save of the layout before the settings
//! (version 2) loading its scores and surviving the first save over it cut anywhere. The table is read from the
//! title screen of a fresh boot, as a player sees it, and never from the ROM's own account; the settings, which
//! no screen shows yet, from the SRAM the ROM wrote.
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

/// Where the copies of the record start in SRAM, and a version 3 record's version byte, volume levels (music,
/// effects) and CRC, as src/save.rs's docs lay it out.
const COPIES: [usize; 2] = [0, 64];
const VERSION_AT: usize = 4;
const SETTINGS_AT: usize = 44;
const BODY_BYTES: usize = 46;

/// CRC-16/CCITT-FALSE (polynomial 0x1021, start 0xFFFF), the record's, written again here from its definition.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0xFFFF_u16;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// A version 2 record, as the ROM up to a4528b8 wrote it: the magic `SSHS`, 2, the sequence number, the five
/// entries (3 name bytes, the score in 4 bytes, little-endian), and a CRC-16 of those 44 bytes.
fn version_2_record(sequence: u32, entries: [(&[u8; 3], u32); 5]) -> Vec<u8> {
    let mut bytes = b"SSHS\x02".to_vec();
    bytes.extend(sequence.to_le_bytes());
    for (name, score) in entries {
        bytes.extend(name);
        bytes.extend(score.to_le_bytes());
    }
    bytes.extend(crc16(&bytes).to_le_bytes());
    assert_eq!(bytes.len(), 46);
    bytes
}

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
    for copy in COPIES {
        assert_eq!(third.sram[copy + VERSION_AT], 3, "copy at {copy}: the version");
        assert_eq!(third.sram[copy + SETTINGS_AT..][..2], [8, 8], "copy at {copy}: the default volumes");
    }

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

#[test]
fn a_version_2_save_loads_its_scores_and_the_first_save_over_it_cut_anywhere_loads_old_or_new() {
    let mut g = Game::release();
    let defaults = table_after_reset(&mut g);
    // A cartridge played before the settings: both copies version 2, copy 0 the newer. The scores are low
    // enough for the bot to make the table.
    let mut sram = g.emu.sram();
    let newer = [(b"VTW", 99_990), (b"OLD", 7_000), (b"SAV", 5_000), (b"TWO", 3_000), (b"GBA", 1_000)];
    let older = [(b"PRE", 88_880), (b"OLD", 7_000), (b"SAV", 5_000), (b"TWO", 3_000), (b"GBA", 1_000)];
    sram[..46].copy_from_slice(&version_2_record(7, newer));
    sram[64..110].copy_from_slice(&version_2_record(6, older));
    g.emu.set_sram(&sram).unwrap();
    let table = table_after_reset(&mut g);
    for (row, (name, score)) in table.iter().zip(newer) {
        let name = std::str::from_utf8(name).unwrap();
        assert!(
            row.contains(name) && row.contains(&score.to_string()),
            "{row}: not {name} {score}\n{}",
            table.join("\n")
        );
    }
    let old = Saved { writes: 0, table, sram };

    // The bot's score goes into the loaded table; that save, cut anywhere, shows the old table or the new.
    let entry = NameEntry::reach(&mut g);
    let new = cut_everywhere(&mut g, &entry, &old, 0, &defaults);
    assert!(new.table.iter().filter(|row| ["VTW", "OLD", "SAV"].iter().any(|n| row.contains(n))).count() >= 3);
    let copy = COPIES[1];
    assert_eq!(new.sram[copy + VERSION_AT], 3, "the first save writes version 3 over the older copy");
    assert_eq!(new.sram[copy + SETTINGS_AT..][..2], [8, 8], "with the default volumes");
    assert_eq!(new.sram[..46], old.sram[..46], "and leaves the version 2 copy as it was");

    // Volumes other than the defaults in the current copy are carried over by a score save.
    let mut quiet = new.sram.clone();
    quiet[copy + SETTINGS_AT..][..2].copy_from_slice(&[3, 0]);
    let crc = crc16(&quiet[copy..copy + BODY_BYTES]);
    quiet[copy + BODY_BYTES..][..2].copy_from_slice(&crc.to_le_bytes());
    let next = entry.save(&mut g, &quiet, 1, None);
    assert_eq!(next.sram[VERSION_AT], 3, "the save after writes version 3 over the version 2 copy");
    assert_eq!(next.sram[SETTINGS_AT..][..2], [3, 0], "a score save keeps the saved volumes");
    assert_ne!(next.table, new.table);
}
