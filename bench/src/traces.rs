//! The workloads the heaps replay: sequences of allocate and free, the same for every allocator.

use stackshot_alloc::rng::Rng;

/// Live allocations a trace may hold at once (ids are `0..MAX_LIVE`).
pub const MAX_LIVE: usize = 128;
/// Operations in one trace.
pub const MAX_OPS: usize = 2048;

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Alloc { id: u8, size: u16, align: u8 },
    Free { id: u8 },
}

/// A fixed-capacity list of operations.
pub struct Trace {
    pub name: &'static str,
    pub what: &'static str,
    ops: [Op; MAX_OPS],
    len: usize,
}

impl Trace {
    pub const fn new() -> Trace {
        Trace { name: "", what: "", ops: [Op::Free { id: 0 }; MAX_OPS], len: 0 }
    }

    /// Empties the trace in place (a new one would be built on the small IWRAM stack first).
    fn reset(&mut self, name: &'static str, what: &'static str) {
        self.name = name;
        self.what = what;
        self.len = 0;
    }

    fn push(&mut self, op: Op) {
        assert!(self.len < MAX_OPS, "trace {} is longer than {MAX_OPS} operations", self.name);
        self.ops[self.len] = op;
        self.len += 1;
    }

    pub fn ops(&self) -> &[Op] {
        &self.ops[..self.len]
    }
}

/// Ids of live allocations, to pick one to free.
struct Live {
    ids: [u8; MAX_LIVE],
    len: usize,
    next: u8,
}

impl Live {
    fn new() -> Live {
        Live { ids: [0; MAX_LIVE], len: 0, next: 0 }
    }

    /// A fresh id, or `None` when MAX_LIVE are live.
    fn add(&mut self) -> Option<u8> {
        if self.len == MAX_LIVE {
            return None;
        }
        // Ids are reused round-robin among the free ones: find the next id not live.
        while self.ids[..self.len].contains(&self.next) {
            self.next = (self.next + 1) % MAX_LIVE as u8;
        }
        let id = self.next;
        self.ids[self.len] = id;
        self.len += 1;
        Some(id)
    }

    fn remove_at(&mut self, i: usize) -> u8 {
        let id = self.ids[i];
        self.len -= 1;
        self.ids[i] = self.ids[self.len];
        id
    }
}

/// The game's own AI scratch traffic: five minutes of scripted play (bench/traces/play.keys) recorded by
/// `make record-trace` into bench/traces/ai-scratch.txt.
const RECORDED: &[Op] = include!(concat!(env!("OUT_DIR"), "/ai_trace.rs"));

pub fn ai_scratch(trace: &mut Trace) {
    trace.reset("AI scratch", "recorded from the game: 5 minutes of play");
    for op in RECORDED {
        trace.push(*op);
    }
}

/// Uniformly random sizes 1–256 bytes, alignments 1–16, allocate or free with equal chance.
pub fn random_mix(trace: &mut Trace, seed: u32) {
    trace.reset("random mix", "1–256 B, align 1–16, 50% allocate");
    let mut rng = Rng::new(seed);
    let mut live = Live::new();
    while trace.len < MAX_OPS {
        if live.len > 0 && (rng.chance(50) || live.len == MAX_LIVE) {
            let i = rng.below(live.len as u32) as usize;
            trace.push(Op::Free { id: live.remove_at(i) });
        } else if let Some(id) = live.add() {
            trace.push(Op::Alloc { id, size: 1 + rng.below(256) as u16, align: 1 << rng.below(5) });
        }
    }
}

/// Fragmenting on purpose: fill with small blocks, free every other one, then ask for blocks a little larger
/// than the holes, and repeat with growing sizes. It leaves many small free runs of distinct sizes, which
/// degenerates a naive size-ordered tree and makes first-fit lists walk far.
pub fn adversarial(trace: &mut Trace) {
    trace.reset("adversarial", "fill with 8–40 B, free every other, ask for larger");
    let mut live = Live::new();
    let mut round = 0u16;
    while trace.len < MAX_OPS - 2 * MAX_LIVE {
        let base = 8 + 8 * (round % 5);
        let mut ids = [0u8; MAX_LIVE];
        let mut n = 0;
        while let Some(id) = live.add() {
            trace.push(Op::Alloc { id, size: base + 8 * (n as u16 % 3), align: 8 });
            ids[n] = id;
            n += 1;
            if n == 48 {
                break;
            }
        }
        let mut i = 0;
        while i < n {
            let at = live.ids[..live.len].iter().position(|&x| x == ids[i]).unwrap();
            trace.push(Op::Free { id: live.remove_at(at) });
            i += 2;
        }
        for k in 0..8u16 {
            if let Some(id) = live.add() {
                trace.push(Op::Alloc { id, size: base + 24 + 8 * k, align: 8 });
            }
        }
        round += 1;
        if live.len > MAX_LIVE - 60 {
            while live.len > 0 {
                trace.push(Op::Free { id: live.remove_at(0) });
            }
        }
    }
    while live.len > 0 {
        trace.push(Op::Free { id: live.remove_at(0) });
    }
}
