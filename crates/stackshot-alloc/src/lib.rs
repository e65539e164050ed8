//! Allocators for the Game Boy Advance and other small `no_std` machines: fixed-size stack pools ([`pool`]) and
//! a best-fit tree-heap with 3 % bookkeeping ([`heap`]), which interrupt handlers can share (`irq`, feature
//! `gba`), with fast paths as ARM code in IWRAM (`iwram`, feature `iwram`).
//!
//! ```
//! use stackshot_alloc::heap::{Heap, HeapError};
//! use stackshot_alloc::pool::{IndexPool, PoolError};
//!
//! // A pool of up to 64 bullets with one-byte indices: allocate is a pop, free a push.
//! let mut bullets: IndexPool<(i16, i16), u8, 64> = IndexPool::new();
//! let shot = bullets.alloc((120, 150)).unwrap();
//! bullets.get_mut(shot).unwrap().1 -= 4;
//! assert_eq!(bullets.free(shot), Ok((120, 146)));
//! assert_eq!(bullets.free(shot), Err(PoolError::DoubleFree)); // refused, the pool unchanged
//! let next = bullets.alloc((60, 150)).unwrap(); // the same slot again, in its next generation
//! assert_eq!(bullets.get(shot), Err(PoolError::Stale)); // the old handle no longer reaches it
//! assert_eq!(bullets.get(next), Ok(&(60, 150)));
//!
//! // A heap over any 8-aligned buffer: best fit, splitting and merging, every bad free refused.
//! #[repr(align(8))] // a heap manages whole 8-byte blocks from the first 8-aligned byte
//! struct Region([u8; 4096]);
//! let mut region = Region([0; 4096]); // 4 KB
//! let bytes = &mut region.0;
//! let mut heap = Heap::new(bytes).unwrap();
//! let path = heap.alloc(40, 4).unwrap();
//! assert_eq!(heap.free(path), Ok(()));
//! assert_eq!(heap.free(path), Err(HeapError::DoubleFree));
//! assert_eq!(heap.stats().capacity, 3968); // 128 bytes of bookkeeping: 3.125 %
//! ```
//!
//! With the `testing` feature, the property drivers in `pool::props` and `heap::props` (a seed and an
//! operation count, so the same model checks run millions of operations on the host and fewer on the GBA).
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(feature = "allocator-api", feature(allocator_api))]

pub mod heap;
// The GBA's interrupt registers: only for the GBA's own targets (`cfg(gba_target)`, set by build.rs), where
// 0x0400_0208 is IME and the one core interleaves only through interrupts; elsewhere its IME write would be a wild
// store, and its lock no lock (a Cortex-M board is `target_os = "none"` too). In the docs on any target, as
// docs.rs builds them on the host.
#[cfg(all(feature = "gba", any(gba_target, doc)))]
pub mod irq;
#[cfg(all(feature = "gba", not(gba_target), not(doc)))]
compile_error!(
    "stackshot-alloc's feature `gba` (IrqLock, which masks the GBA's IME) builds only for the GBA's targets, \
     thumbv4t-none-eabi and armv4t-none-eabi"
);
pub mod iwram;
pub mod pool;
#[cfg(any(test, feature = "testing"))]
pub mod rng;
