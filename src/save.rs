//! The high-score table, kept in the cartridge's battery-backed SRAM (GBATEK "GBA Cart Backup SRAM/FRAM": 32 KB at
//! 0x0E000000, 8-bit bus: byte reads and writes only) so that a reset or a power loss at any moment of a save
//! leaves the old table or the new one, never neither.
//!
//! SRAM holds two copies of the record, copy `i` at offset `i * COPY_STRIDE`. A record: the magic `SSHS`, a
//! version byte, a sequence number (4 little-endian bytes), the entries (3 name bytes and the score as 4
//! little-endian bytes each, best first), then a CRC-16 of everything before it. The table is that of the valid
//! copy with the higher sequence number; a copy that is not a valid record (a blank cartridge reads 0xFF, a flash
//! cart may leave garbage, a record damaged or of an older layout) is ignored, and with neither copy valid the
//! table is [`HighScores::DEFAULT`].
//!
//! A save writes the copy that is not the current one, with the next sequence number: it clears that copy's
//! first magic byte, writes the rest of the record, and writes the first magic byte last. Until that last byte
//! the copy is not a record, so the other one loads; after it, the new one does. The CRC is there for damage.

use gba::mem::copy_u8_unchecked;

/// The first byte of cartridge SRAM.
pub const SRAM: *mut u8 = 0x0E00_0000 as *mut u8;
const MAGIC: [u8; 4] = *b"SSHS";
/// Raise on any change of the record's layout: older records then load as the defaults. 2: two copies, each
/// with a sequence number.
const VERSION: u8 = 2;
const ENTRY_BYTES: usize = 3 + 4;
const HEADER_BYTES: usize = MAGIC.len() + 1 + 4;
const BODY_BYTES: usize = HEADER_BYTES + ENTRIES * ENTRY_BYTES;
/// One copy of the record: header, entries, CRC.
pub const RECORD_BYTES: usize = BODY_BYTES + 2;
/// The copies, and where each starts in SRAM.
pub const COPIES: usize = 2;
pub const COPY_STRIDE: usize = 64;
const _: () = assert!(RECORD_BYTES <= COPY_STRIDE);

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

/// One valid copy of the record: its table and its place in the order of saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub sequence: u32,
    pub table: HighScores,
}

/// Why a copy is not a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not our magic: blank SRAM, garbage, another game's save, or a copy whose write was cut.
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
}

impl Record {
    /// The record as SRAM holds it: magic, version, sequence, entries, CRC.
    pub(crate) fn to_bytes(self) -> [u8; RECORD_BYTES] {
        let mut bytes = [0; RECORD_BYTES];
        bytes[..MAGIC.len()].copy_from_slice(&MAGIC);
        bytes[MAGIC.len()] = VERSION;
        bytes[MAGIC.len() + 1..HEADER_BYTES].copy_from_slice(&self.sequence.to_le_bytes());
        let entries = self.table.entries.iter();
        for (entry, chunk) in entries.zip(bytes[HEADER_BYTES..BODY_BYTES].chunks_exact_mut(ENTRY_BYTES)) {
            chunk[..3].copy_from_slice(&entry.name);
            chunk[3..].copy_from_slice(&entry.score.to_le_bytes());
        }
        let crc = crc16(&bytes[..BODY_BYTES]);
        bytes[BODY_BYTES..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    fn from_bytes(bytes: &[u8; RECORD_BYTES]) -> Result<Record, Invalid> {
        if bytes[..MAGIC.len()] != MAGIC {
            return Err(Invalid::NoRecord);
        }
        if bytes[MAGIC.len()] != VERSION {
            return Err(Invalid::Version(bytes[MAGIC.len()]));
        }
        if bytes[BODY_BYTES..] != crc16(&bytes[..BODY_BYTES]).to_le_bytes() {
            return Err(Invalid::Checksum);
        }
        let at = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let mut table = HighScores::DEFAULT;
        for (entry, chunk) in table.entries.iter_mut().zip(bytes[HEADER_BYTES..BODY_BYTES].chunks_exact(ENTRY_BYTES)) {
            entry.name.copy_from_slice(&chunk[..3]);
            entry.score = u32::from_le_bytes([chunk[3], chunk[4], chunk[5], chunk[6]]);
        }
        Ok(Record { sequence: at(MAGIC.len() + 1), table })
    }
}

/// Copy `index` (below [`COPIES`]) as SRAM holds it, or why it is not a record.
pub fn read_copy(index: usize) -> Result<Record, Invalid> {
    assert!(index < COPIES, "there are {COPIES} copies, not {}", index + 1);
    let mut bytes = [0; RECORD_BYTES];
    // SAFETY: the copy is RECORD_BYTES bytes at index * COPY_STRIDE, inside the 32 KB of SRAM at 0x0E000000 on
    // every cartridge this ROM declares (SAVE_TYPE); `copy_u8_unchecked` reads them one byte at a time, as SRAM's
    // 8-bit bus requires, into a local buffer that does not overlap it.
    unsafe { copy_u8_unchecked(bytes.as_mut_ptr(), SRAM.add(index * COPY_STRIDE), RECORD_BYTES) };
    Record::from_bytes(&bytes)
}

/// Whether sequence number `b` comes after `a`, in serial-number arithmetic (RFC 1982) on 32 bits: `b` is ahead
/// by less than half the circle. So the save after `u32::MAX` (sequence 0) is the newer one, whatever a
/// damaged or foreign SRAM set the count to. Two numbers half the circle apart are neither: copy 0 wins.
fn is_after(b: u32, a: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}

/// The current copy (the valid one whose sequence number comes after the other's) and its index, if either is
/// valid.
pub fn current() -> Option<(usize, Record)> {
    let (a, b) = (read_copy(0).ok(), read_copy(1).ok());
    match (a, b) {
        (Some(a), Some(b)) if is_after(b.sequence, a.sequence) => Some((1, b)),
        (Some(a), _) => Some((0, a)),
        (None, Some(b)) => Some((1, b)),
        (None, None) => None,
    }
}

/// The saved table, or the defaults if SRAM holds none (which stays there until the next [`store`]).
pub fn load() -> HighScores {
    current().map_or(HighScores::DEFAULT, |(_, copy)| copy.table)
}

/// Saves `table` in the copy that is not the current one (copy 0 if neither is valid), with the next sequence
/// number (wrapping after `u32::MAX`, which [`current`]'s comparison allows for); at every moment of the write,
/// [`load`] gives the table saved before or `table`.
pub fn store(table: &HighScores) {
    let (index, sequence) = match current() {
        Some((i, copy)) => (1 - i, copy.sequence.wrapping_add(1)),
        None => (0, 1),
    };
    let bytes = Record { sequence, table: *table }.to_bytes();
    // SAFETY: as in `read_copy`, for writing: the copy's RECORD_BYTES bytes of SRAM, written a byte at a time
    // from a local buffer. The other copy is not touched.
    unsafe {
        let at = SRAM.add(index * COPY_STRIDE);
        at.write_volatile(!MAGIC[0]);
        copy_u8_unchecked(at.add(1), bytes.as_ptr().add(1), RECORD_BYTES - 1);
        at.write_volatile(MAGIC[0]);
    }
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
