//! The stages: a script of enemy waves each, then a warning and the boss; after the third stage the game
//! loops, harder. The difficulty (`rank`) grows with the stage, the lap and the time spent in a stage.

use super::ai::{World, spawn};
use super::enemy::Kind;
use super::memory::Enemies;

#[derive(Clone, Copy, Debug)]
enum Wave {
    /// Darts in a line from the top at column x, each on its own path.
    Darts(u8, u8),
    /// A row of crabs in formation.
    Crabs(u8),
    /// A saucer from the left (true) or the right.
    Saucer(bool),
    /// Mines drifting down at random columns.
    Mines(u8),
}
use Wave::*;

/// (frame of the stage, wave).
type Script = &'static [(u16, Wave)];

const STAGE_1: Script = &[
    (60, Darts(3, 60)),
    (160, Darts(3, 180)),
    (280, Crabs(5)),
    (440, Mines(3)),
    (540, Darts(4, 120)),
    (660, Crabs(6)),
    (820, Saucer(true)),
    (920, Darts(3, 60)),
    (980, Darts(3, 180)),
    (1120, Mines(4)),
    (1220, Crabs(6)),
    (1380, Saucer(false)),
    (1480, Darts(5, 120)),
    (1620, Crabs(7)),
    (1720, Mines(5)),
    (1820, Darts(4, 40)),
    (1870, Darts(4, 200)),
    (2020, Saucer(true)),
    (2060, Saucer(false)),
    (2200, Crabs(7)),
];

const STAGE_2: Script = &[
    (60, Mines(4)),
    (140, Darts(4, 80)),
    (200, Darts(4, 160)),
    (320, Saucer(true)),
    (420, Crabs(6)),
    (560, Saucer(false)),
    (620, Mines(5)),
    (760, Darts(5, 40)),
    (800, Darts(5, 200)),
    (940, Crabs(7)),
    (1000, Saucer(true)),
    (1160, Mines(6)),
    (1260, Darts(6, 120)),
    (1380, Saucer(false)),
    (1420, Saucer(true)),
    (1560, Crabs(7)),
    (1640, Darts(4, 60)),
    (1700, Darts(4, 180)),
    (1860, Mines(7)),
    (1960, Crabs(7)),
];

const STAGE_3: Script = &[
    (60, Crabs(7)),
    (180, Darts(5, 60)),
    (220, Darts(5, 180)),
    (340, Saucer(true)),
    (360, Saucer(false)),
    (480, Mines(6)),
    (600, Crabs(7)),
    (640, Darts(6, 120)),
    (800, Saucer(true)),
    (840, Mines(5)),
    (960, Darts(6, 40)),
    (1000, Darts(6, 200)),
    (1140, Crabs(7)),
    (1200, Saucer(false)),
    (1320, Mines(8)),
    (1440, Darts(7, 120)),
    (1560, Saucer(true)),
    (1580, Saucer(false)),
    (1700, Crabs(7)),
    (1760, Darts(6, 80)),
];

/// With `--features bullet-hell` (which `make record-trace` records for the benchmark), every stage is the
/// bullet-hell scene instead.
const STAGES: [Script; 3] = if cfg!(feature = "bullet-hell") { [BULLET_HELL; 3] } else { [STAGE_1, STAGE_2, STAGE_3] };

/// The bullet-hell scene: a wave every half second, 100 of them, of the kinds that take scratch from the heap
/// (darts, crabs, saucers), more than leave, so that the 32-enemy pool stays full of enemies holding scratch.
const BULLET_HELL: Script = &bullet_hell();

const fn bullet_hell() -> [(u16, Wave); 100] {
    const CYCLE: [Wave; 6] = [Crabs(7), Darts(6, 60), Saucer(true), Darts(6, 180), Crabs(7), Saucer(false)];
    let mut script = [(0, Mines(0)); 100];
    let mut i = 0;
    while i < script.len() {
        script[i] = (30 * (i as u16 + 1), CYCLE[i % CYCLE.len()]);
        i += 1;
    }
    script
}

/// Frames of the warning before a boss, and of the "stage clear" after one.
const WARNING_FRAMES: u16 = 150;
const CLEAR_FRAMES: u16 = 180;
/// After the last wave, the boss comes when the screen is clear or after this many frames.
const STRAGGLER_FRAMES: u32 = 600;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Waves,
    /// Frames left of the warning.
    Warning(u16),
    Boss,
    /// Frames left of the "stage clear" banner.
    Clear(u16),
}

pub struct Stages {
    /// 0, 1, 2 within a lap.
    pub stage: u32,
    pub lap: u32,
    /// Frames since the stage began.
    pub clock: u32,
    next: usize,
    pub phase: Phase,
}

impl Stages {
    pub fn new() -> Stages {
        Stages { stage: 0, lap: 0, clock: 0, next: 0, phase: Phase::Waves }
    }

    /// The same stage from its beginning: where a continued game starts.
    pub fn restart(&self) -> Stages {
        Stages { stage: self.stage, lap: self.lap, ..Stages::new() }
    }

    /// The stage number players see, from 1.
    pub fn number(&self) -> u32 {
        self.lap * 3 + self.stage + 1
    }

    /// Difficulty: the stage, three more a lap, and one more every 15 seconds of a stage.
    pub fn rank(&self) -> u32 {
        self.stage + 3 * self.lap + self.clock / 900
    }

    /// One frame of the stage: spawns what is due, moves between waves, boss and clear (once the enemies' frame
    /// reported the boss destroyed).
    pub fn step(&mut self, enemies: &mut Enemies, w: &mut World, boss_destroyed: bool) {
        self.clock += 1;
        let script = STAGES[self.stage as usize];
        match self.phase {
            Phase::Waves => {
                while let Some(&(at, wave)) = script.get(self.next) {
                    if u32::from(at) > self.clock {
                        break;
                    }
                    launch(wave, enemies, w);
                    self.next += 1;
                }
                let last = u32::from(script[script.len() - 1].0);
                if self.next == script.len() && (enemies.is_empty() || self.clock > last + STRAGGLER_FRAMES) {
                    self.phase = Phase::Warning(WARNING_FRAMES);
                }
            }
            Phase::Warning(0) => {
                spawn(enemies, w, Kind::Boss, 120, -24, 0);
                self.phase = Phase::Boss;
            }
            Phase::Warning(n) => self.phase = Phase::Warning(n - 1),
            Phase::Boss if boss_destroyed => self.phase = Phase::Clear(CLEAR_FRAMES),
            // A boss that could not be spawned (the enemy pool full) is spawned again.
            Phase::Boss if enemies.iter().all(|(_, e)| e.kind != Kind::Boss) => self.phase = Phase::Warning(0),
            Phase::Boss => {}
            Phase::Clear(0) => {
                self.stage += 1;
                if self.stage == 3 {
                    self.stage = 0;
                    self.lap += 1;
                }
                self.clock = 0;
                self.next = 0;
                self.phase = Phase::Waves;
            }
            Phase::Clear(n) => self.phase = Phase::Clear(n - 1),
        }
    }
}

fn launch(wave: Wave, enemies: &mut Enemies, w: &mut World) {
    match wave {
        Darts(count, x) => {
            for i in 0..i32::from(count) {
                spawn(enemies, w, Kind::Dart, i32::from(x), -8 - 18 * i, 0);
            }
        }
        Crabs(count) => {
            let n = i32::from(count);
            for i in 0..n {
                spawn(enemies, w, Kind::Crab, 120 - (n - 1) * 13 + 26 * i, -8, i as i16);
            }
        }
        Saucer(left) => {
            let (x, hover) = if left { (-12, 64) } else { (252, 176) };
            spawn(enemies, w, Kind::Saucer, x, 28, hover);
        }
        Mines(count) => {
            for i in 0..i32::from(count) {
                let x = 20 + w.rng.below(200) as i32;
                let phase = w.rng.below(64) as i16;
                spawn(enemies, w, Kind::Mine, x, -8 - 24 * i, phase);
            }
        }
    }
}
