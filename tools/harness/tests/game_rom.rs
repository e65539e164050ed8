//! The real ROM, as `make` built it: its header, its boot, and the d-pad.
mod common;

use harness::emulator::Emulator;
use harness::keys;
use harness::protocol::Message;

#[test]
fn header_is_what_a_cartridge_needs() {
    let rom = std::fs::read(common::rom()).unwrap();
    let header = harness::header::check(&rom).unwrap();
    assert_eq!(header.title, "STACKSHOT");
    assert_eq!(header.game_code, "SSHE");
}

#[test]
fn carries_the_sram_save_type_marker_for_flash_carts() {
    let rom = std::fs::read(common::rom()).unwrap();
    let marker = b"SRAM_V";
    let at: Vec<usize> = rom.windows(marker.len()).enumerate().filter(|(_, w)| w == marker).map(|(i, _)| i).collect();
    assert_eq!(at.len(), 1, "SRAM_V found at {at:x?}; a cart detects the save type from exactly one marker");
    assert_eq!(at[0] % 4, 0, "the marker at {:#x} is not word-aligned", at[0]);
    assert_eq!(&rom[at[0]..at[0] + 9], b"SRAM_V113");
}

#[test]
fn boots_for_300_frames_without_a_panic_and_draws_something() {
    let mut emu = Emulator::open(&common::rom()).unwrap();
    for frame in 0..300 {
        emu.run_frame();
        for line in emu.take_log() {
            assert!(!matches!(Message::parse(&line.text), Message::Panic(_)), "frame {frame}: {}", line.text);
        }
    }
    let screen = emu.screen_rgb();
    let mut colours: Vec<&[u8]> = screen.chunks(3).collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() >= 3, "the screen has only {} colours: blank?", colours.len());
}

/// In play the ship is sprite 0: its x is the low 9 bits of attribute 1, its y the low 8 of attribute 0.
fn ship(emu: &Emulator) -> (u16, u16) {
    (emu.read16(0x0700_0002) & 0x1FF, emu.read16(0x0700_0000) & 0xFF)
}

#[test]
fn holding_right_moves_the_ship_right() {
    let mut emu = Emulator::open(&common::rom()).unwrap();
    // The title screen, then START: the ship comes on, blinking for two seconds (hidden on some frames).
    for frame in 0..160 {
        emu.set_keys(if frame == 20 { keys::bit("START").unwrap() } else { 0 });
        emu.run_frame();
    }
    let before = ship(&emu);
    emu.set_keys(keys::bit("RIGHT").unwrap());
    for _ in 0..30 {
        emu.run_frame();
    }
    let after = ship(&emu);
    assert!(after.0 >= before.0 + 15, "x went from {} to {}", before.0, after.0);
    assert_eq!(after.1, before.1, "y changed while only RIGHT was held");
}
