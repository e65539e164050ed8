//! Property drivers: random sequences of allocate / free / double free / foreign handle / get / iterate,
//! run against a simple model (fixed arrays, no heap), comparing every result, the pool's `check()` and the
//! live set after every step. `no_std`, so the same functions run millions of operations on the host and a
//! few thousand on the GBA.
//!
//! The models predict exactly which slot each allocation returns: the most recently freed one for the stack
//! pools (never-used slots in ascending order first), the lowest free one for the flag pool. Each driver
//! switches between a filling (75 % allocate) and a draining (25 %) phase so pools run full and empty.
//!
//! Stack use on the GBA (pool + model): about 5 KiB for `index_pool_u8` and `intrusive`, 6 KiB for
//! `index_pool_u16`, under 2 KiB for the others.

use core::fmt;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use super::{CheckError, FlagPool, Handle, Index, IndexPool, IntrusivePool, Packed18, Packed24, PoolError};
use super::{Pool, PtrPool, ValueStack};
use crate::rng::Rng;

/// What a property driver found: the step (0-based) and what differed from the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropFailure {
    /// The operation, counted from 0.
    pub step: u32,
    /// What differed, in words.
    pub what: &'static str,
    /// The invariant `check()` reported broken, when that was the failure.
    pub check: Option<CheckError>,
}

impl fmt::Display for PropFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {}: {}", self.step, self.what)?;
        if let Some(c) = self.check {
            write!(f, " ({c:?})")?;
        }
        Ok(())
    }
}

/// A property driver: `(seed, ops)`, every driver below has this shape.
pub type Driver = fn(u32, u32) -> Result<(), PropFailure>;

/// Every driver with its name, for running them all (on the host with big `ops`, on the GBA with small).
pub const ALL: [(&str, Driver); 8] = [
    ("index_pool_u8", index_pool_u8),
    ("index_pool_u16", index_pool_u16),
    ("packed24", packed24),
    ("packed18", packed18),
    ("ptr_pool", ptr_pool),
    ("value_stack", value_stack),
    ("intrusive", intrusive),
    ("flag_pool", flag_pool),
];

/// Returns a `PropFailure` for `step` unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $step:expr, $what:expr) => {
        if !$cond {
            return Err(PropFailure { step: $step, what: $what, check: None });
        }
    };
}

fn checked(step: u32, r: Result<(), CheckError>) -> Result<(), PropFailure> {
    match r {
        Ok(()) => Ok(()),
        Err(e) => Err(PropFailure { step, what: "check() failed", check: Some(e) }),
    }
}

/// The model's free list: a stack of slot numbers, initially `[n - 1, ..., 1, 0]` (slot 0 on top).
struct FreeStack<const M: usize> {
    s: [u16; M],
    top: usize,
}

impl<const M: usize> FreeStack<M> {
    fn new(n: usize) -> Self {
        let mut s = [0; M];
        for (k, e) in s[..n].iter_mut().enumerate() {
            *e = (n - 1 - k) as u16;
        }
        FreeStack { s, top: n }
    }
    fn pop(&mut self) -> Option<u32> {
        self.top = self.top.checked_sub(1)?;
        Some(self.s[self.top] as u32)
    }
    fn push(&mut self, i: u32) {
        self.s[self.top] = i as u16;
        self.top += 1;
    }
    fn remove(&mut self, at: usize) -> u32 {
        let i = self.s[at];
        self.s.copy_within(at + 1..self.top, at);
        self.top -= 1;
        i as u32
    }
    fn random(&self, rng: &mut Rng) -> Option<u32> {
        if self.top == 0 { None } else { Some(self.s[rng.below(self.top as u32) as usize] as u32) }
    }
}

/// The model's live set: a value (or slot tag) per slot.
struct Live<const M: usize> {
    on: [bool; M],
    val: [u32; M],
    n: usize,
}

impl<const M: usize> Live<M> {
    fn new() -> Self {
        Live { on: [false; M], val: [0; M], n: 0 }
    }
    fn get(&self, i: u32) -> Option<u32> {
        if self.on[i as usize] { Some(self.val[i as usize]) } else { None }
    }
    fn set(&mut self, i: u32, v: Option<u32>) {
        let i = i as usize;
        self.n = self.n + v.is_some() as usize - self.on[i] as usize;
        self.on[i] = v.is_some();
        self.val[i] = v.unwrap_or(0);
    }
    /// A random live slot, by probing from a random start.
    fn random(&self, rng: &mut Rng, cap: usize) -> Option<u32> {
        if self.n == 0 {
            return None;
        }
        let mut i = rng.below(cap as u32) as usize;
        while !self.on[i] {
            i = (i + 1) % cap;
        }
        Some(i as u32)
    }
}

/// Allocation bias for `step`: phases of `2 * cap` steps alternate filling and draining.
fn bias(step: u32, cap: usize) -> u32 {
    if (step as usize / (2 * cap)).is_multiple_of(2) { 75 } else { 25 }
}

/// `IndexPool<u32, u8, 256>`: the bullet pool's shape, including index 255 and a free count of 256.
pub fn index_pool_u8(seed: u32, ops: u32) -> Result<(), PropFailure> {
    index_pool::<u8, 256>(seed, ops, &mut |_, _| {})
}

/// `IndexPool<u32, u16, 300>`: `u16` indices past 255, and out-of-range handles.
pub fn index_pool_u16(seed: u32, ops: u32) -> Result<(), PropFailure> {
    index_pool::<u16, 300>(seed, ops, &mut |_, _| {})
}

/// The index-pool driver; `sabotage(step, pool)` runs before every step (tests use it to break the pool).
fn index_pool<I: Index, const N: usize>(
    seed: u32,
    ops: u32,
    sabotage: &mut dyn FnMut(u32, &mut IndexPool<u32, I, N>),
) -> Result<(), PropFailure> {
    let mut rng = Rng::new(seed);
    let id = rng.next_u32() as u8;
    let mut pool: IndexPool<u32, I, N> = IndexPool::with_id(id);
    let mut other: IndexPool<u32, I, 4> = IndexPool::with_id(id.wrapping_add(1));
    while other.alloc(0).is_ok() {}
    let mut free = FreeStack::<N>::new(N);
    let mut live = Live::<N>::new();
    let mut order = [0u16; N];
    // The model's generation of each slot: its allocations so far, modulo 256.
    let mut generation = [0u8; N];
    let hg = |i: u32, g: u8| Handle::<u32, I>::from_raw(I::from_usize(i as usize), g, id);
    for step in 0..ops {
        sabotage(step, &mut pool);
        let h = |i: u32, generation: &[u8; N]| hg(i, generation[i as usize]);
        match rng.below(17) {
            0..=7 if rng.chance(bias(step, N)) => {
                let v = rng.next_u32();
                let got = pool.alloc(v);
                match free.pop() {
                    Some(i) => {
                        generation[i as usize] = generation[i as usize].wrapping_add(1);
                        ensure!(
                            got == Ok(hg(i, generation[i as usize])),
                            step,
                            "alloc returned another handle than the model's"
                        );
                        live.set(i, Some(v));
                    }
                    None => ensure!(got == Err(v), step, "alloc from a full pool did not hand the value back"),
                }
            }
            0..=7 => {
                if let Some(i) = live.random(&mut rng, N) {
                    ensure!(pool.free(h(i, &generation)) == Ok(live.get(i).unwrap()), step, "free of a live slot");
                    live.set(i, None);
                    free.push(i);
                }
            }
            8 => {
                if let Some(i) = free.random(&mut rng) {
                    ensure!(
                        pool.free(h(i, &generation)) == Err(PoolError::DoubleFree),
                        step,
                        "double free not reported"
                    );
                    ensure!(pool.get(h(i, &generation)) == Err(PoolError::Dangling), step, "get of a freed slot");
                }
            }
            9 => {
                let f = Handle::from_raw(I::from_usize(rng.below(4) as usize), 1, other.id());
                ensure!(pool.free(f) == Err(PoolError::ForeignHandle), step, "foreign free not reported");
                ensure!(pool.get_mut(f) == Err(PoolError::ForeignHandle), step, "foreign get not reported");
            }
            10 if N < I::MAX_SLOTS => {
                let i = N as u32 + rng.below((I::MAX_SLOTS - N) as u32);
                ensure!(pool.free(hg(i, 1)) == Err(PoolError::OutOfRange), step, "out-of-range free");
                ensure!(pool.get(hg(i, 1)) == Err(PoolError::OutOfRange), step, "out-of-range get");
            }
            16 => {
                // A handle from an earlier life of any slot, live or free: refused as stale, pool unchanged.
                let i = rng.below(N as u32);
                let old = hg(i, generation[i as usize].wrapping_sub(1 + rng.below(255) as u8));
                ensure!(pool.free(old) == Err(PoolError::Stale), step, "stale free not reported");
                ensure!(pool.get(old) == Err(PoolError::Stale), step, "stale get not reported");
                ensure!(pool.get_mut(old).err() == Some(PoolError::Stale), step, "stale get_mut not reported");
            }
            11..=12 => {
                if let Some(i) = live.random(&mut rng, N) {
                    let want = live.get(i);
                    ensure!(pool.get(h(i, &generation)).ok().copied() == want, step, "get differs from the model");
                    let v = rng.next_u32();
                    match pool.get_mut(h(i, &generation)) {
                        Ok(x) => *x = v,
                        Err(_) => ensure!(false, step, "get_mut of a live slot failed"),
                    }
                    live.set(i, Some(v));
                }
            }
            13 => {
                for (_, v) in pool.iter_mut() {
                    *v = v.wrapping_add(1);
                }
                // Non-live entries are ignored, so bump them all.
                for v in live.val.iter_mut() {
                    *v = v.wrapping_add(1);
                }
            }
            14 if rng.chance(25) => {
                // `retain` frees in live-iteration order, so record that order first.
                let n = pool.len();
                for (x, (hd, _)) in pool.iter().enumerate() {
                    order[x] = hd.index().to_usize() as u16;
                }
                let m = rng.below(5) + 2;
                pool.retain(|v| *v % m != 0);
                for &i in &order[..n] {
                    let i = i as u32;
                    if let Some(v) = live.get(i)
                        && v % m == 0
                    {
                        live.set(i, None);
                        free.push(i);
                    }
                }
            }
            _ => {}
        }
        checked(step, pool.check())?;
        ensure!(pool.len() == live.n, step, "live count differs from the model");
        let mut seen = [false; N];
        let mut count = 0;
        for (hd, v) in pool.iter() {
            let i = hd.index().to_usize();
            ensure!(
                hd == h(i as u32, &generation) && !seen[i],
                step,
                "iter yielded a foreign, stale or repeated handle"
            );
            ensure!(live.get(i as u32) == Some(*v), step, "iter yielded a value the model does not have");
            seen[i] = true;
            count += 1;
        }
        ensure!(count == live.n, step, "iter missed live values");
    }
    Ok(())
}

/// The packed stacks as one driver (and the fuzz target) sees them: a [`Pool`] of bare `u32` slots that can
/// say whether a slot is live.
pub trait Packed: Pool<Value = (), Handle = u32> {
    /// The number of slots.
    const CAP: u32;
    /// Whether slot `i` is live.
    fn is_live(&self, i: u32) -> bool;
}

impl Packed for Packed24<4> {
    const CAP: u32 = Self::CAPACITY;
    fn is_live(&self, i: u32) -> bool {
        Packed24::is_live(self, i)
    }
}

impl Packed for Packed18<4> {
    const CAP: u32 = Self::CAPACITY;
    fn is_live(&self, i: u32) -> bool {
        Packed18::is_live(self, i)
    }
}

/// `Packed24<4>` (128 slots). Indices past 16 bits are covered by the unit tests, as they need big pools.
pub fn packed24(seed: u32, ops: u32) -> Result<(), PropFailure> {
    packed(&mut Packed24::<4>::new(), seed, ops, &mut |_, _| {})
}

/// `Packed18<4>` (128 slots).
pub fn packed18(seed: u32, ops: u32) -> Result<(), PropFailure> {
    packed(&mut Packed18::<4>::new(), seed, ops, &mut |_, _| {})
}

const PACKED_CAP: usize = 128;

fn packed<P: Packed>(
    pool: &mut P,
    seed: u32,
    ops: u32,
    sabotage: &mut dyn FnMut(u32, &mut P),
) -> Result<(), PropFailure> {
    let mut rng = Rng::new(seed);
    let mut free = FreeStack::<PACKED_CAP>::new(P::CAP as usize);
    let mut live = Live::<PACKED_CAP>::new();
    for step in 0..ops {
        sabotage(step, pool);
        match rng.below(10) {
            0..=6 if rng.chance(bias(step, PACKED_CAP)) => {
                let got = Pool::alloc(pool, ()).ok();
                ensure!(got == free.pop(), step, "alloc differs from the model");
                if let Some(i) = got {
                    live.set(i, Some(i));
                }
            }
            0..=6 => {
                if let Some(i) = live.random(&mut rng, PACKED_CAP) {
                    ensure!(Pool::free(pool, i) == Ok(()), step, "free of a live slot failed");
                    live.set(i, None);
                    free.push(i);
                }
            }
            7 => {
                if let Some(i) = free.random(&mut rng) {
                    ensure!(Pool::free(pool, i) == Err(PoolError::DoubleFree), step, "double free not reported");
                }
            }
            8 => {
                let i = P::CAP + rng.below(u32::MAX - P::CAP);
                ensure!(Pool::free(pool, i) == Err(PoolError::OutOfRange), step, "out-of-range free not reported");
                ensure!(!pool.is_live(i), step, "an out-of-range index is live");
            }
            _ => {}
        }
        checked(step, pool.check())?;
        ensure!(pool.len() == live.n, step, "live count differs from the model");
        for i in 0..P::CAP {
            ensure!(pool.is_live(i) == live.get(i).is_some(), step, "live set differs from the model");
        }
    }
    Ok(())
}

/// `PtrPool<u32, 64>`.
pub fn ptr_pool(seed: u32, ops: u32) -> Result<(), PropFailure> {
    let mut slots = [const { MaybeUninit::uninit() }; PTR_N];
    ptr(&mut PtrPool::new(&mut slots), seed, ops, &mut |_, _| {})
}

const PTR_N: usize = 64;

fn ptr(
    pool: &mut PtrPool<'_, u32, PTR_N>,
    seed: u32,
    ops: u32,
    sabotage: &mut dyn FnMut(u32, &mut PtrPool<'_, u32, PTR_N>),
) -> Result<(), PropFailure> {
    let mut rng = Rng::new(seed);
    let mut free = FreeStack::<PTR_N>::new(PTR_N);
    let mut live = Live::<PTR_N>::new();
    // The address of every slot handed out so far; slot 0 comes first, so `addr[0]` is the base.
    let mut addr: [Option<NonNull<u32>>; PTR_N] = [None; PTR_N];
    let mut outside = 0u32;
    for step in 0..ops {
        sabotage(step, pool);
        match rng.below(10) {
            0..=5 if rng.chance(bias(step, PTR_N)) => {
                let v = rng.next_u32();
                let got = pool.alloc(v);
                match free.pop() {
                    Some(i) => {
                        let got = got.ok();
                        let want = match addr[0] {
                            Some(b) => b.as_ptr().wrapping_add(i as usize),
                            None => got.map_or(core::ptr::null_mut(), NonNull::as_ptr),
                        };
                        ensure!(got.map(NonNull::as_ptr) == Some(want), step, "alloc differs from the model");
                        addr[i as usize] = got;
                        live.set(i, Some(v));
                    }
                    None => ensure!(got == Err(v), step, "alloc from a full pool did not hand the value back"),
                }
            }
            0..=5 => {
                if let Some(i) = live.random(&mut rng, PTR_N) {
                    let p = addr[i as usize].unwrap();
                    ensure!(pool.free(p) == Ok(live.get(i).unwrap()), step, "free of a live slot");
                    live.set(i, None);
                    free.push(i);
                }
            }
            6 => {
                if let Some(i) = free.random(&mut rng)
                    && let Some(p) = addr[i as usize]
                {
                    ensure!(pool.free(p) == Err(PoolError::DoubleFree), step, "double free not reported");
                }
            }
            7 => {
                let f = NonNull::from(&mut outside);
                ensure!(pool.free(f) == Err(PoolError::ForeignHandle), step, "foreign free not reported");
                if let Some(i) = live.random(&mut rng, PTR_N) {
                    let p = addr[i as usize].unwrap().as_ptr().cast::<u8>().wrapping_add(1 + rng.below(3) as usize);
                    let p = NonNull::new(p.cast::<u32>()).unwrap();
                    ensure!(pool.free(p) == Err(PoolError::Misaligned), step, "misaligned free not reported");
                }
            }
            8 => {
                if let Some(i) = live.random(&mut rng, PTR_N) {
                    let p = addr[i as usize].unwrap().as_ptr();
                    // SAFETY: `p` is live: allocated by `pool` and not freed since.
                    let got = unsafe { p.read() };
                    ensure!(Some(got) == live.get(i), step, "a live value changed");
                    // SAFETY: as above.
                    unsafe { p.write(got ^ 0x5A5A) };
                    live.set(i, Some(got ^ 0x5A5A));
                }
            }
            _ => {}
        }
        checked(step, pool.check())?;
        ensure!(pool.len() == live.n, step, "live count differs from the model");
        for (i, a) in addr.iter().enumerate() {
            if let Some(p) = *a {
                ensure!(pool.is_live(p) == live.on[i], step, "live set differs from the model");
            }
        }
    }
    Ok(())
}

/// `ValueStack<u32, 32>`, starting full of packed tile coordinates.
pub fn value_stack(seed: u32, ops: u32) -> Result<(), PropFailure> {
    let mut init = [0u32; VALUE_N];
    for (k, v) in init.iter_mut().enumerate() {
        *v = (k as u32) << 16 | (k as u32 * 3);
    }
    value(&mut ValueStack::full(init), init, seed, ops, &mut |_, _| {})
}

const VALUE_N: usize = 32;

fn value(
    stack: &mut ValueStack<u32, VALUE_N>,
    init: [u32; VALUE_N],
    seed: u32,
    ops: u32,
    sabotage: &mut dyn FnMut(u32, &mut ValueStack<u32, VALUE_N>),
) -> Result<(), PropFailure> {
    let mut rng = Rng::new(seed);
    let mut model = init;
    let mut len = VALUE_N;
    for step in 0..ops {
        sabotage(step, stack);
        if rng.chance(100 - bias(step, VALUE_N)) {
            let got = stack.pop();
            if len == 0 {
                ensure!(got.is_none(), step, "pop of an empty stack");
            } else {
                len -= 1;
                ensure!(got == Some(model[len]), step, "pop differs from the model");
            }
        } else {
            let v = rng.next_u32();
            if len == VALUE_N {
                ensure!(stack.push(v) == Err(PoolError::Overflow), step, "overflow not reported");
            } else {
                ensure!(stack.push(v) == Ok(()), step, "push failed");
                model[len] = v;
                len += 1;
            }
        }
        checked(step, stack.check())?;
        ensure!(stack.as_slice() == &model[..len], step, "stack differs from the model");
    }
    Ok(())
}

/// `IntrusivePool` over a 1 KiB region with a slot size picked from the seed (2 to 100 bytes), checking
/// alignment, `alloc_aligned` and that live slots' bytes are never touched.
pub fn intrusive(seed: u32, ops: u32) -> Result<(), PropFailure> {
    let mut region = Region([0; 1024]);
    let slot_size = [2, 3, 8, 12, 24, 64, 100][(seed % 7) as usize];
    // An odd start so the pool must pad to align its slots.
    let Some(mut pool) = IntrusivePool::new(&mut region.0[1..], slot_size) else {
        return Err(PropFailure { step: 0, what: "IntrusivePool::new failed", check: None });
    };
    intrusive_run(&mut pool, seed, ops, &mut |_, _| {})
}

#[repr(align(64))]
struct Region([u8; 1024]);

const INTRUSIVE_MAX: usize = 512;

fn intrusive_run(
    pool: &mut IntrusivePool<'_>,
    seed: u32,
    ops: u32,
    sabotage: &mut dyn FnMut(u32, &mut IntrusivePool<'_>),
) -> Result<(), PropFailure> {
    let mut rng = Rng::new(seed);
    let cap = pool.capacity();
    let stride = pool.stride();
    ensure!(cap > 0 && cap <= INTRUSIVE_MAX, 0, "unexpected capacity");
    let mut free = FreeStack::<INTRUSIVE_MAX>::new(cap);
    let mut live = Live::<INTRUSIVE_MAX>::new();
    // Slot 0 comes first: its address is the base of the slot area. Allocating and freeing it leaves the
    // pool (and the model) as they were.
    let base = match pool.alloc() {
        Some(p) => p.as_ptr(),
        None => return Err(PropFailure { step: 0, what: "alloc from a new pool failed", check: None }),
    };
    ensure!(pool.free(NonNull::new(base).unwrap()) == Ok(()), 0, "free of slot 0 failed");
    ensure!((base as usize).is_multiple_of(if stride < 64 { stride } else { 64 }), 0, "slot area misaligned");
    let slot = |base: *mut u8, i: u32| base.wrapping_add(i as usize * stride);
    for step in 0..ops {
        sabotage(step, pool);
        let want_align = [1, 2, 4, 8, 16, 32, 64, 3, 128][rng.below(9) as usize];
        match rng.below(10) {
            0..=5 if rng.chance(bias(step, cap)) => {
                let aligned = rng.chance(30);
                let got = if aligned { pool.alloc_aligned(want_align) } else { pool.alloc() };
                let got = got.map(NonNull::as_ptr);
                let mut want = None;
                let valid = want_align <= 64 && want_align.is_power_of_two();
                if !aligned || (valid && want_align <= stride) {
                    want = free.pop();
                } else if valid {
                    let mut at = free.top;
                    while at > 0 {
                        at -= 1;
                        if (slot(base, free.s[at] as u32) as usize).is_multiple_of(want_align) {
                            want = Some(free.remove(at));
                            break;
                        }
                    }
                }
                match want {
                    Some(i) => {
                        ensure!(got == Some(slot(base, i)), step, "alloc differs from the model");
                        // SAFETY: the slot is live and `stride` bytes long.
                        unsafe { slot(base, i).write_bytes(i as u8, stride) };
                        live.set(i, Some(i));
                    }
                    None => ensure!(got.is_none(), step, "alloc returned a slot the model has not"),
                }
            }
            0..=5 => {
                if let Some(i) = live.random(&mut rng, cap) {
                    let p = NonNull::new(slot(base, i)).unwrap();
                    ensure!(pool.free(p) == Ok(()), step, "free of a live slot failed");
                    live.set(i, None);
                    free.push(i);
                }
            }
            6 => {
                if let Some(i) = free.random(&mut rng) {
                    let p = NonNull::new(slot(base, i)).unwrap();
                    ensure!(pool.free(p) == Err(PoolError::DoubleFree), step, "double free not reported");
                }
            }
            7 => {
                let before = NonNull::new(base.wrapping_sub(1 + rng.below(8) as usize)).unwrap();
                let after = NonNull::new(slot(base, cap as u32 + rng.below(4))).unwrap();
                ensure!(pool.free(before) == Err(PoolError::ForeignHandle), step, "foreign free (below)");
                ensure!(pool.free(after) == Err(PoolError::ForeignHandle), step, "foreign free (above)");
                if let Some(i) = live.random(&mut rng, cap) {
                    let p = NonNull::new(slot(base, i).wrapping_add(1 + rng.below(stride as u32 - 1) as usize));
                    ensure!(pool.free(p.unwrap()) == Err(PoolError::Misaligned), step, "misaligned free");
                }
            }
            _ => {}
        }
        checked(step, pool.check())?;
        ensure!(pool.len() == live.n, step, "live count differs from the model");
        let mut i = 0;
        while i < cap {
            if live.on[i] {
                let p = slot(base, i as u32);
                let mut k = 0;
                while k < stride {
                    // SAFETY: slot `i` is live; the driver wrote its `stride` bytes.
                    ensure!(unsafe { p.add(k).read() } == i as u8, step, "a live slot's bytes changed");
                    k += 1;
                }
            }
            i += 1;
        }
    }
    Ok(())
}

/// `FlagPool<u32, 64>`.
pub fn flag_pool(seed: u32, ops: u32) -> Result<(), PropFailure> {
    flag(&mut FlagPool::new(7), seed, ops, &mut |_, _| {})
}

const FLAG_N: usize = 64;

fn flag(
    pool: &mut FlagPool<u32, FLAG_N>,
    seed: u32,
    ops: u32,
    sabotage: &mut dyn FnMut(u32, &mut FlagPool<u32, FLAG_N>),
) -> Result<(), PropFailure> {
    let mut rng = Rng::new(seed);
    let mut live = Live::<FLAG_N>::new();
    let id = pool.id();
    let h = |i: u32| Handle::<u32, u16>::from_raw(i as u16, 0, id);
    let other = Handle::<u32, u16>::from_raw(0, 0, id.wrapping_add(1));
    for step in 0..ops {
        sabotage(step, pool);
        match rng.below(10) {
            0..=5 if rng.chance(bias(step, FLAG_N)) => {
                let v = rng.next_u32();
                let got = pool.alloc(v);
                let mut lowest = 0;
                while lowest < FLAG_N && live.on[lowest] {
                    lowest += 1;
                }
                if lowest == FLAG_N {
                    ensure!(got == Err(v), step, "alloc from a full pool did not hand the value back");
                } else {
                    ensure!(got == Ok(h(lowest as u32)), step, "alloc did not return the lowest free slot");
                    live.set(lowest as u32, Some(v));
                }
            }
            0..=5 => {
                if let Some(i) = live.random(&mut rng, FLAG_N) {
                    ensure!(pool.free(h(i)) == Ok(live.get(i).unwrap()), step, "free of a live slot");
                    live.set(i, None);
                }
            }
            6 => {
                let i = rng.below(FLAG_N as u32);
                if live.get(i).is_none() {
                    ensure!(pool.free(h(i)) == Err(PoolError::DoubleFree), step, "double free not reported");
                    ensure!(pool.get(h(i)) == Err(PoolError::Dangling), step, "get of a freed slot");
                }
            }
            7 => {
                ensure!(pool.free(other) == Err(PoolError::ForeignHandle), step, "foreign free not reported");
                let i = FLAG_N as u32 + rng.below(65_536 - FLAG_N as u32);
                ensure!(pool.free(h(i)) == Err(PoolError::OutOfRange), step, "out-of-range free");
            }
            8 => {
                if let Some(i) = live.random(&mut rng, FLAG_N) {
                    let v = rng.next_u32();
                    match pool.get_mut(h(i)) {
                        Ok(x) => *x = v,
                        Err(_) => ensure!(false, step, "get_mut of a live slot failed"),
                    }
                    live.set(i, Some(v));
                }
            }
            _ => {}
        }
        checked(step, pool.check())?;
        ensure!(pool.len() == live.n, step, "live count differs from the model");
        let mut count = 0;
        let mut ok = true;
        pool.for_each(|hd, v| {
            ok &= hd.pool() == id && live.get(hd.index() as u32) == Some(*v);
            count += 1;
        });
        ensure!(ok && count == live.n, step, "live set differs from the model");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every driver passes when nothing is wrong (short runs; the long ones are in `pool::tests`) ...
    #[test]
    #[cfg_attr(miri, ignore = "pool::tests::properties runs the same drivers under Miri")]
    fn drivers_pass() {
        for (name, d) in ALL {
            for seed in 0..7 {
                assert_eq!(d(seed, if cfg!(miri) { 30 } else { 2_000 }), Ok(()), "{name}");
            }
        }
    }

    /// ... and every driver notices when the pool is changed behind the model's back.
    fn fails_at_or_after(r: Result<(), PropFailure>, step: u32) {
        let f = r.expect_err("the driver missed the sabotage");
        assert!(f.step >= step, "{f}");
    }

    /// The step at which the sabotage tests break the pool: late enough for a busy pool, but under Miri
    /// early enough to run in seconds.
    const AT: u32 = if cfg!(miri) { 60 } else { 700 };

    #[test]
    fn drivers_catch_sabotage() {
        fails_at_or_after(
            index_pool::<u8, 256>(1, 5_000, &mut |s, p| {
                if s == AT {
                    let _ = p.alloc(0);
                }
            }),
            AT,
        );
        fails_at_or_after(
            index_pool::<u16, 300>(2, 5_000, &mut |s, p| {
                if s == AT {
                    let h = p.iter().next().map(|(h, _)| h);
                    let _ = h.map(|h| p.free(h));
                }
            }),
            AT,
        );
        for seed in 1..3 {
            fails_at_or_after(
                packed(&mut Packed24::<4>::new(), seed, 5_000, &mut |s, p| {
                    if s == AT {
                        p.alloc();
                    }
                }),
                AT,
            );
            fails_at_or_after(
                packed(&mut Packed18::<4>::new(), seed, 5_000, &mut |s, p| {
                    if s == AT {
                        p.alloc();
                    }
                }),
                AT,
            );
        }
        let mut slots = [const { MaybeUninit::uninit() }; PTR_N];
        fails_at_or_after(
            ptr(&mut PtrPool::new(&mut slots), 3, 5_000, &mut |s, p| {
                if s == AT {
                    let _ = p.alloc(0);
                }
            }),
            AT,
        );
        let init = [5; VALUE_N];
        fails_at_or_after(
            value(&mut ValueStack::full(init), init, 4, 5_000, &mut |s, p| {
                if s == AT {
                    p.pop();
                }
            }),
            AT,
        );
        fails_at_or_after(
            flag(&mut FlagPool::new(7), 5, 5_000, &mut |s, p| {
                if s == AT {
                    let _ = p.alloc(0);
                }
            }),
            AT,
        );
    }

    /// A write through a freed pointer corrupts the intrusive list; `check()` reports it.
    #[test]
    fn intrusive_use_after_free_is_caught_by_check() {
        let mut region = Region([0; 1024]);
        let mut pool = IntrusivePool::new(&mut region.0, 8).unwrap();
        let r = intrusive_run(&mut pool, 6, 5_000, &mut |s, p| {
            if s == AT
                && let Some(q) = p.alloc()
            {
                assert_eq!(p.free(q), Ok(()));
                // SAFETY: the slot is in the region (freed, so this is the bug being simulated).
                unsafe { q.as_ptr().cast::<u16>().write(0x7777) };
            }
        });
        let f = r.expect_err("corruption missed");
        assert!(f.step == AT && matches!(f.check, Some(CheckError::EntryOutOfRange { .. })), "{f}");
    }
}
