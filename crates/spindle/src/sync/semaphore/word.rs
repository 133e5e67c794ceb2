//! The semaphore's atomic word: `free << SHIFT | WAITING | CLOSED`.
//!
//! `free` is at most `MAX_PERMITS` (`usize::MAX >> 3`), so it always fits
//! above the two flag bits.

/// The semaphore is closed; set once, never cleared.
pub(super) const CLOSED: usize = 0b01;
/// The queue of waiters is not empty.
pub(super) const WAITING: usize = 0b10;
const SHIFT: u32 = 2;
/// A semaphore of one permit (a mutex's) whose permit is free: open,
/// nobody queued.
pub(super) const SOLE_FREE: usize = 1 << SHIFT;
/// A semaphore of one permit whose permit is held: open, nobody queued.
pub(super) const SOLE_HELD: usize = 0;

pub(super) fn free(word: usize) -> usize {
    word >> SHIFT
}

pub(super) fn closed(word: usize) -> bool {
    word & CLOSED != 0
}

pub(super) fn waiting(word: usize) -> bool {
    word & WAITING != 0
}

/// `word` with its free count replaced by `free`, its flags kept.
pub(super) fn with_free(word: usize, free: usize) -> usize {
    free << SHIFT | (word & (CLOSED | WAITING))
}
