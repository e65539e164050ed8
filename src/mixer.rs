//! The sample mixer: up to [`VOICES`] voices of signed 8-bit samples, each with its own pitch, volume, panning
//! and loop, mixed to stereo and played through DirectSound (GBATEK "GBA Sound Controller", "GBA DMA
//! Transfers"): FIFO A the right speaker, FIFO B the left, fed by DMA 1 and 2 and both clocked by timer 0.
//!
//! **The rate, 13,379 Hz**: timer 0's period of 1,254 cycles makes exactly [`SAMPLES`] = 224 samples a frame
//! (280,896 cycles), a multiple of 16 (one DMA request moves 16 samples), so one buffer lasts exactly one frame
//! and the DMA and VBlank stay in step for ever. The next rate that fits, 18,157 Hz, costs a third more
//! mixing for every voice, over the budget of 8 % of a frame with eight voices.
//!
//! **The double buffer**: two buffers a speaker, side by side. At each VBlank [`Mixer::swap`] points both DMAs
//! at the pair mixed last, which then plays for exactly one frame, and the pair just played is mixed again.
//! The FIFOs keep what they hold across the swap, so nothing is cut or repeated. Mixing runs in the VBlank
//! handler (`music::on_vblank`), not in the game's loop, so a frame that runs late does not starve the DMA.
//!
//! **A voice is a handle from a stack pool** (`IndexPool`, as bullets are): a voice that ended or was stopped
//! goes back to the pool, and its handle is refused from then on (stale).
//!
//! The mixing's inner loops ([`mix_voice`], [`to_speakers`]) are ARM code in IWRAM, with plain operators only.

use gba::prelude::*;
use stackshot_alloc::pool::{Handle, IndexPool};

/// Voices mixed at once.
pub const VOICES: usize = 8;
/// Samples a speaker a frame.
pub const SAMPLES: usize = 224;
/// Timer 0's period in CPU cycles, one sample.
pub const PERIOD: u16 = 1_254;
/// The output rate in Hz: 2^24 / 1,254.
pub const RATE: u32 = 16_777_216 / PERIOD as u32;
/// Fraction bits of a voice's position and step.
const FRAC: u32 = 12;
/// The most a voice's volume, each side, is scaled to: eight voices at full volume still fit the 16 bits of a
/// side in the packed accumulator (8 × 127 × 32 < 32,768).
pub const FULL: i32 = 32;
/// How far the mixed sum is shifted down to a sample: one voice at full volume reaches half of full scale, so
/// that a chord of a few voices does not clip.
const OUT_SHIFT: u32 = 6;

/// The voices' pool tag.
pub struct Voices;
/// A voice playing in the mixer.
pub type VoiceId = Handle<Voice, u8, Voices>;

/// One sample playing: where in it, how fast, how loud on each side, and where it loops.
pub struct Voice {
    data: &'static [i8],
    /// The position in the sample, `FRAC` fraction bits.
    pos: u32,
    /// Samples of the source an output sample, `FRAC` fraction bits.
    step: u32,
    /// Where a looping voice goes back to at the end (`FRAC` bits), or `None` for a voice that ends.
    restart: Option<u32>,
    /// 0..=256 (256 = 1.0), and -256 (left) ..= 256 (right).
    volume: i32,
    panning: i32,
    playing: bool,
    stopped: bool,
}

impl Voice {
    /// A voice at the start of `data`, at the output rate's pitch (one source sample an output sample), full
    /// volume, centred, not looping.
    pub fn new(data: &'static [i8]) -> Voice {
        Voice { data, pos: 0, step: 1 << FRAC, restart: None, volume: 256, panning: 0, playing: true, stopped: false }
    }

    /// Loops back to `point` (in samples, `FRAC` fraction bits) at the end.
    pub fn looping(&mut self, point: u32) -> &mut Voice {
        self.restart = Some(point.min(self.end()));
        self
    }

    /// Source samples an output sample, `FRAC` fraction bits.
    pub fn step(&mut self, step: u32) -> &mut Voice {
        self.step = step;
        self
    }

    /// 0..=256 (256 = full).
    pub fn volume(&mut self, volume: i32) -> &mut Voice {
        self.volume = volume.clamp(0, 256);
        self
    }

    /// -256 (left) ..= 256 (right).
    pub fn panning(&mut self, panning: i32) -> &mut Voice {
        self.panning = panning.clamp(-256, 256);
        self
    }

    /// The position, in samples with `FRAC` fraction bits.
    pub fn set_pos(&mut self, pos: u32) -> &mut Voice {
        self.pos = pos.min(self.end());
        self
    }

    pub fn pause(&mut self) -> &mut Voice {
        self.playing = false;
        self
    }

    pub fn resume(&mut self) -> &mut Voice {
        self.playing = true;
        self
    }

    /// Ends the voice: its slot goes back to the pool at the next mix, and its handle is refused after.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    fn end(&self) -> u32 {
        (self.data.len() as u32) << FRAC
    }

    /// The left and right factors of a sample for a master `volume` (0..=256), packed as `left << 16 | right`
    /// (each 0..=FULL).
    fn packed(&self, master: i32) -> i32 {
        let v = (self.volume * master) >> 8;
        let left = (v * (256 - self.panning).min(256)) >> 8;
        let right = (v * (256 + self.panning).min(256)) >> 8;
        (((left * FULL) >> 8) << 16) + ((right * FULL) >> 8)
    }

    /// Mixes this voice's next [`SAMPLES`] samples into `acc`; false when it has ended.
    fn mix(&mut self, acc: &mut [i32; SAMPLES], master: i32) -> bool {
        let end = self.end();
        let loop_len = match self.restart {
            Some(point) if point < end => end - point,
            _ => 0,
        };
        // SAFETY: `acc` holds SAMPLES sums, and `data` is `end >> FRAC` samples long: `mix_voice` reads only below
        // `end`.
        let pos = unsafe {
            mix_voice(acc.as_mut_ptr(), self.data.as_ptr(), self.pos, self.step, self.packed(master), end, loop_len)
        };
        self.pos = pos;
        loop_len != 0 || pos < end
    }
}

/// Adds [`SAMPLES`] samples of `data` into `acc`, from position `pos` by `step` (both with `FRAC` fraction
/// bits), each times `packed` (the sides' factors, [`Voice::packed`]); at `end` the position goes back by
/// `loop_len`, or, for a voice that does not loop (`loop_len` 0), the voice ends there. Returns the position
/// after, at or past `end` for a voice that ended. ARM code in IWRAM: the mixer's inner loop.
///
/// Four samples a turn in assembly while all four lie before `end` (the sums loaded and stored four at a time,
/// each sample's load, step and multiply-add in three instructions and an address sum; the sample is the
/// multiply's second operand, which sets its length: one cycle for a value of 8 bits), and one at a time, with
/// the wrap, across the end.
///
/// # Safety
/// `acc` must be valid for [`SAMPLES`] reads and writes, and `data` for reading its first `end >> FRAC` samples;
/// `loop_len <= end`.
#[unsafe(link_section = ".iwram.mix_voice")]
#[instruction_set(arm::a32)]
#[inline(never)]
unsafe fn mix_voice(
    acc: *mut i32,
    data: *const i8,
    mut pos: u32,
    step: u32,
    packed: i32,
    end: u32,
    loop_len: u32,
) -> u32 {
    // Four samples from `pos` stay before `end` while `pos < limit`.
    let reach = step.wrapping_mul(3);
    let limit = end.saturating_sub(reach);
    let mut k = 0;
    while k < SAMPLES {
        if k + 4 <= SAMPLES && pos < limit {
            // SAFETY: both inside `acc`, which holds SAMPLES sums (`k < SAMPLES`).
            let (bound, mut at) = unsafe { (acc.add(SAMPLES - 3), acc.add(k)) };
            let from = at;
            // SAFETY: `k + 4 <= SAMPLES`, and each turn starts at `at < bound`, so `at + 4 <= acc + SAMPLES`: the
            // turns stay inside `acc`; each starts with `pos < limit`, so its four reads are below `end`, inside
            // `data`. The block keeps to the registers it names.
            unsafe {
                core::arch::asm!(
                    "2:",
                    "ldmia {at}, {{r4, r5, r7, r8}}",
                    "add {t}, {data}, {pos}, lsr #{frac}",
                    "ldrsb {t}, [{t}]",
                    "add {pos}, {pos}, {step}",
                    "mla r4, {packed}, {t}, r4",
                    "add {t}, {data}, {pos}, lsr #{frac}",
                    "ldrsb {t}, [{t}]",
                    "add {pos}, {pos}, {step}",
                    "mla r5, {packed}, {t}, r5",
                    "add {t}, {data}, {pos}, lsr #{frac}",
                    "ldrsb {t}, [{t}]",
                    "add {pos}, {pos}, {step}",
                    "mla r7, {packed}, {t}, r7",
                    "add {t}, {data}, {pos}, lsr #{frac}",
                    "ldrsb {t}, [{t}]",
                    "add {pos}, {pos}, {step}",
                    "mla r8, {packed}, {t}, r8",
                    "stmia {at}!, {{r4, r5, r7, r8}}",
                    // Another turn while the next four lie before `end` (`pos < limit`) and inside `acc`
                    // (`at < bound`): carry clear from both compares.
                    "cmp {pos}, {limit}",
                    "cmpcc {at}, {bound}",
                    "bcc 2b",
                    at = inout(reg) at,
                    pos = inout(reg) pos,
                    data = in(reg) data,
                    step = in(reg) step,
                    packed = in(reg) packed,
                    limit = in(reg) limit,
                    bound = in(reg) bound,
                    frac = const FRAC,
                    t = out(reg) _,
                    // The four sums, in ascending order: LDM and STM move the lowest-numbered register to the
                    // lowest address.
                    out("r4") _,
                    out("r5") _,
                    out("r7") _,
                    out("r8") _,
                    options(nostack)
                );
            }
            // SAFETY: both inside `acc`.
            k += unsafe { at.offset_from(from) } as usize;
            continue;
        }
        if pos >= end {
            if loop_len == 0 {
                return pos;
            }
            pos -= loop_len;
            continue;
        }
        // SAFETY: `k < SAMPLES` and `pos < end`.
        unsafe {
            *acc.add(k) += *data.add((pos >> FRAC) as usize) as i32 * packed;
        }
        pos = pos.wrapping_add(step);
        k += 1;
    }
    pos
}

/// Mixes one frame of `data` at `step` into fresh sums, timed by the caller: for the on-target test of the inner
/// loop's cost. Returns the sums' total.
#[cfg(test)]
pub fn mix_frame_of(data: &'static [i8], step: u32) -> i32 {
    let mut acc = [0; SAMPLES];
    let end = (data.len() as u32) << FRAC;
    let watch = stackshot_platform::cycles::Stopwatch::start();
    // SAFETY: SAMPLES sums, and `data` is `end >> FRAC` samples long.
    unsafe { mix_voice(acc.as_mut_ptr(), data.as_ptr(), 0, step, (3 << 16) + 5, end, end) };
    let cycles = watch.elapsed();
    stackshot_platform::info!("mix_voice, {SAMPLES} samples: {cycles} cycles");
    acc.iter().sum()
}

/// Turns the packed sums in `acc` into the speakers' samples, shifted down by `OUT_SHIFT` and saturated to 8
/// bits, four samples a word. ARM code in IWRAM, in assembly: a sum's right side is its low half, signed, and
/// what it borrowed from the left half comes back with it; a side outside -128..=127 becomes the nearest end
/// (its top bits disagree with its sign: three instructions). The caller clears `acc` after.
#[unsafe(link_section = ".iwram.to_speakers")]
#[instruction_set(arm::a32)]
#[inline(never)]
fn to_speakers(acc: &[i32; SAMPLES], left: &mut [i8; SAMPLES], right: &mut [i8; SAMPLES]) {
    const { assert!(SAMPLES.is_multiple_of(4)) };
    // SAFETY: SAMPLES / 4 turns, each reading four sums and writing four samples a side: inside the three
    // arrays; the buffers are word-aligned (`Pair`). The block keeps to the registers it names.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldmia {acc}!, {{r4, r5, r7, r8}}",
                "mov {t}, r4, lsl #16",
                "sub r4, r4, {t}, asr #16",
                "mov {t}, {t}, asr #{shift}",
                "mov r4, r4, asr #{shift}",
                "mov {c}, {t}, asr #31",
                "teq {c}, {t}, asr #7",
                "eorne {t}, {c}, #127",
                "mov {c}, r4, asr #31",
                "teq {c}, r4, asr #7",
                "eorne r4, {c}, #127",
                "and {t}, {t}, #255",
                "and r4, r4, #255",
                "mov {r}, {t}",
                "mov {l}, r4",
                "mov {t}, r5, lsl #16",
                "sub r5, r5, {t}, asr #16",
                "mov {t}, {t}, asr #{shift}",
                "mov r5, r5, asr #{shift}",
                "mov {c}, {t}, asr #31",
                "teq {c}, {t}, asr #7",
                "eorne {t}, {c}, #127",
                "mov {c}, r5, asr #31",
                "teq {c}, r5, asr #7",
                "eorne r5, {c}, #127",
                "and {t}, {t}, #255",
                "and r5, r5, #255",
                "orr {r}, {r}, {t}, lsl #8",
                "orr {l}, {l}, r5, lsl #8",
                "mov {t}, r7, lsl #16",
                "sub r7, r7, {t}, asr #16",
                "mov {t}, {t}, asr #{shift}",
                "mov r7, r7, asr #{shift}",
                "mov {c}, {t}, asr #31",
                "teq {c}, {t}, asr #7",
                "eorne {t}, {c}, #127",
                "mov {c}, r7, asr #31",
                "teq {c}, r7, asr #7",
                "eorne r7, {c}, #127",
                "and {t}, {t}, #255",
                "and r7, r7, #255",
                "orr {r}, {r}, {t}, lsl #16",
                "orr {l}, {l}, r7, lsl #16",
                "mov {t}, r8, lsl #16",
                "sub r8, r8, {t}, asr #16",
                "mov {t}, {t}, asr #{shift}",
                "mov r8, r8, asr #{shift}",
                "mov {c}, {t}, asr #31",
                "teq {c}, {t}, asr #7",
                "eorne {t}, {c}, #127",
                "mov {c}, r8, asr #31",
                "teq {c}, r8, asr #7",
                "eorne r8, {c}, #127",
                "and {t}, {t}, #255",
                "and r8, r8, #255",
                "orr {r}, {r}, {t}, lsl #24",
                "orr {l}, {l}, r8, lsl #24",
                "str {l}, [{left}], #4",
                "str {r}, [{right}], #4",
                "cmp {acc}, {last}",
                "bne 2b",
            acc = inout(reg) acc.as_ptr() => _,
            left = inout(reg) left.as_mut_ptr() => _,
            right = inout(reg) right.as_mut_ptr() => _,
            last = in(reg) acc.as_ptr().add(SAMPLES),
            shift = const 16 + OUT_SHIFT,
            t = out(reg) _,
            c = out(reg) _,
            l = out(reg) _,
            r = out(reg) _,
            out("r4") _,
            out("r5") _,
            out("r7") _,
            out("r8") _,
            options(nostack)
        );
    }
}

/// A speaker's two buffers, side by side, word-aligned for the DMA's 32-bit reads.
#[repr(C, align(4))]
struct Pair([[i8; SAMPLES]; 2]);

/// The mixer: its voices, the sums of a frame, and the speakers' buffers.
pub struct Mixer {
    voices: IndexPool<Voice, u8, VOICES, Voices>,
    acc: [i32; SAMPLES],
    left: Pair,
    right: Pair,
    /// The buffer (0 or 1) mixed last, which the next swap plays.
    ready: usize,
    /// How far below full (256) every voice's volume is scaled, 0..=256: zero for full, so that a new mixer is
    /// all zeros (a static of it costs no ROM).
    cut: i32,
}

impl Default for Mixer {
    fn default() -> Self {
        Self::new()
    }
}

impl Mixer {
    pub const fn new() -> Mixer {
        Mixer {
            voices: IndexPool::new(),
            acc: [0; SAMPLES],
            left: Pair([[0; SAMPLES]; 2]),
            right: Pair([[0; SAMPLES]; 2]),
            ready: 0,
            cut: 0,
        }
    }

    /// Starts DirectSound: both FIFOs at full volume, A right and B left, clocked by timer 0 at [`RATE`], each
    /// fed by its DMA from the buffers (silent until the first mix). Call once, in VBlank, after `sound::init`
    /// (which turns the sound's master enable on).
    pub fn start(&mut self) {
        TIMER0_CONTROL.write(TimerControl::new());
        SOUND_MIX.write(
            SOUND_MIX
                .read()
                .with_sound_a_full(true)
                .with_sound_b_full(true)
                .with_sound_a_right(true)
                .with_sound_b_left(true)
                .with_sound_a_timer(false)
                .with_sound_b_timer(false)
                .with_sound_a_reset(true)
                .with_sound_b_reset(true),
        );
        self.swap();
        TIMER0_RELOAD.write(0u16.wrapping_sub(PERIOD));
        TIMER0_CONTROL.write(TimerControl::new().with_enabled(true));
    }

    /// Points both DMAs at the buffers mixed last. Call first thing at every VBlank: they then play exactly to
    /// the next.
    #[inline(always)]
    pub fn swap(&mut self) {
        let control = DmaControl::new()
            .with_dest_addr_control(DestAddrControl::Fixed)
            .with_repeat(true)
            .with_transfer_32bit(true)
            .with_start_time(DmaStartTime::Special)
            .with_enabled(true);
        let (left, right) = (self.left.0[self.ready].as_ptr(), self.right.0[self.ready].as_ptr());
        // SAFETY: DMA 1 and 2 are the sound's alone (nothing else in the game starts them). Each reads from
        // a buffer of this mixer, which is a static (`music`'s) and so lives for ever, until the next swap
        // points it elsewhere; a buffer is written only by `mix` while the DMA reads the other one.
        unsafe {
            DMA1_CONTROL.write(DmaControl::new());
            DMA1_SRC.write(right.cast());
            DMA1_DEST.write(FIFO_A.as_usize() as *mut _);
            DMA1_CONTROL.write(control);
            DMA2_CONTROL.write(DmaControl::new());
            DMA2_SRC.write(left.cast());
            DMA2_DEST.write(FIFO_B.as_usize() as *mut _);
            DMA2_CONTROL.write(control);
        }
        self.ready ^= 1;
    }

    /// Mixes the next frame into the buffers the DMAs do not read (silence, with every voice where it is,
    /// unless `run`); the voices that ended go back to the pool.
    pub fn mix(&mut self, run: bool) {
        let master = 256 - self.cut;
        let acc = &mut self.acc;
        stackshot_alloc::sweep!(self.voices, |voice| {
            !voice.stopped && (!run || !voice.playing || voice.mix(acc, master))
        });
        let b = self.ready;
        to_speakers(&self.acc, &mut self.left.0[b], &mut self.right.0[b]);
        // SAFETY: `acc` is SAMPLES words, word-aligned.
        unsafe { stackshot_platform::fast::fill_words(self.acc.as_mut_ptr().cast(), 0, SAMPLES) };
    }

    /// Starts `voice`; `None` when every voice is busy.
    pub fn play(&mut self, voice: Voice) -> Option<VoiceId> {
        self.voices.alloc(voice).ok()
    }

    /// The voice of `id`, while it plays; `None` for a handle that is stale (its voice ended) or foreign.
    pub fn voice(&mut self, id: &VoiceId) -> Option<&mut Voice> {
        self.voices.get_mut(*id).ok()
    }

    /// Every voice's volume is times this, 0..=256.
    pub fn set_master(&mut self, volume: i32) {
        self.cut = 256 - volume.clamp(0, 256);
    }

    /// Voices playing.
    pub fn voices(&self) -> usize {
        self.voices.len()
    }

    /// The most voices that ever played at once.
    pub fn peak_voices(&self) -> usize {
        self.voices.peak()
    }
}
