//! The ring's batch operations: many values moved with one publish (or
//! release) store, from and into a `Vec`, copied from and to slices
//! (`T: Copy`), or written and read in place ([`Producer::poke`],
//! [`Consumer::peek_runs`]). A batch lies in at most two contiguous runs of
//! the buffer, the second when the positions wrap ([`runs`]).
//!
//! Under loom the slices are unavailable (loom cells cannot be viewed as one
//! slice); the copying batch operations then go slot by slot through the
//! same reserve / publish code.

use super::{runs, Consumer, Producer};

impl<T> Producer<T> {
    /// Moves values out of the front of `items` while there is room; one
    /// publish for the run. Returns how many moved.
    pub(crate) fn push_from(&mut self, items: &mut Vec<T>) -> usize {
        let n = self.vacant().min(items.len());
        for (i, v) in items.drain(..n).enumerate() {
            let slot = self.ring.slot(self.tail + i as u64);
            // SAFETY: position tail+i is inside the free run counted by
            // `vacant` (Acquire on head); only the producer writes it.
            slot.with_mut(|p| unsafe { (*p).write(v) });
        }
        self.publish(n);
        n
    }
}

impl<T: Copy> Producer<T> {
    /// Copies as much of `src` as fits (two runs at most), publishing it
    /// with one store. Returns how many were copied.
    pub(crate) fn push_slice(&mut self, src: &[T]) -> usize {
        let n = self.vacant().min(src.len());
        if n == 0 {
            return 0;
        }
        let (start, first, second) = runs(self.tail, n, self.ring.cap);
        #[cfg(not(loom))]
        {
            let base = self.ring.base();
            // SAFETY: both runs are free slots (Acquire on head) owned by the
            // producer until publish; the source is a distinct borrow.
            unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr(), base.add(start).cast::<T>(), first);
                std::ptr::copy_nonoverlapping(src.as_ptr().add(first), base.cast::<T>(), second);
            }
        }
        #[cfg(loom)]
        {
            let _ = (start, first, second);
            for (i, &v) in src[..n].iter().enumerate() {
                self.ring.slot(self.tail + i as u64).with_mut(|p| {
                    // SAFETY: as above, slot by slot.
                    unsafe { (*p).write(v) }
                });
            }
        }
        self.publish(n);
        n
    }
}

#[cfg(not(loom))]
impl<T: Copy + Default> Producer<T> {
    /// Reserves up to `max` free slots for writing in place and returns how
    /// many; [`Producer::poked`] exposes them, [`Producer::publish_poked`]
    /// sends a prefix. Free slots never written before are filled with
    /// `T::default()` first (once per slot in the ring's life), so every
    /// reserved slot holds a valid value.
    pub(crate) fn poke(&mut self, max: usize) -> usize {
        let n = self.vacant().min(max);
        let (start, first, _) = runs(self.tail, n, self.ring.cap);
        let end = start + first;
        if end > self.init_hwm {
            let base = self.ring.base();
            for i in self.init_hwm..end {
                // SAFETY: slot i >= init_hwm was never written: a free slot in
                // the buffer, owned by the producer.
                unsafe { (*base.add(i)).write(T::default()) };
            }
            self.init_hwm = end;
        }
        self.reserved = n;
        n
    }

    /// The slots of the last [`Producer::poke`], as two runs (the second
    /// non-empty only when the positions wrap).
    pub(crate) fn poked(&mut self) -> (&mut [T], &mut [T]) {
        let (start, first, second) = runs(self.tail, self.reserved, self.ring.cap);
        let base = self.ring.base();
        // Both runs are free slots (reserved by `poke` from an Acquire load
        // of head; the consumer cannot take them back), owned by the
        // producer until it publishes, disjoint, inside the buffer. Every
        // slot below `init_hwm` holds a valid T (module invariant, T: Copy);
        // the first run ends at or below it (ensured by `poke`) and the
        // second starts at index 0, below the first.
        // SAFETY: as just argued; the borrows end with `&mut self`, before any publish.
        unsafe {
            (
                std::slice::from_raw_parts_mut(base.add(start).cast::<T>(), first),
                std::slice::from_raw_parts_mut(base.cast::<T>(), second),
            )
        }
    }

    /// Publishes the first `n` slots of the last [`Producer::poke`].
    pub(crate) fn publish_poked(&mut self, n: usize) {
        assert!(
            n <= self.reserved,
            "committed more slots than were reserved"
        );
        self.reserved = 0;
        self.publish(n);
    }
}

impl<T> Consumer<T> {
    /// Moves up to `max` ready values to the end of `out`, releasing them
    /// with one store. Returns how many moved.
    pub(crate) fn pop_into(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        let n = self.avail().min(max);
        out.reserve(n);
        for i in 0..n as u64 {
            out.push(self.ring.slot(self.head + i).with(|p| {
                // SAFETY: ready positions (Acquire on tail), moved out once;
                // head moves past them below.
                unsafe { (*p).assume_init_read() }
            }));
        }
        if n > 0 {
            self.advance_head(n);
        }
        n
    }
}

impl<T: Copy> Consumer<T> {
    /// Copies up to `dst.len()` ready values into `dst` and releases them
    /// with one store. Returns how many.
    pub(crate) fn pop_slice(&mut self, dst: &mut [T]) -> usize {
        let n = self.avail().min(dst.len());
        if n == 0 {
            return 0;
        }
        let (start, first, second) = runs(self.head, n, self.ring.cap);
        #[cfg(not(loom))]
        {
            let base = self.ring.base();
            // SAFETY: both runs are ready slots (Acquire on tail) owned by the
            // consumer until it releases them; `dst` is a distinct borrow.
            unsafe {
                std::ptr::copy_nonoverlapping(base.add(start).cast::<T>(), dst.as_mut_ptr(), first);
                std::ptr::copy_nonoverlapping(
                    base.cast::<T>(),
                    dst.as_mut_ptr().add(first),
                    second,
                );
            }
        }
        #[cfg(loom)]
        {
            let _ = (start, first, second);
            for (i, d) in dst[..n].iter_mut().enumerate() {
                *d = self.ring.slot(self.head + i as u64).with(|p| {
                    // SAFETY: as above, slot by slot.
                    unsafe { (*p).assume_init_read() }
                });
            }
        }
        self.advance_head(n);
        n
    }
}

#[cfg(not(loom))]
impl<T> Consumer<T> {
    /// Up to `max` ready values as two runs (the second non-empty only when
    /// the positions wrap), read in place. Release them with
    /// [`Consumer::release`].
    pub(crate) fn peek_runs(&mut self, max: usize) -> (&[T], &[T]) {
        let n = self.avail().min(max);
        let (start, first, second) = runs(self.head, n, self.ring.cap);
        let base = self.ring.base();
        // SAFETY: both runs are ready slots (Acquire on tail), initialised and
        // untouched while `&mut self` is borrowed (only the consumer releases).
        unsafe {
            (
                std::slice::from_raw_parts(base.add(start).cast::<T>(), first),
                std::slice::from_raw_parts(base.cast::<T>(), second),
            )
        }
    }
}
