//! Collision tests, the hot ones as ARM code in IWRAM: player bullets against every enemy's box, enemy bullets
//! against the ship. Boxes are in whole pixels; bullets are tested by their centre. The enemies' boxes are
//! listed with their handles, so the tests hand back the enemies they hit.

use super::bullets::Bullet;
use super::enemy::Enemy;
use super::memory::{ENEMIES, Enemies};
use super::sweep::sweep;
use stackshot_alloc::pool::{Handle, IndexPool};

/// Columns the screen is cut into for the bullets' test: a bullet is tested against the boxes that reach into
/// its column only, not all of them.
const COLUMNS: usize = 8;
/// log2 of a column's width in pixels (32: 8 columns cover 256 pixels, the screen and a margin).
const COLUMN_SHIFT: u32 = 5;

/// The column of pixel `x`, clamped to the columns (off-screen pixels go to the edge ones).
#[inline(always)]
fn column(x: i32) -> usize {
    // Plain `if`s: `clamp` is a call into core's Thumb code in ROM.
    let c = x >> COLUMN_SHIFT;
    if c < 0 {
        0
    } else if c >= COLUMNS as i32 {
        COLUMNS - 1
    } else {
        c as usize
    }
}

/// A box, inclusive of `x0`/`y0`, exclusive of `x1`/`y1`.
#[derive(Clone, Copy, Debug, Default)]
struct Hitbox {
    x0: i32,
    y0: i32,
    x1: i32,
    y1: i32,
}

impl Hitbox {
    /// An enemy's box: its reach around its centre.
    fn of(enemy: &Enemy) -> Hitbox {
        let (x, y, r) = (enemy.x.floor(), enemy.y.floor(), enemy.kind.reach());
        Hitbox { x0: x - r, y0: y - r, x1: x + r, y1: y + r }
    }
}

/// This frame's enemy boxes, each with its enemy's handle, in pool order, and how many player bullets hit each.
#[repr(C)] // `found` first: the boxes where `hit_enemies` has always read them, so its code is the same
pub struct Targets {
    found: Boxes,
    handles: [Option<Handle<Enemy, u8>>; ENEMIES],
}

/// The boxes and their hits: what `hit_enemies` reads and writes.
struct Boxes {
    len: usize,
    boxes: [Hitbox; ENEMIES],
    hits: [u8; ENEMIES],
    /// `hit_enemies`'s own: the boxes reaching into each column, in box order (kept here, so that it is not
    /// cleared every frame: only `counts[c]` entries of column `c` are read).
    listed: [[u8; ENEMIES]; COLUMNS],
    counts: [usize; COLUMNS],
}

impl Targets {
    pub const fn new() -> Targets {
        Targets {
            found: Boxes {
                len: 0,
                boxes: [Hitbox { x0: 0, y0: 0, x1: 0, y1: 0 }; ENEMIES],
                hits: [0; ENEMIES],
                listed: [[0; ENEMIES]; COLUMNS],
                counts: [0; COLUMNS],
            },
            handles: [None; ENEMIES],
        }
    }

    /// Lists every enemy of `enemies` as it stands, with no hits yet.
    pub fn list(&mut self, enemies: &Enemies) {
        let found = &mut self.found;
        found.len = 0;
        found.hits = [0; ENEMIES];
        for (handle, enemy) in enemies.iter() {
            // Always a place: the pool holds `ENEMIES` at most.
            if let (Some(hitbox), Some(listed)) = (found.boxes.get_mut(found.len), self.handles.get_mut(found.len)) {
                *hitbox = Hitbox::of(enemy);
                *listed = Some(handle);
                found.len += 1;
            }
        }
    }

    /// The enemies that [`hit_enemies`] found hit, each with the number of bullets that hit it.
    pub fn hit(&self) -> impl Iterator<Item = (Handle<Enemy, u8>, u8)> + '_ {
        let listed = self.handles.iter().zip(&self.found.hits).take(self.found.len);
        listed.filter_map(|(handle, &hits)| if hits > 0 { handle.map(|handle| (handle, hits)) } else { None })
    }
}

/// Tests every player bullet against every box; a bullet that hits is freed and counted in `hits` of the
/// first box it is in. Returns the bullets that hit. A hot path, ARM code in IWRAM.
///
/// The boxes are first listed by the columns they reach into, in box order, so a bullet is tested against its
/// column's boxes only; the first of those it is in is the first of all (a box it is in reaches its column).
#[unsafe(link_section = ".iwram.hit_enemies")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn hit_enemies<const N: usize, P, const ID: u8>(
    bullets: &mut IndexPool<Bullet, u8, N, P, ID>,
    targets: &mut Targets,
) -> u32 {
    let found = &mut targets.found;
    let mut len = found.len;
    if len > ENEMIES {
        len = ENEMIES;
    }
    let Boxes { boxes, hits: counted, listed, counts, .. } = found;
    *counts = [0; COLUMNS];
    let mut i = 0;
    while i < len {
        let t = &boxes[i];
        let (mut c, last) = (column(t.x0), column(t.x1 - 1));
        while c <= last {
            // Never false (a column lists each box once, and there are at most `ENEMIES`): written out so that
            // no bounds check calls into ROM.
            let k = counts[c];
            if k < ENEMIES {
                listed[c][k] = i as u8;
                counts[c] = k + 1;
            }
            c += 1;
        }
        i += 1;
    }
    let mut hit = 0;
    sweep!(bullets, |b| {
        let (x, y) = (b.x.to_raw() >> 8, b.y.to_raw() >> 8);
        let c = column(x);
        let (column, n) = (&listed[c], counts[c]);
        let mut k = 0;
        while k < n && k < ENEMIES {
            let i = column[k] as usize % ENEMIES; // a mask (`ENEMIES` is 32): the index is below it already
            let t = &boxes[i];
            if x >= t.x0 && x < t.x1 && y >= t.y0 && y < t.y1 {
                counted[i] = counted[i].wrapping_add(1);
                hit += 1;
                break;
            }
            k += 1;
        }
        k == n
    });
    hit
}

/// Whether an enemy bullet is within `reach` pixels (each axis) of (`x`, `y`); every such bullet is freed.
/// A hot path, ARM code in IWRAM.
#[unsafe(link_section = ".iwram.hit_player")]
#[instruction_set(arm::a32)]
#[inline(never)]
pub fn hit_player<const N: usize, P, const ID: u8>(
    bullets: &mut IndexPool<Bullet, u8, N, P, ID>,
    x: i32,
    y: i32,
    reach: i32,
) -> bool {
    let mut hit = false;
    sweep!(bullets, |b| {
        let dx = (b.x.to_raw() >> 8) - x;
        let dy = (b.y.to_raw() >> 8) - y;
        let inside = dx >= -reach && dx <= reach && dy >= -reach && dy <= reach;
        hit |= inside;
        !inside
    });
    hit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::enemy::Kind;
    use crate::game::fixed::Fx;

    /// The handles come back with their own box's hits: two bullets in one enemy, one in another, none in a
    /// third, with a freed enemy's slot between them (so pool order is not slot order) and a bullet that misses.
    #[test_case]
    fn hit_enemies_hands_back_each_enemy_hit_with_its_hits() {
        let mut enemies: Enemies = IndexPool::new();
        let a = enemies.alloc(Enemy::new(Kind::Dart, 40, 40, 0)).ok().unwrap();
        let gone = enemies.alloc(Enemy::new(Kind::Crab, 80, 40, 0)).ok().unwrap();
        let b = enemies.alloc(Enemy::new(Kind::Boss, 120, 40, 0)).ok().unwrap();
        let missed = enemies.alloc(Enemy::new(Kind::Mine, 200, 40, 0)).ok().unwrap();
        assert!(enemies.free(gone).is_ok());
        let mut bullets: IndexPool<Bullet, u8, 8> = IndexPool::new();
        let at = |x: i32, y: i32| Bullet { x: Fx::new(x), y: Fx::new(y), vx: Fx::new(0), vy: Fx::new(0) };
        for bullet in [at(41, 38), at(120, 40), at(36, 44), at(160, 100)] {
            assert!(bullets.alloc(bullet).is_ok());
        }
        let mut targets = Targets::new();
        targets.list(&enemies);
        assert_eq!(hit_enemies(&mut bullets, &mut targets), 3);
        assert_eq!(bullets.len(), 1, "the bullets that hit are freed, the one that missed is not");
        // In whatever order the pool lists them, each enemy hit once, with its own count.
        let (mut listed, mut counts) = (0, [0; 2]);
        for (handle, hits) in targets.hit() {
            listed += 1;
            match handle {
                h if h == a => counts[0] = hits,
                h if h == b => counts[1] = hits,
                other => panic!("{other:?} handed back, not hit ({missed:?} missed, {gone:?} freed)"),
            }
        }
        assert_eq!((listed, counts), (2, [2, 1]));
    }
}
