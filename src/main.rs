//! The StackShot ROM.
#![no_std]
#![no_main]

#[unsafe(no_mangle)]
extern "C" fn main() -> ! {
    stackshot::game::run()
}
