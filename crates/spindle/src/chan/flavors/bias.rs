//! A claim word of the bounded ring (`head` or `tail`, `array/mod.rs`) that
//! one thread may own for a while, so that its claims are a plain load and
//! a plain store instead of a CAS: biased locking, as JVMs once did it for
//! monitors, applied to a ring's claim words.
//!
//! Why: a message through the ring costs two claims, each a locked CAS
//! (most of the cost of a send and a receive), and a channel often spends
//! its whole life on one thread: a task that sends and then receives, a
//! producer and a consumer task beside each other on one worker. A plain
//! claim costs a fraction of a locked CAS there.
//!
//! # State (all on the word's cache line)
//! - `word`: the claim word, in `array/mod.rs`'s encoding plus the bit
//!   [`BIASED`]: set while a thread owns the word (by that thread's CAS, in
//!   [`ClaimWord::bias`]); cleared by a revoker's RMW.
//! - `owner`: [`FREE`]; or a tag `id << EPOCH_BITS | epoch`, the owner's
//!   thread id and which of the word's `MAX_BIASES` ownerships this is, from
//!   just before `BIASED` is set until a revocation starts; or [`REVOKING`],
//!   from then until `BIASED` is cleared.
//! - `busy[epoch]`: written only by that epoch's owner thread; true while it
//!   is inside a plain claim. One flag per epoch, so that a late write of a
//!   former owner (it read its own tag just before the revocation) lands on
//!   a flag that nobody waits on any more.
//! - `epochs`: ownerships begun (each attempt takes one); at `MAX_BIASES`
//!   the word is shared for good.
//! - `streak`: `id << 16 | n`: the last `n` claims by CAS were made by
//!   thread `id`; [`NEVER`] once no ownership is left to begin: claims stop
//!   counting.
//! - `guess`: the value the last claim by CAS left in the word (`array/mod.rs`,
//!   "Guessed claims"); it never holds `BIASED`, so that a CAS expecting it
//!   fails on an owned word.
//!
//! # Invariants
//! - I1: `BIASED` set ⇒ `owner` is a tag or `REVOKING`, never `FREE`.
//! - I2: the word is written by a plain store only by the owner thread,
//!   between `busy[epoch] := true` and `busy[epoch] := false`, having read
//!   its tag in `owner` after the first.
//! - I3: while `BIASED` is set, no thread but the owner writes the word,
//!   except the revoker's `fetch_and` after its handshake: others never
//!   CAS expecting `BIASED`, and their other RMWs (raising `WAITING`,
//!   closing) go through [`ClaimWord::raise`] and [`ClaimWord::lower`],
//!   which revoke first.
//!
//! # Protocols
//! ```text
//! plain claim (owner):  busy[e] := true; light(); if owner == tag { w := word; word := claim(w) }
//!                       busy[e] := false (Release)
//! revoke (anyone else): CAS owner: tag -> REVOKING; heavy(); wait while busy[e] (Acquire);
//!                       word &= !BIASED; owner := FREE
//! bias (STREAK claims by CAS in a row from one thread):
//!                       e := epochs++; CAS owner: FREE -> tag; CAS word: w -> w | BIASED
//!                       (if that fails: owner := FREE)
//! ```
//! A plain claim never overlaps a write of another thread: `light` and
//! `heavy` order as two SeqCst fences (`asym_fence.rs`), so either the
//! revoker's wait sees `busy[e]` (and waits for the claim to end, its
//! Release making the claim visible), or the owner's second `owner` load
//! sees `REVOKING` and it claims by CAS instead. A CAS that read the word
//! before it was owned fails (the bit changed it), and one that reads it
//! owned revokes first. Proof sketch: `docs/chan.md`, "Owned claim words".
//!
//! # Costs
//! A revocation is a membarrier syscall, an IPI to every CPU that runs a
//! thread of the process (thousands of plain claims' worth; measured in
//! `docs/chan.md`). A word is only owned after `STREAK` claims in a row by
//! one thread, so that short-lived channels crossing threads never pay it,
//! and at most `MAX_BIASES` times in its life. Where membarrier is not
//! available, `light` is a full fence and owning gains nothing: words are
//! then never owned (loom and miri own them, to check the protocol).

use crate::asym_fence;
use crate::chan::backoff::Backoff;
use crate::loom::{
    AtomicBool, AtomicU64,
    Ordering::{self, AcqRel, Acquire, Relaxed, Release},
};

/// Bit of the word: a thread owns it.
pub(crate) const BIASED: u64 = 4;

const FREE: u64 = 0;
const REVOKING: u64 = u64::MAX;
const NEVER: u64 = u64::MAX;
const EPOCH_BITS: u32 = 8;
/// Ownerships a word may begin in its life (one `busy` flag each; a power
/// of two, so that `tag & (MAX_BIASES - 1)` is the epoch).
const MAX_BIASES: u64 = 4;
/// Claims by CAS in a row from one thread before it takes the word.
#[cfg(not(loom))]
const STREAK: u64 = 128;

// Under loom, never unless a model asks (`loom_own_words_after`): owned
// words multiply every model's interleavings, so the models of the
// ownership protocol turn it on and the others keep the CAS protocol.
// Loom runs a model's threads on the test's own thread, so a plain
// thread-local reaches all of them.
#[cfg(loom)]
std::thread_local! {
    // (The streak's count has 16 bits: 0xffff is never reached in a model.)
    static LOOM_STREAK: std::cell::Cell<u64> = const { std::cell::Cell::new(0xffff) };
    static LOOM_PLAIN_CLAIMS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Loom models: words are owned after `n` claims in a row by one thread.
/// Applies to models run on this thread. Reached by the models through
/// `crate::__private`.
#[cfg(loom)]
pub fn loom_own_words_after(n: u64) {
    LOOM_STREAK.with(|s| s.set(n));
}

/// Loom models: plain claims made on this test's thread so far, so that a
/// model of the ownership protocol can check that it ran it.
#[cfg(loom)]
pub fn loom_plain_claims() -> u64 {
    LOOM_PLAIN_CLAIMS.with(|c| c.get())
}

/// Whether this loom model runs the ownership protocol: when it does not,
/// the bookkeeping's atomics are skipped too (each is a point where loom
/// interleaves, and the CAS protocol's models are slow enough already).
#[cfg(loom)]
fn owning_modelled() -> bool {
    LOOM_STREAK.with(|s| s.get()) != 0xffff
}

#[inline(always)]
fn streak_to_own() -> u64 {
    #[cfg(loom)]
    return LOOM_STREAK.with(|s| s.get());
    #[cfg(not(loom))]
    STREAK
}

/// This thread's id: never `0`, below 2^48 (so a tag never equals `FREE`
/// or `REVOKING`, and a streak never equals `NEVER`).
#[inline(always)]
fn me() -> u64 {
    match ID.with(|id| id.get()) {
        0 => first_id(),
        v => v,
    }
}

#[cfg(not(loom))]
thread_local! {
    static ID: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}
#[cfg(loom)]
loom::thread_local! {
    static ID: std::cell::Cell<u64> = std::cell::Cell::new(0);
}

/// Gives this thread its id. Cold and out of line: nothing that can panic
/// on the claims' path (a possible unwind there made the compiler keep a
/// large message in one more place).
#[cold]
#[inline(never)]
fn first_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    // 2^48 threads would take centuries to start; past them, ids repeat
    // the last one, which then never owns a word (`bias` checks).
    let v = NEXT.fetch_add(1, Relaxed).min(LAST_ID);
    ID.with(|id| id.set(v));
    v
}

/// The id of every thread past the 2^48th: never an owner.
const LAST_ID: u64 = (1 << 48) - 1;

/// Whether owning a word can pay: the owner's fence must be the cheap one.
pub(crate) fn worth_owning() -> bool {
    if cfg!(any(loom, miri)) {
        return true;
    }
    asym_fence::register();
    asym_fence::light_is_cheap()
}

/// A claim word that one thread may own (module docs).
pub(crate) struct ClaimWord {
    word: AtomicU64,
    guess: AtomicU64,
    owner: AtomicU64,
    busy: [AtomicBool; MAX_BIASES as usize],
    epochs: AtomicU64,
    streak: AtomicU64,
}

/// This thread's plain claim in progress (I2), until [`Owned::leave`].
///
/// Ended by an explicit `leave`, not by `drop`, so that each fast path
/// shows where its plain claim ends: before the value moves, well before
/// any wake-up (a revoker may wait on it while holding a wait-list lock).
#[must_use = "a plain claim holds off revokers until `leave`"]
pub(crate) struct Owned<'a> {
    word: &'a AtomicU64,
    busy: &'a AtomicBool,
}

impl Owned<'_> {
    /// The word; only this thread writes it until the claim ends.
    #[inline(always)]
    pub(crate) fn word(&self) -> u64 {
        self.word.load(Relaxed)
    }

    /// The claim: a plain store (I3: nobody else writes the word now).
    #[inline(always)]
    pub(crate) fn set(&self, w: u64) {
        debug_assert!(w & BIASED != 0);
        self.word.store(w, Relaxed);
    }

    /// Ends the plain claim.
    #[inline(always)]
    pub(crate) fn leave(self) {
        // Release: a revoker that reads `false` (Acquire) sees the claim.
        self.busy.store(false, Release);
    }
}

impl ClaimWord {
    pub(crate) fn new() -> ClaimWord {
        ClaimWord {
            word: AtomicU64::new(0),
            guess: AtomicU64::new(0),
            owner: AtomicU64::new(FREE),
            busy: std::array::from_fn(|_| AtomicBool::new(false)),
            epochs: AtomicU64::new(0),
            streak: AtomicU64::new(0),
        }
    }

    /// The word itself, for models that move it as a stand-in ring (never
    /// through claims, so it is never owned).
    #[cfg(all(test, loom))]
    pub(crate) fn raw(&self) -> &AtomicU64 {
        &self.word
    }

    /// Whether a thread owns the word now.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_owned(&self) -> bool {
        self.word.load(Relaxed) & BIASED != 0
    }

    /// Whether the word will never be owned again.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn shared_for_good(&self) -> bool {
        self.streak.load(Relaxed) == NEVER
    }

    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> u64 {
        self.word.load(order)
    }

    /// Starts a plain claim if this thread owns the word.
    #[inline(always)]
    pub(crate) fn enter(&self) -> Option<Owned<'_>> {
        #[cfg(loom)]
        if !owning_modelled() {
            return None;
        }
        let tag = self.owner.load(Relaxed);
        // Not ours (FREE, REVOKING and other threads' tags differ in id;
        // FREE first: a shared word's claims skip the thread-local read).
        if tag == FREE || tag >> EPOCH_BITS != me() {
            return None;
        }
        let busy = &self.busy[(tag & (MAX_BIASES - 1)) as usize];
        debug_assert!(!busy.load(Relaxed), "plain claims do not nest");
        busy.store(true, Relaxed);
        asym_fence::light();
        if self.owner.load(Relaxed) == tag {
            #[cfg(loom)]
            LOOM_PLAIN_CLAIMS.with(|c| c.set(c.get() + 1));
            return Some(Owned {
                word: &self.word,
                busy,
            });
        }
        busy.store(false, Release);
        None
    }

    /// The value a claim by CAS expects the word to hold: what the last
    /// such claim left. Only a guess: the CAS checks it.
    #[inline(always)]
    pub(crate) fn guess(&self) -> u64 {
        self.guess.load(Relaxed)
    }

    /// Whether this thread may CAS the word expecting `w`: `w` is not owned,
    /// or owned by this thread. If owned by another, revokes that first and
    /// returns `false`: the caller loads the word again.
    #[inline(always)]
    pub(crate) fn writable(&self, w: u64) -> bool {
        w & BIASED == 0 || self.settle()
    }

    #[cold]
    #[inline(never)]
    fn settle(&self) -> bool {
        if self.owner.load(Relaxed) >> EPOCH_BITS == me() {
            return true;
        }
        self.revoke();
        false
    }

    /// A claim by CAS, from `cur` (checked by [`ClaimWord::writable`]) to
    /// `new`; `weak` may fail spuriously. `Err`: the word's value.
    #[inline(always)]
    pub(crate) fn cas(&self, cur: u64, new: u64, weak: bool) -> Result<(), u64> {
        let r = if weak {
            self.word.compare_exchange_weak(cur, new, Relaxed, Relaxed)
        } else {
            self.word.compare_exchange(cur, new, Relaxed, Relaxed)
        };
        if r.is_ok() {
            self.claimed(new);
        }
        r.map(drop)
    }

    /// After a claim by CAS moved the word to `new`: remembers it as the
    /// next guess, and counts the streak toward owning the word.
    #[inline(always)]
    fn claimed(&self, new: u64) {
        self.guess.store(new & !BIASED, Relaxed);
        #[cfg(loom)]
        if !owning_modelled() {
            return;
        }
        let s = self.streak.load(Relaxed);
        if s == NEVER {
            return;
        }
        let me = me();
        let n = if s >> 16 == me { (s & 0xffff) + 1 } else { 1 };
        if n < streak_to_own() {
            self.streak.store(me << 16 | n, Relaxed);
        } else {
            self.bias(me);
        }
    }

    /// Sets flag `bits` (raising `WAITING`, closing) from any thread;
    /// returns the old word.
    pub(crate) fn raise(&self, bits: u64, order: Ordering) -> u64 {
        self.rmw(bits, true, order)
    }

    /// Clears flag `bits` (lowering `WAITING`) from any thread; returns
    /// the old word.
    pub(crate) fn lower(&self, bits: u64, order: Ordering) -> u64 {
        self.rmw(bits, false, order)
    }

    /// A CAS loop that takes the word back from another thread's
    /// ownership before it writes (I3): a plain `fetch_or` could land
    /// between the owner's load and store, and be lost.
    fn rmw(&self, bits: u64, set: bool, order: Ordering) -> u64 {
        debug_assert!(bits & BIASED == 0);
        #[cfg(loom)]
        if !owning_modelled() {
            // Never owned in this model: the RMW the loop stands for,
            // without the loop's interleavings.
            return match set {
                true => self.word.fetch_or(bits, order),
                false => self.word.fetch_and(!bits, order),
            };
        }
        let mut w = self.word.load(Relaxed);
        loop {
            if !self.writable(w) {
                w = self.word.load(Relaxed);
                continue;
            }
            let new = if set { w | bits } else { w & !bits };
            // Strong: under loom a weak CAS may fail for no reason, and a
            // loop of them never ends.
            match self.word.compare_exchange(w, new, order, Relaxed) {
                Ok(_) => return w,
                Err(now) => w = now,
            }
        }
    }

    /// Takes the word for this thread, if an ownership is left to begin.
    #[cold]
    #[inline(never)]
    fn bias(&self, me: u64) {
        self.streak.store(me << 16, Relaxed); // count again, whatever happens
        if me == LAST_ID || self.owner.load(Relaxed) != FREE {
            return; // ours already (claims by CAS while owned), or being revoked
        }
        let epoch = self.epochs.fetch_add(1, Relaxed);
        if epoch >= MAX_BIASES || !worth_owning() {
            self.streak.store(NEVER, Relaxed);
            return;
        }
        if epoch + 1 == MAX_BIASES {
            self.streak.store(NEVER, Relaxed); // the last ownership
        }
        let tag = me << EPOCH_BITS | epoch;
        if self
            .owner
            .compare_exchange(FREE, tag, Relaxed, Relaxed)
            .is_err()
        {
            return;
        }
        let w = self.word.load(Relaxed);
        // Release: whoever reads BIASED (Acquire) reads the tag (I1).
        if w & BIASED != 0
            || self
                .word
                .compare_exchange(w, w | BIASED, Release, Relaxed)
                .is_err()
        {
            // A claim moved the word meanwhile: not ours after all. (A
            // revoker that took the tag meanwhile frees `owner` itself.)
            let _ = self.owner.compare_exchange(tag, FREE, Relaxed, Relaxed);
        }
    }

    /// Takes the word from its owner, from a thread that is not the owner
    /// (module docs, "Protocols"). Returns once the word is not owned by
    /// another thread (it may be ours: the caller checks again).
    #[cold]
    #[inline(never)]
    fn revoke(&self) {
        let mut backoff = Backoff::new();
        let tag = loop {
            // Acquire: pairs with `bias`'s Release, so the tag is visible.
            if self.word.load(Acquire) & BIASED == 0 {
                return;
            }
            let tag = self.owner.load(Acquire);
            if tag >> EPOCH_BITS == me() {
                return;
            }
            if tag != FREE
                && tag != REVOKING
                && self
                    .owner
                    .compare_exchange(tag, REVOKING, Acquire, Relaxed)
                    .is_ok()
            {
                break tag;
            }
            backoff.snooze(); // another revocation is under way
        };
        asym_fence::heavy();
        let busy = &self.busy[(tag & (MAX_BIASES - 1)) as usize];
        let mut backoff = Backoff::new();
        // Acquire: pairs with the end of the owner's plain claim.
        while busy.load(Acquire) {
            backoff.snooze();
        }
        self.word.fetch_and(!BIASED, AcqRel);
        // A swap, not a store: nobody else writes `owner` while it is
        // REVOKING, and loom checks that (`loom.rs`, `ReleaseStore`).
        self.owner.swap(FREE, Release);
    }
}
