//! The modes a frame runs in and the moves between them: the title, play, pause, the explosions after the last
//! ship, the name entry (`name_entry.rs`) and the game-over screen with its continue prompt (`game_over.rs`);
//! and what each frame tells the telemetry.
//!
//! A credit's score is its own: the name entry for a score that makes the table comes as that credit ends,
//! before the continue prompt, and a continue starts again from no score (as arcade games do).

use super::banner::Banner;
use super::game_over::{CREDITS, Choice, GameOver};
use super::hud;
use super::input::{Input, key};
use super::memory::Memory;
use super::name_entry::NameEntry;
use super::player::Player;
use super::rng::Rng;
use super::state::{Game, Mode};
use super::telemetry::{State, Telemetry};
use super::waves::Stages;
use crate::save;
use stackshot_platform::{error, info, stack};

/// Frames the explosions play after the last ship is lost.
const DYING_FRAMES: u16 = 120;

impl Game {
    /// One frame of the current mode, then the telemetry.
    pub fn frame(&mut self, input: Input, mem: &mut Memory, stats: &mut Telemetry) {
        self.frame = self.frame.wrapping_add(1);
        let state = match &mut self.mode {
            Mode::Title => {
                self.sky += 1;
                if input.pressed(key::START) {
                    self.start(mem);
                } else {
                    hud::press_start(self.frame & 32 == 0);
                }
                State::Title
            }
            Mode::Playing if input.pressed(key::START) => {
                self.mode = Mode::Paused;
                hud::paused(true);
                State::Paused
            }
            Mode::Playing => {
                self.sky += 1;
                stats.kills += self.play(input, mem);
                State::Playing
            }
            Mode::Paused => {
                if input.pressed(key::START) {
                    self.mode = Mode::Playing;
                    hud::paused(false);
                    self.banner = Banner::None;
                }
                State::Paused
            }
            Mode::Dying(0) => self.end(mem, stats),
            Mode::Dying(left) => {
                *left -= 1;
                self.sky += 1;
                stats.kills += self.play(Input::default(), mem);
                State::Dying
            }
            Mode::GameOver(screen) => {
                match screen.step(input) {
                    Choice::Wait => {}
                    Choice::Continue => {
                        self.credits -= 1;
                        self.continue_game(mem);
                    }
                    Choice::Title => self.enter_title(),
                }
                State::GameOver
            }
            Mode::NameEntry(entry) => {
                if let Some(name) = entry.edit(input) {
                    let place = entry.place;
                    self.table.insert(name, self.score);
                    save::store_scores(&self.table);
                    info!(
                        "high score {} by {} saved in place {}",
                        self.score,
                        core::str::from_utf8(&name).unwrap_or("?"),
                        place + 1
                    );
                    self.enter_game_over();
                }
                State::NameEntry
            }
        };
        stats.state = state as u32;
        stats.frame = self.frame;
        stats.score = self.score;
        stats.lives = u32::from(self.player.lives);
        stats.bombs = u32::from(self.player.bombs);
        stats.stage = self.stages.number();
        for (word, entry) in stats.table.iter_mut().zip(self.table.entries.iter()) {
            *word = entry.score;
        }
    }

    pub fn enter_title(&mut self) {
        self.mode = Mode::Title;
        hud::title(&self.table);
    }

    /// START on the title: a new game, its randomness seeded from the frame count (so a key script replays).
    fn start(&mut self, mem: &mut Memory) {
        self.rng = Rng::new(self.frame.wrapping_mul(0x9E37_79B9) ^ 0x5EED);
        self.stages = Stages::new();
        self.credits = CREDITS;
        self.continue_game(mem);
    }

    /// A fresh ship, score and stock, on the stage the last game reached (from its beginning).
    fn continue_game(&mut self, mem: &mut Memory) {
        self.player = Player::new();
        self.score = 0;
        self.extras = 0;
        self.stages = self.stages.restart();
        self.banner = Banner::None;
        self.hud.reset();
        mem.shadow.begin();
        self.mode = Mode::Playing;
    }

    /// The last ship is lost: the explosions play on a while.
    pub fn enter_dying(&mut self) {
        self.mode = Mode::Dying(DYING_FRAMES);
    }

    fn enter_game_over(&mut self) {
        self.mode = Mode::GameOver(GameOver::open(self.score, self.credits));
    }

    /// The dying is over: everything goes back to its pool and the heap, which must then be empty. Then the
    /// name entry if the score made the table, else the game-over screen.
    fn end(&mut self, mem: &mut Memory, stats: &mut Telemetry) -> State {
        mem.clear();
        self.flash.stop();
        stats.game_overs += 1;
        stats.leak_checks += 1;
        stats.stack_peak = stack::high_water() as u32;
        if !mem.is_empty() {
            stats.leak_failures += 1;
            error!(
                "leak check failed at game over {}: a pool or the heap is not empty, or the heap has refused a free",
                stats.game_overs
            );
        }
        match self.table.rank(self.score) {
            Some(place) => {
                self.mode = Mode::NameEntry(NameEntry::open(self.score, place));
                State::NameEntry
            }
            None => {
                self.enter_game_over();
                State::GameOver
            }
        }
    }
}
