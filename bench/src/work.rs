//! The benchmark's own bookkeeping, kept in EWRAM: IWRAM (32 KB) holds the stack, the code under test and the
//! data it works on. Nothing here is touched inside a timed operation.

use crate::stats::Samples;
use crate::traces::MAX_LIVE;
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
    /// Our heap's frees over all the traces, by path (`heaps::FREE_PATHS`).
    pub paths: [Samples<SAMPLES>; crate::heaps::FREE_PATHS.len()],
    /// A heap trace's live blocks, by id.
    pub live: [Option<(NonNull<u8>, Layout)>; MAX_LIVE],
    /// Each allocation's offset in the region, or `FAILED`, by operation of a heap trace; for a pool's run, the
    /// order it frees its keys in (here rather than on the stack, which the ARM build cannot spare).
    pub places: [u16; MAX_OPS],
    /// The keys a pool has handed out.
    keys: Keys,
}

pub const FAILED: u16 = u16::MAX;

/// Room for the keys of a pool of `SLOTS`, of any key type up to 16 bytes.
#[repr(C, align(8))]
struct Keys([MaybeUninit<u8>; SLOTS * 16]);

impl Work {
    pub const fn new() -> Work {
        Work {
            allocs: Samples::new(),
            failed: Samples::new(),
            frees: Samples::new(),
            paths: [const { Samples::new() }; crate::heaps::FREE_PATHS.len()],
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
