//! The high-score table and the volume settings, kept in the cartridge's battery-backed SRAM (GBATEK "GBA Cart
//! Backup SRAM/FRAM": 32 KB at 0x0E000000, 8-bit bus: byte reads and writes only) so that a reset or a power loss
//! at any moment of a save leaves the old record or the new one, never neither.
//!
//! SRAM holds two copies of the record, copy `i` at offset `i * COPY_STRIDE`. A record (version 3), by byte:
//!
//! | bytes | what |
//! | --- | --- |
//! | 0..4 | the magic `SSHS` |
//! | 4 | the version, 3 |
//! | 5..9 | the sequence number, little-endian |
//! | 9..44 | the entries, best first: 3 name bytes and the score as 4 little-endian bytes each |
//! | 44, 45 | the music and the effects volume levels (0..=[`Level::MAX`]) |
//! | 46..48 | a CRC-16 of bytes 0..46, little-endian |
//!
//! The record is that of the valid copy with the later sequence number; a copy that is not a valid record (a
//! blank cartridge reads 0xFF, a flash cart may leave garbage, a record damaged, of another layout, or with a
//! level out of range) is ignored, and with neither copy valid the record is [`Saved::DEFAULT`].
//!
//! Version 2, the layout before the settings, is bytes 0..44 alike with its CRC-16 of them at 44..46. It is
//! still read, so that the scores of a cartridge saved before the settings existed are kept: its settings load as
//! [`Settings::DEFAULT`]. It is never written. Its sequence numbers are ordered with version 3's, so the
//! first save after the update writes a version 3 record over the older copy like any other save, and the one
//! after it replaces the version 2 copy.
//!
//! A save writes a whole record, the table and the settings, to the copy that is not the current one, with the
//! next sequence number: it clears that copy's first magic byte, writes the rest of the record, and writes the
//! first magic byte last. Until that last byte the copy is not a record, so the other one loads; after it, the
//! new one does. The CRC is there for damage.

use gba::mem::copy_u8_unchecked;

/// The first byte of cartridge SRAM.
pub const SRAM: *mut u8 = 0x0E00_0000 as *mut u8;
const MAGIC: [u8; 4] = *b"SSHS";
/// Raise on any change of the record's layout, and read the old layout only as far as keeping its data needs.
/// 2: two copies, each with a sequence number. 3: the volume settings after the entries.
const VERSION: u8 = 3;
/// The layout before the settings, read to keep its scores: see the module's docs.
const VERSION_SCORES_ONLY: u8 = 2;
const VERSION_AT: usize = MAGIC.len();
const SEQUENCE_AT: usize = VERSION_AT + 1;
const ENTRIES_AT: usize = SEQUENCE_AT + 4;
const ENTRY_BYTES: usize = 3 + 4;
/// Where the settings start; in version 2, where its CRC starts.
const SETTINGS_AT: usize = ENTRIES_AT + ENTRIES * ENTRY_BYTES;
const BODY_BYTES: usize = SETTINGS_AT + 2;
/// One copy of the record: header, entries, settings, CRC.
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

/// A volume level, from 0 (silent) to [`Level::MAX`] (full): nine steps, which an options screen shows as a bar
/// of eight. Each is exact on both of the GBA's sound paths: `level - 1` is SOUNDCNT_L's 3-bit PSG master volume
/// (0..=7), with 0 turning the effects' channels off, and `level / 8` is exact (a shift) in the fixed-point
/// volume of a music mixer, which has more than 3 fraction bits. A value of this type is always in range, so no record is written with one out of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Level(u8);

impl Level {
    pub const MAX: Level = Level(8);

    /// `level` as a [`Level`], if it is one (at most [`Level::MAX`]).
    pub const fn new(level: u8) -> Option<Level> {
        if level <= Level::MAX.0 { Some(Level(level)) } else { None }
    }

    pub const fn get(self) -> u8 {
        self.0
    }
}

/// The volumes the player chose, saved with the scores. The music reads them at start-up (`Game::settings`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub music: Level,
    pub effects: Level,
}

impl Settings {
    /// A new cartridge's, and a version 2 record's: everything at full volume, for the player to turn down.
    pub const DEFAULT: Settings = Settings { music: Level::MAX, effects: Level::MAX };
}

/// What the record keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    pub table: HighScores,
    pub settings: Settings,
}

impl Saved {
    /// What a cartridge with no valid copy loads.
    pub const DEFAULT: Saved = Saved { table: HighScores::DEFAULT, settings: Settings::DEFAULT };
}

/// One valid copy of the record: what it keeps and its place in the order of saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub sequence: u32,
    pub saved: Saved,
}

/// Why a copy is not a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not our magic: blank SRAM, garbage, another game's save, or a copy whose write was cut.
    NoRecord,
    /// Our record, from a layout this code does not read.
    Version(u8),
    /// Our record, damaged.
    Checksum,
    /// Our record with a right CRC but a volume level out of range, which no writer of this layout makes.
    Settings,
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
    /// The record as SRAM holds it, in the layout of [`VERSION`] (the module's docs).
    pub(crate) fn to_bytes(self) -> [u8; RECORD_BYTES] {
        let mut bytes = [0; RECORD_BYTES];
        bytes[..MAGIC.len()].copy_from_slice(&MAGIC);
        bytes[VERSION_AT] = VERSION;
        bytes[SEQUENCE_AT..ENTRIES_AT].copy_from_slice(&self.sequence.to_le_bytes());
        let entries = self.saved.table.entries.iter();
        for (entry, chunk) in entries.zip(bytes[ENTRIES_AT..SETTINGS_AT].chunks_exact_mut(ENTRY_BYTES)) {
            chunk[..3].copy_from_slice(&entry.name);
            chunk[3..].copy_from_slice(&entry.score.to_le_bytes());
        }
        let settings = self.saved.settings;
        bytes[SETTINGS_AT] = settings.music.get();
        bytes[SETTINGS_AT + 1] = settings.effects.get();
        let crc = crc16(&bytes[..BODY_BYTES]);
        bytes[BODY_BYTES..].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// The record in `bytes`, of [`VERSION`] or of version 2 (whose settings are the defaults).
    fn from_bytes(bytes: &[u8; RECORD_BYTES]) -> Result<Record, Invalid> {
        if bytes[..MAGIC.len()] != MAGIC {
            return Err(Invalid::NoRecord);
        }
        // The two layouts differ only from SETTINGS_AT on: version 2 has its CRC there. A version 3 record
        // whose version byte alone was damaged to 2 passes only if its levels happen to be that CRC, and then
        // loads its own scores with the default settings: still no garbage.
        let body = match bytes[VERSION_AT] {
            VERSION => BODY_BYTES,
            VERSION_SCORES_ONLY => SETTINGS_AT,
            other => return Err(Invalid::Version(other)),
        };
        if bytes[body..body + 2] != crc16(&bytes[..body]).to_le_bytes() {
            return Err(Invalid::Checksum);
        }
        let settings = if body == BODY_BYTES {
            let level = |i: usize| Level::new(bytes[i]).ok_or(Invalid::Settings);
            Settings { music: level(SETTINGS_AT)?, effects: level(SETTINGS_AT + 1)? }
        } else {
            Settings::DEFAULT
        };
        let mut table = HighScores::DEFAULT;
        let chunks = bytes[ENTRIES_AT..SETTINGS_AT].chunks_exact(ENTRY_BYTES);
        for (entry, chunk) in table.entries.iter_mut().zip(chunks) {
            entry.name.copy_from_slice(&chunk[..3]);
            entry.score = u32::from_le_bytes([chunk[3], chunk[4], chunk[5], chunk[6]]);
        }
        let at = SEQUENCE_AT;
        let sequence = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        Ok(Record { sequence, saved: Saved { table, settings } })
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

/// The saved table and settings, or the defaults if SRAM holds no record (which stays there until the next
/// save).
pub fn load() -> Saved {
    current().map_or(Saved::DEFAULT, |(_, copy)| copy.saved)
}

/// Saves `table` with the settings saved before (the defaults if there are none).
pub fn store_scores(table: &HighScores) {
    store(|saved| saved.table = *table);
}

/// Saves `settings` with the table saved before (the defaults if there is none).
pub fn store_settings(settings: Settings) {
    store(|saved| saved.settings = settings);
}

/// Writes a whole new record, what the current copy keeps (or the defaults) changed by `change`, to the copy
/// that is not the current one (copy 0 if neither is valid), with the next sequence number (wrapping after
/// `u32::MAX`, which [`current`]'s comparison allows for); at every moment of the write, [`load`] gives the
/// record saved before or the new one. Each saver passes only what it changes, so saving the scores never
/// needs the settings and saving the settings never needs the table.
fn store(change: impl FnOnce(&mut Saved)) {
    let (index, sequence, mut saved) = match current() {
        Some((i, copy)) => (1 - i, copy.sequence.wrapping_add(1), copy.saved),
        None => (0, 1, Saved::DEFAULT),
    };
    change(&mut saved);
    let bytes = Record { sequence, saved }.to_bytes();
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
pub(crate) fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0xFFFF_u16;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}
