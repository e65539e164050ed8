//! Sound effects set the PSG registers as GBATEK describes, read back where the hardware lets them be read
//! (lengths and frequencies are write-only), and stop by themselves.

use crate::save::Level;
use crate::sound::{self, Effect};

/// Every effect.
const EFFECTS: [Effect; 5] = [Effect::Shot, Effect::Hit, Effect::Explosion, Effect::PickUp, Effect::Bomb];
use gba::prelude::*;

/// (square 1, square 2, noise) playing, from SOUNDCNT_X.
fn playing() -> (bool, bool, bool) {
    let status = SOUND_ENABLED.read();
    (status.tone1_playing(), status.tone2_playing(), status.noise_playing())
}

/// Scanlines in a quarter of a second and a little: the longest any effect may play. A line is 1,232 cycles of
/// the 16.78 MHz CPU. (Waits count lines, not timer ticks: the timers are the test runner's cycle counter.)
const QUARTER_SECOND_LINES: u32 = 16_777_216 / 4 / 1232 + 100;

/// Waits for `lines` scanlines to begin, or until `done`; whether `done` came first.
fn wait_lines(lines: u32, done: impl Fn() -> bool) -> bool {
    let mut line = VCOUNT.read();
    for _ in 0..lines {
        while VCOUNT.read() == line {
            if done() {
                return true;
            }
        }
        line = VCOUNT.read();
    }
    done()
}

/// Waits until every channel is silent, a quarter of a second at most; whether they fell silent.
fn wait_for_silence() -> bool {
    wait_lines(QUARTER_SECOND_LINES, || playing() == (false, false, false))
}

/// Several sweep steps (7.8 ms each, about 6 lines a millisecond) long.
fn wait_50_ms() {
    wait_lines(300, || false);
}

/// GBATEK SOUND1CNT_L bit 3: 1 = the frequency decreases (the gba crate names this bit `sweep_increasing`).
fn sweep_rises(sweep: SweepControl) -> bool {
    !sweep.sweep_increasing() && sweep.sweep_time() > 0 && sweep.sweep_num() > 0
}

#[test_case]
fn init_turns_sound_on_and_routes_the_three_channels_to_both_speakers() {
    sound::init();
    assert!(SOUND_ENABLED.read().enabled());
    let volume = LEFT_RIGHT_VOLUME.read();
    assert_eq!((volume.left_volume(), volume.right_volume()), (7, 7));
    assert!(volume.tone1_left() && volume.tone1_right() && volume.tone2_left() && volume.tone2_right());
    assert!(volume.noise_left() && volume.noise_right());
    assert!(!volume.wave_left() && !volume.wave_right());
    assert_eq!(SOUND_MIX.read().psg(), PsgMix::_100);
    assert_eq!(playing(), (false, false, false));
}

#[test_case]
fn the_effects_volume_is_the_psg_master_volume_and_level_0_routes_nothing() {
    sound::init();
    for level in 0..=Level::MAX.get() {
        sound::set_effects_volume(Level::new(level).unwrap());
        let volume = LEFT_RIGHT_VOLUME.read();
        let master = u16::from(level.max(1) - 1);
        assert_eq!((volume.left_volume(), volume.right_volume()), (master, master), "level {level}");
        let tones = [volume.tone1_left(), volume.tone1_right(), volume.tone2_left(), volume.tone2_right()];
        let routed = [tones[0], tones[1], tones[2], tones[3], volume.noise_left(), volume.noise_right()];
        assert_eq!(routed, [level > 0; 6], "level {level}");
        assert!(!volume.wave_left() && !volume.wave_right());
    }
    sound::init();
    assert_eq!(LEFT_RIGHT_VOLUME.read().left_volume(), 7, "init is at full volume");
}

#[test_case]
fn init_silences_what_was_playing_for_good() {
    sound::init();
    sound::play(Effect::Bomb);
    sound::play(Effect::Shot);
    assert_eq!(playing(), (true, true, true));
    sound::init();
    assert_eq!(playing(), (false, false, false));
    wait_50_ms();
    assert_eq!(playing(), (false, false, false));
}

#[test_case]
fn a_shot_is_a_rising_square_1_note_that_fades() {
    sound::init();
    sound::play(Effect::Shot);
    assert_eq!(playing(), (true, false, false));
    let sweep = TONE1_SWEEP.read();
    assert!(sweep_rises(sweep), "{sweep:?}");
    let pattern = TONE1_PATTERN.read();
    assert!(pattern.volume() > 0 && pattern.step_time() > 0 && !pattern.step_increasing(), "{pattern:?}");
    assert!(TONE1_FREQUENCY.read().stop_when_expired());
}

#[test_case]
fn a_pick_up_is_a_slower_rising_square_1_note() {
    sound::init();
    sound::play(Effect::Shot);
    let shot = TONE1_SWEEP.read();
    sound::init();
    sound::play(Effect::PickUp);
    assert_eq!(playing(), (true, false, false));
    let sweep = TONE1_SWEEP.read();
    assert!(sweep_rises(sweep) && sweep.sweep_time() > shot.sweep_time(), "pick-up {sweep:?}, shot {shot:?}");
}

#[test_case]
fn a_hit_is_square_2_alone() {
    sound::init();
    sound::play(Effect::Hit);
    assert_eq!(playing(), (false, true, false));
    let pattern = TONE2_PATTERN.read();
    assert!(pattern.volume() > 0 && !pattern.step_increasing(), "{pattern:?}");
    assert!(TONE2_FREQUENCY.read().stop_when_expired());
}

#[test_case]
fn an_explosion_is_full_volume_noise() {
    sound::init();
    sound::play(Effect::Explosion);
    assert_eq!(playing(), (false, false, true));
    let envelope = NOISE_LEN_ENV.read();
    assert!(envelope.volume() == 15 && envelope.step_time() > 0 && !envelope.step_increasing(), "{envelope:?}");
    let clock = NOISE_FREQ.read();
    assert!(clock.stop_when_expired() && !clock.counter7(), "{clock:?}");
}

#[test_case]
fn a_bomb_is_noise_and_square_2_lower_than_an_explosion() {
    sound::init();
    sound::play(Effect::Explosion);
    let explosion = NOISE_FREQ.read();
    sound::init();
    sound::play(Effect::Bomb);
    assert_eq!(playing(), (false, true, true));
    let bomb = NOISE_FREQ.read();
    // The noise clock is 524288 Hz / r / 2^(s + 1): compare r * 2^s.
    let slowness = |n: NoiseFrequency| u32::from(n.r().max(1)) << n.s();
    assert!(slowness(bomb) > slowness(explosion), "bomb {bomb:?}, explosion {explosion:?}");
}

#[test_case]
fn every_effect_ends_by_itself_within_a_quarter_second() {
    for effect in EFFECTS {
        sound::init();
        sound::play(effect);
        assert_ne!(playing(), (false, false, false), "{effect:?} plays");
        assert!(wait_for_silence(), "{effect:?} still plays after a quarter second");
    }
}

#[test_case]
fn a_shot_does_not_cut_a_pick_up_but_follows_it() {
    // The two differ in duty cycle, which reads back: a quarter for the pick-up, a half for the shot.
    let duty = || TONE1_PATTERN.read().duty();
    sound::init();
    sound::play(Effect::PickUp);
    sound::play(Effect::Shot);
    assert_eq!(duty(), 1, "the pick-up still plays");
    assert!(wait_for_silence());
    sound::play(Effect::Shot);
    assert_eq!(duty(), 2, "a silent channel takes the shot");
    sound::play(Effect::PickUp);
    assert_eq!(duty(), 1, "a pick-up cuts a shot");
}

#[test_case]
fn an_ended_effect_stays_ended() {
    for effect in EFFECTS {
        sound::init();
        sound::play(effect);
        assert!(wait_for_silence(), "{effect:?}");
        wait_50_ms();
        assert_eq!(playing(), (false, false, false), "{effect:?} came back on");
    }
}
