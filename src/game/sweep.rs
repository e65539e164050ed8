//! The game's walk over a pool: the crate's [`stackshot_alloc::sweep!`], plus a line in mGBA's log for each
//! free under the `alloc-trace` feature (only under it: even an empty call's argument would change the code of
//! the hot paths this walk is written into).

macro_rules! sweep {
    ($pool:expr, |$object:ident| $keep:block) => {
        stackshot_alloc::sweep!($pool, |$object| $keep, |handle, freed| {
            #[cfg(feature = "alloc-trace")]
            $crate::trace::pool_free(
                handle.pool(),
                usize::from(handle.index()),
                freed.as_ref().map(|_| ()).map_err(|e| *e),
            );
            let _ = (handle, freed);
        })
    };
}
pub(crate) use sweep;
