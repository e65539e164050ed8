//! StackShot: the game and its on-target test support, as a library so that the ROM (`main.rs`) and the
//! on-target test ROMs (`tests/`) share it.
#![no_std]
#![cfg_attr(test, no_main)]
#![cfg_attr(test, feature(custom_test_frameworks))]
#![cfg_attr(test, test_runner(crate::testing::run))]
#![cfg_attr(test, reexport_test_harness_main = "test_main")]

pub mod assets;
pub mod crash;
pub mod cycles;
pub mod fast;
pub mod game;
pub mod log;
pub mod overlay;
mod panic;
pub mod save;
pub mod sound;
pub mod stack;
pub mod testing;
pub mod text;
pub mod trace;

#[cfg(test)]
testing::test_main!();
