//! Writes a trace file for the benchmark ROM (format: bench/traces/README.md; bench/build.rs reads it): a
//! header that says what the trace is and how it was made, then `a ID SIZE ALIGN` / `f ID` lines.

use std::fmt::Write;

/// Ids are below this (bench/build.rs rejects the rest).
pub const MAX_LIVE: usize = 128;

pub struct TraceFile {
    name: String,
    what: String,
    how: Vec<String>,
    ops: String,
    count: usize,
    live: usize,
    peak: usize,
}

impl TraceFile {
    /// `name` and `what` title the report's table; `how` says how the trace was made, a comment line each.
    pub fn new(name: &str, what: &str, how: &[&str]) -> TraceFile {
        TraceFile {
            name: name.into(),
            what: what.into(),
            how: how.iter().map(|s| s.to_string()).collect(),
            ops: String::new(),
            count: 0,
            live: 0,
            peak: 0,
        }
    }

    pub fn alloc(&mut self, id: usize, size: usize, align: usize) {
        writeln!(self.ops, "a {id} {size} {align}").unwrap();
        self.count += 1;
        self.live += 1;
        self.peak = self.peak.max(self.live);
    }

    pub fn free(&mut self, id: usize) {
        writeln!(self.ops, "f {id}").unwrap();
        self.count += 1;
        self.live -= 1;
    }

    /// Adds a line to how the trace was made.
    pub fn note(&mut self, line: &str) {
        self.how.push(line.into());
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn text(&self) -> String {
        let mut text = format!("# name: {}\n# what: {}\n", self.name, self.what);
        for line in &self.how {
            writeln!(text, "# {line}").unwrap();
        }
        writeln!(
            text,
            "# {} operations, at most {} blocks live at once; {} still live at the end.",
            self.count, self.peak, self.live
        )
        .unwrap();
        text + "# `a ID SIZE ALIGN` allocates, `f ID` frees.\n" + &self.ops
    }
}

/// Ids for live blocks, the most recently freed reused first, from 0 up.
pub struct Ids(Vec<usize>);

impl Ids {
    pub fn new() -> Ids {
        Ids((0..MAX_LIVE).rev().collect())
    }

    pub fn take(&mut self) -> Result<usize, String> {
        self.0.pop().ok_or(format!("more than {MAX_LIVE} blocks live"))
    }

    pub fn give(&mut self, id: usize) {
        self.0.push(id);
    }
}
