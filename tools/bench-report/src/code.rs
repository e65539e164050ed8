//! The code bytes of every allocator, read from the ELFs: what its timed allocate and free run, in IWRAM and in
//! ROM, in each build of the benchmark ROM, and our heap as the game links it.

use crate::Table;
use harness::elf::{Elf, IWRAM, Symbol};
use std::path::Path;

/// Each allocator as the tables name it, and as its type appears in the mangled names of its timing functions
/// (`h` and `t` are `u8` and `u16` in Rust's v0 mangling: the `IndexPool`'s index type).
const ALLOCATORS: [(&str, &str); 14] = [
    ("`IndexPool<u8>`", "9IndexPoolmh"),
    ("`IndexPool<u16>`", "9IndexPoolmt"),
    ("`Packed24`", "8Packed24"),
    ("`Packed18`", "8Packed18"),
    ("`PtrPool`", "7PtrPool"),
    ("`ValueStack<u8>`", "10ValueStack"),
    ("`IntrusivePool`", "13IntrusivePool"),
    ("`FlagPool`", "8FlagPool"),
    ("slab 0.4", "4Slab"),
    ("thunderdome 0.6", "5Arena"),
    ("tree-heap (ours)", "8TreeHeap"),
    ("linked_list_allocator 0.10", "10LinkedList"),
    ("talc 4.4", "4Talc"),
    ("rlsf 0.2 (TLSF)", "4Rlsf"),
];

/// What is left out of every count: what only a panic reaches (it stops the program, and every allocator
/// shares it), and slab's and thunderdome's growth of their storage: `alloc`'s vector growth and the global
/// allocator behind it (our heap), not theirs, and never run (the benchmark reserves their storage up front).
fn not_counted(name: &str) -> bool {
    [
        "4core9panicking",
        "4core3fmt",
        "13unwrap_failed",
        "13expect_failed",
        "4core5slice5index",
        "rust_begin_unwind",
        "5alloc7raw_vec",
    ]
    .iter()
    .any(|n| name.contains(n))
}

/// Bytes of code in IWRAM and in ROM among `functions`.
fn split(functions: &[&Symbol]) -> (u32, u32) {
    let iwram = functions.iter().filter(|f| IWRAM.contains(&f.address)).map(|f| f.size).sum();
    let all: u32 = functions.iter().map(|f| f.size).sum();
    (iwram, all - iwram)
}

/// One build of the benchmark ROM, read for its allocators' code.
struct BenchElf {
    elf: Elf,
    /// The mangled name of the build's timing function: `time_arm` in the ARM builds, `time_thumb` in the
    /// Thumb/ROM build (the ARM builds time a few Thumb calls too).
    timer: &'static str,
    /// The timing function of an empty operation, whose bytes each timed operation's function also holds.
    empty: u32,
}

impl BenchElf {
    fn read(path: &Path) -> Result<BenchElf, String> {
        let elf = Elf::read(path)?;
        let timer = if elf.symbols.iter().any(|s| s.name.contains("8time_arm")) { "8time_arm" } else { "10time_thumb" };
        let empty = timing_functions(&elf, timer, "7Nothing").first().map(|f| f.size).ok_or(format!(
            "{}: no timing function of the empty operation (`time_arm`/`time_thumb::<Nothing>`)",
            path.display()
        ))?;
        Ok(BenchElf { elf, timer, empty })
    }

    /// The IWRAM and ROM bytes of what the allocate and free of `subject` run: their timing functions (less the
    /// empty operation's timing code) and every function those reach.
    fn bytes(&self, subject: &str) -> Result<(u32, u32), String> {
        let roots: Vec<&Symbol> = timing_functions(&self.elf, self.timer, subject)
            .into_iter()
            .filter(|f| f.name.contains("7AllocOp") || f.name.contains("6FreeOp"))
            .collect();
        if roots.len() != 2 {
            return Err(format!("{subject}: {} timing functions of its allocate and free, not 2", roots.len()));
        }
        let (iwram, rom) = split(&self.elf.reachable(&roots, &not_counted));
        let timing = 2 * self.empty;
        Ok(if roots[0].thumb { (iwram, rom - timing) } else { (iwram - timing, rom) })
    }
}

/// The timing functions `timer` (`stackshot_platform::cycles::time_arm` / `time_thumb`) of operations on
/// `subject`.
fn timing_functions<'a>(elf: &'a Elf, timer: &str, subject: &str) -> Vec<&'a Symbol> {
    elf.symbols
        .iter()
        .filter(|s| s.function && !s.name.contains("Thunk") && s.name.contains(timer) && s.name.contains(subject))
        .collect()
}

/// The table: every allocator in the three builds (ARM/IWRAM, the game's, Thumb/ROM), and our heap in the game's
/// own ELF, where it is reached through `LockedHeap<IrqLock>` (its `alloc_block` and `free_block`).
pub fn table([arm, game_build, thumb]: [&Path; 3], game: &Path) -> Result<Table, String> {
    let builds = [BenchElf::read(arm)?, BenchElf::read(game_build)?, BenchElf::read(thumb)?];
    let mut rows = Vec::new();
    for (name, subject) in ALLOCATORS {
        let mut row = vec![name.to_string()];
        for build in &builds {
            let (iwram, rom) = build.bytes(subject)?;
            row.extend([iwram.to_string(), rom.to_string()]);
        }
        rows.push(row);
    }
    let elf = Elf::read(game)?;
    let roots: Vec<&Symbol> = ["alloc_block", "free_block"]
        .iter()
        .map(|name| elf.symbol(name).ok_or(format!("{}: no {name}", game.display())))
        .collect::<Result<_, _>>()?;
    let (iwram, rom) = split(&elf.reachable(&roots, &not_counted));
    let mut row = vec!["tree-heap (ours) in the game's ELF: `LockedHeap<IrqLock>`".to_string()];
    row.extend(["–".into(), "–".into(), iwram.to_string(), rom.to_string(), "–".into(), "–".into()]);
    rows.push(row);
    Ok(Table {
        id: "code bytes".into(),
        title: "Code bytes: what each allocator's allocate and free run, in IWRAM and in ROM".into(),
        columns: [
            "allocator",
            "ARM/IWRAM build: IWRAM",
            "ROM",
            "game's build: IWRAM",
            "ROM",
            "Thumb/ROM build: IWRAM",
            "ROM",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Read from the ELFs by `bench-report`: the timing functions of an allocator's allocate and free (each \
             less the bytes of the timing code itself, an empty operation's timing function), and every function \
             they reach by a branch or an address in a literal pool, linker veneers included, counted once. Left \
             out: the panic machinery (`core::panicking`, `core::fmt`), which stops the program, and slab's and \
             thunderdome's growth of their storage (`alloc`'s vector growth, with the global allocator behind it), \
             never run: the benchmark reserves their storage up front. A peer \
             inlined whole has its bytes in its timing functions: each timing function holds one inlined copy \
             of the operation, as a program that calls it in one place would. The game's build differs from \
             the ARM/IWRAM build only in our heap's rare paths, Thumb code in ROM; the last row is the game's \
             own ELF, where the heap's allocate and free are `LockedHeap`'s, the lock and the zeroing \
             included."
                .into(),
        ],
        ..Table::default()
    })
}
