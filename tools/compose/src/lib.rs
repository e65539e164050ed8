//! StackShot's music generator: song texts in, FastTracker II XM modules out, with every sample synthesised here.
//!
//! The game plays the modules with `agb_tracker` 0.25 (`include_xm!`), so only what `agb_xm` 0.25 converts is
//! written: 8-bit mono samples, forward loops, linear frequencies, volume envelopes with a sustain point and a
//! fade-out, the volume column's set-volume, and the effects 0xy (arpeggio), 4xy (vibrato), ECx (note cut) and
//! key-off. A song is at most 6 channels (the mixer has 8).
//!
//! # The song text (`assets/music/NAME.txt`)
//!
//! One statement a line; a word starting with `#` starts a comment. Top-level statements:
//!
//! ```text
//! title Stage 1: driving           free text, kept as the module's name (first 20 bytes)
//! bpm 150                          XM BPM: ticks a second are 0.4 x this
//! speed 6                          ticks a row; 4 rows a beat, so at speed 6 the beat's tempo is the BPM
//! channels 4                       channels in the module (at most 6)
//! restart 0                        order index the song loops back to; `restart end` for a jingle: a silent
//!                                  pattern (key-offs, then nothing) is appended and the song loops on it
//! inst NAME key=value ...          an instrument (below); its number is its place among the `inst` lines
//! def NAME tokens ...              a phrase of tokens, used in a channel line as $NAME
//! pattern NAME ROWS                starts a pattern; channel lines follow
//! CH INST[/N] tokens ...           a channel line: channel number (1-based), default instrument, tokens;
//!                                  /N makes every token last N rows. Lines of one channel join up; a channel
//!                                  shorter than the pattern (a divisor of its rows) repeats to fill it
//! order NAME NAME ...              the order list (several lines join up)
//! ```
//!
//! Tokens, one a row:
//!
//! * `C4`, `F#3`, `Bb5`: a note (A4 sounds at 440 Hz, whatever the instrument's cycle length), optionally
//!   `@INST` (another instrument), `:V` (volume 0-64 in the volume column), `!XYY` (an XM effect: type X, hex
//!   parameter YY, e.g. `!037` a minor arpeggio, `!EC2` cut after two ticks).
//! * a drum instrument's name, e.g. `k`, `s:40`: that drum at its own pitch (instruments with a `drum=`).
//! * `.` nothing (the note goes on); `-` the note goes on and repeats its effect (its arpeggio, say), or, for an
//!   instrument with `vib=`, vibrato once the note is `vibdelay` rows old; `^` key-off (the envelope's release).
//! * `$NAME`, `$NAME+5`, `$NAME-12*2`: a `def` phrase, transposed by semitones, repeated.
//! * `|` is ignored: bar lines for the reader.
//!
//! Instrument keys: `wave=` sine, triangle, saw, square, pulse25, pulse12, organ, soft, bass (looped single
//! cycles) or `drum=` kick, snare, hat, tom (one-shot noise and sine bursts); `cycle=` samples a cycle (default
//! 128); `vol=` 0-64; `env=MS:V,MS:V,...` the volume envelope, milliseconds as agb_tracker plays them, V 0-64;
//! `sus=` the envelope point held until key-off; `fade=` the XM fade-out after key-off; `vib=XY` the 4xy vibrato
//! of held notes; `vibdelay=` rows before it starts (default 2); `len=` a drum's milliseconds.
//!
//! Tuning: each tonal sample gets the relative note and finetune that make A-4 play at 440 Hz with agb_xm's
//! formula (8363 Hz at C-4, 12 semitones an octave) for its cycle length, chosen against agb_tracker's truncation
//! of playback speed to 1/256, so every note of the range is as close as it gets.

use std::collections::HashMap;
use std::fmt::Write as _;

/// The GBA's frame rate, which agb_tracker steps at.
pub const FRAME_RATE: f64 = 59.7275;
/// agb's mixer rate, against which agb_xm computes playback speed.
pub const MIXER_RATE: f64 = 32768.0;
/// The XM note number of a key-off.
pub const KEY_OFF: u8 = 97;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    /// 0 none, 1..=96 C-0..B-7, 97 key-off.
    pub note: u8,
    pub instrument: u8,
    pub volume: u8,
    pub effect: u8,
    pub param: u8,
}

#[derive(Clone, Debug)]
pub struct Instrument {
    pub name: String,
    pub kind: String,
    pub drum: bool,
    pub cycle: usize,
    pub volume: u8,
    /// Envelope points in XM ticks (converted from milliseconds for agb_tracker's timing) and 0-64.
    pub envelope: Vec<(u16, u8)>,
    pub sustain: Option<usize>,
    pub fade: u16,
    pub vibrato: Option<u8>,
    pub vib_delay: usize,
    pub data: Vec<i8>,
    pub relative_note: i8,
    pub finetune: i8,
    pub looped: bool,
}

#[derive(Clone, Debug)]
pub struct Pattern {
    pub name: String,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Clone, Debug)]
pub struct Song {
    pub title: String,
    pub bpm: u16,
    pub speed: u16,
    pub channels: usize,
    pub restart: usize,
    /// False for a jingle, whose order list ends on the silent pattern it loops on.
    pub loops: bool,
    pub instruments: Vec<Instrument>,
    pub patterns: Vec<Pattern>,
    pub order: Vec<usize>,
}

/// The XM note number (1 = C-0) of a note name like `C4`, `F#3`, `Bb5`.
pub fn note_number(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() < 2 || b.len() > 3 {
        return None;
    }
    let base = match b[0] {
        b'C' => 0,
        b'D' => 2,
        b'E' => 4,
        b'F' => 5,
        b'G' => 7,
        b'A' => 9,
        b'B' => 11,
        _ => return None,
    };
    let (acc, oct) = match b.len() {
        2 => (0i32, b[1]),
        _ => match b[1] {
            b'#' => (1, b[2]),
            b'b' => (-1, b[2]),
            _ => return None,
        },
    };
    if !oct.is_ascii_digit() || oct > b'7' {
        return None;
    }
    let n = (oct - b'0') as i32 * 12 + base + acc + 1;
    (1..=96).contains(&n).then_some(n as u8)
}

/// The sample rate agb_xm gives a note (linear frequencies): 8363 Hz at C-4, relative note and finetune added.
pub fn note_rate(note: u8, relative_note: i8, finetune: i8) -> f64 {
    // xmrs stores finetune / 127, agb_xm multiplies by 128: 1/128 semitone units, slightly stretched.
    let ft = (finetune as f64 / 127.0).clamp(-1.0, 1.0) * 128.0;
    let real = note as f64 + relative_note as f64 - 1.0;
    let period = 7680.0 - real * 64.0 - ft / 2.0;
    8363.0 * 2f64.powf((4608.0 - period) / 768.0)
}

/// The playback speed agb_tracker ends up with: agb_xm's 12-bit then 8-bit fixed point, both truncated.
pub fn agb_speed(note: u8, relative_note: i8, finetune: i8) -> f64 {
    let raw12 = (note_rate(note, relative_note, finetune) / MIXER_RATE * 4096.0) as u32;
    (raw12 >> 4) as f64 / 256.0
}

/// The frequency a note should sound at: A-4 (note 58) at 440 Hz.
pub fn concert_pitch(note: u8) -> f64 {
    440.0 * 2f64.powf((note as f64 - 58.0) / 12.0)
}

/// The relative note and finetune for a looped cycle of `cycle` samples, so that agb_tracker's quantised speed
/// is closest to concert pitch over the notes this cycle length plays well (speed 0.5 to 8).
fn tune(cycle: usize) -> (i8, i8) {
    let semis = 12.0 * (440.0 * cycle as f64 / 8363.0).log2() - 9.0;
    let rel = semis.round();
    let mut best = (f64::MAX, 0i8);
    for ft in -128i32..=127 {
        let ft = ft as i8;
        let mut err = 0.0;
        for note in 1..=96u8 {
            let ideal = concert_pitch(note) * cycle as f64 / MIXER_RATE;
            if !(0.5..8.0).contains(&ideal) {
                continue;
            }
            let got = agb_speed(note, rel as i8, ft).max(1.0 / 256.0);
            err += (got / ideal).ln().abs();
        }
        if err < best.0 {
            best = (err, ft);
        }
    }
    (rel as i8, best.1)
}

/// A deterministic noise source (xorshift32).
struct Noise(u32);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 as f64 / u32::MAX as f64) * 2.0 - 1.0
    }
}

/// One cycle of a waveform, from harmonic amplitudes (band-limited) or drawn directly.
fn wave_cycle(kind: &str, n: usize) -> Result<Vec<f64>, String> {
    let tau = std::f64::consts::TAU;
    let harmonics = |amp: &dyn Fn(usize) -> f64, count: usize| -> Vec<f64> {
        (0..n)
            .map(|i| {
                let x = i as f64 / n as f64;
                (1..=count.min(n / 2 - 1)).map(|k| amp(k) * (tau * k as f64 * x).sin()).sum()
            })
            .collect()
    };
    let v = match kind {
        "sine" => harmonics(&|k| if k == 1 { 1.0 } else { 0.0 }, 1),
        "triangle" => {
            harmonics(&|k| if k % 2 == 1 { (if k % 4 == 1 { 1.0 } else { -1.0 }) / (k * k) as f64 } else { 0.0 }, 15)
        }
        "saw" => harmonics(&|k| 1.0 / k as f64, 24),
        "square" => harmonics(&|k| if k % 2 == 1 { 1.0 / k as f64 } else { 0.0 }, 25),
        "organ" => harmonics(&|k| [0.0, 1.0, 0.6, 0.0, 0.35, 0.0, 0.0, 0.0, 0.2][k.min(8)], 8),
        "soft" => harmonics(&|k| [0.0, 1.0, 0.35, 0.18, 0.08, 0.04][k.min(5)], 5),
        "bass" => harmonics(&|k| 1.0 / (k as f64).powf(1.4), 12),
        "pulse25" | "pulse12" => {
            let duty = if kind == "pulse25" { 0.25 } else { 0.125 };
            // Band-limited: the pulse's Fourier series, 20 harmonics.
            harmonics(&|k| (std::f64::consts::PI * k as f64 * duty).sin() / k as f64, 20)
        }
        _ => return Err(format!("unknown wave {kind}")),
    };
    Ok(v)
}

/// Scales to 8-bit at a peak of 120 (headroom for the mixer), removing any DC.
fn to_i8(v: &[f64], peak: f64) -> Vec<i8> {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let max = v.iter().map(|x| (x - mean).abs()).fold(1e-9, f64::max);
    v.iter().map(|x| ((x - mean) / max * peak).round().clamp(-127.0, 127.0) as i8).collect()
}

/// A drum: the samples, the relative note that makes C-4 play at the rate they were made at, and the finetune.
fn drum(kind: &str, len_ms: Option<f64>) -> Result<(Vec<i8>, i8, i8), String> {
    let tau = std::f64::consts::TAU;
    let mut noise = Noise(0x5eed_1234);
    // Rates reachable from C-4 (8363 Hz) by whole semitones: 0 = 8363, 7 = 12530, 12 = 16726.
    let (rel, ms) = match kind {
        "kick" => (0, 150.0),
        "snare" => (7, 100.0),
        "hat" => (12, 35.0),
        "tom" => (0, 160.0),
        _ => return Err(format!("unknown drum {kind}")),
    };
    let ms = len_ms.unwrap_or(ms);
    let rate = 8363.0 * 2f64.powf(rel as f64 / 12.0);
    let n = (rate * ms / 1000.0) as usize;
    let mut phase = 0.0;
    let mut last = 0.0;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let t = i as f64 / rate;
        let fade = (1.0 - i as f64 / n as f64).min(1.0);
        let x = match kind {
            "kick" => {
                let f = 48.0 + 120.0 * (-t / 0.025).exp();
                phase += tau * f / rate;
                phase.sin() * (-t / 0.07).exp()
            }
            "tom" => {
                let f = 90.0 + 60.0 * (-t / 0.04).exp();
                phase += tau * f / rate;
                phase.sin() * (-t / 0.07).exp() + 0.08 * noise.next() * (-t / 0.02).exp()
            }
            "snare" => {
                phase += tau * 190.0 / rate;
                0.75 * noise.next() * (-t / 0.03).exp() + 0.5 * phase.sin() * (-t / 0.03).exp()
            }
            _ => {
                // hat: noise through a first difference (high-pass), short.
                let r = noise.next();
                let h = r - last;
                last = r;
                0.6 * h * (-t / 0.010).exp()
            }
        };
        v.push(x * fade);
    }
    let max = v.iter().map(|x: &f64| x.abs()).fold(1e-9, f64::max);
    let data = v.iter().map(|x| (x / max * 120.0).round() as i8).collect();
    Ok((data, rel, 0))
}

fn parse_instrument(words: &[&str], bpm: u16) -> Result<Instrument, String> {
    let name = words.first().ok_or("inst needs a name")?.to_string();
    let mut kv = HashMap::new();
    for w in &words[1..] {
        let (k, v) = w.split_once('=').ok_or_else(|| format!("inst {name}: `{w}` is not key=value"))?;
        kv.insert(k, v);
    }
    let num = |k: &str, d: f64| -> Result<f64, String> {
        kv.get(k).map_or(Ok(d), |v| v.parse::<f64>().map_err(|e| format!("inst {name}: {k}: {e}")))
    };
    let volume = num("vol", 64.0)?.clamp(0.0, 64.0) as u8;
    let mut envelope = vec![];
    if let Some(env) = kv.get("env") {
        let mut last: Option<u16> = None;
        for point in env.split(',') {
            let (ms, v) = point.split_once(':').ok_or_else(|| format!("inst {name}: env point `{point}`"))?;
            let ms: f64 = ms.parse().map_err(|e| format!("inst {name}: env: {e}"))?;
            let v: u8 = v.parse().map_err(|e| format!("inst {name}: env: {e}"))?;
            // agb_tracker plays an envelope point at GBA frame tick * 250 / bpm: invert that.
            let mut tick = (ms / 1000.0 * FRAME_RATE * bpm as f64 / 250.0).round() as u16;
            if let Some(l) = last {
                tick = tick.max(l + 1);
            }
            last = Some(tick);
            envelope.push((tick, v.min(64)));
        }
        if envelope.len() < 2 || envelope.len() > 12 || envelope[0].0 != 0 {
            return Err(format!("inst {name}: an envelope has 2 to 12 points, the first at 0 ms"));
        }
    }
    let sustain = kv.get("sus").map(|s| s.parse::<usize>()).transpose().map_err(|e| format!("{name}: sus: {e}"))?;
    if sustain.is_some_and(|s| s >= envelope.len()) {
        return Err(format!("inst {name}: sus past the envelope"));
    }
    let fade = num("fade", 0.0)? as u16;
    let vibrato =
        kv.get("vib").map(|v| u8::from_str_radix(v, 16)).transpose().map_err(|e| format!("inst {name}: vib: {e}"))?;
    let vib_delay = num("vibdelay", 2.0)? as usize;
    let (kind, drum_kind) = match (kv.get("wave"), kv.get("drum")) {
        (Some(w), None) => (w.to_string(), false),
        (None, Some(d)) => (d.to_string(), true),
        _ => return Err(format!("inst {name}: one of wave= or drum=")),
    };
    let (data, relative_note, finetune, cycle, looped) = if drum_kind {
        let (d, r, f) = drum(&kind, kv.get("len").map(|v| v.parse().unwrap_or(100.0)))?;
        let len = d.len();
        (d, r, f, len, false)
    } else {
        let cycle = num("cycle", 128.0)? as usize;
        if !(16..=2048).contains(&cycle) {
            return Err(format!("inst {name}: cycle 16 to 2048"));
        }
        let (r, f) = tune(cycle);
        (to_i8(&wave_cycle(&kind, cycle)?, 120.0), r, f, cycle, true)
    };
    Ok(Instrument {
        name,
        kind,
        drum: drum_kind,
        cycle,
        volume,
        envelope,
        sustain,
        fade,
        vibrato,
        vib_delay,
        data,
        relative_note,
        finetune,
        looped,
    })
}

/// The note a channel holds, for `-`: its instrument, its effect, its age in rows.
type Held = (usize, Option<(u8, u8)>, usize);

/// A token before its row expansion.
#[derive(Clone, Debug)]
enum Tok {
    Empty,
    Hold,
    Off,
    Note { note: u8, inst: Option<String>, vol: Option<u8>, fx: Option<(u8, u8)> },
}

fn parse_token(t: &str, defs: &HashMap<String, Vec<String>>, out: &mut Vec<Tok>, depth: usize) -> Result<(), String> {
    if depth > 8 {
        return Err("def nested too deep".into());
    }
    match t {
        "|" => return Ok(()),
        "." => out.push(Tok::Empty),
        "-" => out.push(Tok::Hold),
        "^" => out.push(Tok::Off),
        _ if t.starts_with('$') => {
            let body = &t[1..];
            let (body, times) = match body.split_once('*') {
                Some((b, n)) => (b, n.parse::<usize>().map_err(|e| format!("`{t}`: {e}"))?),
                None => (body, 1),
            };
            let (name, shift) = match body.find(['+', '-']) {
                Some(i) => (&body[..i], body[i..].parse::<i32>().map_err(|e| format!("`{t}`: {e}"))?),
                None => (body, 0),
            };
            let phrase = defs.get(name).ok_or_else(|| format!("no def `{name}`"))?;
            for _ in 0..times {
                for p in phrase {
                    let start = out.len();
                    parse_token(p, defs, out, depth + 1)?;
                    for tok in &mut out[start..] {
                        if let Tok::Note { note, inst: None, .. } = tok {
                            let n = *note as i32 + shift;
                            if !(1..=96).contains(&n) {
                                return Err(format!("`{t}` transposes out of range"));
                            }
                            *note = n as u8;
                        }
                    }
                }
            }
        }
        _ => {
            let end = t.find([':', '!', '@']).unwrap_or(t.len());
            let (head, mut rest) = t.split_at(end);
            let (note, mut inst) = match note_number(head) {
                Some(n) => (n, None),
                // A drum's name: played at C-4, its own rate.
                None => (49, Some(head.to_string())),
            };
            let mut vol = None;
            let mut fx = None;
            while !rest.is_empty() {
                let kind = rest.as_bytes()[0];
                let end = rest[1..].find([':', '!', '@']).map_or(rest.len(), |i| i + 1);
                let val = &rest[1..end];
                match kind {
                    b':' => vol = Some(val.parse::<u8>().map_err(|e| format!("`{t}`: {e}"))?.min(64)),
                    b'@' => inst = Some(val.to_string()),
                    _ => {
                        if val.len() != 3 {
                            return Err(format!("`{t}`: an effect is 3 hex digits"));
                        }
                        let e = u8::from_str_radix(&val[..1], 16).map_err(|e| format!("`{t}`: {e}"))?;
                        let p = u8::from_str_radix(&val[1..], 16).map_err(|e| format!("`{t}`: {e}"))?;
                        fx = Some((e, p));
                    }
                }
                rest = &rest[end..];
            }
            out.push(Tok::Note { note, inst, vol, fx });
        }
    }
    Ok(())
}

pub fn parse_song(text: &str) -> Result<Song, String> {
    let mut song = Song {
        title: String::new(),
        bpm: 125,
        speed: 6,
        channels: 4,
        restart: 0,
        loops: true,
        instruments: vec![],
        patterns: vec![],
        order: vec![],
    };
    let mut defs: HashMap<String, Vec<String>> = HashMap::new();
    let mut order_names: Vec<String> = vec![];
    // The pattern being read: name, rows, each channel's (instrument, tokens) lines.
    type Lines = Vec<(usize, String, usize, Vec<String>)>;
    let mut pending: Vec<(String, usize, Lines)> = vec![];
    for (lineno, raw) in text.lines().enumerate() {
        // A comment starts at a word that starts with `#` (so `F#4` is a note).
        let cut = raw.char_indices().find(|&(i, c)| c == '#' && (i == 0 || raw[..i].ends_with(char::is_whitespace)));
        let line = raw[..cut.map_or(raw.len(), |(i, _)| i)].trim();
        if line.is_empty() {
            continue;
        }
        let err = |e: String| format!("line {}: {e}", lineno + 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            "title" => song.title = line["title".len()..].trim().to_string(),
            "bpm" | "speed" | "channels" => {
                let v: u16 = words
                    .get(1)
                    .ok_or_else(|| err("value missing".into()))?
                    .parse()
                    .map_err(|e| err(format!("{e}")))?;
                match words[0] {
                    "bpm" => song.bpm = v,
                    "speed" => song.speed = v,
                    _ => song.channels = v as usize,
                }
            }
            "restart" => match words.get(1) {
                Some(&"end") => song.loops = false,
                Some(v) => song.restart = v.parse().map_err(|e| err(format!("{e}")))?,
                None => return Err(err("restart what".into())),
            },
            "inst" => song.instruments.push(parse_instrument(&words[1..], song.bpm).map_err(err)?),
            "def" => {
                let name = words.get(1).ok_or_else(|| err("def needs a name".into()))?;
                defs.insert(name.to_string(), words[2..].iter().map(|s| s.to_string()).collect());
            }
            "pattern" => {
                let name = words.get(1).ok_or_else(|| err("pattern needs a name".into()))?.to_string();
                let rows = words
                    .get(2)
                    .ok_or_else(|| err("pattern needs rows".into()))?
                    .parse()
                    .map_err(|e| err(format!("{e}")))?;
                pending.push((name, rows, vec![]));
            }
            "order" => order_names.extend(words[1..].iter().map(|s| s.to_string())),
            w if w.parse::<usize>().is_ok() => {
                let ch: usize = w.parse().unwrap();
                let (_, _, lines) = pending.last_mut().ok_or_else(|| err("a channel line outside a pattern".into()))?;
                let spec = words.get(1).ok_or_else(|| err("channel line needs an instrument".into()))?;
                let (inst, per) = match spec.split_once('/') {
                    Some((i, n)) => (i.to_string(), n.parse().map_err(|e| err(format!("{e}")))?),
                    None => (spec.to_string(), 1),
                };
                // Parsing the tokens waits until every def is known; the line number is kept for errors.
                lines.push((
                    ch,
                    inst,
                    per,
                    words[2..].iter().map(|s| s.to_string()).chain([format!("#{}", lineno + 1)]).collect(),
                ));
            }
            w => return Err(err(format!("unknown statement `{w}`"))),
        }
    }
    if song.channels == 0 || song.channels > 6 {
        return Err("channels: 1 to 6".into());
    }
    let inst_index = |name: &str| song.instruments.iter().position(|i| i.name == name);
    for (name, rows, lines) in &pending {
        let mut chans: Vec<Vec<(Tok, usize)>> = vec![vec![]; song.channels];
        for (ch, inst, per, words) in lines {
            let at = words.last().unwrap().clone();
            let err = |e: String| format!("line {}: {e}", &at[1..]);
            if *ch == 0 || *ch > song.channels {
                return Err(err(format!("channel {ch} out of 1..={}", song.channels)));
            }
            let default = inst_index(inst).ok_or_else(|| err(format!("no instrument `{inst}`")))?;
            let mut toks = vec![];
            for w in &words[..words.len() - 1] {
                parse_token(w, &defs, &mut toks, 0).map_err(err)?;
            }
            for t in toks {
                let fill = match t {
                    Tok::Empty | Tok::Off => Tok::Empty,
                    _ => Tok::Hold,
                };
                chans[ch - 1].push((t, default));
                for _ in 1..*per {
                    chans[ch - 1].push((fill.clone(), default));
                }
            }
        }
        let mut grid = vec![vec![Cell::default(); song.channels]; *rows];
        for (c, toks) in chans.iter().enumerate() {
            if toks.len() > *rows {
                return Err(format!("pattern {name}: channel {} has {} rows of {rows}", c + 1, toks.len()));
            }
            if toks.is_empty() {
                continue;
            }
            if rows % toks.len() != 0 {
                return Err(format!(
                    "pattern {name}: channel {} has {} rows, which do not divide {rows}",
                    c + 1,
                    toks.len()
                ));
            }
            // The held note's effect, and its age in rows, for `-`.
            let mut held: Option<Held> = None;
            for (r, row) in grid.iter_mut().enumerate() {
                let (tok, default) = &toks[r % toks.len()];
                let cell = &mut row[c];
                match tok {
                    Tok::Empty => {
                        if let Some(h) = &mut held {
                            h.2 += 1;
                        }
                    }
                    Tok::Off => {
                        cell.note = KEY_OFF;
                        held = None;
                    }
                    Tok::Hold => {
                        if let Some((inst, fx, age)) = &mut held {
                            *age += 1;
                            let instrument = &song.instruments[*inst];
                            if let Some((e, p)) = fx {
                                // A cut or a delay happens once; an arpeggio or vibrato goes on.
                                if *e != 0xE {
                                    (cell.effect, cell.param) = (*e, *p);
                                }
                            } else if let Some(v) = instrument.vibrato
                                && *age >= instrument.vib_delay
                            {
                                (cell.effect, cell.param) = (4, v);
                            }
                        }
                    }
                    Tok::Note { note, inst, vol, fx } => {
                        let i = match inst {
                            Some(n) => inst_index(n).ok_or_else(|| format!("pattern {name}: no instrument `{n}`"))?,
                            None => *default,
                        };
                        cell.note = *note;
                        cell.instrument = i as u8 + 1;
                        if let Some(v) = vol {
                            cell.volume = 0x10 + v;
                        }
                        if let Some((e, p)) = fx {
                            (cell.effect, cell.param) = (*e, *p);
                        }
                        held = Some((i, *fx, 0));
                    }
                }
            }
        }
        song.patterns.push(Pattern { name: name.clone(), rows: grid });
    }
    for n in &order_names {
        let i = song.patterns.iter().position(|p| &p.name == n).ok_or_else(|| format!("order: no pattern `{n}`"))?;
        song.order.push(i);
    }
    if song.order.is_empty() {
        return Err("an empty order list".into());
    }
    if !song.loops {
        // The jingle ends on a silent pattern it loops on, which starts by releasing every channel.
        let mut rows = vec![vec![Cell::default(); song.channels]; 16];
        rows[0].iter_mut().for_each(|c| c.note = KEY_OFF);
        song.patterns.push(Pattern { name: "silence".into(), rows });
        song.order.push(song.patterns.len() - 1);
        song.restart = song.order.len() - 1;
    }
    // xmrs 0.8.5 adds an empty 64-row pattern for each order entry past the pattern count (it compares the
    // counts, not the indices), and agb_xm would convert each into ROM: one-row empty patterns forestall that.
    while song.patterns.len() < song.order.len() {
        song.patterns.push(Pattern { name: "pad".into(), rows: vec![vec![Cell::default(); song.channels]; 1] });
    }
    if song.restart >= song.order.len() {
        return Err("restart past the order list".into());
    }
    if song.order.len() > 256 || song.patterns.len() > 256 {
        return Err("too many patterns".into());
    }
    Ok(song)
}

fn put_str(out: &mut Vec<u8>, s: &str, len: usize) {
    let mut b: Vec<u8> = s.bytes().filter(|c| c.is_ascii() && !c.is_ascii_control()).take(len).collect();
    b.resize(len, 0);
    out.extend(b);
}

fn u16le(out: &mut Vec<u8>, v: u16) {
    out.extend(v.to_le_bytes());
}

fn u32le(out: &mut Vec<u8>, v: u32) {
    out.extend(v.to_le_bytes());
}

/// The module as XM bytes (FastTracker II's format, version 0x0104, linear frequencies).
pub fn write_xm(song: &Song) -> Vec<u8> {
    let mut out = vec![];
    out.extend(b"Extended Module: ");
    put_str(&mut out, &song.title, 20);
    out.push(0x1a);
    put_str(&mut out, "StackShot compose", 20);
    u16le(&mut out, 0x0104);
    u32le(&mut out, 20 + 256);
    u16le(&mut out, song.order.len() as u16);
    u16le(&mut out, song.restart as u16);
    u16le(&mut out, song.channels as u16);
    u16le(&mut out, song.patterns.len() as u16);
    u16le(&mut out, song.instruments.len() as u16);
    u16le(&mut out, 1); // linear frequency table
    u16le(&mut out, song.speed);
    u16le(&mut out, song.bpm);
    let mut order = song.order.iter().map(|&o| o as u8).collect::<Vec<_>>();
    order.resize(256, 0);
    out.extend(order);

    for p in &song.patterns {
        let mut data = vec![];
        for row in &p.rows {
            for c in row {
                let fields = [c.note, c.instrument, c.volume, c.effect, c.param];
                let mask = fields.iter().enumerate().fold(0u8, |m, (i, &f)| if f != 0 { m | 1 << i } else { m });
                if mask == 0x1f {
                    data.extend(fields);
                } else {
                    data.push(0x80 | mask);
                    data.extend(fields.iter().filter(|&&f| f != 0));
                }
            }
        }
        u32le(&mut out, 9);
        out.push(0);
        u16le(&mut out, p.rows.len() as u16);
        u16le(&mut out, data.len() as u16);
        out.extend(data);
    }

    for inst in &song.instruments {
        let start = out.len();
        u32le(&mut out, 263);
        put_str(&mut out, &inst.name, 22);
        out.push(0);
        u16le(&mut out, 1);
        u32le(&mut out, 40);
        out.extend([0u8; 96]); // every note plays sample 0
        let mut env = [0u8; 48];
        for (i, (t, v)) in inst.envelope.iter().enumerate() {
            env[i * 4..i * 4 + 2].copy_from_slice(&t.to_le_bytes());
            env[i * 4 + 2..i * 4 + 4].copy_from_slice(&(*v as u16).to_le_bytes());
        }
        out.extend(env);
        out.extend([0u8; 48]); // no panning envelope
        out.push(inst.envelope.len() as u8);
        out.push(0);
        out.push(inst.sustain.unwrap_or(0) as u8);
        out.extend([0, 0]); // volume loop start and end
        out.extend([0, 0, 0]); // panning sustain and loop
        let mut vol_type = 0;
        if !inst.envelope.is_empty() {
            vol_type |= 1;
            if inst.sustain.is_some() {
                vol_type |= 2;
            }
        }
        out.push(vol_type);
        out.push(0); // panning type
        out.extend([0, 0, 0, 0]); // no auto-vibrato
        u16le(&mut out, inst.fade);
        out.resize(start + 263, 0); // reserved

        u32le(&mut out, inst.data.len() as u32);
        u32le(&mut out, 0);
        u32le(&mut out, if inst.looped { inst.data.len() as u32 } else { 0 });
        out.push(inst.volume);
        out.push(inst.finetune as u8);
        out.push(if inst.looped { 1 } else { 0 }); // forward loop, 8-bit
        out.push(128);
        out.push(inst.relative_note as u8);
        out.push(0);
        put_str(&mut out, &inst.kind, 22);
        let mut prev = 0i8;
        for &s in &inst.data {
            out.push(s.wrapping_sub(prev) as u8);
            prev = s;
        }
    }
    out
}

/// Seconds of one pass through the order list, from the restart point to the end, as agb_tracker plays it.
pub fn loop_seconds(song: &Song) -> f64 {
    let rows: usize = song.order[song.restart..].iter().map(|&o| song.patterns[o].rows.len()).sum();
    rows as f64 * song.speed as f64 * frames_per_tick(song.bpm) / FRAME_RATE
}

/// Seconds until the order list's end (the whole song once).
pub fn song_seconds(song: &Song) -> f64 {
    let rows: usize = song.order.iter().map(|&o| song.patterns[o].rows.len()).sum();
    rows as f64 * song.speed as f64 * frames_per_tick(song.bpm) / FRAME_RATE
}

/// agb_xm's frames a tick, 150 / bpm in 8-bit fixed point.
pub fn frames_per_tick(bpm: u16) -> f64 {
    ((150u32 << 8) / bpm as u32) as f64 / 256.0
}

pub fn sample_bytes(song: &Song) -> usize {
    song.instruments.iter().map(|i| i.data.len()).sum()
}

/// The text for one song's line of stats.
pub fn stats(name: &str, song: &Song) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{name}: bpm {} speed {} ({:.0} beats/min), {} channels, {} patterns, {} orders, {:.1} s, {}, samples {} bytes ({})",
        song.bpm,
        song.speed,
        FRAME_RATE / (song.speed as f64 * frames_per_tick(song.bpm)) * 60.0 / 4.0,
        song.channels,
        song.patterns.len(),
        song.order.len(),
        song_seconds(song),
        if song.loops {
            format!("looping from order {} ({:.1} s a loop)", song.restart, loop_seconds(song))
        } else {
            "then silence".into()
        },
        sample_bytes(song),
        song.instruments.iter().map(|i| format!("{} {}", i.name, i.data.len())).collect::<Vec<_>>().join(", "),
    );
    s
}

/// A naive render at agb's mixer rate, following agb_tracker's timing: a frame at a time, ticks of 150 / bpm
/// frames, volume envelopes a frame a point, key-off fading; effects 0xy, 4xy, ECx and the volume column.
/// Returns mono samples in 8-bit units summed over channels (not clipped).
pub fn render(song: &Song, passes: usize) -> Vec<f32> {
    #[derive(Clone, Default)]
    struct Ch {
        inst: Option<usize>,
        pos: f64,
        speed: f64,
        base: f64,
        note: u8,
        vol: f64,
        env_frame: usize,
        released: bool,
        fade_vol: f64,
        arp: Option<(u8, u8)>,
        vib: Option<(f64, usize)>,
        vib_pos: usize,
        cut: Option<u32>,
        on: bool,
    }
    // Each instrument's envelope as agb_xm converts it: a value a GBA frame.
    let envs: Vec<Option<(Vec<f64>, Option<usize>)>> = song
        .instruments
        .iter()
        .map(|i| {
            if i.envelope.is_empty() {
                return None;
            }
            let to_gba = |t: u16| (t as u32 * 250 / song.bpm as u32) as usize;
            let to_xm = |f: usize| (f as u32 * song.bpm as u32 / 250) as usize;
            let last = to_gba(i.envelope.last().unwrap().0);
            let amounts = (0..=last)
                .map(|f| {
                    let x = to_xm(f);
                    let k = i.envelope.iter().rposition(|p| (p.0 as usize) < x).unwrap_or(0);
                    let (a, b) = (i.envelope[k], i.envelope[k + 1]);
                    let t = ((x as f64 - a.0 as f64) / (b.0 as f64 - a.0 as f64)).clamp(0.0, 1.0);
                    (a.1 as f64 + (b.1 as f64 - a.1 as f64) * t) / 64.0
                })
                .collect();
            Some((amounts, i.sustain.map(|s| to_gba(i.envelope[s].0))))
        })
        .collect();
    let speed_of = |inst: &Instrument, note: u8| agb_speed(note, inst.relative_note, inst.finetune);
    let mut chans = vec![Ch::default(); song.channels];
    let fpt = frames_per_tick(song.bpm);
    let per_frame = MIXER_RATE / FRAME_RATE;
    let mut out = vec![];
    let mut frame_acc = 0.0;
    let (mut order, mut row, mut tick) = (0usize, 0usize, 0u32);
    let mut frame = 0.0f64;
    let mut first = true;
    let mut passes_done = 0;
    let mut samples_due = 0.0;
    'frames: loop {
        frame += 1.0;
        loop {
            // agb_tracker's increment_frame.
            if first {
                first = false;
            } else if frame >= fpt {
                frame -= fpt;
                tick += 1;
                if tick >= song.speed as u32 {
                    tick = 0;
                    row += 1;
                    if row >= song.patterns[song.order[order]].rows.len() {
                        row = 0;
                        order += 1;
                        if order >= song.order.len() {
                            order = song.restart;
                            passes_done += 1;
                            if passes_done >= passes {
                                break 'frames;
                            }
                        }
                    }
                }
            } else {
                break;
            }
            let cells = &song.patterns[song.order[order]].rows[row];
            for (ch, cell) in chans.iter_mut().zip(cells) {
                if tick == 0 {
                    ch.arp = None;
                    ch.vib = None;
                    ch.cut = None;
                    if cell.note == KEY_OFF {
                        ch.released = true;
                        if envs[ch.inst.unwrap_or(0)].is_none() {
                            ch.on = false;
                        }
                    } else if cell.note != 0 && cell.instrument != 0 {
                        let i = cell.instrument as usize - 1;
                        let inst = &song.instruments[i];
                        *ch = Ch {
                            inst: Some(i),
                            note: cell.note,
                            on: true,
                            vol: inst.volume as f64 / 64.0,
                            fade_vol: 1.0,
                            ..Ch::default()
                        };
                        ch.base = speed_of(inst, cell.note);
                    } else if cell.note != 0
                        && let Some(i) = ch.inst
                    {
                        ch.note = cell.note;
                        ch.base = speed_of(&song.instruments[i], cell.note);
                    }
                    if (0x10..=0x50).contains(&cell.volume) {
                        let iv = ch.inst.map_or(1.0, |i| song.instruments[i].volume as f64 / 64.0);
                        ch.vol = (cell.volume - 0x10) as f64 / 64.0 * iv;
                    }
                    match cell.effect {
                        0 if cell.param != 0 => ch.arp = Some((cell.param >> 4, cell.param & 15)),
                        4 => {
                            let depth = 2f64.powf((cell.param & 15) as f64 * 16.0 / 128.0 / 12.0) - 1.0;
                            ch.vib = Some((depth, (cell.param >> 4) as usize));
                        }
                        0xE if cell.param >> 4 == 0xC => ch.cut = Some((cell.param & 15) as u32),
                        _ => {}
                    }
                }
                ch.speed = ch.base;
                if let (Some((a, b)), Some(i)) = (ch.arp, ch.inst) {
                    let inst = &song.instruments[i];
                    ch.speed = match tick % 3 {
                        0 => ch.base,
                        1 => speed_of(inst, ch.note + a),
                        _ => speed_of(inst, ch.note + b),
                    };
                }
                if ch.cut == Some(tick) {
                    ch.vol = 0.0;
                }
            }
        }
        // Once a frame: envelopes, vibrato, then the frame's samples.
        let mut speeds = vec![0.0; chans.len()];
        let mut vols = vec![0.0; chans.len()];
        for (k, ch) in chans.iter_mut().enumerate() {
            let Some(i) = ch.inst else { continue };
            let mut env_amount = 1.0;
            if let Some((amounts, sustain)) = &envs[i] {
                env_amount = amounts[ch.env_frame.min(amounts.len() - 1)];
                if ch.released {
                    ch.fade_vol = (ch.fade_vol
                        - ((song.instruments[i].fade as f64 / 32760.0 * 256.0) as i32 as f64 / 256.0))
                        .max(0.0);
                }
                ch.env_frame += 1;
                if let Some(s) = sustain
                    && !ch.released
                    && ch.env_frame >= *s
                {
                    ch.env_frame = *s;
                }
            }
            let mut speed = ch.speed;
            if let Some((depth, rate)) = ch.vib {
                ch.vib_pos = (ch.vib_pos + rate) % 64;
                speed *= 1.0 + depth * (ch.vib_pos as f64 / 64.0 * std::f64::consts::TAU).sin();
            }
            speeds[k] = speed;
            vols[k] = if ch.on { ch.vol * env_amount * ch.fade_vol } else { 0.0 };
        }
        samples_due += per_frame;
        let n = samples_due.floor() as usize;
        samples_due -= n as f64;
        frame_acc += 1.0;
        for _ in 0..n {
            let mut mix = 0.0;
            for (k, ch) in chans.iter_mut().enumerate() {
                let Some(i) = ch.inst else { continue };
                if !ch.on {
                    continue;
                }
                let inst = &song.instruments[i];
                let p = ch.pos as usize;
                if p >= inst.data.len() {
                    ch.on = false;
                    continue;
                }
                mix += inst.data[p] as f64 * vols[k];
                ch.pos += speeds[k];
                if inst.looped && ch.pos >= inst.data.len() as f64 {
                    ch.pos -= inst.data.len() as f64;
                }
            }
            out.push(mix as f32);
        }
    }
    let _ = frame_acc;
    out
}

/// A 16-bit mono WAV at the mixer's rate, from 8-bit-unit mix values scaled by `gain`.
pub fn wav(samples: &[f32], gain: f32) -> Vec<u8> {
    let mut out = vec![];
    out.extend(b"RIFF");
    u32le(&mut out, 36 + samples.len() as u32 * 2);
    out.extend(b"WAVEfmt ");
    u32le(&mut out, 16);
    u16le(&mut out, 1);
    u16le(&mut out, 1);
    u32le(&mut out, MIXER_RATE as u32);
    u32le(&mut out, MIXER_RATE as u32 * 2);
    u16le(&mut out, 2);
    u16le(&mut out, 16);
    out.extend(b"data");
    u32le(&mut out, samples.len() as u32 * 2);
    for s in samples {
        out.extend(((s * gain).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes());
    }
    out
}
