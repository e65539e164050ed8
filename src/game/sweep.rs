//! The loop every hot path runs over a pool, written out in place by a macro.
//!
//! Hot paths are ARM functions, and LLVM inlines nothing compiled as Thumb into them except what is
//! `#[inline(always)]`: the pool's `iter_mut` and `retain` take closures, which would stay calls into ROM. So
//! the walk goes through `IndexPool::nth_live` (the pool's live part of its stack, `#[inline(always)]`) and the
//! pools' ARM fast paths in IWRAM (`pool_get_mut`, `pool_free`): O(live), whatever slots the objects hold.

/// `sweep!(pool, |object| keep)`: runs the block on every live object of `pool` (an
/// `&mut IndexPool<T, u8, N>`) and frees those for which it evaluates to false. A `return` inside the
/// block returns from the enclosing function.
macro_rules! sweep {
    ($pool:expr, |$object:ident| $keep:block) => {{
        let pool = $pool;
        // Freeing the object at `n` moves one already met into its place: then the walk stays at `n`.
        let mut n = 0;
        while let Some(handle) = pool.nth_live(n) {
            let Ok($object) = $crate::pools::pool_get_mut(pool, handle) else { break };
            let keep: bool = $keep;
            if keep {
                n += 1;
            } else {
                let _ = $crate::pools::pool_free(pool, handle);
            }
        }
    }};
}
pub(crate) use sweep;
