//! Cycle samples and their minimum, median and maximum.

/// Up to `N` samples of one operation's cycles.
pub struct Samples<const N: usize> {
    values: [u16; N],
    len: usize,
}

/// What a table row shows of a set of samples.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub count: usize,
    pub min: u16,
    pub median: u16,
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

    pub fn summary(&mut self) -> Summary {
        assert!(self.len > 0, "no samples");
        let values = &mut self.values[..self.len];
        values.sort_unstable();
        Summary { count: self.len, min: values[0], median: values[self.len / 2], max: values[self.len - 1] }
    }
}
