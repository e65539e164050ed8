//! The ship: moves with the d-pad, fires with A (held: auto-fire, wider with power-ups), bombs with B.

use super::bullets::fire;
use super::fixed::Fx;
use super::input::{Input, key};
use super::memory::PlayerBullets;
use crate::sound::{self, Effect};

pub const START_LIVES: u8 = 3;
pub const START_BOMBS: u8 = 3;
pub const MAX_POWER: u8 = 3;
/// Frames between volleys while A is held.
const FIRE_EVERY: u8 = 5;
/// Frames from being hit to flying again, then frames of blinking invulnerability.
const DOWN_FRAMES: u16 = 75;
const SAFE_FRAMES: u16 = 120;
const SPEED: Fx = Fx::from_raw(448);
const BULLET_SPEED: Fx = Fx::from_raw(-6 * 256);
/// The ship's hit box reaches this many pixels from its centre: smaller than the sprite, as players expect.
pub const REACH: i32 = 2;

pub struct Player {
    pub x: Fx,
    pub y: Fx,
    pub lives: u8,
    pub bombs: u8,
    pub power: u8,
    cooldown: u8,
    /// Frames left of invulnerability (blinking).
    pub safe: u16,
    /// Frames left until it flies again after a hit; 0 while flying.
    pub down: u16,
}

impl Player {
    pub fn new() -> Player {
        Player {
            x: Fx::new(120),
            y: Fx::new(140),
            lives: START_LIVES,
            bombs: START_BOMBS,
            power: 1,
            cooldown: 0,
            safe: SAFE_FRAMES,
            down: 0,
        }
    }

    pub fn flying(&self) -> bool {
        self.down == 0
    }

    /// Whether enemies and their bullets can hurt it now.
    pub fn vulnerable(&self) -> bool {
        self.down == 0 && self.safe == 0
    }

    /// Drawn this frame: blinking while safe, hidden while down.
    pub fn visible(&self, frame: u32) -> bool {
        self.down == 0 && (self.safe == 0 || frame & 4 == 0)
    }

    /// One frame of flying and shooting; returns true when B asks for a bomb that is in stock (taken).
    pub fn step(&mut self, input: Input, bullets: &mut PlayerBullets) -> bool {
        if self.down > 0 {
            self.down -= 1;
            if self.down == 0 && self.lives > 0 {
                self.respawn();
            }
            return false;
        }
        self.safe = self.safe.saturating_sub(1);
        let (mut dx, mut dy) = (Fx::new(0), Fx::new(0));
        if input.held(key::LEFT) {
            dx -= SPEED;
        }
        if input.held(key::RIGHT) {
            dx += SPEED;
        }
        if input.held(key::UP) {
            dy -= SPEED;
        }
        if input.held(key::DOWN) {
            dy += SPEED;
        }
        self.x = (self.x + dx).clamp(Fx::new(8), Fx::new(232));
        self.y = (self.y + dy).clamp(Fx::new(20), Fx::new(150));

        self.cooldown = self.cooldown.saturating_sub(1);
        if input.held(key::A) && self.cooldown == 0 {
            self.volley(bullets);
            self.cooldown = FIRE_EVERY;
        }
        if input.pressed(key::B) && self.bombs > 0 {
            self.bombs -= 1;
            return true;
        }
        false
    }

    fn volley(&self, bullets: &mut PlayerBullets) {
        let (x, y) = (self.x, self.y - Fx::new(6));
        let side = Fx::new(4);
        match self.power {
            1 => {
                fire(bullets, x, y, Fx::new(0), BULLET_SPEED);
            }
            2 => {
                fire(bullets, x - side, y, Fx::new(0), BULLET_SPEED);
                fire(bullets, x + side, y, Fx::new(0), BULLET_SPEED);
            }
            _ => {
                let slant = Fx::from_raw(320);
                fire(bullets, x - side, y, Fx::new(0), BULLET_SPEED);
                fire(bullets, x + side, y, Fx::new(0), BULLET_SPEED);
                fire(bullets, x - side, y, -slant, BULLET_SPEED);
                fire(bullets, x + side, y, slant, BULLET_SPEED);
            }
        }
        sound::play(Effect::Shot);
    }

    /// Hit: a life lost, power down by one, and down for a while (for good if that was the last life).
    pub fn hit(&mut self) {
        self.lives = self.lives.saturating_sub(1);
        self.power = (self.power - 1).max(1);
        self.down = DOWN_FRAMES;
    }

    fn respawn(&mut self) {
        self.x = Fx::new(120);
        self.y = Fx::new(140);
        self.safe = SAFE_FRAMES;
        self.bombs = self.bombs.max(START_BOMBS);
    }

    /// A power-up collected: true if it made the shot wider, false if already at full power.
    pub fn power_up(&mut self) -> bool {
        if self.power < MAX_POWER {
            self.power += 1;
            true
        } else {
            false
        }
    }
}
