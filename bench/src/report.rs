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
    emit(format_args!("@@row {id}|{cells}"));
}

/// Adds to table `id`'s note; a note longer than a line is given in several calls.
pub fn note(id: &str, text: Arguments) {
    emit(format_args!("@@note {id}|{text}"));
}

/// Prints `line`, or panics if it is longer than mGBA prints whole, rather than let it be cut unseen (two notes
/// once ended mid-word in the report). Measured by formatting it once into a counter: no buffer on the stack.
fn emit(line: Arguments) {
    struct Length(usize);
    impl fmt::Write for Length {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let mut length = Length(0);
    let _ = fmt::Write::write_fmt(&mut length, line);
    assert!(length.0 <= LINE_BYTES, "a report line longer than {LINE_BYTES} bytes: {line}");
    info!("{line}");
}

/// The longest line mGBA logs whole.
const LINE_BYTES: usize = 255;

pub fn bar(category: Arguments, series: &str, cycles: u16) {
    info!("@@bar {category}|{series}|{cycles}");
}

/// Part of where an allocator put the blocks of a trace (see `heaps::map`).
pub fn map(trace: &str, allocator: &str, events: &str) {
    info!("@@map {trace}|{allocator}|{events}");
}

/// A line assembled from pieces (mGBA splits anything over 255 bytes, so a line must stay under that).
pub struct Line {
    bytes: [u8; LINE_BYTES],
    len: usize,
}

impl Line {
    pub fn new() -> Line {
        Line { bytes: [0; LINE_BYTES], len: 0 }
    }

    /// Appends `s`, or panics if the line would be too long: a cut line would be a wrong table.
    pub fn push(&mut self, s: &str) {
        assert!(self.len + s.len() <= self.bytes.len(), "a report line longer than {LINE_BYTES} bytes");
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
