//! `harness`: the command-line face of the StackShot harness.
//!
//! ```text
//! harness test ROM                 run an on-target test ROM (cargo's runner does this for `cargo test`)
//! harness run ROM [options]        run a ROM headless and print its log
//!     --frames N                   frames to run (default: 300, or to the end of the input script)
//!     --input FILE                 hold keys as the script says (format: src/keys.rs)
//!     --screenshot FRAME:PATH      save the screen after FRAME frames as a PNG (repeatable)
//!     --save FILE                  use FILE as the cartridge's save (SRAM)
//! harness audio ROM --frames N --wav OUT.wav [--input FILE]
//!                                  play a ROM for N frames and write what it played as a WAV file (16-bit stereo,
//!                                  32,768 Hz), then print its RMS and dominant frequency
//! harness gdb ROM [--port N]       serve gdb on 127.0.0.1 (default port 2345) until it disconnects
//! ```
//! The exit status is the ROM's verdict: 1 if a test failed or the ROM panicked.

use harness::audio::{dominant_frequency, largest_step, rms, write_wav};
use harness::emulator::{AUDIO_RATE, Emulator};
use harness::keys::Script;
use harness::protocol::Message;
use harness::runner::{Limits, Outcome, run_tests};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: harness test ROM | harness run ROM [--frames N] [--input FILE] [--screenshot FRAME:PATH] [--save FILE] | harness audio ROM --frames N --wav OUT.wav [--input FILE] | harness gdb ROM [--port N]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `harness gdb --help` asks for the usage too, rather than for mGBA to load a ROM named `--help`.
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let result = match args.first().map(String::as_str) {
        Some("test") if args.len() >= 2 => test(Path::new(&args[1])),
        Some("run") if args.len() >= 2 => run(Path::new(&args[1]), &args[2..]),
        Some("audio") if args.len() >= 2 => audio(Path::new(&args[1]), &args[2..]),
        Some("gdb") if args.len() >= 2 => gdb(Path::new(&args[1]), &args[2..]),
        _ => Err(USAGE.into()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("harness: {e}");
            ExitCode::from(2)
        }
    }
}

fn test(rom: &Path) -> Result<bool, String> {
    let mut limits = Limits::default();
    if let Ok(frames) = std::env::var("STACKSHOT_TEST_FRAMES") {
        limits.frames_per_test =
            frames.parse().map_err(|_| format!("STACKSHOT_TEST_FRAMES={frames} is not a number"))?;
    }
    let results = run_tests(rom, limits)?;
    Ok(results.iter().all(|r| matches!(r.outcome, Outcome::Passed { .. })))
}

fn run(rom: &Path, options: &[String]) -> Result<bool, String> {
    let mut frames = None;
    let mut script = Script::default();
    let mut shots: Vec<(u64, PathBuf)> = Vec::new();
    let mut save = None;
    let mut it = options.iter();
    while let Some(option) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{option} needs a value"));
        match option.as_str() {
            "--frames" => frames = Some(value()?.parse::<u64>().map_err(|e| format!("--frames: {e}"))?),
            "--input" => script = read_script(&value()?)?,
            "--screenshot" => {
                let v = value()?;
                let (frame, path) = v.split_once(':').ok_or("--screenshot takes FRAME:PATH")?;
                shots.push((frame.parse().map_err(|_| format!("--screenshot: bad frame `{frame}`"))?, path.into()));
            }
            "--save" => save = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown option {other}")),
        }
    }
    let frames = frames.unwrap_or(300.max(script.last_frame() + 1));
    let mut emu = Emulator::open(rom)?;
    if let Some(save) = &save {
        emu.load_save(save)?;
    }
    let start = emu.cycles();
    let mut ok = true;
    for frame in 0..frames {
        emu.set_keys(script.keys_at(frame));
        emu.run_frame();
        for line in emu.take_log() {
            if let Message::Panic(message) = Message::parse(&line.text) {
                println!("frame {frame}: PANIC {message}");
                ok = false;
            } else {
                println!("{}", line.text);
            }
        }
        for (_, path) in shots.iter().filter(|(f, _)| *f == frame + 1) {
            emu.screenshot(path)?;
        }
        if !ok {
            break;
        }
    }
    println!("ran {} frames, {} cycles", emu.frames(), emu.cycles() - start);
    Ok(ok)
}

/// The input script in the file at `path` (format: src/keys.rs).
fn read_script(path: &str) -> Result<Script, String> {
    Script::parse(&std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?)
}

/// Plays `rom` for `--frames` frames with the keys of `--input` and writes what it played to `--wav`; prints the
/// ROM's panics and the recording's measures. A panic ends the recording there, and the file still gets what
/// came before.
fn audio(rom: &Path, options: &[String]) -> Result<bool, String> {
    let (mut frames, mut script, mut wav) = (None, Script::default(), None);
    let mut it = options.iter();
    while let Some(option) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{option} needs a value"));
        match option.as_str() {
            "--frames" => frames = Some(value()?.parse::<u64>().map_err(|e| format!("--frames: {e}"))?),
            "--input" => script = read_script(&value()?)?,
            "--wav" => wav = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown option {other}")),
        }
    }
    let (Some(frames), Some(wav)) = (frames, wav) else { return Err(USAGE.into()) };
    let mut emu = Emulator::open(rom)?;
    emu.capture_audio(true);
    let mut ok = true;
    for frame in 0..frames {
        emu.set_keys(script.keys_at(frame));
        emu.run_frame();
        for line in emu.take_log() {
            if let Message::Panic(message) = Message::parse(&line.text) {
                println!("frame {frame}: PANIC {message}");
                ok = false;
            }
        }
        if !ok {
            break;
        }
    }
    let samples = emu.take_audio();
    write_wav(&wav, &samples, AUDIO_RATE)?;
    let dominant = dominant_frequency(&samples, AUDIO_RATE).map_or("none (silence)".into(), |f| format!("{f:.1} Hz"));
    println!(
        "{}: {} frames, {} samples ({:.2} s at {AUDIO_RATE} Hz), RMS {:.1}, largest step {}, dominant frequency {dominant}",
        wav.display(),
        emu.frames(),
        samples.len(),
        samples.len() as f64 / f64::from(AUDIO_RATE),
        rms(&samples),
        largest_step(&samples)
    );
    Ok(ok)
}

fn gdb(rom: &Path, options: &[String]) -> Result<bool, String> {
    let port = match options {
        [] => 2345,
        [flag, port] if flag == "--port" => port.parse().map_err(|_| format!("--port: bad port `{port}`"))?,
        _ => return Err(USAGE.into()),
    };
    let mut emu = Emulator::open(rom)?;
    emu.listen_gdb(port)?;
    eprintln!("harness: serving gdb on 127.0.0.1:{port}; waiting for it to attach");
    // The first frame blocks inside the stub until gdb attaches; then frames run until it disconnects.
    emu.run_frame();
    while emu.gdb_attached() {
        emu.run_frame();
        for line in emu.take_log() {
            println!("{}", line.text);
        }
    }
    Ok(true)
}
