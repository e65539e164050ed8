//! The ship: moves with the d-pad, fires with A (held: auto-fire, wider with power-ups), bombs with B.

use super::bullets::fire;
use super::fixed::Fx;
use super::input::{Input, key};
use super::memory::PlayerBullets;
use crate::sound::{self, Effect};

pub const START_LIVES: u8 = 3;
pub const START_BOMBS: u8 = 3;
pub const MAX_POWER: u8 = 3;
/// The most ships in stock that extra ships add up to.
const MAX_LIVES: u8 = 9;
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
    ship: Ship,
}

/// Where the ship is between its lives. Flying, being hit and being drawn all follow from this one state, so a
/// ship lost for good can never fly, be hit or collect anything again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ship {
    /// In play, with frames left of blinking invulnerability (0: none).
    Flying { safe: u16 },
    /// Hit with a ship still in stock: frames until that one flies.
    Down(u16),
    /// The last ship was hit: none flies again in this game (a continue starts a new `Player`).
    Lost,
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
            ship: Ship::Flying { safe: SAFE_FRAMES },
        }
    }

    /// In play: it moves, fires and collects power-ups.
    pub fn flying(&self) -> bool {
        matches!(self.ship, Ship::Flying { .. })
    }

    /// Whether enemies and their bullets can hurt it now.
    pub fn vulnerable(&self) -> bool {
        self.ship == Ship::Flying { safe: 0 }
    }

    /// Drawn this frame: blinking while safe, hidden while down or lost.
    pub fn visible(&self, frame: u32) -> bool {
        match self.ship {
            Ship::Flying { safe } => safe == 0 || frame & 4 == 0,
            Ship::Down(_) | Ship::Lost => false,
        }
    }

    /// Keeps a flying ship invulnerable for at least `frames` more frames (a bomb's grace); nothing otherwise.
    pub fn shield(&mut self, frames: u16) {
        if let Ship::Flying { safe } = &mut self.ship {
            *safe = (*safe).max(frames);
        }
    }

    /// One frame of flying and shooting; returns true when B asks for a bomb that is in stock (taken).
    pub fn step(&mut self, input: Input, bullets: &mut PlayerBullets) -> bool {
        match &mut self.ship {
            Ship::Flying { safe } => *safe = safe.saturating_sub(1),
            Ship::Down(left) if *left > 1 => {
                *left -= 1;
                return false;
            }
            Ship::Down(_) => {
                self.respawn();
                return false;
            }
            Ship::Lost => return false,
        }
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

    /// Hit: a life lost, power down by one, and down for a while, or lost for good if that was the last life.
    pub fn hit(&mut self) {
        self.lives = self.lives.saturating_sub(1);
        self.power = (self.power - 1).max(1);
        self.ship = if self.lives == 0 { Ship::Lost } else { Ship::Down(DOWN_FRAMES) };
    }

    /// An extra ship earned: false once the last ship is lost, when the game is over whatever the score does.
    pub fn extra_ship(&mut self) -> bool {
        if self.ship == Ship::Lost {
            return false;
        }
        self.lives = (self.lives + 1).min(MAX_LIVES);
        true
    }

    fn respawn(&mut self) {
        self.x = Fx::new(120);
        self.y = Fx::new(140);
        self.ship = Ship::Flying { safe: SAFE_FRAMES };
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

#[cfg(test)]
mod tests {
    use super::{DOWN_FRAMES, Player, SAFE_FRAMES};
    use crate::game::input::{Input, key};
    use crate::game::memory::PlayerBullets;
    use stackshot_alloc::pool::IndexPool;

    /// Fire and bomb pressed every frame, as a player at the end of a game presses them.
    fn frantic() -> Input {
        Input::of(key::A | key::B, key::A | key::B)
    }

    /// The last ship hit stays lost however long the dying lasts: it never flies, fires, shows or can be hit
    /// again, and the score can give it no extra ship.
    #[test_case]
    fn the_last_ship_lost_never_flies_again() {
        let mut bullets: PlayerBullets = IndexPool::with_id(1);
        let mut player = Player::new();
        player.lives = 1;
        player.hit();
        for frame in 0..4 * u32::from(DOWN_FRAMES) {
            assert!(!player.step(frantic(), &mut bullets), "frame {frame}: a bomb");
            assert!(!player.flying() && !player.vulnerable() && !player.visible(frame), "frame {frame}");
        }
        assert!(bullets.is_empty());
        assert!(!player.extra_ship());
        assert_eq!(player.lives, 0);
    }

    /// A ship hit with another in stock is down for `DOWN_FRAMES`, then flies, blinking and safe for
    /// `SAFE_FRAMES`, then can be hit.
    #[test_case]
    fn a_ship_hit_with_one_in_stock_flies_again_safe_for_a_while() {
        let mut bullets: PlayerBullets = IndexPool::with_id(1);
        let mut player = Player::new();
        player.hit();
        for frame in 1..u32::from(DOWN_FRAMES) {
            player.step(Input::default(), &mut bullets);
            assert!(!player.flying(), "frame {frame}");
        }
        player.step(Input::default(), &mut bullets);
        assert!(player.flying() && !player.vulnerable());
        for _ in 0..SAFE_FRAMES {
            player.step(Input::default(), &mut bullets);
        }
        assert!(player.vulnerable() && player.visible(4));
        assert_eq!(player.lives, super::START_LIVES - 1);
    }
}
