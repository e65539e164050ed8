//! The buttons of one frame: which are down, and which went down this frame.

use gba::keys::KeyInput;

/// Button bits, in KEYINPUT's order.
pub mod key {
    pub const A: u16 = 1 << 0;
    pub const B: u16 = 1 << 1;
    // SELECT (1 << 2) with R (1 << 8) is the allocator overlay's chord: the game gives neither a meaning.
    pub const START: u16 = 1 << 3;
    pub const RIGHT: u16 = 1 << 4;
    pub const LEFT: u16 = 1 << 5;
    pub const UP: u16 = 1 << 6;
    pub const DOWN: u16 = 1 << 7;
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Input {
    held: u16,
    pressed: u16,
}

impl Input {
    /// This frame's buttons from KEYINPUT (0 = down) and last frame's input.
    pub fn read(keys: KeyInput, last: Input) -> Input {
        let held = !keys.to_u16() & 0x03FF;
        Input { held, pressed: held & !last.held }
    }

    /// `held` buttons down, of which `pressed` went down this frame: input a program makes (the scene's).
    pub fn of(held: u16, pressed: u16) -> Input {
        Input { held: held | pressed, pressed }
    }

    pub fn held(self, key: u16) -> bool {
        self.held & key != 0
    }

    /// Down this frame and not the last.
    pub fn pressed(self, key: u16) -> bool {
        self.pressed & key != 0
    }
}
