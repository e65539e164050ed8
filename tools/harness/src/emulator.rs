//! One emulated GBA: a safe wrapper over the C shim in `shim.c`.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::path::Path;

/// Width and height of the GBA screen in pixels.
pub const WIDTH: usize = 240;
pub const HEIGHT: usize = 160;
/// CPU cycles in one frame (GBATEK: 228 lines of 1,232 cycles).
pub const CYCLES_PER_FRAME: u64 = 280_896;
/// Samples a second of the audio [`Emulator::take_audio`] returns: the rate of the GBA's own mixer at SOUNDBIAS's
/// reset resolution (GBATEK: 32.768 kHz, 9 bits), so mGBA's mix reaches us sample for sample, not resampled.
pub const AUDIO_RATE: u32 = 32_768;
/// The RAM a ROM finds at power-on (GBATEK "GBA Memory Map"): start and size in bytes of EWRAM, IWRAM, palette
/// RAM, VRAM and OAM.
pub const RAM: [(u32, u32); 5] = [
    (0x0200_0000, 256 << 10),
    (0x0300_0000, 32 << 10),
    (0x0500_0000, 1 << 10),
    (0x0600_0000, 96 << 10),
    (0x0700_0000, 1 << 10),
];

#[repr(C)]
struct Shim {
    _private: [u8; 0],
}

unsafe extern "C" {
    fn shim_set_logger(callback: extern "C" fn(c_int, *const c_char, *const c_char));
    fn shim_open(path: *const c_char) -> *mut Shim;
    fn shim_load_save(s: *mut Shim, path: *const c_char) -> c_int;
    fn shim_reset(s: *mut Shim);
    fn shim_run_frame(s: *mut Shim);
    fn shim_set_keys(s: *mut Shim, keys: u32);
    fn shim_read_audio(s: *mut Shim, out: *mut i16, max: c_int) -> c_int;
    fn shim_read8(s: *mut Shim, address: u32) -> u32;
    fn shim_read16(s: *mut Shim, address: u32) -> u32;
    fn shim_read32(s: *mut Shim, address: u32) -> u32;
    fn shim_write8(s: *mut Shim, address: u32, value: u8);
    fn shim_write32(s: *mut Shim, address: u32, value: u32);
    fn shim_cycles(s: *mut Shim) -> u64;
    fn shim_pixels(s: *mut Shim) -> *const u32;
    fn shim_sram_writes(s: *mut Shim) -> u64;
    fn shim_cut_sram_after(s: *mut Shim, left: i64);
    fn shim_sram_clone(s: *mut Shim, out: *mut *mut u8) -> usize;
    fn shim_sram_restore(s: *mut Shim, data: *const u8, size: usize) -> c_int;
    fn shim_free(p: *mut u8);
    fn shim_state_size(s: *mut Shim) -> usize;
    fn shim_save_state(s: *mut Shim, state: *mut u8) -> c_int;
    fn shim_load_state(s: *mut Shim, state: *const u8) -> c_int;
    fn shim_gdb_listen(s: *mut Shim, port: u16, address: *const c_char) -> c_int;
    fn shim_gdb_attached(s: *mut Shim) -> c_int;
    fn shim_close(s: *mut Shim);
}

/// mGBA's log level bits for the ROM's debug prints (level 0 fatal .. 4 debug on the ROM side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Fatal,
    Error,
    Warn,
    Info,
    Debug,
}

impl Level {
    fn from_mgba(bits: c_int) -> Level {
        match bits {
            0x01 => Level::Fatal,
            0x02 => Level::Error,
            0x04 => Level::Warn,
            0x08 => Level::Info,
            _ => Level::Debug,
        }
    }
}

/// One line the ROM printed through mGBA's debug interface.
#[derive(Clone, Debug)]
pub struct LogLine {
    pub level: Level,
    pub text: String,
}

thread_local! {
    /// The logger is process-wide but runs on the thread that runs the frame: one buffer per thread.
    static LOG: RefCell<Vec<LogLine>> = const { RefCell::new(Vec::new()) };
}

extern "C" fn on_log(level: c_int, category: *const c_char, message: *const c_char) {
    if category.is_null() || message.is_null() {
        return;
    }
    // SAFETY: the shim passes NUL-terminated strings that live for the duration of this call.
    let (category, message) = unsafe { (CStr::from_ptr(category), CStr::from_ptr(message)) };
    // Only the ROM's own prints; mGBA's internal categories (stubbed I/O and the like) are noise here.
    if category.to_bytes() != b"gba.debug" {
        return;
    }
    let line = LogLine { level: Level::from_mgba(level), text: message.to_string_lossy().into_owned() };
    LOG.with(|log| log.borrow_mut().push(line));
}

/// A GBA running a ROM, with no window and no sound; what it plays can be recorded ([`Emulator::capture_audio`]).
pub struct Emulator {
    shim: *mut Shim,
    frames: u64,
    /// The stereo samples recorded since the last [`Emulator::take_audio`]; `None` while not recording.
    audio: Option<Vec<[i16; 2]>>,
}

impl Emulator {
    /// Loads a `.gba` or an `.elf` and resets the console.
    pub fn open(path: &Path) -> Result<Emulator, String> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: `on_log` is a plain function valid for the whole program.
        unsafe { shim_set_logger(on_log) };
        LOG.with(|log| log.borrow_mut().clear());
        // SAFETY: `c_path` is NUL-terminated; the shim copies what it needs.
        let shim = unsafe { shim_open(c_path.as_ptr()) };
        if shim.is_null() {
            return Err(format!("mGBA could not load {}", path.display()));
        }
        Ok(Emulator { shim, frames: 0, audio: None })
    }

    /// Uses `path` as the cartridge's save file (created if missing), as a player's emulator would.
    pub fn load_save(&mut self, path: &Path) -> Result<(), String> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: the shim is open; `c_path` is NUL-terminated.
        match unsafe { shim_load_save(self.shim, c_path.as_ptr()) } {
            0 => Ok(()),
            _ => Err(format!("mGBA could not open the save file {}", path.display())),
        }
    }

    /// Fills EWRAM, IWRAM, palette RAM, VRAM and OAM with a non-zero pattern (a xorshift sequence from
    /// `seed`), as a flash cart's quick boot leaves them. Call right after [`Emulator::open`] or
    /// [`Emulator::reset`], before the first frame: the ROM's first instruction has not run yet.
    pub fn fill_ram(&mut self, seed: u32) {
        let mut x = seed | 1;
        for (start, bytes) in RAM {
            for offset in (0..bytes).step_by(4) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                self.write32(start + offset, x);
            }
        }
    }

    /// Presses the console's reset button: the ROM starts again, the save file stays.
    pub fn reset(&mut self) {
        // SAFETY: the shim is open.
        unsafe { shim_reset(self.shim) };
        self.frames = 0;
    }

    /// SRAM byte writes the CPU made since the ROM was loaded, cut ones included.
    pub fn sram_writes(&self) -> u64 {
        // SAFETY: the shim is open.
        unsafe { shim_sram_writes(self.shim) }
    }

    /// Lets `left` more SRAM byte writes through and drops every later one until the next [`Emulator::reset`]:
    /// the cartridge's SRAM as a power cut at that moment leaves it. `None` lifts the cut.
    pub fn cut_sram_after(&mut self, left: Option<u64>) {
        // SAFETY: the shim is open.
        unsafe { shim_cut_sram_after(self.shim, left.map_or(-1, |n| n as i64)) }
    }

    /// The cartridge's whole save memory (32 KB of SRAM once the ROM has touched it).
    pub fn sram(&self) -> Vec<u8> {
        let mut data = std::ptr::null_mut();
        // SAFETY: the shim is open; it mallocs `size` bytes into `data` (or returns 0 and leaves it null), which
        // are copied out and freed with the shim's `free`.
        unsafe {
            let size = shim_sram_clone(self.shim, &mut data);
            if data.is_null() {
                return Vec::new();
            }
            let copy = std::slice::from_raw_parts(data, size).to_vec();
            shim_free(data);
            copy
        }
    }

    /// Replaces the save memory (and the save file, if one is loaded) with `data`.
    pub fn set_sram(&mut self, data: &[u8]) -> Result<(), String> {
        // SAFETY: the shim is open; mGBA copies `data`, which outlives the call.
        match unsafe { shim_sram_restore(self.shim, data.as_ptr(), data.len()) } {
            0 => Ok(()),
            _ => Err("mGBA refused the save data".into()),
        }
    }

    /// The machine's whole state (CPU, memory, I/O, but not the save memory), to come back to.
    pub fn save_state(&self) -> Vec<u8> {
        // SAFETY: the shim is open; the buffer is the size mGBA asks for.
        unsafe {
            let mut state = vec![0; shim_state_size(self.shim)];
            assert_eq!(shim_save_state(self.shim, state.as_mut_ptr()), 0, "mGBA could not save its state");
            state
        }
    }

    /// Goes back to a state from [`Emulator::save_state`] of the same ROM; the save memory stays as it is.
    pub fn load_state(&mut self, state: &[u8]) {
        // SAFETY: the shim is open; mGBA reads the state's bytes, whose length it checks against its own size.
        assert_eq!(state.len(), unsafe { shim_state_size(self.shim) }, "a state of another machine");
        // SAFETY: as above.
        assert_eq!(unsafe { shim_load_state(self.shim, state.as_ptr()) }, 0, "mGBA could not load the state");
    }

    /// Runs one frame (280,896 cycles) with the keys last set, recording its sound if [`Emulator::capture_audio`]
    /// asked for it.
    pub fn run_frame(&mut self) {
        // SAFETY: the shim is open.
        unsafe { shim_run_frame(self.shim) };
        self.frames += 1;
        if let Some(mut audio) = self.audio.take() {
            self.read_audio(&mut audio);
            self.audio = Some(audio);
        }
    }

    /// Starts (or, with `false`, stops) recording what the console plays, from this point on, for
    /// [`Emulator::take_audio`]. Off by default: a recording grows by 128 KB an emulated second (470 MB in the
    /// hour-long soak), and while nobody reads mGBA's buffer it fills (2,048 samples) and mGBA stops mixing into
    /// it; recording costs 3-6 % of a frame's time in the harness (3,600 frames of play: 0.42 s without, 0.44 s
    /// with, measured). What it kept from before is dropped here, so the recording starts now. A reset empties
    /// mGBA's buffers (it drops the up to 4 samples not handed over yet); a loaded state leaves them, so the
    /// recording jumps from one sound to the other.
    pub fn capture_audio(&mut self, on: bool) {
        if on && self.audio.is_none() {
            let mut stale = Vec::new();
            self.read_audio(&mut stale);
            self.audio = Some(Vec::new());
        } else if !on {
            self.audio = None;
        }
    }

    /// The stereo samples ([left, right], [`AUDIO_RATE`] a second) recorded since recording started or since the
    /// last call: every sample once, none lost between frames. Empty while not recording. A sample is complete
    /// once mGBA has mixed its 2,048-cycle block, so up to 4 samples of the last frame arrive with the next.
    pub fn take_audio(&mut self) -> Vec<[i16; 2]> {
        match &mut self.audio {
            Some(audio) => std::mem::take(audio),
            None => Vec::new(),
        }
    }

    /// Moves everything mGBA has mixed into `out`: read every frame, it is about 549 samples, under the 2,048 at
    /// which mGBA would start dropping them.
    fn read_audio(&mut self, out: &mut Vec<[i16; 2]>) {
        const CHUNK: usize = 2_048;
        loop {
            out.reserve(CHUNK);
            let spare = out.spare_capacity_mut();
            // SAFETY: the shim is open; `spare` has room for CHUNK `[i16; 2]`, which are 2 × CHUNK contiguous
            // `i16` (arrays have no padding), and the shim writes at most CHUNK interleaved pairs there.
            let n = unsafe { shim_read_audio(self.shim, spare.as_mut_ptr().cast::<i16>(), CHUNK as c_int) };
            let n = usize::try_from(n).expect("the shim reads a count, never negative");
            // SAFETY: the shim initialised the first `n` pairs of the spare capacity, `n <= CHUNK`.
            unsafe { out.set_len(out.len() + n) };
            if n < CHUNK {
                break;
            }
        }
    }

    /// Frames run since the ROM was loaded or reset.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Holds exactly these keys (a mask of [`crate::keys::Key`] bits) until the next call.
    pub fn set_keys(&mut self, keys: u32) {
        // SAFETY: the shim is open.
        unsafe { shim_set_keys(self.shim, keys) };
    }

    // The bus accessors: the shim is open for as long as `self` lives, and mGBA's bus accepts any address
    // (unmapped ones read open bus, writes to them are dropped).
    pub fn read8(&self, address: u32) -> u8 {
        // SAFETY: the shim is open; any address is valid on the emulated bus.
        unsafe { shim_read8(self.shim, address) as u8 }
    }
    pub fn read16(&self, address: u32) -> u16 {
        // SAFETY: as in `read8`.
        unsafe { shim_read16(self.shim, address) as u16 }
    }
    pub fn read32(&self, address: u32) -> u32 {
        // SAFETY: as in `read8`.
        unsafe { shim_read32(self.shim, address) }
    }
    pub fn write8(&mut self, address: u32, value: u8) {
        // SAFETY: as in `read8`; a write to the emulated bus touches only emulated memory.
        unsafe { shim_write8(self.shim, address, value) }
    }
    pub fn write32(&mut self, address: u32, value: u32) {
        // SAFETY: as in `write8`.
        unsafe { shim_write32(self.shim, address, value) }
    }

    /// `len` bytes starting at `address`.
    pub fn read_bytes(&self, address: u32, len: usize) -> Vec<u8> {
        (0..len as u32).map(|i| self.read8(address + i)).collect()
    }

    /// Emulated CPU cycles since power-on (16,777,216 a second); exactly reproducible.
    pub fn cycles(&self) -> u64 {
        // SAFETY: the shim is open.
        unsafe { shim_cycles(self.shim) }
    }

    /// The last frame as 240×160 pixels in mGBA's format (XBGR8888, red in the low byte).
    pub fn pixels(&self) -> &[u32] {
        // SAFETY: the shim owns a WIDTH×HEIGHT pixel buffer for as long as it is open; `&self` keeps the next
        // frame (which rewrites it) from running while the slice is borrowed.
        unsafe { std::slice::from_raw_parts(shim_pixels(self.shim), WIDTH * HEIGHT) }
    }

    /// The last frame as 240×160 RGB triples.
    pub fn screen_rgb(&self) -> Vec<u8> {
        self.pixels().iter().flat_map(|&p| [p as u8, (p >> 8) as u8, (p >> 16) as u8]).collect()
    }

    /// Writes the last frame as a PNG.
    pub fn screenshot(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), WIDTH as u32, HEIGHT as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&self.screen_rgb()).map_err(|e| e.to_string())
    }

    /// Takes the lines the ROM printed since the last call.
    pub fn take_log(&mut self) -> Vec<LogLine> {
        LOG.with(|log| std::mem::take(&mut *log.borrow_mut()))
    }

    /// Serves the GDB protocol on 127.0.0.1:`port`; from now on frames run under the debugger, and the first
    /// frame waits for gdb to attach.
    pub fn listen_gdb(&mut self, port: u16) -> Result<(), String> {
        // SAFETY: the shim is open; the address is a NUL-terminated literal.
        match unsafe { shim_gdb_listen(self.shim, port, c"127.0.0.1".as_ptr()) } {
            0 => Ok(()),
            _ => Err(format!("cannot serve gdb on 127.0.0.1:{port}")),
        }
    }

    /// True while a gdb client is connected.
    pub fn gdb_attached(&self) -> bool {
        // SAFETY: the shim is open.
        unsafe { shim_gdb_attached(self.shim) != 0 }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        // SAFETY: the shim was opened by `open` and is closed exactly once, here.
        unsafe { shim_close(self.shim) };
    }
}
