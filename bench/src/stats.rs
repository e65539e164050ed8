//! Cycle samples and what a table shows of them: count, minimum, median, 99th percentile and maximum.

use core::fmt;

/// Up to `N` samples of one operation's cycles.
pub struct Samples<const N: usize> {
    values: [u16; N],
    len: usize,
}

#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub count: usize,
    pub min: u16,
    pub median: u16,
    pub p99: u16,
    pub max: u16,
}

impl<const N: usize> Samples<N> {
    pub const fn new() -> Self {
        Samples { values: [0; N], len: 0 }
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Records one sample; panics past `N`, so that a benchmark never silently drops data.
    pub fn push(&mut self, cycles: u16) {
        assert!(self.len < N, "more than {N} samples");
        self.values[self.len] = cycles;
        self.len += 1;
    }

    pub fn count(&self) -> usize {
        self.len
    }

    /// `None` without samples. The median is the upper one; the 99th percentile is the nearest rank.
    pub fn summary(&mut self) -> Option<Summary> {
        self.summary_since(0)
    }

    /// [`summary`](Self::summary) of the samples from the `from`th on (it sorts only them: a summary of all of
    /// them after it is still right).
    pub fn summary_since(&mut self, from: usize) -> Option<Summary> {
        let values = &mut self.values[from..self.len];
        let n = values.len();
        values.sort_unstable();
        (n > 0).then(|| Summary {
            count: n,
            min: values[0],
            median: values[n / 2],
            p99: values[(99 * n).div_ceil(100) - 1],
            max: values[n - 1],
        })
    }
}

/// Four table cells: min, median, p99 and max, or dashes without samples.
pub struct Cells(pub Option<Summary>);

impl fmt::Display for Cells {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, "{}|{}|{}|{}", s.min, s.median, s.p99, s.max),
            None => write!(f, "–|–|–|–"),
        }
    }
}

/// One table cell: the value, or a dash without one.
pub struct Dash(pub Option<u16>);

impl fmt::Display for Dash {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => write!(f, "–"),
        }
    }
}
