//! The high-score table, kept in the cartridge's battery-backed SRAM (GBATEK "GBA Cart Backup SRAM/FRAM": 32 KB at
//! 0x0E000000, 8-bit bus: byte reads and writes only).
//!
//! The record, from SRAM offset 0: the magic `SSHS`, a version byte, the entries (3 name bytes and the score as
//! 4 little-endian bytes each, best first), then a CRC-16 of everything before it. Anything else there (a blank
//! cartridge reads 0xFF, a damaged or older record) loads as [`HighScores::DEFAULT`].

use gba::mem::copy_u8_unchecked;

/// The first byte of cartridge SRAM.
pub const SRAM: *mut u8 = 0x0E00_0000 as *mut u8;
const MAGIC: [u8; 4] = *b"SSHS";
/// Raise on any change of the record's layout: older records then load as the defaults.
const VERSION: u8 = 1;
const ENTRY_BYTES: usize = 3 + 4;
const HEADER_BYTES: usize = MAGIC.len() + 1;
const BODY_BYTES: usize = HEADER_BYTES + ENTRIES * ENTRY_BYTES;
/// The whole record: header, entries, CRC.
pub const RECORD_BYTES: usize = BODY_BYTES + 2;

/// The string by which flash carts and emulators tell the save type (the convention of Nintendo's SDK): it has
/// to be somewhere in the ROM, 4-byte aligned. Nothing reads it; linker.ld KEEPs its section.
#[used]
#[unsafe(link_section = ".rodata.save_type")]
pub static SAVE_TYPE: SaveType = SaveType(*b"SRAM_V113\0\0\0");

/// The save-type marker's bytes, padded to whole words and aligned like them.
#[repr(C, align(4))]
pub struct SaveType(pub [u8; 12]);

/// How many scores the table keeps.
pub const ENTRIES: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Three characters of the font (upper-case letters, digits, punctuation).
    pub name: [u8; 3],
    pub score: u32,
}

/// The best scores, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HighScores {
    pub entries: [Entry; ENTRIES],
}

/// Why SRAM does not hold a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not our magic: blank SRAM, or another game's save.
    NoRecord,
    /// Our record, from another layout version.
    Version(u8),
    /// Our record, damaged.
    Checksum,
}

impl HighScores {
    /// The table of a new cartridge.
    pub const DEFAULT: HighScores = HighScores {
        entries: [
            Entry { name: *b"ACE", score: 50_000 },
            Entry { name: *b"GBA", score: 40_000 },
            Entry { name: *b"RST", score: 30_000 },
            Entry { name: *b"ARM", score: 20_000 },
            Entry { name: *b"BIT", score: 10_000 },
        ],
    };

    /// The place `score` would take in the table, if it makes it (it must beat the score there).
    pub fn rank(&self, score: u32) -> Option<usize> {
        self.entries.iter().position(|entry| score > entry.score)
    }

    /// Puts `name` with `score` in its place, pushing the last entry out, and returns the place.
    pub fn insert(&mut self, name: [u8; 3], score: u32) -> Option<usize> {
        let place = self.rank(score)?;
        self.entries.copy_within(place..ENTRIES - 1, place + 1);
        self.entries[place] = Entry { name, score };
        Some(place)
    }

    fn to_bytes(self) -> [u8; RECORD_BYTES] {
        let mut bytes = [0; RECORD_BYTES];
        bytes[..MAGIC.len()].copy_from_slice(&MAGIC);
        bytes[MAGIC.len()] = VERSION;
        for (entry, chunk) in self.entries.iter().zip(bytes[HEADER_BYTES..BODY_BYTES].chunks_exact_mut(ENTRY_BYTES)) {
            chunk[..3].copy_from_slice(&entry.name);
            chunk[3..].copy_from_slice(&entry.score.to_le_bytes());
        }
        let crc = crc16(&bytes[..BODY_BYTES]);
        bytes[BODY_BYTES..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    fn from_bytes(bytes: &[u8; RECORD_BYTES]) -> Result<HighScores, Invalid> {
        if bytes[..MAGIC.len()] != MAGIC {
            return Err(Invalid::NoRecord);
        }
        if bytes[MAGIC.len()] != VERSION {
            return Err(Invalid::Version(bytes[MAGIC.len()]));
        }
        if bytes[BODY_BYTES..] != crc16(&bytes[..BODY_BYTES]).to_le_bytes() {
            return Err(Invalid::Checksum);
        }
        let mut table = HighScores::DEFAULT;
        for (entry, chunk) in table.entries.iter_mut().zip(bytes[HEADER_BYTES..BODY_BYTES].chunks_exact(ENTRY_BYTES)) {
            entry.name.copy_from_slice(&chunk[..3]);
            entry.score = u32::from_le_bytes([chunk[3], chunk[4], chunk[5], chunk[6]]);
        }
        Ok(table)
    }
}

/// The table in SRAM, or why there is none.
pub fn read() -> Result<HighScores, Invalid> {
    let mut bytes = [0; RECORD_BYTES];
    // SAFETY: SRAM is RECORD_BYTES (< 32 KB) readable bytes from 0x0E000000 on every cartridge this ROM declares
    // (SAVE_TYPE); `copy_u8_unchecked` reads them one byte at a time, as SRAM's 8-bit bus requires, into a
    // local buffer that does not overlap it.
    unsafe { copy_u8_unchecked(bytes.as_mut_ptr(), SRAM, RECORD_BYTES) };
    HighScores::from_bytes(&bytes)
}

/// The table in SRAM, or the defaults if SRAM holds none (which stays there until the next [`store`]).
pub fn load() -> HighScores {
    read().unwrap_or(HighScores::DEFAULT)
}

/// Writes `table` to SRAM.
pub fn store(table: &HighScores) {
    let bytes = table.to_bytes();
    // SAFETY: as in `read`, for writing: RECORD_BYTES bytes of SRAM written a byte at a time from a local buffer.
    unsafe { copy_u8_unchecked(SRAM, bytes.as_ptr(), RECORD_BYTES) };
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, start 0xFFFF): unlike a sum, it catches every changed byte, a byte
/// flipped between 0x00 and 0xFF included.
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
