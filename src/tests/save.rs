//! The high-score table in cartridge SRAM: round trips through both copies, a damaged copy giving way to the
//! other, and blank or damaged SRAM loading as the defaults. (A save cut part-way is tested from outside, where
//! the harness can cut it: tools/harness/tests/game_save.rs.)

use crate::save::{self, COPIES, COPY_STRIDE, Entry, HighScores, Invalid, RECORD_BYTES, Record, SAVE_TYPE, SRAM};

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

#[test_case]
fn stores_alternate_between_the_copies_and_the_newest_loads() {
    blank();
    assert_eq!(save::current(), None);
    let tables = [a_played_table(*b"ONE"), a_played_table(*b"TWO"), a_played_table(*b"TRI")];
    for (n, table) in tables.iter().enumerate() {
        save::store(table);
        let sequence = n as u32 + 1;
        assert_eq!(save::current(), Some((n % 2, Record { sequence, table: *table })), "store {n}");
        assert_eq!(save::load(), *table);
        let copy = n % 2 * COPY_STRIDE;
        assert_eq!([sram_byte(copy), sram_byte(copy + 1), sram_byte(copy + 2), sram_byte(copy + 3)], *b"SSHS");
    }
    // The older copy still holds the table before.
    assert_eq!(save::read_copy(1).map(|c| c.table), Ok(tables[1]));
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
    write_copy(0, Record { sequence: u32::MAX - 1, table: HighScores::DEFAULT });
    write_copy(1, Record { sequence: u32::MAX, table: old });
    assert_eq!(save::current(), Some((1, Record { sequence: u32::MAX, table: old })));
    let tables = [a_played_table(*b"ONE"), a_played_table(*b"TWO"), a_played_table(*b"TRI")];
    for (n, table) in tables.iter().enumerate() {
        save::store(table);
        assert_eq!(save::current(), Some((n % 2, Record { sequence: n as u32, table: *table })), "store {n}");
        assert_eq!(save::load(), *table, "store {n}");
    }
    // Half the circle apart, neither is after the other: copy 0 is taken, not the higher number.
    write_copy(0, Record { sequence: 5, table: old });
    write_copy(1, Record { sequence: 5 + (1 << 31), table: HighScores::DEFAULT });
    assert_eq!(save::load(), old);
}

/// Blank SRAM, then two tables stored: the older, the newest, and the index of the newest's copy.
fn two_saves() -> (HighScores, HighScores, usize) {
    let (older, newest) = (a_played_table(*b"OLD"), a_played_table(*b"NEW"));
    blank();
    save::store(&older);
    save::store(&newest);
    (older, newest, save::current().unwrap().0)
}

#[test_case]
fn any_damaged_byte_of_the_newest_copy_loads_the_older_table() {
    let (older, newest, index) = two_saves();
    for offset in index * COPY_STRIDE..index * COPY_STRIDE + RECORD_BYTES {
        for flip in [0x01, 0x80, 0xFF] {
            let good = sram_byte(offset);
            set_sram_byte(offset, good ^ flip);
            let expected = match offset % COPY_STRIDE {
                0..4 => Invalid::NoRecord,
                4 => Invalid::Version(2 ^ flip),
                _ => Invalid::Checksum,
            };
            assert_eq!(save::read_copy(index), Err(expected), "byte {offset} ^ {flip:#x}");
            assert_eq!(save::load(), older, "byte {offset} ^ {flip:#x}");
            set_sram_byte(offset, good);
        }
    }
    assert_eq!(save::load(), newest, "restoring every byte restores the newest table");
}

#[test_case]
fn a_damaged_older_copy_is_passed_over_and_both_damaged_load_the_defaults() {
    let (older, newest, index) = two_saves();
    let other = (1 - index) * COPY_STRIDE;
    set_sram_byte(other + 10, sram_byte(other + 10) ^ 0x40);
    assert_eq!(save::load(), newest);
    set_sram_byte(index * COPY_STRIDE + 10, sram_byte(index * COPY_STRIDE + 10) ^ 0x40);
    assert_eq!(save::current(), None);
    assert_eq!(save::load(), HighScores::DEFAULT);
    // The next store starts again from copy 0.
    save::store(&older);
    assert_eq!(save::current(), Some((0, Record { sequence: 1, table: older })));
}

#[test_case]
fn blank_or_zeroed_sram_loads_the_defaults() {
    for blank in [0xFF, 0x00] {
        for offset in 0..COPIES * COPY_STRIDE {
            set_sram_byte(offset, blank);
        }
        assert_eq!(save::read_copy(0), Err(Invalid::NoRecord), "all {blank:#x}");
        assert_eq!(save::read_copy(1), Err(Invalid::NoRecord), "all {blank:#x}");
        assert_eq!(save::load(), HighScores::DEFAULT);
    }
}

#[test_case]
fn a_store_writes_only_the_copy_it_replaces() {
    blank();
    save::store(&a_played_table(*b"OLD"));
    let end = COPIES * COPY_STRIDE;
    set_sram_byte(end, 0x5A);
    let current: [u8; RECORD_BYTES] = core::array::from_fn(sram_byte);
    save::store(&HighScores::DEFAULT);
    assert_eq!(sram_byte(end), 0x5A, "the byte after the copies");
    assert!((0..RECORD_BYTES).all(|i| sram_byte(i) == current[i]), "the copy that was current");
    assert_eq!(save::load(), HighScores::DEFAULT);
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
