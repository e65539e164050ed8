//! `IrqLock` and what it shares with interrupt handlers. One heap shared by the main loop and the VBlank interrupt
//! handler through `LockedHeap<IrqLock>`: both allocate and free, filling each block with a pattern of their own
//! and checking it before freeing; the heap's checker runs after every frame. Without the critical section the
//! handler lands inside the main loop's heap calls thousands of times, and the heap (or the patterns) break. A
//! pool shared the same way through an `IrqMutex`, what that lock costs, and locks released out of order.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use core::alloc::{GlobalAlloc, Layout};
use gba::interrupts::IrqBits;
use gba::mmio::{DISPSTAT, IE, IF, IME};
use gba::video::DisplayStatus;
use stackshot_alloc::heap::{Heap, LockedHeap};
use stackshot_alloc::irq::{IrqLock, IrqMutex};
use stackshot_alloc::pool::{Handle, IndexPool, PoolError};
use stackshot_platform::cycles::{Op, OpTimer};
use stackshot_platform::info;

static HEAP: LockedHeap<'static, IrqLock> = LockedHeap::new();

#[repr(C, align(8))]
struct Region([u8; 4096]);
static mut REGION: Region = Region([0; 4096]);

/// Blocks one side holds: address, size and the pattern byte written into every byte.
#[derive(Clone, Copy)]
struct Held {
    ptr: *mut u8,
    size: usize,
    tag: u8,
}

const NONE: Held = Held { ptr: core::ptr::null_mut(), size: 0, tag: 0 };

/// The handler's own blocks and counters; only the handler touches them (interrupts do not nest here).
static mut IRQ_HELD: [Held; 8] = [NONE; 8];
static mut IRQ_STEP: u32 = 0;
/// Frames seen and bad patterns found by the handler; the main loop reads them with volatile reads.
static mut FRAMES: u32 = 0;
static mut IRQ_BAD: u32 = 0;

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size, 4).unwrap()
}

/// Frees `h` after checking its pattern; false if the pattern was overwritten.
fn release(h: Held) -> bool {
    let mut intact = true;
    for i in 0..h.size {
        // SAFETY: h.ptr is a live block of h.size bytes that this side allocated and owns.
        intact &= unsafe { h.ptr.add(i).read() } == h.tag;
    }
    // SAFETY: allocated from HEAP with this layout, freed once.
    unsafe { HEAP.dealloc(h.ptr, layout(h.size)) };
    intact
}

/// Allocates `size` bytes filled with `tag`; None when the heap is full.
fn take(size: usize, tag: u8) -> Option<Held> {
    // SAFETY: a non-zero size.
    let ptr = unsafe { HEAP.alloc(layout(size)) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a fresh block of `size` bytes.
    unsafe { ptr.write_bytes(tag, size) };
    Some(Held { ptr, size, tag })
}

extern "C" fn on_vblank(_: IrqBits) {
    // SAFETY: only this handler touches IRQ_HELD and IRQ_STEP, and it does not nest; FRAMES and IRQ_BAD are
    // written only here and read by the main loop with volatile reads of whole words.
    unsafe {
        let step = IRQ_STEP;
        IRQ_STEP = step.wrapping_add(1);
        // Two slots change each frame: free what is there, then allocate 8..64 bytes tagged 0xA0 + slot.
        for k in 0..2 {
            let slot = (step as usize * 2 + k) % 8;
            let held = IRQ_HELD[slot];
            if !held.ptr.is_null() && !release(held) {
                IRQ_BAD += 1;
            }
            let size = 8 + (step as usize * 7 + k * 13) % 57;
            IRQ_HELD[slot] = take(size, 0xA0 + slot as u8).unwrap_or(NONE);
        }
        FRAMES += 1;
    }
}

fn frames() -> u32 {
    // SAFETY: a word read of a counter the handler writes.
    unsafe { (&raw const FRAMES).read_volatile() }
}

#[test_case]
fn main_loop_and_vblank_handler_share_the_heap() {
    // SAFETY: the region is used by this heap only, for the rest of the program.
    let heap = unsafe { Heap::from_raw((&raw mut REGION).cast(), 4096) }.unwrap();
    assert!(HEAP.init(heap).is_ok());
    gba::RUST_IRQ_HANDLER.write(Some(on_vblank));
    DISPSTAT.write(DisplayStatus::new().with_irq_vblank(true));
    IE.write(IrqBits::VBLANK);
    IME.write(true);

    const FRAMES_TO_RUN: u32 = 2_000;
    let mut held = [NONE; 24];
    let mut step = 0usize;
    let mut ops = 0u32;
    let mut last = frames();
    let mut checks = 0u32;
    while frames() < FRAMES_TO_RUN {
        let slot = step % held.len();
        if !held[slot].ptr.is_null() {
            assert!(release(held[slot]), "main loop: block {slot} overwritten at frame {}", frames());
        }
        let size = 1 + (step * 37) % 120;
        held[slot] = take(size, slot as u8).unwrap_or(NONE);
        step += 1;
        ops += 2;
        let now = frames();
        if now != last {
            last = now;
            checks += 1;
            let check = HEAP.with(|h| h.check()).expect("the main loop holds no lock here");
            assert!(check.is_ok(), "frame {now}: {check:?}");
        }
    }
    IME.write(false);
    // SAFETY: interrupts are off; the handler no longer runs.
    let irq_bad = unsafe { (&raw const IRQ_BAD).read_volatile() };
    assert_eq!(irq_bad, 0, "the handler found its blocks overwritten");
    for h in held.iter().filter(|h| !h.ptr.is_null()) {
        assert!(release(*h));
    }
    // SAFETY: interrupts are off, so the handler's blocks are ours to free.
    for h in unsafe { IRQ_HELD }.iter().filter(|h| !h.ptr.is_null()) {
        assert!(release(*h));
    }
    let (stats, check) = HEAP.with(|h| (h.stats(), h.check())).unwrap();
    info!("{FRAMES_TO_RUN} frames: {ops} main-loop operations, {checks} checks, {} bad frees", stats.bad_frees);
    assert_eq!(check, Ok(()));
    assert_eq!((stats.used_bytes, stats.free_runs, stats.bad_frees), (0, 1, 0));
    assert!(checks >= FRAMES_TO_RUN - 1);
}

/// A sound channel: frames left to play.
struct Channel {
    left: u8,
}

/// The tag of the channels' pool.
struct Sfx;

type Channels = IndexPool<Channel, u8, 8, Sfx>;

/// Channels the main loop starts (and sometimes stops early) and the VBlank handler plays and frees when done.
static SOUND: IrqMutex<Channels> = IrqMutex::new(IndexPool::new());
/// Channels the handler freed; written only by the handler, read by the main loop with interrupts off.
static mut HANDLER_FREED: u32 = 0;

extern "C" fn play_channels(_: IrqBits) {
    let mut sound = SOUND.lock();
    let before = sound.len();
    sound.retain(|ch| {
        ch.left -= 1;
        ch.left > 0
    });
    let freed = (before - sound.len()) as u32;
    // SAFETY: only this handler writes the counter, and it does not nest.
    unsafe { HANDLER_FREED += freed };
}

/// The pool a sound system shares with its interrupt handler, as the crate README shows it: the main loop starts
/// channels and stops some early through handles it kept, which the handler may have freed already (refused:
/// `Stale` when the slot holds a newer channel, `DoubleFree` while it is free); the handler plays them and frees
/// the ended ones. The handler is held off while the main loop's guard lives (counted: VBlank pending inside the
/// guard), and every channel is accounted for.
#[test_case]
fn a_pool_shared_with_the_vblank_handler_through_an_irq_mutex() {
    IME.write(false);
    gba::RUST_IRQ_HANDLER.write(Some(play_channels));
    DISPSTAT.write(DisplayStatus::new().with_irq_vblank(true));
    IE.write(IrqBits::VBLANK);
    IF.write(IrqBits::VBLANK);
    IME.write(true);

    const FRAMES_TO_RUN: u32 = 300;
    let start = gba::mmio::VCOUNT.read();
    let mut frames = 0u32;
    let mut last_line = start;
    let mut kept: [Option<Handle<Channel, u8, Sfx>>; 16] = [None; 16];
    let (mut started, mut full, mut stopped, mut stale, mut held_off) = (0u32, 0u32, 0u32, 0u32, 0u32);
    let mut step = 0usize;
    while frames < FRAMES_TO_RUN {
        {
            let mut sound = SOUND.lock();
            match sound.alloc(Channel { left: 1 + (step % 5) as u8 }) {
                Ok(h) => {
                    started += 1;
                    kept[step % kept.len()] = Some(h);
                }
                Err(_) => full += 1,
            }
            if step.is_multiple_of(50)
                && let Some(h) = kept[(step + 7) % kept.len()].take()
            {
                match sound.free(h) {
                    Ok(_) => stopped += 1,
                    Err(PoolError::Stale | PoolError::DoubleFree) => stale += 1,
                    Err(e) => panic!("stopping a kept channel: {e:?}"),
                }
            }
            if IF.read().vblank() {
                held_off += 1;
            }
        }
        step += 1;
        let line = gba::mmio::VCOUNT.read();
        if line < last_line {
            frames += 1;
        }
        last_line = line;
    }
    IME.write(false);
    IE.write(IrqBits::new());
    // SAFETY: interrupts are off; the handler no longer runs.
    let handler_freed = unsafe { (&raw const HANDLER_FREED).read_volatile() };
    let sound = SOUND.lock();
    info!(
        "{FRAMES_TO_RUN} frames: {started} started ({full} refused, pool full), {stopped} stopped early, {stale} \
         stops refused (stale or freed), {handler_freed} freed by the handler, {held_off} times the handler held off"
    );
    assert_eq!(sound.check(), Ok(()));
    assert_eq!(started, stopped + handler_freed + sound.len() as u32, "every channel is accounted for");
    assert!(handler_freed > 0 && stale > 0 && held_off > 0, "the two contexts really interleaved");
}

/// A pool's allocation or free, bare or through its `IrqMutex`.
struct PoolAlloc<const LOCKED: bool>(&'static IrqMutex<Channels>);
struct PoolFree<const LOCKED: bool>(&'static IrqMutex<Channels>, Handle<Channel, u8, Sfx>);

impl<const LOCKED: bool> Op for PoolAlloc<LOCKED> {
    type Out = Result<Handle<Channel, u8, Sfx>, Channel>;
    #[inline(always)]
    fn run(&mut self) -> Self::Out {
        let channel = Channel { left: 3 };
        if LOCKED {
            self.0.lock().alloc(channel)
        } else {
            // SAFETY: no interrupt is enabled (IE is empty) while this test times, so nothing else reaches the pool.
            unsafe { (*self.0.data_ptr()).alloc(channel) }
        }
    }
}

impl<const LOCKED: bool> Op for PoolFree<LOCKED> {
    type Out = Result<Channel, PoolError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Out {
        if LOCKED {
            self.0.lock().free(self.1)
        } else {
            // SAFETY: as in `PoolAlloc`.
            unsafe { (*self.0.data_ptr()).free(self.1) }
        }
    }
}

/// Times one pool's allocate and free of every slot, from Thumb code in ROM (as a game's main loop calls it).
fn time_pool<const LOCKED: bool>(pool: &'static IrqMutex<Channels>) -> (u16, u16) {
    let timer = OpTimer::new(false);
    let mut handles = [None; 8];
    let (mut alloc, mut free) = (0, 0);
    for h in handles.iter_mut() {
        let (got, cycles) = timer.time(&mut PoolAlloc::<LOCKED>(pool));
        *h = Some(got.ok().expect("8 slots"));
        alloc = alloc.max(cycles);
    }
    for h in handles {
        let (freed, cycles) = timer.time(&mut PoolFree::<LOCKED>(pool, h.unwrap()));
        assert!(freed.is_ok());
        free = free.max(cycles);
    }
    (alloc, free)
}

/// What the `IrqMutex` adds to a pool's allocate and free: the lock's IME writes and its flag. Timed with IME set,
/// as a game that uses interrupts has it (IE empty: none comes), so that the release writes IME back as there.
/// Printed for the crate README; both ways must leave the pool whole.
#[test_case]
fn an_irq_mutex_costs_the_lock() {
    static TIMED: IrqMutex<Channels> = IrqMutex::new(IndexPool::new());
    IE.write(IrqBits::new());
    IME.write(true);
    // Every slot allocated once first, so that both timed runs take the same paths: a slot's first allocation
    // also counts the pool's peak, which only the first run would otherwise pay.
    time_pool::<false>(&TIMED);
    let bare = time_pool::<false>(&TIMED);
    let locked = time_pool::<true>(&TIMED);
    IME.write(false);
    info!("IndexPool<_, u8, 8> from Thumb in ROM, slowest allocate / free: bare {bare:?}, through IrqMutex {locked:?}");
    assert_eq!(TIMED.lock().check(), Ok(()));
    assert!(TIMED.lock().is_empty());
    assert!(locked.0 > bare.0 && locked.1 > bare.1, "the lock costs something");
}

/// Two `IrqLock`s released in the order they were taken, not the reverse: the first turns interrupts back on
/// while the second is held, which stays exclusive (another context taking it is refused), and once both are
/// released IME is what the first found. (When every lock wrote back the IME it found, the second then wrote 0:
/// interrupts stayed off for good.) In the reverse order, interrupts stay masked until the last release.
#[test_case]
fn locks_released_out_of_order_leave_interrupts_as_they_found_them() {
    static A: IrqMutex<u32> = IrqMutex::new(0);
    static B: IrqMutex<u32> = IrqMutex::new(0);
    IE.write(IrqBits::new());
    for ime in [true, false] {
        IME.write(ime);
        let a = A.lock();
        let b = B.lock();
        assert!(!IME.read(), "masked while held");
        drop(a);
        assert_eq!(IME.read(), ime, "the first released puts back what it found");
        assert!(B.try_lock().is_none(), "the one still held refuses another taker");
        drop(b);
        assert_eq!(IME.read(), ime, "both released: IME as it was (IME was {ime})");
        // In the usual order, nested: masked until the last release.
        let b = B.lock();
        let a = A.lock();
        drop(a);
        assert!(!IME.read(), "still masked while B is held (IME was {ime})");
        drop(b);
        assert_eq!(IME.read(), ime);
    }
    IME.write(false);
}

/// The lock of `a_handler_let_in_inside_a_guard_is_refused`, and what its handler saw.
static COUNTER: IrqMutex<u32> = IrqMutex::new(0);
/// 0: the handler has not run; 1: it took the lock; 2: it was refused.
static mut HANDLER_SAW: u32 = 0;

extern "C" fn try_counter(_: IrqBits) {
    let saw = match COUNTER.try_lock() {
        Some(mut count) => {
            *count += 1;
            1
        }
        None => 2,
    };
    // SAFETY: only this handler writes it; the test reads it with interrupts off.
    unsafe { HANDLER_SAW = saw };
}

/// Safe code turns interrupts back on inside a guard (the `gba` crate's IME is a safe register): a handler that
/// then tries the same lock is refused, and the guard's updates are not lost. The lock's `held` flag is what
/// keeps it exclusive then; without compiler barriers around the locked section, LLVM dropped its store (written
/// `true`, then `false` with nothing between that it knew could read it), and the handler took the lock inside
/// the guard.
#[test_case]
fn a_handler_let_in_inside_a_guard_is_refused() {
    IME.write(false);
    gba::RUST_IRQ_HANDLER.write(Some(try_counter));
    DISPSTAT.write(DisplayStatus::new().with_irq_vblank(true));
    IE.write(IrqBits::VBLANK);
    IF.write(IrqBits::VBLANK);
    while !IF.read().vblank() {}
    // A VBlank is pending: the handler runs as soon as IME is set.
    let mut count = COUNTER.lock();
    *count += 10;
    IME.write(true);
    *count += 100;
    drop(count);
    IME.write(false);
    IE.write(IrqBits::new());
    // SAFETY: interrupts are off; the handler no longer runs.
    let saw = unsafe { (&raw const HANDLER_SAW).read_volatile() };
    assert_eq!(saw, 2, "the handler ran inside the guard and was refused (1: it took the lock)");
    assert_eq!(*COUNTER.lock(), 110);
}
