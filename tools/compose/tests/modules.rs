//! Every committed module is what its text makes, loads with the XM parser agb_xm 0.25 uses (xmrs 0.8.5), says
//! what its text says, converts with agb_xm's own converter, and keeps to the soundtrack's limits.

use std::path::{Path, PathBuf};

use xmrs::prelude::*;
use xmrs::xm::xmmodule::XmModule;

const SONGS: [&str; 9] = ["title", "stage1", "stage2", "stage3", "stage4", "stage5", "boss", "gameover", "clear"];

fn music() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/music")
}

fn each() -> Vec<(String, compose::Song, Vec<u8>)> {
    let mut names: Vec<String> = SONGS.iter().map(|s| s.to_string()).collect();
    names.push("pitch-test".into());
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(music().join(format!("{name}.txt")))
                .unwrap_or_else(|e| panic!("{name}.txt: {e}"));
            let song = compose::parse_song(&text).unwrap_or_else(|e| panic!("{name}.txt: {e}"));
            let xm = std::fs::read(music().join(format!("{name}.xm"))).unwrap_or_else(|e| panic!("{name}.xm: {e}"));
            (name, song, xm)
        })
        .collect()
}

#[test]
fn committed_modules_are_what_the_texts_make() {
    for (name, song, xm) in each() {
        assert!(compose::write_xm(&song) == xm, "{name}.xm is not what {name}.txt makes: run `make music`");
    }
}

#[test]
fn modules_load_with_xmrs_as_the_text_says() {
    for (name, song, xm) in each() {
        let module = XmModule::load(&xm).unwrap_or_else(|e| panic!("{name}: {e:?}")).to_module();
        assert_eq!(module.get_num_channels(), song.channels, "{name}: channels");
        assert!(song.channels <= 6, "{name}: more than 6 channels");
        assert_eq!(module.default_bpm, song.bpm, "{name}: bpm");
        assert_eq!(module.default_tempo, song.speed, "{name}: speed");
        assert_eq!(module.pattern_order, song.order, "{name}: order");
        assert_eq!(module.restart_position, song.restart, "{name}: restart");
        assert_eq!(module.pattern.len(), song.patterns.len(), "{name}: patterns");
        for (p, q) in module.pattern.iter().zip(&song.patterns) {
            assert_eq!(p.len(), q.rows.len(), "{name}: pattern {} rows", q.name);
            for (row, want) in p.iter().zip(&q.rows) {
                for (slot, cell) in row.iter().zip(want) {
                    let note: u8 = if slot.note.is_keyoff() { 97 } else { slot.note.into() };
                    assert_eq!(
                        (note, slot.instrument, slot.volume, slot.effect_type, slot.effect_parameter),
                        (cell.note, cell.instrument, cell.volume, cell.effect, cell.param),
                        "{name}: pattern {}",
                        q.name
                    );
                }
            }
        }
        assert_eq!(module.instrument.len(), song.instruments.len(), "{name}: instruments");
        let mut total = 0;
        for (instrument, want) in module.instrument.iter().zip(&song.instruments) {
            let InstrumentType::Default(d) = &instrument.instr_type else { panic!("{name}: {} is empty", want.name) };
            assert_eq!(d.sample.len(), 1, "{name}: {}", want.name);
            let s = &d.sample[0];
            let SampleDataType::Mono8(data) = &s.data else { panic!("{name}: {} is not 8-bit mono", want.name) };
            assert_eq!(data, &want.data, "{name}: {} data", want.name);
            assert_eq!(matches!(s.flags, LoopType::Forward), want.looped, "{name}: {} loop", want.name);
            if want.looped {
                assert_eq!((s.loop_start, s.loop_length as usize), (0, data.len()), "{name}: {} loop", want.name);
            }
            assert_eq!(s.relative_note, want.relative_note, "{name}: {}", want.name);
            assert_eq!(d.volume_envelope.enabled, !want.envelope.is_empty(), "{name}: {} envelope", want.name);
            assert_eq!(d.volume_envelope.point.len(), want.envelope.len(), "{name}: {} envelope", want.name);
            assert!(data.len() <= 2048, "{name}: {} has {} bytes", want.name, data.len());
            total += data.len();
        }
        assert!(total <= 6144, "{name}: samples of {total} bytes");
    }
}

#[test]
fn modules_convert_with_agb_xm() {
    for (name, song, xm) in each() {
        let module = XmModule::load(&xm).unwrap().to_module();
        let track = agb_xm_core::parse_module(&module);
        assert_eq!(track.num_channels, song.channels, "{name}");
        assert_eq!(track.samples.len(), song.instruments.len(), "{name}");
        assert_eq!(track.repeat, song.restart, "{name}");
        let enveloped = song.instruments.iter().filter(|i| !i.envelope.is_empty()).count();
        assert!(track.envelopes.len() <= enveloped, "{name}: envelopes");
    }
}

#[test]
fn pitch_test_plays_a4_at_440_hz() {
    let (_, song, xm) = each().into_iter().find(|(n, ..)| n == "pitch-test").unwrap();
    let track = agb_xm_core::parse_module(&XmModule::load(&xm).unwrap().to_module());
    let slot = &track.pattern_data[0];
    assert_eq!(slot.sample, 1);
    let cycle = song.instruments[0].cycle as f64;
    let hz = slot.speed.to_raw() as f64 / 256.0 * compose::MIXER_RATE / cycle;
    assert!((hz / 440.0 - 1.0).abs() < 0.005, "A-4 plays at {hz} Hz");
    let seconds = compose::song_seconds(&song) - compose::loop_seconds(&song);
    assert!((seconds - 4.0).abs() < 0.1, "the A-4 lasts {seconds} s");
}

#[test]
fn every_tonal_instrument_is_in_tune() {
    for (name, song, _) in each() {
        for inst in song.instruments.iter().filter(|i| !i.drum) {
            let hz =
                compose::agb_speed(58, inst.relative_note, inst.finetune) * compose::MIXER_RATE / inst.cycle as f64;
            assert!((hz / 440.0 - 1.0).abs() < 0.01, "{name}: {} plays A-4 at {hz} Hz", inst.name);
        }
    }
}

#[test]
fn songs_loop_in_30_to_90_seconds_and_the_jingle_ends_on_silence() {
    for (name, song, _) in each() {
        match name.as_str() {
            "clear" | "pitch-test" => {
                assert!(!song.loops, "{name} should not loop");
                let last = &song.patterns[song.order[song.restart]];
                assert!(
                    last.rows.iter().flatten().all(|c| compose::Cell { note: 0, ..*c } == compose::Cell::default()),
                    "{name}: loops on sound"
                );
                assert!(compose::song_seconds(&song) < 12.0, "{name} is long");
            }
            _ => {
                assert!(song.loops, "{name} should loop");
                let s = compose::loop_seconds(&song);
                assert!((30.0..=90.0).contains(&s), "{name} loops after {s:.1} s");
            }
        }
    }
}
