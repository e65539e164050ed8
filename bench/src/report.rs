//! The lines `tools/bench-report` turns into docs/benchmarks.md and its chart (the format is described there).

use core::fmt::Arguments;
use stackshot::info;

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

/// A line assembled from pieces (mGBA splits anything over 255 bytes; a table header stays under that).
struct Line {
    bytes: [u8; 255],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line { bytes: [0; 255], len: 0 }
    }

    fn push(&mut self, s: &str) {
        let n = s.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("@@bad-line")
    }
}
