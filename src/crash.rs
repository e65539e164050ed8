//! The crash screen: what a panic leaves on the screen, for a player to photograph and report. The panic's
//! message and file:line, then each watched pool's use, the heap's use, its largest free run and its failed
//! requests, and the stack's high-water mark and guard:
//!
//! ```text
//! STACKSHOT HAS CRASHED
//!
//! AI HEAP: INVARIANT BROKEN: ...      <- the message, wrapped between words (rows 2-6)
//! AT SRC/GAME/MEMORY.RS:160           <- file:line (rows 7-8; a long path keeps its end)
//!
//! SHOTS   3/48   BULLETS 8/192        <- every watched pool: in use / capacity, two a row
//! HEAP 88/3968 B FREE RUNS 1          <- used / capacity, free runs
//! LARGEST FREE 3768 B FAILED 0        <- (a broken heap: the invariant and block, then the map's figures)
//! STACK 2292/3032 B GUARD OK          <- high-water mark / space, and the guard's canary
//!
//! PLEASE REPORT THIS SCREEN
//! ```
//!
//! It is drawn from any state, including a panic inside an allocator call, so it reads and never waits:
//! - it allocates nothing (this crate has no allocator) and runs from ROM, which no stray write can damage: the
//!   font is loaded anew and the map cleared a row at a time without the IWRAM `fill_words`. The one routine in
//!   IWRAM it calls is the stack's high-water scan, at the bottom of IWRAM, the last place an overflowing stack
//!   reaches;
//! - it reaches the allocators through a registry that `watch_pool`/`watch_heap` fill at start-up and that
//!   carries a checksum: a registry that a stray write or a stack overflow damaged is not followed;
//! - a pool's use comes from its own counter; the heap is read through its `Heap` directly, never through a
//!   `LockedHeap`'s lock (which a panic inside the lock leaves taken). Its counters are read as they stand;
//!   [`Heap::check`], whose walks are bounded, decides whether the free tree may be followed: if it holds,
//!   [`Heap::stats`] gives the largest free run and the failed requests; if not, the screen names the broken
//!   invariant and counts the used bytes and largest free run from the block map (a bounded walk), and the
//!   failed requests, which only `stats` gives, are not shown.

use crate::layout::{TEXT_CHARBLOCK, TEXT_SCREENBLOCK};
use crate::text::{self, Ink, Number};
use core::fmt::{self, Write};
use core::panic::PanicInfo;
use gba::prelude::*;
use stackshot_alloc::heap::{Block, Heap};
use stackshot_alloc::pool::{Index, IndexPool};
use stackshot_platform::stack;

/// Pools the registry holds; later ones are not shown.
pub const MAX_POOLS: usize = 6;
const COLUMNS: u16 = 30;

/// An allocator whose use the crash screen can show: (in use, capacity), from its own counters.
pub trait Gauge {
    fn gauge(&self) -> (usize, usize);
}

impl<T, I: Index, const N: usize, P, const ID: u8> Gauge for IndexPool<T, I, N, P, ID> {
    fn gauge(&self) -> (usize, usize) {
        (self.len(), N)
    }
}

/// One watched pool: its name, where it is, and how to read it. Four words, no padding.
#[repr(C)]
#[derive(Clone, Copy)]
struct Watched {
    name: &'static str,
    object: *const (),
    read: unsafe fn(*const ()) -> (usize, usize),
}

/// Every field a word or two, so the checksum can read it as words.
#[repr(C)]
struct Registry {
    pools: [Watched; MAX_POOLS],
    pool_count: usize,
    heap: *const Heap<'static>,
    /// Over every word above.
    sum: u32,
}

const REGISTRY_WORDS: usize = core::mem::offset_of!(Registry, sum) / 4;
const _: () =
    assert!(core::mem::size_of::<Watched>() == 16 && core::mem::size_of::<Registry>() == 4 * (REGISTRY_WORDS + 1));

/// # Safety
/// `object` points to a live `G`.
unsafe fn read_gauge<G: Gauge>(object: *const ()) -> (usize, usize) {
    // SAFETY: the caller's promise; `watch_pool` pairs this function with a pointer to a `G`.
    unsafe { (*object.cast::<G>()).gauge() }
}

/// No pool: what an empty slot holds.
fn no_gauge(_: *const ()) -> (usize, usize) {
    (0, 0)
}

const EMPTY: Watched = Watched { name: "", object: core::ptr::null(), read: no_gauge };

// Written only by `watch_pool`/`watch_heap` from the main program (never from an interrupt handler), read by the
// panic handler after checking the sum.
static mut REGISTRY: Registry = Registry { pools: [EMPTY; MAX_POOLS], pool_count: 0, heap: core::ptr::null(), sum: 0 };

/// The registry's words, for the checksum.
fn registry_sum() -> u32 {
    // SAFETY: Registry is repr(C) of word-sized fields (checked above), so its first REGISTRY_WORDS words are
    // initialised u32s; the read is of the static itself, which nothing writes meanwhile (single core).
    let words = unsafe { core::slice::from_raw_parts((&raw const REGISTRY).cast::<u32>(), REGISTRY_WORDS) };
    words.iter().fold(0x5EED_C0DE, |sum, &w| sum.rotate_left(5) ^ w)
}

/// Adds a pool to the crash screen under `name` (at most [`MAX_POOLS`]; later ones are left out).
///
/// # Safety
/// `pool` must stay where it is and alive for the rest of the program: a static, or a value owned by a `main`
/// that never returns and does not move it. The crash screen reads it from the panic handler, possibly while
/// code up the stack was changing it (it only reads counters).
#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
pub unsafe fn watch_pool<G: Gauge>(name: &'static str, pool: *const G) {
    // SAFETY: see the static; the main program is the only writer.
    let registry = unsafe { &mut *(&raw mut REGISTRY) };
    if registry.pool_count < MAX_POOLS {
        registry.pools[registry.pool_count] = Watched { name, object: pool.cast(), read: read_gauge::<G> };
        registry.pool_count += 1;
    }
    registry.sum = registry_sum();
}

/// Puts `heap` on the crash screen (one heap; a later call replaces it).
///
/// # Safety
/// As for [`watch_pool`]. For a `LockedHeap`, pass the heap inside it (`locked.with(|h| watch_heap(h))`):
/// the crash screen then reads it without the lock.
#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
pub unsafe fn watch_heap(heap: *const Heap<'_>) {
    // SAFETY: as in `watch_pool`.
    let registry = unsafe { &mut *(&raw mut REGISTRY) };
    registry.heap = heap.cast();
    registry.sum = registry_sum();
}

/// Text on the screen from a cursor, wrapping at the right edge, up to a last row.
struct Screen {
    x: u16,
    y: u16,
    last_row: u16,
    ink: Ink,
}

impl Screen {
    fn at(x: u16, y: u16, ink: Ink) -> Screen {
        Screen { x, y, last_row: y, ink }
    }

    fn rows(mut self, last_row: u16) -> Screen {
        self.last_row = last_row;
        self
    }

    /// Writes `text`, wrapping before a word that would not fit the row (a longer one is cut where the row
    /// ends); rows past the last are dropped.
    fn put(&mut self, text: impl AsRef<[u8]>) -> &mut Screen {
        for word in text.as_ref().split_inclusive(|&b| b == b' ' || b == b'\n') {
            let visible = word.iter().take_while(|&&b| b != b' ' && b != b'\n').count() as u16;
            if self.x > 0 && self.x + visible > COLUMNS && visible <= COLUMNS {
                self.newline();
            }
            for &byte in word {
                if byte == b'\n' {
                    self.newline();
                    continue;
                }
                if self.x >= COLUMNS {
                    self.newline();
                }
                if (byte != b' ' || self.x > 0) && self.y <= self.last_row {
                    text::draw_in(self.ink, self.x, self.y, [byte]);
                    self.x += 1;
                }
            }
        }
        self
    }

    fn newline(&mut self) {
        self.x = 0;
        self.y += 1;
    }

    fn number(&mut self, n: usize) -> &mut Screen {
        self.put(Number::new(n as u32))
    }
}

impl Write for Screen {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s);
        Ok(())
    }
}

/// Draws the crash screen for `info`. Call from the panic handler with interrupts off; it returns with the
/// screen showing.
pub fn show(info: &PanicInfo) {
    quiet_the_hardware();
    Screen::at(0, 0, Ink::Red).put("STACKSHOT HAS CRASHED");
    let mut message = Screen::at(0, 2, Ink::White).rows(6);
    let _ = write!(message, "{}", info.message());
    if let Some(at) = info.location() {
        location(at.file(), at.line());
    }
    memory(10);
    Screen::at(0, 19, Ink::Cyan).put("PLEASE REPORT THIS SCREEN");
    DISPCNT.write(DisplayControl::new().with_show_bg0(true));
}

/// Everything off but a plain text layer: no DMA, no sound, no effects, the font loaded anew on an empty map.
fn quiet_the_hardware() {
    DISPCNT.write(DisplayControl::new().with_forced_blank(true));
    for dma in [DMA0_CONTROL, DMA1_CONTROL, DMA2_CONTROL, DMA3_CONTROL] {
        // SAFETY: a control word with the enable bit clear stops the channel; it cannot start a transfer.
        unsafe { dma.write(DmaControl::new()) };
    }
    SOUND_ENABLED.write(SoundEnable::new());
    BLDCNT.write(BlendControl::new());
    BG0HOFS.write(0);
    BG0VOFS.write(0);
    BACKDROP_COLOR.write(Color::from_rgb(6, 0, 2));
    text::load_font();
    for row in 0..text::ROWS {
        text::clear_row(row);
    }
    BG0CNT.write(BackgroundControl::new().with_charblock(TEXT_CHARBLOCK).with_screenblock(TEXT_SCREENBLOCK));
}

/// `AT FILE:LINE` on rows 7 and 8; a path too long for them keeps its end.
fn location(file: &str, line: u32) {
    let room = 2 * usize::from(COLUMNS) - "AT ...:".len() - Number::new(line).as_ref().len();
    let mut screen = Screen::at(0, 7, Ink::Gold).rows(8);
    screen.put("AT ");
    if file.len() > room {
        screen.put("...").put(&file.as_bytes()[file.len() - room..]);
    } else {
        screen.put(file);
    }
    screen.put(":").number(line as usize);
}

/// The watched allocators and the stack, from row `y`.
#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
fn memory(mut y: u16) {
    // SAFETY: read only, after the checksum says the registry is as `watch_*` left it; nothing writes it now.
    let registry = unsafe { &*(&raw const REGISTRY) };
    if registry.sum != registry_sum() {
        Screen::at(0, y, Ink::Red).put("ALLOCATORS: REGISTRY DAMAGED");
        y += 1;
    } else {
        for (i, pool) in registry.pools.iter().take(registry.pool_count).enumerate() {
            // SAFETY: the registry is intact, so `read` is `read_gauge::<G>` paired with a pointer to a live `G`
            // (the promise of `watch_pool`).
            let (used, capacity) = unsafe { (pool.read)(pool.object) };
            let x = if i % 2 == 0 { 0 } else { 15 };
            let mut screen = Screen::at(x, y, Ink::White);
            screen.put(pool.name.as_bytes().get(..7).unwrap_or(pool.name.as_bytes()));
            screen.x = x + 8;
            screen.number(used).put("/").number(capacity);
            y += (i % 2) as u16;
        }
        y += (registry.pool_count % 2) as u16;
        if !registry.heap.is_null() {
            // SAFETY: the registry is intact and `watch_heap`'s caller promised the heap stays alive; only
            // `&self` methods are called.
            y = heap(unsafe { &*registry.heap }, y);
        }
    }
    let mut screen = Screen::at(0, y, Ink::White);
    screen.put("STACK ").number(stack::high_water()).put("/").number(stack::space()).put(" B");
    match stack::check() {
        Ok(()) => screen.put(" GUARD OK"),
        Err(_) => screen.put(" OVERFLOWED"),
    };
}

/// Rows about `heap` from row `y`; returns the row after them.
fn heap(heap: &Heap, y: u16) -> u16 {
    let capacity = heap.capacity();
    let mut first = Screen::at(0, y, Ink::White);
    // 512 KB is the most a heap can manage: beyond, its fields are garbage and nothing of it is read.
    if capacity == 0 || capacity > 512 << 10 {
        first.put("HEAP UNREADABLE");
        return y + 1;
    }
    let mut second = Screen::at(0, y + 1, Ink::White);
    match heap.check() {
        Ok(()) => {
            let s = heap.stats();
            first.put("HEAP ").number(s.used_bytes as usize).put("/").number(capacity).put(" B FREE RUNS ");
            first.number(s.free_runs as usize);
            second.put("LARGEST FREE ").number(s.largest_free as usize).put(" B FAILED ");
            second.number(s.failed_requests as usize);
            y + 2
        }
        Err(broken) => {
            let (mut used, mut run, mut largest) = (0, 0, 0);
            for i in 0..(capacity / 8) as u32 {
                if heap.block(i) == Some(Block::Free) {
                    run += 8;
                    largest = largest.max(run);
                } else {
                    used += 8;
                    run = 0;
                }
            }
            first.put("HEAP ").number(used).put("/").number(capacity).put(" B BROKEN:");
            second.ink = Ink::Red;
            let _ = write!(second, "{:?} AT BLOCK {}", broken.kind, broken.block);
            Screen::at(0, y + 2, Ink::White).put("LARGEST FREE ").number(largest).put(" B FAILED ?");
            y + 3
        }
    }
}
