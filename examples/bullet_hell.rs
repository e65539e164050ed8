//! The bullet-hell scene: the game with every pool kept full and, at one frame, a bomb and a mass death on top
//! (`src/game/scene.rs`). The benchmark report's game table and `tools/harness/tests/scene.rs` run it; `make
//! fixture` builds it.
#![no_std]
#![no_main]

#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    stackshot_platform::panic::set_screen(stackshot::crash::show);
    stackshot::game::run_scene()
}
