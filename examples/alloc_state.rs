//! The allocator-state fixture: an `IndexPool` of bullets and a 4 KB tree-heap in IWRAM, taken through a known
//! sequence of allocations and frees, then shown under the overlay, every frame calling
//! [`alloc_state_checkpoint`] (where gdb breaks) and [`alloc_state_checked`] (after the crate's own checker ran).
//!
//! `cargo build --release --example alloc_state`. The gdb test (`tools/harness/tests/gdb.rs`) and the overlay
//! screenshot test run it; `make debug ELF=target/thumbv4t-none-eabi/release/examples/alloc_state` steps it.
//! [`ALLOC_STATE_REPORT`] holds what the crate's API says about both allocators, for the tests to compare with
//! what gdb decodes from memory.
#![no_std]
#![no_main]

use core::fmt::Write;
use gba::prelude::*;
use stackshot::overlay::{self, PoolGauge};
use stackshot::{text, trace};
use stackshot_alloc::heap::{Heap, Stats};
use stackshot_alloc::iwram::{heap_alloc, heap_free};
use stackshot_alloc::pool::{Handle, IndexPool};
use stackshot_platform::cycles::Stopwatch;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Bullet {
    pub x: i16,
    pub y: i16,
    pub dx: i8,
    pub dy: i8,
}

const SLOTS: usize = 16;
const REGION_BYTES: usize = 4096;

#[unsafe(no_mangle)]
static mut BULLETS: IndexPool<Bullet, u8, SLOTS> = IndexPool::with_id(1);

#[repr(C, align(8))]
pub struct Region([u8; REGION_BYTES]);
#[unsafe(no_mangle)]
static mut AI_REGION: Region = Region([0; REGION_BYTES]);
#[unsafe(no_mangle)]
static mut AI_HEAP: Option<Heap<'static>> = None;

/// A live handle (the bullet allocated last), one whose slot was freed, and one whose slot was freed and
/// allocated again (stale), for gdb's pretty-printer.
#[unsafe(no_mangle)]
static mut LIVE_BULLET: Handle<Bullet, u8> = Handle::from_raw(0, 0, 1);
#[unsafe(no_mangle)]
static mut FREED_BULLET: Handle<Bullet, u8> = Handle::from_raw(0, 0, 1);
#[unsafe(no_mangle)]
static mut STALE_BULLET: Handle<Bullet, u8> = Handle::from_raw(0, 0, 1);

/// What the crate's own API says, refreshed every frame before the checkpoint. `#[repr(C)]`: the harness reads
/// it from memory (`harness::alloc_state::Report`).
#[repr(C)]
pub struct Report {
    /// `Heap::stats()`: capacity, free, used, largest free (bytes), free runs, peak (bytes), failed, bad frees.
    heap_stats: [u32; 8],
    /// `Heap::check()` after the checkpoint: `ok` or `Kind at block N`, NUL-terminated.
    check: [u8; 40],
    pool_len: u32,
    /// The free slots in the order `alloc` would hand them out (`SLOTS - pool_len` entries).
    free_stack: [u8; SLOTS],
    /// The live slots as `iter()` yields them, and their values.
    live: [u8; SLOTS],
    live_values: [Bullet; SLOTS],
    /// The cycles the last frame used, as the overlay shows them.
    last_frame_cycles: u32,
    /// `IndexPool::peak()`.
    pool_peak: u32,
    /// The generation of each live slot (`live`'s order), from the handles `iter()` yields.
    live_generations: [u8; SLOTS],
    /// `Heap::bin_heads()`: the first run of each bin.
    heap_bins: [u16; 32],
}

#[unsafe(no_mangle)]
static mut ALLOC_STATE_REPORT: Report = Report {
    heap_stats: [0; 8],
    check: [0; 40],
    pool_len: 0,
    free_stack: [0; SLOTS],
    live: [0; SLOTS],
    live_values: [Bullet { x: 0, y: 0, dx: 0, dy: 0 }; SLOTS],
    last_frame_cycles: 0,
    pool_peak: 0,
    live_generations: [0; SLOTS],
    heap_bins: [0; 32],
};

/// gdb breaks here with both allocators in their known state.
#[inline(never)]
#[unsafe(no_mangle)]
pub fn alloc_state_checkpoint(bullet: Handle<Bullet, u8>) {
    core::hint::black_box(bullet);
}

/// Reached after `Heap::check()` ran on the memory as gdb left it (see `Report::check`).
#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn alloc_state_checked() {
    core::hint::black_box(());
}

fn alloc(pool: &mut IndexPool<Bullet, u8, SLOTS>, k: i16) -> Handle<Bullet, u8> {
    let h = pool.alloc(Bullet { x: 20 + 30 * k, y: 100 - 8 * k, dx: 0, dy: -2 });
    trace::pool_alloc(pool.id(), &h);
    h.expect("the pool has room")
}

fn free(pool: &mut IndexPool<Bullet, u8, SLOTS>, h: Handle<Bullet, u8>) {
    let r = pool.free(h);
    trace::pool_free(pool.id(), usize::from(h.index()), r.map(|_| ()));
}

/// Writes what the pool's and heap's APIs say into the report.
fn report(report: &mut Report, pool: &mut IndexPool<Bullet, u8, SLOTS>, heap: &Heap) {
    let s: Stats = heap.stats();
    report.heap_stats = [
        s.capacity,
        s.free_bytes,
        s.used_bytes,
        s.largest_free,
        s.free_runs,
        s.peak_used,
        s.failed_requests,
        s.bad_frees,
    ];
    report.heap_bins = heap.bin_heads();
    report.pool_len = pool.len() as u32;
    for (k, (h, v)) in pool.iter().enumerate() {
        report.live[k] = h.index();
        report.live_generations[k] = h.generation();
        report.live_values[k] = *v;
    }
    for (k, slot) in pool.free_slots().enumerate() {
        report.free_stack[k] = slot;
    }
    report.pool_peak = pool.peak() as u32;
}

/// A `core::fmt::Write` into a fixed buffer, NUL-terminated.
struct Buf<'a>(&'a mut [u8], usize);

impl Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.1 + 1 < self.0.len() {
                self.0[self.1] = b;
                self.1 += 1;
            }
        }
        self.0[self.1] = 0;
        Ok(())
    }
}

#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    stackshot_platform::stack::init();
    // SAFETY: `main` is the only code touching these statics (no interrupt handler does), and it takes each
    // reference once, here.
    let (pool, slot, report_to) =
        unsafe { (&mut *(&raw mut BULLETS), &mut *(&raw mut AI_HEAP), &mut *(&raw mut ALLOC_STATE_REPORT)) };
    let region = (&raw mut AI_REGION).cast::<u8>();
    // SAFETY: the region is a static only this heap uses.
    let heap = slot.insert(unsafe { Heap::from_raw(region, REGION_BYTES) }.expect("4 KB is a valid heap"));

    let handles: [Handle<Bullet, u8>; 6] = core::array::from_fn(|k| alloc(pool, k as i16));
    free(pool, handles[4]);
    free(pool, handles[1]);
    free(pool, handles[4]);
    let bullet = alloc(pool, 6);
    // SAFETY: as above; plain writes of `Copy` handles.
    unsafe {
        LIVE_BULLET = bullet;
        FREED_BULLET = handles[4];
        // Slot 1 was freed and `bullet` took it.
        STALE_BULLET = handles[1];
    }

    let mut heap_op = |size: usize, align: usize| {
        let r = heap_alloc(heap, size, align);
        trace::heap_alloc(size, align, r);
        r
    };
    let ptrs =
        [(24, 8), (320, 4), (8, 8), (400, 8), (200, 64), (16, 8), (48, 8), (5000, 8)].map(|(s, a)| heap_op(s, a));
    for k in [1, 3, 1] {
        if let Ok(p) = ptrs[k] {
            let r = heap_free(heap, p);
            trace::heap_free(p, r);
        }
    }

    DISPCNT.write(DisplayControl::new());
    text::init();
    text::draw(1, 1, "ALLOC STATE FIXTURE");
    BACKDROP_COLOR.write(Color::from_rgb(1, 2, 6));
    DISPSTAT.write(DisplayStatus::new().with_irq_vblank(true));
    IE.write(IrqBits::VBLANK);
    IME.write(true);
    overlay::toggle();

    let mut last_frame_cycles = 0;
    loop {
        let watch = Stopwatch::start();
        report(report_to, pool, heap);
        report_to.last_frame_cycles = last_frame_cycles;
        alloc_state_checkpoint(bullet);
        let mut buf = Buf(&mut report_to.check, 0);
        let _ = match heap.check() {
            Ok(()) => write!(buf, "ok"),
            Err(e) => write!(buf, "{:?} at block {}", e.kind, e.block),
        };
        alloc_state_checked();
        overlay::poll(KEYINPUT.read());
        overlay::draw(heap, &[PoolGauge::new("BULLETS", pool.len(), SLOTS)], last_frame_cycles);
        last_frame_cycles = watch.elapsed();
        VBlankIntrWait();
    }
}
