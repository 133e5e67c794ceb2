//! Unit tests of the task slab: size classes, reuse across threads through
//! the depot, memory that settles, huge-page regions.

use super::*;
use std::collections::HashSet;

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size, 8).unwrap()
}

/// Frees every block into `mags`.
///
/// # Safety
/// Each block came from an allocation of `class` through `mags`'s
/// depot and is not used afterwards.
unsafe fn free_all(
    mags: &mut Magazines,
    class: usize,
    blocks: impl IntoIterator<Item = NonNull<u8>>,
) {
    for b in blocks {
        // SAFETY: the caller's contract.
        unsafe { mags.free(class, b) };
    }
}

/// The class of an 8-aligned layout of `size` bytes.
fn class(size: usize) -> usize {
    class_of(layout(size)).unwrap()
}

#[test]
fn classes_round_up_and_large_or_overaligned_blocks_bypass() {
    assert_eq!(class_of(layout(1)), Some(0));
    assert_eq!(class_of(layout(8)), Some(0));
    assert_eq!(class_of(layout(9)), Some(1));
    assert_eq!(class_size(class(72)), 72);
    assert_eq!(class_align(class(72)), 8);
    assert_eq!(class_align(class(80)), 16);
    // A 16-aligned layout rounds up to a 16-aligned class.
    let aligned = class_of(Layout::from_size_align(72, 16).unwrap()).unwrap();
    assert_eq!((class_size(aligned), class_align(aligned)), (80, 16));
    assert_eq!(
        class_of(Layout::from_size_align(512, 16).unwrap()),
        Some(63)
    );
    assert_eq!(class_of(layout(513)), None);
    assert_eq!(class_of(Layout::from_size_align(64, 64).unwrap()), None);
    assert_eq!(class_of(layout(0)), None);
}

#[test]
fn blocks_are_cut_without_gaps_and_reused_newest_first() {
    let depot = Depot::new();
    let mut mags = Magazines::new(&depot);
    let c72 = class(72);
    let a = mags.alloc(c72);
    let b = mags.alloc(c72);
    assert_eq!(b.as_ptr().addr() - a.as_ptr().addr(), 72);
    assert_eq!(a.as_ptr().addr() % ALIGN, 0);
    // SAFETY: a and b came from this depot, class c72, and are not used again.
    unsafe { free_all(&mut mags, c72, [a, b]) };
    assert_eq!(mags.alloc(c72), b);
    assert_eq!(mags.alloc(c72), a);
    // SAFETY: as above.
    unsafe { free_all(&mut mags, c72, [a, b]) };
}

#[test]
fn a_sixteen_byte_class_cut_after_an_eight_byte_one_is_aligned() {
    let depot = Depot::new();
    let mut mags = Magazines::new(&depot);
    let (c72, c80) = (class(72), class(80));
    let a = mags.alloc(c72); // leaves the bump pointer 8 past a 16-byte boundary
    let b = mags.alloc(c80);
    assert_eq!(b.as_ptr().addr() % 16, 0);
    assert_eq!(b.as_ptr().addr() - a.as_ptr().addr(), 80, "8 bytes skipped");
    let c = mags.alloc(c72);
    assert_eq!(c.as_ptr().addr() - b.as_ptr().addr(), 80, "none skipped");
    // SAFETY: each from this depot, in its class, not used again.
    unsafe {
        free_all(&mut mags, c72, [a, c]);
        free_all(&mut mags, c80, [b]);
    }
}

#[test]
fn blocks_are_distinct_and_writable_across_regions() {
    let depot = Depot::new();
    let mut mags = Magazines::new(&depot);
    let n = if cfg!(miri) {
        300
    } else {
        3 * SMALL_REGION / 112
    };
    let c112 = class(112);
    let blocks: Vec<_> = (0..n).map(|_| mags.alloc(c112)).collect();
    for (i, b) in blocks.iter().enumerate() {
        // SAFETY: each block is 112 bytes, ours until freed.
        unsafe { ptr::write_bytes(b.as_ptr(), i as u8, 112) };
    }
    for (i, b) in blocks.iter().enumerate() {
        // SAFETY: as above; the last byte was written by this block's fill.
        assert_eq!(unsafe { b.as_ptr().add(111).read() }, i as u8);
    }
    let distinct: HashSet<_> = blocks.iter().map(|b| b.as_ptr()).collect();
    assert_eq!(distinct.len(), n);
    // SAFETY: from this depot, class c112, not used again.
    unsafe { free_all(&mut mags, c112, blocks) };
}

#[test]
fn blocks_freed_on_another_thread_come_back_through_the_depot() {
    let depot = Depot::new();
    let mut producer = Magazines::new(&depot);
    let c48 = class(48);
    let blocks: Vec<_> = (0..4 * BATCH).map(|_| producer.alloc(c48)).collect();
    let cut: HashSet<usize> = blocks.iter().map(|b| b.as_ptr().addr()).collect();
    struct Handed(Vec<NonNull<u8>>);
    // SAFETY: the blocks are free memory handed to the consumer whole.
    unsafe impl Send for Handed {}
    let handed = Handed(blocks);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut consumer = Magazines::new(&depot);
            // SAFETY: cut above from this depot, class c48, and the
            // producer never touches them again.
            unsafe { free_all(&mut consumer, c48, { handed }.0) };
            // The consumer keeps two stacks; the rest went to the depot.
            assert_eq!(lock_std(&depot.full[c48]).len(), 2);
            assert_eq!(depot.stocked[c48].load(Relaxed), 2);
        });
    });
    // All four stacks are in the depot now; the producer's next
    // allocations reuse them instead of cutting new blocks.
    let again: Vec<_> = (0..4 * BATCH).map(|_| producer.alloc(c48)).collect();
    assert!(again.iter().all(|b| cut.contains(&b.as_ptr().addr())));
    // SAFETY: from this depot, class c48, not used again.
    unsafe { free_all(&mut producer, c48, again) };
}

#[test]
fn a_producer_and_a_consumer_stop_taking_memory_once_they_settle() {
    // One side allocates every block, the other frees them all, round
    // after round: the consumer keeps at most two stacks and passes the
    // rest on, so after the second round the producer takes everything
    // it needs from the depot and no region is added.
    let depot = Depot::new();
    let mut producer = Magazines::new(&depot);
    let mut consumer = Magazines::new(&depot);
    let n = if cfg!(miri) {
        3 * BATCH
    } else {
        10 * SMALL_REGION / 80
    };
    let mut taken = Vec::new();
    for _ in 0..6 {
        let blocks: Vec<_> = (0..n).map(|_| producer.alloc(class(80))).collect();
        // SAFETY: from this depot, class(80), not used again.
        unsafe { free_all(&mut consumer, class(80), blocks) };
        taken.push(lock_std(&depot.owned).len());
    }
    assert!(
        taken[1..].iter().all(|&t| t == taken[1]),
        "regions taken per round: {taken:?}"
    );
}

#[test]
fn an_exiting_thread_leaves_its_tail_and_the_unowned_paths_use_the_depot() {
    let depot = Depot::new();
    let mut first = Magazines::new(&depot);
    let a = first.alloc(0);
    drop(first);
    // The next thread cuts on from where the first stopped.
    let mut second = Magazines::new(&depot);
    let b = second.alloc(0);
    assert_eq!(b.as_ptr().addr() - a.as_ptr().addr(), 8);
    // SAFETY: a came from this depot, class 0, and is not used again.
    unsafe { depot.free_unowned(0, a) };
    assert_eq!(depot.alloc_unowned(0), a);
    // With the depot empty, an unowned allocation is a global one.
    let c = depot.alloc_unowned(0);
    assert_ne!(c, a);
    // SAFETY: each from this depot, class 0, not used again.
    unsafe { free_all(&mut second, 0, [a, b, c]) };
}

#[test]
fn regions_become_aligned_huge_pages_once_the_slab_is_large() {
    let depot = Depot::new();
    let mut mags = Magazines::new(&depot);
    let c512 = class(512);
    // Cut until the first huge region is in use: past `HUGE_AFTER`.
    let mut blocks = Vec::new();
    while depot.regions.load(Relaxed) <= HUGE_AFTER {
        blocks.push(mags.alloc(c512));
    }
    let small = HUGE_AFTER / SMALL_REGION;
    let owned = lock_std(&depot.owned);
    assert_eq!(owned.len(), small + 1);
    assert!(owned[..small].iter().all(|(_, l)| l.size() == SMALL_REGION));
    let (start, layout) = &owned[small];
    assert_eq!(layout.size(), HUGE_REGION);
    assert_eq!(start.0.as_ptr().addr() % HUGE_REGION, 0);
    // The block cut last is the huge region's first.
    assert_eq!(blocks.last().unwrap().as_ptr(), start.0.as_ptr());
    drop(owned);
    // SAFETY: from this depot, class c512, not used again.
    unsafe { free_all(&mut mags, c512, blocks) };
}

#[test]
fn after_a_slow_huge_page_regions_stay_plain_for_a_while() {
    let depot = Depot::new();
    // Past the small regions, pretending the first huge page was slow.
    while depot.regions.load(Relaxed) < HUGE_AFTER {
        depot.region();
    }
    let huge = |d: &Depot| {
        let owned = lock_std(&d.owned);
        let (start, layout) = owned.last().expect("a region");
        (layout.size(), layout.align(), start.0.as_ptr().addr())
    };
    depot.region();
    assert_eq!(huge(&depot).1, HUGE_REGION, "huge pages first");
    depot.saw_slow_huge_page(depot.regions.load(Relaxed) - HUGE_REGION);
    for _ in 0..HUGE_BACKOFF / HUGE_REGION {
        depot.region();
        let (size, align, _) = huge(&depot);
        assert_eq!(
            (size, align),
            (HUGE_REGION, ALIGN),
            "plain while backing off"
        );
    }
    depot.region();
    let (size, align, start) = huge(&depot);
    assert_eq!(
        (size, align),
        (HUGE_REGION, HUGE_REGION),
        "huge pages again"
    );
    assert_eq!(start % HUGE_REGION, 0);
}
