//! The game: title, play, pause, game over and name entry, one frame at a time.
//!
//! The frame loop ([`run`]) waits for VBlank, copies the sprite table built during the last frame to OAM,
//! then runs one frame of the current mode and times it. Modules, each named after what it holds:
//! `memory` (the pools and the AI heap), `player`, `enemies` (kinds and their AI, with heap scratch), `waves`
//! (the stages and their bosses), `bullets`, `particles`, `pickups`, `collide`, `sprites` (the shadow sprite
//! table), `hud` (every text screen), `stars` (the scrolling sky), `input`, and `telemetry` (what the host
//! tests read).

mod bullets;
mod collide;
mod enemies;
mod hud;
mod input;
pub mod memory;
mod particles;
mod pickups;
mod player;
mod rng;
mod scene;
mod sprites;
mod stars;
mod sweep;
pub mod telemetry;
mod waves;

use crate::assets;
use crate::overlay::{self, PoolGauge};
use crate::save::{self, HighScores};
use crate::sound::{self, Effect};
use crate::text::{self, Ink};
use agb_fixnum::Num;
use collide::{Targets, hit_enemies, hit_player};
use enemies::{Enemy, Kind, World};
use gba::prelude::*;
use hud::Hud;
use input::{Input, key};
use memory::{ENEMIES, Memory};
use player::Player;
use rng::Rng;
use sprites::{Look, Shadow, draw_pool};
use stackshot_alloc::iwram::pool_get_mut;
use stackshot_alloc::pool::Handle;
use stackshot_platform::cycles::Stopwatch;
use stackshot_platform::layout::WHITE_OBJ_PALBANK as WHITE_BANK;
use stackshot_platform::{error, info, stack};
use telemetry::{State, Telemetry};
use waves::{Phase, Stages};

/// Positions and velocities: pixels with 8 fractional bits.
pub type Fx = Num<i32, 8>;

/// Scores that earn an extra ship.
const EXTRA_LIVES: [u32; 2] = [50_000, 150_000];
const MAX_LIVES: u8 = 9;
/// Frames the explosions play after the last ship is lost, and frames to choose on the game-over screen.
const DYING_FRAMES: u16 = 120;
const GAME_OVER_FRAMES: u16 = 10 * 60;
/// A name is taken as it stands after this long.
const NAME_FRAMES: u16 = 30 * 60;
/// Frames of the white flash of a bomb.
const FLASH_FRAMES: u8 = 16;

/// How each thing is drawn.
struct Looks {
    ship: Look,
    player_bullet: Look,
    enemy_bullet: Look,
    explosion: Look,
    pickup: Look,
    dart: Look,
    crab: Look,
    saucer: Look,
    mine: Look,
    boss: Look,
}

const LOOKS: Looks = Looks {
    ship: Look::of(&assets::SHIP),
    player_bullet: Look::of(&assets::PLAYER_BULLET),
    enemy_bullet: Look::of(&assets::ENEMY_BULLET),
    explosion: Look::of(&assets::EXPLOSION),
    pickup: Look::of(&assets::PICKUP),
    dart: Look::of(&assets::DART),
    crab: Look::of(&assets::CRAB),
    saucer: Look::of(&assets::SAUCER),
    mine: Look::of(&assets::MINE),
    boss: Look::of(&assets::BOSS),
};

enum Mode {
    Title,
    Playing,
    Paused,
    Dying(u16),
    /// Frames left to choose.
    GameOver(u16),
    NameEntry {
        letters: [u8; 3],
        cursor: usize,
        place: usize,
        left: u16,
    },
}

/// A banner line over the play field; redrawn when it changes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Banner {
    None,
    Stage(u32),
    Warning,
    Clear,
}

struct Game {
    mode: Mode,
    player: Player,
    stages: Stages,
    score: u32,
    /// Extra ships earned so far (an index into EXTRA_LIVES).
    extras: usize,
    rng: Rng,
    table: HighScores,
    hud: Hud,
    banner: Banner,
    targets: Targets,
    /// The enemy behind each box of `targets`.
    listed: [Option<Handle<Enemy, u8>>; ENEMIES],
    flash: u8,
    /// Frames since boot, and the sky's scroll (which stops while paused).
    frame: u32,
    sky: u32,
}

/// The game: boots, then plays frame after frame.
pub fn run() -> ! {
    play_loop(|_, _, input| input)
}

/// The bullet-hell scene instead of a player (`scene.rs`, `examples/bullet_hell.rs`): the same boot and frames.
pub fn run_scene() -> ! {
    let mut scene = scene::Scene::default();
    play_loop(|game, mem, input| scene.prepare(game, mem, input))
}

/// Boots, then runs frames forever; `before` sees each frame's input first and says what the frame gets.
fn play_loop(mut before: impl FnMut(&mut Game, &mut Memory, Input) -> Input) -> ! {
    stack::init();
    DISPCNT.write(DisplayControl::new().with_forced_blank(true));
    assets::load_sprites();
    for i in 1..16 {
        OBJ_PALETTE.index(usize::from(WHITE_BANK) * 16 + i).write(Color::from_rgb(31, 31, 31));
    }
    BACKDROP_COLOR.write(Color::from_rgb(1, 1, 4));
    text::init();
    stars::init();
    sound::init();
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
    game.enter_title();
    let mut last = Input::default();
    loop {
        VBlankIntrWait();
        mem.shadow.copy_to_oam();
        stars::scroll(game.sky);
        game.show_flash();
        let keys = KEYINPUT.read();
        let input = Input::read(keys, last);
        last = input;
        // Before the stopwatch: what `before` does (the scene's filling) is not the game's frame.
        let input = before(&mut game, &mut mem, input);
        let watch = Stopwatch::start();
        game.frame(input, &mut mem, stats);

        // The allocator overlay owns SELECT, which the game ignores; hidden, it costs one flag read.
        overlay::poll(keys);
        overlay::draw(
            &mem.heap,
            &[
                PoolGauge::new("SHOTS", mem.player_bullets.len(), memory::PLAYER_BULLETS),
                PoolGauge::new("BULLETS", mem.enemy_bullets.len(), memory::ENEMY_BULLETS),
                PoolGauge::new("SPARKS", mem.particles.len(), memory::PARTICLES),
            ],
            stats.last_cycles,
        );

        let cycles = watch.elapsed();
        stats.last_cycles = cycles;
        stats.max_cycles = stats.max_cycles.max(cycles);
        mem.record(stats);
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

impl Game {
    fn new(table: HighScores) -> Game {
        Game {
            mode: Mode::Title,
            player: Player::new(),
            stages: Stages::new(),
            score: 0,
            extras: 0,
            rng: Rng::new(1),
            table,
            hud: Hud::default(),
            banner: Banner::None,
            targets: Targets::new(),
            listed: [None; ENEMIES],
            flash: 0,
            frame: 0,
            sky: 0,
        }
    }

    fn frame(&mut self, input: Input, mem: &mut Memory, stats: &mut Telemetry) {
        self.frame = self.frame.wrapping_add(1);
        let state = match &mut self.mode {
            Mode::Title => {
                self.sky += 1;
                if input.pressed(key::START) {
                    self.start(mem);
                } else {
                    hud::press_start(self.frame & 32 == 0);
                }
                State::Title
            }
            Mode::Playing if input.pressed(key::START) => {
                self.mode = Mode::Paused;
                hud::paused(true);
                State::Paused
            }
            Mode::Playing => {
                self.sky += 1;
                stats.kills += self.play(input, mem);
                State::Playing
            }
            Mode::Paused => {
                if input.pressed(key::START) {
                    self.mode = Mode::Playing;
                    hud::paused(false);
                    self.banner = Banner::None;
                }
                State::Paused
            }
            Mode::Dying(0) => self.end(mem, stats),
            Mode::Dying(left) => {
                *left -= 1;
                self.sky += 1;
                stats.kills += self.play(Input::default(), mem);
                State::Dying
            }
            Mode::GameOver(left) => {
                *left = left.saturating_sub(1);
                let left = *left;
                if input.pressed(key::A) {
                    self.continue_game(mem);
                } else if input.pressed(key::START) || left == 0 {
                    self.enter_title();
                } else {
                    hud::countdown(u32::from(left).div_ceil(60));
                }
                State::GameOver
            }
            Mode::NameEntry { letters, cursor, place, left } => {
                *left = left.saturating_sub(1);
                let step = |c: u8, by: usize| {
                    let at = hud::NAME_CHARS.iter().position(|&n| n == c).unwrap_or(0);
                    hud::NAME_CHARS[(at + by) % hud::NAME_CHARS.len()]
                };
                if input.pressed(key::UP) {
                    letters[*cursor] = step(letters[*cursor], 1);
                }
                if input.pressed(key::DOWN) {
                    letters[*cursor] = step(letters[*cursor], hud::NAME_CHARS.len() - 1);
                }
                if input.pressed(key::LEFT) {
                    *cursor = cursor.saturating_sub(1);
                }
                if input.pressed(key::RIGHT) || input.pressed(key::A) {
                    *cursor = (*cursor + 1).min(2);
                }
                if input.pressed(key::START) || *left == 0 {
                    let (name, place) = (*letters, *place);
                    self.table.insert(name, self.score);
                    save::store(&self.table);
                    info!(
                        "high score {} by {} saved in place {}",
                        self.score,
                        core::str::from_utf8(&name).unwrap_or("?"),
                        place + 1
                    );
                    self.enter_game_over();
                } else {
                    hud::name(*letters, *cursor);
                }
                State::NameEntry
            }
        };
        stats.state = state as u32;
        stats.frame = self.frame;
        stats.score = self.score;
        stats.lives = u32::from(self.player.lives);
        stats.bombs = u32::from(self.player.bombs);
        stats.stage = self.stages.number();
        for (word, entry) in stats.table.iter_mut().zip(self.table.entries.iter()) {
            *word = entry.score;
        }
    }

    fn enter_title(&mut self) {
        self.mode = Mode::Title;
        hud::title(&self.table);
    }

    /// START on the title: a new game, its randomness seeded from the frame count (so a key script replays).
    fn start(&mut self, mem: &mut Memory) {
        self.rng = Rng::new(self.frame.wrapping_mul(0x9E37_79B9) ^ 0x5EED);
        self.stages = Stages::new();
        self.continue_game(mem);
    }

    /// A fresh ship, score and stock, on the stage the last game reached (from its beginning).
    fn continue_game(&mut self, mem: &mut Memory) {
        self.player = Player::new();
        self.score = 0;
        self.extras = 0;
        self.stages = self.stages.restart();
        self.banner = Banner::None;
        self.hud.reset();
        mem.shadow.begin();
        self.mode = Mode::Playing;
    }

    fn enter_game_over(&mut self) {
        self.mode = Mode::GameOver(GAME_OVER_FRAMES);
        hud::game_over(self.score);
    }

    /// The dying is over: everything goes back to its pool and the heap, which must then be empty. Then the
    /// name entry if the score made the table, else the game-over screen.
    fn end(&mut self, mem: &mut Memory, stats: &mut Telemetry) -> State {
        clear_all(mem);
        self.flash = 0;
        stats.game_overs += 1;
        stats.leak_checks += 1;
        stats.stack_peak = stack::high_water() as u32;
        if !mem.is_empty() {
            stats.leak_failures += 1;
            error!("leak check failed at game over {}: a pool or the heap is not empty", stats.game_overs);
        }
        match self.table.rank(self.score) {
            Some(place) => {
                self.mode = Mode::NameEntry { letters: *b"YOU", cursor: 0, place, left: NAME_FRAMES };
                hud::name_entry(self.score, place);
                hud::name(*b"YOU", 0);
                State::NameEntry
            }
            None => {
                self.enter_game_over();
                State::GameOver
            }
        }
    }

    /// One frame of play: the ship, the bullets, the enemies, the stage, the collisions, and the drawing.
    /// Returns the enemies destroyed.
    fn play(&mut self, input: Input, mem: &mut Memory) -> u32 {
        mem.shadow.begin();
        if self.player.step(input, mem.player_bullets) {
            self.bomb(mem);
        }
        bullets::move_bullets(mem.player_bullets);
        bullets::move_bullets(mem.enemy_bullets);
        particles::move_particles(mem.particles);

        // Player bullets against the enemies as they stand.
        self.targets.clear();
        for (handle, enemy) in mem.enemies.iter() {
            if let Some(i) = self.targets.push(enemy.hitbox()) {
                self.listed[i] = Some(handle);
            }
        }
        if hit_enemies(mem.player_bullets, &mut self.targets) > 0 {
            sound::play(Effect::Hit);
            for (hits, handle) in self.targets.hits.iter().zip(self.listed.iter()) {
                if let (1.., Some(handle)) = (*hits, *handle)
                    && let Ok(enemy) = pool_get_mut(mem.enemies, handle)
                {
                    enemy.hp -= i16::from(*hits);
                    enemy.flash = 3;
                }
            }
        }

        let target = (self.player.x, self.player.y);
        let mut world = World {
            heap: &mut mem.heap,
            fallbacks: &mut mem.fallbacks,
            bullets: mem.enemy_bullets,
            particles: mem.particles,
            pickups: mem.pickups,
            rng: &mut self.rng,
            target,
            vulnerable: self.player.vulnerable(),
            rank: self.stages.rank(),
            stage: self.stages.stage,
            score: 0,
            boss_destroyed: false,
            rammed: false,
        };
        let mut kills = 0;
        mem.enemies.retain(|enemy| {
            let kept = enemy.step(&mut world);
            if !kept && enemy.hp <= 0 {
                kills += 1;
            }
            kept
        });
        if matches!(self.mode, Mode::Playing) {
            self.stages.step(mem.enemies, &mut world);
        }
        let (gained, boss_destroyed, rammed) = (world.score, world.boss_destroyed, world.rammed);
        self.add_score(gained);
        if boss_destroyed {
            self.cancel_bullets(mem, true);
        }

        if self.player.vulnerable()
            && (rammed || hit_player(mem.enemy_bullets, self.player.x.floor(), self.player.y.floor(), player::REACH))
        {
            self.ship_lost(mem);
        }
        self.collect_pickups(mem);
        self.draw(mem);
        self.update_banner();
        let boss = mem
            .enemies
            .iter()
            .find(|(_, e)| e.kind == Kind::Boss)
            .map(|(_, e)| (e.hp.max(0) as u32 * 24).div_ceil(e.max_hp.max(1) as u32));
        let best = self.table.entries[0].score.max(self.score);
        self.hud.draw(&hud::Shown {
            score: self.score,
            best,
            lives: self.player.lives,
            bombs: self.player.bombs,
            stage: self.stages.number(),
            boss,
        });
        kills
    }

    fn add_score(&mut self, points: u32) {
        self.score += points;
        if let Some(&at) = EXTRA_LIVES.get(self.extras)
            && self.score >= at
        {
            self.extras += 1;
            self.player.lives = (self.player.lives + 1).min(MAX_LIVES);
            sound::play(Effect::PickUp);
        }
    }

    /// B: every enemy bullet becomes sparks (10 points each), every enemy takes damage, the screen flashes.
    fn bomb(&mut self, mem: &mut Memory) {
        sound::play(Effect::Bomb);
        self.flash = FLASH_FRAMES;
        self.player.safe = self.player.safe.max(60);
        self.cancel_bullets(mem, true);
        for (_, enemy) in mem.enemies.iter_mut() {
            enemy.hp -= if enemy.kind == Kind::Boss { 24 } else { 10 };
            enemy.flash = 6;
        }
    }

    /// Removes every enemy bullet, each leaving a spark (every other one, to spare the particle pool); with
    /// `pay`, 10 points a bullet.
    fn cancel_bullets(&mut self, mem: &mut Memory, pay: bool) {
        let n = particles::bullets_to_sparks(mem.enemy_bullets, mem.particles, &mut self.rng);
        if pay {
            self.add_score(10 * n);
        }
    }

    fn ship_lost(&mut self, mem: &mut Memory) {
        sound::play(Effect::Explosion);
        particles::burst(mem.particles, &mut self.rng, self.player.x, self.player.y, 24, Fx::new(3));
        self.player.hit();
        self.cancel_bullets(mem, false);
        if self.player.lives == 0 {
            self.mode = Mode::Dying(DYING_FRAMES);
        }
    }

    fn collect_pickups(&mut self, mem: &mut Memory) {
        let (px, py) = (self.player.x, self.player.y);
        let flying = self.player.flying();
        let mut collected = 0;
        mem.pickups.retain(|p| {
            if !p.step() {
                return false;
            }
            let near = (p.x - px).abs() < Fx::new(10) && (p.y - py).abs() < Fx::new(10);
            if flying && near {
                collected += 1;
                return false;
            }
            true
        });
        for _ in 0..collected {
            sound::play(Effect::PickUp);
            if !self.player.power_up() {
                self.add_score(2000);
            }
        }
    }

    /// Builds the sprite table in priority order: what matters most first, so it is kept when slots run out.
    fn draw(&mut self, mem: &mut Memory) {
        let shadow: &mut Shadow = mem.shadow;
        if self.player.visible(self.frame) {
            shadow.put_at(&LOOKS.ship, self.player.x, self.player.y, 0);
        }
        draw_pool(mem.enemy_bullets, shadow, &LOOKS.enemy_bullet);
        // At most 8 pick-ups: drawn here, in Thumb, not by `draw_pool`, whose ARM copy for a pool this small is
        // unrolled into 1.2 KB of IWRAM.
        for (_, p) in mem.pickups.iter() {
            shadow.put_at(&LOOKS.pickup, p.x, p.y, 0);
        }
        for (_, e) in mem.enemies.iter() {
            let look = match e.kind {
                Kind::Dart => &LOOKS.dart,
                Kind::Crab => &LOOKS.crab,
                Kind::Saucer => &LOOKS.saucer,
                Kind::Mine => &LOOKS.mine,
                Kind::Boss => &LOOKS.boss,
            };
            if e.flash > 0 {
                shadow.put_at(&look.in_bank(WHITE_BANK), e.x, e.y, 0);
            } else {
                shadow.put_at(look, e.x, e.y, 0);
            }
        }
        draw_pool(mem.player_bullets, shadow, &LOOKS.player_bullet);
        draw_pool(mem.particles, shadow, &LOOKS.explosion);
    }

    fn update_banner(&mut self) {
        let want = match self.stages.phase {
            Phase::Waves if self.stages.clock < 150 => Banner::Stage(self.stages.number()),
            Phase::Warning(n) if n / 16 % 2 == 0 => Banner::Warning,
            Phase::Clear(_) => Banner::Clear,
            _ => Banner::None,
        };
        if want == self.banner {
            return;
        }
        self.banner = want;
        match want {
            Banner::None => hud::banner(Ink::White, None),
            Banner::Stage(n) => {
                let mut line = *b"STAGE  ";
                line[6] = b'0' + (n % 10) as u8;
                hud::banner(Ink::Cyan, Some(&line));
            }
            Banner::Warning => hud::banner(Ink::Red, Some(b"WARNING")),
            Banner::Clear => hud::banner(Ink::Gold, Some(b"STAGE CLEAR")),
        }
    }

    /// The bomb's flash: the sky and the sprites brightened, fading out.
    fn show_flash(&mut self) {
        if self.flash == 0 {
            BLDCNT.write(BlendControl::new());
            return;
        }
        self.flash -= 1;
        BLDCNT.write(
            BlendControl::new()
                .with_target1_bg2(true)
                .with_target1_bg3(true)
                .with_target1_obj(true)
                .with_target1_backdrop(true)
                .with_mode(ColorEffectMode::Brighten),
        );
        BLDY.write(self.flash);
    }
}

/// Frees everything: enemies (and their scratch), bullets, particles, pick-ups, and the sprite slots.
fn clear_all(mem: &mut Memory) {
    let heap = &mut mem.heap;
    mem.enemies.retain(|enemy| {
        enemy.discard(heap);
        false
    });
    mem.player_bullets.retain(|_| false);
    mem.enemy_bullets.retain(|_| false);
    mem.particles.retain(|_| false);
    mem.pickups.retain(|_| false);
    mem.shadow.begin();
}
