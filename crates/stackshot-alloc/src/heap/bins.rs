//! The bins: free runs of up to [`BINNED`] blocks (other than the top) are kept out of the tree, in one
//! doubly linked list per size whose heads the `Heap` holds beside the map. An allocation of `n <= BINNED`
//! blocks takes the first run of the smallest non-empty bin of size `>= n` (found with one mask), and a free
//! pushes or unlinks a run in a few stores: the sizes games ask for most never touch the tree.
//!
//! A binned run's first block holds `next: u16` at offset 0 and `prev: u16` at offset 2 (0 = none), and its size
//! at offset 6 like every free run but the top; its map code is `FREE`.

use super::Heap;
use super::tree::{NIL, SIZE};

/// The largest free run, in blocks, kept in a bin instead of the tree (248 bytes).
pub const BINNED: u32 = 31;
/// Bin heads: index `s` for runs of `s` blocks (index 0 unused); a power of two (see `slot`).
pub(super) const BINS: usize = BINNED as usize + 1;
const _: () = assert!(BINS.is_power_of_two());

/// The index of bin `s <= BINNED` in the heads, masked so that no bounds check (a panic path into ROM) is
/// left in the hot paths.
#[inline(always)]
fn slot(s: u32) -> usize {
    (s & (BINS as u32 - 1)) as usize
}

const NEXT: usize = 0;
const PREV: usize = 2;
// `bin_push` writes a first block as two words in this order, low halfword first: the heap assumes a
// little-endian target (the GBA, and the hosts its tests run on), as the map, read as bytes and as words, does.
const _: () = assert!(NEXT == 0 && PREV == 2 && SIZE == 6 && cfg!(target_endian = "little"));

impl Heap<'_> {
    /// The first block of each bin's first run, by size in blocks (index 0 unused; 0 = empty): what a debugger
    /// needs besides the region to follow the bins.
    pub fn bin_heads(&self) -> [u16; BINS] {
        self.bins
    }

    /// The first run of bin `s`, or NIL.
    #[inline(always)]
    pub(super) fn bin_head(&self, s: u32) -> u32 {
        self.bins[slot(s)] as u32
    }

    /// The run after `r` in its bin, or NIL.
    #[inline(always)]
    pub(super) fn bin_next(&self, r: u32) -> u32 {
        self.field(r, NEXT)
    }

    /// The run before `r` in its bin, or NIL.
    #[inline(always)]
    pub(super) fn bin_prev(&self, r: u32) -> u32 {
        self.field(r, PREV)
    }

    /// Writes the free run `r` of `s <= BINNED` blocks (not the top) and puts it first in bin `s`: its first
    /// block whole (links and size), and the size copy in its last.
    #[inline(always)]
    pub(super) fn bin_push(&mut self, r: u32, s: u32) {
        let head = self.bin_head(s);
        // The first block as two words, two stores instead of three: `next` (the old head) and `prev` (none),
        // then the unused u16 at offset 4 and the size (little-endian: see the assert at the offsets).
        // SAFETY: r is a managed block (the caller's free run), so its 8 bytes at base + 8·r are inside the
        // region and, base being 8-aligned, word-aligned; no allocation covers a free run.
        unsafe {
            let p = self.base.add(r as usize * 8) as *mut u32;
            *p = head | NIL << 16;
            *p.add(1) = s << 16;
        }
        self.set_size(r + s - 1, s);
        if head != NIL {
            self.set_field(head, PREV, r);
        }
        self.bins[slot(s)] = r as u16;
        self.binned |= 1 << s;
    }

    /// Takes the first run out of the non-empty bin `s` and returns it.
    #[inline(always)]
    pub(super) fn bin_pop(&mut self, s: u32) -> u32 {
        let r = self.bin_head(s);
        let next = self.bin_next(r);
        self.bins[slot(s)] = next as u16;
        if next != NIL {
            self.set_field(next, PREV, NIL);
        } else {
            self.binned &= !(1 << s);
        }
        r
    }

    /// Takes the run `r` of `s` blocks out of its bin.
    #[inline(always)]
    pub(super) fn bin_unlink(&mut self, r: u32, s: u32) {
        let next = self.bin_next(r);
        let prev = self.bin_prev(r);
        if next != NIL {
            self.set_field(next, PREV, prev);
        }
        if prev != NIL {
            self.set_field(prev, NEXT, next);
        } else {
            self.bins[slot(s)] = next as u16;
            if next == NIL {
                self.binned &= !(1 << s);
            }
        }
    }
}

/// The index of the lowest set bit of `m != 0`: for `alloc`, the smallest non-empty bin above the request.
/// Written out: on ARMv4T (no CLZ) `trailing_zeros` is a call of a Thumb helper in ROM from ARM code. Which way
/// follows the crate's `iwram` feature, that is, the instruction set the heap's hot paths are expected to run
/// in: with it, [`lowest_bit_halving`] for the ARM wrappers in IWRAM (`iwram::heap_alloc`, `LockedHeap`),
/// where conditional execution makes the halving cheap; without it, [`lowest_bit_table`] for Thumb callers,
/// where every halving step is a branch.
#[inline(always)]
pub(super) fn lowest_bit(m: u32) -> u32 {
    if cfg!(feature = "iwram") { lowest_bit_halving(m) } else { lowest_bit_table(m) }
}

/// [`lowest_bit`] for ARM: looked up when it is among the lowest four, else found by halving. The lookup saves
/// a split from a bin up to three sizes above about 7 cycles (measured alone: the random mix's median
/// allocation 159 → 157). The halving stops at four bits: the bit, isolated, is then 1, 2, 4 or 8, whose index
/// is x/2 − x/8 (a shift and a subtract for two halvings: the AI trace's slowest allocation 156 → 154, the
/// random mix's median 153 → 151). It is the same search as the map's [`code_index_halving`], kept apart: that
/// one's bit is at an even position, so its last step is a single compare (its `k + x/4` there made ARM frees 1
/// cycle cheaper and Thumb frees 11 to 13 dearer, measured), and sharing this one cost every free 8 to 11
/// cycles (measured).
///
/// [`code_index_halving`]: super::map::code_index_halving
#[inline(always)]
pub(super) fn lowest_bit_halving(m: u32) -> u32 {
    // A set bit among the lowest four, the common case (the next bin up that is not empty is at most three
    // sizes above the request), is looked up: 2 bits of answer for each of the 16 values of the four bits.
    const LOW4: u32 = 0x1213_1210;
    let low4 = m & 15;
    if low4 != 0 {
        return (LOW4 >> (2 * low4)) & 3;
    }
    let mut x = m & m.wrapping_neg();
    let mut k = 0;
    if x > 0xFFFF {
        k += 16;
        x >>= 16;
    }
    if x > 0xFF {
        k += 8;
        x >>= 8;
    }
    if x > 0xF {
        k += 4;
        x >>= 4;
    }
    // x is 1, 2, 4 or 8. The mask shows the compiler that the answer is below 32, so the mask of `slot(s - n)`,
    // the rest's bin in `take_binned`, goes (`bin_pop(s)`'s stays; without it the random mix's median
    // allocation is 155 cycles, not 151, measured).
    k + (((x >> 1) - (x >> 3)) & 3)
}

/// [`lowest_bit`] for Thumb: the isolated bit times a de Bruijn sequence puts a distinct 5-bit pattern in the
/// top bits, which a 32-byte table maps back to the index: a multiply, a shift and a load (it is what LLVM
/// makes of `trailing_zeros` in Thumb code, plus its zero test; written out, it stays inline in ARM code too).
/// In the Thumb/ROM benchmark, against the halving: the AI trace's slowest allocation 414 → 339 cycles, the
/// adversarial trace's 409 → 339, the random mix's median 408 → 338; but an allocation from the top 196 → 208,
/// as the compiler now lays the common tail out behind a branch, and the slowest on the bullet-hell and agb
/// traces 2 cycles more. In ARM it lost: the random mix's median 146 → 152 (the halving's lookup of the lowest
/// four bits is cheaper still there). The map's [`code_index`] uses it too, in the same builds.
///
/// [`code_index`]: super::map::code_index
#[inline(always)]
pub(super) fn lowest_bit_table(m: u32) -> u32 {
    const DE_BRUIJN: u32 = 0x077C_B531;
    static INDEX: [u8; 32] = {
        let mut t = [0; 32];
        let mut i = 0;
        while i < 32 {
            t[(DE_BRUIJN << i >> 27) as usize] = i as u8;
            i += 1;
        }
        t
    };
    INDEX[(m & m.wrapping_neg()).wrapping_mul(DE_BRUIJN) as usize >> 27] as u32
}
