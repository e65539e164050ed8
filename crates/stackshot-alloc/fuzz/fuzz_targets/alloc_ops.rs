//! Every allocator of the crate under one fuzz input, each checked against its model after every step (see
//! `src/lib.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackshot_alloc_fuzz::{Input, run};

fuzz_target!(|input: Input| run(input));
