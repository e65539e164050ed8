//! One fuzz input drives every allocator of `stackshot-alloc` at once: the tree-heap and each pool variant.
//! Each operation goes to one allocator and its model of the live set (`model.rs`); after it the allocator's
//! `check()` must pass and everything it reports (results, errors, live set, statistics, the bytes of live
//! memory) must match the model. Bad input is part of the mix: double frees, stale and foreign handles or
//! pointers, misaligned and out-of-range ones, zero and oversize requests, bad alignments, full pools. Any
//! difference panics, which libFuzzer reports as a crash.

mod handles;
mod heap;
mod intrusive;
mod model;
mod packed;
mod ptr;
mod value;

use arbitrary::Arbitrary;
use stackshot_alloc::pool::{FlagPool, IndexPool, Packed18, Packed24};

/// A fuzz input: how to lay out the intrusive pool, then the operations.
#[derive(Arbitrary, Debug)]
pub struct Input {
    intrusive: intrusive::Layout,
    ops: Vec<Op>,
}

/// One operation on one allocator.
#[derive(Arbitrary, Debug)]
pub enum Op {
    Heap(heap::Op),
    IndexU8(handles::Op),
    IndexU16(handles::Op),
    Flag(handles::Op),
    Packed24(packed::Op),
    Packed18(packed::Op),
    Ptr(ptr::Op),
    Value(value::Op),
    Intrusive(intrusive::Op),
}

/// Runs `input`; panics at the first difference from the models.
pub fn run(input: Input) {
    let mut heap_region = heap::Region::new();
    let mut heap = heap::Fuzzed::new(&mut heap_region);
    // `IndexPool<_, u8, 256>` is the bullet pool's shape (index 255, a free count of 256); `u16` with 300 slots
    // has indices past 255 and out of range.
    let mut index_u8 = handles::Fuzzed::new(IndexPool::<u32, u8, 256>::with_id(1));
    let mut index_u16 = handles::Fuzzed::new(IndexPool::<u32, u16, 300>::with_id(2));
    let mut flag = handles::Fuzzed::new(FlagPool::<u32, 64>::new(3));
    let mut packed24 = packed::Fuzzed::new(Packed24::<4>::new());
    let mut packed18 = packed::Fuzzed::new(Packed18::<4>::new());
    let mut ptr_slots = ptr::Slots::new();
    let mut ptr = ptr::Fuzzed::new(&mut ptr_slots);
    let mut value = value::Fuzzed::new();
    let mut intrusive_region = intrusive::Region::new();
    let mut intrusive = intrusive::Fuzzed::new(&mut intrusive_region, &input.intrusive);
    for op in input.ops {
        match op {
            Op::Heap(op) => heap.step(op),
            Op::IndexU8(op) => index_u8.step(op),
            Op::IndexU16(op) => index_u16.step(op),
            Op::Flag(op) => flag.step(op),
            Op::Packed24(op) => packed24.step(op),
            Op::Packed18(op) => packed18.step(op),
            Op::Ptr(op) => ptr.step(op),
            Op::Value(op) => value.step(op),
            Op::Intrusive(op) => {
                if let Some(p) = intrusive.as_mut() {
                    p.step(op)
                }
            }
        }
    }
    // Everything freed, each allocator must be whole again.
    heap.finish();
    index_u8.finish();
    index_u16.finish();
    flag.finish();
    packed24.finish();
    packed18.finish();
    ptr.finish();
    if let Some(p) = intrusive.as_mut() {
        p.finish();
    }
}
