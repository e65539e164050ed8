//! StackShot's allocators: fixed-size stack pools and a small tree-heap.
//!
//! `no_std`; it builds for the GBA (`thumbv4t-none-eabi`) and for the host, where its tests
//! run. The property checks in `pool::props` and `heap::props` take a seed and an operation count so that the same code
//! runs millions of operations on the host and a smaller number on the GBA.
#![no_std]
#![cfg_attr(feature = "allocator-api", feature(allocator_api))]

pub mod heap;
#[cfg(feature = "gba")]
pub mod irq;
pub mod pool;
pub mod rng;
