//! The allocators' state read from emulator memory without gdb, to check what `tools/gdb/stackshot.py` prints:
//! a tree-heap region decoded from its bytes (the documented format of
//! `crates/stackshot-alloc/src/heap/mod.rs`), and the report in which the fixture `examples/alloc_state.rs`
//! writes what the crate's own API says.

use crate::elf::Elf;
use crate::emulator::Emulator;

/// Block size and the header/map/node offsets of the heap's documented format.
const BLOCK: usize = 8;
const HDR_COUNT: usize = 0;
const HDR_ROOT: usize = 2;
const MAP: usize = 4;
const SMALLER: usize = 0;
const LARGER: usize = 2;
const PARENT: usize = 4;
const SIZE: usize = 6;
const USED: u8 = 0b01;
const RED: u8 = 0b10;
const LAST: u8 = 0b11;
/// No valid tree is deeper (heap/check.rs).
const MAX_DEPTH: u32 = 32;
/// Free runs of up to this many blocks (other than the top) are in bins, not the tree (heap/bins.rs).
const BINNED: u32 = 31;
/// A binned run's links: next and prev (heap/bins.rs).
const BIN_NEXT: usize = 0;
const BIN_PREV: usize = 2;

/// A heap region's bytes from block 0 (its first 8-aligned byte) to the end of its last whole block.
#[derive(Clone, Debug)]
pub struct HeapRegion {
    /// The address of block 0.
    pub base: u32,
    pub bytes: Vec<u8>,
    pub first: u32,
    pub end: u32,
}

/// The counters a `Heap` keeps outside its region, which the `Stats` invariant compares with the map, and its
/// bins' heads (`Heap::bin_heads`, by size; `None` when unknown: then a small run is not looked for in its bin).
#[derive(Clone, Copy, Debug)]
pub struct Counters {
    pub free_blocks: u32,
    pub free_runs: u32,
    pub peak_used: u32,
    pub bins: Option<[u16; 32]>,
}

/// A run of blocks in map order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub used: bool,
    pub start: u32,
    pub blocks: u32,
}

impl HeapRegion {
    /// The region of `len` bytes at `address`, cut to whole blocks from its first 8-aligned byte, as
    /// `Heap::from_raw` cuts it.
    pub fn read(emu: &Emulator, address: u32, len: usize) -> HeapRegion {
        let skip = (8 - (address & 7)) & 7;
        let total = (len - skip as usize) / BLOCK;
        let base = address + skip;
        HeapRegion::new(base, emu.read_bytes(base, total * BLOCK))
    }

    /// The region whose block 0 is at `base`, from its bytes (a multiple of 8).
    pub fn new(base: u32, bytes: Vec<u8>) -> HeapRegion {
        let total = (bytes.len() / BLOCK) as u32;
        // Heap::header_blocks: the fewest blocks holding the header and the map of the rest.
        let first = (total + 16).div_ceil(33);
        HeapRegion { base, bytes, first, end: total }
    }

    fn u16_at(&self, offset: usize) -> u32 {
        u32::from(u16::from_le_bytes([self.bytes[offset], self.bytes[offset + 1]]))
    }

    /// Byte offset and shift of managed block `b`'s map code.
    pub fn map_position(&self, b: u32) -> (usize, u32) {
        let i = (b - self.first) as usize;
        (MAP + i / 4, 2 * (i % 4) as u32)
    }

    pub fn count(&self) -> u32 {
        self.u16_at(HDR_COUNT)
    }

    pub fn root(&self) -> u32 {
        self.u16_at(HDR_ROOT)
    }

    pub fn code(&self, b: u32) -> u8 {
        let (byte, shift) = self.map_position(b);
        (self.bytes[byte] >> shift) & 3
    }

    /// Byte offset of field `offset` of block `b`'s node.
    pub fn node_offset(b: u32, offset: usize) -> usize {
        b as usize * BLOCK + offset
    }

    fn node(&self, b: u32, offset: usize) -> u32 {
        self.u16_at(Self::node_offset(b, offset))
    }

    pub fn size(&self, b: u32) -> u32 {
        self.node(b, SIZE)
    }

    pub fn parent(&self, b: u32) -> u32 {
        self.node(b, PARENT)
    }

    fn key(&self, b: u32) -> u32 {
        (self.size(b) << 16) | b
    }

    fn managed(&self, b: u32) -> bool {
        (self.first..self.end).contains(&b)
    }

    fn is_red(&self, b: u32) -> bool {
        b != 0 && self.code(b) == RED
    }

    /// The runs of a valid heap: used runs end at a `11` code, free runs are as long as their node says.
    pub fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        let mut b = self.first;
        while b < self.end {
            let start = b;
            if self.code(b) & USED != 0 {
                while b + 1 < self.end && self.code(b) == USED {
                    b += 1;
                }
                runs.push(Run { used: true, start, blocks: b + 1 - start });
                b += 1;
            } else {
                let n = self.size(b).clamp(1, self.end - b);
                runs.push(Run { used: false, start, blocks: n });
                b += n;
            }
        }
        runs
    }

    /// The free tree, one node a line, indented by depth: `19: size 12, black`, children led by `< ` (smaller)
    /// and `> ` (larger). The same layout as gdb's `heap` command; a valid tree is assumed.
    pub fn tree_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        self.tree_walk(self.root(), "", 0, &mut lines);
        lines
    }

    fn tree_walk(&self, x: u32, side: &str, depth: usize, lines: &mut Vec<String>) {
        if x == 0 || !self.managed(x) || depth > MAX_DEPTH as usize {
            return;
        }
        let colour = if self.code(x) == RED { "red" } else { "black" };
        lines.push(format!("{}{side}{x}: size {}, {colour}", "  ".repeat(depth), self.size(x)));
        self.tree_walk(self.node(x, SMALLER), "< ", depth + 1, lines);
        self.tree_walk(self.node(x, LARGER), "> ", depth + 1, lines);
    }

    /// The top, the free run that ends the heap (kept out of the tree), as gdb's `heap` prints it: `70: size 442`,
    /// or `none` when the last block is used.
    pub fn top_line(&self) -> String {
        if self.end <= self.first || self.code(self.end - 1) & USED != 0 {
            return "none".to_string();
        }
        let n = self.size(self.end - 1);
        format!("{}: size {n}", self.end - n)
    }

    /// `Heap::check` on these bytes, written from the invariants in heap/mod.rs: `Err((kind, block))` names the
    /// first broken one as the crate's `Invariant` does.
    pub fn check(&self, counters: Counters) -> Result<(), (&'static str, u32)> {
        if self.count() != self.end - self.first {
            return Err(("Header", 0));
        }
        let root = self.root();
        if root != 0 && !self.managed(root) {
            return Err(("NodeOutOfRange", root));
        }
        if self.is_red(root) {
            return Err(("RedRoot", root));
        }
        let mut nodes = 0;
        self.check_subtree(root, 0, 0, u32::MAX, 1, &mut nodes)?;
        self.check_bins(counters.bins)?;
        let (mut b, mut runs, mut free, mut top, mut binned) = (self.first, 0, 0, false, 0);
        while b < self.end {
            if self.code(b) & USED != 0 {
                let start = b;
                while self.code(b) == USED {
                    b += 1;
                    if b == self.end {
                        return Err(("Unterminated", start));
                    }
                }
                b += 1;
                continue;
            }
            let s = self.size(b);
            if s == 0 || b + s > self.end {
                return Err(("BadSize", b));
            }
            for i in b + 1..b + s {
                let code = self.code(i);
                if code & USED != 0 {
                    return Err(("UsedInFreeRun", i));
                }
                if code == RED {
                    return Err(("StrayRed", i));
                }
            }
            if self.size(b + s - 1) != s {
                return Err(("SizeCopy", b + s - 1));
            }
            if b + s < self.end && self.code(b + s) & USED == 0 {
                return Err(("FreeRunsTouch", b + s));
            }
            // The top, the free run that ends the heap, is kept out of the tree.
            if b + s == self.end {
                if self.tree_has(b) {
                    return Err(("TopInTree", b));
                }
                if self.code(b) == RED {
                    return Err(("StrayRed", b));
                }
                top = true;
            } else if s <= BINNED {
                if counters.bins.is_some_and(|bins| !self.bin_has(bins, b, s)) {
                    return Err(("RunNotInBin", b));
                }
                binned += 1;
            } else if !self.tree_has(b) {
                return Err(("RunNotInTree", b));
            }
            runs += 1;
            free += s;
            b += s;
        }
        let used = self.end - self.first - free;
        let tree_runs = runs - binned - u32::from(top);
        if free != counters.free_blocks || runs != counters.free_runs || nodes != tree_runs || counters.peak_used < used
        {
            return Err(("Stats", 0));
        }
        Ok(())
    }

    fn check_subtree(
        &self,
        x: u32,
        parent: u32,
        lo: u32,
        hi: u32,
        depth: u32,
        nodes: &mut u32,
    ) -> Result<u32, (&'static str, u32)> {
        if x == 0 {
            return Ok(1);
        }
        let fail = |kind| Err((kind, x));
        if !self.managed(x) {
            return fail("NodeOutOfRange");
        }
        if depth > MAX_DEPTH {
            return fail("Unbalanced");
        }
        if self.code(x) & USED != 0 {
            return fail("NodeNotFree");
        }
        if x > self.first && self.code(x - 1) & USED == 0 {
            return fail("NodeNotRunStart");
        }
        if self.parent(x) != parent {
            return fail("ParentLink");
        }
        let k = self.key(x);
        if k <= lo || k >= hi {
            return fail("Order");
        }
        let red = self.is_red(x);
        if red && self.is_red(parent) {
            return fail("RedRed");
        }
        if self.size(x) <= BINNED {
            return fail("SmallInTree");
        }
        *nodes += 1;
        let hs = self.check_subtree(self.node(x, SMALLER), x, lo, k, depth + 1, nodes)?;
        let hl = self.check_subtree(self.node(x, LARGER), x, k, hi, depth + 1, nodes)?;
        if hs != hl {
            return fail("BlackHeight");
        }
        Ok(hs + u32::from(!red))
    }

    /// Each bin's list from its head: free run starts of the bin's size (not the top), `prev` naming the entry
    /// before, no longer than the heap has blocks. The mask beside the heads is not read.
    fn check_bins(&self, bins: Option<[u16; 32]>) -> Result<(), (&'static str, u32)> {
        let Some(bins) = bins else { return Ok(()) };
        let mut total = 0;
        for s in 1..=BINNED {
            let (mut prev, mut r) = (0, u32::from(bins[s as usize]));
            while r != 0 {
                let run_start = self.managed(r) && (r == self.first || self.code(r - 1) & USED != 0);
                if !run_start
                    || self.code(r) != 0
                    || self.size(r) != s
                    || r + s >= self.end
                    || self.node(r, BIN_PREV) != prev
                    || total >= self.end - self.first
                {
                    return Err(("BinLink", r));
                }
                total += 1;
                prev = r;
                r = self.node(r, BIN_NEXT);
            }
        }
        Ok(())
    }

    fn bin_has(&self, bins: [u16; 32], b: u32, s: u32) -> bool {
        let mut r = u32::from(bins[s as usize]);
        while r != 0 {
            if r == b {
                return true;
            }
            r = self.node(r, BIN_NEXT);
        }
        false
    }

    /// The bins as gdb's `heap` prints them: `2: 19 33` for bin 2 holding the runs at 19 and 33, first first; one
    /// line per non-empty bin.
    pub fn bin_lines(&self, bins: [u16; 32]) -> Vec<String> {
        let mut lines = Vec::new();
        for s in 1..=BINNED {
            let mut r = u32::from(bins[s as usize]);
            let mut line = format!("{s}:");
            let mut n = 0;
            while r != 0 && self.managed(r) && n < self.end {
                line += &format!(" {r}");
                r = self.node(r, BIN_NEXT);
                n += 1;
            }
            if n > 0 {
                lines.push(line);
            }
        }
        lines
    }

    fn tree_has(&self, b: u32) -> bool {
        let k = self.key(b);
        let mut x = self.root();
        while x != 0 {
            let kx = self.key(x);
            if kx == k {
                return true;
            }
            x = self.node(x, if k < kx { SMALLER } else { LARGER });
        }
        false
    }

    /// Whether block `b` ends a used run (code `11`).
    pub fn is_run_end(&self, b: u32) -> bool {
        self.code(b) == LAST
    }
}

/// One bullet of the fixture's pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bullet {
    pub x: i16,
    pub y: i16,
    pub dx: i8,
    pub dy: i8,
}

/// The fixture's `Report` (`#[repr(C)]` in examples/alloc_state.rs): what the crate's API says.
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
        let b = emu.read_bytes(sym.address, REPORT_BYTES as usize);
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let check = &b[32..72];
        let pool_len = u32_at(72);
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
