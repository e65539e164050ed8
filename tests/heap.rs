//! The tree-heap on the GBA: the host's property drivers on a real 4 KB region in IWRAM, the ARM fast paths
//! (`stackshot_alloc::iwram`) on bad input, and what the game's way to them costs.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use stackshot_alloc::heap::{Heap, HeapBox, HeapError, LockedHeap, props};
use stackshot_alloc::irq::IrqLock;
use stackshot_alloc::iwram::{heap_alloc, heap_free};
use stackshot_platform::cycles::Op;
use stackshot_platform::info;

/// 4 KB in IWRAM (.bss), like the game's AI heap.
#[repr(C, align(8))]
struct Region([u8; 4096]);
static mut REGION: Region = Region([0; 4096]);

#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
fn region() -> &'static mut [u8] {
    // SAFETY: tests run one at a time and each takes the region afresh; no reference outlives its test.
    unsafe { &mut (*(&raw mut REGION)).0 }
}

fn check_props(name: &str, result: Result<props::PropReport, props::PropFailure>) {
    match result {
        Ok(report) => info!(
            "{name}: {} ops ({} allocs, {} frees, {} refused), up to {} live, {} free runs",
            report.ops, report.allocs, report.frees, report.refused, report.max_live, report.max_free_runs
        ),
        Err(failure) => panic!("{name}: step {}: {:?}", failure.step, failure.what),
    }
}

#[test_case]
fn random_operations_match_the_model() {
    check_props("random", props::random(region(), 0x6BA1, 1_500));
}

#[test_case]
fn game_like_operations_match_the_model() {
    check_props("game-like", props::game_like(region(), 0x6BA2, 1_500));
}

#[test_case]
fn adversarial_operations_match_the_model_and_stay_balanced() {
    let report = props::adversarial(region(), 0x6BA3, 1_500);
    if let Ok(r) = &report {
        // 2·log2(n + 1) is the red-black bound; a plain BST would be as tall as the number of runs.
        let mut bound = 0;
        while (1u32 << (bound / 2)) <= r.runs_at_max_height + 1 {
            bound += 2;
        }
        assert!(r.max_height <= bound, "height {} for {} runs", r.max_height, r.runs_at_max_height);
        info!("adversarial: tree height {} with {} free runs", r.max_height, r.runs_at_max_height);
    }
    check_props("adversarial", report);
}

#[test_case]
fn overhead_of_a_4kb_heap_is_128_bytes() {
    let heap = Heap::new(region()).unwrap();
    let overhead = 4096 - heap.capacity();
    info!(
        "4 KB heap: {} bytes of header and map ({}.{:03}%)",
        overhead,
        overhead * 100 / 4096,
        overhead * 100_000 / 4096 % 1000
    );
    assert_eq!(overhead, 128);
    assert!(overhead * 1000 <= 32 * 4096, "over 3.2% of the buffer");
}

/// 64 KB in EWRAM, like the crate README's larger heap (an `.ewram.*` static: its zeroes are in the test ROM too).
#[repr(C, align(8))]
struct Large([u8; 65536]);
#[unsafe(link_section = ".ewram.large_heap")]
static mut LARGE: Large = Large([0; 65536]);

#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
fn large_region() -> &'static mut [u8] {
    // SAFETY: as in `region`.
    unsafe { &mut (*(&raw mut LARGE)).0 }
}

/// What `stats()` costs: it counts the free runs in the map, one word per 16 blocks, under a `LockedHeap`'s lock
/// with interrupts masked. Timed on 4 KB in IWRAM (the game's) and 64 KB in EWRAM, each with one free run and with
/// a free run at every other block (the most a map can hold); the count must be right.
#[test_case]
fn stats_counts_the_free_runs_and_prints_its_cycles() {
    for (name, region) in [("4 KB in IWRAM", region()), ("64 KB in EWRAM", large_region())] {
        let mut heap = Heap::new(region).unwrap();
        let blocks = (heap.capacity() / 8) as u32;
        let watch = stackshot_platform::cycles::Stopwatch::start();
        let one = heap.stats();
        let empty = watch.elapsed();
        assert_eq!(one.free_runs, 1, "{name}: the empty heap");
        // Every block a run of its own; then every other one freed, the last one used.
        let first = heap.alloc(8, 8).unwrap();
        for _ in 1..blocks {
            heap.alloc(8, 8).unwrap();
        }
        for k in (0..blocks - 1).step_by(2) {
            // SAFETY: block k of the heap's managed blocks, handed out above: inside the region.
            heap.free(unsafe { first.add(8 * k as usize) }).unwrap();
        }
        let watch = stackshot_platform::cycles::Stopwatch::start();
        let many = heap.stats();
        let fragmented = watch.elapsed();
        assert_eq!(many.free_runs, blocks / 2, "{name}: a free run at every other block");
        info!("stats() of {name}: {empty} cycles with 1 free run, {fragmented} with {}", many.free_runs);
    }
}

/// A region in ROM, against `from_raw`'s contract, is refused: the GBA drops writes there, so the header the
/// heap writes does not read back. (Accepted, it handed out addresses in ROM and `check` failed after.)
#[test_case]
fn a_region_in_rom_is_refused() {
    // 4 KB of the cartridge's code, away from the header and its GPIO registers (0x0800_00C4..0x0800_00CA).
    let rom = 0x0800_1000 as *mut u8;
    // SAFETY: not upheld, on purpose: this is the misuse the check is for. The region is not valid for writes;
    // on the GBA a write to ROM changes nothing, and the reads are of the cartridge's bytes.
    assert_eq!(unsafe { Heap::from_raw(rom, 4096) }.err(), Some(HeapError::BadRegion));
}

#[test_case]
fn the_arm_fast_paths_reject_bad_input_and_keep_the_heap_intact() {
    let mut heap = Heap::new(region()).unwrap();
    let a = heap_alloc(&mut heap, 40, 4).unwrap();
    let b = heap_alloc(&mut heap, 100, 64).unwrap();
    assert_eq!(b.as_ptr() as usize % 64, 0);
    assert_eq!(heap_alloc(&mut heap, 0, 4), Err(HeapError::ZeroSize));
    assert_eq!(heap_alloc(&mut heap, 5000, 4), Err(HeapError::TooLarge));
    assert_eq!(heap_alloc(&mut heap, 8, 3), Err(HeapError::BadAlign));
    // Any power of two the heap can hold; one it cannot is too large, not out of memory.
    let c = heap_alloc(&mut heap, 8, 256).unwrap();
    assert_eq!(c.as_ptr() as usize % 256, 0);
    assert_eq!(heap_free(&mut heap, c), Ok(()));
    assert_eq!(heap_alloc(&mut heap, 8, 1 << 20), Err(HeapError::TooLarge));
    let mut outside = 0u32;
    assert_eq!(heap_free(&mut heap, NonNull::from(&mut outside).cast()), Err(HeapError::OutsideHeap));
    // SAFETY: 8 bytes into a 40-byte allocation: still inside it.
    let inside = unsafe { a.add(8) };
    assert_eq!(heap_free(&mut heap, inside), Err(HeapError::NotRunStart));
    heap.check().unwrap();
    assert_eq!(heap_free(&mut heap, a), Ok(()));
    assert_eq!(heap_free(&mut heap, a), Err(HeapError::DoubleFree));
    heap.check().unwrap();
    assert_eq!(heap_free(&mut heap, b), Ok(()));
    let stats = heap.stats();
    assert_eq!((stats.free_runs, stats.free_bytes as usize), (1, heap.capacity()));
    heap.check().unwrap();
}

#[test_case]
fn the_arm_fast_paths_fill_the_heap_and_give_it_all_back() {
    let mut heap = Heap::new(region()).unwrap();
    let mut ptrs = [None; 200];
    let mut n = 0;
    // Mixed sizes until one does not fit, then single blocks until nothing does.
    while let Ok(p) = heap_alloc(&mut heap, 24 + 8 * (n % 5), 8) {
        ptrs[n] = Some(p);
        n += 1;
    }
    while let Ok(p) = heap_alloc(&mut heap, 8, 8) {
        ptrs[n] = Some(p);
        n += 1;
    }
    assert_eq!(heap.stats().free_bytes, 0, "{:?}", heap.stats());
    assert_eq!(heap_alloc(&mut heap, 8, 8), Err(HeapError::OutOfMemory));
    heap.check().unwrap();
    // Every other first, then the rest: each free merges with one or two neighbours.
    for step in [0, 1] {
        for p in ptrs[..n].iter().skip(step).step_by(2) {
            heap_free(&mut heap, p.unwrap()).unwrap();
            heap.check().unwrap();
        }
    }
    assert_eq!(heap.stats().free_runs, 1);
    info!("filled with {n} allocations, freed and merged back into one run");
}

/// One operation of a heap trace (bench/traces/README.md's format): allocate `size` bytes aligned to `align` as
/// block `id`, or free block `id`.
#[derive(Clone, Copy)]
enum TraceOp {
    Alloc { id: usize, size: usize, align: usize },
    Free { id: usize },
}

/// The trace's next operation from `lines`, skipping comments.
fn next_op<'a>(lines: &mut impl Iterator<Item = &'a str>) -> Option<TraceOp> {
    for line in lines {
        let mut words = line.split(' ');
        let mut number = || words.next().and_then(|w| w.parse::<usize>().ok());
        match line.as_bytes().first() {
            Some(b'a') => {
                let (_, id, size, align) = (number(), number(), number(), number());
                return Some(TraceOp::Alloc { id: id?, size: size?, align: align? });
            }
            Some(b'f') => {
                let (_, id) = (number(), number());
                return Some(TraceOp::Free { id: id? });
            }
            _ => {}
        }
    }
    None
}

/// An allocation of the AI trace as it reaches the heap: `Heap::alloc` inlined into the timing function, as the
/// benchmark times every allocator, or (`CALLED`) a call of `iwram::heap_alloc`.
struct Alloc<'a, 'h, const CALLED: bool>(&'a mut Heap<'h>, usize, usize);

impl<const CALLED: bool> Op for Alloc<'_, '_, CALLED> {
    type Out = Result<NonNull<u8>, HeapError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Out {
        if CALLED { heap_alloc(self.0, self.1, self.2) } else { self.0.alloc(self.1, self.2) }
    }
}

/// A free of the AI trace, like `Alloc`.
struct Free<'a, 'h, const CALLED: bool>(&'a mut Heap<'h>, NonNull<u8>);

impl<const CALLED: bool> Op for Free<'_, '_, CALLED> {
    type Out = Result<(), HeapError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Out {
        if CALLED { heap_free(self.0, self.1) } else { self.0.free(self.1) }
    }
}

/// The heap behind the lock the game uses; with the crate's `iwram` feature its allocate and free are each one
/// ARM function in IWRAM that takes the lock, runs the heap and releases the lock (and zeroes, for the owner).
type AiHeap = LockedHeap<'static, IrqLock>;
/// The game's scratch: a run of `i16`s the heap's owner frees when dropped.
type Scratch = HeapBox<'static, 'static, [i16], IrqLock>;

/// Statics, like the game's: one for the bare lock and call, one for the owner.
static LOCKED: [AiHeap; 2] = [const { LockedHeap::new() }; 2];

/// An allocation of the AI trace through `LockedHeap`'s `GlobalAlloc`: the lock and the call.
struct LockedAlloc(&'static AiHeap, Layout);

impl Op for LockedAlloc {
    type Out = *mut u8;
    #[inline(always)]
    fn run(&mut self) -> *mut u8 {
        // SAFETY: the trace's sizes are not zero.
        unsafe { self.0.alloc(self.1) }
    }
}

/// A free of the AI trace through `LockedHeap`'s `GlobalAlloc`.
struct LockedFree(&'static AiHeap, NonNull<u8>, Layout);

impl Op for LockedFree {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        // SAFETY: a live block of this heap, allocated with this layout, freed once.
        unsafe { self.0.dealloc(self.1.as_ptr(), self.2) }
    }
}

/// An allocation of the AI trace as the game makes it (`enemy::Scratch::alloc`): `boxed_slice_zeroed` of
/// `len` `i16`s, so the lock, the call and the zeroing.
struct OwnerAlloc(&'static AiHeap, usize);

impl Op for OwnerAlloc {
    type Out = Result<Scratch, HeapError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Out {
        self.0.boxed_slice_zeroed(self.1)
    }
}

/// A free of the AI trace as the game makes it: the owner dropped.
struct OwnerFree(Option<Scratch>);

impl Op for OwnerFree {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        drop(self.0.take());
    }
}

/// Median and maximum of `v` (sorted in place).
fn median_max(v: &mut [u16]) -> (u16, u16) {
    v.sort_unstable();
    (v[v.len() / 2], v[v.len() - 1])
}

/// The game's call path (src/game/enemy.rs: Thumb code in ROM making a `HeapBox` slice on a static
/// `LockedHeap<IrqLock>`, whose allocate and free are ARM functions in IWRAM that run the heap with interrupts
/// masked) against the heap inlined into an ARM timing function, as the benchmark
/// times it, on the benchmark's AI trace: what the call, the lock and the owner's fill cost. Every way must hand
/// out the same blocks and leave the same valid heap.
#[test_case]
fn the_games_call_path_costs_the_call_the_lock_and_the_fill() {
    const TRACE: &str = include_str!("../bench/traces/ai-scratch.txt");
    // (ARM timing function in IWRAM, the way), as the rows below name them.
    let ways = [(true, 0), (true, 1), (false, 1), (false, 2), (false, 3)];
    let names = [
        "inlined into ARM in IWRAM",
        "called from ARM in IWRAM",
        "called from Thumb in ROM",
        "LockedHeap<IrqLock> from Thumb in ROM (lock + call)",
        "HeapBox slice from Thumb in ROM (the game: lock + call + fill)",
    ];
    // IME set, as in the game, whose interrupts are on, so that the lock's release writes it back as there (with
    // IME clear it skips that write); IE empty, so that none comes.
    gba::mmio::IE.write(gba::interrupts::IrqBits::new());
    gba::mmio::IME.write(true);
    // Offsets from the region's start: the blocks the first way handed out, in order.
    let mut first_places = [0u16; 512];
    let base = region().as_ptr() as usize;
    for (w, &(arm, way)) in ways.iter().enumerate() {
        let timer = stackshot_platform::cycles::OpTimer::new(arm);
        let (mut heap, locked) = if way < 2 {
            (Some(Heap::new(region()).unwrap()), None)
        } else {
            let locked = &LOCKED[way - 2];
            assert!(locked.init(Heap::new(region()).unwrap()).is_ok());
            (None, Some(locked))
        };
        let (mut allocs, mut frees) = ([0u16; 512], [0u16; 512]);
        let (mut na, mut nf) = (0, 0);
        let mut live: [Option<(NonNull<u8>, Layout)>; 128] = [None; 128];
        let mut owned: [Option<Scratch>; 128] = [const { None }; 128];
        let mut lines = TRACE.lines();
        while let Some(op) = next_op(&mut lines) {
            match op {
                TraceOp::Alloc { id, size, align } => {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let (place, cycles) = match (&mut heap, locked) {
                        (Some(heap), _) if way == 0 => timer.time(&mut Alloc::<false>(heap, size, align)),
                        (Some(heap), _) => timer.time(&mut Alloc::<true>(heap, size, align)),
                        (_, Some(locked)) if way == 2 => {
                            let (p, cycles) = timer.time(&mut LockedAlloc(locked, layout));
                            (NonNull::new(p).ok_or(HeapError::OutOfMemory), cycles)
                        }
                        (_, Some(locked)) => {
                            assert_eq!(size % 2, 0, "the game's scratch is i16s");
                            let (scratch, cycles) = timer.time(&mut OwnerAlloc(locked, size / 2));
                            let scratch = scratch.expect("the AI trace fits the 4 KB heap");
                            assert!(scratch.iter().all(|&v| v == 0), "the scratch starts zeroed");
                            let place = NonNull::from(&scratch[..]).cast();
                            owned[id] = Some(scratch);
                            (Ok(place), cycles)
                        }
                        _ => unreachable!(),
                    };
                    let p = place.expect("the AI trace fits the 4 KB heap");
                    live[id] = Some((p, layout));
                    let offset = (p.as_ptr() as usize - base) as u16;
                    if w == 0 {
                        first_places[na] = offset;
                    }
                    assert_eq!(offset, first_places[na], "{}: allocation {na} went elsewhere", names[w]);
                    allocs[na] = cycles;
                    na += 1;
                }
                TraceOp::Free { id } => {
                    let (p, layout) = live[id].take().expect("the trace frees live blocks");
                    let (result, cycles) = match (&mut heap, locked) {
                        (Some(heap), _) if way == 0 => timer.time(&mut Free::<false>(heap, p)),
                        (Some(heap), _) => timer.time(&mut Free::<true>(heap, p)),
                        // Refusals would show in the heap's count of bad frees, checked at the end.
                        (_, Some(locked)) if way == 2 => (Ok(()), timer.time(&mut LockedFree(locked, p, layout)).1),
                        (_, Some(_)) => (Ok(()), timer.time(&mut OwnerFree(owned[id].take())).1),
                        _ => unreachable!(),
                    };
                    assert_eq!(result, Ok(()), "{}: free {nf}", names[w]);
                    frees[nf] = cycles;
                    nf += 1;
                }
            }
        }
        let (check, bad_frees) = match (&heap, locked) {
            (Some(heap), _) => (heap.check(), 0),
            (_, Some(locked)) => locked.with(|h| (h.check(), h.stats().bad_frees)).unwrap(),
            _ => unreachable!(),
        };
        assert_eq!((check, bad_frees), (Ok(()), 0), "{}", names[w]);
        let ((am, ax), (fm, fx)) = (median_max(&mut allocs[..na]), median_max(&mut frees[..nf]));
        info!("{}: alloc median {am}, max {ax}; free median {fm}, max {fx} ({na} allocs, {nf} frees)", names[w]);
    }
    gba::mmio::IME.write(false);
}
