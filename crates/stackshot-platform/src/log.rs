//! Lines to mGBA's debug log (0x04FFF600..), which the harness and mGBA's log window show. Outside mGBA the
//! hardware has nothing at those addresses and the lines go nowhere.

use core::fmt::{Arguments, Write};
use gba::mgba::{MgbaBufferedLogger, MgbaMessageLevel};

/// Sends one line at `level`; longer than 255 bytes, it arrives as several.
pub fn line(level: MgbaMessageLevel, args: Arguments) {
    if let Ok(mut logger) = MgbaBufferedLogger::try_new(level) {
        let _ = writeln!(logger, "{args}");
    }
}

/// `info!("fmt", args..)`: one line at mGBA's INFO level.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::line(gba::mgba::MgbaMessageLevel::Info, format_args!($($arg)*)) };
}

/// `error!("fmt", args..)`: one line at mGBA's ERROR level.
#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::log::line(gba::mgba::MgbaMessageLevel::Error, format_args!($($arg)*)) };
}
