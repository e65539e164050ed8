//! The game's memory, all of it in IWRAM: one byte-index stack pool per kind of object (each a static with its
//! own pool id, so a handle cannot be freed into the wrong pool; all zeros when empty, so in `.bss`, with no image
//! in ROM and no copy at boot) and the 4 KB tree-heap for enemy AI scratch,
//! a static `LockedHeap<IrqLock>` so that each scratch's owner (`enemy::Scratch`, the crate's `HeapBox`)
//! reaches it to free itself when dropped; its allocate and free are the crate's ARM code in IWRAM, called with
//! interrupts masked. Also what the game promises about them: peaks, the leak check at every game over, and in
//! debug builds the allocators' invariants checked every frame.

use super::bullets::Bullet;
use super::enemy::{AiHeap, Enemy};
use super::particles::Particle;
use super::pickups::Pickup;
use super::sprites::Shadow;
use super::telemetry::Telemetry;
use crate::crash;
use gba::gba_cell::GbaCell;
use stackshot_alloc::heap::{Heap, LockedHeap, Stats};
use stackshot_alloc::pool::IndexPool;

pub const PLAYER_BULLETS: usize = 48;
pub const ENEMY_BULLETS: usize = 192;
pub const PARTICLES: usize = 96;
pub const ENEMIES: usize = 32;
pub const PICKUPS: usize = 8;
pub const HEAP_BYTES: usize = 4096;

/// The bullet pools' tags: a player bullet's handle is not an enemy bullet's (a compile error), though both
/// pools hold `Bullet`s.
pub struct PlayerShots;
pub struct EnemyShots;

/// Pool ids, which name the pools in the allocation trace, gdb and the overlay; distinct, so that even a handle
/// forged across types is refused by every other pool (`PoolError::ForeignHandle`). Each is its pool type's
/// `ID`, so that the empty pool is all zeros.
const PLAYER_BULLET_ID: u8 = 1;
const ENEMY_BULLET_ID: u8 = 2;
const PARTICLE_ID: u8 = 3;
const ENEMY_ID: u8 = 4;
const PICKUP_ID: u8 = 5;

pub type PlayerBullets = IndexPool<Bullet, u8, PLAYER_BULLETS, PlayerShots, PLAYER_BULLET_ID>;
pub type EnemyBullets = IndexPool<Bullet, u8, ENEMY_BULLETS, EnemyShots, ENEMY_BULLET_ID>;
pub type Particles = IndexPool<Particle, u8, PARTICLES, (), PARTICLE_ID>;
pub type Enemies = IndexPool<Enemy, u8, ENEMIES, (), ENEMY_ID>;
pub type Pickups = IndexPool<Pickup, u8, PICKUPS, (), PICKUP_ID>;

// The pools are all zeros when empty, so they go to `.bss.iwram.*` (linker.ld), which the start-up code zeroes:
// no image in ROM and no copy at boot. A section named `.bss.*` refuses a value that is not all zeros (the
// assembler's "non-zero initializer in BSS section"), so a pool that is not cannot end up here.
#[unsafe(link_section = ".bss.iwram.player_bullets")]
static mut PLAYER_BULLET_POOL: PlayerBullets = IndexPool::new();
#[unsafe(link_section = ".bss.iwram.enemy_bullets")]
static mut ENEMY_BULLET_POOL: EnemyBullets = IndexPool::new();
#[unsafe(link_section = ".bss.iwram.particles")]
static mut PARTICLE_POOL: Particles = IndexPool::new();
#[unsafe(link_section = ".bss.iwram.enemies")]
static mut ENEMY_POOL: Enemies = IndexPool::new();
#[unsafe(link_section = ".bss.iwram.pickups")]
static mut PICKUP_POOL: Pickups = IndexPool::new();
#[unsafe(link_section = ".iwram.shadow_oam")]
static mut SHADOW: Shadow = Shadow::new();

/// The AI heap's bytes, 8-aligned like the heap's blocks.
#[repr(C, align(8))]
pub struct Region(pub [u8; HEAP_BYTES]);

/// All zeros, so it lands in `.bss`, which linker.ld places in IWRAM: no 4 KB image in ROM to copy at boot.
/// Not `no_mangle`: the allocator fixture (fixtures/alloc_state.rs), which links this library, has its own.
pub static mut AI_REGION: Region = Region([0; HEAP_BYTES]);

/// The heap over `AI_REGION`, installed by `Memory::take`; a static, so that the scratch owners it hands out
/// can free themselves wherever they are dropped. Not named `AI_HEAP`: the allocator fixture, which links this
/// library, has a static of that name, which gdb (`heap AI_HEAP`, tools/harness/tests/alloc_gdb.rs) must find alone.
static SCRATCH_HEAP: AiHeap = LockedHeap::new();

static TAKEN: GbaCell<bool> = GbaCell::new(false);

/// Exclusive access to every pool, the sprite table and the AI heap.
pub struct Memory {
    pub player_bullets: &'static mut PlayerBullets,
    pub enemy_bullets: &'static mut EnemyBullets,
    pub particles: &'static mut Particles,
    pub enemies: &'static mut Enemies,
    pub pickups: &'static mut Pickups,
    pub shadow: &'static mut Shadow,
    pub heap: &'static AiHeap,
    /// Heap requests refused, after which an enemy took its simpler behaviour.
    pub fallbacks: u32,
}

/// Whether the heap, with every block freed, is one free run again and has never refused a free (an owner's drop
/// cannot report one: the heap only counts it, from boot on).
pub fn heap_left_clean(heap: &Stats) -> bool {
    heap.used_bytes == 0 && heap.free_runs == 1 && heap.bad_frees == 0
}

impl Memory {
    /// The game's memory. Panics if called twice: there is one of each static.
    #[allow(
        clippy::deref_addrof,
        reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
    )]
    pub fn take() -> Memory {
        assert!(!TAKEN.read(), "the game's memory is taken once");
        TAKEN.write(true);
        // SAFETY: the guard above makes this the only place these statics are borrowed, once, for the rest of
        // the program; nothing else names them (interrupt handlers included). The region is HEAP_BYTES long,
        // 8-aligned, and from now on accessed only through the heap and the blocks it hands out.
        unsafe {
            let region = &raw mut AI_REGION;
            let heap = Heap::from_raw(region.cast(), HEAP_BYTES).expect("4 KB is a valid heap region");
            assert!(SCRATCH_HEAP.init(heap).is_ok(), "the AI heap is installed once");
            Memory {
                player_bullets: &mut *(&raw mut PLAYER_BULLET_POOL),
                enemy_bullets: &mut *(&raw mut ENEMY_BULLET_POOL),
                particles: &mut *(&raw mut PARTICLE_POOL),
                enemies: &mut *(&raw mut ENEMY_POOL),
                pickups: &mut *(&raw mut PICKUP_POOL),
                shadow: &mut *(&raw mut SHADOW),
                heap: &SCRATCH_HEAP,
                fallbacks: 0,
            }
        }
    }

    /// Puts every pool, the sprite slots and the heap on the crash screen (`src/crash.rs`). Call once, on the
    /// `Memory` that `run` keeps for good.
    pub fn watch(&self) {
        // SAFETY: the pools, the sprite table and the heap (inside `SCRATCH_HEAP`) are statics. The crash screen
        // only reads them, the heap without its lock.
        unsafe {
            crash::watch_pool("SHOTS", core::ptr::from_ref::<PlayerBullets>(self.player_bullets));
            crash::watch_pool("BULLETS", core::ptr::from_ref::<EnemyBullets>(self.enemy_bullets));
            crash::watch_pool("SPARKS", core::ptr::from_ref::<Particles>(self.particles));
            crash::watch_pool("ENEMIES", core::ptr::from_ref::<Enemies>(self.enemies));
            crash::watch_pool("ITEMS", core::ptr::from_ref::<Pickups>(self.pickups));
            crash::watch_pool("SPRITES", core::ptr::from_ref::<Shadow>(self.shadow));
            self.heap.with(|heap| crash::watch_heap(heap)).expect("the AI heap is installed and free");
        }
    }

    /// Whether every pool is empty, every sprite slot is back and the heap is left clean
    /// ([`heap_left_clean`]): what a game over must leave behind.
    pub fn is_empty(&self) -> bool {
        self.player_bullets.is_empty()
            && self.enemy_bullets.is_empty()
            && self.particles.is_empty()
            && self.enemies.is_empty()
            && self.pickups.is_empty()
            && self.shadow.slots_free() == super::sprites::SLOTS
            && heap_left_clean(&self.stats())
    }

    /// Frees everything: enemies (each dropped enemy frees its scratch), bullets, particles, pick-ups, and the
    /// sprite slots.
    pub fn clear(&mut self) {
        self.enemies.retain(|_| false);
        self.player_bullets.retain(|_| false);
        self.enemy_bullets.retain(|_| false);
        self.particles.retain(|_| false);
        self.pickups.retain(|_| false);
        self.shadow.begin();
    }

    /// Copies the current and peak use of each pool and of the heap into `stats`.
    pub fn record(&self, stats: &mut Telemetry) {
        stats.player_bullets.set(self.player_bullets.len(), self.player_bullets.peak());
        stats.enemy_bullets.set(self.enemy_bullets.len(), self.enemy_bullets.peak());
        stats.particles.set(self.particles.len(), self.particles.peak());
        stats.enemies.set(self.enemies.len(), self.enemies.peak());
        stats.pickups.set(self.pickups.len(), self.pickups.peak());
        // The sprite-slot stack keeps no peak of its own: sampled once a frame, after the table is built.
        let slots = self.shadow.slots_used();
        stats.sprite_slots.set(slots, slots);
        let heap = self.stats();
        stats.heap_used = heap.used_bytes;
        stats.heap_peak = heap.peak_used;
        stats.heap_fallbacks = self.fallbacks;
    }

    /// Every allocator's invariants, checked every frame of a debug build: a broken one panics with its name.
    #[cfg(debug_assertions)]
    pub fn check(&self) {
        let pools = [
            ("player bullets", self.player_bullets.check()),
            ("enemy bullets", self.enemy_bullets.check()),
            ("particles", self.particles.check()),
            ("enemies", self.enemies.check()),
            ("pickups", self.pickups.check()),
            ("sprite slots", self.shadow.check()),
        ];
        for (name, result) in pools {
            if let Err(e) = result {
                panic!("pool {name}: invariant broken: {e:?}");
            }
        }
        if let Err(e) = self.heap.with(Heap::check).expect("the AI heap is installed and free") {
            panic!("AI heap: invariant broken: {e:?}");
        }
    }

    /// The AI heap's statistics.
    fn stats(&self) -> Stats {
        self.heap.with(Heap::stats).expect("the AI heap is installed and free")
    }
}
