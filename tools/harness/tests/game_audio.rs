//! The harness's audio capture (`Emulator::capture_audio`, `take_audio`) end to end on the game's ROM: the title
//! is silent and firing makes the shot's zip; the capture holds as many samples as the rate gives; and a tone
//! comes through whole, every sample once across every frame's end.
mod common;

use common::{Console, Game, key};
use harness::audio::{dominant_frequency, largest_step, rms};
use harness::emulator::{AUDIO_RATE, CYCLES_PER_FRAME, Emulator};
use harness::keys::Script;
use harness::telemetry::State;

/// The loudest a stretch may be and still count as silence: -50 dBFS. The game's title plays nothing, which mGBA
/// mixes to exactly 0; a shot's zip on square 1 is about 2,700 (measured).
const SILENCE: f64 = 100.0;

/// The GBA's clock (GBATEK: 2^24 Hz).
const CLOCK: u64 = 1 << 24;

#[test]
fn the_title_is_silent_and_firing_makes_sound() {
    let mut g = Game::release();
    g.emu.capture_audio(true);
    for _ in 0..300 {
        assert_eq!(g.frame(0).state, State::Title);
    }
    let title = g.emu.take_audio();
    // 300 frames of samples, give or take mGBA's 4-sample blocks and the short first frame after reset.
    assert!(title.len() > 299 * 548, "{} samples in 300 frames", title.len());
    let title_rms = rms(&title);
    println!("title: {} samples, RMS {title_rms:.1}, largest step {}", title.len(), largest_step(&title));
    assert!(title_rms < SILENCE, "the title screen is not silent: RMS {title_rms:.1}");

    let t = g.script(&Script::parse(&format!("{} START", g.emu.frames() + 5)).unwrap());
    assert_eq!(t.state, State::Playing);
    g.emu.take_audio();
    for _ in 0..180 {
        g.frame(key("A"));
    }
    let firing = g.emu.take_audio();
    let firing_rms = rms(&firing);
    println!(
        "firing: {} samples, RMS {firing_rms:.1}, largest step {}, dominant {:.1?} Hz",
        firing.len(),
        largest_step(&firing),
        dominant_frequency(&firing, AUDIO_RATE)
    );
    assert!(firing_rms > SILENCE, "three seconds of firing made no sound: RMS {firing_rms:.1}");
}

#[test]
fn the_capture_holds_as_many_samples_as_the_rate_gives() {
    let mut emu = Emulator::open(&common::rom()).unwrap();
    // The first frame after a reset is short (mGBA starts the CPU near the end of a frame's lines).
    emu.run_frame();
    emu.capture_audio(true);
    let (start, mut counts) = (emu.cycles(), Vec::new());
    for _ in 0..600 {
        emu.run_frame();
        counts.push(emu.take_audio().len() as u64);
    }
    let total: u64 = counts.iter().sum();
    let by_frames = 600 * CYCLES_PER_FRAME * u64::from(AUDIO_RATE) / CLOCK;
    let by_cycles = (emu.cycles() - start) * u64::from(AUDIO_RATE) / CLOCK;
    println!(
        "600 frames: {total} samples, {:.3} a frame (the rate gives {:.3}), {by_cycles} by the cycles run; \
         per frame {}..={}",
        total as f64 / 600.0,
        by_frames as f64 / 600.0,
        counts.iter().min().unwrap(),
        counts.iter().max().unwrap()
    );
    // mGBA hands samples over once each 2,048-cycle block (4 samples) of its mix is done: at the start and at
    // the end up to 4 wait for the next frame.
    assert!(total.abs_diff(by_frames) <= 4, "{total} samples in 600 frames, the rate gives {by_frames}");
    assert!(total.abs_diff(by_cycles) <= 4, "{total} samples in 600 frames' cycles, the rate gives {by_cycles}");
    assert!(
        counts.iter().all(|n| (544..=553).contains(n)),
        "a frame's count strays more than a block from 548.6: {counts:?}"
    );
}

/// Where `samples` stops repeating with `period`: the indexes `i` with `samples[i] != samples[i + period]`.
fn breaks(samples: &[[i16; 2]], period: usize) -> Vec<usize> {
    (0..samples.len().saturating_sub(period)).filter(|&i| samples[i] != samples[i + period]).collect()
}

#[test]
fn a_tone_comes_through_every_frame_whole() {
    // Square 2 at 131,072 / (2048 - 1798) = 524.288 Hz, a period of 32,000 cycles: 62.5 samples, so the mix
    // repeats exactly every 125 samples, and a sample lost or repeated anywhere breaks that. Written straight
    // into the sound registers (GBATEK "GBA Sound Controller") on the title, which leaves them alone, so the
    // check does not depend on the game's sound code.
    let mut emu = Emulator::open(&common::rom()).unwrap();
    for _ in 0..10 {
        emu.run_frame();
    }
    emu.write32(0x0400_0084, 0x80); // SOUNDCNT_X: master enable, first (it clears the rest while off)
    emu.write32(0x0400_0080, 0x0002_2277); // SOUNDCNT_L: square 2 to both sides at volume 7; _H: PSG at 100 %
    emu.write32(0x0400_0068, 0xF080); // SOUND2CNT_L: 50 % duty, volume 15, no envelope
    emu.write32(0x0400_006C, 0x8000 | 1798); // SOUND2CNT_H: start, no length, the rate above
    emu.capture_audio(true);
    let mut tone = Vec::new();
    for _ in 0..300 {
        emu.run_frame();
        tone.extend(emu.take_audio());
    }
    // blip_buf's high-pass filter (mGBA's output stage) lets the square's DC decay over the first 0.2 s (6,600
    // samples, measured); from then on it repeats to the sample.
    let settled = &tone[AUDIO_RATE as usize / 2..];
    let f = dominant_frequency(settled, AUDIO_RATE).unwrap();
    println!(
        "tone: {} samples over 300 frames, RMS {:.1}, dominant {f:.3} Hz, largest step {}",
        tone.len(),
        rms(settled),
        largest_step(settled)
    );
    assert!((f - 524.288).abs() < 5.24, "the tone came out at {f:.3} Hz");
    assert!(rms(settled) > SILENCE);
    let broken = breaks(settled, 125);
    assert!(broken.is_empty(), "the tone stops repeating at {} samples, first at {:?}", broken.len(), broken.first());
    // The check would see one sample lost in the middle.
    let mut lost = settled.to_vec();
    lost.remove(lost.len() / 2);
    assert!(!breaks(&lost, 125).is_empty());
}
