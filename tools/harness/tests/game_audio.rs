//! The harness's audio capture (`Emulator::capture_audio`, `take_audio`) end to end on the game's ROM: firing
//! is heard over the music; the capture holds as many samples as the rate gives; and a tone
//! comes through whole, every sample once across every frame's end.
mod common;

use common::{Console, Game, key};
use harness::audio::{dominant_frequency, largest_step, rms};
use harness::emulator::{AUDIO_RATE, CYCLES_PER_FRAME, Emulator};
use harness::keys::Script;
use harness::telemetry::State;

/// The loudest a stretch may be and still count as silence: -50 dBFS. A still DAC mixes to exactly 0 in mGBA;
/// a shot's zip on square 1 is about 2,700 (measured).
const SILENCE: f64 = 100.0;

/// The GBA's clock (GBATEK: 2^24 Hz).
const CLOCK: u64 = 1 << 24;

#[test]
fn firing_is_heard_over_the_music() {
    // Two consoles in step into stage 1; one fires for three seconds, the other does not. What differs between
    // their sounds is the shots' (the music is the same: firing does not end the stage's waves in three seconds).
    let start = || {
        let mut g = Game::release();
        g.emu.capture_audio(true);
        let t = g.script(&Script::parse("30 START").unwrap());
        assert_eq!(t.state, State::Playing);
        g.emu.take_audio();
        g
    };
    let (mut quiet, mut firing) = (start(), start());
    for _ in 0..180 {
        quiet.frame(0);
        firing.frame(key("A"));
    }
    let (quiet, firing) = (quiet.emu.take_audio(), firing.emu.take_audio());
    // 180 frames of samples, give or take mGBA's 4-sample blocks.
    assert!(quiet.len() > 179 * 548, "{} samples in 180 frames", quiet.len());
    let shots: Vec<[i16; 2]> =
        quiet.iter().zip(&firing).map(|(q, f)| [f[0].saturating_sub(q[0]), f[1].saturating_sub(q[1])]).collect();
    println!(
        "music alone: RMS {:.1}; firing: RMS {:.1}; the difference: RMS {:.1}, largest step {}, dominant {:.1?} Hz",
        rms(&quiet),
        rms(&firing),
        rms(&shots),
        largest_step(&shots),
        dominant_frequency(&shots, AUDIO_RATE)
    );
    assert!(rms(&quiet) > SILENCE, "stage 1 plays no music: RMS {:.1}", rms(&quiet));
    assert!(rms(&shots) > SILENCE, "three seconds of firing added no sound to the music: RMS {:.1}", rms(&shots));
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
