//! The game's telemetry read from emulator memory: the host's mirror of `Telemetry` in
//! `src/game/telemetry.rs` (a `#[repr(C)]` struct of 32-bit words at the symbol `STACKSHOT_STATS`). Change
//! both together; `MAGIC` catches a stale layout.

use crate::elf::Elf;
use crate::emulator::Emulator;

pub const MAGIC: u32 = u32::from_le_bytes(*b"SSTM");

/// `State` in src/game/telemetry.rs.
pub mod state {
    pub const TITLE: u32 = 0;
    pub const PLAYING: u32 = 1;
    pub const PAUSED: u32 = 2;
    pub const DYING: u32 = 3;
    pub const GAME_OVER: u32 = 4;
    pub const NAME_ENTRY: u32 = 5;
}

/// Now and peak of one pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolUse {
    pub now: u32,
    pub peak: u32,
}

/// Field by field as on the GBA; byte offsets in the comments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Telemetry {
    pub magic: u32,              // 0
    pub state: u32,              // 4
    pub frame: u32,              // 8
    pub score: u32,              // 12
    pub lives: u32,              // 16
    pub bombs: u32,              // 20
    pub stage: u32,              // 24
    pub last_cycles: u32,        // 28
    pub max_cycles: u32,         // 32
    pub player_bullets: PoolUse, // 36
    pub enemy_bullets: PoolUse,  // 44
    pub particles: PoolUse,      // 52
    pub enemies: PoolUse,        // 60
    pub pickups: PoolUse,        // 68
    pub sprite_slots: PoolUse,   // 76
    pub heap_used: u32,          // 84
    pub heap_peak: u32,          // 88
    pub heap_fallbacks: u32,     // 92
    pub game_overs: u32,         // 96
    pub leak_checks: u32,        // 100
    pub leak_failures: u32,      // 104
    pub kills: u32,              // 108
    pub table: [u32; 5],         // 112
    pub stack_peak: u32,         // 132
}

/// Words in the struct.
const WORDS: u32 = 34;

/// Where the telemetry is in a ROM's memory.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    address: u32,
}

impl Probe {
    pub fn new(elf: &Elf) -> Result<Probe, String> {
        let symbol = elf.symbol("STACKSHOT_STATS").ok_or("no STACKSHOT_STATS in the ELF: not the game?")?;
        if symbol.size != WORDS * 4 {
            return Err(format!(
                "STACKSHOT_STATS is {} bytes, not {}: update src/telemetry.rs",
                symbol.size,
                WORDS * 4
            ));
        }
        Ok(Probe { address: symbol.address })
    }

    pub fn read(&self, emu: &Emulator) -> Telemetry {
        let w: Vec<u32> = (0..WORDS).map(|i| emu.read32(self.address + 4 * i)).collect();
        let pool = |i: usize| PoolUse { now: w[i], peak: w[i + 1] };
        let t = Telemetry {
            magic: w[0],
            state: w[1],
            frame: w[2],
            score: w[3],
            lives: w[4],
            bombs: w[5],
            stage: w[6],
            last_cycles: w[7],
            max_cycles: w[8],
            player_bullets: pool(9),
            enemy_bullets: pool(11),
            particles: pool(13),
            enemies: pool(15),
            pickups: pool(17),
            sprite_slots: pool(19),
            heap_used: w[21],
            heap_peak: w[22],
            heap_fallbacks: w[23],
            game_overs: w[24],
            leak_checks: w[25],
            leak_failures: w[26],
            kills: w[27],
            table: [w[28], w[29], w[30], w[31], w[32]],
            stack_peak: w[33],
        };
        assert_eq!(t.magic, MAGIC, "no telemetry at {:#010x}: stale layout or not booted", self.address);
        t
    }
}
