//! The loop every hot path runs over a pool, written out in place by a macro.
//!
//! Hot paths are ARM functions, and LLVM inlines nothing compiled as Thumb into them except what is
//! `#[inline(always)]`: the pool's `iter_mut` and `retain` would stay calls into ROM. So the walk goes by slot
//! number through the pools' ARM fast paths in IWRAM (`pool_get_mut`, `pool_free`): live slots answer
//! `pool_get_mut`, free ones do not (one compare). The walk stops as soon as it has met every live object, so it costs up to
//! the highest live slot, not the capacity: a new pool hands out slot 0 first and reuses the last freed slot,
//! which keeps the live objects low.

/// `sweep!(pool, N, |object| keep)`: runs the block on every live object of `pool` (an
/// `&mut IndexPool<T, u8, N>`) and frees those for which it evaluates to false. A `return` inside the
/// block returns from the enclosing function.
macro_rules! sweep {
    ($pool:expr, $n:expr, |$object:ident| $keep:block) => {{
        let pool = $pool;
        let id = pool.id();
        let mut left = pool.len();
        let mut slot = 0;
        while left > 0 && slot < $n {
            let handle = stackshot_alloc::pool::Handle::from_raw(slot as u8, id);
            if let Ok($object) = $crate::pools::pool_get_mut(pool, handle) {
                left -= 1;
                let keep: bool = $keep;
                if !keep {
                    let _ = $crate::pools::pool_free(pool, handle);
                }
            }
            slot += 1;
        }
    }};
}
pub(crate) use sweep;
