//! The music's cost: the mixer and the tracker at their worst, eight voices playing, with the cartridge's
//! prefetch buffer on and off (the music fixture, `fixtures/music.rs`), and in the game's own sessions (its
//! telemetry); and the mixer's IWRAM, code and state apart, read from the game's ELF.

use crate::Table;
use harness::elf::Elf;
use harness::emulator::{CYCLES_PER_FRAME, Emulator};
use harness::protocol::{MAILBOX, MAILBOX_MAGIC, Message};
use harness::telemetry::Telemetry;
use std::path::Path;

/// The fixture's eight-voice tests, in its order: prefetch on, then off.
const EIGHT_VOICES: [(u32, &str); 2] = [(3, "on"), (4, "off")];
/// Frames each runs: stage 5's song through its busiest rows, a report every 60.
const FRAMES: u64 = 1_200;
/// The budget: mixer and tracker at most 8 % of a frame.
const GOAL: f64 = 8.0;

fn share(cycles: u32) -> f64 {
    f64::from(cycles) * 100.0 / CYCLES_PER_FRAME as f64
}

/// The most cycles of any VBlank's music in the fixture's test `index`, and the most voices it reported.
fn worst(fixture: &Path, index: u32) -> Result<(u32, u32), String> {
    let mut emu = Emulator::open(fixture)?;
    emu.write32(MAILBOX, MAILBOX_MAGIC);
    emu.write32(MAILBOX + 4, index);
    let (mut max, mut voices) = (0, 0);
    for _ in 0..FRAMES {
        emu.run_frame();
        for line in emu.take_log() {
            if let Message::Panic(m) = Message::parse(&line.text) {
                return Err(format!("the music fixture panicked {m}"));
            }
            if let Some(rest) = line.text.strip_prefix("@@music ") {
                let fields: Vec<u32> = rest
                    .split(' ')
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|_| format!("cannot read `{}`", line.text))?;
                let [_, most, playing] = fields[..] else { return Err(format!("cannot read `{}`", line.text)) };
                (max, voices) = (max.max(most), voices.max(playing));
            }
        }
    }
    if max == 0 {
        return Err(format!("the music fixture's test {index} reported nothing in {FRAMES} frames"));
    }
    Ok((max, voices))
}

/// The bytes of the ELF's symbols whose names hold `part` (mangled: length and name) and that lie in IWRAM.
fn iwram_bytes(elf: &Elf, part: &str) -> u32 {
    elf.symbols
        .iter()
        .filter(|s| {
            s.name.contains(part) && !s.name.starts_with("__Thumbv4") && (0x0300_0000..0x0300_8000).contains(&s.address)
        })
        .map(|s| s.size)
        .sum()
}

/// The table: the fixture's worst VBlanks against the goal, and the game's sessions'.
pub fn table(fixture: &Path, game: &Path, sessions: [(&str, &Telemetry); 2]) -> Result<Table, String> {
    let mut table = Table {
        id: "music".into(),
        title: "The music: mixer and tracker, cycles of the worst VBlank".into(),
        columns: ["what plays", "prefetch", "voices", "worst VBlank", "goal", "met?"].map(String::from).to_vec(),
        ..Table::default()
    };
    let mut worst_share: f64 = 0.0;
    for (index, prefetch) in EIGHT_VOICES {
        let (max, voices) = worst(fixture, index)?;
        worst_share = worst_share.max(share(max));
        if voices < 8 {
            return Err(format!("the eight-voice test played only {voices} voices"));
        }
        table.rows.push(vec![
            "stage 5's song and sines on every voice it leaves (fixtures/music.rs)".into(),
            prefetch.into(),
            voices.to_string(),
            format!("{max} ({:.1}%)", share(max)),
            format!("at most {GOAL}%"),
            if share(max) <= GOAL { "yes".into() } else { "**no**".into() },
        ]);
    }
    for (name, t) in sessions {
        table.rows.push(vec![
            format!("the game: {name}"),
            "on".into(),
            format!("at most {}", t.voices.peak),
            format!("{} ({:.1}%)", t.music_max_cycles, share(t.music_max_cycles)),
            "–".into(),
            "–".into(),
        ]);
    }
    let elf = Elf::read(game)?;
    let code = iwram_bytes(&elf, "5mixer9mix_voice") + iwram_bytes(&elf, "5mixer11to_speakers");
    let (state, tracker) = (iwram_bytes(&elf, "5music5MUSIC"), iwram_bytes(&elf, "5music7TRACKER"));
    if code == 0 || state == 0 || tracker == 0 {
        return Err(format!("{}: no mixer code or state in IWRAM", game.display()));
    }
    let verdict = if worst_share <= GOAL {
        format!("Eight voices keep within the {GOAL} % goal.")
    } else {
        format!(
            "**The goal is missed**: at worst the tracker's step and the mixing of eight voices take \
             {worst_share:.1} % of a frame, over the {GOAL} %."
        )
    };
    table.notes.push(format!(
        "Measured in the VBlank handler, where the music runs: the buffer swap, the tracker's step and the mix of \
         the next frame, by the game's stopwatch. 13,379 Hz stereo (224 samples a frame, one buffer a frame), \
         every sample read from ROM a byte at a time by the ARM inner loop in IWRAM, paying ROM's wait states \
         on each. {verdict} The mixer's IWRAM: {code} bytes of code; {state} bytes of state (the voices, the \
         accumulator and both speakers' double buffers), zeroed at start-up; the tracker's {tracker} bytes, \
         copied from ROM."
    ));
    Ok(table)
}
