//! The tree-heap against what a Rust user would pick instead, each over the same 4 KB region in IWRAM,
//! replaying the same traces in this build: timings, space, and the fragmentation each trace leaves.

use crate::report;
use crate::stats::{Cells, Dash, Summary};
use crate::timing::{self, BUILD};
use crate::traces::{self, MAX_LIVE, Trace};
use crate::work::{ByKind, FAILED, MAX_OPS, Work};
use core::alloc::{GlobalAlloc, Layout};
use core::fmt::Write;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use stackshot_alloc::heap::{BINNED, Block, LockedHeap};
use stackshot_alloc::irq::IrqLock;
use stackshot_alloc::rng::Rng;
use stackshot_platform::cycles::Op;

pub const REGION_BYTES: usize = 4096;
/// The trace whose heap map the report draws, for every allocator (from the ARM/IWRAM build).
const MAPPED: &str = "bullet hell";

/// The region every allocator gets in turn: 4 KB of IWRAM, 64-byte aligned.
#[repr(C, align(64))]
pub struct Region(pub [MaybeUninit<u8>; REGION_BYTES]);

/// One allocator under test, built fresh over the region for every run. `alloc` and `free` inline whole into
/// the timing function and must not panic (a panic path is a call into ROM): a refused free is returned.
pub trait Subject {
    const NAME: &'static str;
    /// Bytes of bookkeeping outside the region (its struct).
    const STRUCT_BYTES: usize;
    fn new(region: &'static mut Region) -> Self;
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>>;
    /// False if the allocator refused the free (only ours checks).
    fn free(&mut self, ptr: NonNull<u8>, layout: Layout) -> bool;
    /// The largest free block and the free bytes by the allocator's own count, where it keeps one.
    fn own_count(&self) -> Option<(usize, usize)> {
        None
    }
    /// Which of [`FREE_PATHS`] a free of the live block at `ptr` takes, where the report breaks the allocator's
    /// frees down by path (ours only). Asked before the free, outside its timing.
    fn free_path(&self, _ptr: NonNull<u8>) -> Option<usize> {
        None
    }
    /// Which of [`ALLOC_KINDS`] a request is, where the report breaks the allocator's allocations down (ours
    /// only).
    fn alloc_kind(&self, _layout: Layout) -> Option<usize> {
        None
    }
}

/// The paths of our heap's free, by the free runs beside the block freed and, but for the top and a tree
/// neighbour, where the run they make goes: what decides its work (`Heap::free`). In [`TreeHeap::free_path`]'s
/// order: the top, then by binned neighbours (none, one, two) into a bin or into the tree, then a tree neighbour.
pub const FREE_PATHS: [&str; 8] = [
    "joins the top (the free run that ends the heap)",
    "no free neighbour, into its bin",
    "no free neighbour, into the tree (over 31 blocks)",
    "one binned neighbour, into its bin: unlinked, the merged run pushed",
    "one binned neighbour, into the tree: unlinked, the merged run inserted",
    "two binned neighbours, into its bin: both unlinked, the merged run pushed",
    "two binned neighbours, into the tree: both unlinked, the merged run inserted",
    "a neighbour in the tree: merged into its node (`merge`)",
];

/// Our heap's allocations by what decides their path (`Heap::alloc`): an alignment above a block's leaves the
/// fast path.
pub const ALLOC_KINDS: [&str; 2] = [
    "requests aligned to 8 bytes or less: `alloc`'s path",
    "requests aligned to more than 8 bytes: out of line (`alloc_other`), a search for a run with room for the padding",
];

/// Our heap, and the address of its region (for `free_path`, outside the timed operations).
pub struct TreeHeap(stackshot_alloc::heap::Heap<'static>, usize);
impl Subject for TreeHeap {
    const NAME: &'static str = "tree-heap (ours)";
    const STRUCT_BYTES: usize = size_of::<stackshot_alloc::heap::Heap>();
    fn new(region: &'static mut Region) -> Self {
        // SAFETY: the region is 4 KB of memory this subject borrows exclusively for its lifetime.
        let heap = unsafe { stackshot_alloc::heap::Heap::from_raw(region.0.as_mut_ptr().cast(), REGION_BYTES) };
        TreeHeap(heap.expect("4 KB is a valid heap region"), region.0.as_ptr() as usize)
    }
    #[inline(always)]
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.0.alloc(layout.size(), layout.align()).ok()
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, _layout: Layout) -> bool {
        self.0.free(ptr).is_ok()
    }
    fn alloc_kind(&self, layout: Layout) -> Option<usize> {
        Some(usize::from(layout.align() > 8))
    }
    fn own_count(&self) -> Option<(usize, usize)> {
        let s = self.0.stats();
        Some((s.largest_free as usize, s.free_bytes as usize))
    }
    /// Read from the map through `Heap::block` (managed blocks counted from 0; the region is 8-aligned, so its
    /// managed blocks start after the header's and the map's).
    fn free_path(&self, ptr: NonNull<u8>) -> Option<usize> {
        let heap = &self.0;
        let count = (heap.capacity() / 8) as u32;
        let first = (REGION_BYTES / 8) as u32 - count;
        let start = ((ptr.as_ptr() as usize - self.1) / 8) as u32 - first;
        let free = |b: u32| heap.block(b) == Some(Block::Free);
        let mut end = start;
        while heap.block(end) == Some(Block::Used) {
            end += 1;
        }
        let (mut below, mut above) = (0, 0);
        while below < start && free(start - 1 - below) {
            below += 1;
        }
        while free(end + 1 + above) {
            above += 1;
        }
        let into_tree = below + (end + 1 - start) + above > BINNED;
        Some(if end + 1 + above == count {
            0
        } else if below > BINNED || above > BINNED {
            7
        } else {
            1 + 2 * (usize::from(below != 0) + usize::from(above != 0)) + usize::from(into_tree)
        })
    }
}

/// Our heap shared the way interrupt handlers can share it: behind `LockedHeap<IrqLock>`, through `GlobalAlloc`,
/// each call masking interrupts (IME) for its length. Only in the sharing table (its cost against the bare
/// heap), not among the peers, which have no such lock.
pub struct SharedTreeHeap(LockedHeap<'static, IrqLock>);
impl Subject for SharedTreeHeap {
    const NAME: &'static str = "tree-heap in LockedHeap<IrqLock>";
    const STRUCT_BYTES: usize = size_of::<LockedHeap<'static, IrqLock>>();
    fn new(region: &'static mut Region) -> Self {
        let shared = LockedHeap::new();
        // SAFETY: as for TreeHeap.
        let heap = unsafe { stackshot_alloc::heap::Heap::from_raw(region.0.as_mut_ptr().cast(), REGION_BYTES) };
        if shared.init(heap.expect("4 KB is a valid heap region")).is_err() {
            unreachable!("a fresh adapter takes its heap");
        }
        SharedTreeHeap(shared)
    }
    #[inline(always)]
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        // SAFETY: every trace request has a non-zero size.
        NonNull::new(unsafe { self.0.alloc(layout) })
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, layout: Layout) -> bool {
        // SAFETY: the trace frees each block once, with its layout.
        unsafe { self.0.dealloc(ptr.as_ptr(), layout) };
        true
    }
}

/// What sharing the heap with interrupt handlers costs: the AI trace on the bare heap and behind
/// `LockedHeap<IrqLock>`, same build, same region.
pub fn sharing(region: &mut Region, trace: &Trace, work: &mut Work) {
    report::table(
        "sharing",
        &["Sharing the heap with interrupt handlers, ", BUILD, ": cycles per operation, ", trace.name, " trace"],
        &["heap", "alloc median", "alloc max", "free median", "free max"],
    );
    report::note(
        "sharing",
        format_args!(
            "LockedHeap<IrqLock> masks interrupts (IME) for each call and turns them back on after (IME = 1 here, with no interrupt enabled in IE, as in a game that uses them): the cost of a heap that the main loop and"
        ),
    );
    report::note(
        "sharing",
        format_args!(
            "interrupt handlers may both use. Measured in this build only: in the ARM build the extra inlined timing code leaves IWRAM too little stack."
        ),
    );
    // IME set, as a game that uses interrupts has it, so that each release writes it back as there; IE empty, so
    // that no interrupt comes. (With IME clear the lock's release skips that write.)
    gba::mmio::IE.write(gba::interrupts::IrqBits::new());
    gba::mmio::IME.write(true);
    let rows = [
        (TreeHeap::NAME, medians::<TreeHeap>(region, trace, work)),
        (SharedTreeHeap::NAME, medians::<SharedTreeHeap>(region, trace, work)),
    ];
    gba::mmio::IME.write(false);
    for (name, (a, f)) in rows {
        report::row("sharing", format_args!("{name}|{}|{}|{}|{}", a.0, a.1, f.0, f.1));
    }
}

/// The median and maximum cycles of `S`'s allocations and frees on `trace`.
fn medians<S: Subject>(region: &mut Region, trace: &Trace, work: &mut Work) -> ((u16, u16), (u16, u16)) {
    replay::<S>(lend(region), trace, work, false);
    let pair = |s: Option<Summary>| s.map_or((0, 0), |s| (s.median, s.max));
    (pair(work.allocs.summary()), pair(work.frees.summary()))
}

pub struct LinkedList(linked_list_allocator::Heap);
impl Subject for LinkedList {
    const NAME: &'static str = "linked_list_allocator 0.10";
    const STRUCT_BYTES: usize = size_of::<linked_list_allocator::Heap>();
    fn new(region: &'static mut Region) -> Self {
        LinkedList(linked_list_allocator::Heap::from_slice(&mut region.0))
    }
    #[inline(always)]
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.0.allocate_first_fit(layout).ok()
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, layout: Layout) -> bool {
        // SAFETY: `ptr` came from this heap with this layout and is freed once.
        unsafe { self.0.deallocate(ptr, layout) };
        true
    }
}

pub struct Talc(talc::Talc<talc::ErrOnOom>);
impl Subject for Talc {
    const NAME: &'static str = "talc 4.4";
    const STRUCT_BYTES: usize = size_of::<talc::Talc<talc::ErrOnOom>>();
    fn new(region: &'static mut Region) -> Self {
        let mut talc = talc::Talc::new(talc::ErrOnOom);
        let base = region.0.as_mut_ptr().cast::<u8>();
        // SAFETY: the region is valid, unused memory that this allocator borrows for its whole life.
        unsafe { talc.claim(talc::Span::new(base, base.wrapping_add(REGION_BYTES))) }.expect("talc claims 4 KB");
        Talc(talc)
    }
    #[inline(always)]
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        // SAFETY: every trace layout has a non-zero size.
        unsafe { self.0.malloc(layout) }.ok()
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, layout: Layout) -> bool {
        // SAFETY: `ptr` came from this allocator with this layout and is freed once.
        unsafe { self.0.free(ptr, layout) };
        true
    }
}

/// TLSF with 9 first-level classes (blocks up to 8 KB at rlsf's 16-byte granularity) and 8 second-level ones.
type Tlsf = rlsf::Tlsf<'static, u16, u8, 9, 8>;
pub struct Rlsf(Tlsf);
impl Subject for Rlsf {
    const NAME: &'static str = "rlsf 0.2 (TLSF)";
    const STRUCT_BYTES: usize = size_of::<Tlsf>();
    fn new(region: &'static mut Region) -> Self {
        let mut tlsf = Tlsf::new();
        tlsf.insert_free_block(&mut region.0);
        Rlsf(tlsf)
    }
    #[inline(always)]
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.0.allocate(layout)
    }
    #[inline(always)]
    fn free(&mut self, ptr: NonNull<u8>, layout: Layout) -> bool {
        // SAFETY: `ptr` came from this allocator with this alignment and is freed once.
        unsafe { self.0.deallocate(ptr, layout.align()) };
        true
    }
}

struct AllocOp<'a, S>(&'a mut S, Layout);
impl<S: Subject> Op for AllocOp<'_, S> {
    type Out = Option<NonNull<u8>>;
    #[inline(always)]
    fn run(&mut self) -> Option<NonNull<u8>> {
        self.0.alloc(self.1)
    }
}

struct FreeOp<'a, S>(&'a mut S, NonNull<u8>, Layout);
impl<S: Subject> Op for FreeOp<'_, S> {
    type Out = bool;
    #[inline(always)]
    fn run(&mut self) -> bool {
        self.0.free(self.1, self.2)
    }
}

/// The fragmentation a trace leaves: the largest block a program can still get, and all it can get (taking
/// the largest each time until nothing is left).
#[derive(Clone, Copy, Default)]
pub struct Leftover {
    pub largest: usize,
    pub total: usize,
}

/// Replays `trace` on a fresh `S`, timing every operation; a failed request is timed apart and its free
/// skipped; with `by_path`, each allocation and free is also counted in `work.alloc_kinds` and
/// `work.free_paths` by its `alloc_kind` and `free_path`. Returns what the trace leaves.
fn replay<S: Subject>(region: &'static mut Region, trace: &Trace, work: &mut Work, by_path: bool) -> Leftover {
    assert!(trace.ops.len() <= MAX_OPS, "trace {} is longer than {MAX_OPS} operations", trace.name);
    let base = region.0.as_ptr() as usize;
    let mut subject = S::new(region);
    let timer = timing::timer();
    work.allocs.clear();
    work.failed.clear();
    work.frees.clear();
    work.live = [None; MAX_LIVE];
    for (i, op) in trace.ops.iter().enumerate() {
        match *op {
            traces::Op::Alloc { id, size, align } => {
                let layout =
                    Layout::from_size_align(usize::from(size), usize::from(align)).expect("build.rs checked it");
                let (ptr, cycles) = timer.time(&mut AllocOp(&mut subject, layout));
                match ptr {
                    Some(p) => {
                        work.allocs.push(cycles);
                        let kind = if by_path { subject.alloc_kind(layout) } else { None };
                        if let Some(kind) = kind {
                            work.alloc_kinds.all[kind].push(cycles);
                        }
                        work.live[usize::from(id)] = Some((p, layout));
                        work.places[i] = (p.as_ptr() as usize - base) as u16;
                    }
                    None => {
                        work.failed.push(cycles);
                        work.places[i] = FAILED;
                    }
                }
            }
            traces::Op::Free { id } => {
                if let Some((p, layout)) = work.live[usize::from(id)].take() {
                    let path = if by_path { subject.free_path(p) } else { None };
                    let (ok, cycles) = timer.time(&mut FreeOp(&mut subject, p, layout));
                    assert!(ok, "{} refused to free a block it handed out", S::NAME);
                    work.frees.push(cycles);
                    if let Some(path) = path {
                        work.free_paths.all[path].push(cycles);
                    }
                }
            }
        }
    }
    let before = subject.own_count();
    let largest = largest_block(&mut subject);
    if let Some((own_largest, _)) = before {
        assert_eq!(largest, own_largest, "{}: the probe disagrees with the allocator's own count", S::NAME);
    }
    let mut total = 0;
    loop {
        let n = largest_block(&mut subject);
        if n == 0 {
            break;
        }
        subject.alloc(byte_layout(n)).expect("the probe just found this much");
        total += n;
    }
    Leftover { largest, total }
}

fn byte_layout(size: usize) -> Layout {
    Layout::from_size_align(size, 1).expect("a valid size")
}

/// The most `subject` hands out in one block now: a binary search, each successful probe freed again. A request
/// a little smaller than a free block can fail where the whole block succeeds, when what it would leave is too
/// small for the allocator to keep (linked_list_allocator's empty 4 KB heap hands out 4096 bytes but not 4092),
/// so the sizes up to [`SLACK`] bytes above the search's answer are tried too, and it goes on from any that fits.
fn largest_block<S: Subject>(subject: &mut S) -> usize {
    let mut fits = |size: usize| match subject.alloc(byte_layout(size)) {
        Some(p) => {
            assert!(subject.free(p, byte_layout(size)), "{} refused a probe's free", S::NAME);
            true
        }
        None => false,
    };
    let mut low = 0;
    loop {
        let mut high = REGION_BYTES;
        while low < high {
            let mid = (low + high).div_ceil(2);
            if fits(mid) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        match (low + 1..=(low + SLACK).min(REGION_BYTES)).rev().find(|&size| fits(size)) {
            Some(size) => low = size,
            None => return low,
        }
    }
}

/// How far above a failed size [`largest_block`] looks for one that fits: more than any peer's smallest free
/// block (on the GBA: linked_list_allocator's 8 bytes, talc's 12, rlsf's 16).
const SLACK: usize = 32;

/// Allocates random sizes (8–128 bytes, a fixed sequence) until the first failure; returns the bytes asked
/// for and handed out by then: how much of the region the allocator lets a program use.
fn fill_until_failure<S: Subject>(region: &'static mut Region) -> usize {
    let mut subject = S::new(region);
    let mut rng = Rng::new(0xF111);
    let mut used = 0;
    loop {
        let size = 8 + rng.below(121) as usize;
        match subject.alloc(Layout::from_size_align(size, 4).expect("a valid layout")) {
            Some(_) => used += size,
            None => return used,
        }
    }
}

/// Our frees on all the traces above, by path (`work.free_paths`, filled by `compare`): what each kind of free
/// costs, against the peers' free medians in the trace tables; then the same trace by trace, and our allocations
/// by kind trace by trace (`work.alloc_kinds`).
pub fn breakdowns(work: &mut Work) {
    report::table(
        "free paths",
        &["Tree-heap frees by path, all five traces, ", BUILD, ": cycles"],
        &["path", "frees", "free min", "free median", "free p99", "free max"],
    );
    report::note(
        "free paths",
        format_args!(
            "Ours' frees of the five trace tables above, by what the block's neighbours make the free do and where the run goes (read from the map before"
        ),
    );
    report::note(
        "free paths",
        format_args!(
            "each free, outside its timing). Every path first validates the pointer in the map, finds the run's end there and clears it,"
        ),
    );
    report::note(
        "free paths",
        format_args!(
            "and keeps the use and its peak: that fixed work is the cheapest path's minimum. Compare the peers' free medians in the trace tables."
        ),
    );
    for (name, samples) in FREE_PATHS.iter().zip(work.free_paths.all.iter_mut()) {
        let s = samples.summary();
        report::row("free paths", format_args!("{name}|{}|{}", s.map_or(0, |s| s.count), Cells(s)));
        samples.clear();
    }
    by_trace(
        "free paths by trace",
        "frees by trace and path",
        &["trace", "path", "frees", "free min", "free median", "free p99", "free max"],
        &FREE_PATHS,
        &work.free_paths,
    );
    by_trace(
        "alloc kinds by trace",
        "allocations by trace and alignment",
        &["trace", "alignment", "allocs", "alloc min", "alloc median", "alloc p99", "alloc max"],
        &ALLOC_KINDS,
        &work.alloc_kinds,
    );
}

/// A table `id` of our operations by trace and by `sorts` (their names), from `by`: `what` says which for the
/// title; `columns`: the trace, the sort, the count and the four figures.
fn by_trace<const K: usize, const N: usize>(
    id: &str,
    what: &str,
    columns: &[&str; 7],
    sorts: &[&str; K],
    by: &ByKind<K, N>,
) {
    report::table(id, &["Tree-heap ", what, ", ", BUILD, ": cycles"], columns);
    report::note(
        id,
        format_args!(
            "Trace by trace, a row for each of the table's {}s that the trace's operations took: where its slowest come from.",
            columns[1]
        ),
    );
    for (trace, summaries) in traces::ALL.iter().zip(by.traces.iter()) {
        for (name, s) in sorts.iter().zip(summaries) {
            if let Some(s) = *s {
                report::row(id, format_args!("{}|{name}|{}|{}", trace.name, s.count, Cells(Some(s))));
            }
        }
    }
}

/// A `'static` borrow of `region` for one subject, which is dropped before the region is borrowed again.
fn lend(region: &mut Region) -> &'static mut Region {
    // SAFETY: every subject built on this borrow is dropped before its caller returns, and the caller holds
    // `region` exclusively until then.
    unsafe { &mut *(region as *mut Region) }
}

/// The allocators, ours first.
pub const NAMES: [&str; 4] = [TreeHeap::NAME, LinkedList::NAME, Talc::NAME, Rlsf::NAME];

/// Runs every allocator on `trace` and prints its table (and, for the mapped trace in the ARM build, where
/// each put its blocks); returns what the trace left with each, in the order of [`NAMES`].
pub fn compare(region: &mut Region, trace: &Trace, work: &mut Work) -> [Leftover; 4] {
    report::table(
        trace.name,
        &[trace.name, " trace, ", BUILD, ": cycles per operation"],
        &[
            "allocator",
            "allocs",
            "alloc min",
            "alloc median",
            "alloc p99",
            "alloc max",
            "failed",
            "failed median",
            "failed max",
            "frees",
            "free min",
            "free median",
            "free p99",
            "free max",
        ],
    );
    report::note(
        trace.name,
        format_args!(
            "The trace: {} (bench/traces/; {} operations). Each allocator gets the same 4 KB region in IWRAM.",
            trace.what,
            trace.ops.len()
        ),
    );
    report::note(
        trace.name,
        format_args!("A failed request (the allocator had no room) is timed apart; the trace's free of it is skipped."),
    );
    let ours = run_one::<TreeHeap>(region, trace, work);
    work.free_paths.end_trace();
    work.alloc_kinds.end_trace();
    [
        ours,
        run_one::<LinkedList>(region, trace, work),
        run_one::<Talc>(region, trace, work),
        run_one::<Rlsf>(region, trace, work),
    ]
}

fn run_one<S: Subject>(region: &mut Region, trace: &Trace, work: &mut Work) -> Leftover {
    let left = replay::<S>(lend(region), trace, work, true);
    let (a, failed, f) = (work.allocs.summary(), work.failed.summary(), work.frees.summary());
    let count = |s: Option<Summary>| s.map_or(0, |s| s.count);
    let (failed_median, failed_max) = (Dash(failed.map(|s| s.median)), Dash(failed.map(|s| s.max)));
    report::row(
        trace.name,
        format_args!(
            "{}|{}|{}|{}|{failed_median}|{failed_max}|{}|{}",
            S::NAME,
            count(a),
            Cells(a),
            count(failed),
            count(f),
            Cells(f)
        ),
    );
    if timing::ARM {
        report::bar(format_args!("{} alloc", trace.name), S::NAME, a.map_or(0, |s| s.median));
        report::bar(format_args!("{} free", trace.name), S::NAME, f.map_or(0, |s| s.median));
        if trace.name == MAPPED {
            map(trace, S::NAME, &work.places);
        }
    }
    left
}

/// Prints where each allocation of `trace` went: `@@map TRACE|ALLOCATOR|EVENTS`, the events `+OFFSET:SIZE`
/// (an allocation at OFFSET in the region), `-OFFSET` (its free) and `x` (a failed request), in trace order,
/// as many lines as it takes.
fn map(trace: &Trace, name: &str, places: &[u16]) {
    let mut line = report::Line::new();
    let mut offsets = [FAILED; MAX_LIVE];
    for (i, op) in trace.ops.iter().enumerate() {
        if line.len() > 180 {
            report::map(trace.name, name, line.as_str());
            line = report::Line::new();
        }
        let _ = match *op {
            traces::Op::Alloc { id, size, .. } => {
                offsets[usize::from(id)] = places[i];
                if places[i] == FAILED { write!(line, " x") } else { write!(line, " +{}:{size}", places[i]) }
            }
            traces::Op::Free { id } => match core::mem::replace(&mut offsets[usize::from(id)], FAILED) {
                FAILED => Ok(()),
                offset => write!(line, " -{offset}"),
            },
        };
    }
    report::map(trace.name, name, line.as_str());
}

/// The fragmentation table: what each trace left with each allocator.
pub fn fragmentation(left: &[[Leftover; 4]; traces::ALL.len()]) {
    let mut columns = [""; 1 + traces::ALL.len()];
    columns[0] = "allocator";
    for (c, t) in columns[1..].iter_mut().zip(traces::ALL.iter()) {
        *c = t.name;
    }
    report::table(
        "fragmentation",
        &["Fragmentation after each trace, ", BUILD, ": largest block / all a program can still get"],
        &columns,
    );
    for (a, name) in NAMES.iter().enumerate() {
        let mut row = report::Line::new();
        row.push(name);
        for per_trace in left {
            let l = per_trace[a];
            let share = (l.largest * 100).checked_div(l.total).unwrap_or(100);
            let _ = write!(row, "|{} / {} B ({share}%)", l.largest, l.total);
        }
        report::row("fragmentation", format_args!("{}", row.as_str()));
    }
    report::note(
        "fragmentation",
        format_args!(
            "With the blocks a trace leaves live: the largest request that succeeds (a binary search, each probe freed \
         again), and the bytes obtained by taking the largest block until none is left."
        ),
    );
    report::note(
        "fragmentation",
        format_args!(
            "Ours also counts its free runs itself; the probe's largest block must equal its count (checked)."
        ),
    );
}

/// The metadata and fill-until-failure table.
pub fn space(region: &mut Region) {
    report::table(
        "space",
        &["Space: bookkeeping and usable bytes of a 4 KB region, ", BUILD],
        &[
            "allocator",
            "struct bytes (outside the region)",
            "largest first block",
            "region bytes outside that block",
            "share of region",
            "bytes in use at first failure (8–128 B requests)",
        ],
    );
    space_one::<TreeHeap>(region);
    space_one::<LinkedList>(region);
    space_one::<Talc>(region);
    space_one::<Rlsf>(region);
    report::note(
        "space",
        format_args!(
            "The region bytes outside the empty heap's largest block are ours' header and 2-bit map, and talc's bins (256 bytes it keeps in"
        ),
    );
    report::note(
        "space",
        format_args!(
            "the region) and tags; linked_list_allocator keeps its free list in the free memory. rlsf keeps 24 bytes in the region: the"
        ),
    );
    report::note(
        "space",
        format_args!(
            "rest is its size classes' rounding, as a free block serves at most the class boundary below its size (3,840 bytes of its"
        ),
    );
    report::note(
        "space",
        format_args!(
            "4,080-byte block with the 8 second-level classes used here; more classes round less but take more struct bytes)."
        ),
    );
}

fn space_one<S: Subject>(region: &mut Region) {
    let largest = largest_block(&mut S::new(lend(region)));
    let filled = fill_until_failure::<S>(lend(region));
    let lost = REGION_BYTES - largest;
    report::row(
        "space",
        format_args!(
            "{}|{}|{}|{}|{}.{}%|{}",
            S::NAME,
            S::STRUCT_BYTES,
            largest,
            lost,
            lost * 100 / REGION_BYTES,
            (lost * 1000 / REGION_BYTES) % 10,
            filled
        ),
    );
}

/// Our heap's slowest allocation and free against the number of free runs in its tree, with the tree driven to
/// its tallest shape (ARM/IWRAM build).
pub fn worst_case(region: &mut Region) {
    report::table(
        "worst case",
        &["Tree-heap worst case against the free runs in its tree, ", BUILD, ": cycles"],
        &["free runs in the tree", "tree height", "2·log2(runs + 1)", "slowest alloc", "slowest free"],
    );
    // The most runs the tree can hold in 4 KB: each of at least BINNED + 1 blocks, with a used block after it.
    let most = (REGION_BYTES as u32 / 8 - 16) / (BINNED + 3);
    let mut separators = [None; 32];
    for runs in [1, 2, 4, 6, 8, 10, 12, most] {
        // The insertion order (of three) that leaves the tallest tree.
        let mut order = 0;
        let mut height = 0;
        for o in 0..3 {
            let h = worst_state(region, runs, o, &mut separators).0.tree_height();
            if h > height {
                (order, height) = (o, h);
            }
        }
        let timer = timing::timer();
        let (mut alloc_max, mut free_max) = (0, 0);
        // Every allocation the tree can serve: a block (the smallest tree run is split and its rest, too small
        // for the tree, goes to a bin), and each run's exact size (removed from the tree) and one block less.
        for j in 0..runs {
            for want in [1, run_blocks(j), run_blocks(j) - 1] {
                let mut heap = worst_state(region, runs, order, &mut separators);
                let layout = Layout::from_size_align(want as usize * 8, 8).expect("a valid layout");
                let (ptr, cycles) = timer.time(&mut AllocOp(&mut heap, layout));
                assert!(ptr.is_some(), "the tree has a run of {want} blocks");
                alloc_max = alloc_max.max(cycles);
            }
        }
        // Every free next to a tree run: each separator, between two runs (both merge), and each run's
        // neighbour behind it.
        for j in 0..runs {
            let mut heap = worst_state(region, runs, order, &mut separators);
            let p = separators[j as usize].expect("a separator after every run");
            let (ok, cycles) = timer.time(&mut FreeOp(&mut heap, p, byte_layout(8)));
            assert!(ok, "the heap refused a separator's free");
            free_max = free_max.max(cycles);
        }
        let bound = 2.0 * libm_log2(runs as f32 + 1.0);
        report::row("worst case", format_args!("{runs}|{height}|{:.1}|{alloc_max}|{free_max}", bound));
    }
    // A log line is at most 255 bytes (mGBA cuts longer ones): the note in parts.
    report::note(
        "worst case",
        format_args!(
            "A 4 KB heap holds at most {most} runs of {} and {} blocks (the smallest the tree keeps) with used blocks between them;",
            BINNED + 1,
            BINNED + 2
        ),
    );
    report::note(
        "worst case",
        format_args!(
            "smaller free runs are in bins, O(1), and the run at the end of the heap is the top, O(1). Each row: the heap filled with"
        ),
    );
    report::note(
        "worst case",
        format_args!(
            "such runs, each followed by a used block, the runs freed in the order (of three: increasing, decreasing, alternating ends)"
        ),
    );
    report::note(
        "worst case",
        format_args!(
            "that leaves the tallest tree, then every allocation the tree can serve (1 block, each run's size and one less) and every"
        ),
    );
    report::note(
        "worst case",
        format_args!(
            "free of a separator (merging two tree runs) timed on a fresh copy of that state; the slowest of each."
        ),
    );
}

/// Blocks of run `j` of the worst-case state.
fn run_blocks(j: u32) -> u32 {
    BINNED + 1 + (j & 1)
}

/// log2 without the float library: enough for a table's one decimal.
fn libm_log2(x: f32) -> f32 {
    let mut x = x;
    let mut n = 0.0;
    while x >= 2.0 {
        x /= 2.0;
        n += 1.0;
    }
    // log2 on [1, 2) by squaring, to 8 bits.
    let mut frac = 0.0;
    let mut bit = 0.5;
    for _ in 0..8 {
        x *= x;
        if x >= 2.0 {
            x /= 2.0;
            frac += bit;
        }
        bit /= 2.0;
    }
    n + frac
}

/// Our heap over `region` with `runs` free runs in its tree (run `j` of `run_blocks(j)` blocks, each followed by
/// a used one-block separator, the rest of the heap used), freed in `order`: 0 increasing, 1 decreasing, 2 from
/// both ends alternately. Returns the heap, and the separators in `separators`. Not inlined, and the separators
/// not returned by value, so that the ARM build's stack holds one copy of each.
#[inline(never)]
fn worst_state(region: &mut Region, runs: u32, order: u32, separators: &mut [Option<NonNull<u8>>; 32]) -> TreeHeap {
    let mut heap = TreeHeap::new(lend(region));
    let mut held = [None; 32];
    for j in 0..runs as usize {
        held[j] = heap.alloc(byte_layout(run_blocks(j as u32) as usize * 8));
        separators[j] = heap.alloc(byte_layout(8));
    }
    while heap.alloc(byte_layout(8)).is_some() {}
    for k in 0..runs as usize {
        let j = match order {
            0 => k,
            1 => runs as usize - 1 - k,
            _ if k % 2 == 0 => k / 2,
            _ => runs as usize - 1 - k / 2,
        };
        let p = held[j].expect("the heap holds this many runs");
        assert!(heap.free(p, byte_layout(run_blocks(j as u32) as usize * 8)), "the heap refused a run's free");
    }
    heap
}
