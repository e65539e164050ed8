//! The boot and the frame loop: the hardware set up and the memory taken once, then frame after frame: wait
//! for VBlank, copy the sprite table built during the last frame to OAM, run one frame of the current mode
//! and time it.

use super::flash;
use super::input::Input;
use super::memory::{self, Memory};
use super::stars;
use super::state::{Game, Mode};
use super::telemetry;
use crate::assets;
use crate::music;
use crate::overlay::{self, PoolGauge};
use crate::save;
use crate::sound;
use crate::text;
use gba::prelude::*;
use stackshot_platform::cycles::Stopwatch;
use stackshot_platform::stack;

/// Boots, then runs frames forever; `before` sees each frame's input first and says what the frame gets.
pub fn run(mut before: impl FnMut(&mut Game, &mut Memory, Input) -> Input) -> ! {
    stack::init();
    DISPCNT.write(DisplayControl::new().with_forced_blank(true));
    assets::load_sprites();
    flash::init();
    BACKDROP_COLOR.write(Color::from_rgb(1, 1, 4));
    text::init();
    overlay::init();
    stars::init();
    sound::init();
    music::init();
    let mut mem = Memory::take();
    mem.watch();
    // Nothing clears OAM at power-on, and a flash cart's quick boot leaves it as the last program did: the
    // empty sprite table goes there before the display shows sprites.
    mem.shadow.copy_to_oam();
    DISPCNT.write(DISPCNT.read().with_show_obj(true).with_obj_vram_1d(true).with_forced_blank(false));
    DISPSTAT.write(DisplayStatus::new().with_irq_vblank(true));
    IE.write(IrqBits::VBLANK);
    IME.write(true);

    let stats = telemetry::take();
    let mut game = Game::new(save::load());
    // The saved volumes from the first frame on.
    sound::set_effects_volume(game.settings.effects);
    music::set_volume(game.settings.music);
    game.enter_title();
    let mut last = Input::default();
    let mut vblanks = music::report().vblanks;
    loop {
        VBlankIntrWait();
        // One frame a VBlank: a VBlank more since the last frame is a frame the loop missed.
        let now = music::report().vblanks;
        stats.missed_frames += now.wrapping_sub(vblanks).saturating_sub(1);
        vblanks = now;
        mem.shadow.copy_to_oam();
        stars::scroll(game.sky);
        game.flash.show();
        let keys = KEYINPUT.read();
        let input = Input::read(keys, last);
        last = input;
        // Before the stopwatch: what `before` does (the scene's filling) is not the game's frame.
        let input = before(&mut game, &mut mem, input);
        let watch = Stopwatch::start();
        game.frame(input, &mut mem, stats);
        music::play(Some(game.song()));
        music::hold(matches!(game.mode, Mode::Paused));

        // The allocator overlay owns SELECT and R, which the game ignores; hidden, it costs one flag read. Shown, it
        // reads the heap under its lock (interrupts masked while it draws; VBlank's waits until the end).
        overlay::poll(keys);
        if overlay::shown() {
            let gauges = [
                PoolGauge::new("SHOTS", mem.player_bullets.len(), memory::PLAYER_BULLETS),
                PoolGauge::new("BULLETS", mem.enemy_bullets.len(), memory::ENEMY_BULLETS),
                PoolGauge::new("SPARKS", mem.particles.len(), memory::PARTICLES),
            ];
            let drawn = mem.heap.with(|heap| overlay::draw(heap, &gauges, stats.last_cycles));
            debug_assert!(drawn.is_ok(), "the AI heap is installed and free: {drawn:?}");
        }

        let cycles = watch.elapsed();
        stats.last_cycles = cycles;
        stats.max_cycles = stats.max_cycles.max(cycles);
        mem.record(stats);
        let music = music::report();
        stats.music_cycles = music.cycles;
        stats.music_max_cycles = music.max_cycles;
        stats.voices.set(music.voices, music.max_voices);
        #[cfg(debug_assertions)]
        {
            mem.check();
            if let Err(overflow) = stack::check() {
                panic!("{overflow}");
            }
            stats.stack_peak = stack::high_water() as u32;
        }
    }
}
