//! The invariant checker: one function, [`Heap::check`], used by every test and property driver. The
//! invariants are listed in the [module docs](super).

use super::bins::BINNED;
use super::map::{SPARE, USED, USED_BIT};
use super::tree::NIL;
use super::{HDR_COUNT, Heap};

/// Which invariant is broken (numbered as in the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvariantKind {
    /// 1: the header's block count differs from the managed block count.
    Header,
    /// 1, 2: the root or a child link names a block that is not managed.
    NodeOutOfRange,
    /// 2: a tree node's block is marked used in the map.
    NodeNotFree,
    /// 2: a tree node's block is free but not the first block of a free run.
    NodeNotRunStart,
    /// 2: a node's parent field does not name its parent (or the root's is not 0).
    ParentLink,
    /// 2: keys `(size, block)` do not strictly increase in order.
    Order,
    /// 2: the root is red.
    RedRoot,
    /// 2: a red node has a red parent.
    RedRed,
    /// 2: the two subtrees of a node have different black heights.
    BlackHeight,
    /// 2: the tree is deeper than any red-black tree of this heap's size can be.
    Unbalanced,
    /// 2: a tree node's run is small enough for a bin.
    SmallInTree,
    /// 3: a bin's list is broken: an entry that is not the first block of a free run of the bin's size (or is
    /// in the top), a `prev` link that does not name the entry before, a list longer than the heap has runs, or
    /// a mask bit that disagrees with the bin's head (named at the entry, or at 0 for the head or mask).
    BinLink,
    /// 3: a used run reaches the end of the heap or a free block without an end-of-run mark (named at its
    /// first block).
    Unterminated,
    /// 3: a free run's size (not the top's: it has none) is zero or runs past the end of the heap; 2: a tree
    /// node's run has no second block below the top (where its colour is).
    BadSize,
    /// 3: a block inside a free run (by its node's size) is marked used.
    UsedInFreeRun,
    /// 3: a free block has the map's spare code `10`, which no block has.
    SpareCode,
    /// 3: a free run's last block does not repeat its size.
    SizeCopy,
    /// 3: a free run is followed by another free block.
    FreeRunsTouch,
    /// 3: a free run other than the top, too large for a bin, has no node in the tree.
    RunNotInTree,
    /// 3: a free run other than the top, small enough for a bin, is not in the bin of its size.
    RunNotInBin,
    /// 3: the top (the free run that ends the heap) has a node in the tree.
    TopInTree,
    /// 4: the count of blocks in use or the top's first block disagrees with the map, or the tree's node
    /// count with the map's runs for it.
    Stats,
}

/// A broken invariant and the block where it was found (0 for the header and counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invariant {
    /// Which invariant.
    pub kind: InvariantKind,
    /// The block where it was found broken.
    pub block: u32,
}

/// No valid tree is deeper: a red-black tree of n < 2^15 nodes has height <= 2·log2(n + 1) < 30.
pub(super) const MAX_DEPTH: u32 = 32;

fn broken(kind: InvariantKind, block: u32) -> Result<(), Invariant> {
    Err(Invariant { kind, block })
}

impl Heap<'_> {
    /// Checks every invariant; O(blocks + runs · log runs). For tests and debugging, not the frame loop.
    pub fn check(&self) -> Result<(), Invariant> {
        use InvariantKind::*;
        if self.header(HDR_COUNT) != self.end - self.first {
            return broken(Header, 0);
        }
        let root = self.root();
        if root != NIL && !self.managed(root) {
            return broken(NodeOutOfRange, root);
        }
        // The top's blocks may never have been written (a region given uninitialised): nothing of them is read.
        // It starts where the map's free codes that end it start, or where the heap says, if that is before:
        // a stray used code inside the top then leaves the top's start unread (UsedInFreeRun names the code).
        let top = if self.managed(self.top) { self.map_top().min(self.top) } else { self.map_top() };
        let mut nodes = 0;
        self.check_subtree(root, NIL, 0, u32::MAX, 1, top, &mut nodes)?;
        let binned = self.check_bins(top)?;

        let mut b = self.first;
        let mut runs = 0;
        let mut free = 0;
        while b < self.end {
            if self.map_get(b) & USED_BIT != 0 {
                // Used codes up to a `LAST`; the end of the heap or a free code first means the mark is lost.
                let start = b;
                while self.map_get(b) == USED {
                    b += 1;
                    if b == self.end || self.map_get(b) & USED_BIT == 0 {
                        return broken(Unterminated, start);
                    }
                }
                b += 1;
                continue;
            }
            // The top holds no size: it is the rest of the map.
            let s = if b == top { self.end - b } else { self.size(b) };
            if s == 0 || b + s > self.end {
                return broken(BadSize, b);
            }
            let mut i = b;
            while i < b + s {
                let code = self.map_get(i);
                if code & USED_BIT != 0 {
                    return broken(UsedInFreeRun, i);
                }
                if code == SPARE {
                    return broken(SpareCode, i);
                }
                i += 1;
            }
            if b != top && self.size(b + s - 1) != s {
                return broken(SizeCopy, b + s - 1);
            }
            if b + s < self.end && self.map_get(b + s) & USED_BIT == 0 {
                return broken(FreeRunsTouch, b + s);
            }
            // The top is in neither (a node in it has been named by the tree's walk: TopInTree).
            if b != top && s <= BINNED && !self.bin_has(b, s) {
                return broken(RunNotInBin, b);
            }
            if b != top && s > BINNED && !self.tree_has(b) {
                return broken(RunNotInTree, b);
            }
            runs += 1;
            free += s;
            b += s;
        }
        let used = self.end - self.first - free;
        let tree_runs = runs - binned - if top == self.end { 0 } else { 1 };
        if used != self.used_blocks || nodes != tree_runs || top != self.top {
            return broken(Stats, 0);
        }
        Ok(())
    }

    /// Whether `b` is a managed block.
    pub(super) fn managed(&self, b: u32) -> bool {
        self.first <= b && b < self.end
    }

    /// Checks the subtree at `x` (child of `parent`, keys strictly between `lo` and `hi`, at `depth`), counts
    /// its nodes, and returns its black height. `top` is the map's top, whose blocks are never read.
    #[allow(clippy::too_many_arguments, reason = "the walk's state, passed down as the recursion's own")]
    fn check_subtree(
        &self,
        x: u32,
        parent: u32,
        lo: u32,
        hi: u32,
        depth: u32,
        top: u32,
        nodes: &mut u32,
    ) -> Result<u32, Invariant> {
        use InvariantKind::*;
        let fail = |kind| Err(Invariant { kind, block: x });
        if x == NIL {
            return Ok(1);
        }
        if !self.managed(x) {
            return fail(NodeOutOfRange);
        }
        if depth > MAX_DEPTH {
            return fail(Unbalanced);
        }
        if self.map_get(x) & USED_BIT != 0 {
            return fail(NodeNotFree);
        }
        if x > self.first && self.map_get(x - 1) & USED_BIT == 0 {
            return fail(NodeNotRunStart);
        }
        if x == top {
            return fail(TopInTree);
        }
        if self.parent(x) != parent {
            return fail(ParentLink);
        }
        let k = self.key(x);
        if k <= lo || k >= hi {
            return fail(Order);
        }
        if self.size(x) <= BINNED {
            return fail(SmallInTree);
        }
        // The colour is read from the run's second block only once that block is known to be below the top
        // (whose blocks are never read).
        if x + 1 >= top {
            return fail(BadSize);
        }
        let red = self.is_red(x);
        if red && parent == NIL {
            return fail(RedRoot);
        }
        if red && self.is_red(parent) {
            return fail(RedRed);
        }
        *nodes += 1;
        let s = self.smaller(x);
        let l = self.larger(x);
        let hs = self.check_subtree(s, x, lo, k, depth + 1, top, nodes)?;
        let hl = self.check_subtree(l, x, k, hi, depth + 1, top, nodes)?;
        if hs != hl {
            return fail(BlackHeight);
        }
        Ok(hs + if red { 0 } else { 1 })
    }

    /// Checks every bin's list (see [`BinLink`](InvariantKind::BinLink)) against the map's top; returns how
    /// many runs they hold.
    fn check_bins(&self, top: u32) -> Result<u32, Invariant> {
        let mut total = 0;
        let mut s = 1;
        while s <= BINNED {
            let head = self.bin_head(s);
            if (head != NIL) != (self.binned & (1 << s) != 0) {
                return Err(Invariant { kind: InvariantKind::BinLink, block: 0 });
            }
            let mut prev = NIL;
            let mut r = head;
            while r != NIL {
                let run_start = self.managed(r) && (r == self.first || self.map_get(r - 1) & USED_BIT != 0);
                if !run_start
                    || self.map_get(r) != super::map::FREE
                    || r >= top
                    || self.size(r) != s
                    || r + s >= self.end
                    || self.bin_prev(r) != prev
                    || total >= self.end - self.first
                {
                    return Err(Invariant { kind: InvariantKind::BinLink, block: r });
                }
                total += 1;
                prev = r;
                r = self.bin_next(r);
            }
            s += 1;
        }
        Ok(total)
    }

    /// Whether the run at `b` is in bin `s`; bounded like `check_bins`, which has passed.
    fn bin_has(&self, b: u32, s: u32) -> bool {
        let mut r = self.bin_head(s);
        while r != NIL {
            if r == b {
                return true;
            }
            r = self.bin_next(r);
        }
        false
    }

    /// Whether the node at `b` is in the tree, searched by its key (the tree is known to be ordered).
    fn tree_has(&self, b: u32) -> bool {
        let k = self.key(b);
        let mut x = self.root();
        while x != NIL {
            let kx = self.key(x);
            if kx == k {
                return true;
            }
            x = if k < kx { self.smaller(x) } else { self.larger(x) };
        }
        false
    }
}
