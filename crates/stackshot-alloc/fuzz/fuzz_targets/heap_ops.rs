//! Fuzzes the tree-heap with byte-coded operations on a 4 KB heap; `check()` after every one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackshot_alloc::heap::Heap;

fuzz_target!(|data: &[u8]| {
    let mut words = [0u64; 512];
    // SAFETY: the u64s are initialised, any byte is a valid u8, and the slice borrows `words` exclusively.
    let buf = unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 4096) };
    // Only for address arithmetic below; never dereferenced.
    let base = buf.as_mut_ptr();
    let mut heap = Heap::new(buf).unwrap();
    let mut live = Vec::new();
    for op in data.chunks_exact(3) {
        let arg = u16::from_le_bytes([op[1], op[2]]) as usize;
        match op[0] % 4 {
            // Allocate up to ~4 KB (beyond the capacity too) with alignment 1..128.
            0 | 1 => {
                if let Ok(p) = heap.alloc(arg % 4200, 1 << (op[0] >> 5)) {
                    live.push(p);
                }
            }
            // Free a live allocation.
            2 if !live.is_empty() => {
                let p = live.swap_remove(arg % live.len());
                heap.free(p).unwrap();
            }
            // Free an arbitrary address in or just past the buffer: must be refused or be a live allocation's start.
            _ => {
                let p = core::ptr::NonNull::new(base.wrapping_add(arg % 4200)).unwrap();
                if let Some(i) = live.iter().position(|&q| q == p) {
                    live.swap_remove(i);
                    heap.free(p).unwrap();
                } else {
                    assert!(heap.free(p).is_err());
                }
            }
        }
        if let Err(e) = heap.check() {
            panic!("{e:?}");
        }
    }
    for p in live {
        heap.free(p).unwrap();
    }
    assert_eq!(heap.stats().free_runs, 1);
});

