//! Heap statistics: counters kept by `alloc`/`free`, the largest free run read from the tree, and the free runs
//! counted in the map.

use super::Heap;
use super::bins::BINNED;
use super::tree::NIL;

/// A snapshot of the heap's state; all sizes in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Bytes available for allocation (managed blocks × 8).
    pub capacity: u32,
    /// Bytes in free runs.
    pub free_bytes: u32,
    /// Bytes handed out and not yet freed (whole blocks).
    pub used_bytes: u32,
    /// The largest single free run: the biggest request with alignment <= 8 that can succeed now.
    pub largest_free: u32,
    /// Free runs: how fragmented the free space is. Counted in the map when asked rather than kept by every
    /// `alloc` and `free`.
    pub free_runs: u32,
    /// Most bytes ever in use at once.
    pub peak_used: u32,
    /// Allocation requests refused (any [`HeapError`](super::HeapError)).
    pub failed_requests: u32,
    /// Frees refused (outside the heap, not a run start, double free).
    pub bad_frees: u32,
}

impl Heap<'_> {
    /// The counters and the largest free run now. O(map words), for the count of free runs: one word per 16
    /// blocks, 31 for a 4 KB heap and 4 096 for 512 KB, so a game with a large heap samples it rather than
    /// calling it every frame (on the GBA, Thumb code in ROM: 1 878 to 3 372 cycles for 4 KB in IWRAM, 23 790 to
    /// 48 584 for 64 KB in EWRAM, by how many runs start in a word; `tests/heap.rs`).
    pub fn stats(&self) -> Stats {
        let managed = self.end - self.first;
        Stats {
            capacity: managed * 8,
            free_bytes: (managed - self.used_blocks) * 8,
            used_bytes: self.used_blocks * 8,
            largest_free: self.largest_free_blocks() * 8,
            free_runs: self.count_free_runs(),
            peak_used: self.peak_blocks() * 8,
            failed_requests: self.failed,
            bad_frees: self.bad_frees,
        }
    }

    /// Most blocks ever in use at once: the peak `free` kept, or the use now if higher.
    pub(super) fn peak_blocks(&self) -> u32 {
        if self.used_blocks > self.peak_used { self.used_blocks } else { self.peak_used }
    }

    /// The size of the largest free run: the top, or the tree's rightmost node, which holds its largest key, or
    /// the largest binned run.
    /// O(height).
    fn largest_free_blocks(&self) -> u32 {
        let top = self.end - self.top;
        let mut x = self.root();
        if x == NIL {
            // Every tree run is larger than every binned one: with none, the largest non-empty bin.
            let mut s = BINNED;
            while s > 0 && self.binned & (1 << s) == 0 {
                s -= 1;
            }
            return if s > top { s } else { top };
        }
        let mut l = self.larger(x);
        while l != NIL {
            x = l;
            l = self.larger(x);
        }
        let s = self.size(x);
        if s > top { s } else { top }
    }
}
