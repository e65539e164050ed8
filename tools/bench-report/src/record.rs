//! `bench-report record KIND ELF SCRIPT FRAMES OUT.txt`: plays the game (built with `--features alloc-trace`,
//! plus `bullet-hell` for that kind) on a key script and writes its heap traffic as a trace the benchmark ROM
//! replays, ids reused once freed. Refused requests are left out: the benchmark replays what the heap served.

use crate::trace_file::{Ids, TraceFile};
use harness::elf::Elf;
use harness::emulator::Emulator;
use harness::keys::Script;
use harness::telemetry::{Probe, Telemetry};
use std::collections::HashMap;
use std::path::Path;

/// The most operations a recording keeps.
const MAX_OPS: usize = 2048;

/// The header of each kind of recording: name, what, how it was made.
fn header(kind: &str) -> Result<(&'static str, &'static str, &'static [&'static str]), String> {
    match kind {
        "ai" => Ok((
            "AI scratch",
            "recorded from the game: 5 minutes of play",
            &[
                "The game's AI scratch traffic on its 4 KB heap, recorded by `make record-trace`: the release build with",
                "--features alloc-trace playing bench/traces/play.keys (and START to continue) for 18,000 frames",
                "(five minutes).",
            ],
        )),
        "bullet-hell" => Ok((
            "bullet hell",
            "recorded from the game's bullet-hell scene: every enemy holds scratch",
            &[
                "The game's AI scratch traffic in its bullet-hell scene, recorded by `make record-trace`: the release",
                "build with --features alloc-trace,bullet-hell (src/game/waves.rs: every stage a wave every half second",
                "of darts, crabs and saucers, the kinds that take scratch from the heap, more than leave, so that the",
                "32-enemy pool stays full) playing bench/traces/play.keys.",
            ],
        )),
        _ => Err(format!("unknown kind `{kind}`: ai or bullet-hell")),
    }
}

pub fn record(kind: &str, elf: &Path, script: &Path, frames: u64, out: &Path) -> Result<(), String> {
    let (name, what, how) = header(kind)?;
    let script = Script::parse(&std::fs::read_to_string(script).map_err(|e| format!("{}: {e}", script.display()))?)?;
    let probe = Probe::new(&Elf::read(elf)?)?;
    let mut emu = Emulator::open(elf)?;
    let mut t = Telemetry::default();
    let mut by_address: HashMap<u64, usize> = HashMap::new();
    let mut ids = Ids::new();
    let mut trace = TraceFile::new(name, what, how);
    let mut played = 0;
    'frames: for frame in 0..frames {
        played = frame + 1;
        emu.set_keys(crate::session_keys(&script, frame, &t));
        emu.run_frame();
        t = probe.read(&emu);
        for line in emu.take_log() {
            let Some(rest) = line.text.strip_prefix("alloc-trace: heap ") else { continue };
            let words: Vec<&str> = rest.split_whitespace().collect();
            match words.as_slice() {
                ["alloc", size, "B", "align", align, "->", addr] if addr.starts_with("0x") => {
                    let id = ids.take()?;
                    by_address.insert(parse_hex(addr)?, id);
                    trace.alloc(id, parse(size)?, parse(align)?);
                }
                ["alloc", ..] => continue,
                ["free", addr, "->", "ok"] => {
                    let id = by_address.remove(&parse_hex(addr)?).ok_or(format!("free of {addr}, never allocated"))?;
                    ids.give(id);
                    trace.free(id);
                }
                _ => return Err(format!("cannot read `{}`", line.text)),
            }
            if trace.len() == MAX_OPS {
                break 'frames;
            }
        }
    }
    if trace.len() == 0 {
        return Err("the game logged no heap traffic: was it built with --features alloc-trace?".into());
    }
    trace.note(&format!(
        "Stopped after {played} frames{}.",
        if trace.len() == MAX_OPS { format!(", at {MAX_OPS} operations") } else { String::new() }
    ));
    std::fs::write(out, trace.text()).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("recorded {} heap operations into {}", trace.len(), out.display());
    Ok(())
}

fn parse(s: &str) -> Result<usize, String> {
    s.parse().map_err(|_| format!("bad number {s}"))
}

fn parse_hex(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| format!("bad address {s}"))
}
