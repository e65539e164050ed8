//! The tree-heap against what a Rust user would pick instead, each over a 4 KB region in IWRAM, replaying the
//! same traces.

use crate::report;
use crate::stats::Samples;
use crate::traces::{self, MAX_LIVE, Trace};
use core::alloc::Layout;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use stackshot::cycles::{Op, OpTimer};
use stackshot_alloc::rng::Rng;

pub const REGION_BYTES: usize = 4096;

/// The region every allocator gets in turn: 4 KB of IWRAM, 64-byte aligned.
#[repr(C, align(64))]
pub struct Region(pub [MaybeUninit<u8>; REGION_BYTES]);

/// One allocator under test, built fresh over the region for every run.
pub trait Subject {
    const NAME: &'static str;
    /// True for ARM code in IWRAM, false for Thumb code in ROM: it is timed from a caller of the same build.
    const ARM: bool;
    /// Bytes of bookkeeping outside the region (its struct).
    const STRUCT_BYTES: usize;
    fn new(region: &'static mut Region) -> Self;
    fn alloc(&mut self, size: usize, align: usize) -> Option<NonNull<u8>>;
    fn free(&mut self, ptr: NonNull<u8>, size: usize, align: usize);
}

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).expect("trace layouts are valid")
}

pub struct TreeHeap(stackshot_alloc::heap::Heap<'static>);
impl Subject for TreeHeap {
    const NAME: &'static str = "tree-heap (ours)";
    const ARM: bool = true;
    const STRUCT_BYTES: usize = size_of::<stackshot_alloc::heap::Heap>();
    fn new(region: &'static mut Region) -> Self {
        // SAFETY: the region is 4 KB of memory this subject borrows exclusively for its lifetime.
        let heap = unsafe { stackshot_alloc::heap::Heap::from_raw(region.0.as_mut_ptr().cast(), REGION_BYTES) };
        TreeHeap(heap.expect("4 KB is a valid heap region"))
    }
    #[inline(always)]
    fn alloc(&mut self, size: usize, align: usize) -> Option<NonNull<u8>> {
        match stackshot_alloc::iwram::heap_alloc(&mut self.0, size, align) {
            Ok(p) => Some(p),
            Err(_) => None,
        }
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, _size: usize, _align: usize) {
        if stackshot_alloc::iwram::heap_free(&mut self.0, ptr).is_err() {
            panic!("the trace frees only what it allocated");
        }
    }
}

pub struct LinkedList(linked_list_allocator::Heap);
impl Subject for LinkedList {
    const NAME: &'static str = "linked_list_allocator 0.10";
    const ARM: bool = false;
    const STRUCT_BYTES: usize = size_of::<linked_list_allocator::Heap>();
    fn new(region: &'static mut Region) -> Self {
        LinkedList(linked_list_allocator::Heap::from_slice(&mut region.0))
    }
    #[inline(always)]
    fn alloc(&mut self, size: usize, align: usize) -> Option<NonNull<u8>> {
        self.0.allocate_first_fit(layout(size, align)).ok()
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, size: usize, align: usize) {
        // SAFETY: `ptr` came from this heap with this layout and is freed once.
        unsafe { self.0.deallocate(ptr, layout(size, align)) };
    }
}

pub struct Talc(talc::Talc<talc::ErrOnOom>);
impl Subject for Talc {
    const NAME: &'static str = "talc 4.4";
    const ARM: bool = false;
    const STRUCT_BYTES: usize = size_of::<talc::Talc<talc::ErrOnOom>>();
    fn new(region: &'static mut Region) -> Self {
        let mut talc = talc::Talc::new(talc::ErrOnOom);
        let base = region.0.as_mut_ptr().cast::<u8>();
        // SAFETY: the region is valid, unused memory that this allocator borrows for its whole life.
        unsafe { talc.claim(talc::Span::new(base, base.wrapping_add(REGION_BYTES))) }.expect("talc claims 4 KB");
        Talc(talc)
    }
    #[inline(always)]
    fn alloc(&mut self, size: usize, align: usize) -> Option<NonNull<u8>> {
        // SAFETY: the layout has a non-zero size.
        unsafe { self.0.malloc(layout(size, align)) }.ok()
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, size: usize, align: usize) {
        // SAFETY: `ptr` came from this allocator with this layout and is freed once.
        unsafe { self.0.free(ptr, layout(size, align)) };
    }
}

/// TLSF with 9 first-level classes (blocks up to 8 KB at rlsf's 16-byte granularity) and 8 second-level ones.
type Tlsf = rlsf::Tlsf<'static, u16, u8, 9, 8>;
pub struct Rlsf(Tlsf);
impl Subject for Rlsf {
    const NAME: &'static str = "rlsf 0.2 (TLSF)";
    const ARM: bool = false;
    const STRUCT_BYTES: usize = size_of::<Tlsf>();
    fn new(region: &'static mut Region) -> Self {
        let mut tlsf = Tlsf::new();
        tlsf.insert_free_block(&mut region.0);
        Rlsf(tlsf)
    }
    #[inline(always)]
    fn alloc(&mut self, size: usize, align: usize) -> Option<NonNull<u8>> {
        self.0.allocate(layout(size, align))
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, _size: usize, align: usize) {
        // SAFETY: `ptr` came from this allocator with this alignment and is freed once.
        unsafe { self.0.deallocate(ptr, align) };
    }
}

struct AllocOp<'a, S>(&'a mut S, usize, usize);
impl<S: Subject> Op for AllocOp<'_, S> {
    type Out = Option<NonNull<u8>>;
    #[inline(always)]
    fn run(&mut self) -> Option<NonNull<u8>> {
        self.0.alloc(self.1, self.2)
    }
}

struct FreeOp<'a, S>(&'a mut S, NonNull<u8>, usize, usize);
impl<S: Subject> Op for FreeOp<'_, S> {
    type Out = ();
    #[inline(always)]
    fn run(&mut self) {
        self.0.free(self.1, self.2, self.3)
    }
}

/// What one allocator did on one trace.
pub struct Run {
    pub failed: u32,
}

/// Replays `trace` on a fresh `S`, timing every operation. A request that fails is counted, and its free
/// skipped.
pub fn replay<S: Subject>(
    region: &'static mut Region,
    trace: &Trace,
    allocs: &mut Samples<2048>,
    frees: &mut Samples<2048>,
) -> Run {
    let mut subject = S::new(region);
    let timer = OpTimer::new(S::ARM);
    let mut live: [Option<(NonNull<u8>, u16, u8)>; MAX_LIVE] = [None; MAX_LIVE];
    let mut failed = 0;
    allocs.clear();
    frees.clear();
    for op in trace.ops() {
        match *op {
            traces::Op::Alloc { id, size, align } => {
                let (ptr, cycles) = timer.time(&mut AllocOp(&mut subject, usize::from(size), usize::from(align)));
                allocs.push(cycles);
                match ptr {
                    Some(p) => live[usize::from(id)] = Some((p, size, align)),
                    None => failed += 1,
                }
            }
            traces::Op::Free { id } => {
                if let Some((p, size, align)) = live[usize::from(id)].take() {
                    let ((), cycles) = timer.time(&mut FreeOp(&mut subject, p, usize::from(size), usize::from(align)));
                    frees.push(cycles);
                }
            }
        }
    }
    Run { failed }
}

/// The most a fresh `S` hands out in one block: what its bookkeeping leaves of the region.
pub fn largest_block<S: Subject>(region: &'static mut Region) -> usize {
    let region: *mut Region = region;
    let (mut low, mut high) = (0, REGION_BYTES);
    while low < high {
        let mid = (low + high).div_ceil(2);
        // SAFETY: each probe's subject is dropped before the next one borrows the region again.
        let mut subject = S::new(unsafe { &mut *region });
        if subject.alloc(mid, 4).is_some() { low = mid } else { high = mid - 1 }
    }
    low
}

/// Allocates random sizes (8–128 bytes, a fixed sequence) until the first failure; returns the bytes asked
/// for and handed out by then: how much of the region the allocator lets a program use.
pub fn fill_until_failure<S: Subject>(region: &'static mut Region) -> usize {
    let mut subject = S::new(region);
    let mut rng = Rng::new(0xF111);
    let mut used = 0;
    loop {
        let size = 8 + rng.below(121) as usize;
        match subject.alloc(size, 4) {
            Some(_) => used += size,
            None => return used,
        }
    }
}

/// One allocator's medians and maxima on one trace.
#[derive(Clone, Copy, Default)]
pub struct Figures {
    pub alloc_median: u16,
    pub alloc_max: u16,
    pub free_median: u16,
    pub free_max: u16,
}

/// Runs every allocator on `trace` and prints its table; returns ours and the peers' figures.
pub fn compare(
    region: &mut Region,
    trace: &Trace,
    allocs: &mut Samples<2048>,
    frees: &mut Samples<2048>,
) -> (Figures, [(&'static str, Figures); 3]) {
    let id = trace.name;
    report::table(
        id,
        &[trace.name, " trace (", trace.what, "), 4 KB region in IWRAM: cycles per operation"],
        &["allocator", "build", "allocs", "alloc min", "alloc median", "alloc max", "free min", "free median", "free max", "failed requests"],
    );
    let ours = run_one::<TreeHeap>(region, trace, allocs, frees);
    let peers = [
        (LinkedList::NAME, run_one::<LinkedList>(region, trace, allocs, frees)),
        (Talc::NAME, run_one::<Talc>(region, trace, allocs, frees)),
        (Rlsf::NAME, run_one::<Rlsf>(region, trace, allocs, frees)),
    ];
    (ours, peers)
}

fn run_one<S: Subject>(
    region: &mut Region,
    trace: &Trace,
    allocs: &mut Samples<2048>,
    frees: &mut Samples<2048>,
) -> Figures {
    // SAFETY: the subject built on this reborrow is dropped inside `replay`, before the region is used again.
    let region: &'static mut Region = unsafe { &mut *(region as *mut Region) };
    let run = replay::<S>(region, trace, allocs, frees);
    let (a, f) = (allocs.summary(), frees.summary());
    report::row(trace.name, format_args!(
        "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
        S::NAME, if S::ARM { "ARM, IWRAM" } else { "Thumb, ROM" }, a.count, a.min, a.median, a.max, f.min, f.median, f.max, run.failed
    ));
    report::bar(format_args!("{} alloc", trace.name), S::NAME, a.median);
    report::bar(format_args!("{} free", trace.name), S::NAME, f.median);
    Figures { alloc_median: a.median, alloc_max: a.max, free_median: f.median, free_max: f.max }
}

/// The metadata and fill-until-failure table.
pub fn space(region: &mut Region) {
    report::table(
        "space",
        &["Space: bookkeeping and usable bytes of a 4 KB region"],
        &["allocator", "struct bytes (outside the region)", "largest first block", "region bytes lost to bookkeeping", "share of region", "bytes in use at first failure (8–128 B requests)"],
    );
    space_one::<TreeHeap>(region);
    space_one::<LinkedList>(region);
    space_one::<Talc>(region);
    space_one::<Rlsf>(region);
}

fn space_one<S: Subject>(region: &mut Region) {
    let region: *mut Region = region;
    // SAFETY: each call's subject is dropped before the next call borrows the region.
    let largest = largest_block::<S>(unsafe { &mut *region });
    // SAFETY: as above.
    let filled = fill_until_failure::<S>(unsafe { &mut *region });
    let lost = REGION_BYTES - largest;
    report::row("space", format_args!(
        "{}|{}|{}|{}|{}.{}%|{}",
        S::NAME, S::STRUCT_BYTES, largest, lost, lost * 100 / REGION_BYTES, (lost * 1000 / REGION_BYTES) % 10, filled
    ));
}
