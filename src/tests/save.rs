//! The high scores and the volume settings in cartridge SRAM: round trips through both copies, a damaged copy
//! or an out-of-range level giving way to the other, blank or damaged SRAM loading as the defaults, and a
//! version 2 record (the layout before the settings) loading its scores. (A save cut part-way is tested from
//! outside, where the harness can cut it: tools/harness/tests/game_save.rs.)

use crate::save::{
    self, COPIES, COPY_STRIDE, Entry, HighScores, Invalid, Level, RECORD_BYTES, Record, SAVE_TYPE, SRAM, Saved,
    Settings,
};

fn sram_byte(offset: usize) -> u8 {
    assert!(offset < 32 * 1024);
    // SAFETY: offset is inside the 32 KB of SRAM, read a byte at a time as its 8-bit bus requires.
    unsafe { SRAM.add(offset).read_volatile() }
}

fn set_sram_byte(offset: usize, value: u8) {
    assert!(offset < 32 * 1024);
    // SAFETY: as in `sram_byte`, for writing; nothing else uses SRAM while a test runs.
    unsafe { SRAM.add(offset).write_volatile(value) };
}

fn blank() {
    for offset in 0..COPIES * COPY_STRIDE {
        set_sram_byte(offset, 0xFF);
    }
}

/// A table of its own for each name: the name's score makes the table, so tables of different names differ.
fn a_played_table(name: [u8; 3]) -> HighScores {
    let mut table = HighScores::DEFAULT;
    table.insert(*b"ZED", 123_456);
    table.insert(*b"AMY", 45_000);
    assert_eq!(table.insert(name, 35_000), Some(4));
    table
}

/// The record `store_scores` writes of `table` with the default settings, as the first save of a cartridge.
fn record(sequence: u32, table: HighScores) -> Record {
    Record { sequence, saved: Saved { table, settings: Settings::DEFAULT } }
}

fn settings(music: u8, effects: u8) -> Settings {
    Settings { music: Level::new(music).unwrap(), effects: Level::new(effects).unwrap() }
}

#[test_case]
fn stores_alternate_between_the_copies_and_the_newest_loads() {
    blank();
    assert_eq!(save::current(), None);
    let tables = [a_played_table(*b"ONE"), a_played_table(*b"TWO"), a_played_table(*b"TRI")];
    for (n, table) in tables.iter().enumerate() {
        save::store_scores(table);
        let sequence = n as u32 + 1;
        assert_eq!(save::current(), Some((n % 2, record(sequence, *table))), "store {n}");
        assert_eq!(save::load().table, *table);
        let copy = n % 2 * COPY_STRIDE;
        assert_eq!([sram_byte(copy), sram_byte(copy + 1), sram_byte(copy + 2), sram_byte(copy + 3)], *b"SSHS");
    }
    // The older copy still holds the table before.
    assert_eq!(save::read_copy(1).map(|c| c.saved.table), Ok(tables[1]));
}

/// Writes `record` into copy `index`, as `save::store` would with that sequence number.
fn write_copy(index: usize, record: Record) {
    for (offset, byte) in record.to_bytes().into_iter().enumerate() {
        set_sram_byte(index * COPY_STRIDE + offset, byte);
    }
}

#[test_case]
fn the_save_after_the_last_sequence_number_wraps_to_zero_and_loads() {
    blank();
    let old = a_played_table(*b"OLD");
    write_copy(0, record(u32::MAX - 1, HighScores::DEFAULT));
    write_copy(1, record(u32::MAX, old));
    assert_eq!(save::current(), Some((1, record(u32::MAX, old))));
    let tables = [a_played_table(*b"ONE"), a_played_table(*b"TWO"), a_played_table(*b"TRI")];
    for (n, table) in tables.iter().enumerate() {
        save::store_scores(table);
        assert_eq!(save::current(), Some((n % 2, record(n as u32, *table))), "store {n}");
        assert_eq!(save::load().table, *table, "store {n}");
    }
    // Half the circle apart, neither is after the other: copy 0 is taken, not the higher number.
    write_copy(0, record(5, old));
    write_copy(1, record(5 + (1 << 31), HighScores::DEFAULT));
    assert_eq!(save::load().table, old);
}

/// Blank SRAM, then two tables stored: the older, the newest, and the index of the newest's copy.
fn two_saves() -> (HighScores, HighScores, usize) {
    let (older, newest) = (a_played_table(*b"OLD"), a_played_table(*b"NEW"));
    blank();
    save::store_scores(&older);
    save::store_scores(&newest);
    (older, newest, save::current().unwrap().0)
}

#[test_case]
fn any_damaged_byte_of_the_newest_copy_loads_the_older_table() {
    let (older, newest, index) = two_saves();
    for offset in index * COPY_STRIDE..index * COPY_STRIDE + RECORD_BYTES {
        for flip in [0x01, 0x80, 0xFF] {
            let good = sram_byte(offset);
            set_sram_byte(offset, good ^ flip);
            let expected = match (offset % COPY_STRIDE, 3 ^ flip) {
                (0..4, _) => Invalid::NoRecord,
                // Version 3 with its low bit flipped reads as version 2, whose CRC (at the settings) is wrong.
                (4, 2) => Invalid::Checksum,
                (4, version) => Invalid::Version(version),
                _ => Invalid::Checksum,
            };
            assert_eq!(save::read_copy(index), Err(expected), "byte {offset} ^ {flip:#x}");
            assert_eq!(save::load().table, older, "byte {offset} ^ {flip:#x}");
            set_sram_byte(offset, good);
        }
    }
    assert_eq!(save::load().table, newest, "restoring every byte restores the newest table");
}

#[test_case]
fn a_damaged_older_copy_is_passed_over_and_both_damaged_load_the_defaults() {
    let (older, newest, index) = two_saves();
    let other = (1 - index) * COPY_STRIDE;
    set_sram_byte(other + 10, sram_byte(other + 10) ^ 0x40);
    assert_eq!(save::load().table, newest);
    set_sram_byte(index * COPY_STRIDE + 10, sram_byte(index * COPY_STRIDE + 10) ^ 0x40);
    assert_eq!(save::current(), None);
    assert_eq!(save::load(), Saved::DEFAULT);
    // The next store starts again from copy 0.
    save::store_scores(&older);
    assert_eq!(save::current(), Some((0, record(1, older))));
}

#[test_case]
fn blank_or_zeroed_sram_loads_the_defaults() {
    for blank in [0xFF, 0x00] {
        for offset in 0..COPIES * COPY_STRIDE {
            set_sram_byte(offset, blank);
        }
        assert_eq!(save::read_copy(0), Err(Invalid::NoRecord), "all {blank:#x}");
        assert_eq!(save::read_copy(1), Err(Invalid::NoRecord), "all {blank:#x}");
        assert_eq!(save::load(), Saved::DEFAULT);
    }
}

#[test_case]
fn a_store_writes_only_the_copy_it_replaces() {
    blank();
    save::store_scores(&a_played_table(*b"OLD"));
    let end = COPIES * COPY_STRIDE;
    set_sram_byte(end, 0x5A);
    let current: [u8; RECORD_BYTES] = core::array::from_fn(sram_byte);
    save::store_settings(settings(0, 0));
    assert_eq!(sram_byte(end), 0x5A, "the byte after the copies");
    assert!((0..RECORD_BYTES).all(|i| sram_byte(i) == current[i]), "the copy that was current");
    assert_eq!(save::load(), Saved { table: a_played_table(*b"OLD"), settings: settings(0, 0) });
}

#[test_case]
fn settings_round_trip_through_sram_and_each_save_keeps_the_other_half() {
    blank();
    let table = a_played_table(*b"SET");
    for (n, (music, effects)) in [(0, 8), (8, 0), (3, 5), (8, 8), (0, 0)].into_iter().enumerate() {
        save::store_settings(settings(music, effects));
        let copy = n % 2 * COPY_STRIDE;
        // Where the module's docs put them: bytes 44 and 45.
        assert_eq!([sram_byte(copy + 44), sram_byte(copy + 45)], [music, effects], "store {n}");
        assert_eq!(save::load(), Saved { table: HighScores::DEFAULT, settings: settings(music, effects) });
    }
    save::store_scores(&table);
    assert_eq!(save::load(), Saved { table, settings: settings(0, 0) }, "a score save keeps the settings");
    save::store_settings(settings(2, 7));
    assert_eq!(save::load(), Saved { table, settings: settings(2, 7) }, "a settings save keeps the table");
    assert_eq!(save::current().map(|(_, copy)| copy.sequence), Some(7));
}

/// Writes `bytes` into copy `index` with a right CRC-16, as a writer of the layout would if it wrote them.
fn write_sealed(index: usize, mut bytes: [u8; RECORD_BYTES]) {
    let crc = save::crc16(&bytes[..RECORD_BYTES - 2]);
    bytes[RECORD_BYTES - 2..].copy_from_slice(&crc.to_le_bytes());
    for (offset, byte) in bytes.into_iter().enumerate() {
        set_sram_byte(index * COPY_STRIDE + offset, byte);
    }
}

#[test_case]
fn an_out_of_range_level_with_a_right_crc_loads_the_other_copy() {
    let (older, newest, index) = two_saves();
    let good: [u8; RECORD_BYTES] = core::array::from_fn(|i| sram_byte(index * COPY_STRIDE + i));
    for at in [44, 45] {
        for level in [9, 0x80, 0xFF] {
            let mut bytes = good;
            bytes[at] = level;
            write_sealed(index, bytes);
            assert_eq!(save::read_copy(index), Err(Invalid::Settings), "byte {at} = {level}");
            assert_eq!(save::load().table, older, "byte {at} = {level}");
            assert_eq!(save::load().settings, Settings::DEFAULT, "byte {at} = {level}");
        }
    }
    // The largest level is one, and its record loads.
    let mut bytes = good;
    bytes[44] = Level::MAX.get();
    bytes[45] = Level::MAX.get();
    write_sealed(index, bytes);
    assert_eq!(save::load().table, newest);
    assert_eq!((Level::new(8), Level::new(9)), (Some(Level::MAX), None));
}

/// A version 2 record (the layout up to a4528b8: magic, version 2, sequence, entries, then a CRC-16 of those 44
/// bytes at 44..46), built here from that layout, not by today's writer.
fn version_2_bytes(sequence: u32, table: &HighScores) -> [u8; 46] {
    let mut bytes = [0; 46];
    bytes[..5].copy_from_slice(b"SSHS\x02");
    bytes[5..9].copy_from_slice(&sequence.to_le_bytes());
    for (entry, chunk) in table.entries.iter().zip(bytes[9..44].chunks_exact_mut(7)) {
        chunk[..3].copy_from_slice(&entry.name);
        chunk[3..].copy_from_slice(&entry.score.to_le_bytes());
    }
    let crc = save::crc16(&bytes[..44]);
    bytes[44..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// What a4528b8's `Record::to_bytes` returned for sequence 0x01020304 and `a_played_table(*b"OLD")` (its code
/// compiled on the host and run), to pin `version_2_bytes` to the writer that made the saves in players' hands.
const VERSION_2_WRITTEN: [u8; 46] = [
    83, 83, 72, 83, 2, 4, 3, 2, 1, 90, 69, 68, 64, 226, 1, 0, 65, 67, 69, 80, 195, 0, 0, 65, 77, 89, 200, 175, 0, 0,
    71, 66, 65, 64, 156, 0, 0, 79, 76, 68, 184, 136, 0, 0, 9, 59,
];

#[test_case]
fn a_version_2_record_loads_its_scores_with_the_default_settings_and_the_next_save_is_version_3() {
    let old = a_played_table(*b"OLD");
    assert_eq!(version_2_bytes(0x0102_0304, &old), VERSION_2_WRITTEN);
    blank();
    // Both copies version 2, as a cartridge played before the update holds them: copy 0 the current one.
    for (index, sequence) in [(0, 0x0102_0304), (1, 0x0102_0303)] {
        let table = if index == 0 { old } else { a_played_table(*b"TWO") };
        for (offset, byte) in version_2_bytes(sequence, &table).into_iter().enumerate() {
            set_sram_byte(index * COPY_STRIDE + offset, byte);
        }
    }
    assert_eq!(save::current(), Some((0, record(0x0102_0304, old))));
    assert_eq!(save::load(), Saved { table: old, settings: Settings::DEFAULT });

    // A damaged version 2 copy is passed over like any other.
    set_sram_byte(20, sram_byte(20) ^ 0x10);
    assert_eq!(save::read_copy(0), Err(Invalid::Checksum));
    assert_eq!(save::load().table, a_played_table(*b"TWO"));
    set_sram_byte(20, sram_byte(20) ^ 0x10);

    // The next save writes version 3 over the older copy, keeping the scores; the one after over copy 0.
    save::store_settings(settings(4, 6));
    assert_eq!(sram_byte(COPY_STRIDE + 4), 3, "the version byte of the new copy");
    let saved = Saved { table: old, settings: settings(4, 6) };
    assert_eq!(save::current(), Some((1, Record { sequence: 0x0102_0305, saved })));
    let new = a_played_table(*b"NEW");
    save::store_scores(&new);
    assert_eq!(sram_byte(4), 3);
    assert_eq!(save::current(), Some((0, Record { sequence: 0x0102_0306, saved: Saved { table: new, ..saved } })));
}

#[test_case]
fn scores_take_their_place_and_push_the_last_out() {
    let mut table = HighScores::DEFAULT;
    assert_eq!(table.rank(10_000), None, "a tie does not beat the last score");
    assert_eq!(table.insert(*b"LOW", 9_999), None);
    assert_eq!(table, HighScores::DEFAULT);
    assert_eq!(table.insert(*b"NEW", 45_000), Some(1));
    let names: [[u8; 3]; 5] = table.entries.map(|e| e.name);
    assert_eq!(names, [*b"ACE", *b"NEW", *b"GBA", *b"RST", *b"ARM"]);
    assert_eq!(table.insert(*b"TOP", u32::MAX), Some(0));
    assert_eq!(table.entries[0], Entry { name: *b"TOP", score: u32::MAX });
    assert!(table.entries.windows(2).all(|w| w[0].score >= w[1].score), "best first");
}

#[test_case]
fn the_save_type_marker_is_aligned_in_rom() {
    let address = &SAVE_TYPE as *const _ as usize;
    assert!((0x0800_0000..0x0A00_0000).contains(&address), "{address:#x} is not in ROM");
    assert_eq!(address % 4, 0, "{address:#x} is not word-aligned");
    // SAFETY: the marker is 12 readable bytes of ROM; read through a pointer so the check sees the ROM, not
    // the constant the compiler knows.
    let bytes = unsafe { core::ptr::read_volatile(address as *const [u8; 12]) };
    assert_eq!(&bytes[..9], b"SRAM_V113");
}
