//! Power-ups dropped by saucers (and now and then by others): they drift down with a slow sway, and the ship
//! collects them for a wider shot (or points, at full power).

use super::fixed::{Fx, sin};
use super::sprites::Sprited;

#[derive(Clone, Copy, Debug)]
pub struct Pickup {
    /// The centre, sway included.
    pub x: Fx,
    pub y: Fx,
    /// The line it falls along.
    column: Fx,
    age: u16,
}

impl Sprited for Pickup {
    #[inline(always)]
    fn centre(&self) -> (Fx, Fx) {
        (self.x, self.y)
    }
}

impl Pickup {
    pub fn new(x: Fx, y: Fx) -> Pickup {
        Pickup { x, y, column: x, age: 0 }
    }

    /// Falls and sways; false once below the screen.
    pub fn step(&mut self) -> bool {
        self.age = self.age.wrapping_add(1);
        self.y += Fx::from_raw(160);
        self.x = self.column + sin(u32::from(self.age) / 2) * 6;
        self.y.floor() < 168
    }
}
