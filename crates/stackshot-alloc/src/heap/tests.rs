//! Host tests: layout and overhead, bad input, alignment, merging, the checker catching each broken
//! invariant, the adapters, the property drivers over several heap sizes, and the tree height on adversarial
//! patterns against a plain unbalanced tree.

extern crate alloc;
extern crate std;

use super::bins::BINNED;
use super::map::{FREE, LAST, SPARE, USED};
use super::props::{self, PropReport};
use super::tree::{self, NIL};
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
    assert_eq!((s.failed_requests, s.bad_frees, s.peak_used), (5, 6, 3968));
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

/// The free runs `stats` counts in the map, against the runs a walk of the map finds, on regions whose last map
/// word is full and part-full, with free runs touching both ends of the heap.
#[test]
fn stats_counts_the_free_runs_the_map_holds() {
    let lens: &[usize] = if cfg!(miri) { &[256, 400] } else { &[256, 400, 1000, 4096, 4104, 6000] };
    for &len in lens {
        let mut w = region(len);
        let mut h = Heap::new(bytes(&mut w)).unwrap();
        let mut ptrs = Vec::new();
        while let Ok(p) = h.alloc(8 + 8 * (ptrs.len() % 3), 8) {
            ptrs.push(p);
        }
        let mut k = 0;
        while k < ptrs.len() {
            h.free(ptrs[k]).unwrap();
            let walked = runs_by_map(&h).iter().filter(|&&(used, _, _)| !used).count() as u32;
            assert_eq!(h.stats().free_runs, walked, "region {len}, after {} frees", k + 1);
            k += if k % 2 == 0 { 3 } else { 1 };
        }
    }
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

/// A free finds its run's end and the block after it in the map at every place in a word: runs of 1 to 50
/// blocks (one map word to five) from each of a word's 16 codes, with a free run below or not, and after them a
/// used run, a binned free run or a tree run whose node is red.
#[test]
fn free_reads_the_run_end_and_the_block_after_at_every_code() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum After {
        Used,
        Binned,
        RedTree,
    }
    let mut w = region(4096);
    let (starts, lens): (Vec<u32>, Vec<u32>) = if cfg!(miri) {
        (vec![0, 1, 15], vec![1, 15, 16, 17, 32, 33, 49])
    } else {
        ((0..16).collect(), (1..=50).collect())
    };
    for &start in &starts {
        for &n in &lens {
            for below_free in [false, true] {
                for after in [After::Used, After::Binned, After::RedTree] {
                    let mut h = Heap::new(bytes(&mut w)).unwrap();
                    let after_len = if after == After::RedTree { 40 } else { 2 };
                    let _front = h.alloc(8 * 16, 8).unwrap();
                    let below = if start > 0 { Some(h.alloc(8 * start as usize, 8).unwrap()) } else { None };
                    let run = h.alloc(8 * n as usize, 8).unwrap();
                    let next = h.alloc(8 * after_len as usize, 8).unwrap();
                    let _guard = h.alloc(8, 8).unwrap();
                    // A tree run freed before `next`: `next` then goes in as its red child.
                    let spare = h.alloc(8 * 40, 8).unwrap();
                    let _back = h.alloc(8, 8).unwrap();
                    let mut start_block = block_of(&h, run);
                    let mut size = n;
                    let mut used = 16 + 1 + 1 + start + after_len + 40;
                    if below_free && let Some(p) = below {
                        h.free(p).unwrap();
                        start_block -= start;
                        size += start;
                        used -= start;
                    }
                    if after == After::RedTree {
                        h.free(spare).unwrap();
                        used -= 40;
                    }
                    if after != After::Used {
                        h.free(next).unwrap();
                        size += after_len;
                        used -= after_len;
                    }
                    let at = alloc::format!("start {start}, {n} blocks, below free {below_free}, after {after:?}");
                    assert!(after != After::RedTree || h.is_red(block_of(&h, next)), "{at}: not a red node after");
                    h.free(run).unwrap();
                    ok(&h);
                    assert_eq!(h.size(start_block), size, "{at}");
                    assert_eq!(h.stats().used_bytes, 8 * used, "{at}");
                }
            }
        }
    }
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

/// A heap with many free runs of varied sizes, too large for the bins (a deep tree with red and black nodes),
/// kept as the live pointers and the heap.
fn fragmented(w: &mut [u64]) -> (Heap<'_>, Vec<NonNull<u8>>) {
    let mut h = Heap::new(bytes(w)).unwrap();
    let mut live = Vec::new();
    let mut holes = Vec::new();
    let mut i = 0;
    while let Ok(p) = h.alloc(8 * (BINNED as usize + 1 + i % 5), 8) {
        if i % 2 == 0 {
            holes.push(p)
        } else {
            live.push(p)
        }
        i += 1;
    }
    for p in holes {
        h.free(p).unwrap();
    }
    ok(&h);
    (h, live)
}

/// A heap with one free run besides the top: 40 blocks (a tree run) between two used blocks; and its block.
fn tree_run_of_40(w: &mut [u64]) -> (Heap<'_>, u32) {
    let mut h = Heap::new(bytes(w)).unwrap();
    let _a = h.alloc(8, 8).unwrap();
    let b = h.alloc(8 * 40, 8).unwrap();
    let _c = h.alloc(8, 8).unwrap();
    h.free(b).unwrap();
    ok(&h);
    let f = block_of(&h, b);
    assert_eq!((h.root(), h.size(f)), (f, 40));
    (h, f)
}

#[test]
fn a_split_takes_the_top_only_when_it_is_smaller_than_the_bins_run() {
    // A binned run of 5 blocks and a top of `top` blocks; a 2-block request splits one of them. The best fit is
    // the smaller; on a tie the binned run, which comes first (the top ends the heap).
    for (top, takes_top) in [(4, true), (5, false), (6, false), (1, false), (0, false)] {
        let mut w = region(4096);
        let (mut h, run) = run_and_top(&mut w, 5, top);
        assert_eq!(h.binned, 1 << 5);
        let p = h.alloc(16, 8).unwrap();
        ok(&h);
        let expect = if takes_top { h.end - top } else { run };
        assert_eq!(block_of(&h, p), expect, "top of {top} blocks");
    }
}

/// A heap whose free runs are one of `size` blocks, followed by a used block, and the top, of `top` blocks: the
/// run's first block.
fn run_and_top(w: &mut [u64], size: u32, top: u32) -> (Heap<'_>, u32) {
    let mut h = Heap::new(bytes(w)).unwrap();
    let run = h.alloc(8 * size as usize, 8).unwrap();
    let _gap = h.alloc(8, 8).unwrap();
    let _rest = h.alloc(h.capacity() - 8 * (size + 1 + top) as usize, 8).unwrap();
    h.free(run).unwrap();
    assert_eq!(h.end - h.top, top);
    let b = block_of(&h, run);
    (h, b)
}

#[test]
fn the_tree_serves_before_the_top_unless_the_top_is_smaller() {
    // A tree run of 40 blocks and a top of `top` blocks; a request a bin could hold (1 block) and one it could
    // not (35 blocks) each split the smaller, and on a tie the tree run, which comes first (the top ends the
    // heap). The two requests take different paths through `alloc_tree`.
    for n in [1, 35] {
        for (top, takes_top) in [(39, true), (40, false), (41, false)] {
            let mut w = region(4096);
            let (mut h, run) = run_and_top(&mut w, 40, top);
            assert_eq!((h.root(), h.binned), (run, 0));
            let p = h.alloc(8 * n, 8).unwrap();
            ok(&h);
            let expect = if takes_top { h.end - top } else { run };
            assert_eq!(block_of(&h, p), expect, "{n} blocks, top of {top}");
        }
    }
}

/// A heap with no top whose tree holds runs of `sizes` blocks (each more than `BINNED`), freed in that order,
/// each followed by a used block: their first blocks, in that order.
fn tree_of<'a>(w: &'a mut [u64], sizes: &[u32]) -> (Heap<'a>, Vec<u32>) {
    let mut h = Heap::new(bytes(w)).unwrap();
    let mut runs = Vec::new();
    for &size in sizes {
        runs.push(h.alloc(8 * size as usize, 8).unwrap());
        let _gap = h.alloc(8, 8).unwrap();
    }
    let rest = h.capacity() - 8 * sizes.iter().map(|&s| s as usize + 1).sum::<usize>();
    let _rest = h.alloc(rest, 8).unwrap();
    assert_eq!(h.top, h.end, "no top");
    for p in runs.iter() {
        h.free(*p).unwrap();
    }
    ok(&h);
    let blocks = runs.iter().map(|&p| block_of(&h, p)).collect();
    (h, blocks)
}

#[test]
fn a_red_tree_node_split_in_place_hands_out_a_plain_used_block() {
    // Tree runs of 33, 34 and 35 blocks, freed in that order, each followed by a used block, and no top: the
    // tree is 34 (black root) with 33 and 35 red below it, and no bin or top serves a 1-byte request. That
    // request takes the first block of 33, the red node that is not the root: its node moves one block up (in
    // place, 32 blocks stay in the tree) and its colour with it. The colour byte is the first of the block the
    // moved node's links are written to: read after them, the node comes out with a wrong colour. Freeing the
    // block moves the node one block down again, whose colour byte is then the first of the node's old links.
    let mut w = region(4096);
    let (mut h, runs) = tree_of(&mut w, &[33, 34, 35]);
    let (a, b, c) = (runs[0], runs[1], runs[2]);
    assert_eq!((h.root(), h.is_red(a), h.is_red(b), h.is_red(c)), (b, true, false, true));
    assert_eq!(h.binned, 0);

    let p = h.alloc(1, 1).unwrap();
    assert_eq!(block_of(&h, p), a, "the best fit is the smallest tree run");
    ok(&h);
    assert_eq!(h.map_get(a), LAST);
    assert_eq!((h.size(a + 1), h.is_red(a + 1), h.parent(a + 1)), (32, true, b), "the node moved in place");
    h.free(p).unwrap();
    ok(&h);
    assert_eq!((h.size(a), h.stats().free_runs), (33, 3));
}

#[test]
fn the_smallest_tree_run_leaves_the_tree_in_each_shape() {
    // A 1-byte request with no bin to serve it takes the first block of the smallest tree run, of 32 blocks:
    // the 31 left go to a bin, so the node leaves the tree by `remove_smallest`, one case per shape of it (it
    // has no smaller child): (is it the root, is it red, has it a larger child). Only the black leaf below the
    // root needs rebalancing. The block handed out is a plain `LAST`, even from a red node. Each case: the
    // tree runs in the order freed, and the 32-block run's shape.
    type Case = (&'static [u32], (bool, bool, bool));
    let cases: [Case; 5] = [
        (&[32], (true, false, false)),
        (&[32, 33], (true, false, true)),
        (&[40, 32, 41, 33], (false, false, true)),
        (&[33, 32, 34], (false, true, false)),
        (&[40, 32, 41, 42], (false, false, false)),
    ];
    for (sizes, shape) in cases {
        let mut w = region(4096);
        let (mut h, blocks) = tree_of(&mut w, sizes);
        let s = blocks[sizes.iter().position(|&n| n == 32).unwrap()];
        assert_eq!((h.root() == s, h.is_red(s), h.larger(s) != NIL), shape, "{sizes:?}: the smallest's shape");
        assert_eq!(h.smaller(s), NIL);
        let p = h.alloc(1, 1).unwrap();
        assert_eq!(block_of(&h, p), s, "{sizes:?}: the best fit is the smallest tree run");
        ok(&h);
        assert_eq!(h.map_get(s), LAST, "{sizes:?}");
        assert_eq!((h.size(s + 1), h.bin_head(31)), (31, s + 1), "{sizes:?}: the rest is binned");
        assert_eq!(h.stats().free_runs as usize, sizes.len(), "{sizes:?}");
        h.free(p).unwrap();
        ok(&h);
        assert_eq!((h.size(s), h.binned), (32, 0), "{sizes:?}: merged back into the tree");
    }
}

#[test]
fn a_node_that_grows_past_its_successor_alone_trades_places_with_it() {
    // A free merges a used run (`+`) into the tree run below or above it, whose key then passes exactly its successor
    // `s` in key order: the two exchange places (`tree_pass`, in the build without the `iwram` feature; with it, the
    // node is removed and inserted again), one case per way the two can stand in the tree and per block the merged
    // run starts at. The pass keeps the tree's shape and colours: the node at each place is the next in key order.
    // Each case: the heap's parts in address order, each a kind and a size in blocks (`T` a run freed into the tree,
    // in the order listed, `B` one freed into a bin, `U` a used run, `+` the run then freed), with no top; the tree's
    // keys after the merge, in order, as (size, index of the part the run starts at).
    type Case = (&'static str, &'static str, &'static [(u32, usize)]);
    let cases: [Case; 7] = [
        // The root, with two children, passes its larger child, a leaf.
        ("root past its child", "T40 +6 U1 T36 U1 T44 U1", &[(36, 3), (44, 5), (46, 0)]),
        // A node with two children below the root passes its larger child, a leaf.
        (
            "inner node past its child",
            "T50 U1 T40 +6 U1 T60 U1 T36 U1 T44 U1",
            &[(36, 7), (44, 9), (46, 2), (50, 0), (60, 5)],
        ),
        // The root passes the leftmost node of its larger side, which is not its child.
        (
            "root past a grandchild",
            "T50 +7 U1 T40 U1 T60 U1 T36 U1 T44 U1 T55 U1",
            &[(36, 7), (40, 3), (44, 9), (55, 11), (57, 0), (60, 5)],
        ),
        // A leaf, its parent's smaller child, passes its parent, the root.
        ("leaf past its parent", "T40 U1 T36 +6 U1 T44 U1", &[(40, 0), (42, 2), (44, 5)]),
        // A leaf passes an ancestor above its parent.
        (
            "leaf past its grandparent",
            "T50 U1 T40 U1 T60 U1 T36 U1 T44 +8 U1",
            &[(36, 6), (40, 2), (50, 0), (52, 8), (60, 4)],
        ),
        // The merged run starts one block before the node: its colour byte is the node's first link.
        ("run starting a block before", "U1 +1 T40 U1 T36 U1 T40 U1", &[(36, 4), (40, 6), (41, 1)]),
        // The merged run starts at a binned run below the node.
        ("run starting at a binned run", "B3 +1 T40 U1 T36 U1 T42 U1", &[(36, 4), (42, 6), (44, 0)]),
    ];
    for (name, layout, keys) in cases {
        let parts: Vec<(char, usize)> =
            layout.split(' ').map(|part| (part.chars().next().unwrap(), part[1..].parse().unwrap())).collect();
        let mut w = region(4096);
        let mut h = Heap::new(bytes(&mut w)).unwrap();
        let ptrs: Vec<NonNull<u8>> = parts.iter().map(|&(_, n)| h.alloc(8 * n, 8).unwrap()).collect();
        let _rest = h.alloc(h.capacity() - 8 * parts.iter().map(|&(_, n)| n).sum::<usize>(), 8).unwrap();
        assert_eq!(h.top, h.end, "{name}: no top");
        for (&(kind, _), &p) in parts.iter().zip(&ptrs) {
            if kind == 'T' || kind == 'B' {
                h.free(p).unwrap();
            }
        }
        ok(&h);
        let shape = tree_shape(&h);
        let plus = parts.iter().position(|&(kind, _)| kind == '+').unwrap();
        let passes = tree::PASSES.with(|n| n.get());
        h.free(ptrs[plus]).unwrap();
        ok(&h);
        let want: Vec<(u32, u32)> = keys.iter().map(|&(n, i)| (n, block_of(&h, ptrs[i]))).collect();
        assert_eq!(in_order(&h).iter().map(|&x| (h.size(x), x)).collect::<Vec<_>>(), want, "{name}: the keys");
        // With the `iwram` feature the node is removed and inserted again instead: the same keys, another shape.
        if !cfg!(feature = "iwram") {
            assert_eq!(tree::PASSES.with(|n| n.get()), passes + 1, "{name}: one pass");
            assert_eq!(tree_shape(&h), shape, "{name}: the shape and colours");
        }
    }
}

/// The tree's nodes in key order.
fn in_order(h: &Heap) -> Vec<u32> {
    let mut nodes = Vec::new();
    let mut x = h.smallest();
    while x != NIL {
        nodes.push(x);
        x = h.successor(x);
    }
    nodes
}

/// The tree's shape, by place in key order: each node's parent's place (None for the root) and colour.
fn tree_shape(h: &Heap) -> Vec<(Option<usize>, bool)> {
    let nodes = in_order(h);
    nodes.iter().map(|&x| (nodes.iter().position(|&y| y == h.parent(x)), h.is_red(x))).collect()
}

/// A node with a parent and, if asked, its own children, satisfying `pred`.
fn find_node(h: &Heap, pred: impl Fn(&Heap, u32) -> bool) -> u32 {
    // Tree runs only: a binned run's or the top's fields are not a node's, and `pred` may follow them.
    (h.first..h.top)
        .find(|&b| {
            h.map_get(b) & 1 == 0 && (b == h.first || h.map_get(b - 1) & 1 == 1) && h.size(b) > BINNED && pred(h, b)
        })
        .expect("no such node")
}

#[test]
fn checker_names_each_broken_invariant_and_block() {
    use InvariantKind::*;
    let expect = |h: &Heap, kind, block| assert_eq!(h.check(), Err(Invariant { kind, block }));

    // Header.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    h.set_header(HDR_COUNT, 495);
    expect(&h, Header, 0);

    // Child link out of range.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let r = h.root();
    poke(&mut h, r, SMALLER, 0xFFFF);
    expect(&h, NodeOutOfRange, 0xFFFF);

    // A node marked used.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let x = h.smaller(h.root());
    h.map_set(x, USED);
    expect(&h, NodeNotFree, x);

    // A node whose block before it is free: make the used run in front of it free in the map.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let x = find_node(&h, |h, b| b > h.first && h.map_get(b - 1) == LAST);
    h.map_set(x - 1, FREE);
    expect(&h, NodeNotRunStart, x);

    // Parent link.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let x = h.larger(h.root());
    poke(&mut h, x, PARENT, x as u16);
    expect(&h, ParentLink, x);

    // Order: the smallest node claims a huge size.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let mut x = h.root();
    while h.smaller(x) != NIL {
        x = h.smaller(x);
    }
    poke(&mut h, x, SIZE, 400);
    expect(&h, Order, x);

    // Red root.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let r = h.root();
    h.set_red(r, true);
    expect(&h, RedRoot, r);

    // Red-red: a black node below a red one turned red.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let x = find_node(&h, |h, b| h.is_red(h.parent(b)) && !h.is_red(b));
    h.set_red(x, true);
    expect(&h, RedRed, x);

    // Black height: a red node turned black; its parent's two sides then differ.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    let x = find_node(&h, |h, b| h.is_red(b));
    let p = h.parent(x);
    h.set_red(x, false);
    expect(&h, BlackHeight, p);

    // Unbalanced: relink all nodes into one chain (ordered, parents right, all black) deeper than allowed.
    let mut w = region(32768);
    let (mut h, _) = fragmented(&mut w);
    let mut nodes: Vec<u32> = (h.first..h.end)
        .filter(|&b| h.map_get(b) & 1 == 0 && (b == h.first || h.map_get(b - 1) & 1 == 1) && h.size(b) > BINNED)
        .collect();
    nodes.sort_by_key(|&b| h.key(b));
    assert!(nodes.len() > 40);
    for (i, &b) in nodes.iter().enumerate() {
        poke(&mut h, b, SMALLER, 0);
        poke(&mut h, b, 2, if i + 1 < nodes.len() { nodes[i + 1] as u16 } else { 0 });
        poke(&mut h, b, PARENT, if i > 0 { nodes[i - 1] as u16 } else { 0 });
        h.set_red(b, false);
    }
    h.set_header(HDR_ROOT, nodes[0]);
    expect(&h, Unbalanced, nodes[32]);

    // Unterminated: the last used run of a full heap loses its end mark.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let p = h.alloc(3968, 8).unwrap();
    h.map_set(h.end - 1, USED);
    expect(&h, Unterminated, block_of(&h, p));

    // A free run of 40 blocks between used ones (the top holds no size to break): it claims more blocks than
    // the heap has.
    let mut w = region(4096);
    let (mut h, f) = tree_run_of_40(&mut w);
    let past = (h.end - f + 1) as u16;
    poke(&mut h, f, SIZE, past);
    expect(&h, BadSize, f);

    // Used block inside a free run, and the spare code there, and at its first block (a tree node).
    let mut w = region(4096);
    let (mut h, f) = tree_run_of_40(&mut w);
    h.map_set(f + 7, USED);
    expect(&h, UsedInFreeRun, f + 7);
    h.map_set(f + 7, SPARE);
    expect(&h, SpareCode, f + 7);
    h.map_set(f + 7, FREE);
    h.map_set(f, SPARE);
    expect(&h, SpareCode, f);

    // Size copy.
    let mut w = region(4096);
    let (mut h, f) = tree_run_of_40(&mut w);
    poke(&mut h, f + 39, SIZE, 5);
    expect(&h, SizeCopy, f + 39);

    // Two free runs touch: the run claims one block less (copy moved along), leaving a free block after.
    let mut w = region(4096);
    let (mut h, f) = tree_run_of_40(&mut w);
    poke(&mut h, f, SIZE, 39);
    poke(&mut h, f + 38, SIZE, 39);
    expect(&h, FreeRunsTouch, f + 39);

    // A used run marked free in the map (with a valid size) but not in the tree, or (small) not in its bin.
    for (blocks, kind) in [(BINNED + 5, RunNotInTree), (3, RunNotInBin)] {
        let mut w = region(4096);
        let mut h = Heap::new(bytes(&mut w)).unwrap();
        let _a = h.alloc(8, 8).unwrap();
        let b = h.alloc(8 * blocks as usize, 8).unwrap();
        let _c = h.alloc(8, 8).unwrap();
        let bb = block_of(&h, b);
        for i in 0..blocks {
            h.map_set(bb + i, FREE);
        }
        poke(&mut h, bb, SIZE, blocks as u16);
        poke(&mut h, bb + blocks - 1, SIZE, blocks as u16);
        expect(&h, kind, bb);
    }

    // Bins: three 2-block runs in bin 2 (the last freed first), between used blocks; a prev link that names
    // another entry, a mask bit cleared, a loop, a list cut short; and a binned run put in the tree.
    for case in 0..5 {
        let mut w = region(4096);
        let mut h = Heap::new(bytes(&mut w)).unwrap();
        let p: Vec<_> = (0..6).map(|_| h.alloc(16, 8).unwrap()).collect();
        for i in [0, 2, 4] {
            h.free(p[i]).unwrap();
        }
        ok(&h);
        let (head, second, third) = (block_of(&h, p[4]), block_of(&h, p[2]), block_of(&h, p[0]));
        assert_eq!((h.bin_head(2), h.bin_next(head), h.bin_next(second)), (head, second, third));
        match case {
            0 => {
                poke(&mut h, third, 2, head as u16);
                expect(&h, BinLink, third);
            }
            1 => {
                h.binned &= !(1 << 2);
                expect(&h, BinLink, 0);
            }
            2 => {
                poke(&mut h, second, 0, second as u16);
                expect(&h, BinLink, second);
            }
            3 => {
                poke(&mut h, second, 0, 0);
                expect(&h, RunNotInBin, third);
            }
            _ => {
                h.bin_unlink(second, 2);
                h.tree_insert(second);
                expect(&h, SmallInTree, second);
            }
        }
    }

    // The top given a node, as if a free had put it in the tree.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let _a = h.alloc(8, 8).unwrap();
    let b = h.alloc(24, 8).unwrap();
    let _c = h.alloc(8, 8).unwrap();
    h.free(b).unwrap();
    let top = h.top;
    h.make_run(top, h.end - top);
    h.tree_insert(top);
    expect(&h, TopInTree, top);

    // The top's first block put in a bin, as if a free had filed it there with a size short of the end.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let _a = h.alloc(8, 8).unwrap();
    let top = h.top;
    h.bin_push(top, 3);
    expect(&h, BinLink, top);

    // The top's first block with the spare code.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let _a = h.alloc(8, 8).unwrap();
    let top = h.top;
    h.map_set(top, SPARE);
    expect(&h, SpareCode, top);

    // Counters.
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    h.used_blocks += 1;
    expect(&h, Stats, 0);

    // The top's first block, kept beside the map, names another block.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let _a = h.alloc(8, 8).unwrap();
    h.top += 1;
    expect(&h, Stats, 0);
}

/// What the fast paths must keep of the top, the free run that ends the heap and has no node: an allocation
/// from it leaves the rest as the top, a free behind a used block makes it the top, and a free that touches the
/// top joins it, with the free run below it if any.
#[test]
fn the_top_stays_out_of_the_tree() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    assert_eq!((h.root(), h.top), (NIL, h.first));
    let blocks = BINNED + 1;
    let p: Vec<_> = (0..4).map(|_| h.alloc(blocks as usize * 8, 8).unwrap()).collect();
    assert_eq!((h.root(), h.top), (NIL, h.first + 4 * blocks));
    h.free(p[1]).unwrap(); // a run with a node
    assert_eq!(h.root(), block_of(&h, p[1]));
    h.free(p[3]).unwrap(); // joins the top
    assert_eq!(h.top, block_of(&h, p[3]));
    h.free(p[2]).unwrap(); // merges with the run below and the top: the tree is empty again
    assert_eq!((h.root(), h.top), (NIL, block_of(&h, p[1])));
    ok(&h);
    // Filled to the last block, the heap has no top; freeing the last run makes it the top again.
    let rest = h.alloc(h.stats().largest_free as usize, 8).unwrap();
    assert_eq!((h.top, h.stats().free_runs), (h.end, 0));
    ok(&h);
    h.free(rest).unwrap();
    assert_eq!((h.top, h.stats().free_runs), (block_of(&h, p[1]), 1));
    ok(&h);
}

/// A test lock for the host: spins on an atomic flag (the heap's calls are short).
struct Spin(core::sync::atomic::AtomicBool);

// SAFETY: a compare-exchange from false to true succeeds for one holder at a time; unlock stores false with
// release ordering, so the next holder sees every write the last one made.
unsafe impl lock_api::RawMutex for Spin {
    #[allow(clippy::declare_interior_mutable_const, reason = "`lock_api::RawMutex::INIT` is a const by its trait")]
    const INIT: Self = Spin(core::sync::atomic::AtomicBool::new(false));
    type GuardMarker = lock_api::GuardSend;
    fn lock(&self) {
        while !self.try_lock() {
            core::hint::spin_loop();
        }
    }
    fn try_lock(&self) -> bool {
        use core::sync::atomic::Ordering::{Acquire, Relaxed};
        self.0.compare_exchange(false, true, Acquire, Relaxed).is_ok()
    }
    unsafe fn unlock(&self) {
        self.0.store(false, core::sync::atomic::Ordering::Release);
    }
}

type Locked<'a> = LockedHeap<'a, Spin>;

#[cfg(feature = "allocator-api")]
#[test]
fn allocator_api_and_global_alloc() {
    let mut w = region(4096);
    let locked = Locked::new();
    assert_eq!(locked.with(|_| ()), Err(LockError::NotInitialised));
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
        assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(40 + 200 + 64));
        assert_eq!(locked.with(|h| h.check()), Ok(Ok(())));
        // A failing request is an error, not a panic.
        assert!(Vec::<u8, _>::try_with_capacity_in(5000, &locked).is_err());
    }
    assert_eq!(locked.with(|h| h.stats().free_runs), Ok(1));
    // Re-entry is refused rather than aliasing the heap.
    assert_eq!(locked.with(|_| locked.with(|_| ())), Ok(Err(LockError::Busy)));

    // GlobalAlloc, including alignment and a bad dealloc that is only counted.
    let layout = Layout::from_size_align(100, 64).unwrap();
    // SAFETY: non-zero size; each pointer is freed once, with the layout it was allocated with.
    unsafe {
        let p = locked.alloc(layout);
        assert!(!p.is_null() && (p as usize).is_multiple_of(64));
        locked.dealloc(p.add(8), layout);
        assert_eq!(locked.with(|h| h.stats().bad_frees), Ok(1));
        locked.dealloc(p, layout);
        let big = locked.alloc(Layout::from_size_align(8, 128).unwrap());
        assert!(!big.is_null() && (big as usize).is_multiple_of(128));
        locked.dealloc(big, layout);
        // Growing or shrinking a freed block (misaligned for the new alignment too) is refused and counted once,
        // and nothing is read or freed.
        let (small, wide) = (Layout::from_size_align(16, 8).unwrap(), Layout::from_size_align(32, 256).unwrap());
        let freed = NonNull::new(p).unwrap();
        assert!(core::alloc::Allocator::grow(&locked, freed, small, Layout::from_size_align(64, 8).unwrap()).is_err());
        assert!(core::alloc::Allocator::grow(&locked, freed.add(8), small, wide).is_err());
        assert!(core::alloc::Allocator::shrink(&locked, freed, layout, small).is_err());
        assert_eq!(locked.with(|h| (h.stats().bad_frees, h.stats().used_bytes)), Ok((4, 0)));
    }
    assert_eq!(locked.with(|h| h.check()), Ok(Ok(())));
    // A second heap is refused.
    let mut w2 = region(64);
    assert!(locked.init(Heap::new(bytes(&mut w2)).unwrap()).is_err());
}

fn run(
    name: &str,
    driver: fn(&mut [u8], u32, u32) -> Result<PropReport, props::PropFailure>,
    len: usize,
    seeds: u32,
    ops: u32,
) -> u64 {
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
    let total: u64 =
        SIZES.iter().map(|&len| run("adversarial", props::adversarial, len, 4, ops_for(len, BUDGET))).sum();
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
        for (name, sizes, down) in
            [("singles, up", &[1][..], false), ("singles, down", &[1][..], true), ("staircase", &stair[..], false)]
        {
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

// Issue 11, item 3: the adapter gives safe code the heap read-only, so a block a `Box` owns cannot be freed
// behind its back (`free` needs `&mut Heap`). A compile-time property, kept by a `compile_fail` doc test on
// `LockedHeap::with`; this test checks the runtime side: `with` hands out `&Heap`, and the Box stays intact.
#[test]
fn item3_the_adapter_lends_the_heap_read_only() {
    let mut w = region(256);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let a = locked.boxed(0xAAAA_AAAAu32).unwrap();
    let b = locked.boxed(0xBBBB_BBBBu32).unwrap();
    let seen: fn(&Heap) -> u32 = |h| h.stats().used_bytes;
    assert_eq!(locked.with(seen), Ok(16));
    assert_ne!(&raw const *a, &raw const *b);
    assert_eq!((*a, *b), (0xAAAA_AAAA, 0xBBBB_BBBB));
}

// Issue 11, item 4: `LockedHeap` is `Sync` only over a real lock; two threads hammering it leave it intact.
#[test]
fn item4_two_threads_share_the_heap_through_its_lock() {
    let mut w = region(4096);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let rounds = if cfg!(miri) { 30 } else { 5_000 };
    std::thread::scope(|s| {
        for t in 0..2u8 {
            let locked = &locked;
            s.spawn(move || {
                for i in 0..rounds {
                    let mut v = [0u8; 40];
                    v.iter_mut().enumerate().for_each(|(k, x)| *x = (k + i) as u8 ^ t);
                    let b = locked.boxed(v).unwrap();
                    let small = locked.boxed(i as u8).unwrap();
                    assert!(b.iter().enumerate().all(|(k, &x)| x == (k + i) as u8 ^ t));
                    assert_eq!(*small, i as u8);
                }
            });
        }
    });
    assert_eq!(locked.with(|h| h.check()), Ok(Ok(())));
    assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(0));
}

// Issue 11, item 9: a panic while the lock is held (here inside `with`) releases it on unwind.
#[test]
fn item9_a_panic_inside_the_lock_releases_it() {
    let mut w = region(256);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| locked.with(|_| panic!("inside the lock"))));
    assert!(r.is_err());
    let b = locked.boxed(5u64).expect("the heap is usable after the panic");
    assert_eq!(*b, 5);
    assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(8));
}

// A `HeapBox` whose value's `drop` panics still frees its block on the way out, as `Box::new_in` does.
#[test]
fn a_box_whose_drop_panics_frees_its_block() {
    struct Panics(#[allow(dead_code, reason = "only its size matters")] [u8; 40]);
    impl Drop for Panics {
        fn drop(&mut self) {
            panic!("the value's drop panics");
        }
    }
    let mut w = region(256);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let b = locked.boxed(Panics([0; 40])).ok().unwrap();
    assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(40));
    assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(b))).is_err());
    assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(0), "the block leaked");
    assert_eq!(locked.with(|h| (h.stats().bad_frees, h.check())), Ok((0, Ok(()))));
}

// Issue 11, item 7: resizing in place. The one block that fills the heap shrinks (`shrink_to_fit` needs it),
// and a `Vec` built by `push` grows into the free run behind it instead of needing a second run.
#[cfg(feature = "allocator-api")]
#[test]
fn item7_vectors_grow_and_shrink_in_place() {
    let mut w = region(4096);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let mut v: Vec<u64, _> = Vec::new_in(&locked);
    while v.try_reserve(1).is_ok() {
        v.push(v.len() as u64);
    }
    // Doubling reaches 256 u64s (2 KB; the next doubling, 4 KB, is more than the heap), each step growing
    // into the free run behind the block; an exact reservation then takes the rest of the heap.
    assert_eq!(v.len(), 256);
    v.try_reserve_exact(3968 / 8 - 256).expect("the rest of the heap, in place");
    while v.len() < v.capacity() {
        v.push(v.len() as u64);
    }
    assert_eq!(v.len(), 496);
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    v.truncate(10);
    v.shrink_to_fit();
    assert_eq!(v.capacity(), 10);
    assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(80));
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    assert_eq!(locked.with(|h| h.check()), Ok(Ok(())));
    drop(v);
    assert_eq!(locked.with(|h| h.stats().free_runs), Ok(1));
}

#[test]
fn item7_the_heap_resizes_in_place() {
    // A full heap's single block shrinks, then grows back; GlobalAlloc's realloc does the same.
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let p = h.alloc(3968, 8).unwrap();
    assert_eq!(h.resize(p, 100), Ok(()));
    ok(&h);
    assert_eq!(h.stats().used_bytes, 104);
    let q = h.alloc(64, 8).unwrap();
    assert_eq!(h.resize(p, 200), Err(HeapError::OutOfMemory), "q is right behind p");
    assert_eq!(h.stats().used_bytes, 104 + 64);
    h.free(q).unwrap();
    assert_eq!(h.resize(p, 3968), Ok(()));
    ok(&h);
    assert_eq!(h.resize(p, 0), Err(HeapError::ZeroSize));
    // Past the capacity it can never fit, as `alloc` says.
    assert_eq!(h.resize(p, 3969), Err(HeapError::TooLarge));
    assert_eq!(h.resize(p, usize::MAX), Err(HeapError::TooLarge));
    // A bad pointer is refused as a bad pointer and counted, whatever the size.
    let inside = NonNull::new(p.as_ptr().wrapping_add(8)).unwrap();
    let bad = h.stats().bad_frees;
    assert_eq!(h.resize(inside, 8), Err(HeapError::NotRunStart));
    assert_eq!(h.resize(inside, 0), Err(HeapError::NotRunStart));
    assert_eq!(h.resize(inside, usize::MAX), Err(HeapError::NotRunStart));
    assert_eq!(h.stats().bad_frees, bad + 3);
    ok(&h);
    let mut w = region(4096);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let full = Layout::from_size_align(3968, 8).unwrap();
    // SAFETY: each pointer is live when resized or freed, with the layout it has then.
    unsafe {
        let p = locked.alloc(full);
        p.write(42);
        let q = locked.realloc(p, full, 16);
        assert_eq!((q, *q), (p, 42), "shrunk in place");
        let r = locked.realloc(q, Layout::from_size_align(16, 8).unwrap(), 3968);
        assert_eq!((r, *r), (p, 42), "grown back in place");
        locked.dealloc(r, full);
        // A freed block (the whole heap is free) is refused and counted once, not moved into a block of its own.
        assert_eq!(locked.realloc(r, full, 16), core::ptr::null_mut());
        assert_eq!(locked.with(|h| (h.stats().bad_frees, h.stats().used_bytes)), Ok((1, 0)));
    }
    assert_eq!(locked.with(|h| h.check()), Ok(Ok(())));
}

// Issue 11, item 6: alignment is placed by the run's real address, so what fits is served; what never fits is
// `TooLarge`.
#[test]
fn item6_aligned_requests_that_fit_are_served() {
    // A 4 KB region whose managed area starts 128 bytes past a 256-aligned base (`first` is 16 blocks).
    #[repr(align(256))]
    struct Aligned([u8; 4096]);
    let mut r = Box::new(Aligned([0; 4096]));
    let mut h = Heap::new(&mut r.0).unwrap();
    assert_eq!(h.capacity(), 3968);
    let p = h.alloc(3968, 16).expect("the whole heap is 16-aligned");
    assert!((p.as_ptr() as usize).is_multiple_of(16));
    h.free(p).unwrap();
    // Managed blocks start at base + 128: 128-aligned; the first 256-aligned address is 128 bytes in.
    assert_eq!(h.alloc(3968 - 127, 256), Err(HeapError::TooLarge));
    assert_eq!(h.stats().free_runs, 1);
    // A fragmented heap: the heap filled with 8-byte blocks, then holes of exactly 64 bytes freed at
    // 64-aligned addresses, with used blocks on both sides.
    let blocks: Vec<_> = (0..496).map(|_| h.alloc(8, 8).unwrap()).collect();
    let mut holes = Vec::new();
    for (i, p) in blocks.iter().enumerate() {
        if (p.as_ptr() as usize).is_multiple_of(64)
            && i + 8 < blocks.len()
            && holes.len() < 5
            && holes.last().is_none_or(|&(j, _)| i >= j + 16)
        {
            holes.push((i, *p));
        }
    }
    for &(i, _) in &holes {
        for p in &blocks[i..i + 8] {
            h.free(*p).unwrap();
        }
    }
    ok(&h);
    assert_eq!(h.stats().largest_free, 64);
    // Each request gets one of the holes (binned: the last freed first).
    let mut got: Vec<_> =
        holes.iter().map(|_| h.alloc(64, 64).expect("a 64-byte hole at a 64-aligned address")).collect();
    got.sort();
    assert_eq!(got, holes.iter().map(|&(_, p)| p).collect::<Vec<_>>());
    assert_eq!(h.alloc(8, 8), Err(HeapError::OutOfMemory));
    ok(&h);
}

/// A zeroed 4 KB region at a 64-aligned address: managed block `b` is 16-aligned when `b` is even.
#[repr(C, align(64))]
struct Region64([u64; 512]);

#[test]
fn an_aligned_request_takes_the_smallest_run_that_holds_it() {
    // Heaps cut into runs of many sizes by random requests and frees; each request of 1 to 40 blocks aligned to
    // 16, 32 or 64 bytes must take a free run of the smallest size that holds it from its first aligned block:
    // binned, in the tree, or the top, which wins only when smaller (it ends the heap, so it comes last among
    // runs of its size). The bins are searched by their mask, and in a bin too small to hold the request at
    // any padding, run by run.
    let mut rng = crate::rng::Rng::new(14);
    let mut served = [0; 3];
    // Under Miri 25 heaps: 400 took about ten minutes under Tree Borrows alone (25: 30 s).
    let heaps = if cfg!(miri) { 25 } else { 400 };
    for _ in 0..heaps {
        let mut r = Box::new(Region64([0; 512]));
        let mut h = Heap::new(bytes(&mut r.0)).unwrap();
        let mut live = Vec::new();
        for _ in 0..80 {
            if live.is_empty() || rng.chance(60) {
                if let Ok(p) = h.alloc(8 * (1 + rng.below(48) as usize), 8) {
                    live.push(p);
                }
            } else {
                h.free(live.swap_remove(rng.below(live.len() as u32) as usize)).unwrap();
            }
        }
        for _ in 0..5 {
            let n = 1 + rng.below(40);
            let align = 16 << rng.below(3);
            let runs = runs_by_map(&h);
            let top = h.top;
            let holds = |b: u32, len: u32| h.pad_blocks(b, align) + n as usize <= len as usize;
            let best =
                runs.iter().filter(|&&(used, b, len)| !used && holds(b, len)).map(|&(_, b, len)| (len, b == top)).min();
            let Ok(p) = h.alloc(8 * n as usize, align) else {
                assert_eq!(best, None, "refused, though a run holds {n} blocks at {align}");
                continue;
            };
            ok(&h);
            assert!((p.as_ptr() as usize).is_multiple_of(align));
            let b = block_of(&h, p);
            let &(_, start, len) = runs.iter().find(|&&(used, s, len)| !used && s <= b && b < s + len).unwrap();
            assert_eq!(Some((len, start == top)), best, "{n} blocks at {align}");
            served[if start == top {
                2
            } else if len > BINNED {
                1
            } else {
                0
            }] += 1;
            live.push(p);
        }
    }
    assert!(served.iter().all(|&k| k > heaps / 20), "served from bins, tree and top: {served:?}");
}

#[test]
fn an_aligned_split_of_a_tree_run_keeps_its_node_in_place() {
    // Tree runs of 80, 36, 120 and 200 blocks: 80 is the black root, 36 and 120 its black children, 200 a red
    // leaf. A 37-block request at 16 bytes fits 80 best, at its first block, which is aligned; what is left, in
    // the tree still and above 36, takes the root's node over in place, as an unaligned split does (removing
    // the root and inserting the rest would make 120 the root).
    let mut r = Box::new(Region64([0; 512]));
    let (mut h, blocks) = tree_of(&mut r.0, &[80, 36, 120, 200]);
    assert_eq!((h.root(), h.pad_blocks(blocks[0], 16)), (blocks[0], 0));
    let p = h.alloc(37 * 8, 16).unwrap();
    ok(&h);
    assert_eq!(block_of(&h, p), blocks[0]);
    let rest = blocks[0] + 37;
    assert_eq!((h.root(), h.size(rest)), (rest, 43), "the rest kept the root's node");
    // Not in place when the rest would come before a run passed over: tree runs of 32, 38 and 69 blocks, and a
    // 36-block request at 64 bytes. The run of 38 holds it unaligned but not after its padding of 7 blocks; the
    // run of 69 holds it at its first block, and the 33 blocks left are fewer than 38, so they are inserted.
    let mut r = Box::new(Region64([0; 512]));
    let (mut h, blocks) = tree_of(&mut r.0, &[32, 38, 69]);
    assert_eq!((h.pad_blocks(blocks[1], 64), h.pad_blocks(blocks[2], 64)), (7, 0));
    let p = h.alloc(36 * 8, 64).unwrap();
    ok(&h);
    assert_eq!((block_of(&h, p), h.size(blocks[2] + 36)), (blocks[2], 33));
}

// An aligned request is refused only after its search of the bins and the tree (`refuse_aligned`): on a heap
// with both, one too large for its alignment is still `TooLarge`, one the empty heap could hold `OutOfMemory`,
// and neither changes anything but the count of failed requests.
#[test]
fn an_aligned_refusal_after_the_search_names_the_right_error() {
    let mut w = region(4096);
    let (mut h, _live) = fragmented(&mut w);
    // A 24-block request, larger than the top (22 blocks), splits the smallest tree run (32): its tail goes to a
    // bin.
    let _small = h.alloc(8 * 24, 8).unwrap();
    assert!(h.bin_heads().iter().any(|&head| head != 0) && h.root() != 0, "bins and tree both hold runs");
    let before = h.stats();
    assert_eq!(h.alloc(8, 1 << 20), Err(HeapError::TooLarge));
    assert_eq!(h.alloc(8, 1 << (usize::BITS - 1)), Err(HeapError::TooLarge));
    assert_eq!(h.alloc(2048, 16), Err(HeapError::OutOfMemory));
    ok(&h);
    assert_eq!(h.stats(), Stats { failed_requests: before.failed_requests + 3, ..before });
}

// Issue 11, item 13: any power-of-two alignment the region can hold, e.g. std's 128-aligned channel blocks.
#[test]
fn item13_alignments_above_64_are_served() {
    let mut w = region(8192);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    for align in [128, 256, 512, 1024, 2048] {
        let p = h.alloc(512, align).unwrap_or_else(|e| panic!("align {align}: {e:?}"));
        assert!((p.as_ptr() as usize).is_multiple_of(align));
        ok(&h);
        h.free(p).unwrap();
    }
    assert_eq!(h.alloc(8, 1 << 20), Err(HeapError::TooLarge));
    assert_eq!(h.alloc(8, 1 << (usize::BITS - 1)), Err(HeapError::TooLarge));
    assert_eq!(h.alloc(8, 3), Err(HeapError::BadAlign));
    ok(&h);
}

// Issue 11, item 11: the refusal counters saturate instead of overflowing, and `header_blocks` takes any u32.
#[test]
fn item11_counters_saturate_and_layout_math_does_not_overflow() {
    let mut w = region(64);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    h.failed = u32::MAX - 1;
    h.bad_frees = u32::MAX - 1;
    for _ in 0..3 {
        assert_eq!(h.alloc(0, 8), Err(HeapError::ZeroSize));
        assert_eq!(h.free(NonNull::new(h.base).unwrap()), Err(HeapError::OutsideHeap));
    }
    assert_eq!((h.stats().failed_requests, h.stats().bad_frees), (u32::MAX, u32::MAX));
    for total in [0, 1, 33, 65_536, u32::MAX - 47, u32::MAX - 16, u32::MAX] {
        let f = header_blocks(total) as u64;
        let t = total as u64;
        // The smallest f with total + 16 <= 33·f.
        assert!(t + 16 <= 33 * f && (f == 0 || t + 16 > 33 * (f - 1)), "total {total}: {f}");
    }
}

// Issue 11, item 12: a used run in the middle of the heap that lost its end mark is reported as
// `Unterminated` at its first block, not a panic or another kind at another block.
#[test]
fn item12_the_checker_reports_a_lost_end_mark_in_the_middle() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let a = h.alloc(24, 8).unwrap();
    let b = h.alloc(24, 8).unwrap();
    let _c = h.alloc(8, 8).unwrap();
    h.free(b).unwrap();
    let start = block_of(&h, a);
    h.map_set(start + 2, USED);
    assert_eq!(h.check(), Err(Invariant { kind: InvariantKind::Unterminated, block: start }));
}

// Issue 11, item 5: exactly what the heap detects of a stale pointer. A second free while the block is still
// free is `DoubleFree`. Once best fit has handed the block out again, the stale pointer names a live run that
// the heap cannot tell from its new owner's: the raw API cannot catch it, which the crate README says. The
// owned route (`Box::new_in(x, &locked)`) frees exactly once by construction.
#[test]
fn item5_a_stale_free_is_caught_while_the_block_is_free() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let p = h.alloc(16, 8).unwrap();
    let _pin = h.alloc(8, 8).unwrap();
    h.free(p).unwrap();
    assert_eq!(h.free(p), Err(HeapError::DoubleFree));
    // Merged into a larger free run: still refused, at any block of the run.
    let r = h.alloc(8, 8).unwrap();
    h.free(r).unwrap();
    assert_eq!(h.free(p), Err(HeapError::DoubleFree));
    assert_eq!(h.stats().bad_frees, 2);
    ok(&h);
}

// Issue 11, item 14: a `Box` on the adapter, passed by value and freed inside the callee, while the heap
// writes its free-run node into the freed block. Clean under Miri (Stacked and Tree Borrows): a `Box<T, A>`
// with `A` not `Global` carries no protector. The same pattern with the heap as `#[global_allocator]`
// (`Box<T, Global>`) is reported by Miri; the crate README says why and what to do.
#[cfg(feature = "allocator-api")]
#[test]
fn item14_a_box_freed_inside_a_by_value_function() {
    #[allow(clippy::boxed_local, reason = "the box taken by value and freed inside is what this test is about")]
    fn consume(b: Box<[u64; 4], &Locked<'_>>) -> u64 {
        b.iter().sum()
    }
    let mut w = region(256);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let pin = Box::new_in(0u8, &locked);
    assert_eq!(consume(Box::new_in([1, 2, 3, 4], &locked)), 10);
    assert_eq!(consume(Box::new_in([5, 6, 7, 8], &locked)), 26);
    drop(pin);
    assert_eq!(locked.with(|h| h.stats().free_runs), Ok(1));
}

// Issue 15: the typed owner on stable. Dropping frees; a full heap hands the value back; zero-size values take
// no block; the owner can be passed by value and dropped in the callee (clean under Miri).
#[test]
fn heap_box_owns_its_block() {
    fn consume(b: HeapBox<'_, '_, [u64; 4], Spin>) -> u64 {
        b.iter().sum()
    }
    let mut w = region(256);
    let locked = Locked::new();
    assert_eq!(locked.boxed(1u8).err(), Some(1), "no heap yet");
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let cap = locked.with(|h| h.capacity()).unwrap();
    let mut a = locked.boxed([1u64, 2, 3, 4]).unwrap();
    a[0] = 10;
    assert_eq!(consume(a), 19);
    let unit = locked.boxed(()).unwrap();
    assert_eq!(locked.with(|h| h.stats().used_bytes), Ok(0));
    drop(unit);
    let big = locked.boxed([7u8; 200]).unwrap();
    assert_eq!(locked.boxed([0u8; 200]).err().map(|v| v.len()), Some(200), "full: the value comes back");
    assert_eq!(std::format!("{:?}", locked.boxed(5u16).unwrap()), "5");
    drop(big);
    assert_eq!(locked.with(|h| (h.stats().free_bytes as usize, h.check())), Ok((cap, Ok(()))));
}

// Issue 15: the owner of a run of values. `boxed_slice` fills it, dropping it frees the block, an empty or
// zero-size run takes none, and a refusal says why (no heap yet, full, or larger than any heap).
#[test]
fn heap_box_slices_own_their_block() {
    let mut w = region(256);
    let locked = Locked::new();
    assert_eq!(locked.boxed_slice(4, 0u16).err(), Some(HeapError::NotInitialised));
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let used = || locked.with(|h| h.stats().used_bytes).unwrap();
    let mut path = locked.boxed_slice(6, -1i16).unwrap();
    assert_eq!(&path[..], &[-1; 6]);
    path[5] = 7;
    let keys = locked.boxed_slice(3, 0x5A5A_5A5A_5A5A_5A5Au64).unwrap();
    assert_eq!(used(), 16 + 24, "6 i16s in two blocks, 3 u64s in three");
    assert_eq!((path.len(), path[5], keys[2]), (6, 7, 0x5A5A_5A5A_5A5A_5A5A));
    assert!((keys.as_ptr() as usize).is_multiple_of(align_of::<u64>()));
    drop(path);
    assert_eq!(used(), 24, "dropping the run freed its block");
    let none = locked.boxed_slice(0, 1u32).unwrap();
    let units = locked.boxed_slice(1000, ()).unwrap();
    assert_eq!((none.len(), units.len(), used()), (0, 1000, 24), "no block for nothing");
    drop((none, units));
    let cap = locked.with(|h| h.capacity()).unwrap();
    assert_eq!(locked.boxed_slice(cap, 0u8).err(), Some(HeapError::OutOfMemory));
    assert_eq!(locked.boxed_slice(cap + 8, 0u8).err(), Some(HeapError::TooLarge));
    assert_eq!(locked.boxed_slice(usize::MAX / 2, 0u16).err(), Some(HeapError::TooLarge), "size overflows");
    assert_eq!(locked.with(|h| h.stats().failed_requests), Ok(2), "the heap refused two of the three");
    assert_eq!(std::format!("{:?}", locked.boxed_slice(2, 3u8).unwrap()), "[3, 3]");
    assert_eq!(HeapBox::free(keys), Ok(()));
    assert_eq!(locked.with(|h| (h.stats().free_bytes as usize, h.check())), Ok((cap, Ok(()))));
}

// Issue 15: an uninitialised run, filled by hand and then owned as `T`s: one block, freed once, by the last
// owner (the uninitialised one hands it over whole).
#[test]
fn an_uninitialised_run_is_filled_then_owned() {
    let mut w = region(256);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let used = || locked.with(|h| h.stats().used_bytes).unwrap();
    let mut room = locked.boxed_uninit_slice::<i16>(5).unwrap();
    assert_eq!((room.len(), used()), (5, 16));
    for (i, v) in room.iter_mut().enumerate() {
        v.write(i as i16 * 3);
    }
    // SAFETY: all five written above.
    let values = unsafe { room.assume_init() };
    assert_eq!((&values[..], used()), (&[0, 3, 6, 9, 12][..], 16), "the same block, not a copy");
    drop(values);
    assert_eq!(locked.with(|h| (h.stats().used_bytes, h.stats().bad_frees, h.check())), Ok((0, 0, Ok(()))));
    assert_eq!(locked.boxed_uninit_slice::<u64>(usize::MAX / 4).err(), Some(HeapError::TooLarge));
    // SAFETY: no elements.
    assert_eq!(unsafe { locked.boxed_uninit_slice::<u8>(0).unwrap().assume_init() }.len(), 0);

    // Zeroed runs over memory left dirty: 7 i16s (an odd count: the last word is half theirs) and 3 bytes.
    let dirty = locked.boxed_slice(12, -1i16).unwrap();
    drop(dirty);
    let zeros = locked.boxed_slice_zeroed::<i16>(7).unwrap();
    let bytes = locked.boxed_slice_zeroed::<u8>(3).unwrap();
    assert_eq!((&zeros[..], &bytes[..]), (&[0i16; 7][..], &[0u8; 3][..]));
    assert_eq!(used(), 16 + 8);
    assert_eq!(locked.boxed_slice_zeroed::<()>(5).unwrap().len(), 5);
    assert_eq!(locked.boxed_slice_zeroed::<u32>(1000).err(), Some(HeapError::TooLarge));
    // A type of the game's own, through the re-exported trait.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Cell {
        x: u16,
        y: i8,
    }
    // SAFETY: all-zero bytes are a `Cell` (two integers).
    unsafe impl Zeroable for Cell {}
    assert_eq!(locked.boxed_slice_zeroed::<Cell>(2).unwrap()[..], [Cell { x: 0, y: 0 }; 2]);
}

// Issue 15: an owner's free that the heap refuses is never silent. Here the block is freed behind the owner's
// back (what a stray write into the heap's map amounts to): `HeapBox::free` returns the refusal, and a drop
// leaves it in the heap's count of bad frees.
#[test]
fn a_refused_free_of_an_owner_is_counted() {
    let mut w = region(256);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    let behind_the_back = |p: NonNull<u8>| locked.locked(|slot| slot.as_mut().unwrap().free(p));
    let a = locked.boxed_slice(4, 1u16).unwrap();
    let b = locked.boxed_slice(4, 2u16).unwrap();
    assert_eq!(behind_the_back(NonNull::from(&a[..]).cast()), Ok(()));
    assert_eq!(HeapBox::free(a), Err(HeapError::DoubleFree));
    assert_eq!(behind_the_back(NonNull::from(&b[..]).cast()), Ok(()));
    drop(b);
    let stats = locked.with(|h| h.stats()).unwrap();
    assert_eq!((stats.bad_frees, stats.used_bytes, stats.free_runs), (2, 0, 1));
    assert_eq!(locked.with(|h| h.check()), Ok(Ok(())));
}

// The checker reads nothing of the top, which holds no fields: a `GlobalHeap`'s region starts uninitialised,
// and reading the top's first block would be undefined behaviour (Miri reports it).
#[test]
fn the_checker_reads_nothing_of_an_uninitialised_top() {
    static G: GlobalHeap<Spin, 1024> = GlobalHeap::new();
    let layout = Layout::from_size_align(8, 8).unwrap();
    // SAFETY: a valid layout; the block is never used or freed.
    let p = unsafe { G.alloc(layout) };
    assert!(!p.is_null());
    assert_eq!(G.heap().with(|h| h.check()).unwrap(), Ok(()));
    // A stray used code inside the top: the check names it, still reading nothing of the top's blocks.
    let mut region = core::mem::MaybeUninit::<[u64; 128]>::uninit();
    // SAFETY: the buffer is valid for reads and writes of its 1,024 bytes for as long as the heap, which alone
    // uses it.
    let mut h = unsafe { Heap::from_raw(region.as_mut_ptr().cast(), 1024) }.unwrap();
    h.alloc(8, 8).unwrap();
    let stray = h.top + 3;
    h.map_set(stray, LAST);
    assert_eq!(h.check(), Err(Invariant { kind: InvariantKind::UsedInFreeRun, block: stray }));
}

// Issue 15: `GlobalHeap` sets itself up on first use; the peak can be started over; `Heap` prints.
#[test]
fn global_heap_starts_on_first_use_and_peak_resets() {
    static G: GlobalHeap<Spin, 1024> = GlobalHeap::new();
    let layout = Layout::from_size_align(64, 8).unwrap();
    // SAFETY: freed once with its layout.
    unsafe {
        let p = G.alloc(layout);
        assert!(!p.is_null());
        G.dealloc(p, layout);
    }
    let s = G.stats().unwrap();
    assert_eq!((s.used_bytes, s.peak_used), (0, 64));
    G.heap().reset_peak().unwrap();
    assert_eq!(G.stats().unwrap().peak_used, 0);
    assert_eq!(Locked::new().reset_peak(), Err(LockError::NotInitialised));
    assert!(G.heap().with(|h| std::format!("{h:?}")).unwrap().starts_with("Heap {"));
}

// `GlobalHeap`'s realloc: in place when the run behind is free, else moved with its contents; refused (null) with
// the old block intact when nothing holds the new size.
#[test]
fn a_global_heap_reallocates_in_place_or_moves_the_contents() {
    static G: GlobalHeap<Spin, 1024> = GlobalHeap::new();
    let small = Layout::from_size_align(16, 8).unwrap();
    let capacity = G.stats().unwrap().capacity as usize;
    // SAFETY: every pointer is live when reallocated or freed, with the layout it has then.
    unsafe {
        let p = G.alloc(small);
        p.cast::<[u8; 16]>().write([5; 16]);
        let q = G.realloc(p, small, 64);
        assert_eq!(q, p, "grown in place: the top is right behind");
        let wall = G.alloc(small);
        let big = Layout::from_size_align(64, 8).unwrap();
        let r = G.realloc(q, big, 128);
        assert!(!r.is_null() && r != q, "moved: the block behind is used");
        assert_eq!(*r.cast::<[u8; 16]>(), [5; 16], "the contents moved along");
        let used = G.stats().unwrap().used_bytes;
        assert_eq!(G.realloc(r, Layout::from_size_align(128, 8).unwrap(), capacity), core::ptr::null_mut());
        assert_eq!(G.stats().unwrap().used_bytes, used, "refused: the old block stays");
        assert_eq!(*r.cast::<[u8; 16]>(), [5; 16]);
        G.dealloc(r, Layout::from_size_align(128, 8).unwrap());
        G.dealloc(wall, small);
        // A pointer the heap refuses, freed or foreign, is null, counted once, and neither read nor freed:
        // `wall` is free, and an allocation of its size would get it back.
        let mut foreign = [0u8; 16];
        for (bad, name) in [(wall, "freed"), (foreign.as_mut_ptr(), "foreign")] {
            let before = G.stats().unwrap();
            assert_eq!(G.realloc(bad, small, 64), core::ptr::null_mut(), "{name}");
            let after = G.stats().unwrap();
            assert_eq!((after.bad_frees, after.used_bytes), (before.bad_frees + 1, 0), "{name}");
        }
    }
    let s = G.stats().unwrap();
    assert_eq!((s.used_bytes, s.bad_frees, s.free_runs), (0, 2, 1));
    assert_eq!(G.heap().with(|h| h.check()).unwrap(), Ok(()));
}

// A GlobalHeap moved after its first use (safe code can do it: `new` is a const fn, not only for statics) sets
// its heap up again over the region where it is now, instead of handing out blocks of its old place.
#[test]
fn a_global_heap_moved_after_first_use_serves_from_where_it_is() {
    fn used_then_moved() -> Box<GlobalHeap<Spin, 256>> {
        let g = GlobalHeap::new();
        assert_eq!(g.stats().unwrap().used_bytes, 0);
        Box::new(g)
    }
    let g = used_then_moved();
    let here = (&raw const *g) as usize..(&raw const *g) as usize + size_of::<GlobalHeap<Spin, 256>>();
    let b = g.heap().boxed([7u8; 64]).unwrap();
    assert!(here.contains(&((&raw const *b) as usize)), "the block is outside the GlobalHeap as it is now");
    assert_eq!(*b, [7; 64]);
    let layout = Layout::from_size_align(16, 8).unwrap();
    // SAFETY: freed once with its layout.
    unsafe {
        let p = g.alloc(layout);
        assert!(here.contains(&(p as usize)));
        g.dealloc(p, layout);
    }
    drop(b);
    assert_eq!(g.stats().unwrap().used_bytes, 0);
}

/// A copy of `h`'s blocks, as a debugger reads them from the machine.
fn copy_of(h: &Heap) -> Vec<u64> {
    // SAFETY: the heap's region holds `end` blocks from its 8-aligned base, all initialised; nothing writes
    // them while this reads (the heap is borrowed).
    unsafe { core::slice::from_raw_parts(h.base.cast::<u64>(), h.end as usize) }.to_vec()
}

/// The runs as the heap's own map says, through `block`.
fn runs_by_map(h: &Heap) -> Vec<(bool, u32, u32)> {
    let mut runs = Vec::new();
    let mut b = h.first;
    while b < h.end {
        let start = b;
        if h.block(b - h.first) == Some(Block::Free) {
            // Free runs never touch: a free run is the free codes up to the next used one.
            while h.block(b - h.first) == Some(Block::Free) {
                b += 1;
            }
            runs.push((false, start, b - start));
        } else {
            while h.block(b - h.first) == Some(Block::Used) {
                b += 1;
            }
            b += 1;
            runs.push((true, start, b - start));
        }
    }
    runs
}

#[test]
fn a_view_of_a_copy_sees_what_the_heap_sees() {
    let mut w = region(4096);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let mut rng = crate::rng::Rng::new(7);
    let mut live: Vec<NonNull<u8>> = Vec::new();
    let steps = if cfg!(miri) { 60 } else { 600 };
    for _ in 0..steps {
        if !live.is_empty() && (rng.chance(45) || h.alloc(1, 1).map(|p| h.free(p)).is_err()) {
            let p = live.swap_remove(rng.below(live.len() as u32) as usize);
            h.free(p).unwrap();
        } else {
            let most = if rng.chance(70) { 64 } else { 600 };
            if let Ok(p) = h.alloc(1 + rng.below(most) as usize, 4) {
                live.push(p);
            }
        }
        let copy = copy_of(&h);
        let view = HeapView::new(&copy, h.counters()).unwrap();
        assert_eq!(view.check(), Ok(()));
        assert_eq!((view.first(), view.end(), view.count(), view.root()), (h.first, h.end, h.end - h.first, h.root()));
        let runs: Vec<_> = view.runs().map(|r| (r.used, r.start, r.blocks)).collect();
        assert_eq!(runs, runs_by_map(&h));
        let top = runs.last().filter(|r| !r.0).map(|r| Run { used: false, start: r.1, blocks: r.2 });
        assert_eq!(view.top(), top);
        assert_eq!(view.top().map_or(h.end, |t| t.start), h.top);
        // Every free run is in the place its size gives it: the top, its bin, or the tree.
        let mut in_tree = Vec::new();
        view.visit_tree(|n| {
            assert_eq!((n.size, n.red), (h.size(n.block), h.is_red(n.block)));
            if n.side != Side::Root {
                let parent = h.parent(n.block);
                let child = if n.side == Side::Smaller { h.smaller(parent) } else { h.larger(parent) };
                assert_eq!(child, n.block);
            }
            in_tree.push(n.block);
        });
        let mut in_bins = Vec::new();
        for s in 1..=BINNED {
            in_bins.extend(view.bin(s).inspect(|&r| assert_eq!(h.size(r), s)));
        }
        for &(used, start, blocks) in runs.iter().filter(|r| !r.0) {
            let place = if Some(start) == top.map(|t| t.start) {
                0
            } else if blocks <= BINNED {
                in_bins.iter().filter(|&&r| r == start).count()
            } else {
                in_tree.iter().filter(|&&r| r == start).count()
            };
            assert!(!used && (place == 1 || Some(start) == top.map(|t| t.start)), "run at {start} misplaced");
        }
        // Without the heap's counters, the region alone gives the same ones back (the peak aside).
        let alone = HeapView::from_region(&copy).unwrap();
        assert_eq!(alone.check(), Ok(()));
        let (mine, theirs) = (alone.counters(), h.counters());
        assert_eq!((mine.used_blocks, mine.bins), (theirs.used_blocks, theirs.bins));
    }
}

#[test]
fn a_view_names_the_invariant_the_heap_names() {
    use InvariantKind::*;
    // (what is broken, which field of which node) on a fragmented heap; the heap and a view of a copy must agree.
    type Break = fn(&mut Heap);
    let breaks: [(InvariantKind, Break); 5] = [
        (Header, |h| h.set_header(HDR_COUNT, 7)),
        (ParentLink, |h| {
            let x = h.larger(h.root());
            poke(h, x, PARENT, x as u16)
        }),
        (RedRoot, |h| h.set_red(h.root(), true)),
        (SizeCopy, |h| {
            let x = h.root();
            let s = h.size(x);
            poke(h, x + s - 1, SIZE, s as u16 + 1)
        }),
        (Stats, |h| h.used_blocks += 1),
    ];
    for (kind, spoil) in breaks {
        let mut w = region(16384);
        let (mut h, _) = fragmented(&mut w);
        spoil(&mut h);
        let heap_says = h.check();
        assert_eq!(heap_says.map_err(|e| e.kind), Err(kind));
        let copy = copy_of(&h);
        assert_eq!(HeapView::new(&copy, h.counters()).unwrap().check(), heap_says, "{kind:?}");
    }
}

#[test]
fn a_view_of_a_broken_tree_ends_its_walks() {
    let mut w = region(16384);
    let (mut h, _) = fragmented(&mut w);
    // A cycle: the root's smaller child links back to the root.
    let (r, x) = (h.root(), h.smaller(h.root()));
    poke(&mut h, x, SMALLER, r as u16);
    let copy = copy_of(&h);
    let view = HeapView::new(&copy, h.counters()).unwrap();
    let mut nodes = 0;
    view.visit_tree(|_| nodes += 1);
    assert!(nodes <= h.end - h.first, "{nodes} nodes");
    assert!(view.check().is_err());
    assert_eq!(HeapView::new(&copy[..1], h.counters()).err(), Some(HeapError::BadRegion));

    // A bin whose run links to itself.
    let mut w = region(512);
    let mut h = Heap::new(bytes(&mut w)).unwrap();
    let a = h.alloc(16, 8).unwrap();
    h.alloc(8, 8).unwrap();
    h.free(a).unwrap();
    let b = block_of(&h, a);
    poke(&mut h, b, 0, b as u16);
    let copy = copy_of(&h);
    let view = HeapView::new(&copy, h.counters()).unwrap();
    assert_eq!(view.bin(2).count() as u32, h.end - h.first);
    assert_eq!(view.check().map_err(|e| e.kind), Err(InvariantKind::BinLink));
}

// Zeroed requests come back zero over memory left dirty, through every adapter way in: `GlobalAlloc` of
// `LockedHeap` and of `GlobalHeap`, and `Allocator::allocate_zeroed` (whole blocks: all its `len` bytes).
#[test]
fn zeroed_requests_come_back_zero_over_dirty_memory() {
    fn dirty_then_zeroed(heap: &impl GlobalAlloc) {
        let layout = Layout::from_size_align(37, 4).unwrap();
        // SAFETY: a non-zero layout; each block is freed once with its layout, and read only within it.
        unsafe {
            let p = heap.alloc(layout);
            p.write_bytes(0xA5, 37);
            heap.dealloc(p, layout);
            let z = heap.alloc_zeroed(layout);
            assert_eq!(z, p, "the dirty block again");
            assert!(core::slice::from_raw_parts(z, 37).iter().all(|&b| b == 0));
            heap.dealloc(z, layout);
        }
    }
    let mut w = region(512);
    let locked = Locked::new();
    locked.init(Heap::new(bytes(&mut w)).unwrap()).ok().unwrap();
    dirty_then_zeroed(&locked);
    static G: GlobalHeap<Spin, 512> = GlobalHeap::new();
    dirty_then_zeroed(&G);
    #[cfg(feature = "allocator-api")]
    {
        use core::alloc::Allocator;
        let layout = Layout::from_size_align(20, 8).unwrap();
        let dirty = Box::new_in([0xFFu8; 24], &locked);
        drop(dirty);
        let z = locked.allocate_zeroed(layout).unwrap();
        // SAFETY: the block is `z.len()` bytes, handed out just above; freed once below.
        unsafe {
            assert_eq!(z.len(), 24);
            assert!(z.as_ref().iter().all(|&b| b == 0));
            locked.deallocate(z.cast(), layout);
        }
    }
    assert_eq!(locked.with(|h| (h.stats().used_bytes, h.check())), Ok((0, Ok(()))));
}

#[test]
#[cfg_attr(miri, ignore = "no unsafe code: the native debug and release runs check these words (27 s a Miri pass)")]
fn lowest_bit_agrees_with_trailing_zeros() {
    let mut rng = crate::rng::Rng::new(0x10B1);
    // Every value of the low 16 bits (the lookup and the halving's last steps), each bit alone, and random words.
    let words =
        (1..=0xFFFF).chain((0..32).map(|k| 1 << k)).chain((0..10_000).map(|_| (rng.next_u32() | 1) << rng.below(32)));
    for m in words {
        assert_eq!(super::bins::lowest_bit_halving(m), m.trailing_zeros(), "lowest_bit_halving({m:#x})");
        assert_eq!(super::bins::lowest_bit_table(m), m.trailing_zeros(), "lowest_bit_table({m:#x})");
    }
}

#[test]
fn code_index_agrees_with_trailing_zeros() {
    // At each of a map word's 16 codes: the halving, and `code_index` as this build has it (the table's own
    // words are checked above).
    for bit in (0..16).map(|k| 1u32 << (2 * k)) {
        assert_eq!(super::map::code_index_halving(bit), bit.trailing_zeros() / 2, "code_index_halving({bit:#x})");
        assert_eq!(super::map::code_index(bit), bit.trailing_zeros() / 2, "code_index({bit:#x})");
    }
}
