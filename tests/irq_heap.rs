//! One heap shared by the main loop and the VBlank interrupt handler through `LockedHeap<IrqLock>`. Both
//! allocate and free, filling each block with a pattern of their own and checking it before freeing; the heap's
//! checker runs after every frame. Without the critical section the handler lands inside the main loop's heap
//! calls thousands of times, and the heap (or the patterns) break.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use core::alloc::{GlobalAlloc, Layout};
use gba::interrupts::IrqBits;
use gba::mmio::{DISPSTAT, IE, IME};
use gba::video::DisplayStatus;
use stackshot_alloc::heap::{Heap, LockedHeap};
use stackshot_alloc::irq::IrqLock;
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
