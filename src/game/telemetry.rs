//! What the game tells the host tests about itself: one `#[repr(C)]` static of 32-bit words at a symbol the
//! harness finds in the ELF. Its mirror for the host is `tools/harness/src/telemetry.rs`: change both
//! together (the `MAGIC` word guards against a stale layout).

/// Written once at boot; the host checks it before trusting the rest.
pub const MAGIC: u32 = u32::from_le_bytes(*b"SSTM");

/// The game's state, as [`Telemetry::state`] holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum State {
    Title = 0,
    Playing = 1,
    Paused = 2,
    /// The last life is lost: explosions play out before the game-over screen.
    Dying = 3,
    GameOver = 4,
    NameEntry = 5,
}

/// How full one pool is now and at most since boot (objects, or slots for the sprite table).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct PoolUse {
    pub now: u32,
    pub peak: u32,
}

impl PoolUse {
    /// Records the use now and the highest use seen by whoever counts it (the pool's own peak, or `now`).
    pub fn set(&mut self, now: usize, peak: usize) {
        self.now = now as u32;
        self.peak = self.peak.max(peak as u32);
    }
}

/// Every field a 32-bit word (or a pair of them), in this order; offsets in bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Telemetry {
    /// 0: [`MAGIC`].
    pub magic: u32,
    /// 4: a [`State`].
    pub state: u32,
    /// 8: frames the game loop has run since boot.
    pub frame: u32,
    /// 12: the current (or last) game's score.
    pub score: u32,
    /// 16: lives left, the ship in play included.
    pub lives: u32,
    /// 20: bombs in stock.
    pub bombs: u32,
    /// 24: the stage number players see, from 1.
    pub stage: u32,
    /// 28: CPU cycles of the last frame's work (from the end of VBlank's wait to the end of the frame).
    pub last_cycles: u32,
    /// 32: the most any frame used since boot.
    pub max_cycles: u32,
    /// 36..84: now/peak of: player bullets, enemy bullets, particles, enemies, pick-ups, sprite slots.
    pub player_bullets: PoolUse,
    pub enemy_bullets: PoolUse,
    pub particles: PoolUse,
    pub enemies: PoolUse,
    pub pickups: PoolUse,
    pub sprite_slots: PoolUse,
    /// 84: bytes of the AI heap in use now, and 88: at most since boot.
    pub heap_used: u32,
    pub heap_peak: u32,
    /// 92: heap requests refused, each answered by an enemy's simpler behaviour.
    pub heap_fallbacks: u32,
    /// 96: games that ended (game overs).
    pub game_overs: u32,
    /// 100: leak checks run (one at every game over) and 104: how many found a pool or the heap not empty.
    pub leak_checks: u32,
    pub leak_failures: u32,
    /// 108: enemies destroyed since boot.
    pub kills: u32,
    /// 112..132: the high-score table's scores, best first, as loaded from SRAM or last saved.
    pub table: [u32; 5],
    /// 132: the most bytes the stack has held (`stack::high_water`), measured at each game over (every frame
    /// in debug builds).
    pub stack_peak: u32,
}

impl Telemetry {
    const fn new() -> Telemetry {
        const EMPTY: PoolUse = PoolUse { now: 0, peak: 0 };
        Telemetry {
            magic: MAGIC,
            state: State::Title as u32,
            frame: 0,
            score: 0,
            lives: 0,
            bombs: 0,
            stage: 0,
            last_cycles: 0,
            max_cycles: 0,
            player_bullets: EMPTY,
            enemy_bullets: EMPTY,
            particles: EMPTY,
            enemies: EMPTY,
            pickups: EMPTY,
            sprite_slots: EMPTY,
            heap_used: 0,
            heap_peak: 0,
            heap_fallbacks: 0,
            game_overs: 0,
            leak_checks: 0,
            leak_failures: 0,
            kills: 0,
            table: [0; 5],
            stack_peak: 0,
        }
    }
}

/// The host tests read this (by its symbol) between frames; the game writes it once a frame.
#[unsafe(no_mangle)]
pub static mut STACKSHOT_STATS: Telemetry = Telemetry::new();

/// The one reference to [`STACKSHOT_STATS`].
#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
pub fn take() -> &'static mut Telemetry {
    static TAKEN: gba::gba_cell::GbaCell<bool> = gba::gba_cell::GbaCell::new(false);
    assert!(!TAKEN.read(), "the telemetry is taken once");
    TAKEN.write(true);
    // SAFETY: the guard makes this the only reference ever made; the host reads the memory only between
    // frames, from outside the emulated CPU.
    unsafe { &mut *(&raw mut STACKSHOT_STATS) }
}
