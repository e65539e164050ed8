//! What the game keeps from frame to frame: [`Game`] and its [`Mode`]. The jobs are implemented on it each in
//! its own module: the mode changes (`modes.rs`), the play step (`play.rs`), scoring (`scoring.rs`) and the
//! sprite table (`draw.rs`).

use super::banner::Banner;
use super::collide::Targets;
use super::flash::Flash;
use super::game_over::GameOver;
use super::hud::Hud;
use super::name_entry::NameEntry;
use super::player::Player;
use super::rng::Rng;
use super::waves::{Phase, Stages};
use crate::music::{STAGE_THEMES, Song};
use crate::save::{HighScores, Saved, Settings};

pub enum Mode {
    Title,
    Playing,
    Paused,
    /// Frames left of the explosions after the last ship was lost.
    Dying(u16),
    GameOver(GameOver),
    NameEntry(NameEntry),
}

pub struct Game {
    pub mode: Mode,
    pub player: Player,
    pub stages: Stages,
    pub score: u32,
    /// Continues left in this game.
    pub credits: u8,
    /// Extra ships earned so far (an index into `scoring::EXTRA_LIVES`).
    pub extras: usize,
    pub rng: Rng,
    pub table: HighScores,
    /// The volumes as loaded at boot: what the music and the effects start at. Whatever changes them saves them
    /// (`save::store_settings`), as a score that makes the table is saved, so this stays what SRAM holds.
    pub settings: Settings,
    pub hud: Hud,
    pub banner: Banner,
    pub targets: Targets,
    pub flash: Flash,
    /// Frames since boot, and the sky's scroll (which stops while paused).
    pub frame: u32,
    pub sky: u32,
}

impl Game {
    /// The song for what the game shows: held while paused.
    pub fn song(&self) -> Song {
        match self.mode {
            Mode::Title => Song::Title,
            Mode::GameOver(_) | Mode::NameEntry(_) => Song::GameOver,
            Mode::Playing | Mode::Paused | Mode::Dying(_) => match self.stages.phase {
                Phase::Warning(_) | Phase::Boss => Song::Boss,
                Phase::Clear(_) => Song::StageClear,
                Phase::Waves => Song::Stage((self.stages.number() - 1) as u8 % STAGE_THEMES),
            },
        }
    }

    pub fn new(saved: Saved) -> Game {
        Game {
            mode: Mode::Title,
            player: Player::new(),
            stages: Stages::new(),
            score: 0,
            credits: 0,
            extras: 0,
            rng: Rng::new(1),
            table: saved.table,
            settings: saved.settings,
            hud: Hud::default(),
            banner: Banner::None,
            targets: Targets::new(),
            flash: Flash::new(),
            frame: 0,
            sky: 0,
        }
    }
}
