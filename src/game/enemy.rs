//! What an enemy is: its kind, its position and health, and its AI scratch, a block of the 4 KB tree-heap that
//! it alone owns and that goes back to the heap when the enemy is dropped. How each kind moves and fires is the
//! AI's (`ai.rs`); this is the data the pool holds, what collisions, drawing and the bomb read.

use super::fixed::Fx;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use stackshot_alloc::heap::{HeapBox, LockedHeap};
use stackshot_alloc::irq::IrqLock;

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

/// The heap enemies take their scratch from (`memory.rs` has the game's): the tree-heap behind a lock that masks
/// interrupts for each call.
pub type AiHeap = LockedHeap<'static, IrqLock>;

/// An enemy's AI scratch: 16-bit values in a block of the AI heap that this enemy alone owns (the allocator
/// crate's owner, `HeapBox`), given back when the scratch is dropped: with its enemy, when the enemy's pool
/// frees or clears it, or when the AI replaces it. Each allocate and free is reported to `crate::trace`.
/// (`ManuallyDrop` rather than an `Option` to take the owner out on drop: an `Option<Scratch>` then still fits
/// the owner's 12 bytes, where an `Option` inside would cost every enemy 4 more.)
pub struct Scratch(ManuallyDrop<HeapBox<'static, 'static, [i16], IrqLock>>);

impl Scratch {
    /// `len` values from the heap, zeros to start with, or `None` (counted in `fallbacks`) when the heap
    /// cannot serve them.
    pub fn alloc(heap: &'static AiHeap, fallbacks: &mut u32, len: usize) -> Option<Scratch> {
        // Aligned for i16 (2): the heap serves every alignment up to 8 the same way (the game asked for 4 before
        // it had an owner, with the same blocks).
        let result = heap.boxed_slice_zeroed::<i16>(len);
        let block = result.as_ref().map(|values| NonNull::from(&values[..]).cast()).map_err(|e| *e);
        crate::trace::heap_alloc(len * 2, align_of::<i16>(), block);
        match result {
            Ok(values) => Some(Scratch(ManuallyDrop::new(values))),
            Err(_) => {
                *fallbacks += 1;
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Value `i`; 0 past the end.
    pub fn get(&self, i: usize) -> i16 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// Sets value `i`; nothing past the end.
    pub fn set(&mut self, i: usize, value: i16) {
        if let Some(v) = self.0.get_mut(i) {
            *v = value;
        }
    }
}

impl Drop for Scratch {
    /// Frees the block through its owner, and traces the free with the heap's answer.
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and nothing uses the owner after it is taken here.
        let values = unsafe { ManuallyDrop::take(&mut self.0) };
        let block = NonNull::from(&values[..]).cast();
        let result = HeapBox::free(values);
        crate::trace::heap_free(block, result);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use stackshot_alloc::heap::Heap;
    use stackshot_alloc::pool::IndexPool;

    #[repr(C, align(8))]
    struct Region([u8; 512]);
    static mut REGION: Region = Region([0; 512]);
    static HEAP: AiHeap = LockedHeap::new();

    fn used() -> u32 {
        HEAP.with(|h| h.stats().used_bytes).unwrap()
    }

    /// An enemy's pool hands a freed enemy back with its scratch; dropping it gives the scratch back to the
    /// heap, and so does clearing the pool.
    #[test_case]
    fn an_enemy_gives_its_scratch_back_when_dropped() {
        // SAFETY: the region is this heap's alone for the rest of the program.
        let heap = unsafe { Heap::from_raw((&raw mut REGION).cast(), 512) }.unwrap();
        assert!(HEAP.init(heap).is_ok());
        let mut pool: IndexPool<Enemy, u8, 4> = IndexPool::new();
        let mut fallbacks = 0;
        let mut spawn = |pool: &mut IndexPool<Enemy, u8, 4>, len| {
            let mut enemy = Enemy::new(Kind::Dart, 0, 0, 0);
            enemy.scratch = Scratch::alloc(&HEAP, &mut fallbacks, len);
            pool.alloc(enemy).ok().unwrap()
        };
        let first = spawn(&mut pool, 12);
        spawn(&mut pool, 6);
        assert_eq!(used(), 24 + 16, "12 and 6 values, in whole 8-byte blocks");
        let freed = pool.free(first).ok().unwrap();
        assert_eq!(freed.scratch.as_ref().map(Scratch::len), Some(12), "the pool hands the enemy back");
        assert_eq!(used(), 40, "its scratch is still its own");
        drop(freed);
        assert_eq!(used(), 16);
        spawn(&mut pool, 4);
        pool.retain(|_| false);
        assert_eq!(used(), 0, "clearing the pool left scratch behind");
        assert_eq!(fallbacks, 0);
    }
}
