//! Sound effects on the GBA's PSG channels (GBATEK "GBA Sound Controller"): square 1, which can sweep its pitch,
//! square 2 and noise. The wave channel and DMA sound stay off.
//!
//! Each effect owns fixed channels and stops by itself within 0.25 s. A new effect cuts what its channel is
//! playing unless that is more important (a pick-up is not cut by a shot); the channel's "playing" flag in
//! SOUNDCNT_X tells when it has ended.
//!
//! Square 1's effects sweep their pitch upwards until it leaves the range, which is what ends them: a falling
//! sweep never ends by itself, and mGBA (0.10) turns a square 1 note whose length ran out back on at its next
//! sweep step, which would leave the channel "playing" for good.
//!
//! ```ignore
//! sound::init();
//! sound::play(Effect::Shot);
//! ```

use crate::save::Level;
use gba::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The player fires: a short rising zip on square 1.
    Shot,
    /// A bullet hits an enemy: a thin blip on square 2.
    Hit,
    /// Something blows up: a burst of noise.
    Explosion,
    /// A pick-up is collected: a higher, slower rising chirp on square 1.
    PickUp,
    /// The screen-clearing bomb: deep noise and a low square 2 drone together.
    Bomb,
}

impl Effect {
    /// Which effects cut which: a higher one is never cut by a lower one. Shots, the most frequent, are the lowest.
    const fn priority(self) -> u8 {
        match self {
            Effect::Shot => 0,
            Effect::Hit => 1,
            Effect::Explosion | Effect::PickUp => 2,
            Effect::Bomb => 3,
        }
    }
}

#[derive(Clone, Copy)]
enum Channel {
    Square1 = 0,
    Square2 = 1,
    Noise = 2,
}

/// The priority of the effect each channel last started (by `Channel`); only meaningful while it plays.
static STARTED: [GbaCell<u8>; 3] = [const { GbaCell::new(0) }; 3];

/// Resets the sound hardware and sets it up for [`play`]: master enable on, square 1, square 2 and noise to both
/// speakers at full volume. Everything playing stops.
pub fn init() {
    // Switching the master enable off clears every PSG register (GBATEK SOUNDCNT_X), silencing all channels;
    // while it is off, writes to them are ignored, so it goes back on first.
    SOUND_ENABLED.write(SoundEnable::new());
    SOUND_ENABLED.write(SoundEnable::new().with_enabled(true));
    set_effects_volume(Level::MAX);
    SOUND_MIX.write(SoundMix::new().with_psg(PsgMix::_100));
    // Restart square 1 without a sweep and at volume 0 (which switches it off): mGBA keeps stepping the sweep of
    // the note before the reset otherwise, and turns the channel back on.
    TONE1_FREQUENCY.write(ToneFrequency::new().with_enabled(true));
}

/// Sets the effects' volume to `level` eighths of full, effects playing included: SOUNDCNT_L's PSG master
/// volume (0..=7, in eighths from one to eight) is `level - 1`, and at level 0, which that volume cannot reach,
/// no channel goes to the speakers.
pub fn set_effects_volume(level: Level) {
    let on = level.get() > 0;
    let master = u16::from(level.get().saturating_sub(1));
    LEFT_RIGHT_VOLUME.write(
        LeftRightVolume::new()
            .with_left_volume(master)
            .with_right_volume(master)
            .with_tone1_left(on)
            .with_tone1_right(on)
            .with_tone2_left(on)
            .with_tone2_right(on)
            .with_noise_left(on)
            .with_noise_right(on),
    );
}

/// Starts `effect` on its channels, except on a channel still playing a more important effect.
pub fn play(effect: Effect) {
    match effect {
        Effect::Shot => square1(
            effect,
            // The frequency value gains 1/16 of itself every 7.8 ms: 175 Hz to out of range in 8 steps, 62 ms.
            SweepControl::new().with_sweep_time(1).with_sweep_num(4),
            tone(Duty::Half, 10, 1, 0),
            1300,
        ),
        Effect::PickUp => square1(
            effect,
            // Gaining 1/32 every 15.6 ms: 440 Hz to out of range in 6 steps, 94 ms, with a thinner sound.
            SweepControl::new().with_sweep_time(2).with_sweep_num(5),
            tone(Duty::Quarter, 12, 3, 0),
            1750,
        ),
        Effect::Hit => square2(effect, tone(Duty::Eighth, 12, 1, 54), 1920), // 1 kHz, 40 ms
        Effect::Explosion => noise(effect, envelope(15, 2, 0), noise_clock(3, 5)),
        Effect::Bomb => {
            noise(effect, envelope(15, 3, 0), noise_clock(7, 6));
            square2(effect, tone(Duty::ThreeQuarters, 15, 2, 0), 1024); // 128 Hz
        }
    }
}

/// Square duty cycles, as TonePattern's `duty` field.
#[derive(Clone, Copy)]
enum Duty {
    Eighth = 0,
    Quarter = 1,
    Half = 2,
    ThreeQuarters = 3,
}

/// A square channel's duty, envelope (starting at `volume` 0..=15, one step down every `step`/64 s) and length
/// ((64 - `length`)/256 s).
fn tone(duty: Duty, volume: u16, step: u16, length: u16) -> TonePattern {
    TonePattern::new().with_duty(duty as u16).with_volume(volume).with_step_time(step).with_length(length)
}

/// The noise channel's envelope and length, as in [`tone`].
fn envelope(volume: u16, step: u16, length: u16) -> NoiseLenEnvelope {
    NoiseLenEnvelope::new().with_volume(volume).with_step_time(step).with_length(length)
}

/// Noise clocked at 524288 Hz / `r` / 2^(`s` + 1) through the 15-bit shift register (white noise).
fn noise_clock(r: u16, s: u16) -> NoiseFrequency {
    NoiseFrequency::new().with_r(r).with_s(s)
}

fn square1(effect: Effect, sweep: SweepControl, pattern: TonePattern, frequency: u16) {
    if claim(Channel::Square1, effect) {
        TONE1_SWEEP.write(sweep);
        TONE1_PATTERN.write(pattern);
        TONE1_FREQUENCY.write(start(frequency));
    }
}

fn square2(effect: Effect, pattern: TonePattern, frequency: u16) {
    if claim(Channel::Square2, effect) {
        TONE2_PATTERN.write(pattern);
        TONE2_FREQUENCY.write(start(frequency));
    }
}

fn noise(effect: Effect, envelope: NoiseLenEnvelope, clock: NoiseFrequency) {
    if claim(Channel::Noise, effect) {
        NOISE_LEN_ENV.write(envelope);
        NOISE_FREQ.write(clock.with_stop_when_expired(true).with_enabled(true));
    }
}

/// The frequency register that (re)starts a square note of `frequency` (131072 / (2048 - `frequency`) Hz),
/// ended by its length counter at the latest.
fn start(frequency: u16) -> ToneFrequency {
    ToneFrequency::new().with_frequency(frequency).with_stop_when_expired(true).with_enabled(true)
}

/// Whether `effect` may start on `channel`: it is silent, or playing something no more important. If so, the
/// channel is now `effect`'s.
fn claim(channel: Channel, effect: Effect) -> bool {
    let status = SOUND_ENABLED.read();
    let playing = match channel {
        Channel::Square1 => status.tone1_playing(),
        Channel::Square2 => status.tone2_playing(),
        Channel::Noise => status.noise_playing(),
    };
    let started = &STARTED[channel as usize];
    if playing && started.read() > effect.priority() {
        return false;
    }
    started.write(effect.priority());
    true
}
