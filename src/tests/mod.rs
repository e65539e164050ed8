//! The game library's on-target tests of its modules, one file each (the game's own tests are beside their code
//! under `#[cfg(test)]`). They run in the library's test ROM, `cargo test --release` at the root.

mod assets;
mod mixer;
mod save;
mod sound;
mod text;
