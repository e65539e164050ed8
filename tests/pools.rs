//! The stack pools on the GBA: the host's property drivers at a smaller scale, the bullet pool's ARM fast
//! paths (`stackshot_alloc::iwram`) on a pool in IWRAM, and the intrusive pool's size arithmetic on a 32-bit `usize`.
#![no_std]
#![no_main]
#![feature(custom_test_frameworks)]
#![test_runner(stackshot_platform::testing::run)]
#![reexport_test_harness_main = "test_main"]
stackshot_platform::testing::test_main!();

use stackshot_alloc::iwram::{pool_alloc, pool_free, pool_get_mut};
use stackshot_alloc::pool::{Handle, IndexPool, IntrusivePool, PoolError, props};
use stackshot_platform::info;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Bullet {
    x: i16,
    y: i16,
}

#[unsafe(link_section = ".iwram.test_bullets")]
static mut BULLETS: IndexPool<Bullet, u8, 256> = IndexPool::with_id(1);
static mut OTHER: IndexPool<Bullet, u8, 4> = IndexPool::with_id(2);

#[allow(
    clippy::deref_addrof,
    reason = "`static_mut_refs` denies `&mut S` on a `static mut`, hence `&raw` (rust-clippy#13783)"
)]
fn pools() -> (&'static mut IndexPool<Bullet, u8, 256>, &'static mut IndexPool<Bullet, u8, 4>) {
    // SAFETY: tests run one at a time and every test that takes these references leaves the pools empty; no
    // reference outlives its test.
    unsafe { (&mut *(&raw mut BULLETS), &mut *(&raw mut OTHER)) }
}

#[test_case]
fn every_property_driver_matches_its_model() {
    let mut total = 0;
    for (name, driver) in props::ALL {
        let ops = 400;
        if let Err(failure) = driver(0x5EED, ops) {
            panic!("{name}: {failure}");
        }
        total += ops;
    }
    info!("{} drivers, {total} operations, each checked against its model", props::ALL.len());
}

#[test_case]
fn the_bullet_pool_lives_in_iwram() {
    let (bullets, _) = pools();
    let address = bullets as *const _ as usize;
    assert!((0x0300_0000..0x0300_8000).contains(&address), "BULLETS is at {address:#010x}");
    let fast_path = pool_alloc::<Bullet, 256, (), 0> as *const () as usize;
    assert!((0x0300_0000..0x0300_8000).contains(&fast_path), "pool_alloc is at {fast_path:#010x}");
    assert_eq!(fast_path & 1, 0, "pool_alloc is Thumb code");
}

#[test_case]
fn the_fast_paths_fill_use_and_empty_the_pool() {
    let (bullets, _) = pools();
    let mut handles = [None; 256];
    for (i, slot) in handles.iter_mut().enumerate() {
        *slot = pool_alloc(bullets, Bullet { x: i as i16, y: 0 }).ok();
        assert!(slot.is_some(), "allocation {i} failed");
    }
    let refused = Bullet { x: -5, y: 9 };
    assert_eq!(pool_alloc(bullets, refused), Err(refused), "a full pool must hand the value back");
    for handle in handles.iter().flatten() {
        pool_get_mut(bullets, *handle).unwrap().y += 7;
    }
    assert_eq!(bullets.iter().filter(|(_, b)| b.y == 7).count(), 256);
    for (i, handle) in handles.iter().enumerate() {
        assert_eq!(pool_free(bullets, handle.unwrap()), Ok(Bullet { x: i as i16, y: 7 }));
    }
    assert!(bullets.is_empty());
    bullets.check().unwrap();
}

#[test_case]
fn bad_frees_are_reported_and_change_nothing() {
    let (bullets, other) = pools();
    let a = pool_alloc(bullets, Bullet { x: 1, y: 2 }).unwrap();
    let foreign = pool_alloc(other, Bullet { x: 3, y: 4 }).unwrap();
    assert_eq!(pool_free(bullets, a), Ok(Bullet { x: 1, y: 2 }));
    assert_eq!(pool_free(bullets, a), Err(PoolError::DoubleFree));
    assert_eq!(pool_get_mut(bullets, a).err(), Some(PoolError::Dangling));
    // A handle of the 4-slot pool, cast to the bullet pool's type: its pool id gives it away.
    let disguised = Handle::from_raw(foreign.index(), foreign.generation(), foreign.pool());
    assert_eq!(pool_free(bullets, disguised), Err(PoolError::ForeignHandle));
    assert!(bullets.is_empty());
    bullets.check().unwrap();
    assert_eq!(pool_free(other, foreign), Ok(Bullet { x: 3, y: 4 }));
}

/// What a pool shows of itself: count, peak, free stack in allocation order, live handles and values.
#[derive(PartialEq, Debug)]
struct Snapshot {
    len: usize,
    peak: usize,
    free: [u8; 256],
    live: [(Handle<Bullet, u8>, Bullet); 256],
}

fn snapshot(pool: &IndexPool<Bullet, u8, 256>) -> Snapshot {
    let mut s = Snapshot {
        len: pool.len(),
        peak: pool.peak(),
        free: [0; 256],
        live: [(Handle::from_raw(0, 0, 0), Bullet { x: 0, y: 0 }); 256],
    };
    for (k, slot) in pool.free_slots().enumerate() {
        s.free[k] = slot;
    }
    for (k, (h, b)) in pool.iter().enumerate() {
        s.live[k] = (h, *b);
    }
    s
}

/// One slot allocated and freed 300 times (its generation wraps past 255), beside 40 live bullets: every
/// earlier handle to it is refused as stale, while it is free and while it is live again (except one exactly
/// 256 allocations old, which the wrapped count cannot tell: the documented limit); a double free and a foreign
/// handle are refused too; each refusal leaves the pool exactly as it was.
#[test_case]
fn stale_double_and_foreign_handles_are_refused_after_300_reuses() {
    let (bullets, other) = pools();
    let mut keep = [None; 40];
    for (i, k) in keep.iter_mut().enumerate() {
        *k = pool_alloc(bullets, Bullet { x: i as i16, y: 1 }).ok();
    }
    let foreign = pool_alloc(other, Bullet { x: 3, y: 4 }).unwrap();
    let mut old: [Option<Handle<Bullet, u8>>; 300] = [None; 300];
    for round in 0..300 {
        let h = pool_alloc(bullets, Bullet { x: round as i16, y: 2 }).unwrap();
        let before = snapshot(bullets);
        for (age, o) in old[..round].iter().rev().enumerate() {
            let o = o.unwrap();
            assert_eq!(o.index(), h.index(), "the slot freed last is reused");
            if (age + 1) % 256 == 0 {
                continue;
            }
            assert_eq!(pool_get_mut(bullets, o).err(), Some(PoolError::Stale), "round {round}, age {}", age + 1);
            assert_eq!(pool_free(bullets, o), Err(PoolError::Stale), "round {round}, age {}", age + 1);
        }
        let disguised = Handle::from_raw(foreign.index(), foreign.generation(), foreign.pool());
        assert_eq!(pool_free(bullets, disguised), Err(PoolError::ForeignHandle));
        assert!(snapshot(bullets) == before, "round {round}: a refused handle changed the pool");
        assert_eq!(pool_free(bullets, h), Ok(Bullet { x: round as i16, y: 2 }));
        let before = snapshot(bullets);
        assert_eq!(pool_free(bullets, h), Err(PoolError::DoubleFree), "round {round}");
        if round > 0 {
            assert_eq!(pool_free(bullets, old[round - 1].unwrap()), Err(PoolError::Stale), "round {round}");
        }
        assert!(snapshot(bullets) == before, "round {round}: a refused free changed the pool");
        old[round] = Some(h);
    }
    assert_eq!(old[299].unwrap().generation(), old[43].unwrap().generation(), "the count wrapped");
    for k in keep {
        pool_free(bullets, k.unwrap()).unwrap();
    }
    assert_eq!(pool_free(other, foreign), Ok(Bullet { x: 3, y: 4 }));
    assert!(bullets.is_empty());
    bullets.check().unwrap();
}

/// On the GBA's 32-bit `usize`, a `1 << 29`-byte slot makes `8 * stride + 1` and `count * stride` wrap: the
/// intrusive pool must refuse it rather than write free-list links outside its region.
#[test_case]
fn an_intrusive_pool_refuses_slots_whose_size_overflows_usize() {
    let mut region = [0u8; 1024];
    for slot_size in [1 << 29, 1 << 30, (1 << 31) + 1, usize::MAX] {
        assert!(IntrusivePool::new(&mut region, slot_size).is_none(), "slot size {slot_size:#x} gave a pool");
    }
    assert!(region.iter().all(|&b| b == 0), "the region was written");
}
