//! The fault fixture: a ROM of tests that each end in a fault a player could meet, for
//! `tools/harness/tests/crash.rs` to run one at a time (the test protocol's mailbox picks it) and read the crash
//! screen it leaves. On-target test ROMs cannot hold them: each would fail its ROM. `make fixture` builds it.
//!
//! Every test starts from the same allocators: a pool of 16 bullets with 3 live, and a 1 KB heap behind a
//! `LockedHeap` with its `IrqLock`, with 24, 40 and 64 bytes in use and one refused request (5000 bytes).
#![no_std]
#![no_main]

use core::alloc::{GlobalAlloc, Layout};
use core::hint::black_box;
use gba::prelude::*;
use stackshot::crash;
use stackshot_alloc::heap::{Heap, LockedHeap, header_blocks};
use stackshot_alloc::irq::IrqLock;
use stackshot_alloc::pool::IndexPool;
use stackshot_platform::{panic, stack, testing};

const REGION_BYTES: usize = 1024;

#[repr(C, align(8))]
struct Region([u8; REGION_BYTES]);

static mut REGION: Region = Region([0; REGION_BYTES]);
static HEAP: LockedHeap<'static, IrqLock> = LockedHeap::new();
static mut BULLETS: IndexPool<u32, u8, 16> = IndexPool::with_id(1);

#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
fn set_up() {
    // SAFETY: runs once, before any test; only this function takes these statics, and the region goes to the
    // heap for good.
    let (bullets, heap) = unsafe {
        (&mut *(&raw mut BULLETS), Heap::from_raw((&raw mut REGION).cast(), REGION_BYTES).expect("a 1 KB heap"))
    };
    let _ = HEAP.init(heap);
    for k in 0..3 {
        bullets.alloc(k).expect("the pool has room");
    }
    for size in [24, 40, 64] {
        assert!(!alloc(size).is_null(), "the heap has room");
    }
    assert!(alloc(5000).is_null());
    // SAFETY: the heap lives inside a static LockedHeap and never moves.
    HEAP.with(|heap| unsafe { crash::watch_heap(heap) }).expect("the heap is set up");
    // SAFETY: a static.
    unsafe { crash::watch_pool("BULLETS", &raw const BULLETS) };
}

/// `size` bytes from the heap, through its `GlobalAlloc` face as a `Box` would; null if refused.
fn alloc(size: usize) -> *mut u8 {
    // SAFETY: a valid layout of non-zero size; the block is never freed (the fixture keeps it).
    unsafe { HEAP.alloc(Layout::from_size_align(size, 8).unwrap()) }
}

/// A panic with a message, from a screen in another mode (bitmap mode 3, sprites and a blend on).
fn panics_with_a_message() {
    DISPCNT.write(DisplayControl::new().with_video_mode(VideoMode::_3).with_show_bg2(true).with_show_obj(true));
    BLDCNT.write(BlendControl::new().with_target1_bg2(true).with_mode(ColorEffectMode::Brighten));
    BLDY.write(12);
    panic!("the shield ran out at wave {}", black_box(7));
}

/// A panic inside an allocator call: an allocation while `LockedHeap::with` holds the lock, which the `IrqLock`
/// refuses with a panic. The lock stays taken; the crash screen must read the heap without it.
fn panics_inside_an_allocator_call() {
    let _ = HEAP.with(|_| alloc(100));
}

/// A stray write into the heap (its map: the spare code, which no block has, in the last block), then a panic
/// inside a heap call: the crash screen must name the broken invariant instead of trusting the heap's counters
/// and tree.
fn panics_with_a_broken_heap() {
    let _ = HEAP.with(|heap| {
        // The region's blocks of 8 bytes: the header and map take the first `header_blocks`, and the map, from
        // byte 4, holds managed block i's code in bits 2·(i % 4) of byte 4 + i / 4. The last block is in the
        // free run that ends the heap.
        let blocks = REGION_BYTES / 8;
        let i = blocks - 1 - header_blocks(blocks as u32) as usize;
        // SAFETY: a byte of REGION's map, which exists and never moves; writing it is the fault.
        unsafe {
            let byte = (&raw mut REGION).cast::<u8>().add(4 + i / 4);
            byte.write_volatile(byte.read_volatile() & !(3 << (2 * (i % 4))) | 2 << (2 * (i % 4)));
        }
        black_box(heap);
        panic!("the heap was damaged");
    });
}

/// Calls itself until the stack is 256 bytes past its limit, then returns through every frame.
#[inline(never)]
fn dive(bottom: usize) -> usize {
    let frame = black_box([stack::pointer(); 8]);
    let deeper = if stack::pointer() > bottom { dive(bottom) } else { 0 };
    frame[7] + deeper
}

/// A recursion too deep for the stack: the test runner's guard check after the test catches it.
fn recurses_too_deep() {
    black_box(dive(stack::limit() - 256));
}

/// A panic ten frames in, which leaves the harness time to damage memory first (the panic handler's crash-screen
/// hook).
fn panics_ten_frames_in() {
    for _ in 0..10 {
        while VCOUNT.read() != 160 {}
        while VCOUNT.read() == 160 {}
    }
    panic!("ten frames in");
}

#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    panic::set_screen(crash::show);
    set_up();
    testing::run(&[
        &panics_with_a_message,
        &panics_inside_an_allocator_call,
        &panics_with_a_broken_heap,
        &recurses_too_deep,
        &panics_ten_frames_in,
    ]);
    loop {
        VBlankIntrWait();
    }
}
