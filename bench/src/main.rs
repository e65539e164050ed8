//! The benchmark ROM: runs every suite and prints its tables for `tools/bench-report` (`make bench`).
#![no_std]
#![no_main]

mod heaps;
mod reference;
mod report;
mod stats;
mod traces;

use stats::Samples;
use traces::Trace;

/// Big buffers live in EWRAM: IWRAM (32 KB) holds the stack, the code under test and the 4 KB regions.
#[unsafe(link_section = ".ewram.bench_trace")]
static mut TRACE: Trace = Trace::new();
#[unsafe(link_section = ".ewram.bench_samples")]
static mut SAMPLES: [Samples<2048>; 2] = [Samples::new(), Samples::new()];
static mut REGION: heaps::Region = heaps::Region([core::mem::MaybeUninit::uninit(); heaps::REGION_BYTES]);

#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    // SAFETY: `main` runs once, with no interrupts enabled; these are the only references to the statics.
    let (trace, [allocs, frees], region) =
        unsafe { (&mut *(&raw mut TRACE), &mut *(&raw mut SAMPLES), &mut *(&raw mut REGION)) };

    heaps::space(region);
    traces::ai_scratch(trace, 0xA15C);
    heaps::compare(region, trace, allocs, frees);
    traces::random_mix(trace, 0x5EED);
    heaps::compare(region, trace, allocs, frees);
    traces::adversarial(trace);
    heaps::compare(region, trace, allocs, frees);

    stackshot::info!("@@done");
    loop {
        gba::bios::VBlankIntrWait();
    }
}
