//! The tree-heap (see the crate README).
