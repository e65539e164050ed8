//! The allocation map: two bits per managed block, four blocks a byte, lowest bits first. The map starts at a
//! 4-aligned byte, so it is also read as `u32` words of 16 blocks each: a used run's codes are set or cleared a
//! word at a time, and its end mark found with bit tricks on the whole word.

use super::{Heap, MAP};

/// A free block, any block of a free run.
pub(super) const FREE: u8 = 0b00;
/// A used block that is not the last of its run: both bits set, so that marking a run is an OR of its mask.
pub(super) const USED: u8 = 0b11;
/// The code no block has: the checker reports it (`SpareCode`).
pub(super) const SPARE: u8 = 0b10;
/// The last block of a used run: `USED` with its high bit clear.
pub(super) const LAST: u8 = 0b01;
/// The bit that is set in both used codes.
pub(super) const USED_BIT: u8 = 0b01;

/// The low bit of every code in a map word: `LAST` in all 16 blocks.
const EVEN: u32 = 0x5555_5555;
/// `clear_used_run`'s answer for the block after a run whose end mark is its word's last code: an odd bit, which
/// no code's used bit is.
pub(super) const AFTER_UNREAD: u32 = 2;

/// What the map says of one managed block, for overlays and debuggers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// A free block (in a free run).
    Free,
    /// A used block that is not the last of its run.
    Used,
    /// The last block of a used run.
    UsedEnd,
}

impl Heap<'_> {
    /// Managed block `i` (counted from 0; `None` past the last), read from the map.
    pub fn block(&self, i: u32) -> Option<Block> {
        if i >= self.end - self.first {
            return None;
        }
        Some(match self.map_get(self.first + i) {
            USED => Block::Used,
            LAST => Block::UsedEnd,
            _ => Block::Free,
        })
    }

    /// The map code of managed block `b` (`first <= b < end`).
    #[inline(always)]
    pub(super) fn map_get(&self, b: u32) -> u8 {
        let (byte, shift) = self.map_position(b);
        // SAFETY: b is a managed block, so its map byte (`map_position`) is below 8·first, inside the region.
        let byte = unsafe { *self.base.add(byte) };
        (byte >> shift) & 3
    }

    /// Sets the map code of managed block `b` (`first <= b < end`).
    #[inline(always)]
    pub(super) fn map_set(&mut self, b: u32, code: u8) {
        let (byte, shift) = self.map_position(b);
        // SAFETY: as in `map_get`; the heap owns the region, nothing else reads or writes the map.
        unsafe {
            let p = self.base.add(byte);
            *p = (*p & !(3 << shift)) | (code << shift);
        }
    }

    /// The byte offset from block 0 of the map byte holding managed block `b`'s code (`i = b - first`: byte
    /// `MAP + i / 4`), and the code's shift in it (`2 · (i % 4)`).
    #[inline(always)]
    pub(super) fn map_position(&self, b: u32) -> (usize, u32) {
        let i = (b - self.first) as usize;
        (MAP + (i >> 2), ((i & 3) << 1) as u32)
    }

    /// The map word holding managed block `b`'s code, and the shift of that code in it.
    #[inline(always)]
    fn map_word(&self, b: u32) -> (*mut u32, u32) {
        let i = b - self.first;
        // SAFETY: b is a managed block, so its map byte is inside the region (see `map_get`). The word around
        // it is too: the map starts at the 4-aligned byte MAP and 8·first, the map's end bound, is a multiple
        // of 4. The base is 8-aligned, so the word is aligned.
        let p = unsafe { (self.base.add(MAP) as *mut u32).add((i >> 4) as usize) };
        (p, (i & 15) << 1)
    }

    /// The map codes of managed block `b` and of the block before it, read from `b`'s map word when it holds
    /// both; `LAST` stands for the map in front of the first block.
    #[inline(always)]
    pub(super) fn map_get_pair(&self, b: u32) -> (u8, u8) {
        let (p, shift) = self.map_word(b);
        // SAFETY: p is b's map word (see `map_word`); the word before it is read only when it holds block
        // b-1's code, a managed block's.
        unsafe {
            let v = *p;
            let code = (v >> shift) as u8 & 3;
            let prev = if shift != 0 {
                // By the build's instruction set, measured in `make bench`: in Thumb the code before, shifted
                // to the top of the word, comes out with one shift less and no mask (the traces' median frees 15
                // to 18 cycles lower, the AI trace's 466 -> 448); in ARM that raised them 6 to 12.
                if cfg!(feature = "iwram") {
                    (v >> (shift - 2)) as u8 & 3
                } else {
                    (v.unchecked_shl(32 - shift) >> 30) as u8
                }
            } else if b > self.first {
                (*p.sub(1) >> 30) as u8
            } else {
                LAST
            };
            (code, prev)
        }
    }

    /// Marks the `n >= 1` blocks from `b` as one used run, `USED`, …, `LAST`, by setting bits only: the last
    /// block's code must have its high bit clear (an allocation's blocks are `FREE`), so that its `LAST` needs no
    /// bit cleared.
    #[inline(always)]
    pub(super) fn mark_used(&mut self, b: u32, n: u32) {
        debug_assert!(self.map_get(b + n - 1) & !USED_BIT == 0, "mark_used: block {} has its high bit set", b + n - 1);
        let (p, shift) = self.map_word(b);
        let end = shift + 2 * n;
        if end > 32 {
            if end > 64 {
                return self.mark_used_words(b, n);
            }
            // Two words: b's from its code on, and the next through the last code's low bit, `end - 34` in it.
            // SAFETY: every shift is below 32 (shift <= 30, and 34 <= end <= 64: end is even); p is b's map word
            // (see `map_word`), and the run's last block is managed, so the word after p, which holds its code,
            // is a managed block's map word too; nothing else accesses the map.
            unsafe {
                *p |= (!0u32).unchecked_shl(shift);
                *p.add(1) |= (!0u32).unchecked_shr(65 - end);
            }
            return;
        }
        // The run's codes all lie in b's word: its 2n bits from the shift, all set (`USED`) but the last, the
        // last code's high bit (`LAST`).
        // SAFETY: every shift is below 32 (n >= 1 and shift + 2n = end <= 32), so the compiler need not mask
        // it; p is b's map word (see `map_word`), and nothing else accesses the map.
        unsafe { *p |= (!0u32).unchecked_shr(33 - 2 * n).unchecked_shl(shift) }
    }

    /// `mark_used` for a run whose codes reach a third map word: word by word, counted from b's code on.
    #[inline(never)]
    #[cfg_attr(
        all(feature = "iwram-all", target_arch = "arm"),
        instruction_set(arm::a32),
        unsafe(link_section = ".iwram.heap_mark_used_words")
    )]
    fn mark_used_words(&mut self, b: u32, n: u32) {
        let (mut p, shift) = self.map_word(b);
        // The run's bits, counted from p's first: `shift..end`, all set but the last code's high bit.
        let mut end = shift + 2 * n;
        debug_assert!(end > 64, "mark_used_words: a run within two words");
        // SAFETY: end > 64 on entry (the caller's); p moves on while bits of the run are left beyond its word
        // (end > 32), so every word written holds managed blocks' codes (see `map_word`); every shift is below
        // 32 (shift <= 30, and the last word's end is 2..=32); nothing else accesses the map.
        unsafe {
            // The bits in the current word: from b's code on, then whole words. The loop ORs `from`, a
            // variable, so that LLVM sees no constant store to turn into a `memset` call (a `*p = !0` loop
            // becomes `__aeabi_memset4`, in ROM; `hot_paths` refuses it).
            let mut from = (!0u32).unchecked_shl(shift);
            loop {
                *p |= from;
                p = p.add(1);
                end -= 32;
                if end <= 32 {
                    break;
                }
                from = !0;
            }
            *p |= (!0u32).unchecked_shr(33 - end);
        }
    }

    /// The free runs, counted in the map: free blocks (low bit clear) whose block before is used, or the map in
    /// front of the first block. A word (16 blocks) at a time; codes past the last block count as used.
    pub(super) fn count_free_runs(&self) -> u32 {
        let count = self.end - self.first;
        // At least one word: a heap has at least one managed block.
        let last = (count - 1) / 16;
        let map = self.base.wrapping_add(MAP) as *const u32;
        let mut runs = 0;
        // Whether the block before the current word's first is used (the map, before the first word).
        let mut before_used = 1;
        let mut k = 0;
        while k < last {
            // SAFETY: word k < ⌈count / 16⌉ holds managed blocks' codes (see `map_word`); nothing writes.
            runs += run_starts(unsafe { *map.add(k as usize) }, &mut before_used);
            k += 1;
        }
        // The last word, its codes past the last block taken as used; apart, so that the loop tests no end.
        // SAFETY: as above, word `last` = ⌈count / 16⌉ - 1.
        let v = unsafe { *map.add(last as usize) } | (!0u64 << (2 * (count - 16 * last))) as u32;
        runs + run_starts(v, &mut before_used)
    }

    /// The top as the map shows it: the first of the free codes that end the map, or `end` when the last
    /// block is used. Block by block: for the checker and views.
    pub(super) fn map_top(&self) -> u32 {
        let mut b = self.end;
        while b > self.first && self.map_get(b - 1) & USED_BIT == 0 {
            b -= 1;
        }
        b
    }

    /// The last block of the used run that starts at `b` (its `LAST` code). Block by block: for `resize`,
    /// not the hot paths.
    pub(super) fn used_run_end(&self, b: u32) -> u32 {
        let mut e = b;
        while self.map_get(e) == USED {
            e += 1;
        }
        e
    }

    /// Clears the used run that starts at `b` to `FREE` through its end mark. Returns its last block, and the
    /// used bit of the block after it as the end mark's word held it (its bit at its place: 0 when free), or
    /// [`AFTER_UNREAD`] when the mark is that word's last code (the block after, if any, is the next word's).
    /// The second means nothing for a run that ends the heap: the caller tests for the top first.
    #[inline(always)]
    pub(super) fn clear_used_run(&mut self, b: u32) -> (u32, u32) {
        let (p, shift) = self.map_word(b);
        let from = !0u32 << shift;
        // SAFETY: p is b's map word (see `map_word`), and the run's end mark is at or after b's code, inside the
        // heap (invariant 3): the words read and written up to the mark's hold managed blocks' codes. Nothing
        // else accesses the map.
        let (codes, after) = unsafe {
            let v = *p;
            let ends = end_marks(v) & from;
            if ends != 0 {
                clear_to_mark(p, v, from, ends)
            } else {
                // The run goes on into the next word. Most such runs end in it, cleared here; longer ones go
                // out of line (with the loop in line, the spills it caused cost every free 10-20 cycles). In
                // Thumb a third word is cleared in line too: the random mix's two slowest frees, of runs of 32
                // and 27 blocks, 1158 / 1137 -> 1093 / 1072 cycles; with the code's layout, the median frees of
                // the AI, agb and adversarial traces rose 2 cycles (479 -> 481, 467 -> 469) and the cheapest 6.
                *p = v & !from;
                let q = p.add(1);
                let w = *q;
                let ends = end_marks(w);
                let (k, after) = if ends != 0 {
                    clear_to_mark(q, w, !0, ends)
                } else if cfg!(feature = "iwram") {
                    clear_words(q)
                } else {
                    *q = 0;
                    let r = q.add(1);
                    let x = *r;
                    let ends = end_marks(x);
                    let (k, after) = if ends != 0 { clear_to_mark(r, x, !0, ends) } else { clear_words(r) };
                    (16 + k, after)
                };
                (16 + k, after)
            }
        };
        (b - (shift >> 1) + codes, after)
    }
}

/// The free runs that start in the map word `v` (free codes whose code before is used), given whether the block
/// before the word's first is used (bit 0 of `before_used`), which it sets for the next word. Often none: a bit
/// count only for a word that has some.
#[inline(always)]
fn run_starts(v: u32, before_used: &mut u32) -> u32 {
    let used = v & EVEN;
    let starts = !v & EVEN & (used << 2 | *before_used);
    *before_used = used >> 30;
    if starts != 0 { count_even_bits(starts) } else { 0 }
}

/// The set bits of `x`, all of them even bits (one per 2-bit code): a bit count whose first step, counting each
/// pair, is already done. (`count_ones` does that step too, in code run once per map word.)
#[inline(always)]
fn count_even_bits(x: u32) -> u32 {
    let x = (x & 0x3333_3333) + ((x >> 2) & 0x3333_3333);
    let x = (x + (x >> 4)) & 0x0F0F_0F0F;
    let x = x + (x >> 8);
    (x + (x >> 16)) & 0x3F
}

/// The low bit of each `LAST` code (low bit set, high bit clear) in the map word `v`.
#[inline(always)]
fn end_marks(v: u32) -> u32 {
    v & !(v >> 1) & EVEN
}

/// Clears the codes `from` selects in the map word at `p`, which holds `v`, through the first end mark in `ends`
/// (`end_marks(v)`, or some of them; not 0). Returns the mark's code index in the word and what `clear_used_run`
/// says of the block after it.
///
/// # Safety
/// `p` must be a managed block's map word (see `Heap::map_word`), and nothing else may access the map.
#[inline(always)]
unsafe fn clear_to_mark(p: *mut u32, v: u32, from: u32, ends: u32) -> (u32, u32) {
    let low = ends & ends.wrapping_neg();
    // Clear through both bits of the mark; `low << 2` wraps to 0 for the word's last code, and 0 - 1 then keeps
    // every bit.
    let next = low << 2;
    // SAFETY: the caller's.
    unsafe { *p = v & !(from & next.wrapping_sub(1)) };
    (code_index(low), if next != 0 { v & next } else { AFTER_UNREAD })
}

/// `clear_used_run` from the first code of the map word at `p` on, for a run that spans three words or more:
/// whole words, then the one with the mark. Returns the mark's code index counted from `p`'s first code, and
/// what `clear_used_run` says of the block after it.
///
/// # Safety
/// `p` must be a managed block's map word whose codes from the first are the rest of a used run, and nothing
/// else may access the map.
#[inline(never)]
#[cfg_attr(
    all(feature = "iwram-all", target_arch = "arm"),
    instruction_set(arm::a32),
    unsafe(link_section = ".iwram.heap_clear_words")
)]
unsafe fn clear_words(mut p: *mut u32) -> (u32, u32) {
    let mut codes = 0;
    // SAFETY: p moves on only while the run's end mark, inside the heap (invariant 3), is still ahead: every word
    // read or written holds managed blocks' codes (see `Heap::map_word`).
    unsafe {
        loop {
            let v = *p;
            let ends = end_marks(v);
            if ends != 0 {
                let (k, after) = clear_to_mark(p, v, !0, ends);
                return (codes + k, after);
            }
            *p = 0;
            p = p.add(1);
            codes += 16;
        }
    }
}

/// Which of a map word's 16 codes has its low bit at `bit`, a single set bit at an even position: half its
/// index. By the build's instruction set, as `alloc`'s [`lowest_bit`](super::bins::lowest_bit): with the
/// crate's `iwram` feature (ARM) by halving, [`code_index_halving`]; without it (Thumb) by the de Bruijn table,
/// [`lowest_bit_table`](super::bins::lowest_bit_table), a multiply and a load (plus LLVM's zero test) in place
/// of the halving's branches. In the Thumb/ROM benchmark every trace's median free is 48 to 59 cycles cheaper
/// with the table (the AI trace's 531 → 480). In ARM it lost, even with the table in IWRAM: every median free
/// 4 or 5 cycles dearer (the AI trace's 180 → 184).
#[inline(always)]
pub(super) fn code_index(bit: u32) -> u32 {
    if cfg!(feature = "iwram") { code_index_halving(bit) } else { super::bins::lowest_bit_table(bit) >> 1 }
}

/// [`code_index`] for ARM: a binary search with plain compares, each step branch-free under conditional
/// execution (`trailing_zeros` would call a Thumb helper in ROM on ARMv4T).
#[inline(always)]
pub(super) fn code_index_halving(bit: u32) -> u32 {
    let mut x = bit;
    let mut k = 0;
    if x > 0xFFFF {
        k += 8;
        x >>= 16;
    }
    if x > 0xFF {
        k += 4;
        x >>= 8;
    }
    if x > 0xF {
        k += 2;
        x >>= 4;
    }
    if x > 0x3 {
        k += 1;
    }
    k
}
