//! The StackShot ROM.
#![no_std]
#![no_main]

#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    stackshot_platform::panic::set_screen(stackshot::crash::show);
    stackshot::game::run()
}
