//! The shadow sprite table: built in IWRAM during the frame, copied whole to OAM at the start of the next
//! VBlank (so the hardware never draws a half-written table), with OAM entries handed out by a byte stack.
//!
//! Each frame every drawn object pops an entry from [`Shadow`]'s slot stack; the entries come out 0, 1, 2…,
//! and a lower entry is drawn on top, so the game draws in priority order (player, enemy bullets, pick-ups,
//! enemies, player bullets, particles) and when more than 128 objects would be needed, the least important
//! ones are the ones left out, the same ones every time. [`Shadow::begin`] pushes last frame's entries back.

use super::fixed::Fx;
use super::sweep::sweep;
use crate::assets::Sprite;
use crate::crash::Gauge;
use stackshot_alloc::pool::{CheckError, IndexPool, ValueStack};
use stackshot_platform::fast::fill_words;

/// OAM entries.
pub const SLOTS: usize = 128;
/// Words of the sprite table: two an entry (attributes 0 and 1, then attribute 2 and the affine half).
const WORDS: usize = SLOTS * 2;
/// Attribute 0 with the "not displayed" style: an entry the hardware skips.
const HIDDEN: u32 = 0x0200;
/// Sprites are drawn below the text layer (BG0, priority 0) and above the stars.
const PRIORITY: u16 = 1;

/// The stack's entries, so that 0 is popped first.
const fn all_slots() -> [u8; SLOTS] {
    let mut slots = [0; SLOTS];
    let mut i = 0;
    while i < SLOTS {
        slots[i] = (SLOTS - 1 - i) as u8;
        i += 1;
    }
    slots
}

/// The sprite table being built and the OAM entries still free this frame.
#[repr(C, align(4))]
pub struct Shadow {
    words: [u32; WORDS],
    slots: ValueStack<u8, SLOTS>,
}

/// How one kind of object is drawn: its attributes without position, and the offset from its centre to its
/// top-left corner.
#[derive(Clone, Copy, Debug)]
pub struct Look {
    attr0: u32,
    attr1: u32,
    attr2: u32,
    tiles_per_frame: u32,
    frames: u32,
    half_w: i32,
    half_h: i32,
}

impl Look {
    pub const fn of(sprite: &Sprite) -> Look {
        // Width and height by shape and size (GBATEK's OBJ size table), for the centre offset and culling.
        let (w, h) = match (sprite.shape as u16 >> 14, sprite.size) {
            (0, s) => (8 << s, 8 << s),
            (1, 0) => (16, 8),
            (1, 1) => (32, 8),
            (1, 2) => (32, 16),
            (1, _) => (64, 32),
            (_, 0) => (8, 16),
            (_, 1) => (8, 32),
            (_, 2) => (16, 32),
            (_, _) => (32, 64),
        };
        Look {
            attr0: sprite.shape as u32,
            attr1: (sprite.size as u32) << 14,
            attr2: sprite.first_tile as u32 | (PRIORITY as u32) << 10 | (sprite.palbank as u32) << 12,
            tiles_per_frame: sprite.tiles_per_frame as u32,
            frames: sprite.frames as u32,
            half_w: w / 2,
            half_h: h / 2,
        }
    }
}

impl Look {
    /// The same look with the colours of OBJ palette bank `bank`.
    pub const fn in_bank(&self, bank: u16) -> Look {
        Look { attr2: (self.attr2 & 0x0FFF) | (bank as u32) << 12, ..*self }
    }
}

/// Something drawn with a [`Look`]: where its centre is and which frame it shows.
pub trait Sprited {
    fn centre(&self) -> (Fx, Fx);
    /// The animation frame (taken modulo the look's frame count).
    #[inline(always)]
    fn frame(&self) -> u32 {
        0
    }
}

impl Shadow {
    pub const fn new() -> Shadow {
        Shadow { words: [HIDDEN; WORDS], slots: ValueStack::full(all_slots()) }
    }

    /// Starts a new table: every entry hidden, every slot back on the stack in the order it was taken.
    pub fn begin(&mut self) {
        let used = SLOTS - self.slots.len();
        for slot in (0..used).rev() {
            // Cannot overflow: exactly `used` slots were popped.
            let _ = self.slots.push(slot as u8);
        }
        // SAFETY: `words` is word-aligned (repr align 4) and exactly WORDS words long.
        unsafe { fill_words(self.words.as_mut_ptr(), HIDDEN, WORDS) };
    }

    /// Slots still on the stack.
    pub fn slots_free(&self) -> usize {
        self.slots.len()
    }

    /// Slots drawn this frame.
    pub fn slots_used(&self) -> usize {
        SLOTS - self.slots.len()
    }

    pub fn check(&self) -> Result<(), CheckError> {
        self.slots.check()
    }

    /// Adds one object centred at (`x`, `y`) in pixels, if it is on screen and a slot is left.
    #[inline(always)]
    pub fn put(&mut self, look: &Look, x: i32, y: i32, frame: u32) {
        let left = x - look.half_w;
        let top = y - look.half_h;
        if left <= -2 * look.half_w || left >= 240 || top <= -2 * look.half_h || top >= 160 {
            return;
        }
        let Some(slot) = self.slots.pop() else { return };
        // The mask keeps the index provably in range: no bounds check, no call to a panic in ROM.
        let i = (slot as usize & (SLOTS - 1)) * 2;
        // Frames wrap; `frames` is a power of two for every animated sprite, 1 for the rest.
        let tile = (frame & (look.frames - 1)) * look.tiles_per_frame;
        self.words[i] = (top as u32 & 0xFF) | look.attr0 | ((left as u32 & 0x1FF) << 16) | (look.attr1 << 16);
        self.words[i + 1] = look.attr2 + tile;
    }

    /// Adds one object at a fixed-point centre.
    pub fn put_at(&mut self, look: &Look, x: Fx, y: Fx, frame: u32) {
        self.put(look, x.floor(), y.floor(), frame);
    }

    /// Copies the table to OAM. Call at the start of VBlank.
    pub fn copy_to_oam(&self) {
        // SAFETY: OAM is 1 KB at 0x07000000, word-writable; `words` is 1 KB, word-aligned, in IWRAM, and does
        // not overlap it; 32 chunks of 8 words is exactly 1 KB. The copy is ARM code in IWRAM (the gba crate's).
        unsafe { gba::mem::copy_u32x8_unchecked(0x0700_0000 as *mut [u32; 8], self.words.as_ptr().cast(), WORDS / 8) };
    }
}

/// The sprite slots drawn this frame, for the crash screen.
impl Gauge for Shadow {
    fn gauge(&self) -> (usize, usize) {
        (self.slots_used(), SLOTS)
    }
}

/// Adds every live object of `pool` to the table: a hot path, ARM code in IWRAM.
///
#[unsafe(link_section = ".iwram.draw_pool")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn draw_pool<T: Sprited, const N: usize, P, const ID: u8>(
    pool: &mut IndexPool<T, u8, N, P, ID>,
    shadow: &mut Shadow,
    look: &Look,
) {
    sweep!(pool, |object| {
        let (x, y) = object.centre();
        shadow.put(look, x.to_raw() >> 8, y.to_raw() >> 8, object.frame());
        true
    });
}

#[cfg(test)]
mod tests {
    use super::{Look, Shadow};
    use crate::assets::{BOSS, EXPLOSION};
    use gba::prelude::*;

    /// An entry as the hardware reads it, through OAM: the frame is taken modulo the frame count, the sprite's
    /// palette bank and size are kept, and a position partly off screen wraps as the hardware expects.
    #[test_case]
    fn put_picks_the_frame_and_wraps_partly_off_screen_positions() {
        let mut shadow = Shadow::new();
        let (explosion, boss) = (Look::of(&EXPLOSION), Look::of(&BOSS));
        // Centres, so that the top-left corners are (-4, -6), partly off screen, and (100, 20).
        shadow.put(&explosion, -4 + explosion.half_w, -6 + explosion.half_h, 5);
        shadow.put(&boss, 100 + boss.half_w, 20 + boss.half_h, 0);
        shadow.copy_to_oam();
        let ObjAttr(a0, a1, a2) = OBJ_ATTR_ALL.index(0).read();
        assert_eq!(a2.tile_id(), EXPLOSION.first_tile + 1, "frame 5 of 4 is frame 1");
        assert_eq!(a2.palbank(), EXPLOSION.palbank);
        assert_eq!((a1.x(), a0.y()), (512 - 4, 256 - 6));
        let ObjAttr(a0, a1, _) = OBJ_ATTR_ALL.index(1).read();
        assert_eq!((a1.x(), a0.y(), a1.size()), (100, 20, 2));
        assert_eq!(a0.shape(), ObjShape::Square);
        assert_eq!(a0.style(), ObjDisplayStyle::Normal);
        // The rest of the table stays hidden.
        assert_eq!(OBJ_ATTR0.index(2).read().style(), ObjDisplayStyle::NotDisplayed);
    }
}
