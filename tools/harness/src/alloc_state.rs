//! The allocators' state read from emulator memory without gdb, to check what the allocator crate's gdb commands
//! (`crates/stackshot-alloc/gdb/stackshot_alloc.py`) print: a tree-heap region copied out of the emulator and read
//! through the allocator crate's own [`HeapView`] (the harness has no decoder of the heap's format), the lines gdb's
//! `heap` prints made from that view, and the report in which the fixture `fixtures/alloc_state.rs` writes what the
//! crate's API says on the GBA.

use crate::elf::Elf;
use crate::emulator::Emulator;
pub use stackshot_alloc::heap::{BINNED, Counters, HeapView, NodeField, Run, Side};

/// A heap region's blocks, from block 0 (its first 8-aligned byte) to its last whole block, as the GBA holds
/// them (the host, little-endian like the GBA, reads them as they are).
#[derive(Clone, Debug)]
pub struct HeapRegion {
    /// The address of block 0.
    pub base: u32,
    pub blocks: Vec<u64>,
}

impl HeapRegion {
    /// The region of `len` bytes at `address`, cut to whole blocks from its first 8-aligned byte, as
    /// `Heap::from_raw` cuts it.
    pub fn read(emu: &Emulator, address: u32, len: usize) -> HeapRegion {
        let skip = (8 - (address & 7)) & 7;
        let total = (len - skip as usize) / 8;
        let base = address + skip;
        HeapRegion::new(base, &emu.read_bytes(base, total * 8))
    }

    /// The region whose block 0 is at `base`, from its bytes (a multiple of 8).
    pub fn new(base: u32, bytes: &[u8]) -> HeapRegion {
        let blocks = bytes.chunks_exact(8).map(|b| u64::from_ne_bytes(b.try_into().unwrap())).collect();
        HeapRegion { base, blocks }
    }

    /// The region's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.blocks.iter().flat_map(|b| b.to_ne_bytes()).collect()
    }

    /// The crate's view of the region, with the counters its `Heap` keeps outside it.
    pub fn view(&self, counters: Counters) -> HeapView<'_> {
        HeapView::new(&self.blocks, counters).expect("a heap region of 2 to 65,536 blocks")
    }

    /// The crate's view of the region alone, with the counters a valid heap would keep (for a heap whose
    /// `Heap` the harness cannot read).
    pub fn view_alone(&self) -> HeapView<'_> {
        HeapView::from_region(&self.blocks).expect("a heap region of 2 to 65,536 blocks")
    }
}

/// `Heap::check`'s verdict as `(kind, block)`, the kind named as the crate's `InvariantKind` names it.
pub fn verdict(view: &HeapView) -> Result<(), (String, u32)> {
    view.check().map_err(|e| (format!("{:?}", e.kind), e.block))
}

/// The free tree as gdb's `heap` prints it, one node a line, indented by depth: `19: size 40, black`,
/// children led by `< ` (smaller) and `> ` (larger).
pub fn tree_lines(view: &HeapView) -> Vec<String> {
    let mut lines = Vec::new();
    view.visit_tree(|n| {
        let side = match n.side {
            Side::Root => "",
            Side::Smaller => "< ",
            Side::Larger => "> ",
        };
        let colour = if n.red { "red" } else { "black" };
        lines.push(format!("{}{side}{}: size {}, {colour}", "  ".repeat(n.depth as usize), n.block, n.size));
    });
    lines
}

/// The top as gdb's `heap` prints it: `70: size 442`, or `none` when the last block is used.
pub fn top_line(view: &HeapView) -> String {
    match view.top() {
        Some(top) => format!("{}: size {}", top.start, top.blocks),
        None => "none".to_string(),
    }
}

/// The bins as gdb's `heap` prints them: `2: 19 33` for bin 2 holding the runs at 19 and 33, first first; one
/// line per non-empty bin.
pub fn bin_lines(view: &HeapView) -> Vec<String> {
    (1..=BINNED)
        .filter_map(|s| {
            let runs: Vec<String> = view.bin(s).map(|r| r.to_string()).collect();
            (!runs.is_empty()).then(|| format!("{s}: {}", runs.join(" ")))
        })
        .collect()
}

/// One bullet of the fixture's pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bullet {
    pub x: i16,
    pub y: i16,
    pub dx: i8,
    pub dy: i8,
}

/// The fixture's `Report` (`#[repr(C)]` in fixtures/alloc_state.rs): what the crate's API says.
#[derive(Clone, Debug)]
pub struct Report {
    /// `Heap::stats()`: capacity, free, used, largest free (bytes), free runs, peak (bytes), failed, bad frees.
    pub heap_stats: [u32; 8],
    /// `Heap::check()`: `ok` or `Kind at block N`.
    pub check: String,
    pub pool_len: u32,
    pub pool_peak: u32,
    /// `Heap::bin_heads()`.
    pub heap_bins: [u16; 32],
    /// Free slots, next allocated first.
    pub free_stack: Vec<u8>,
    /// Live slots in `iter()` order, with their values.
    pub live: Vec<(u8, Bullet)>,
    /// The live slots' generations, in the same order.
    pub live_generations: Vec<u8>,
    pub last_frame_cycles: u32,
}

/// Slots of the fixture's pool.
pub const SLOTS: usize = 16;
/// The size of `Report` on the GBA: 32 + 40 + 4 + 16 + 16 + 16 * 6 + 4 + 4 + 16 + 32 * 2.
pub const REPORT_BYTES: u32 = 292;

impl Report {
    /// Reads the fixture's `ALLOC_STATE_REPORT`.
    pub fn read(emu: &Emulator, elf: &Elf) -> Result<Report, String> {
        let sym = elf.symbol("ALLOC_STATE_REPORT").ok_or("no ALLOC_STATE_REPORT in the ELF")?;
        if sym.size != REPORT_BYTES {
            return Err(format!(
                "ALLOC_STATE_REPORT is {} bytes, not {REPORT_BYTES}: update alloc_state::Report",
                sym.size
            ));
        }
        Report::parse(&emu.read_bytes(sym.address, REPORT_BYTES as usize))
    }

    /// Decodes the report's `REPORT_BYTES` bytes; refuses a live count above the pool's `SLOTS`, which the ROM's
    /// memory could hold if it were damaged.
    pub fn parse(b: &[u8]) -> Result<Report, String> {
        if b.len() != REPORT_BYTES as usize {
            return Err(format!("the report is {} bytes, not {REPORT_BYTES}", b.len()));
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let check = &b[32..72];
        let pool_len = u32_at(72);
        if pool_len as usize > SLOTS {
            return Err(format!("the report's pool_len is {pool_len}, more than the pool's {SLOTS} slots"));
        }
        let live_count = pool_len as usize;
        let live = (0..live_count)
            .map(|k| {
                let v = &b[108 + 6 * k..114 + 6 * k];
                let bullet = Bullet {
                    x: i16::from_le_bytes([v[0], v[1]]),
                    y: i16::from_le_bytes([v[2], v[3]]),
                    dx: v[4] as i8,
                    dy: v[5] as i8,
                };
                (b[92 + k], bullet)
            })
            .collect();
        Ok(Report {
            heap_stats: core::array::from_fn(|k| u32_at(4 * k)),
            check: String::from_utf8_lossy(&check[..check.iter().position(|&c| c == 0).unwrap_or(40)]).into_owned(),
            pool_len,
            pool_peak: u32_at(208),
            heap_bins: core::array::from_fn(|k| u16::from_le_bytes([b[228 + 2 * k], b[229 + 2 * k]])),
            free_stack: b[76..76 + SLOTS - live_count].to_vec(),
            live,
            live_generations: b[212..212 + live_count].to_vec(),
            last_frame_cycles: u32_at(204),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_with_more_live_slots_than_the_pool_has_is_refused() {
        let mut bytes = vec![0; REPORT_BYTES as usize];
        for len in [0, SLOTS as u32] {
            bytes[72..76].copy_from_slice(&len.to_le_bytes());
            let report = Report::parse(&bytes).unwrap();
            assert_eq!(
                (report.pool_len, report.live.len(), report.free_stack.len()),
                (len, len as usize, SLOTS - len as usize)
            );
        }
        for len in [SLOTS as u32 + 1, u32::MAX] {
            bytes[72..76].copy_from_slice(&len.to_le_bytes());
            let error = Report::parse(&bytes).unwrap_err();
            assert!(error.contains(&format!("pool_len is {len}")), "{error}");
        }
        assert!(Report::parse(&bytes[1..]).unwrap_err().contains("bytes, not"));
    }
}
