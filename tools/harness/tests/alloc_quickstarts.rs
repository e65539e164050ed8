//! The allocator crate's quick-start ROMs (`crates/examples/`), as `make examples` built them: each runs a pool
//! and the heap on its runtime and prints what they did; this checks every figure. (That the crate README shows
//! the gba one as it is, the crate's own `tests/readme.rs` checks.)
mod common;

use std::path::Path;

/// IWRAM, where both examples put their pool and their heap.
const IWRAM: std::ops::Range<u64> = 0x0300_0000..0x0300_8000;

fn iwram_address(text: &str) -> u64 {
    let address = u64::from_str_radix(text.strip_prefix("0x").unwrap_or(text), 16).unwrap();
    assert!(IWRAM.contains(&address), "{text} is not in IWRAM");
    address
}

/// What both examples compute: five bullets at y = 0, 10 .. 40 move up 15, the two above the screen are freed
/// and the first freed again; a vector of the squares 1..=10 and a boxed 42 come from the heap, then go back.
fn check_quickstart(rom: &Path) {
    let lines = common::log_of(rom);
    assert!(!lines.iter().any(|l| l.contains("panic")), "the ROM panicked:\n{}", lines.join("\n"));

    let pool = common::line_like(&lines, "pool: {} live, y sum {}, second free {}, slots at {}");
    assert_eq!(pool[..3], ["3", "45", "Err(DoubleFree)"], "live bullets, their y sum, the double free");
    iwram_address(pool[3]);

    let heap = common::line_like(&lines, "heap: vec sum {} at {}, box {} at {}, {} of {} bytes used");
    assert_eq!([heap[0], heap[2]], ["385", "42"], "the vector's sum and the box");
    let (vec, boxed) = (iwram_address(heap[1]), iwram_address(heap[3]));
    assert!(boxed + 4 <= vec || vec + 40 <= boxed, "the vector at {vec:#x} and the box at {boxed:#x} overlap");
    let (used, capacity): (u32, u32) = (heap[4].parse().unwrap(), heap[5].parse().unwrap());
    assert!((40 + 4..capacity).contains(&used), "{used} of {capacity} bytes used for 10 u32s and one");

    assert_eq!(common::line_like(&lines, "heap: {} bytes used after drop"), ["0"], "the heap is empty again");
}

#[test]
fn gba_quickstart_prints_its_pool_and_heap_results() {
    check_quickstart(&common::gba_quickstart());
}

#[test]
#[ignore = "the agb quick start: make test-long builds and runs it"]
fn agb_quickstart_prints_its_pool_and_heap_results() {
    check_quickstart(&common::agb_quickstart());
}

#[test]
fn capture_takes_the_fields_between_the_literals() {
    assert_eq!(common::capture("a 1 b 22 c", "a {} b {} c"), Some(vec!["1", "22"]));
    assert_eq!(common::capture("a 1 b 22", "a {} b {}"), Some(vec!["1", "22"]));
    assert_eq!(common::capture("a 1 b 22 c!", "a {} b {} c"), None);
    assert_eq!(common::capture("x 1", "a {}"), None);
}
