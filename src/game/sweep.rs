//! The loop every hot path runs over a pool, written out in place by a macro.
//!
//! Hot paths are ARM functions, and LLVM inlines nothing compiled as Thumb into them except what is
//! `#[inline(always)]`: the pool's `iter_mut` and `retain` take closures, which would stay calls into ROM. So
//! the walk goes through `IndexPool::sweep` (whose methods are `#[inline(always)]`): O(live), whatever slots
//! the objects hold, and every live object met exactly once even as the walk frees them.

/// `sweep!(pool, |object| keep)`: runs the block on every live object of `pool` (an
/// `&mut IndexPool<T, u8, N>`) and frees those for which it evaluates to false. A `return` inside the
/// block returns from the enclosing function.
macro_rules! sweep {
    ($pool:expr, |$object:ident| $keep:block) => {{
        let mut walk = $pool.sweep();
        while let Some((handle, $object)) = walk.next() {
            let keep: bool = $keep;
            if !keep {
                let freed = walk.free(handle);
                // Only under the feature: even an empty call's argument would change the hot path's code.
                #[cfg(feature = "alloc-trace")]
                $crate::trace::pool_free(handle.pool(), usize::from(handle.index()), freed.as_ref().map(|_| ()).map_err(|e| *e));
                let _ = freed;
            }
        }
    }};
}
pub(crate) use sweep;
