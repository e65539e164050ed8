//! The benchmark's ARM/IWRAM build times every allocator as ARM code in IWRAM, as its ELF shows: every timing
//! function (`stackshot_platform::cycles::time_arm`, one per allocator and operation) is ARM code in IWRAM that reaches
//! ROM only by a call that never returns (a panic, which stops the benchmark) or, in slab's and thunderdome's,
//! by the call that grows their storage, which the benchmark reserves up front and checks was never grown.
mod common;

use harness::elf::{Elf, Symbol};
use std::cell::RefCell;

/// Every allocator and reference the ROM times, as their type names appear in the mangled symbols.
const SUBJECTS: &[&str] = &[
    "4Call",
    "6Inline",
    "9IndexPool",
    "8Packed24",
    "8Packed18",
    "7PtrPool",
    "10ValueStack",
    "13IntrusivePool",
    "8FlagPool",
    "4Slab",
    "5Arena",
    "8TreeHeap",
    "10LinkedList",
    "4Talc",
    "4Rlsf",
];

/// What only a panic reaches: functions that never return, and the `core::fmt` functions whose addresses a
/// panic's message carries. A call to one cannot add cycles to a figure: the run stops instead.
fn panic_path(name: &str) -> bool {
    [
        "4core9panicking",
        "4core6result13unwrap_failed",
        "4core6option13unwrap_failed",
        "4core6option13expect_failed",
        "4core3fmt",
    ]
    .iter()
    .any(|n| name.contains(n))
}

fn timed(elf: &Elf) -> Vec<&Symbol> {
    elf.symbols.iter().filter(|s| s.function && s.name.contains("8time_arm") && !s.name.contains("Thunk")).collect()
}

#[test]
fn every_allocator_is_timed_in_an_arm_function() {
    let elf = Elf::read(&common::bench_elf()).unwrap();
    let timed = timed(&elf);
    for subject in SUBJECTS {
        for op in ["7AllocOp", "6FreeOp"] {
            assert!(
                timed.iter().any(|f| f.name.contains(subject) && f.name.contains(op)),
                "no time_arm for {op} of {subject}"
            );
        }
    }
}

#[test]
fn no_timed_function_calls_into_rom() {
    let elf = Elf::read(&common::bench_elf()).unwrap();
    let mut failures = Vec::new();
    for f in timed(&elf) {
        let grows = f.name.contains("4Slab") || f.name.contains("5Arena");
        let let_through = RefCell::new(Vec::new());
        let allowed = |callee: &str| {
            let ok = panic_path(callee) || (grows && callee.contains("8grow_one"));
            if ok {
                let_through.borrow_mut().push(callee.to_string());
            }
            ok
        };
        match elf.check_hot_path_except(&f.name, &allowed) {
            Ok(f) => println!(
                "{}: ARM, {} bytes at {:#010x}; into ROM only: {:?}",
                f.name,
                f.size,
                f.address,
                let_through.borrow()
            ),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The check above can fail: without its exceptions it sees the panic paths linked_list_allocator's free keeps.
#[test]
fn the_check_sees_a_call_into_rom() {
    let elf = Elf::read(&common::bench_elf()).unwrap();
    let free = timed(&elf).into_iter().find(|f| f.name.contains("10LinkedList") && f.name.contains("6FreeOp")).unwrap();
    let e = elf.check_hot_path(&free.name).unwrap_err();
    assert!(e.contains("(ROM)") && panic_path(&e), "{e}");
}

/// The ARM/IWRAM figures hold on a GBA: no code in IWRAM, ours or a peer's, uses an encoding whose result ARMv4T
/// leaves UNPREDICTABLE (see `game_hot_paths.rs`).
#[test]
fn no_iwram_code_uses_an_unpredictable_encoding() {
    let elf = Elf::read(&common::bench_elf()).unwrap();
    let checked = elf.check_iwram_predictable().unwrap_or_else(|e| panic!("{e}"));
    assert!(checked > 0, "no function in IWRAM");
}
