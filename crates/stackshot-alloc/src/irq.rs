//! [`IrqLock`]: the GBA's critical section as a [`lock_api::RawMutex`], so that a [`LockedHeap`], or a pool in an
//! [`IrqMutex`], can be shared between the main loop and interrupt handlers.
//!
//! The GBA has one core, so the only way two calls overlap is an interrupt arriving during one of them.
//! Holding the lock clears the master interrupt enable (IME, 0x0400_0208): an interrupt that arrives meanwhile
//! waits, and is taken as soon as the lock is released and IME gets its old value back.
//!
//! Built with the feature `gba` for the GBA's targets only (`thumbv4t-none-eabi`, `armv4t-none-eabi`); the
//! feature is a compile error on any other (on the host, share a heap with any other `RawMutex`).
//!
//! [`LockedHeap`]: crate::heap::LockedHeap

use core::cell::Cell;

/// IME: bit 0 enables interrupts at all (GBATEK, "Interrupt Control").
const IME: *mut u16 = 0x0400_0208 as *mut u16;

/// A compiler barrier: the heap's memory accesses are not moved across it. An empty `asm!` may read and write
/// any memory as far as the compiler knows. (`compiler_fence` lowers to a `__sync_synchronize` call on
/// ARMv4T, which has no such helper.)
#[inline(always)]
fn barrier() {
    // SAFETY: an empty instruction sequence.
    unsafe { core::arch::asm!("", options(nostack, preserves_flags)) }
}

/// Masks interrupts while held. Taking it while it is held means re-entry: an allocation inside
/// [`LockedHeap::with`](crate::heap::LockedHeap::with) (or a lock of an [`IrqMutex`] taken again inside its guard),
/// or an interrupt handler let in because code inside the locked section turned IME back on (a BIOS `IntrWait`
/// does). `try_lock` refuses it and `lock` panics with a message, since waiting would never end. A `with` closure
/// runs with interrupts masked for its whole length (a `check()` of a large heap takes a while).
///
/// **The rule for interrupt handlers:** a handler leaves IME as it found it. Taking this lock reads IME and then
/// clears it, and releasing it writes back what it read: a handler taken between that read and that clear, which
/// changed IME and left it changed, would have its change undone at the release. Handlers the BIOS dispatches
/// keep the rule unless they write IME themselves (taking an interrupt does not change IME), and a handler that
/// takes an `IrqLock` of its own keeps it too, as the lock puts IME back. Enable or disable interrupts for good
/// from the main loop, outside any lock.
///
/// Each lock remembers whether IME was set when it was taken, and if so sets it again when released; one taken
/// with interrupts masked already (inside another lock) leaves IME as it is. So locks held together are released
/// in the reverse order, as Rust drops guards at the end of their scopes. One released before a lock taken after
/// it turns interrupts back on while that one is still held: a handler that takes it then is refused (it panics),
/// so what it guards stays exclusive, and interrupts are on again once both are released.
pub struct IrqLock {
    held: Cell<bool>,
    saved_ime: Cell<u16>,
}

/// A value shared between the main loop and interrupt handlers: `lock()` masks interrupts for as long as its
/// guard lives (`lock_api::Mutex::new` is `const`, for a `static`). For a pool an interrupt handler allocates from
/// or frees into, say; the heap has its own, [`LockedHeap`].
///
/// [`LockedHeap`]: crate::heap::LockedHeap
pub type IrqMutex<T> = lock_api::Mutex<IrqLock, T>;

// SAFETY: the GBA has one core (this module builds for the GBA's targets only), so contexts interleave only through
// interrupts, and an interrupting context runs to its end before the one it interrupted goes on. `held` is tested
// and set after IME is cleared: a handler let in before the clear takes effect has released what it took by the
// time the test runs, and none comes between the test and the set. A `Cell<bool>` or `Cell<u16>` access is a
// single load or store, which an interrupt cannot split. The compiler barriers keep `held`'s set before the locked
// section's code and its clear after it, so even if that code turns IME back on (or a lock taken before this one
// is released first), a context that then tries this lock finds `held` set and is refused.
unsafe impl Sync for IrqLock {}

/// `lock`'s panic, out of line: inlined into `LockedHeap`'s ARM functions in IWRAM, a call of this takes fewer
/// bytes there than the panic's arguments.
#[cold]
#[inline(never)]
fn reentered() -> ! {
    // Short enough for the game's crash screen (four of its rows; `tools/harness/tests/game_crash.rs` reads it).
    panic!("stackshot-alloc: IrqLock re-entered (an allocation inside LockedHeap::with, or IntrWait inside a lock?)");
}

// SAFETY: while one context holds the lock, `held` is set (see `Sync` above), so every other context's `try_lock`
// is refused, and so is re-entry from the holder itself; interrupts are masked too, unless code inside the section
// turned IME back on. That is mutual exclusion on the GBA's single core.
unsafe impl lock_api::RawMutex for IrqLock {
    #[allow(clippy::declare_interior_mutable_const, reason = "`lock_api::RawMutex::INIT` is a const by its trait")]
    const INIT: Self = IrqLock { held: Cell::new(false), saved_ime: Cell::new(0) };
    type GuardMarker = lock_api::GuardNoSend;

    // Always inlined, this and the two below: `LockedHeap`'s ARM functions in IWRAM would otherwise call them as
    // Thumb code in ROM (`tools/harness/tests/game_hot_paths.rs` fails then).
    #[inline(always)]
    fn lock(&self) {
        if !self.try_lock() {
            reentered();
        }
    }

    #[inline(always)]
    fn try_lock(&self) -> bool {
        // SAFETY: IME is a 16-bit I/O register, always mapped on the GBA.
        let ime = unsafe { IME.read_volatile() };
        // SAFETY: as above.
        unsafe { IME.write_volatile(0) };
        // `held` is read, and the section's accesses made, after the write that masks interrupts.
        barrier();
        if self.held.get() {
            barrier();
            // SAFETY: as above; restores what this call found.
            unsafe { IME.write_volatile(ime) };
            return false;
        }
        self.held.set(true);
        self.saved_ime.set(ime);
        // `held` is in memory before the locked section's code runs: if that code turns IME back on (safe code can),
        // another context's `try_lock` must find it. Without this, LLVM dropped the store (`false` is written at
        // the release, with nothing between that it knew could read it) and a handler took the lock inside the
        // guard (`tests/irq.rs`).
        barrier();
        true
    }

    #[inline(always)]
    unsafe fn unlock(&self) {
        // The locked section's accesses are done before `held` clears (interrupts may be on already).
        barrier();
        let ime = self.saved_ime.get();
        self.held.set(false);
        // And `held` clears before the write that unmasks interrupts.
        barrier();
        // Only a lock that found interrupts on turns them on again: one taken inside another leaves them masked
        // for the outer one. (Writing back 0 there too, two locks released out of order left IME at 0 for good.)
        if ime != 0 {
            // SAFETY: IME is a 16-bit I/O register, always mapped on the GBA.
            unsafe { IME.write_volatile(ime) };
        }
    }
}
