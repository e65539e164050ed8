//! Host tests: layout and overhead, bad input, alignment, merging, the checker catching each broken
//! invariant, the adapters, the property drivers over several heap sizes, and the tree height on adversarial
//! patterns against a plain unbalanced tree.

extern crate alloc;
extern crate std;

use super::map::{FREE, LAST, RED, USED};
use super::props::{self, PropReport};
use super::tree::NIL;
use super::*;
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::alloc::{GlobalAlloc, Layout};
use std::println;

/// An 8-aligned, zeroed buffer of `bytes` bytes (a multiple of 8).
fn region(bytes: usize) -> Vec<u64> {
    vec![0; bytes / 8]
}

fn bytes(words: &mut [u64]) -> &mut [u8] {
    let len = words.len() * 8;
    // SAFETY: the u64s are initialised, every byte pattern is a valid u8, and the result borrows `words`
    // exclusively for its lifetime.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
}

fn ok(h: &Heap) {
    if let Err(e) = h.check() {
        panic!("invariant broken: {e:?}");
    }
}

/// The block index of a pointer handed out by `h`.
fn block_of(h: &Heap, p: NonNull<u8>) -> u32 {
    ((p.as_ptr() as usize - h.base as usize) / 8) as u32
}

/// Overwrites the u16 at byte `offset` of block `b` (a node field or size copy), as a stray write would.
fn poke(h: &mut Heap, b: u32, offset: usize, v: u16) {
    // SAFETY: b is a block of h's region and offset < 8, so the u16 is inside it and aligned.
    unsafe { *(h.base.add(b as usize * 8 + offset) as *mut u16) = v }
}

const SMALLER: usize = 0;
const PARENT: usize = 4;
const SIZE: usize = 6;

#[test]
fn layout_and_overhead() {
    println!("| region | header+map blocks | overhead bytes | overhead % | capacity |");
    let sizes = [(32, 1, 3), (4096, 16, 496), (65536, 249, 7943), (524288, 1987, 63549)];
    // Under Miri the two small ones: a check of a 512 KB heap takes minutes there.
    for (len, first, managed) in sizes.into_iter().take(if cfg!(miri) { 2 } else { 4 }) {
        let mut w = region(len);
        let h = Heap::new(bytes(&mut w)).unwrap();
        let overhead = len - h.capacity();
        println!(
            "| {len} | {} | {overhead} | {:.3} | {} |",
            h.first,
            overhead as f64 * 100.0 / len as f64,
            h.capacity()
        );
        assert_eq!((h.first, h.end - h.first), (first, managed));
        assert_eq!(h.first, header_blocks(len as u32 / 8));
        ok(&h);
    }
    // The 4 KB heap: 4-byte header + 124-byte map (496 blocks × 2 bits) = 128 bytes = 3.125 % <= 3.2 %.
    let mut w = region(4096);
    let h = Heap::new(bytes(&mut w)).unwrap();
    assert_eq!(4096 - h.capacity(), 128);
    assert!((4096 - h.capacity()) * 1000 <= 32 * 4096);
}

#[test]
fn bad_regions_are_refused() {
    let mut w = region(16);
    assert_eq!(Heap::new(&mut bytes(&mut w)[..15]).err(), Some(HeapError::BadRegion));
    assert_eq!(Heap::new(&mut bytes(&mut w)[1..]).err(), Some(HeapError::BadRegion));
    let h = Heap::new(bytes(&mut w)).unwrap();
    assert_eq!(h.capacity(), 8);
    let mut big = region(524_288 + 8);
    assert_eq!(Heap::new(bytes(&mut big)).err(), Some(HeapError::BadRegion));
    // An unaligned start loses the bytes up to the next 8-byte boundary.
    let mut w = region(4096);
    let h = Heap::new(&mut bytes(&mut w)[3..]).unwrap();
    assert_eq!(h.capacity(), 3968 - 8);
    ok(&h);
}

#[test]
fn bad_input_is_refused_and_heap_stays_intact() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    assert_eq!(h.alloc(0, 8), Err(HeapError::ZeroSize));
    assert_eq!(h.alloc(3969, 8), Err(HeapError::TooLarge));
    assert_eq!(h.alloc(8, 3), Err(HeapError::BadAlign));
    assert_eq!(h.alloc(8, 128), Err(HeapError::BadAlign));
    assert_eq!(h.alloc(8, 0), Err(HeapError::BadAlign));
    ok(&h);
    let a = h.alloc(40, 8).unwrap();
    let b = h.alloc(8, 8).unwrap();
    // Outside: the header/map, and past the end.
    let header = NonNull::new(h.base).unwrap();
    assert_eq!(h.free(header), Err(HeapError::OutsideHeap));
    let past = NonNull::new(h.base.wrapping_add(4096)).unwrap();
    assert_eq!(h.free(past), Err(HeapError::OutsideHeap));
    // Inside a used run, and not on a block boundary.
    assert_eq!(h.free(NonNull::new(a.as_ptr().wrapping_add(16)).unwrap()), Err(HeapError::NotRunStart));
    assert_eq!(h.free(NonNull::new(a.as_ptr().wrapping_add(1)).unwrap()), Err(HeapError::NotRunStart));
    // A free block (never allocated) and a double free.
    let free_block = NonNull::new(b.as_ptr().wrapping_add(64)).unwrap();
    assert_eq!(h.free(free_block), Err(HeapError::DoubleFree));
    h.free(b).unwrap();
    assert_eq!(h.free(b), Err(HeapError::DoubleFree));
    ok(&h);
    // Full heap.
    let rest = h.alloc(h.stats().largest_free as usize, 8).unwrap();
    assert_eq!(h.alloc(1, 1), Err(HeapError::OutOfMemory));
    ok(&h);
    let s = h.stats();
    assert_eq!((s.free_bytes, s.free_runs, s.largest_free, s.used_bytes), (0, 0, 0, 3968));
    assert_eq!((s.failed_requests, s.bad_frees, s.peak_used), (6, 6, 3968));
    h.free(a).unwrap();
    h.free(rest).unwrap();
    ok(&h);
    assert_eq!(h.stats().free_runs, 1);
}

#[test]
fn alignment_up_to_64_is_honoured() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let mut ptrs = Vec::new();
    for i in 0..40 {
        let align = 1 << (i % 7);
        let p = h.alloc(1 + i * 2, align).unwrap();
        assert!((p.as_ptr() as usize).is_multiple_of(align), "align {align}");
        ok(&h);
        ptrs.push(p);
    }
    for p in ptrs {
        h.free(p).unwrap();
        ok(&h);
    }
    assert_eq!(h.stats().free_runs, 1);
}

#[test]
fn free_merges_with_both_neighbours() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let p: Vec<_> = (0..5).map(|_| h.alloc(16, 8).unwrap()).collect();
    assert_eq!(h.stats().free_runs, 1);
    h.free(p[1]).unwrap();
    h.free(p[3]).unwrap();
    assert_eq!(h.stats().free_runs, 3);
    h.free(p[2]).unwrap(); // merges 1, 2 and 3 into one run
    assert_eq!(h.stats().free_runs, 2);
    assert_eq!(h.size(block_of(&h, p[1])), 6);
    h.free(p[4]).unwrap(); // merges with the tail
    h.free(p[0]).unwrap(); // merges below and above: all one run
    ok(&h);
    assert_eq!(h.stats().free_runs, 1);
    assert_eq!(h.stats().largest_free, 3968);
}

#[test]
fn best_fit_picks_the_smallest_run_that_fits() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    // Holes of 3, 1 and 2 blocks between 1-block separators.
    let mut keep = Vec::new();
    let mut holes = Vec::new();
    for blocks in [3, 1, 2] {
        holes.push(h.alloc(blocks * 8, 8).unwrap());
        keep.push(h.alloc(8, 8).unwrap());
    }
    for &p in &holes {
        h.free(p).unwrap();
    }
    assert_eq!(h.alloc(16, 8).unwrap(), holes[2]);
    assert_eq!(h.alloc(8, 8).unwrap(), holes[1]);
    assert_eq!(h.alloc(17, 8).unwrap(), holes[0]);
    ok(&h);
}

/// A heap with many free runs of varied sizes (a deep tree with red and black nodes), kept as the live
/// pointers and the heap.
fn fragmented(w: &mut [u64]) -> (Heap<'_>, Vec<NonNull<u8>>) {
    let mut h = Heap::new(bytes(w)).unwrap();
    let mut live = Vec::new();
    let mut holes = Vec::new();
    let mut i = 0;
    while let Ok(p) = h.alloc(8 * (1 + i % 5), 8) {
        if i % 2 == 0 { holes.push(p) } else { live.push(p) }
        i += 1;
    }
    for p in holes {
        h.free(p).unwrap();
    }
    ok(&h);
    (h, live)
}

/// A node with a parent and, if asked, its own children, satisfying `pred`.
fn find_node(h: &Heap, pred: impl Fn(&Heap, u32) -> bool) -> u32 {
    (h.first..h.end)
        .find(|&b| {
            h.map_get(b) & 1 == 0
                && (b == h.first || h.map_get(b - 1) & 1 == 1)
                && pred(h, b)
        })
        .expect("no such node")
}

#[test]
fn checker_names_each_broken_invariant_and_block() {
    use InvariantKind::*;
    let expect = |h: &Heap, kind, block| assert_eq!(h.check(), Err(Invariant { kind, block }));

    // Header.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    h.set_header(HDR_COUNT, 495);
    expect(&h, Header, 0);

    // Child link out of range.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let r = h.root();
    poke(&mut h, r, SMALLER, 0xFFFF);
    expect(&h, NodeOutOfRange, 0xFFFF);

    // A node marked used.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let x = h.smaller(h.root());
    h.map_set(x, USED);
    expect(&h, NodeNotFree, x);

    // A node whose block before it is free: make the used run in front of it free in the map.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let x = find_node(&h, |h, b| b > h.first && h.map_get(b - 1) == LAST);
    h.map_set(x - 1, FREE);
    expect(&h, NodeNotRunStart, x);

    // Parent link.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let x = h.larger(h.root());
    poke(&mut h, x, PARENT, x as u16);
    expect(&h, ParentLink, x);

    // Order: the smallest node claims a huge size.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let mut x = h.root();
    while h.smaller(x) != NIL {
        x = h.smaller(x);
    }
    poke(&mut h, x, SIZE, 400);
    expect(&h, Order, x);

    // Red root.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let r = h.root();
    h.map_set(r, RED);
    expect(&h, RedRoot, r);

    // Red-red: a black node below a red one turned red.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let x = find_node(&h, |h, b| h.is_red(h.parent(b)) && !h.is_red(b));
    h.map_set(x, RED);
    expect(&h, RedRed, x);

    // Black height: a red node turned black; its parent's two sides then differ.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let x = find_node(&h, |h, b| h.is_red(b));
    let p = h.parent(x);
    h.map_set(x, FREE);
    expect(&h, BlackHeight, p);

    // Unbalanced: relink all nodes into one chain (ordered, parents right, all black) deeper than allowed.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    let mut nodes: Vec<u32> = (h.first..h.end).filter(|&b| h.map_get(b) & 1 == 0 && (b == h.first || h.map_get(b - 1) & 1 == 1)).collect();
    nodes.sort_by_key(|&b| h.key(b));
    assert!(nodes.len() > 40);
    for (i, &b) in nodes.iter().enumerate() {
        poke(&mut h, b, SMALLER, 0);
        poke(&mut h, b, 2, if i + 1 < nodes.len() { nodes[i + 1] as u16 } else { 0 });
        poke(&mut h, b, PARENT, if i > 0 { nodes[i - 1] as u16 } else { 0 });
        h.map_set(b, FREE);
    }
    h.set_header(HDR_ROOT, nodes[0]);
    expect(&h, Unbalanced, nodes[32]);

    // Unterminated: the last used run of a full heap loses its end mark.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let p = h.alloc(3968, 8).unwrap();
    h.map_set(h.end - 1, USED);
    expect(&h, Unterminated, block_of(&h, p));

    // Bad size: the only run claims more blocks than the heap has.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let f = h.first;
    poke(&mut h, f, SIZE, 497);
    expect(&h, BadSize, f);

    // Used block inside a free run, and a stray red code there.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let f = h.first;
    h.map_set(f + 7, USED);
    expect(&h, UsedInFreeRun, f + 7);
    h.map_set(f + 7, RED);
    expect(&h, StrayRed, f + 7);

    // Size copy.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let e = h.end;
    poke(&mut h, e - 1, SIZE, 5);
    expect(&h, SizeCopy, e - 1);

    // Two free runs touch: the only run claims one block less (copy moved along), leaving a free block after.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let (f, e) = (h.first, h.end);
    poke(&mut h, f, SIZE, 495);
    poke(&mut h, e - 2, SIZE, 495);
    expect(&h, FreeRunsTouch, e - 1);

    // A used run marked free in the map (with a valid size) but not in the tree.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let _a = h.alloc(8, 8).unwrap();
    let b = h.alloc(24, 8).unwrap();
    let _c = h.alloc(8, 8).unwrap();
    let bb = block_of(&h, b);
    for i in 0..3 {
        h.map_set(bb + i, FREE);
    }
    poke(&mut h, bb, SIZE, 3);
    poke(&mut h, bb + 2, SIZE, 3);
    expect(&h, RunNotInTree, bb);

    // Counters.
    let mut w = region(4096);
    let (mut h, _) = fragmented(&mut w);
    h.free_runs += 1;
    expect(&h, Stats, 0);
}

#[test]
fn allocator_api_and_global_alloc() {
    let mut w = region(4096);
    let locked = LockedHeap::new();
    assert!(locked.init(Heap::new(bytes(&mut w)).unwrap()).is_ok());
    {
        let b = Box::new_in([7u32; 10], &locked);
        let mut v: Vec<u16, _> = Vec::with_capacity_in(100, &locked);
        v.extend(0..100);
        assert_eq!(b.iter().sum::<u32>(), 70);
        assert_eq!(v.iter().map(|&x| x as u32).sum::<u32>(), 4950);
        #[repr(align(64))]
        struct Line([u8; 64]);
        let line = Box::new_in(Line([1; 64]), &locked);
        assert!((&raw const *line as usize).is_multiple_of(64));
        assert_eq!(line.0[63], 1);
        let unit = Box::new_in((), &locked);
        drop(unit);
        assert_eq!(locked.lock(|h| h.stats().used_bytes), Some(40 + 200 + 64));
        assert_eq!(locked.lock(|h| h.check()), Some(Ok(())));
        // A failing request is an error, not a panic.
        assert!(Vec::<u8, _>::try_with_capacity_in(5000, &locked).is_err());
    }
    assert_eq!(locked.lock(|h| h.stats().free_runs), Some(1));
    // Re-entry is refused rather than aliasing the heap.
    assert_eq!(locked.lock(|_| locked.lock(|_| ())), Some(None));

    // GlobalAlloc, including alignment and a bad dealloc that is only counted.
    let layout = Layout::from_size_align(100, 64).unwrap();
    // SAFETY: non-zero size; each pointer is freed once, with the layout it was allocated with.
    unsafe {
        let p = locked.alloc(layout);
        assert!(!p.is_null() && (p as usize).is_multiple_of(64));
        locked.dealloc(p.add(8), layout);
        assert_eq!(locked.lock(|h| h.stats().bad_frees), Some(1));
        locked.dealloc(p, layout);
        assert!(locked.alloc(Layout::from_size_align(8, 128).unwrap()).is_null());
    }
    assert_eq!(locked.lock(|h| h.check()), Some(Ok(())));
    // A second heap is refused.
    let mut w2 = region(64);
    assert!(locked.init(Heap::new(bytes(&mut w2)).unwrap()).is_err());
    assert!(LockedHeap::new().lock(|_| ()).is_none());
}

fn run(name: &str, driver: fn(&mut [u8], u32, u32) -> Result<PropReport, props::PropFailure>, len: usize, seeds: u32, ops: u32) -> u64 {
    let mut total = 0;
    let mut w = region(len);
    for seed in 1..=seeds {
        match driver(bytes(&mut w), seed, ops) {
            Ok(r) => {
                total += r.ops as u64;
                if seed == 1 {
                    println!("{name:12} {len:7} B seed 1: {r:?}");
                }
            }
            Err(f) => panic!("{name} len {len} seed {seed}: {f:?}"),
        }
    }
    println!("{name:12} {len:7} B: {seeds} seeds, {total} ops");
    total
}

/// The heap sizes the property tests run on. Under Miri two small ones: an adversarial round fills the whole
/// heap, with a check of every block after each step, and Miri is thousands of times slower.
const SIZES: &[usize] = if cfg!(miri) { &[32, 512] } else { &[32, 4096, 65536, 524288] };

/// Ops per seed for heaps up to 4 KB in the default property tests; under Miri a hundred: still every path of
/// alloc and free.
const BUDGET: u32 = if cfg!(miri) { 100 } else { 25_000 };

/// Ops per seed so that each pattern gets roughly the same time at every size (the check is O(blocks)).
fn ops_for(len: usize, budget: u32) -> u32 {
    match len {
        0..=4096 => budget,
        4097..=65536 => budget / 20,
        _ => budget / 200,
    }
}

#[test]
fn props_random() {
    let total: u64 = SIZES.iter().map(|&len| run("random", props::random, len, 4, ops_for(len, BUDGET))).sum();
    assert!(total >= 8 * BUDGET as u64);
}

#[test]
fn props_game_like() {
    let total: u64 = SIZES.iter().map(|&len| run("game_like", props::game_like, len, 4, ops_for(len, BUDGET))).sum();
    assert!(total >= 8 * BUDGET as u64);
}

#[test]
fn props_adversarial() {
    let total: u64 = SIZES.iter().map(|&len| run("adversarial", props::adversarial, len, 4, ops_for(len, BUDGET))).sum();
    assert!(total >= 8 * BUDGET as u64);
}

/// Long run: `cargo test -p stackshot-alloc --release -- --ignored`.
#[test]
#[ignore]
fn props_long() {
    let mut total = 0;
    for &len in SIZES {
        for d in [props::random, props::game_like, props::adversarial] {
            total += run("long", d, len, 16, ops_for(len, 400_000));
        }
    }
    println!("total {total} ops");
}

/// Insert-only plain binary search tree over the same keys: returns its height after the inserts.
fn unbalanced_height(keys: &[u32]) -> u32 {
    // (key, smaller, larger) with usize::MAX for none.
    let mut nodes: Vec<(u32, usize, usize)> = Vec::new();
    let mut height = 0;
    for &k in keys {
        let mut depth = 1;
        if !nodes.is_empty() {
            let mut x = 0;
            loop {
                depth += 1;
                let n = nodes.len();
                let next = if k < nodes[x].0 { &mut nodes[x].1 } else { &mut nodes[x].2 };
                if *next == usize::MAX {
                    *next = n;
                    break;
                }
                x = *next;
            }
        }
        nodes.push((k, usize::MAX, usize::MAX));
        height = height.max(depth);
    }
    height
}

/// Fills the heap with `sizes` (in blocks, cycled) and frees every other allocation in increasing address
/// order, or decreasing if `down`; returns (free runs, balanced height, unbalanced height on the same keys).
fn adversarial_heights(len: usize, sizes: &[usize], down: bool) -> (u32, u32, u32) {
    let mut w = region(len);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let mut live = Vec::new();
    let mut i = 0;
    loop {
        let blocks = sizes[i % sizes.len()];
        match h.alloc(blocks * 8, 8) {
            Ok(p) => live.push(p),
            Err(_) => match h.alloc(8, 8) {
                Ok(p) => live.push(p),
                Err(_) => break,
            },
        }
        i += 1;
    }
    assert_eq!(h.stats().free_runs, 0);
    let mut order: Vec<usize> = (0..live.len()).step_by(2).collect();
    if down {
        order.reverse();
    }
    let mut keys = Vec::new();
    for &j in &order {
        let b = block_of(&h, live[j]);
        h.free(live[j]).unwrap();
        keys.push(h.key(b));
    }
    ok(&h);
    let n = h.stats().free_runs;
    assert_eq!(n as usize, order.len());
    (n, h.tree_height(), unbalanced_height(&keys))
}

#[test]
#[cfg_attr(miri, ignore = "a measurement; props_adversarial drives the same tree code under Miri")]
fn tree_height_on_adversarial_patterns() {
    println!("| heap | pattern | free runs | red-black height | unbalanced BST height | 2·log2(n+1) |");
    for len in [4096, 65536, 524288] {
        // 1-block allocations, every other freed upwards / downwards; a staircase 1, 2, 3… blocks with
        // 1-block separators (steps freed smallest first, so sizes rise).
        let stair: Vec<usize> = (1..400).flat_map(|k| [k, 1]).collect();
        for (name, sizes, down) in [("singles, up", &[1][..], false), ("singles, down", &[1][..], true), ("staircase", &stair[..], false)] {
            let (n, balanced, unbalanced) = adversarial_heights(len, sizes, down);
            let bound = 2.0 * ((n + 1) as f64).log2();
            println!("| {len} | {name} | {n} | {balanced} | {unbalanced} | {bound:.1} |");
            assert!(balanced as f64 <= bound, "height {balanced} for {n} runs");
            assert!(unbalanced >= n / 2);
        }
    }
}

#[test]
fn block_reports_each_managed_block_as_the_map_has_it() {
    let mut words = region(4096);
    let mut h = Heap::new(bytes(&mut words)).unwrap();
    let a = h.alloc(24, 8).unwrap();
    let b = h.alloc(8, 8).unwrap();
    h.free(a).unwrap();
    let managed = (h.capacity() / 8) as u32;
    let (ia, ib) = (block_of(&h, a) - h.first, block_of(&h, b) - h.first);
    // `a`'s three blocks are free again, `b` is a one-block run (its only block is its end), the rest free.
    assert_eq!([ia, ia + 1, ia + 2].map(|i| h.block(i)), [Some(Block::Free); 3]);
    assert_eq!(h.block(ib), Some(Block::UsedEnd));
    let c = h.alloc(16, 8).unwrap();
    let ic = block_of(&h, c) - h.first;
    assert_eq!((h.block(ic), h.block(ic + 1)), (Some(Block::Used), Some(Block::UsedEnd)));
    assert_eq!(h.block(managed - 1), Some(Block::Free));
    assert_eq!(h.block(managed), None);
}
