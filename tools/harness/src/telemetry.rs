//! The game's telemetry read from emulator memory, in the types the game writes it with
//! (`stackshot_protocol::telemetry`), found by its symbol in the ELF.

use crate::elf::Elf;
use crate::emulator::Emulator;
use stackshot_protocol::telemetry::{MAGIC, SYMBOL, WORDS};
pub use stackshot_protocol::telemetry::{State, Telemetry};

/// Where the telemetry is in a ROM's memory.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    address: u32,
}

impl Probe {
    pub fn new(elf: &Elf) -> Result<Probe, String> {
        let symbol = elf.symbol(SYMBOL).ok_or(format!("no {SYMBOL} in the ELF: not the game?"))?;
        if symbol.size != 4 * WORDS as u32 {
            return Err(format!(
                "{SYMBOL} is {} bytes, not {}: a ROM built before its format changed?",
                symbol.size,
                4 * WORDS
            ));
        }
        Ok(Probe { address: symbol.address })
    }

    pub fn read(&self, emu: &Emulator) -> Telemetry {
        let t = Telemetry::from_words(core::array::from_fn(|i| emu.read32(self.address + 4 * i as u32)));
        assert_eq!(t.magic, MAGIC, "no telemetry at {:#010x}: stale layout or not booted", self.address);
        t
    }
}
