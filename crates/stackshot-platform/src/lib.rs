//! What every StackShot ROM needs, apart from the game: the on-target test runner ([`testing`]), cycle counters
//! ([`cycles`]), logging to mGBA ([`log`], `info!`/`error!`), the panic handler ([`panic`]), the stack's guard and
//! high-water mark ([`stack`]) and fast fills in IWRAM ([`fast`]).
//! The game (`stackshot`), the benchmark ROM (`bench/`) and the test ROMs (`tests/`) all build on it; it knows
//! nothing of them.
#![no_std]

pub mod cycles;
pub mod fast;
pub mod log;
pub mod panic;
pub mod stack;
pub mod testing;
