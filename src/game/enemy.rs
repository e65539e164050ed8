//! What an enemy is: its kind, its position and health, and its AI scratch, a block of the 4 KB tree-heap that
//! it alone owns. How each kind moves and fires is the AI's (`ai.rs`); this is the data the pool holds, what
//! collisions, drawing and the bomb read.

use super::fixed::Fx;
use core::ptr::NonNull;
use stackshot_alloc::heap::Heap;
use stackshot_alloc::iwram::{heap_alloc, heap_free};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dart,
    Crab,
    Saucer,
    Mine,
    Boss,
}

impl Kind {
    /// Points for destroying one (a boss: times its stage).
    pub fn points(self) -> u32 {
        match self {
            Kind::Dart => 300,
            Kind::Crab => 200,
            Kind::Saucer => 1000,
            Kind::Mine => 100,
            Kind::Boss => 10_000,
        }
    }

    /// Hit points at spawn (a boss gains more by stage and rank).
    pub fn health(self) -> i16 {
        match self {
            Kind::Dart => 2,
            Kind::Crab => 3,
            Kind::Saucer => 14,
            Kind::Mine => 4,
            Kind::Boss => 200,
        }
    }

    /// Half the side of its hit box, in pixels.
    pub fn reach(self) -> i32 {
        match self {
            Kind::Boss => 14,
            Kind::Saucer => 7,
            _ => 6,
        }
    }
}

/// An enemy's AI scratch: 16-bit values in a block of the AI heap that this enemy alone owns.
pub struct Scratch {
    ptr: NonNull<i16>,
    len: u16,
}

impl Scratch {
    /// `len` values from the heap, or `None` (counted in `fallbacks`) when the heap cannot serve them.
    pub fn alloc(heap: &mut Heap<'static>, fallbacks: &mut u32, len: usize) -> Option<Scratch> {
        let result = heap_alloc(heap, len * 2, 4);
        crate::trace::heap_alloc(len * 2, 4, result);
        match result {
            Ok(ptr) => Some(Scratch { ptr: ptr.cast(), len: len as u16 }),
            Err(_) => {
                *fallbacks += 1;
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Value `i`; 0 past the end.
    pub fn get(&self, i: usize) -> i16 {
        if i < self.len() {
            // SAFETY: the block holds `len` i16s (4-aligned), owned by this Scratch until `free`; i < len.
            unsafe { self.ptr.add(i).read() }
        } else {
            0
        }
    }

    /// Sets value `i`; nothing past the end.
    pub fn set(&mut self, i: usize, value: i16) {
        if i < self.len() {
            // SAFETY: as in `get`; `&mut self` makes this the only access.
            unsafe { self.ptr.add(i).write(value) }
        }
    }

    /// Gives the block back to the heap.
    pub fn free(self, heap: &mut Heap<'static>) {
        let result = heap_free(heap, self.ptr.cast());
        crate::trace::heap_free(self.ptr.cast(), result);
        debug_assert!(result.is_ok(), "scratch free refused: {result:?}");
    }
}

pub struct Enemy {
    pub kind: Kind,
    pub x: Fx,
    pub y: Fx,
    pub vx: Fx,
    pub vy: Fx,
    pub hp: i16,
    pub max_hp: i16,
    /// Frames since spawn.
    pub age: u16,
    /// Frames left in the current leg, plan step or attack.
    pub timer: u16,
    /// Waypoint, plan step, shot or script entry reached.
    pub step: u16,
    /// Frames left of the white flash after a hit.
    pub flash: u8,
    /// Per kind: the crab's place in its row, the saucer's hover column, the boss's phase.
    pub param: i16,
    pub scratch: Option<Scratch>,
}

impl Enemy {
    /// A new enemy at (`x`, `y`) pixels, at rest, at full health, without scratch.
    pub fn new(kind: Kind, x: i32, y: i32, param: i16) -> Enemy {
        Enemy {
            kind,
            x: Fx::new(x),
            y: Fx::new(y),
            vx: Fx::new(0),
            vy: Fx::new(0),
            hp: kind.health(),
            max_hp: kind.health(),
            age: 0,
            timer: 0,
            step: 0,
            flash: 0,
            param,
            scratch: None,
        }
    }

    /// Gives the scratch back to `heap`; for an enemy removed from play, and by the AI when it dies or leaves.
    pub fn discard(&mut self, heap: &mut Heap<'static>) {
        if let Some(scratch) = self.scratch.take() {
            scratch.free(heap);
        }
    }
}
