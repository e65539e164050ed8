//! The draw table: how each thing looks ([`LOOKS`]), and the shadow sprite table built from them each frame of
//! play, in priority order.

use super::enemy::Kind;
use super::flash;
use super::memory::Memory;
use super::sprites::{Look, Shadow, draw_pool};
use super::state::Game;
use crate::assets;

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

impl Game {
    /// Builds the sprite table in priority order: what matters most first, so it is kept when slots run out.
    pub fn draw(&mut self, mem: &mut Memory) {
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
                shadow.put_at(&flash::white(look), e.x, e.y, 0);
            } else {
                shadow.put_at(look, e.x, e.y, 0);
            }
        }
        draw_pool(mem.player_bullets, shadow, &LOOKS.player_bullet);
        draw_pool(mem.particles, shadow, &LOOKS.explosion);
    }
}
