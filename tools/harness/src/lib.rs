//! The StackShot harness: runs ROMs headless in libmgba (Debian's `libmgba-dev`) and checks what they do.
pub mod alloc_state;
pub mod audio;
pub mod elf;
pub mod emulator;
pub mod header;
pub mod keys;
pub mod protocol;
pub mod runner;
pub mod screen;
pub mod telemetry;
