//! The music: XM modules, converted at build time by `agb_tracker`'s `include_xm!` and played by its tracker
//! over our [`Mixer`], both run by the VBlank interrupt handler: each VBlank swaps the mixer's buffers, steps
//! the tracker one frame and mixes the next. The main loop only picks the song and the volume, under the lock
//! the handler takes too ([`IrqMutex`]: interrupts masked while it is held), so neither sees the other half done.
//!
//! The tracker keeps its channel tables in `alloc::Vec`s, made when a song starts: they come from the program's
//! global allocator, a tree-heap of ours over [`HEAP_BYTES`] of EWRAM (`TRACKER_REGION`), apart from the AI's
//! scratch heap.

use crate::mixer::{Mixer, Voice, VoiceId};
use crate::save::Level;
use agb_tracker::{Track, TrackerInner, include_xm};
use alloc::borrow::Cow;
use core::alloc::{GlobalAlloc, Layout};
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use gba::prelude::*;
use stackshot_alloc::heap::Heap;
use stackshot_alloc::irq::IrqMutex;
use stackshot_platform::cycles::Stopwatch;

/// The tracker's heap, in EWRAM.
pub const HEAP_BYTES: usize = 8 * 1024;

/// The region of the tracker's heap: not loaded and not cleared (linker.ld's `.ewram_uninit`), as a heap's
/// region needs neither.
#[repr(C, align(8))]
struct Region([MaybeUninit<u8>; HEAP_BYTES]);
#[unsafe(link_section = ".ewram_uninit.tracker_heap")]
static mut TRACKER_REGION: Region = Region([MaybeUninit::uninit(); HEAP_BYTES]);

/// The program's global allocator: the tracker's heap, installed by [`init`] over `TRACKER_REGION`.
#[global_allocator]
static TRACKER_HEAP: TrackerHeap = TrackerHeap(IrqMutex::new(None));

/// A heap behind an `IrqLock` (an [`IrqMutex`]), its allocate and free inlined here, Thumb code in ROM. Not a `LockedHeap`:
/// that one's allocate and free are ARM functions in IWRAM, which the AI scratch's calls keep small by
/// passing the same arguments every time (its zeroing and alignment folded in); the tracker's calls, a few
/// when a song starts, would double them.
struct TrackerHeap(IrqMutex<Option<Heap<'static>>>);

// SAFETY: `alloc` hands out blocks of the heap, which no two calls share (the heap's own guarantee), under the
// lock; `dealloc` frees through the heap, which refuses (and counts) a pointer it did not hand out.
unsafe impl GlobalAlloc for TrackerHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.0.lock().as_mut() {
            Some(heap) => heap.alloc(layout.size(), layout.align()).map_or(ptr::null_mut(), NonNull::as_ptr),
            None => ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        if let (Some(heap), Some(p)) = (self.0.lock().as_mut(), NonNull::new(ptr)) {
            // A refusal is counted in the heap's `Stats::bad_frees`.
            let _ = heap.free(p);
        }
    }
}

/// A song of the soundtrack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Song {
    Title,
    /// A stage's theme, 0..STAGE_THEMES.
    Stage(u8),
    Boss,
    StageClear,
    /// The game over and the name entry.
    GameOver,
}

/// Stages with a theme of their own; later stages take them again in turn.
pub const STAGE_THEMES: u8 = 5;

static TITLE: Track = include_xm!("assets/music/title.xm");
static STAGES: [Track; STAGE_THEMES as usize] = [
    include_xm!("assets/music/stage1.xm"),
    include_xm!("assets/music/stage2.xm"),
    include_xm!("assets/music/stage3.xm"),
    include_xm!("assets/music/stage4.xm"),
    include_xm!("assets/music/stage5.xm"),
];
static BOSS: Track = include_xm!("assets/music/boss.xm");
static CLEAR: Track = include_xm!("assets/music/clear.xm");
static GAME_OVER: Track = include_xm!("assets/music/gameover.xm");
/// A test module: one A-4 (440 Hz) held, then silence, for the pitch test (`fixtures/music.rs`).
pub static PITCH_TEST: Track = include_xm!("assets/music/pitch-test.xm");

impl Song {
    fn track(self) -> &'static Track {
        match self {
            Song::Title => &TITLE,
            Song::Stage(n) => &STAGES[usize::from(n % STAGE_THEMES)],
            Song::Boss => &BOSS,
            Song::StageClear => &CLEAR,
            Song::GameOver => &GAME_OVER,
        }
    }
}

/// What the VBlank handler plays.
struct Music {
    mixer: Mixer,
    track: Option<&'static Track>,
    /// The pause: no tracker step, silence.
    held: bool,
    /// Cycles the last VBlank's music took (swap, tracker step and mix).
    cycles: u32,
    /// The most `cycles` ever was.
    max_cycles: u32,
    /// VBlanks since `init`.
    vblanks: u32,
}

/// All zeros, so in the zeroed IWRAM (`linker.ld`), costing no ROM; the tracker, whose `None` is not zeros, is
/// apart.
#[unsafe(link_section = ".bss.iwram.music")]
static MUSIC: IrqMutex<Music> =
    IrqMutex::new(Music { mixer: Mixer::new(), track: None, held: false, cycles: 0, max_cycles: 0, vblanks: 0 });

/// The song's tracker, locked inside `MUSIC`'s lock wherever both are held.
static TRACKER: IrqMutex<Option<TrackerInner<'static, VoiceId>>> = IrqMutex::new(None);

/// Installs the tracker's heap, starts the mixer and sets the VBlank handler that runs the music. Call once,
/// after `sound::init`, with interrupts not yet enabled.
pub fn init() {
    // SAFETY: `init` runs once, before anything allocates; the region is this module's and nothing else names it.
    let heap = unsafe { Heap::from_raw((&raw mut TRACKER_REGION).cast(), HEAP_BYTES) };
    let mut slot = TRACKER_HEAP.0.lock();
    assert!(slot.is_none(), "the tracker's heap is installed once");
    *slot = Some(heap.expect("a valid heap region"));
    drop(slot);
    MUSIC.lock().mixer.start();
    RUST_IRQ_HANDLER.write(Some(on_interrupt));
}

/// Plays `song` from its start (the one playing stops), or nothing with `None`; a song already playing goes on.
pub fn play(song: Option<Song>) {
    play_track(song.map(Song::track));
}

/// Plays `track` from its start (the one playing stops), or nothing with `None`; a track already playing goes on.
pub fn play_track(track: Option<&'static Track>) {
    let mut music = MUSIC.lock();
    let mut tracker = TRACKER.lock();
    let Music { mixer, track: playing, .. } = &mut *music;
    if playing.map(|t| t as *const Track) == track.map(|t| t as *const Track) {
        return;
    }
    if let Some(mut old) = tracker.take() {
        old.stop(mixer);
    }
    *tracker = track.map(TrackerInner::new);
    *playing = track;
}

/// Starts `voice` beside the music; `None` when every voice is busy.
pub fn play_voice(voice: Voice) -> Option<VoiceId> {
    MUSIC.lock().mixer.play(voice)
}

/// Voices playing.
pub fn voices() -> usize {
    MUSIC.lock().mixer.voices()
}

/// Holds the music where it is (true: the tracker stops and the voices are silent) or lets it go on.
pub fn hold(held: bool) {
    MUSIC.lock().held = held;
}

/// The music's volume: level 0 is silent, [`Level::MAX`] full, each level an eighth of full.
pub fn set_volume(level: Level) {
    MUSIC.lock().mixer.set_master(i32::from(level.get()) * 32);
}

/// What the music reports each frame: its cycles at the last VBlank and the most ever, the voices playing and
/// the most ever, and the VBlanks since boot.
pub struct Report {
    pub cycles: u32,
    pub max_cycles: u32,
    pub voices: usize,
    pub max_voices: usize,
    pub vblanks: u32,
}

pub fn report() -> Report {
    let music = MUSIC.lock();
    Report {
        cycles: music.cycles,
        max_cycles: music.max_cycles,
        voices: music.mixer.voices(),
        max_voices: music.mixer.peak_voices(),
        vblanks: music.vblanks,
    }
}

/// The interrupt handler: at VBlank, the music's frame.
extern "C" fn on_interrupt(bits: IrqBits) {
    if !bits.vblank() {
        return;
    }
    // The game's frame stopwatch, read and not restarted: a handler taken in the middle of a late frame leaves
    // the frame's count as it goes.
    let watch = Stopwatch;
    let start = watch.elapsed();
    let mut music = MUSIC.lock();
    let Music { mixer, held, .. } = &mut *music;
    mixer.swap();
    if !*held && let Some(tracker) = &mut *TRACKER.lock() {
        tracker.step(mixer);
    }
    mixer.mix(!*held);
    let cycles = watch.elapsed().wrapping_sub(start);
    music.cycles = cycles;
    music.max_cycles = music.max_cycles.max(cycles);
    music.vblanks = music.vblanks.wrapping_add(1);
}

/// The tracker's view of a voice: a sample, its pitch, volume, panning and loop, in agb_tracker's units.
#[repr(transparent)]
pub struct Channel(Voice);

/// agb_tracker's speeds are for agb's mixer at 32,768 Hz, in samples of the source an output sample with 8
/// fraction bits; ours has 12 fraction bits at 2^24 / 1,254 Hz: 16 × 32,768 × 1,254 / 2^24 = 1,254 / 32.
fn step_of(speed: agb_fixnum::Num<u32, 8>) -> u32 {
    speed.to_raw().wrapping_mul(u32::from(crate::mixer::PERIOD)) >> 5
}

impl agb_tracker::SoundChannel for Channel {
    fn new(data: &Cow<'static, [u8]>) -> Self {
        // The converted modules' samples are statics in ROM; an owned sample (a module made at run time, which
        // the game has none of) would not outlive the voice, and plays as silence.
        let samples: &'static [u8] = match data {
            Cow::Borrowed(s) => s,
            Cow::Owned(_) => &[],
        };
        // SAFETY: `i8` and `u8` have the same size and alignment, and every byte is a valid `i8`.
        let samples = unsafe { core::slice::from_raw_parts(samples.as_ptr().cast::<i8>(), samples.len()) };
        Channel(Voice::new(samples))
    }

    fn stop(&mut self) {
        self.0.stop();
    }

    fn pause(&mut self) -> &mut Self {
        self.0.pause();
        self
    }

    fn resume(&mut self) -> &mut Self {
        self.0.resume();
        self
    }

    fn should_loop(&mut self) -> &mut Self {
        self.0.looping(0);
        self
    }

    fn volume(&mut self, value: impl Into<agb_fixnum::Num<i16, 8>>) -> &mut Self {
        self.0.volume(i32::from(value.into().to_raw()));
        self
    }

    fn restart_point(&mut self, value: impl Into<agb_fixnum::Num<u32, 8>>) -> &mut Self {
        self.0.looping(value.into().to_raw() << 4);
        self
    }

    fn playback(&mut self, playback_speed: impl Into<agb_fixnum::Num<u32, 8>>) -> &mut Self {
        self.0.step(step_of(playback_speed.into()));
        self
    }

    fn panning(&mut self, panning: impl Into<agb_fixnum::Num<i16, 8>>) -> &mut Self {
        self.0.panning(i32::from(panning.into().to_raw()));
        self
    }

    fn set_pos(&mut self, pos: impl Into<agb_fixnum::Num<u32, 8>>) -> &mut Self {
        self.0.set_pos(pos.into().to_raw() << 4);
        self
    }
}

impl agb_tracker::Mixer for Mixer {
    type ChannelId = VoiceId;
    type SoundChannel = Channel;

    fn channel(&mut self, id: &VoiceId) -> Option<&mut Channel> {
        // SAFETY: `Channel` is a `repr(transparent)` wrapper of `Voice`.
        self.voice(id).map(|v| unsafe { &mut *(v as *mut Voice).cast::<Channel>() })
    }

    fn play_sound(&mut self, channel: Channel) -> Option<VoiceId> {
        self.play(channel.0)
    }
}
