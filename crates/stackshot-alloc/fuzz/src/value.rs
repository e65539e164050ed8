//! The value stack, `ValueStack`: the values are the resource; giving back more than was taken is `Overflow`.

use arbitrary::Arbitrary;
use stackshot_alloc::pool::{PoolError, ValueStack};

const N: usize = 32;

#[derive(Arbitrary, Debug)]
pub enum Op {
    Pop,
    /// Give a value back: past full (more returned than taken) it must be refused.
    Push(u32),
}

pub struct Fuzzed {
    stack: ValueStack<u32, N>,
    model: Vec<u32>,
}

impl Fuzzed {
    /// A full stack of distinct values, as the game's free OAM entries start.
    pub fn new() -> Self {
        let values: [u32; N] = std::array::from_fn(|k| k as u32 * 3);
        Fuzzed { stack: ValueStack::full(values), model: values.to_vec() }
    }

    pub fn step(&mut self, op: Op) {
        match op {
            Op::Pop => assert_eq!(self.stack.pop(), self.model.pop(), "pop"),
            Op::Push(v) => {
                let want = if self.model.len() == N { Err(PoolError::Overflow) } else { Ok(()) };
                assert_eq!(self.stack.push(v), want, "push");
                if want.is_ok() {
                    self.model.push(v);
                }
            }
        }
        if let Err(e) = self.stack.check() {
            panic!("check: {e:?}");
        }
        assert_eq!(self.stack.as_slice(), &self.model[..], "stack contents");
    }
}
