//! StackShot: the game, as a library so that the ROM (`main.rs`) and the fixture ROMs (`fixtures/`) share it.
//! What every ROM needs apart from the game (test runner, cycle counters, logging, the panic handler, the stack
//! guard) is `stackshot_platform`; the allocators are `stackshot_alloc`.
#![no_std]
#![cfg_attr(test, no_main)]
#![cfg_attr(test, feature(custom_test_frameworks))]
#![cfg_attr(test, test_runner(stackshot_platform::testing::run))]
#![cfg_attr(test, reexport_test_harness_main = "test_main")]

extern crate alloc;

pub mod assets;
pub mod crash;
pub mod game;
pub mod layout;
pub mod mixer;
pub mod music;
pub mod overlay;
pub mod save;
pub mod sound;
pub mod text;
pub mod trace;

#[cfg(test)]
mod tests;

#[cfg(test)]
stackshot_platform::testing::test_main!();
