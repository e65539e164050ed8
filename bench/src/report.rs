//! The lines `tools/bench-report` turns into docs/benchmarks.md, its chart and the heap map (the format is
//! described there).

use core::fmt::{self, Arguments};
use stackshot_platform::info;

/// Starts table `id`; the title is given in parts so that it needs no formatting buffer.
pub fn table(id: &str, title: &[&str], columns: &[&str]) {
    let mut line = Line::new();
    line.push("@@table ");
    line.push(id);
    line.push("|");
    for part in title {
        line.push(part);
    }
    for column in columns {
        line.push("|");
        line.push(column);
    }
    info!("{}", line.as_str());
}

pub fn row(id: &str, cells: Arguments) {
    info!("@@row {id}|{cells}");
}

pub fn note(id: &str, text: Arguments) {
    info!("@@note {id}|{text}");
}

pub fn bar(category: Arguments, series: &str, cycles: u16) {
    info!("@@bar {category}|{series}|{cycles}");
}

/// Part of where an allocator put the blocks of a trace (see `heaps::map`).
pub fn map(trace: &str, allocator: &str, events: &str) {
    info!("@@map {trace}|{allocator}|{events}");
}

/// A line assembled from pieces (mGBA splits anything over 255 bytes, so a line must stay under that).
pub struct Line {
    bytes: [u8; 255],
    len: usize,
}

impl Line {
    pub fn new() -> Line {
        Line { bytes: [0; 255], len: 0 }
    }

    /// Appends `s`, or panics if the line would be too long: a cut line would be a wrong table.
    pub fn push(&mut self, s: &str) {
        assert!(self.len + s.len() <= self.bytes.len(), "a report line longer than 255 bytes");
        self.bytes[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
        self.len += s.len();
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("@@bad-line")
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s);
        Ok(())
    }
}
