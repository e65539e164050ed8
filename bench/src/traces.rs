//! The workloads the heaps replay, the same for every allocator: the files in bench/traces/ (each says how it
//! was made), compiled in by build.rs.

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Alloc { id: u8, size: u16, align: u8 },
    Free { id: u8 },
}

pub struct Trace {
    pub name: &'static str,
    pub what: &'static str,
    pub ops: &'static [Op],
}

// `MAX_LIVE` (ids are below it) and `ALL`, the traces in the report's order.
include!(concat!(env!("OUT_DIR"), "/traces.rs"));
