//! The tree-heap: a best-fit allocator for small pools (16 B up to 512 KB) with almost no bookkeeping. Memory
//! is handed out in 8-byte blocks; a 2-bit-per-block allocation map says which blocks are used, and the free
//! runs are kept in a red-black tree whose nodes live inside the free runs themselves. In front of the tree,
//! for speed: bins, one list per size for runs of up to [`BINNED`] blocks, and the top, the run that ends the
//! heap; both still give the exact best fit.
//!
//! # Layout
//!
//! The region is cut to whole 8-byte blocks starting at its first 8-aligned byte; block `b` is at
//! `base + 8·b`. Blocks `0..first` hold the header and the map (they need no map bits of their own);
//! blocks `first..end` are managed.
//!
//! ```text
//! byte 0     2      4                          8·first                                    8·end
//!      [count][root][map: 2 bits per managed block][pad] [ managed blocks: used runs, free runs ]
//! ```
//!
//! - Header (4 bytes): `count` = number of managed blocks, `root` = block of the tree's root (0 = empty).
//! - Map: managed block `first + i` has the two bits `2·(i % 4)` of map byte `i / 4`; codes (`src/heap/map.rs`):
//!   `00` free, `11` used, `01` used and last of its run; `10` is spare, no block's.
//! - Node, in the first block of every free run but the top: `smaller: u16, larger: u16, parent: u16, size: u16`
//!   (size in blocks); the run's last block repeats `size` at the same offset 6 (for a 1-block run the two
//!   coincide). A tree node's red-black colour is the first byte of its run's second block (0 black, else red):
//!   a tree run has more than [`BINNED`] blocks.
//! - The top: the free run that ends the heap, if the last block is free. It is kept out of the tree and the
//!   bins and holds no fields at all: the `Heap` keeps its first block (`top`, or `end` when there is none)
//!   beside the map, so its size is `end - top`, and the common allocation from the end of the heap and the
//!   free next to it write nothing in it.
//! - Bins (`src/heap/bins.rs`): every other free run of up to [`BINNED`] blocks is in the doubly linked list of
//!   its size instead of the tree: `next: u16` at offset 0 and `prev: u16` at offset 2 of its first block
//!   (0 = none), its map code `FREE`. The `Heap` keeps the lists' heads and a mask of the non-empty ones beside
//!   the map. The tree holds only runs of more than [`BINNED`] blocks.
//! - Indices are block numbers; block 0 (the header) is never a run, so 0 means "none". A region has at most
//!   65 536 blocks (512 KB), so every index and size fits a `u16`.
//! - `first` is the smallest block count that holds the header and the map of the remaining blocks:
//!   `first = ⌈(total + 16) / 33⌉`. For 4 KB: 16 blocks (128 bytes = 3.125 %), 496 managed.
//!
//! # Invariants
//!
//! [`Heap::check`] verifies exactly these and names the [`InvariantKind`] and block of the first one broken.
//!
//! 1. The header's count is the number of managed blocks and the root is 0 or a managed block \[`Header`,
//!    `NodeOutOfRange`\].
//! 2. The tree: every link names a managed block \[`NodeOutOfRange`\]; every node is a free block
//!    \[`NodeNotFree`\] at the start of a free run \[`NodeNotRunStart`\]; each child's parent field names its
//!    parent and the root's is 0 \[`ParentLink`\]; in-order keys `(size, block)` strictly increase
//!    \[`Order`\]; every node's run has more than [`BINNED`] blocks \[`SmallInTree`\], so its colour byte is
//!    below the top \[`BadSize`\]; red-black: the root is black \[`RedRoot`\], no red node has a red child
//!    \[`RedRed`\], every path from a node down has the same number of black nodes \[`BlackHeight`\], so no path
//!    is longer than 2·log2(n + 1) \[`Unbalanced`, reported when a walk goes deeper than any valid tree can\].
//! 3. The bins: each list, from its head, holds first blocks of free runs of its size that are not the top,
//!    each `prev` naming the entry before, no more entries than blocks, and the mask bit is set exactly when
//!    the head is not 0 \[`BinLink`\]. The map, walked in block order, splits into runs: a used run is `11`…
//!    ended by `01` \[`Unterminated`\]; the free codes that end the map are the top, which has no node
//!    \[`TopInTree`\]; every free run has only `00` codes \[`UsedInFreeRun`, `SpareCode`\]; every free run but
//!    the top starts at a block whose size is ≥ 1 and ends inside the heap \[`BadSize`\], repeats its size in
//!    its last block \[`SizeCopy`\], is followed by a used block \[`FreeRunsTouch`\], and is in the bin of its
//!    size if it has at most [`BINNED`] blocks \[`RunNotInBin`\], or else has a node in the tree
//!    \[`RunNotInTree`\]. With 2, each free run is in exactly one place.
//! 4. The count of blocks in use and the top's first block agree with the map, and the tree holds as many
//!    nodes as the map has runs for it \[`Stats`\]. (The peak has no invariant of its own: `free` folds the
//!    use into it before the use falls, so that `alloc` need not compare.)
//!
//! [`Header`]: InvariantKind::Header
//! [`NodeOutOfRange`]: InvariantKind::NodeOutOfRange
//! [`NodeNotFree`]: InvariantKind::NodeNotFree
//! [`NodeNotRunStart`]: InvariantKind::NodeNotRunStart
//! [`ParentLink`]: InvariantKind::ParentLink
//! [`Order`]: InvariantKind::Order
//! [`RedRoot`]: InvariantKind::RedRoot
//! [`RedRed`]: InvariantKind::RedRed
//! [`BlackHeight`]: InvariantKind::BlackHeight
//! [`Unbalanced`]: InvariantKind::Unbalanced
//! [`SmallInTree`]: InvariantKind::SmallInTree
//! [`BinLink`]: InvariantKind::BinLink
//! [`RunNotInBin`]: InvariantKind::RunNotInBin
//! [`Unterminated`]: InvariantKind::Unterminated
//! [`BadSize`]: InvariantKind::BadSize
//! [`UsedInFreeRun`]: InvariantKind::UsedInFreeRun
//! [`SpareCode`]: InvariantKind::SpareCode
//! [`SizeCopy`]: InvariantKind::SizeCopy
//! [`FreeRunsTouch`]: InvariantKind::FreeRunsTouch
//! [`RunNotInTree`]: InvariantKind::RunNotInTree
//! [`TopInTree`]: InvariantKind::TopInTree
//! [`Stats`]: InvariantKind::Stats
//!
//! # Hot paths
//!
//! [`Heap::alloc`], [`Heap::free`] and everything they call use plain operators, `if`, `while` and `loop` (no
//! iterators, `Option` combinators, `trailing_zeros` or other core helpers, which would call Thumb code in ROM).
//! `alloc` is `#[inline(always)]`, for an ARM-mode wrapper (`#[instruction_set(arm::a32)]` in an `.iwram.*` section)
//! around it, and so is `free` with the crate's `iwram` feature; without it, `free` is a function of its own (see
//! there why). What they inline is only their common paths: the bins, the top, a free with no free neighbour
//! or binned ones, and the map work of runs whose codes lie in one word or two. The rest is `#[inline(never)]`:
//! the tree's search and the split of its smallest run (`alloc_tree`), a split of another tree run and every
//! aligned or resizing split (`take`, inlined without the `iwram` feature), bad requests and alignments above a
//! block (`alloc_other`), the map mark and the map clear of a run over three words or more (`mark_used_words`,
//! `clear_words`; without the `iwram` feature a third word is cleared in line), a merge with a tree neighbour
//! (`merge`), `tree_insert`, `tree_remove` and their rotation, `tree_insert`'s rebalancing alone (`insert_fixup`,
//! for `merge`), without the `iwram` feature the exchange of a node with its successor (`tree_pass`, for
//! `merge`), and the counting of refusals. With the `iwram` feature these rare paths are code of the target's
//! own instruction set in ROM (Thumb on the GBA), called from the common paths in IWRAM through the linker's
//! veneers: a program's IWRAM holds only the common paths (the game's ELF test,
//! `tools/harness/tests/game_hot_paths.rs`, names them and holds them to a budget). With `iwram-all` they are
//! ARM functions in IWRAM of their own too, for the slowest operations' speed at the cost of that IWRAM
//! (`docs/benchmarks.md` has both builds' cycles and code bytes). The rarest of these are `#[cold]`, so that the
//! compiler lays the common path out straight, with no taken branch around them. What keeps the common paths short:
//!
//! - An allocation of up to [`BINNED`] blocks takes the head of the smallest non-empty bin that fits (one mask
//!   shift, and its lowest bit found by a lookup among the lowest four and halving with the `iwram` feature,
//!   else by a de Bruijn multiply and a table: `bins::lowest_bit`), or the front of the top when it is
//!   smaller still or the tree is empty; a free whose neighbours are binned (or used) unlinks them and pushes the
//!   merged run, and a free next to the top grows it. None of these touch the tree.
//! - The map is worked a `u32` word (16 blocks) at a time: `alloc` marks its run with one OR of all its bits
//!   but the last code's high bit (the used codes are chosen for it: `11`, and `01` for the last; the blocks it
//!   takes are all `00`, so no bit needs clearing, 4 cycles less than an OR and a clear: the AI trace's median
//!   91 → 87 with the benchmark's earlier timer), inline for a run whose codes lie in one word or two (two
//!   words through a call cost more, measured when this was written: the AI trace's slowest allocation 206
//!   cycles instead of 169, the random mix's median 204 instead of 166), `free` finds the end-of-run code `01`
//!   with `w & !(w >> 1)` on whole words, clears up to it with one mask (the mark's index found by halving with
//!   the `iwram` feature, else by the same table: `map::code_index`), and reads whether the block after is free
//!   from the same word when it holds that block's code too.
//! - After `take` splits a tree run for a request above a bin's size, what is left usually takes the run's node
//!   over in place (new block, smaller size) instead of a remove and an insert: the best-fit walk yields the
//!   run's predecessor, and the key stays above it. A free that merges grows a neighbour's node in place
//!   likewise when the key stays below its successor's.
//! - A request a bin could hold that the tree serves splits the tree's smallest run inside `alloc_tree`, with
//!   no further call: what is left keeps the node, or goes to its bin while the node leaves the tree by a
//!   splice (`remove_smallest`: it has no smaller child; only a black leaf below the root is rebalanced, by
//!   `tree_remove`). Through `take` and `tree_remove` these were the bullet-hell and agb traces' slowest
//!   allocations, 408 and 411 cycles (measured with the benchmark's earlier timer); now 204 and 206.
//!
//! - A tree node's colour is a byte of its run's second block, so a colour test is a load and a change a store,
//!   where a map code took a read-modify-write of a map byte; and a node with one child leaves the tree by a
//!   splice (the child, a red leaf, takes its place, black). Together, in ARM/IWRAM: the random mix's slowest
//!   free 781 → 665 cycles, the adversarial trace's 668 → 580, the worst case at 14 tree runs 715 / 1 359 →
//!   584 / 1 070 (allocation / free), and 1 072 bytes less of the game's IWRAM. A free whose merged node must
//!   move past its successor does the splice and the insert's walk in line in ARM; in Thumb a node whose key
//!   passes only its successor trades places with it, with no walk or rebalancing (`tree_grow`).
//!
//! The code bytes each build puts in IWRAM and ROM, ours and the peers', are in `docs/benchmarks.md`, read from
//! the ELFs. `docs/benchmarks.md` also has the worst case against the number of tree runs.

mod adapter;
mod bins;
mod boxed;
mod check;
mod global;
mod map;
#[cfg(any(test, feature = "testing"))]
pub mod props;
mod stats;
#[cfg(test)]
mod tests;
mod tree;
mod view;

pub use adapter::{LockError, LockedHeap};
pub use bins::BINNED;
pub use boxed::HeapBox;
/// The bound of [`LockedHeap::boxed_slice_zeroed`]'s `T`: types whose all-zero bytes are a value. Re-exported so
/// that a game can `unsafe impl` it for its own types without naming `bytemuck` (its derive needs that crate).
pub use bytemuck::Zeroable;
pub use check::{Invariant, InvariantKind};
pub use global::GlobalHeap;
pub use map::Block;
pub use stats::Stats;
pub use view::{Counters, HeapView, NodeField, Run, Side, TreeNode};

use bins::{BINS, lowest_bit};
use core::marker::PhantomData;
use core::ptr::NonNull;
use map::{AFTER_UNREAD, LAST, USED, USED_BIT};
use tree::NIL;

/// Header offsets (bytes from the base).
const HDR_COUNT: usize = 0;
const HDR_ROOT: usize = 2;
/// The map starts right after the header.
const MAP: usize = 4;
/// `take`'s predecessor when it is not known (never a block: blocks are below 65 536).
const UNKNOWN: u32 = u32::MAX;

/// Why a request or a free was refused. A refused call leaves the heap unchanged (apart from the counters of
/// failed requests and bad frees).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapError {
    /// The region holds fewer than 2 or more than 65 536 whole blocks (16 bytes, 512 KB) after 8-byte alignment
    /// (bytes after the last whole block are left unused), or does not keep what is written to it (ROM).
    BadRegion,
    /// A request for zero bytes.
    ZeroSize,
    /// A request that could not fit even in the empty heap (its size, plus the padding its alignment needs).
    TooLarge,
    /// An alignment that is not a power of two.
    BadAlign,
    /// No free run is large enough (the heap is full or too fragmented).
    OutOfMemory,
    /// Free of a pointer outside the managed blocks.
    OutsideHeap,
    /// Free of a pointer inside the heap that is not the first byte of a used run.
    NotRunStart,
    /// Free of a block that is free already: a double free (or a pointer never handed out).
    DoubleFree,
    /// A [`LockedHeap`] asked before [`LockedHeap::init`] installed its heap (or a [`GlobalHeap`]'s, whose
    /// region could not hold one).
    NotInitialised,
}

/// A tree-heap over a borrowed region. See the [module docs](self) for layout and invariants.
///
/// `repr(C)` with the bin heads last: a store to a head (at an index the compiler cannot bound) then lies
/// past every other field, and LLVM no longer loads them again after it (an optimiser's effect, not a language
/// guarantee; measured: 13 cycles off an allocation from a bin).
#[derive(Debug)]
#[repr(C)]
pub struct Heap<'a> {
    /// First 8-aligned byte of the region: block 0.
    base: *mut u8,
    /// First managed block (blocks before it hold the header and map).
    first: u32,
    /// One past the last managed block.
    end: u32,
    /// First block of the top, the free run that ends the heap (kept out of the tree), or `end` when the last
    /// block is used.
    top: u32,
    /// A mask with bit `s` set when bin `s` is not empty.
    binned: u32,
    /// Managed blocks in use.
    used_blocks: u32,
    /// Most blocks in use at once up to the last free: a peak is followed by a free (or is now), so `free`
    /// keeps it instead of every `alloc`; the peak is the larger of this and `used_blocks`.
    peak_used: u32,
    /// Allocation requests refused, and frees refused; both saturate at `u32::MAX`.
    failed: u32,
    bad_frees: u32,
    /// Heads of the bins, the lists of free runs of 1 to `BINNED` blocks (index = size; 0 = empty).
    bins: [u16; BINS],
    _region: PhantomData<&'a mut [u8]>,
}

// SAFETY: a `Heap` owns its region exclusively for 'a (like the `&'a mut [u8]` it is made from, which is
// `Send`); its raw base pointer is never shared with anything outside the heap.
unsafe impl Send for Heap<'_> {}

impl<'a> Heap<'a> {
    /// A heap managing `region`: everything after the header and map is one free run.
    pub fn new(region: &'a mut [u8]) -> Result<Self, HeapError> {
        // SAFETY: the slice is valid for reads and writes, and borrowed exclusively by the heap for 'a.
        unsafe { Self::from_raw(region.as_mut_ptr(), region.len()) }
    }

    /// A heap managing the `len` bytes at `ptr` (e.g. a buffer in IWRAM placed by the linker).
    ///
    /// # Safety
    /// `ptr..ptr + len` must be valid for reads and writes for `'a`, and nothing else may access it during
    /// `'a` except through pointers the heap hands out, within their allocation and until it is freed.
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> Result<Self, HeapError> {
        let skip = (8 - (ptr as usize & 7)) & 7;
        if len < skip + 16 || (len - skip) / 8 > 65_536 {
            return Err(HeapError::BadRegion);
        }
        let total = ((len - skip) / 8) as u32;
        let first = header_blocks(total);
        let mut heap = Heap {
            // SAFETY: skip < len, so the result stays inside the region.
            base: unsafe { ptr.add(skip) },
            first,
            end: total,
            top: first,
            bins: [0; BINS],
            binned: 0,
            used_blocks: 0,
            peak_used: 0,
            failed: 0,
            bad_frees: 0,
            _region: PhantomData,
        };
        // All map codes 00 (free); the bytes after the map up to `first` are padding, cleared too.
        let mut i = MAP;
        while i < first as usize * 8 {
            // SAFETY: i < 8·first <= 8·total <= len - skip: inside the region.
            unsafe { *heap.base.add(i) = 0 };
            i += 1;
        }
        heap.set_header(HDR_COUNT, total - first);
        heap.set_header(HDR_ROOT, NIL);
        // Memory that drops writes (ROM on the GBA, against the contract above) is refused here rather than
        // handing out blocks there: the count must read back, past the compiler's knowledge of what was written.
        // SAFETY: the header's first 2 bytes, inside the region (as in `header`).
        let count = unsafe { heap.base.add(HDR_COUNT).cast::<u16>().read_volatile() };
        if u32::from(count) != total - first {
            return Err(HeapError::BadRegion);
        }
        // Every managed block is the top, which holds no fields.
        Ok(heap)
    }

    /// Starts the peak over from the blocks in use now (e.g. at the start of a level).
    pub fn reset_peak(&mut self) {
        self.peak_used = self.used_blocks;
    }

    /// Bytes available for allocation (managed blocks × 8).
    #[inline]
    pub fn capacity(&self) -> usize {
        (self.end - self.first) as usize * 8
    }

    /// Allocates `size` bytes aligned to `align` (any power of two) from the smallest free run that fits;
    /// the rest of the run stays free. The memory is not initialised. A request that could not fit even in the
    /// empty heap is [`TooLarge`](HeapError::TooLarge); one that does not fit now is
    /// [`OutOfMemory`](HeapError::OutOfMemory).
    #[inline(always)]
    pub fn alloc(&mut self, size: usize, align: usize) -> Result<NonNull<u8>, HeapError> {
        // The common request in two compares: 1 byte up to the capacity, and an alignment of 1, 2, 4 or 8
        // (`align - 1` below 8 and sharing no bit with `align`). Everything else is out of line.
        if size.wrapping_sub(1) >= self.capacity() || align.wrapping_sub(1) & (align | !7) != 0 {
            return self.alloc_other(size, align);
        }
        let n = ((size + 7) >> 3) as u32;
        // The smallest run that fits: a binned one, else one in the tree (all larger than the bins'); the top
        // when it is smaller still (it comes after every run of its size: it ends the heap).
        let top_size = self.end - self.top;
        // The non-empty bins from n on, as the mask's bits from bit 0.
        let fits = if n <= BINNED { self.binned >> n } else { 0 };
        if fits != 0 {
            if fits & 1 != 0 {
                // A run of exactly n blocks: the best fit (a top of n blocks comes after it).
                let run = self.bin_pop(n);
                return Ok(self.hand_out(run, n));
            }
            let k = lowest_bit(fits);
            // The top when it fits and is smaller than the bin's runs (`n <= top_size < n + k`, one compare).
            if top_size.wrapping_sub(n) < k {
                return Ok(self.take_top(self.top, n));
            }
            return Ok(self.take_binned(n + k, n));
        }
        // No bin fits: with an empty tree, or a top small enough for a bin (smaller than every tree run), the
        // top is the best fit if it fits at all.
        if top_size >= n && (top_size <= BINNED || self.root() == NIL) {
            return Ok(self.take_top(self.top, n));
        }
        match self.alloc_tree(n, top_size) {
            Some(p) => Ok(p),
            None => Err(HeapError::OutOfMemory),
        }
    }

    /// `alloc`'s search of the tree, when no bin serves the request: the blocks, or `None` when no run fits
    /// (counted by `refuse_cold`). Out of line, to keep `alloc` short. An `Option` of a pointer comes back in
    /// a register; the `Result` it returned came back through memory, written by the callee and read by the
    /// caller: the bullet-hell and agb traces' slowest allocations (splits of the smallest run, here) took 219 and
    /// 221 cycles in ARM/IWRAM instead of 204 and 206, and even `alloc`'s fast path 2 more (measured).
    #[cold]
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_alloc_tree")
    )]
    fn alloc_tree(&mut self, n: u32, top_size: u32) -> Option<NonNull<u8>> {
        // The two kinds of request keep their searches and top tests apart: one shared search and test before
        // the split cost the smallest run's splits 16-18 cycles (measured when this was written: 237 and 239
        // instead of 219 and 221).
        if n > BINNED {
            // The top through `take` too: requests above a bin's size are rare, and one copy of the map mark
            // fewer here saves 92 bytes of IWRAM.
            let (mut run, mut below) = self.best_fit(n);
            if top_size >= n && (run == NIL || top_size < self.size(run)) {
                (run, below) = (self.top, UNKNOWN);
            }
            if run == NIL {
                return self.refuse_cold();
            }
            return Some(self.take(run, below, run, n));
        }
        // Every tree run fits a request a bin could hold: the best is the smallest.
        let run = self.smallest();
        if top_size >= n && (run == NIL || top_size < self.size(run)) {
            return Some(self.take_top(self.top, n));
        }
        if run == NIL {
            return self.refuse_cold();
        }
        // `take`'s split of the smallest run, without its calls. Each path here ends in its own `hand_out`:
        // sharing one tail saved 244 bytes of IWRAM but cost these splits 14-18 cycles (measured). At least 1
        // block is left: a tree run has more than BINNED >= n.
        let tail = self.size(run) - n;
        if tail > BINNED {
            // With no predecessor, the shrunk key is still the smallest.
            self.tree_replace(run, self.parent(run), run + n, tail);
        } else {
            self.remove_smallest(run);
            self.bin_push(run + n, tail);
        }
        Some(self.hand_out(run, n))
    }

    /// Hands out the first `n` blocks of the first run of bin `s > n` (an exact fit is `alloc`'s own); the rest
    /// goes to its own bin.
    #[inline(always)]
    fn take_binned(&mut self, s: u32, n: u32) -> NonNull<u8> {
        let run = self.bin_pop(s);
        self.bin_push(run + n, s - n);
        self.hand_out(run, n)
    }

    /// `alloc` for what its fast path leaves: refusals of bad requests, and alignments above a block.
    #[cold]
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_alloc_other")
    )]
    fn alloc_other(&mut self, size: usize, align: usize) -> Result<NonNull<u8>, HeapError> {
        if size == 0 {
            return self.refuse(HeapError::ZeroSize);
        }
        if align == 0 || align & (align - 1) != 0 {
            return self.refuse(HeapError::BadAlign);
        }
        if size > self.capacity() {
            return self.refuse(HeapError::TooLarge);
        }
        self.alloc_aligned(((size + 7) >> 3) as u32, align)
    }

    /// `alloc` for alignments above a block: the smallest run in key order whose first aligned block leaves
    /// room for `n` blocks, placed by the run's real address. Runs of at least `n + align/8 - 1` blocks
    /// always fit, so the walk passes only runs whose size lies between that and `n`.
    #[inline(always)]
    fn alloc_aligned(&mut self, n: u32, align: usize) -> Result<NonNull<u8>, HeapError> {
        // Binned runs first, smallest size first (the non-empty bins only, from the mask), then the tree's in
        // key order. A run of at least `n + align/8 - 1` blocks fits whatever its padding, so in such a bin
        // the first run is taken; in a smaller one each run's padding is tried.
        let mut s = n;
        let mut fits = if n <= BINNED { self.binned >> n } else { 0 };
        while fits != 0 {
            let k = lowest_bit(fits);
            s += k;
            fits >>= k;
            let mut r = self.bin_head(s);
            if s as usize + 1 < n as usize + align / 8 {
                while r != NIL && self.pad_blocks(r, align) + n as usize > s as usize {
                    r = self.bin_next(r);
                }
            }
            if r != NIL {
                // The top instead when it is smaller and fits.
                let top_size = self.end - self.top;
                if top_size < s
                    && top_size >= n
                    && let Some(p) = self.take_top_aligned(top_size, n, align)
                {
                    return Ok(p);
                }
                return Ok(self.take(r, UNKNOWN, r + self.pad_blocks(r, align) as u32, n));
            }
            s += 1;
            fits >>= 1;
        }
        // `below` follows as the predecessor, for `take` to split the run in place.
        let (mut run, mut below) = self.ceiling(n);
        while run != NIL && self.pad_blocks(run, align) + n as usize > self.size(run) as usize {
            below = run;
            run = self.successor(run);
        }
        // The top, if it fits and its key is below the tree run found.
        let top_size = self.end - self.top;
        if top_size >= n
            && (run == NIL || (top_size << 16 | self.top) < self.key(run))
            && let Some(p) = self.take_top_aligned(top_size, n, align)
        {
            return Ok(p);
        }
        if run == NIL {
            return self.refuse_aligned(n, align);
        }
        // The front < the run's size, so it fits a u32. With no front, what is left may take the node over in
        // place, as in an unaligned split (`take` allows it only then: allowing it after a front too cost the
        // worst case's allocations 6 cycles, measured).
        let front = self.pad_blocks(run, align) as u32;
        Ok(self.take(run, if front == 0 { below } else { UNKNOWN }, run + front, n))
    }

    /// `alloc_aligned`'s use of the top, of `top_size >= n` blocks: its `n` blocks from its first at `align`, if
    /// they fit after that padding. Its callers test `top_size >= n` first, so the padding is found only for a
    /// top that may fit: for every top, that cost the random mix's slowest allocation 12 cycles in ARM/IWRAM and
    /// 34 in Thumb/ROM (measured).
    #[inline(always)]
    fn take_top_aligned(&mut self, top_size: u32, n: u32, align: usize) -> Option<NonNull<u8>> {
        let top = self.top;
        let front = self.pad_blocks(top, align);
        if front + n as usize > top_size as usize {
            return None;
        }
        // front < the top's size, so it fits a u32.
        Some(self.take(top, UNKNOWN, top + front as u32, n))
    }

    /// `alloc_aligned`'s refusal: [`TooLarge`](HeapError::TooLarge) when the request's first aligned place in the
    /// empty heap leaves too few blocks after it, else [`OutOfMemory`](HeapError::OutOfMemory). Tested only here:
    /// a run that fits starts its blocks at an aligned block at or after that place, so a request that is too
    /// large finds no run. Testing it first, on every aligned request, cost the random mix's slowest allocation
    /// 11 cycles in ARM/IWRAM and 20 in Thumb/ROM (measured). A request too large for its alignment is now
    /// refused after the search, as one that does not fit now always was.
    #[inline(always)]
    fn refuse_aligned(&mut self, n: u32, align: usize) -> Result<NonNull<u8>, HeapError> {
        let e = if self.pad_blocks(self.first, align) + n as usize > (self.end - self.first) as usize {
            HeapError::TooLarge
        } else {
            HeapError::OutOfMemory
        };
        self.refuse(e)
    }

    /// Blocks from block `b` to the first block at or after it whose address is a multiple of `align` (a
    /// power of two above 8); 0 when `b` is aligned.
    #[inline(always)]
    fn pad_blocks(&self, b: u32, align: usize) -> usize {
        let addr = self.base as usize + b as usize * 8;
        (align.wrapping_sub(addr) & (align - 1)) >> 3
    }

    /// Hands out blocks `start..start + n` of the free run `run`, the top, binned or in the tree (`below` is its
    /// predecessor in key order, NIL for none, or `UNKNOWN`, which moves a tree run's node by removing and
    /// inserting; only known when `start == run`, and read for a tree run with something left after): what is
    /// left becomes one or two free runs. With the `iwram` feature out of line, one ARM function for the tree's, the
    /// aligned and the resizing paths. Without it (Thumb code in ROM, where size matters less) it is inlined and
    /// files what is left in line (`split_run`): the random mix's slowest allocation (31 blocks at 16-byte
    /// alignment, splitting a tree run) 1 215 -> 1 149 cycles, the bullet-hell and agb traces' 410 / 422 ->
    /// 424 / 436 (talc's 520), the median refused allocation of the random mix and the adversarial trace 223 ->
    /// 235, measured in the Thumb/ROM benchmark.
    #[cfg_attr(feature = "iwram", inline(never))]
    #[cfg_attr(not(feature = "iwram"), inline(always))]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_take")
    )]
    fn take(&mut self, run: u32, below: u32, start: u32, n: u32) -> NonNull<u8> {
        if run == self.top {
            return self.take_top(start, n);
        }
        let run_size = self.size(run);
        let front = start - run;
        let after = start + n;
        let tail = run + run_size - after;
        if run_size > BINNED {
            // What is left can take the run's node over in place when it stays in the tree and its smaller key
            // stays above the predecessor `below`; the key only shrinks, so it stays below the successor.
            if below != UNKNOWN && tail > BINNED && (below == NIL || self.key(below) < (tail << 16 | after)) {
                debug_assert!(front == 0, "take: a predecessor is known only with nothing in front");
                self.tree_replace(run, self.parent(run), after, tail);
                return self.hand_out(start, n);
            }
            self.tree_remove(run);
        } else {
            self.bin_unlink(run, run_size);
        }
        if front != 0 {
            // The padding in front becomes a free run; the block before it is used or the map.
            self.split_run(run, front);
        }
        if tail != 0 {
            self.split_run(after, tail);
        }
        self.hand_out(start, n)
    }

    /// Writes the free run of `size` blocks at `b` (not the top) and puts it in its bin or the tree.
    #[inline(always)]
    fn index_run(&mut self, b: u32, size: u32) {
        if size <= BINNED {
            self.bin_push(b, size);
        } else {
            self.make_run(b, size);
            self.tree_insert(b);
        }
    }

    /// `index_run`, out of line for the paths that split and merge.
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_add_run")
    )]
    fn add_run(&mut self, b: u32, size: u32) {
        self.index_run(b, size);
    }

    /// `take`'s filing of what is left: `add_run`, or in line without the `iwram` feature. Not `add_run` inlined
    /// everywhere: in Thumb `take_top`, on `alloc`'s fast path, inlines it too, and the random mix's allocation
    /// median went 321 -> 335, above linked_list_allocator's 332 (measured).
    #[inline(always)]
    fn split_run(&mut self, b: u32, size: u32) {
        if cfg!(feature = "iwram") { self.add_run(b, size) } else { self.index_run(b, size) }
    }

    /// Takes the free run of `size` blocks at `b` (not the top) out of its bin or the tree.
    #[inline(always)]
    fn unindex_run(&mut self, b: u32, size: u32) {
        if size <= BINNED {
            self.bin_unlink(b, size);
        } else {
            self.tree_remove(b);
        }
    }

    /// Hands out blocks `start..start + n` of the top; what is left in front of them becomes a tree run, what
    /// is left behind them the top (nothing to write: the top holds no fields).
    #[inline(always)]
    fn take_top(&mut self, start: u32, n: u32) -> NonNull<u8> {
        let top = self.top;
        if start != top {
            // The padding in front: the block before it is used or the map.
            self.add_run(top, start - top);
        }
        self.top = start + n;
        self.hand_out(start, n)
    }

    /// Marks blocks `start..start + n`, taken out of the free runs, as a used run, counts them (the peak is
    /// `free`'s to keep) and returns their address.
    #[inline(always)]
    fn hand_out(&mut self, start: u32, n: u32) -> NonNull<u8> {
        // Taken before the map is written: after a store into the region the compiler reads `self.base` again,
        // as it cannot tell the region from the heap's own fields.
        // SAFETY: start is a managed block, so base + 8·start is inside the region and not null.
        let p = unsafe { NonNull::new_unchecked(self.base.add(start as usize * 8)) };
        self.mark_used(start, n);
        self.used_blocks += n;
        p
    }

    /// Frees the used run starting at `ptr` and merges it with free neighbours. Pointers outside the heap, not
    /// at the start of a used run, or at a free block are refused and the heap is left as it was: a double free
    /// is [`HeapError::DoubleFree`] while the run is still free.
    ///
    /// **A stale pointer is not caught.** Once a freed run's blocks have been handed out again, a pointer to its
    /// start may be the start of the new owner's run, and freeing it frees the new owner's block: the map holds
    /// no owner, only which blocks are used and where each used run ends (two bits a block, no header). Code that
    /// must not make this mistake owns its blocks through [`HeapBox`] or `Box::new_in`, which free
    /// each block once, from safe code; the raw `alloc` and `free` leave it to the caller, as `GlobalAlloc` does.
    // Not inlined in Thumb (no `iwram` feature): inlined into its caller, its many live values are spilled to the
    // stack, and the call costs less than the spills (for a few more bytes of stack). Alloc stays inlined, as a
    // call costs it more than it saves.
    #[cfg_attr(feature = "iwram", inline(always))]
    #[cfg_attr(not(feature = "iwram"), inline(never))]
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), HeapError> {
        let (b, prev) = match self.run_start(ptr) {
            Ok(found) => found,
            Err(e) => return self.refuse_free(e),
        };
        let (e, after_used) = self.clear_used_run(b);
        // The use may be at a peak before it falls: the peak is kept here rather than by every allocation.
        let used = self.used_blocks;
        if used > self.peak_used {
            self.peak_used = used;
        }
        self.used_blocks = used - (e + 1 - b);
        let below_free = prev & USED_BIT == 0;
        let after = e + 1;
        if after == self.top {
            // The run joins the top (or becomes it, when the top was empty), with the free run below if any.
            let mut start = b;
            if below_free {
                start = b - self.size(b - 1);
                self.unindex_run(start, b - start);
            }
            self.top = start;
            return Ok(());
        }
        // Block b-1 is the last of a free run: its size copy leads to that run's first block. Block `after`
        // starts a free run: its size is right there.
        let below_size = if below_free { self.size(b - 1) } else { 0 };
        // `after` is managed: a run that ends the heap is followed by the top, even an empty one (`end`). Its
        // code is usually in the word the run's end mark was read from.
        let after_free = if after_used == AFTER_UNREAD { self.map_get(after) & USED_BIT == 0 } else { after_used == 0 };
        let above_size = if after_free { self.size(after) } else { 0 };
        if below_size > BINNED || above_size > BINNED {
            self.merge(b, after, below_size, above_size);
            return Ok(());
        }
        // Binned neighbours leave their bins, and the merged run is filed like a new one.
        let start = b - below_size;
        if below_size != 0 {
            self.bin_unlink(start, below_size);
        }
        if above_size != 0 {
            self.bin_unlink(after, above_size);
        }
        self.index_run(start, after + above_size - start);
        Ok(())
    }

    /// `free`'s merge of the run `b..after` with its free neighbours of `below_size` and `above_size` blocks
    /// (0: not free), one of them in the tree; neither is the top. A tree neighbour's node takes the merged run,
    /// whose key is larger than either neighbour's; a binned neighbour leaves its bin. Out of line, to keep
    /// `free` short.
    #[cold]
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_merge")
    )]
    fn merge(&mut self, b: u32, after: u32, below_size: u32, above_size: u32) {
        let start = b - below_size;
        let size = after + above_size - start;
        let mut node = NIL;
        if below_size > BINNED {
            node = start;
        } else if below_size != 0 {
            self.bin_unlink(start, below_size);
        }
        if above_size > BINNED {
            if node == NIL {
                node = after;
            } else {
                // Keep the node with the larger key, which fewer keys follow; the other leaves the tree.
                let mut gone = after;
                if above_size >= below_size {
                    (node, gone) = (gone, node);
                }
                self.tree_remove(gone);
            }
        } else if above_size != 0 {
            self.bin_unlink(after, above_size);
        }
        self.tree_grow(node, start, size);
    }

    /// Resizes the used run starting at `ptr` to `size` bytes without moving it: a smaller size frees the
    /// blocks after the new end (merging them with a free run behind); a larger one takes blocks from the front
    /// of the free run right behind it. `Err(OutOfMemory)` when that run is missing or too small, and the
    /// heap is unchanged (the caller may then allocate, copy and free); `Err(TooLarge)` for a size above the
    /// capacity, as [`alloc`](Self::alloc) refuses it. A bad `ptr` is refused as by [`free`](Self::free),
    /// whatever the size, before the size is looked at. Not counted as a failed request: the caller decides
    /// what a refusal means.
    pub fn resize(&mut self, ptr: NonNull<u8>, size: usize) -> Result<(), HeapError> {
        let b = match self.run_start(ptr) {
            Ok((b, _)) => b,
            Err(e) => return self.refuse_free(e),
        };
        if size == 0 {
            return Err(HeapError::ZeroSize);
        }
        if size > self.capacity() {
            return Err(HeapError::TooLarge);
        }
        let e = self.used_run_end(b);
        let old = e + 1 - b;
        let n = ((size + 7) >> 3) as u32;
        if n < old {
            // The new last block becomes `LAST`; the blocks after it keep their codes, so they are already a used
            // run of their own: freeing it merges it like any free.
            self.map_set(b + n - 1, LAST);
            // SAFETY: block b + n < e + 1 is a managed block, inside the region.
            let tail = unsafe { NonNull::new_unchecked(self.base.add((b + n) as usize * 8)) };
            return self.free(tail);
        }
        if n > old {
            let next = e + 1;
            let k = n - old;
            // The top's size is not in its blocks.
            if next >= self.end
                || self.map_get(next) & USED_BIT != 0
                || (if next == self.top { self.end - next } else { self.size(next) }) < k
            {
                return Err(HeapError::OutOfMemory);
            }
            // The run behind gives up its first k blocks as an allocation would; then the old last block is no
            // longer the last, and the old blocks and the new are one run.
            let below = if next != self.top && self.size(next) > BINNED { self.predecessor(next) } else { UNKNOWN };
            self.take(next, below, next, k);
            self.map_set(e, USED);
        }
        Ok(())
    }

    /// The block of `ptr` and the map code of the block before it, if `ptr` is the first block of a used run;
    /// else why not, as `free` reports it.
    #[inline(always)]
    fn run_start(&self, ptr: NonNull<u8>) -> Result<(u32, u8), HeapError> {
        // The offset from the first managed block, in blocks, with the bits below a block rotated to the top: one
        // unsigned compare refuses both sides of the heap and a pointer into a block (measured in `make bench`:
        // every free 1 cycle cheaper in ARM/IWRAM, 5 to 11 in Thumb/ROM, than a compare and a test of the bits).
        let off = (ptr.as_ptr() as usize).wrapping_sub(self.base as usize + self.first as usize * 8);
        // Written out: `rotate_right` is a call of a Thumb helper in ROM where the MIR inliner does not force it.
        let i = off >> 3 | off << (usize::BITS - 3);
        if i >= (self.end - self.first) as usize {
            // Inside the heap, only a pointer into a block has an offset that is no block count.
            return Err(if off < self.capacity() { HeapError::NotRunStart } else { HeapError::OutsideHeap });
        }
        let b = self.first + i as u32;
        let (code, prev) = self.map_get_pair(b);
        if code & USED_BIT == 0 {
            return Err(HeapError::DoubleFree);
        }
        if prev == USED {
            return Err(HeapError::NotRunStart);
        }
        Ok((b, prev))
    }

    /// Node `from` becomes the free run of `size` blocks at `to`, whose key `(size, to)` is larger (a free
    /// merged into it): in place when the key stays below the successor's, else moved. A move is a one-child
    /// splice or a removal, then the insert's walk in line and only its rebalancing a call: a root moving past its
    /// only child, the bullet-hell trace's slowest free, 398 -> 328 cycles in ARM and 785 -> 747 in Thumb (a gain
    /// there only with `free` out of line; with `free` inlined, the adversarial trace's slowest free rose 1088 ->
    /// 1136); in ARM the random mix's and the adversarial trace's rose 665 -> 682 and 580 -> 597, and
    /// it took 576 bytes more of IWRAM. Thumb tries a pass ([`tree_pass`](Self::tree_pass)) before a removal, when
    /// the key passes only its successor: the random mix's frees that grow past one key 1213 / 1153 / 1117 -> 941 /
    /// 1003 / 969 cycles, and a move past two keys pays for its test (1069 -> 1137). In ARM the pass lost: in line
    /// in `merge`, the agb trace's slowest free rose 273 -> 278, above talc's; out of line with its test, the
    /// random mix's and the adversarial trace's slowest frees fell 678 / 593 -> 616 / 582, but the worst case at
    /// 14 tree runs rose 1080 -> 1143, and the function's 576 bytes of IWRAM left the game's stack less than its
    /// 2 KB of headroom. All measured in the benchmark's builds and the game's.
    #[inline(always)]
    fn tree_grow(&mut self, from: u32, to: u32, size: u32) {
        let p = self.parent(from);
        let next = self.successor_under(from, p);
        let key = size << 16 | to;
        if next == NIL || self.key(next) > key {
            self.tree_replace(from, p, to, size);
            return;
        }
        // The splice first: for a node with one child the pass is dearer than the splice and the insert (the
        // bullet-hell trace's slowest free in Thumb, a root moving past its only child, 807 -> 949, measured).
        if !self.splice(from) {
            if !cfg!(feature = "iwram") {
                let after = self.successor(next);
                if after == NIL || self.key(after) > key {
                    return self.tree_pass(from, p, next, to, size);
                }
            }
            self.tree_remove(from);
        }
        self.make_run(to, size);
        if self.attach(to) {
            self.insert_fixup(to);
        }
    }

    #[inline(always)]
    fn refuse(&mut self, e: HeapError) -> Result<NonNull<u8>, HeapError> {
        self.failed = self.failed.saturating_add(1);
        Err(e)
    }

    /// `alloc_tree`'s refusal, out of the fast path's line: counted by `refuse`, returned as `alloc_tree`
    /// returns it (`alloc` makes it `OutOfMemory`).
    #[cold]
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_refuse")
    )]
    fn refuse_cold(&mut self) -> Option<NonNull<u8>> {
        self.refuse(HeapError::OutOfMemory).ok()
    }

    /// Counts a refused free, out of the free's line: the common free then runs straight through.
    #[cold]
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_refuse_free")
    )]
    fn refuse_free(&mut self, e: HeapError) -> Result<(), HeapError> {
        self.bad_frees = self.bad_frees.saturating_add(1);
        Err(e)
    }

    /// Writes a free run's size into its first block (node) and last block (boundary copy).
    #[inline(always)]
    fn make_run(&mut self, b: u32, size: u32) {
        self.set_size(b, size);
        self.set_size(b + size - 1, size);
    }

    #[inline(always)]
    fn header(&self, offset: usize) -> u32 {
        // SAFETY: the header's 4 bytes are at the 8-aligned base, inside the region (>= 16 bytes).
        unsafe { *(self.base.add(offset) as *const u16) as u32 }
    }

    #[inline(always)]
    fn set_header(&mut self, offset: usize, v: u32) {
        // SAFETY: as in `header`.
        unsafe { *(self.base.add(offset) as *mut u16) = v as u16 }
    }
}

/// Blocks taken by the header and map in a region of `total` blocks: the smallest `f` with
/// 4 + ⌈(total − f) / 4⌉ ≤ 8·f, i.e. total + 16 ≤ 33·f. Written as ⌊(total + 48) / 33⌋ split so that no
/// `total` overflows.
pub const fn header_blocks(total: u32) -> u32 {
    total / 33 + (total % 33 + 48) / 33
}
