//! Fixed-size pools whose free list is a stack (see the crate README).
