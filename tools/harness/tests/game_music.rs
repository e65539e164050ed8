//! The music, heard: the emulator's audio output (libmgba's, at `AUDIO_RATE`) read while the music fixture
//! (`fixtures/music.rs`, one test a run, picked through the test protocol's mailbox) or the game plays.
mod common;

use common::{Console, Game, key};
use harness::audio::{dominant_frequency, largest_step, likeness, rms};
use harness::emulator::{AUDIO_RATE, Emulator};
use harness::protocol::{MAILBOX, MAILBOX_MAGIC};
use std::path::PathBuf;

fn fixture() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/thumbv4t-none-eabi/release/examples/music");
    assert!(path.exists(), "{} is missing: `make fixture`", path.display());
    path
}

/// The fixture's tests, in its order.
const PITCH: usize = 0;
const SINE: usize = 1;
const SILENT: usize = 2;

/// Quieter than this (RMS of 16-bit samples) is silence: mGBA's output of a still DAC is a constant bias.
const SILENCE: f64 = 30.0;

/// `frames` frames of the fixture's test `index`, after `settle` frames left unheard (its start).
fn listen(index: usize, settle: u64, frames: u64) -> Vec<[i16; 2]> {
    let mut emu = Emulator::open(&fixture()).unwrap();
    emu.write32(MAILBOX, MAILBOX_MAGIC);
    emu.write32(MAILBOX + 4, index as u32);
    emu.capture_audio(true);
    for _ in 0..settle {
        emu.run_frame();
    }
    emu.take_audio();
    for _ in 0..frames {
        emu.run_frame();
    }
    emu.take_audio()
}

/// An A-4 in an XM module, played by agb_tracker over our mixer: 440 Hz, within 2 %.
#[test]
fn a_tracker_note_plays_at_its_pitch() {
    let audio = listen(PITCH, 30, 120);
    assert!(rms(&audio) > SILENCE, "the pitch test is silent: RMS {:.1}", rms(&audio));
    let f = dominant_frequency(&audio, AUDIO_RATE).expect("a pitch");
    println!("A-4: {f:.1} Hz");
    assert!((f / 440.0 - 1.0).abs() < 0.02, "A-4 played at {f:.1} Hz, not 440 Hz within 2 %");
}

/// A sine through the mixer never jumps: every step between two output samples is within what its slope
/// allows, across every buffer swap and through main-loop frames 1.5 frames long (one a second): no gap, no
/// repeat.
#[test]
fn a_sine_has_no_step_at_a_buffer_swap_or_a_late_frame() {
    let audio = listen(SINE, 30, 300);
    let amplitude = audio.iter().map(|s| i32::from(s[0]).abs()).max().unwrap() as f64;
    let f = dominant_frequency(&audio, AUDIO_RATE).expect("a pitch");
    // The sine's steepest step at the output rate, with room for the 8-bit staircase of the mixer's rate.
    let slope = amplitude * 2.0 * std::f64::consts::PI * f / f64::from(AUDIO_RATE);
    let allowed = (3.0 * slope) as u32;
    let step = largest_step(&audio);
    println!("sine {f:.1} Hz, amplitude {amplitude}, largest step {step}, allowed {allowed}");
    assert!(amplitude > 1000.0, "the sine is too quiet to judge: {amplitude}");
    assert!(step <= allowed, "a step of {step} where the sine's slope allows {allowed}: a gap or a repeat");
}

/// At music volume 0 the title's song is silence.
#[test]
fn volume_zero_is_silence() {
    let audio = listen(SILENT, 30, 120);
    assert!(rms(&audio) < SILENCE, "RMS {:.1} at volume 0", rms(&audio));
}

/// The title plays music, and stage 1 a different song: their pitches differ.
#[test]
fn the_title_and_stage_1_play_different_songs() {
    let mut game = Game::release();
    game.emu.capture_audio(true);
    let hold = |game: &mut Game, frames: u64, keys: u32| {
        for _ in 0..frames {
            game.frame(keys);
        }
    };
    hold(&mut game, 60, 0);
    game.emu.take_audio();
    hold(&mut game, 600, 0);
    let title = game.emu.take_audio();
    // START begins the game (one press), then a few seconds of stage 1 with nothing pressed.
    hold(&mut game, 2, key("START"));
    hold(&mut game, 60, 0);
    game.emu.take_audio();
    hold(&mut game, 600, 0);
    let stage = game.emu.take_audio();
    println!("RMS: title {:.1}, stage 1 {:.1}", rms(&title), rms(&stage));
    assert!(rms(&title) > SILENCE, "the title is silent");
    assert!(rms(&stage) > SILENCE, "stage 1 is silent");
    let pitches = |audio: &[[i16; 2]]| -> Vec<i64> {
        audio
            .chunks(AUDIO_RATE as usize / 4)
            .filter_map(|c| dominant_frequency(c, AUDIO_RATE))
            .map(|f| f.round() as i64)
            .collect()
    };
    let (a, b) = (pitches(&title), pitches(&stage));
    assert_ne!(a, b, "the title and stage 1 sound the same");
}

/// Frames `game` plays with `keys` held, and what it played meanwhile.
fn hear(game: &mut Game, frames: u64, keys: u32) -> Vec<[i16; 2]> {
    game.emu.take_audio();
    for _ in 0..frames {
        game.frame(keys);
    }
    game.emu.take_audio()
}

/// A game recording its sound, a second into stage 1 (START pressed on the title, nothing after).
fn in_play() -> Game {
    let mut game = Game::release();
    game.emu.capture_audio(true);
    hear(&mut game, 30, 0);
    hear(&mut game, 2, key("START"));
    hear(&mut game, 60, 0);
    game
}

/// Alike enough to be the same music: the same music a frame apart measures 0.99 and more, and the next bars in
/// its place 0.3 to 0.4 (measured on stage 1).
const SAME_MUSIC: f64 = 0.9;

/// The README: pausing holds the music, silent; resuming carries it on from where it stopped. One game pauses
/// for three seconds, its twin plays on; after the resume the first is a pause behind the second, note for note.
#[test]
fn pause_silences_the_music_and_resume_carries_it_on_from_there() {
    let (mut paused, mut twin) = (in_play(), in_play());
    let ahead = hear(&mut twin, 60, 0);
    hear(&mut paused, 2, key("START"));
    // The music stops at the next VBlank; the effects' last notes ring a few frames more.
    hear(&mut paused, 20, 0);
    let held = hear(&mut paused, 160, 0);
    hear(&mut paused, 2, key("START"));
    let resumed = hear(&mut paused, 60, 0);
    let alike = likeness(&resumed, &ahead, 2 * 549);
    println!(
        "RMS paused {:.1}, resumed {:.1}, ahead {:.1}; likeness {alike:.3}",
        rms(&held),
        rms(&resumed),
        rms(&ahead)
    );
    assert!(rms(&held) < SILENCE, "the pause is not silent: RMS {:.1}", rms(&held));
    assert!(rms(&resumed) > SILENCE, "no music after the resume");
    assert!(alike > SAME_MUSIC, "the music did not carry on from the pause: likeness {alike:.3}");
}

/// A bomb's roar plays over the music, which goes on under it and after it without a break: the bomber and a
/// twin that does not bomb play the same music once the roar is over.
#[test]
fn the_music_goes_on_through_a_bomb() {
    let (mut bomber, mut twin) = (in_play(), in_play());
    let roar = hear(&mut bomber, 2, key("B"));
    let quiet = hear(&mut twin, 2, 0);
    let (roar, quiet) = ([roar, hear(&mut bomber, 58, 0)].concat(), [quiet, hear(&mut twin, 58, 0)].concat());
    let (after, twin_after) = (hear(&mut bomber, 120, 0), hear(&mut twin, 120, 0));
    let (during, then) = (likeness(&roar, &quiet, 8), likeness(&after, &twin_after, 8));
    println!("RMS roar {:.1}, without it {:.1}; likeness during {during:.3}, after {then:.3}", rms(&roar), rms(&quiet));
    assert!(rms(&roar) > rms(&quiet), "the bomb made no sound over the music");
    assert!(during > 0.2, "the music is not under the bomb's roar: likeness {during:.3}");
    assert!(then > SAME_MUSIC, "the music after the bomb is not the music that went on: likeness {then:.3}");
}
