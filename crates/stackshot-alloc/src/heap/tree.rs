//! The red-black tree of free runs. Each node is the first block of its run: four `u16` fields (smaller child,
//! larger child, parent, size); its colour is a byte in the run's second block ([`COLOUR`]). Nodes are ordered
//! by the key `(size, block)`, packed as `size << 16 | block`, so keys are distinct and the leftmost run of a
//! size is found first.

use super::{HDR_ROOT, Heap};

/// "No node": block 0 holds the header, so it is never a free run.
pub(super) const NIL: u32 = 0;

/// Sides of a node: its children are at byte offset `2·side`.
pub(super) const SMALLER_SIDE: usize = 0;
pub(super) const LARGER_SIDE: usize = 1;
/// Node field offsets within the block.
pub(super) const PARENT: usize = 4;
/// Also the offset of the size copy in a run's last block.
pub(super) const SIZE: usize = 6;
/// The offset from a node of its colour, a byte (0 black, else red): the first byte of the run's second block,
/// free space like the rest of the run. A load or a store, where a map code took a read-modify-write of a map
/// byte (the slowest frees of the random mix 781 -> 665 cycles, measured in ARM/IWRAM).
pub(super) const COLOUR: usize = 8;
// The second block is the run's: a tree run has more than BINNED blocks.
const _: () = assert!(super::bins::BINNED >= 1);

#[cfg(test)]
extern crate std;
#[cfg(test)]
std::thread_local! {
    /// Calls of `tree_pass` on this thread, for the tests that must reach it.
    pub(super) static PASSES: core::cell::Cell<u32> = const { core::cell::Cell::new(0) };
}

impl Heap<'_> {
    #[inline(always)]
    pub(super) fn field(&self, b: u32, offset: usize) -> u32 {
        // SAFETY: callers pass a managed block b, so the 8 bytes at base + 8·b are inside the region; base is
        // 8-aligned, so the u16 at an even offset is aligned.
        unsafe { *(self.base.add(b as usize * 8 + offset) as *const u16) as u32 }
    }

    #[inline(always)]
    pub(super) fn set_field(&mut self, b: u32, offset: usize, v: u32) {
        // SAFETY: as in `field`; b is in a free run, which no allocation covers.
        unsafe { *(self.base.add(b as usize * 8 + offset) as *mut u16) = v as u16 }
    }

    #[inline(always)]
    fn child(&self, b: u32, side: usize) -> u32 {
        self.field(b, 2 * side)
    }
    #[inline(always)]
    pub(super) fn smaller(&self, b: u32) -> u32 {
        self.child(b, SMALLER_SIDE)
    }
    #[inline(always)]
    pub(super) fn larger(&self, b: u32) -> u32 {
        self.child(b, LARGER_SIDE)
    }
    #[inline(always)]
    pub(super) fn parent(&self, b: u32) -> u32 {
        self.field(b, PARENT)
    }
    /// The size of the free run whose first or last block is `b`.
    #[inline(always)]
    pub(super) fn size(&self, b: u32) -> u32 {
        self.field(b, SIZE)
    }
    #[inline(always)]
    fn set_child(&mut self, b: u32, side: usize, v: u32) {
        self.set_field(b, 2 * side, v)
    }
    #[inline(always)]
    fn set_parent(&mut self, b: u32, v: u32) {
        self.set_field(b, PARENT, v)
    }
    #[inline(always)]
    pub(super) fn set_size(&mut self, b: u32, v: u32) {
        self.set_field(b, SIZE, v)
    }
    #[inline(always)]
    pub(super) fn root(&self) -> u32 {
        self.header(HDR_ROOT)
    }
    #[inline(always)]
    fn set_root(&mut self, b: u32) {
        self.set_header(HDR_ROOT, b)
    }
    /// The node's key `(size, block)` as one number.
    #[inline(always)]
    pub(super) fn key(&self, b: u32) -> u32 {
        (self.size(b) << 16) | b
    }
    /// NIL counts as black. `b` must be a tree node, or (the checker's, a view's) a managed block before the
    /// last.
    #[inline(always)]
    pub(super) fn is_red(&self, b: u32) -> bool {
        // SAFETY: b is a tree node, so b + 1 is a managed block of its run (see `COLOUR`), or the caller has
        // checked that b + 1 is managed: either way the byte is inside the region.
        b != NIL && unsafe { *self.base.add(b as usize * 8 + COLOUR) } != 0
    }
    /// Colours `b`, a tree node or a run of more than [`BINNED`](super::bins::BINNED) blocks becoming one.
    #[inline(always)]
    pub(super) fn set_red(&mut self, b: u32, red: bool) {
        debug_assert!(b != NIL, "set_red: NIL");
        // SAFETY: b's run has more than BINNED >= 1 blocks, so b + 1 is a managed block of it and the byte is
        // inside the region; it is free space of the run, which no allocation covers.
        unsafe { *self.base.add(b as usize * 8 + COLOUR) = red as u8 }
    }

    /// The smallest free run with at least `want` blocks (lowest block among equal sizes unless an exact fit
    /// is met first), or NIL; and the last node passed on the way that is too small, or NIL. When the run found
    /// is larger than `want`, the walk went on to the end, and that node is the run's in-order predecessor:
    /// the nodes after the run on the path are its smaller subtree's rightmost path, or if that is empty, the
    /// path's last step to a larger child was from the predecessor.
    #[inline(always)]
    pub(super) fn best_fit(&self, want: u32) -> (u32, u32) {
        let mut x = self.root();
        let mut best = NIL;
        let mut below = NIL;
        while x != NIL {
            let s = self.size(x);
            if s < want {
                below = x;
                x = self.larger(x);
            } else {
                best = x;
                if s == want {
                    break;
                }
                x = self.smaller(x);
            }
        }
        (best, below)
    }

    /// The node with the smallest key, or NIL.
    #[inline(always)]
    pub(super) fn smallest(&self) -> u32 {
        let x = self.root();
        if x == NIL { NIL } else { self.leftmost(x) }
    }

    /// The node with the smallest key in the subtree of node `x` (not NIL).
    #[inline(always)]
    fn leftmost(&self, mut x: u32) -> u32 {
        let mut s = self.smaller(x);
        while s != NIL {
            x = s;
            s = self.smaller(x);
        }
        x
    }

    /// The node with the smallest key among runs of at least `want` blocks, or NIL; and its predecessor in key
    /// order, or NIL. Unlike [`best_fit`](Self::best_fit) it walks to the end even past an exact fit, so every
    /// run of that size or more comes after it, and the last node passed that is too small is the predecessor.
    #[inline(always)]
    pub(super) fn ceiling(&self, want: u32) -> (u32, u32) {
        let mut x = self.root();
        let mut best = NIL;
        let mut below = NIL;
        while x != NIL {
            if self.size(x) < want {
                below = x;
                x = self.larger(x);
            } else {
                best = x;
                x = self.smaller(x);
            }
        }
        (best, below)
    }

    /// The node before `x` in key order, or NIL.
    #[inline(always)]
    pub(super) fn predecessor(&self, x: u32) -> u32 {
        let mut y = self.smaller(x);
        if y != NIL {
            let mut r = self.larger(y);
            while r != NIL {
                y = r;
                r = self.larger(y);
            }
            return y;
        }
        let mut c = x;
        let mut p = self.parent(x);
        while p != NIL && self.smaller(p) == c {
            c = p;
            p = self.parent(p);
        }
        p
    }

    /// The node after `x` in key order, or NIL.
    #[inline(always)]
    pub(super) fn successor(&self, x: u32) -> u32 {
        self.successor_under(x, self.parent(x))
    }

    /// [`successor`](Self::successor) of `x` whose parent `p` the caller has read already.
    #[inline(always)]
    pub(super) fn successor_under(&self, x: u32, p: u32) -> u32 {
        let y = self.larger(x);
        if y != NIL {
            return self.leftmost(y);
        }
        let mut c = x;
        let mut p = p;
        while p != NIL && self.larger(p) == c {
            c = p;
            p = self.parent(p);
        }
        p
    }

    /// Gives node `from`'s place in the tree, links and colour to the free run of `size` blocks at `to` (the
    /// same block or another), and writes that run's size and size copy. The caller makes sure the new key
    /// `(size, to)` still lies strictly between the keys of `from`'s neighbours in key order, so the tree stays
    /// ordered with no rebalancing. `p` must be `from`'s parent, which the caller has read; NIL means `from` is
    /// the root, which is black, so that its colour needs no read.
    #[inline(always)]
    pub(super) fn tree_replace(&mut self, from: u32, p: u32, to: u32, size: u32) {
        debug_assert!(p == self.parent(from) && (p != NIL || !self.is_red(from)), "tree_replace: bad parent");
        debug_assert!(size > super::bins::BINNED, "tree_replace: a run of {size} blocks");
        // A merge's node is often the root of a small tree. Read before `to`'s fields are written: `to` may be
        // the block that holds it.
        let red = p != NIL && self.is_red(from);
        self.make_run(to, size);
        if to == from {
            return;
        }
        // SAFETY: from and to are distinct managed blocks in free runs (see `field`); the child links are the
        // first 4 bytes of the 8-aligned block, so both are one aligned u32.
        unsafe {
            let links = self.base.add(from as usize * 8) as *const u32;
            *(self.base.add(to as usize * 8) as *mut u32) = *links;
        }
        self.set_parent(to, p);
        self.replace_link(p, from, to);
        let s = self.smaller(to);
        if s != NIL {
            self.set_parent(s, to);
        }
        let l = self.larger(to);
        if l != NIL {
            self.set_parent(l, to);
        }
        // After the links are copied: `to`'s colour byte is `from`'s first byte when `to` is the block before.
        self.set_red(to, red);
    }

    /// Node `from` becomes the free run of `size` blocks at `to`, whose key `(size, to)` passes exactly one other
    /// key: that of `s`, `from`'s successor. The two exchange places: `s` takes `from`'s links and colour, `to`
    /// takes `s`'s, so the order ..., from, s, t, ... becomes ..., s, to, t, ... with the tree's shape and colours
    /// as they were, and nothing to rebalance (a removal and an insertion would each walk, and may rotate). `p`
    /// must be `from`'s parent, which the caller has read. `to` is `from` or a block of the new run outside the
    /// tree. Only Thumb calls it (see `tree_grow`), out of line: in line in `merge`, the registers `merge` then
    /// saves cost the bullet-hell trace's slowest free, which does not pass, 807 -> 828 cycles (measured).
    #[inline(never)]
    pub(super) fn tree_pass(&mut self, from: u32, p: u32, s: u32, to: u32, size: u32) {
        debug_assert!(p == self.parent(from) && s == self.successor(from), "tree_pass: bad parent or successor");
        debug_assert!(
            self.key(s) < (size << 16 | to) && {
                let after = self.successor(s);
                after == NIL || (size << 16 | to) < self.key(after)
            },
            "tree_pass: the key does not pass {s} alone"
        );
        #[cfg(test)]
        PASSES.with(|n| n.set(n.get() + 1));
        // Everything is read before anything is written: `to` may be `from`, or the block before it, whose colour
        // byte is `from`'s first link.
        let (fs, fl) = (self.smaller(from), self.larger(from));
        let (sp, ss, sl) = (self.parent(s), self.smaller(s), self.larger(s));
        let from_red = self.is_red(from);
        let s_red = self.is_red(s);
        // The two places may be next to each other: `s` is `from`'s larger child, or `from` is `s`'s smaller
        // child. A link from one place to the other then names the other's new holder.
        let to_s = |v: u32| if v == s { to } else { v };
        let to_from = |v: u32| if v == from { s } else { v };
        self.make_run(to, size);
        self.set_child(to, SMALLER_SIDE, to_from(ss));
        self.set_child(to, LARGER_SIDE, sl);
        self.set_parent(to, to_from(sp));
        self.set_child(s, SMALLER_SIDE, fs);
        self.set_child(s, LARGER_SIDE, to_s(fl));
        self.set_parent(s, to_s(p));
        // The links into the two places from outside them. The parents differ: the two nodes are next to each
        // other in key order, so a common parent would lie between them.
        if p != s {
            self.replace_link(p, from, s);
        }
        if sp != from {
            self.replace_link(sp, s, to);
        }
        if fs != NIL {
            self.set_parent(fs, s);
        }
        if fl != NIL && fl != s {
            self.set_parent(fl, s);
        }
        if ss != NIL && ss != from {
            self.set_parent(ss, to);
        }
        if sl != NIL {
            self.set_parent(sl, to);
        }
        self.set_red(s, from_red);
        self.set_red(to, s_red);
    }

    /// Points `p`'s link to its child `u` (or the root, when `p` is NIL) at `v`.
    #[inline(always)]
    fn replace_link(&mut self, p: u32, u: u32, v: u32) {
        if p == NIL {
            self.set_root(v);
        } else if self.smaller(p) == u {
            self.set_child(p, SMALLER_SIDE, v);
        } else {
            self.set_child(p, LARGER_SIDE, v);
        }
    }

    /// Puts `u`'s parent's link (or the root) on `v`.
    #[inline(always)]
    fn replace_child(&mut self, u: u32, v: u32) {
        let p = self.parent(u);
        self.replace_link(p, u, v);
        if v != NIL {
            self.set_parent(v, p);
        }
    }

    /// Rotation that moves `x` down to side `d` of its child from the other side, which takes `x`'s place.
    /// (`d` = [`SMALLER_SIDE`]: the larger child rises.) With the `iwram` feature one shared function: inlined
    /// at its five call sites it took about 1 KB more of IWRAM. Without it, in Thumb code in ROM, it is inlined:
    /// the adversarial trace's slowest free 1152 -> 1088 cycles, the random mix's 1277 -> 1219 (its slowest
    /// allocation 1215 -> 1235), measured in the Thumb/ROM benchmark.
    #[cfg_attr(feature = "iwram", inline(never))]
    #[cfg_attr(not(feature = "iwram"), inline(always))]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_rotate")
    )]
    fn rotate(&mut self, x: u32, d: usize) {
        let y = self.child(x, 1 - d);
        let mid = self.child(y, d);
        self.set_child(x, 1 - d, mid);
        if mid != NIL {
            self.set_parent(mid, x);
        }
        self.replace_child(x, y);
        self.set_child(y, d, x);
        self.set_parent(x, y);
    }

    /// Inserts the free run at `z` (its size already written) and rebalances. Shared by alloc and free, so
    /// not inlined; with the `iwram` feature it is ARM code in IWRAM like its callers.
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_tree_insert")
    )]
    pub(super) fn tree_insert(&mut self, z: u32) {
        if self.attach(z) {
            self.fix_red_red(z);
        }
    }

    /// `tree_insert`'s rebalancing alone, out of line: for `tree_grow`, which attaches in line. Only when
    /// [`attach`](Self::attach) returned true: `z`'s parent is red.
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_insert_fixup")
    )]
    pub(super) fn insert_fixup(&mut self, z: u32) {
        self.fix_red_red(z);
    }

    /// Hangs the free run at `z` (its size already written) as a leaf where its key belongs, red, or black as the
    /// lone root; true when its parent is red, which [`fix_red_red`](Self::fix_red_red) then mends.
    #[inline(always)]
    pub(super) fn attach(&mut self, z: u32) -> bool {
        let k = self.key(z);
        let mut p = NIL;
        let mut x = self.root();
        let mut d = SMALLER_SIDE;
        while x != NIL {
            p = x;
            d = if k < self.key(x) { SMALLER_SIDE } else { LARGER_SIDE };
            x = self.child(x, d);
        }
        self.set_child(z, SMALLER_SIDE, NIL);
        self.set_child(z, LARGER_SIDE, NIL);
        self.set_parent(z, p);
        if p == NIL {
            // The lone root, black.
            self.set_red(z, false);
            self.set_root(z);
            return false;
        }
        self.set_child(p, d, z);
        self.set_red(z, true);
        self.is_red(p)
    }

    /// Mends the red node `z` under a red parent (as `attach` found it: not tested again): recolours while the
    /// uncle is red, else one or two rotations end it. The root stays black throughout, so it needs no
    /// blackening at the end.
    #[inline(always)]
    fn fix_red_red(&mut self, z: u32) {
        debug_assert!(self.is_red(self.parent(z)), "fix_red_red: the parent of {z} is black");
        let mut z = z;
        loop {
            let p = self.parent(z);
            // p is red, so it is not the root and g exists; d is p's side under g.
            let g = self.parent(p);
            let d = if p == self.smaller(g) { SMALLER_SIDE } else { LARGER_SIDE };
            let u = self.child(g, 1 - d);
            if self.is_red(u) {
                self.set_red(p, false);
                self.set_red(u, false);
                let gp = self.parent(g);
                if gp == NIL {
                    return;
                }
                self.set_red(g, true);
                if !self.is_red(gp) {
                    return;
                }
                z = g;
                continue;
            }
            if z == self.child(p, 1 - d) {
                self.rotate(p, d);
                z = p;
            }
            let p = self.parent(z);
            self.set_red(p, false);
            self.set_red(g, true);
            self.rotate(g, 1 - d);
            return;
        }
    }

    /// Unlinks the smallest node `z` (it has no smaller child, and is its parent's smaller child). A splice, but
    /// for a black leaf below the root, which [`tree_remove`](Self::tree_remove) rebalances.
    #[inline(always)]
    pub(super) fn remove_smallest(&mut self, z: u32) {
        let x = self.larger(z);
        let p = self.parent(z);
        debug_assert!(
            self.smaller(z) == NIL && (p == NIL || self.smaller(p) == z),
            "remove_smallest: not the smallest"
        );
        if x != NIL {
            // A node with one child is black and its child a red leaf, which takes its place and its colour.
            // The side is known, so not `replace_link`, whose read of it cost these allocations 5 cycles
            // (measured).
            if p == NIL {
                self.set_root(x);
            } else {
                self.set_child(p, SMALLER_SIDE, x);
            }
            self.set_parent(x, p);
            self.set_red(x, false);
        } else if p == NIL {
            // The lone root.
            self.set_root(NIL);
        } else if self.is_red(z) {
            self.set_child(p, SMALLER_SIDE, NIL);
        } else {
            self.tree_remove(z);
        }
    }

    /// Unlinks the node `z` if it has exactly one child: that node is black and its child a red leaf, which takes
    /// its place, black, with no fix-up (the case `tree_remove` writes out first: the bullet-hell trace's slowest
    /// free, which moves a root with one child, 479 -> 435 cycles in ARM/IWRAM, measured). False, and nothing
    /// done, otherwise. For `tree_grow`'s move in line.
    #[inline(always)]
    pub(super) fn splice(&mut self, z: u32) -> bool {
        let zs = self.smaller(z);
        let zl = self.larger(z);
        if (zs == NIL) == (zl == NIL) {
            return false;
        }
        let x = zs | zl;
        self.replace_child(z, x);
        self.set_red(x, false);
        true
    }

    /// Unlinks the node `z` and rebalances. Shared like `tree_insert`.
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_tree_remove")
    )]
    pub(super) fn tree_remove(&mut self, z: u32) {
        let zs = self.smaller(z);
        let zl = self.larger(z);
        // x takes the place of the node that leaves its position; xp is x's parent afterwards (x may be NIL).
        let x;
        let xp;
        let removed_black;
        if zs == NIL || zl == NIL {
            x = if zs == NIL { zl } else { zs };
            if x != NIL {
                // `splice`'s case, written out: with `splice` at the top of this function the slowest frees of
                // the random mix and the adversarial trace were 1-2 cycles dearer in ARM, 20-24 in Thumb
                // (measured).
                self.replace_child(z, x);
                self.set_red(x, false);
                return;
            }
            xp = self.parent(z);
            removed_black = !self.is_red(z);
            self.replace_child(z, x);
        } else {
            // Two children: z's successor y (leftmost of the larger side) takes z's place and colour. The walk is
            // written out: through `leftmost` the compiler laid this function out worse, and the slowest frees by
            // tree size rose 7 to 16 cycles (measured).
            let mut y = zl;
            let mut l = self.smaller(y);
            while l != NIL {
                y = l;
                l = self.smaller(y);
            }
            removed_black = !self.is_red(y);
            x = self.larger(y);
            if y == zl {
                xp = y;
            } else {
                xp = self.parent(y);
                self.replace_child(y, x);
                self.set_child(y, LARGER_SIDE, zl);
                self.set_parent(zl, y);
            }
            self.replace_child(z, y);
            self.set_child(y, SMALLER_SIDE, zs);
            self.set_parent(zs, y);
            let z_red = self.is_red(z);
            self.set_red(y, z_red);
        }
        if !removed_black {
            return;
        }
        // A black node left the paths through x (child of xp): restore the black height. x is the root
        // exactly when xp is NIL.
        let mut x = x;
        let mut xp = xp;
        while xp != NIL && !self.is_red(x) {
            // d is x's side; x is short one black, so its sibling w is a real node.
            let d = if x == self.smaller(xp) { SMALLER_SIDE } else { LARGER_SIDE };
            let mut w = self.child(xp, 1 - d);
            if self.is_red(w) {
                self.set_red(w, false);
                self.set_red(xp, true);
                self.rotate(xp, d);
                w = self.child(xp, 1 - d);
            }
            if !self.is_red(self.smaller(w)) && !self.is_red(self.larger(w)) {
                self.set_red(w, true);
                x = xp;
                xp = self.parent(x);
                continue;
            }
            if !self.is_red(self.child(w, 1 - d)) {
                let near = self.child(w, d);
                self.set_red(near, false);
                self.set_red(w, true);
                self.rotate(w, 1 - d);
                w = self.child(xp, 1 - d);
            }
            let xp_red = self.is_red(xp);
            self.set_red(w, xp_red);
            self.set_red(xp, false);
            let far = self.child(w, 1 - d);
            self.set_red(far, false);
            self.rotate(xp, d);
            // The rotation restored the black height: stop, and blacken the root below.
            x = self.root();
            break;
        }
        if x != NIL {
            self.set_red(x, false);
        }
    }

    /// Number of nodes on the longest root-to-leaf path (0 for an empty tree). Recursive: for tests and stats.
    pub fn tree_height(&self) -> u32 {
        self.height_below(self.root())
    }

    fn height_below(&self, b: u32) -> u32 {
        if b == NIL {
            return 0;
        }
        let s = self.height_below(self.smaller(b));
        let l = self.height_below(self.larger(b));
        1 + if s > l { s } else { l }
    }
}
