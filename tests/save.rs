//! The high-score table in cartridge SRAM: round trips, and blank or damaged SRAM loading as the defaults.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot::testing::test_main!();

use stackshot::save::{self, Entry, HighScores, Invalid, RECORD_BYTES, SAVE_TYPE, SRAM};

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

fn a_played_table() -> HighScores {
    let mut table = HighScores::DEFAULT;
    table.insert(*b"ZED", 123_456);
    table.insert(*b"AMY", 45_000);
    table.insert(*b"BOB", 12_345);
    table
}

#[test_case]
fn a_stored_table_loads_back_the_same() {
    let table = a_played_table();
    assert_ne!(table, HighScores::DEFAULT);
    save::store(&table);
    assert_eq!(save::read(), Ok(table));
    assert_eq!(save::load(), table);
    assert_eq!([sram_byte(0), sram_byte(1), sram_byte(2), sram_byte(3)], *b"SSHS");
}

#[test_case]
fn any_damaged_byte_loads_the_defaults() {
    let table = a_played_table();
    for offset in 0..RECORD_BYTES {
        save::store(&table);
        for flip in [0x01, 0x80, 0xFF] {
            let good = sram_byte(offset);
            set_sram_byte(offset, good ^ flip);
            let expected = match offset {
                0..4 => Invalid::NoRecord,
                4 => Invalid::Version(1 ^ flip),
                _ => Invalid::Checksum,
            };
            assert_eq!(save::read(), Err(expected), "byte {offset} ^ {flip:#x}");
            assert_eq!(save::load(), HighScores::DEFAULT);
            set_sram_byte(offset, good);
        }
    }
    assert_eq!(save::read(), Ok(table), "restoring every byte restores the table");
}

#[test_case]
fn blank_or_zeroed_sram_loads_the_defaults() {
    for blank in [0xFF, 0x00] {
        for offset in 0..RECORD_BYTES {
            set_sram_byte(offset, blank);
        }
        assert_eq!(save::read(), Err(Invalid::NoRecord), "all {blank:#x}");
        assert_eq!(save::load(), HighScores::DEFAULT);
    }
}

#[test_case]
fn store_writes_only_the_record() {
    set_sram_byte(RECORD_BYTES, 0x5A);
    save::store(&HighScores::DEFAULT);
    assert_eq!(sram_byte(RECORD_BYTES), 0x5A);
    assert_eq!(save::read(), Ok(HighScores::DEFAULT));
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
