//! The flash effects: the bomb's white flash of the whole screen, fading out, and the white palette bank an
//! enemy is drawn in for a few frames after it is hit.

use super::sprites::Look;
use crate::layout::WHITE_OBJ_PALBANK;
use gba::prelude::*;

/// Frames of the white flash of a bomb.
const FLASH_FRAMES: u8 = 16;

/// Fills the white palette bank (at boot).
pub fn init() {
    for i in 1..16 {
        OBJ_PALETTE.index(usize::from(WHITE_OBJ_PALBANK) * 16 + i).write(Color::from_rgb(31, 31, 31));
    }
}

/// `look` all white: an enemy just hit.
pub fn white(look: &Look) -> Look {
    look.in_bank(WHITE_OBJ_PALBANK)
}

/// The bomb's flash: frames left.
pub struct Flash(u8);

impl Flash {
    pub const fn new() -> Flash {
        Flash(0)
    }

    pub fn start(&mut self) {
        self.0 = FLASH_FRAMES;
    }

    pub fn stop(&mut self) {
        self.0 = 0;
    }

    /// Once a frame, in VBlank: the sky and the sprites brightened, fading out.
    pub fn show(&mut self) {
        if self.0 == 0 {
            BLDCNT.write(BlendControl::new());
            return;
        }
        self.0 -= 1;
        BLDCNT.write(
            BlendControl::new()
                .with_target1_bg2(true)
                .with_target1_bg3(true)
                .with_target1_obj(true)
                .with_target1_backdrop(true)
                .with_mode(ColorEffectMode::Brighten),
        );
        BLDY.write(self.0);
    }
}
