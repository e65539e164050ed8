//! The game's telemetry: one `#[repr(C)]` block of 32-bit words that the game keeps in a static named
//! [`SYMBOL`] and writes once a frame, and that the host tests read from emulator memory between frames, finding
//! it by that symbol in the ELF. Both sides use these types; [`MAGIC`] tells the host the block is there.

/// Written once at boot; the host checks it before trusting the rest.
pub const MAGIC: u32 = u32::from_le_bytes(*b"SSTM");
/// The symbol of the game's [`Telemetry`] static.
pub const SYMBOL: &str = "STACKSHOT_STATS";
/// Words in a [`Telemetry`].
pub const WORDS: usize = core::mem::size_of::<Telemetry>() / 4;

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

impl State {
    const ALL: [State; 6] =
        [State::Title, State::Playing, State::Paused, State::Dying, State::GameOver, State::NameEntry];

    /// The state a [`Telemetry::state`] word holds, if it holds one.
    pub fn of(word: u32) -> Option<State> {
        State::ALL.into_iter().find(|&s| s as u32 == word)
    }
}

/// For the host tests: `telemetry.state == State::Playing`.
impl PartialEq<State> for u32 {
    fn eq(&self, state: &State) -> bool {
        *self == *state as u32
    }
}

/// How full one pool is now and at most since boot (objects, or slots for the sprite table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// Every field a 32-bit word (or several), in this order; offsets in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// 100: leak checks run (one at every game over) and 104: how many found a pool or the heap not empty, or
    /// the heap having refused a free (counted from boot on).
    pub leak_checks: u32,
    pub leak_failures: u32,
    /// 108: enemies destroyed since boot.
    pub kills: u32,
    /// 112..132: the high-score table's scores, best first, as loaded from SRAM or last saved.
    pub table: [u32; 5],
    /// 132: the most bytes the stack has held (`stack::high_water`), measured at each game over (every frame
    /// in debug builds).
    pub stack_peak: u32,
    /// 136: cycles the music took at the last VBlank (the mixer and the tracker, in the VBlank handler, outside
    /// `last_cycles`), and 140: the most since boot.
    pub music_cycles: u32,
    pub music_max_cycles: u32,
    /// 144..152: now/peak of the mixer's voices playing.
    pub voices: PoolUse,
    /// 152: VBlanks that passed with no frame of the game loop (a frame that ran late), since boot.
    pub missed_frames: u32,
}

// Words only, no padding: what `from_words` relies on.
const _: () = assert!(core::mem::size_of::<Telemetry>() == 156 && core::mem::align_of::<Telemetry>() == 4);

impl Telemetry {
    /// The block at boot: the magic word and zeros, in the title state.
    pub const BOOT: Telemetry = {
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
            music_cycles: 0,
            music_max_cycles: 0,
            voices: EMPTY,
            missed_frames: 0,
        }
    };

    /// The block from its words as read from memory, in order (the host's side).
    pub fn from_words(words: [u32; WORDS]) -> Telemetry {
        // SAFETY: Telemetry is repr(C) of u32s, PoolUses (repr(C), two u32s) and a [u32; 5]: 4-byte fields with
        // no padding (its size is checked above), every bit pattern valid, so it has the layout of [u32; WORDS].
        unsafe { core::mem::transmute::<[u32; WORDS], Telemetry>(words) }
    }
}
