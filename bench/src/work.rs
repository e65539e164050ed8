//! The benchmark's own bookkeeping, kept in EWRAM: IWRAM (32 KB) holds the stack, the code under test and the
//! data it works on. Nothing here is touched inside a timed operation.

use crate::stats::{Samples, Summary};
use crate::traces::{self, MAX_LIVE};
use core::alloc::Layout;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

/// The most samples of one kind a run takes, and the most operations of a trace.
pub const SAMPLES: usize = 8192;
pub const MAX_OPS: usize = 16384;
/// Slots of a pool under test.
pub const SLOTS: usize = 256;

pub struct Work {
    pub allocs: Samples<SAMPLES>,
    /// Failed requests, timed apart from the successful ones.
    pub failed: Samples<SAMPLES>,
    pub frees: Samples<SAMPLES>,
    /// Our heap's frees by path (`heaps::FREE_PATHS`), and its allocations by alignment (`heaps::ALLOC_KINDS`).
    /// No path is taken by more than half of the traces' frees (the commonest, 2,927 of 5,707), so half a
    /// `Samples` each keeps eight of them in 64 KB (a trace that takes one more often stops the run, as a
    /// `Samples` does, rather than drop any).
    pub free_paths: ByKind<{ crate::heaps::FREE_PATHS.len() }, { SAMPLES / 2 }>,
    pub alloc_kinds: ByKind<{ crate::heaps::ALLOC_KINDS.len() }, SAMPLES>,
    /// A heap trace's live blocks, by id.
    pub live: [Option<(NonNull<u8>, Layout)>; MAX_LIVE],
    /// Each allocation's offset in the region, or `FAILED`, by operation of a heap trace; for a pool's run, the
    /// order it frees its keys in (here rather than on the stack, which the ARM build cannot spare).
    pub places: [u16; MAX_OPS],
    /// The keys a pool has handed out.
    keys: Keys,
}

pub const FAILED: u16 = u16::MAX;
const TRACES: usize = traces::ALL.len();

/// Our heap's operations of one kind (a free or an allocation) sorted into `K` sorts, over every trace, and
/// each trace's own summaries by sort, kept as the trace ends.
pub struct ByKind<const K: usize, const N: usize> {
    pub all: [Samples<N>; K],
    /// By trace, in `traces::ALL`'s order (`None`: a sort no operation of the trace was).
    pub traces: [[Option<Summary>; K]; TRACES],
    /// Where each sort's samples of the trace under way begin in `all`.
    from: [usize; K],
    done: usize,
}

impl<const K: usize, const N: usize> ByKind<K, N> {
    const fn new() -> Self {
        ByKind { all: [const { Samples::new() }; K], traces: [[None; K]; TRACES], from: [0; K], done: 0 }
    }

    /// Summarises the samples since the last trace's as the next trace's. Called after our heap's replay of each
    /// trace, in `traces::ALL`'s order.
    pub fn end_trace(&mut self) {
        let done = self.done;
        assert!(done < TRACES, "more traces than traces::ALL");
        for k in 0..K {
            self.traces[done][k] = self.all[k].summary_since(self.from[k]);
            self.from[k] = self.all[k].count();
        }
        self.done = done + 1;
    }
}

/// Room for the keys of a pool of `SLOTS`, of any key type up to 16 bytes.
#[repr(C, align(8))]
struct Keys([MaybeUninit<u8>; SLOTS * 16]);

impl Work {
    pub const fn new() -> Work {
        Work {
            allocs: Samples::new(),
            failed: Samples::new(),
            frees: Samples::new(),
            free_paths: ByKind::new(),
            alloc_kinds: ByKind::new(),
            live: [None; MAX_LIVE],
            places: [0; MAX_OPS],
            keys: Keys([MaybeUninit::uninit(); SLOTS * 16]),
        }
    }

    /// The samples, `SLOTS` empty keys of type `K` and the indices `0..SLOTS` in order, for a pool's run.
    #[allow(clippy::type_complexity, reason = "four borrows of the bookkeeping, named where they are used")]
    pub fn for_pool<K: Copy>(
        &mut self,
    ) -> (&mut Samples<SAMPLES>, &mut Samples<SAMPLES>, &mut [Option<K>], &mut [u16]) {
        assert!(
            size_of::<Option<K>>() * SLOTS <= size_of::<Keys>() && align_of::<Option<K>>() <= align_of::<Keys>(),
            "a key type too large for the key space"
        );
        let first = self.keys.0.as_mut_ptr().cast::<Option<K>>();
        for i in 0..SLOTS {
            // SAFETY: inside the key space, which is large and aligned enough for SLOTS keys (checked above).
            unsafe { first.add(i).write(None) };
        }
        // SAFETY: the SLOTS keys were all written just above; the slice borrows the key space exclusively.
        let keys = unsafe { core::slice::from_raw_parts_mut(first, SLOTS) };
        let order = &mut self.places[..SLOTS];
        for (i, o) in order.iter_mut().enumerate() {
            *o = i as u16;
        }
        (&mut self.allocs, &mut self.frees, keys, order)
    }
}
