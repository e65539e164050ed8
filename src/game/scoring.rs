//! Scoring: points added to the score, and the extra ships they earn.

use super::state::Game;
use crate::sound::{self, Effect};

/// Scores that earn an extra ship.
const EXTRA_LIVES: [u32; 2] = [50_000, 150_000];

impl Game {
    /// Adds `points`; an extra ship when the score reaches the next of [`EXTRA_LIVES`].
    pub fn add_score(&mut self, points: u32) {
        self.score += points;
        if let Some(&at) = EXTRA_LIVES.get(self.extras)
            && self.score >= at
        {
            self.extras += 1;
            if self.player.extra_ship() {
                sound::play(Effect::PickUp);
            }
        }
    }
}
