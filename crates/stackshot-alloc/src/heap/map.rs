//! The allocation map: two bits per managed block, four blocks a byte, lowest bits first. The map starts at a
//! 4-aligned byte, so it is also read as `u32` words of 16 blocks each: a used run's codes are set or cleared a
//! word at a time, and its end mark found with bit tricks on the whole word.

use super::{Heap, MAP};

/// A free block: inside a free run, or the first block of a free run whose tree node is black.
pub(super) const FREE: u8 = 0b00;
/// A used block that is not the last of its run: both bits set, so that marking a run is an OR of its mask.
pub(super) const USED: u8 = 0b11;
/// The first block of a free run whose tree node is red (the map's spare code holds the colour).
pub(super) const RED: u8 = 0b10;
/// The last block of a used run: `USED` with its high bit clear.
pub(super) const LAST: u8 = 0b01;
/// The bit that is set in both used codes.
pub(super) const USED_BIT: u8 = 0b01;

/// The low bit of every code in a map word: `LAST` in all 16 blocks.
const EVEN: u32 = 0x5555_5555;

/// What the map says of one managed block, for overlays and debuggers (the red-black colour stays private).
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
                (v >> (shift - 2)) as u8 & 3
            } else if b > self.first {
                (*p.sub(1) >> 30) as u8
            } else {
                LAST
            };
            (code, prev)
        }
    }

    /// Marks the `n >= 1` blocks from `b` as one used run: `USED`, …, `LAST`, whatever their codes were.
    #[inline(always)]
    pub(super) fn mark_used(&mut self, b: u32, n: u32) {
        let (p, shift) = self.map_word(b);
        let end = shift + 2 * n;
        if end > 32 {
            if end > 64 {
                return self.mark_used_words(b, n);
            }
            // Two words: b's from its code on, and the next through the last code, at `end - 34` in it.
            // SAFETY: every shift is below 32 (shift <= 30, and 34 <= end <= 64: end is even); p is b's map word
            // (see `map_word`), and the run's last block is managed, so the word after p, which holds its code,
            // is a managed block's map word too; nothing else accesses the map.
            unsafe {
                *p |= (!0u32).unchecked_shl(shift);
                let q = p.add(1);
                let m = (!0u32).unchecked_shr(64 - end);
                *q = (*q | m) & !2u32.unchecked_shl(end - 34);
            }
            return;
        }
        // The run's codes all lie in b's word: its bits, all set (`USED`), but the last code's high bit (`LAST`).
        // SAFETY: every shift is below 32 (n >= 1 and shift + 2n = end <= 32), so the compiler need not mask
        // it; p is b's map word (see `map_word`), and nothing else accesses the map.
        unsafe {
            let m = (!0u32).unchecked_shr(32 - 2 * n).unchecked_shl(shift);
            *p = (*p | m) & !2u32.unchecked_shl(end - 2);
        }
    }

    /// `mark_used` for a run whose codes span map words: word by word.
    #[inline(never)]
    #[cfg_attr(feature = "iwram", instruction_set(arm::a32), unsafe(link_section = ".iwram.heap_mark_used_words"))]
    fn mark_used_words(&mut self, b: u32, n: u32) {
        let (mut p, shift) = self.map_word(b);
        let (last, last_shift) = self.map_word(b + n - 1);
        // The bits of the run's blocks in the current word: from b's code on, then whole words.
        let mut from = !0u32 << shift;
        // SAFETY: p walks the map words from b's to the last block's, all managed (see `map_word`); nothing
        // else accesses the map.
        unsafe {
            while p != last {
                *p |= from;
                p = p.add(1);
                from = !0;
            }
            let m = from & (!0u32 >> (30 - last_shift));
            *p = (*p | m) & !(2 << last_shift);
        }
    }

    /// The free runs, counted in the map: free blocks (low bit clear) whose block before is used, or the map in
    /// front of the first block. A word (16 blocks) at a time; codes past the last block count as used.
    pub(super) fn count_free_runs(&self) -> u32 {
        let count = self.end - self.first;
        let words = count.div_ceil(16);
        let mut runs = 0;
        // Whether the block before the current word's first is used (the map, before the first word).
        let mut before_used = 1;
        let mut k = 0;
        while k < words {
            // SAFETY: word k < ⌈count / 16⌉ holds managed blocks' codes (see `map_word`); nothing writes.
            let mut v = unsafe { *(self.base.add(MAP) as *const u32).add(k as usize) };
            let past = count - 16 * k;
            if past < 16 {
                v |= !0 << (2 * past);
            }
            let used = v & EVEN;
            runs += (!v & EVEN & (used << 2 | before_used)).count_ones();
            before_used = used >> 30;
            k += 1;
        }
        runs
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

    /// Clears the used run that starts at `b` to `FREE` through its end mark. Returns its last block.
    #[inline(always)]
    pub(super) fn clear_used_run(&mut self, b: u32) -> u32 {
        let (mut p, shift) = self.map_word(b);
        let mut from = !0u32 << shift;
        // SAFETY: p starts at b's map word and moves on only while no end mark is at or after b in it; the
        // run's end mark is inside the heap (invariant 3), so every word read or written is a managed block's
        // (see `map_word`).
        unsafe {
            let mut v = *p;
            // The low bit of each `LAST` code (low bit set, high bit clear) at or after b.
            let mut ends = v & !(v >> 1) & EVEN & from;
            // Whole words passed over.
            let mut words = 0;
            while ends == 0 {
                *p = v & !from;
                p = p.add(1);
                words += 1;
                v = *p;
                from = !0;
                ends = v & !(v >> 1) & EVEN;
            }
            let low = ends & ends.wrapping_neg();
            // Clear through both bits of the mark; `low << 2` wraps to 0 for the word's last code, and 0 - 1
            // then keeps every bit.
            let next = low << 2;
            *p = v & !(from & next.wrapping_sub(1));
            b - (shift >> 1) + (words << 4) + code_index(low)
        }
    }
}

/// Which of a map word's 16 codes has its low bit at `bit`, a single set bit at an even position. A binary
/// search with plain compares: `trailing_zeros` would call a Thumb helper in ROM on ARMv4T.
#[inline(always)]
fn code_index(bit: u32) -> u32 {
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
