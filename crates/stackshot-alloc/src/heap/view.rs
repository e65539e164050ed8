//! [`HeapView`]: a heap read from a copy of its memory (an emulator's, a debugger's, a crash dump), through
//! the heap's own code: the same checker, and walks of its runs, tree and bins, so that a tool needs no
//! decoder of the format of its own. Nothing is ever written.

use super::bins::{BINNED, BINS};
use super::check::{Invariant, MAX_DEPTH};
use super::map::{Block, LAST, USED_BIT};
use super::tree::{COLOUR, LARGER_SIDE, NIL, PARENT, SIZE, SMALLER_SIDE};
use super::{HDR_COUNT, Heap, HeapError, header_blocks};
use core::marker::PhantomData;

/// What a [`Heap`] keeps outside its region, which a copy of the region does not hold: see
/// [`Heap::counters`]. The top is not among them: a view finds it in the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Managed blocks in use.
    pub used_blocks: u32,
    /// Most blocks ever in use at once.
    pub peak_used: u32,
    /// [`Heap::bin_heads`].
    pub bins: [u16; BINS],
}

/// A field of a free run's node (the first block of the run), for a tool that writes one on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeField {
    /// The smaller child (in a bin: the next run).
    Smaller,
    /// The larger child (in a bin: the previous run).
    Larger,
    /// The parent.
    Parent,
    /// The run's size in blocks; also at this offset of the run's last block.
    Size,
    /// A tree node's colour, one byte (0 black, else red): the first of the run's second block.
    Colour,
}

/// A run of blocks, in map order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Whether the run is handed out.
    pub used: bool,
    /// Its first block.
    pub start: u32,
    /// Its length in blocks.
    pub blocks: u32,
}

/// Where a tree node hangs from its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The root.
    Root,
    /// Its parent's smaller child.
    Smaller,
    /// Its parent's larger child.
    Larger,
}

/// One node of the free tree, as [`HeapView::visit_tree`] meets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// The first block of its run.
    pub block: u32,
    /// The run's size in blocks.
    pub size: u32,
    /// Its red-black colour.
    pub red: bool,
    /// 0 for the root.
    pub depth: u32,
    /// Where it hangs.
    pub side: Side,
}

/// A heap's region, copied out of the machine it ran on, read with the heap's own code.
///
/// ```
/// # use stackshot_alloc::heap::{Heap, HeapView};
/// let mut region = [0u64; 64];
/// // SAFETY: the u64s are valid as bytes, borrowed by the heap until the copy below.
/// let bytes = unsafe { core::slice::from_raw_parts_mut(region.as_mut_ptr().cast::<u8>(), 512) };
/// let mut heap = Heap::new(bytes).unwrap();
/// let a = heap.alloc(24, 4).unwrap();
/// heap.alloc(8, 4).unwrap();
/// heap.free(a).unwrap();
/// let counters = heap.counters();
/// let copy = region; // what a debugger would read from the machine
/// let view = HeapView::new(&copy, counters).unwrap();
/// assert_eq!(view.check(), Ok(()));
/// let runs: Vec<_> = view.runs().map(|r| (r.used, r.blocks)).collect();
/// assert_eq!(runs, [(false, 3), (true, 1), (false, 57)]); // a run in bin 3, a used block, the top
/// ```
#[derive(Debug)]
pub struct HeapView<'a> {
    /// A heap over the copy. Only its reading methods are ever called: see `new`.
    heap: Heap<'a>,
    _copy: PhantomData<&'a [u64]>,
}

impl<'a> HeapView<'a> {
    /// A view of the region whose block 0 (its first 8-aligned byte) is `blocks[0]`, to its last whole block,
    /// as the heap's machine holds them (bytes in its order: read this on a host of the same byte order, e.g.
    /// a little-endian one for the GBA), with the counters its [`Heap`] kept.
    pub fn new(blocks: &'a [u64], counters: Counters) -> Result<Self, HeapError> {
        let total = blocks.len();
        if !(2..=65_536).contains(&total) {
            return Err(HeapError::BadRegion);
        }
        let total = total as u32;
        let first = header_blocks(total);
        let mut binned = 0;
        let mut s = 1;
        while s <= BINNED as usize {
            if counters.bins[s] != 0 {
                binned |= 1 << s;
            }
            s += 1;
        }
        let mut heap = Heap {
            // Never written through: a view calls only the heap's `&self` methods, which read.
            base: blocks.as_ptr().cast::<u8>().cast_mut(),
            first,
            end: total,
            top: total,
            bins: counters.bins,
            binned,
            used_blocks: counters.used_blocks,
            peak_used: counters.peak_used,
            failed: 0,
            bad_frees: 0,
            _region: PhantomData,
        };
        heap.top = heap.top_run().map_or(total, |run| run.start);
        Ok(HeapView { heap, _copy: PhantomData })
    }

    /// A view with the counters and bin heads a valid heap would keep, worked out from the map and the runs
    /// (the heads are the binned runs whose `prev` is 0): for a copy without its `Heap`, such as a crash dump.
    /// [`check`](Self::check) then still checks the region, but not counters it was not given.
    pub fn from_region(blocks: &'a [u64]) -> Result<Self, HeapError> {
        let empty = Counters { used_blocks: 0, peak_used: 0, bins: [0; BINS] };
        let mut counters = empty;
        let view = HeapView::new(blocks, empty)?;
        let top = view.heap.top;
        let mut free = 0;
        for run in view.runs().filter(|r| !r.used) {
            free += run.blocks;
            // A bin's head is the one entry with no `prev`.
            let s = run.blocks as usize;
            if run.start != top && s <= BINNED as usize && counters.bins[s] == 0 && view.heap.bin_prev(run.start) == NIL
            {
                counters.bins[s] = run.start as u16;
            }
        }
        counters.used_blocks = view.heap.end - view.heap.first - free;
        counters.peak_used = counters.used_blocks;
        HeapView::new(blocks, counters)
    }

    /// The counters the view checks against: those it was given, or those `from_region` worked out.
    pub fn counters(&self) -> Counters {
        self.heap.counters()
    }

    /// [`Heap::check`] on the copy.
    pub fn check(&self) -> Result<(), Invariant> {
        self.heap.check()
    }

    /// The first managed block (the blocks before it hold the header and the map).
    pub fn first(&self) -> u32 {
        self.heap.first
    }

    /// One past the last managed block.
    pub fn end(&self) -> u32 {
        self.heap.end
    }

    /// The header's count of managed blocks.
    pub fn count(&self) -> u32 {
        self.heap.header(HDR_COUNT)
    }

    /// The header's root of the tree (0: empty).
    pub fn root(&self) -> u32 {
        self.heap.root()
    }

    /// The map code of managed block `b` (`first <= b < end`): `0b00` free, `0b11` used, `0b01` the last
    /// block of a used run; `0b10` is no block's (a broken map).
    ///
    /// # Panics
    /// If `b` is not managed.
    pub fn code(&self, b: u32) -> u8 {
        assert!(self.managed(b), "block {b} is not managed");
        self.heap.map_get(b)
    }

    /// What the map says of managed block `b` (`first <= b < end`), as [`Heap::block`] says it; `None` past the
    /// managed blocks.
    pub fn block(&self, b: u32) -> Option<Block> {
        self.heap.block(b.checked_sub(self.heap.first)?)
    }

    /// Byte offset from block 0 of the map byte holding managed block `b`'s code, and the code's shift in it.
    ///
    /// # Panics
    /// If `b` is not managed.
    pub fn map_position(&self, b: u32) -> (usize, u32) {
        assert!(self.managed(b), "block {b} is not managed");
        self.heap.map_position(b)
    }

    /// Byte offset from block 0 of `field` of block `b`'s node.
    pub fn field_offset(b: u32, field: NodeField) -> usize {
        8 * b as usize
            + match field {
                NodeField::Smaller => 2 * SMALLER_SIDE,
                NodeField::Larger => 2 * LARGER_SIDE,
                NodeField::Parent => PARENT,
                NodeField::Size => SIZE,
                NodeField::Colour => COLOUR,
            }
    }

    /// `field` of managed block `b`'s node, as the region holds it (meaningful at the first block of a free
    /// run but the top, for `Size` at its last too, and for `Colour`, 1 for red, at a tree node's).
    ///
    /// # Panics
    /// If `b` is not managed, or for `Colour` if `b` is the last managed block.
    pub fn field(&self, b: u32, field: NodeField) -> u32 {
        assert!(self.managed(b), "block {b} is not managed");
        if field == NodeField::Colour {
            assert!(b + 1 < self.heap.end, "block {b} has no block after it for a colour");
            return self.heap.is_red(b) as u32;
        }
        self.heap.field(b, Self::field_offset(0, field))
    }

    /// The runs in map order: a used run ends at a `0b01` code, the top at the end, another free run is as
    /// long as its size says (cut to at least one block and at most the end, so that a broken map still ends
    /// the walk).
    pub fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        let mut b = self.heap.first;
        core::iter::from_fn(move || {
            if b >= self.heap.end {
                return None;
            }
            let start = b;
            let used = self.heap.map_get(b) & USED_BIT != 0;
            if used {
                while b + 1 < self.heap.end && self.heap.map_get(b) != LAST {
                    b += 1;
                }
                b += 1;
            } else if b == self.heap.top {
                b = self.heap.end;
            } else {
                b += self.heap.size(b).clamp(1, self.heap.end - b);
            }
            Some(Run { used, start, blocks: b - start })
        })
    }

    /// The top: the free run that ends the heap (kept out of the tree and the bins), if the last block is
    /// free; found in the map (the free codes that end it).
    pub fn top(&self) -> Option<Run> {
        self.heap.top_run()
    }

    /// Calls `f` on each node of the free tree, in pre-order (a node, its smaller subtree, its larger one).
    /// On a broken tree the walk still ends: it does not follow a link that leaves the managed blocks, go
    /// below the depth no valid tree reaches, or meet more nodes than the heap has blocks.
    pub fn visit_tree(&self, mut f: impl FnMut(TreeNode)) {
        let mut left = self.heap.end - self.heap.first;
        self.visit(self.heap.root(), Side::Root, 0, &mut left, &mut f);
    }

    fn visit(&self, x: u32, side: Side, depth: u32, left: &mut u32, f: &mut impl FnMut(TreeNode)) {
        if x == NIL || !self.managed(x) || depth >= MAX_DEPTH || *left == 0 {
            return;
        }
        *left -= 1;
        // The colour byte is in the block after the node: past the heap's end only in a broken tree.
        let red = x + 1 < self.heap.end && self.heap.is_red(x);
        f(TreeNode { block: x, size: self.heap.size(x), red, depth, side });
        self.visit(self.heap.smaller(x), Side::Smaller, depth + 1, left, f);
        self.visit(self.heap.larger(x), Side::Larger, depth + 1, left, f);
    }

    /// The runs of bin `s` (`1..=BINNED` blocks), first first, following `next` links while they name managed
    /// blocks, no more of them than the heap has blocks.
    pub fn bin(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        let mut r = if (1..=BINNED).contains(&s) { self.heap.bin_head(s) } else { NIL };
        let mut left = self.heap.end - self.heap.first;
        core::iter::from_fn(move || {
            if r == NIL || !self.managed(r) || left == 0 {
                return None;
            }
            left -= 1;
            let here = r;
            r = self.heap.bin_next(r);
            Some(here)
        })
    }

    fn managed(&self, b: u32) -> bool {
        self.heap.managed(b)
    }
}

impl Heap<'_> {
    /// What the heap keeps outside its region, for a [`HeapView`] of a copy of the region.
    pub fn counters(&self) -> Counters {
        Counters { used_blocks: self.used_blocks, peak_used: self.peak_blocks(), bins: self.bins }
    }

    /// The top as the map shows it (see `map_top`).
    fn top_run(&self) -> Option<Run> {
        let start = self.map_top();
        (start < self.end).then(|| Run { used: false, start, blocks: self.end - start })
    }
}
