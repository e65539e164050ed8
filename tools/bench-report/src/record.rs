//! `bench-report record ELF SCRIPT FRAMES OUT.txt`: plays the game (built with `--features alloc-trace`) on a
//! key script and writes its heap traffic as a trace the benchmark ROM replays: `a ID SIZE ALIGN` for an
//! allocation, `f ID` for a free, ids reused once freed. Refused requests are left out: the benchmark replays
//! what the heap served.

use harness::emulator::Emulator;
use harness::keys::Script;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// What the benchmark ROM holds (bench/src/traces.rs): ids below MAX_LIVE, at most MAX_OPS operations.
const MAX_LIVE: usize = 128;
const MAX_OPS: usize = 2048;

pub fn record(elf: &Path, script: &Path, frames: u64, out: &Path) -> Result<(), String> {
    let script = Script::parse(&std::fs::read_to_string(script).map_err(|e| format!("{}: {e}", script.display()))?)?;
    let mut emu = Emulator::open(elf)?;
    let mut ids: HashMap<u64, usize> = HashMap::new();
    let mut free_ids: Vec<usize> = (0..MAX_LIVE).rev().collect();
    let mut ops = String::new();
    let mut count = 0;
    'frames: for frame in 0..frames {
        emu.set_keys(script.keys_at(frame));
        emu.run_frame();
        for line in emu.take_log() {
            let Some(rest) = line.text.strip_prefix("alloc-trace: heap ") else { continue };
            let words: Vec<&str> = rest.split_whitespace().collect();
            match words.as_slice() {
                ["alloc", size, "B", "align", align, "->", addr] if addr.starts_with("0x") => {
                    let id = free_ids.pop().ok_or(format!("more than {MAX_LIVE} live allocations"))?;
                    ids.insert(parse_hex(addr)?, id);
                    writeln!(ops, "a {id} {size} {align}").unwrap();
                }
                ["alloc", ..] => continue,
                ["free", addr, "->", "ok"] => {
                    let id = ids.remove(&parse_hex(addr)?).ok_or(format!("free of {addr}, never allocated"))?;
                    free_ids.push(id);
                    writeln!(ops, "f {id}").unwrap();
                }
                _ => return Err(format!("cannot read `{}`", line.text)),
            }
            count += 1;
            if count == MAX_OPS {
                break 'frames;
            }
        }
    }
    if count == 0 {
        return Err("the game logged no heap traffic: was it built with --features alloc-trace?".into());
    }
    let header = format!(
        "# The game's AI scratch traffic on its 4 KB heap, recorded by `make record-trace` ({count} operations):\n\
         # `a ID SIZE ALIGN` allocates, `f ID` frees.\n"
    );
    std::fs::write(out, header + &ops).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("recorded {count} heap operations into {}", out.display());
    Ok(())
}

fn parse_hex(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| format!("bad address {s}"))
}
