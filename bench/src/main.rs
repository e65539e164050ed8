//! The benchmark ROM: runs every suite in one build (ARM in IWRAM with the feature `arm-iwram`, the game's build
//! with `arm-game`, else Thumb in ROM) and prints its tables for `tools/bench-report` (`make bench` builds and
//! runs all three).
#![no_std]
#![no_main]

extern crate alloc;

mod global;
mod heaps;
mod helpers;
mod pools;
mod reference;
mod report;
mod stats;
mod timing;
mod traces;
mod work;

use core::mem::MaybeUninit;
use pools::{Arena, Borrowed, Slab};
use stackshot_alloc::heap::Heap;
use stackshot_alloc::pool::{FlagPool, IntrusivePool, Packed18, Packed24, PtrPool, ValueStack};
use stackshot_platform::stack;
use timing::BUILD;
use work::{SLOTS, Work};

/// `slab` and `thunderdome` need a global allocator: our tree-heap over 4 KB of IWRAM, like their peers' data.
#[global_allocator]
static GLOBAL: global::Global = global::Global::new();
static mut GLOBAL_REGION: heaps::Region = heaps::Region([MaybeUninit::uninit(); heaps::REGION_BYTES]);

#[unsafe(link_section = ".ewram.bench_work")]
static mut WORK: Work = Work::new();
/// The 4 KB of IWRAM the allocators under test work in: each pool in turn, then each heap.
static mut REGION: heaps::Region = heaps::Region([MaybeUninit::uninit(); heaps::REGION_BYTES]);
static mut BORROWED: Borrowed = Borrowed { ptr_slots: [MaybeUninit::uninit(); SLOTS], intrusive: [0; SLOTS + 16] };

#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    timing::check_build();
    helpers::check();
    stack::init();
    // SAFETY: `main` runs once, with no interrupts enabled; these are the only references to the statics.
    let (work, region, borrowed, global) = unsafe {
        (&mut *(&raw mut WORK), &mut *(&raw mut REGION), &mut *(&raw mut BORROWED), &mut *(&raw mut GLOBAL_REGION))
    };
    // SAFETY: the region is 4 KB of IWRAM used by nothing else, for the whole program.
    let heap = unsafe { Heap::from_raw(global.0.as_mut_ptr().cast(), heaps::REGION_BYTES) };
    GLOBAL.init(heap.expect("a 4 KB heap"));

    pool_suite(region, work, borrowed);
    stack_intact("pools");
    heaps::space(region);
    stack_intact("space");
    let mut left = [[heaps::Leftover::default(); 4]; traces::ALL.len()];
    for (trace, left) in traces::ALL.iter().zip(left.iter_mut()) {
        *left = heaps::compare(region, trace, work);
        stack_intact(trace.name);
    }
    heaps::fragmentation(&left);
    stack_intact("fragmentation");
    heaps::breakdowns(work);
    stack_intact("breakdowns");
    if timing::ARM {
        heaps::worst_case(region);
        stack_intact("worst case");
    }
    // Thumb/ROM only: in the ARM build the shared heap's inlined timing code (2.5 KB) leaves IWRAM too little
    // stack beside the build's 10 KB of regions (the guard stops the ROM).
    if !timing::ARM {
        heaps::sharing(region, &traces::ALL[0], work);
        stack_intact("sharing");
    }

    let used = stack::high_water();
    report::table("stack", &["Stack, ", BUILD], &["stack used at most", "room above the statics", "canary"]);
    report::row("stack", format_args!("{used} bytes|{} bytes|intact after every table", stack::space()));
    stackshot_platform::info!("@@done");
    loop {
        gba::bios::VBlankIntrWait();
    }
}

/// Fails loudly if the stack has grown into the statics (where it would corrupt figures silently).
fn stack_intact(table: &str) {
    if let Err(overflow) = stack::check() {
        panic!("during the {table} table: {overflow}");
    }
}

/// Runs the pool table of this build.
fn pool_suite(region: &mut heaps::Region, work: &mut Work, borrowed: &mut Borrowed) {
    pools::table();
    let r = pools::reference(work);

    // Each pool is built fresh in IWRAM: in the heap tables' region, or borrowing IWRAM storage.
    pools::row(
        region,
        |p| {
            let p = p.write(const { pools::Index8::new() });
            pools::overhead_x100(size_of_val(p), 4)
        },
        "`IndexPool<u8>`",
        true,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = p.write(const { pools::Called(pools::Index8::new()) });
            pools::overhead_x100(size_of_val(p), 4)
        },
        "`IndexPool<u8>`, called (`iwram::pool_alloc` / `pool_free`)",
        false,
        r.call,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = p.write(const { pools::Index16::new() });
            pools::overhead_x100(size_of_val(p), 4)
        },
        "`IndexPool<u16>`",
        false,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = p.write(Packed24::<{ SLOTS / 32 }>::new());
            pools::overhead_x100(size_of_val(p), 0)
        },
        "`Packed24`",
        false,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = p.write(Packed18::<{ SLOTS / 32 }>::new());
            pools::overhead_x100(size_of_val(p), 0)
        },
        "`Packed18`",
        false,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = PtrPool::<u32, SLOTS>::new_in(p, &mut borrowed.ptr_slots);
            pools::overhead_x100(size_of_val(p), 0)
        },
        "`PtrPool`",
        true,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = p.write(ValueStack::<u8, SLOTS>::full(core::array::from_fn(|i| i as u8)));
            pools::overhead_x100(size_of_val(p), 0)
        },
        "`ValueStack<u8>`",
        false,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let words = &mut borrowed.intrusive;
            let bytes_total = size_of_val(words);
            // SAFETY: the words are valid, exclusively borrowed bytes for as long as the pool lives.
            let bytes: &mut [u8] = unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), bytes_total) };
            let p = p.write(IntrusivePool::new(bytes, 4).expect("an intrusive pool of 4-byte slots"));
            assert!(p.capacity() as usize >= SLOTS, "only {} slots", p.capacity());
            (size_of_val(p) + bytes_total - SLOTS * 4) * 100 / SLOTS
        },
        "`IntrusivePool`",
        true,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let p = p.write(FlagPool::<u32, SLOTS>::new(3));
            pools::overhead_x100(size_of_val(p), 4)
        },
        "`FlagPool` (baseline)",
        true,
        r.inline,
        work,
    );
    // slab and thunderdome take their storage from the global heap; bytes/slot counts it.
    pools::row(
        region,
        |p| {
            let before = global_used();
            let p = p.write(Slab(slab::Slab::with_capacity(SLOTS)));
            pools::overhead_x100(global_used() - before + size_of_val(p), 4)
        },
        "slab 0.4",
        true,
        r.inline,
        work,
    );
    pools::row(
        region,
        |p| {
            let before = global_used();
            let p = p.write(Arena(thunderdome::Arena::with_capacity(SLOTS)));
            pools::overhead_x100(global_used() - before + size_of_val(p), 4)
        },
        "thunderdome 0.6",
        true,
        r.inline,
        work,
    );
    report::note(
        "pools",
        format_args!("Workload: fill all 256 slots, free them in a shuffled order, then 1,200 random allocate/free."),
    );
    report::note(
        "pools",
        format_args!(
            "Each operation is inlined into the timing function of this build ({BUILD}), ours and the crates' alike."
        ),
    );
    if !timing::ARM {
        report::note(
            "pools",
            format_args!(
                "(A Thumb caller in ROM pays {} cycles to call an empty ARM function in IWRAM and return.)",
                timing::thumb_to_iwram_call()
            ),
        );
    }
    report::note(
        "pools",
        format_args!(
            "The assembly reference (bench/src/reference.rs) is a bare pop and push of a byte index in this build's"
        ),
    );
    report::note(
        "pools",
        format_args!(
            "instruction set, no checks, timed like the pools: inlined, and as a call of a function in this build's memory."
        ),
    );
    report::note(
        "pools",
        format_args!(
            "vs. asm = (alloc + free medians) / the reference's timed the same way: the called row's against the called"
        ),
    );
    report::note(
        "pools",
        format_args!(
            "reference, every other row's against the inline one. Allocate stores the u32 in the `IndexPool`s, `PtrPool`,"
        ),
    );
    report::note(
        "pools",
        format_args!(
            "`FlagPool`, slab and thunderdome; `Packed24`, `Packed18` and `ValueStack` hand out an index or a value and"
        ),
    );
    report::note(
        "pools",
        format_args!(
            "store nothing, and `IntrusivePool` hands out a slot it does not write. bytes/slot: size_of on the GBA minus the 4-byte payload;"
        ),
    );
    report::note(
        "pools",
        format_args!(
            "for slab and thunderdome, what they took from the global allocator (ours, in IWRAM) for 256 entries plus their struct."
        ),
    );
    report::note(
        "pools",
        format_args!(
            "Their storage is reserved up front: no measured operation allocates (checked: their capacity is unchanged)."
        ),
    );
}

fn global_used() -> usize {
    GLOBAL.used()
}
