//! Support for [`select!`](crate::select): a tiny per-thread random source and
//! the macro itself.
//!
//! # How `select!` works
//! The arm futures are built once, kept in a tuple on the awaiting task's
//! (pinned) state and polled in a fresh random order on every poll (a
//! Fisher–Yates shuffle driven by a thread-local xorshift), or in written
//! order with `biased;`. The first arm to return `Ready` wins; the others are
//! dropped right away. With an `else` arm, the arms are polled once and the
//! `else` body runs if none was ready (and none was refused by the budget:
//! "Cooperative budget" below).
//!
//! Each poll makes two passes, as Go's `selectgo` does. The first *probes*:
//! every arm is polled with the probe waker ([`probe_waker`]), with which a
//! channel `Recv`/`Send` that cannot complete returns `Pending` without
//! joining the channel's wait list. Only when no arm is ready (none refused,
//! and there is no `else`) does a second pass poll them all with the task's waker,
//! registering it on each channel. So a select that finds a ready arm, the
//! common case under load, takes no lock and leaves no waiter behind to
//! unlink. Other futures treat the probe waker as any waker: one they store
//! in the first pass is replaced in the second (every future keeps only the
//! waker of its latest poll) and wakes nothing meanwhile.
//!
//! # Cooperative budget
//! Once the task's budget (`task/coop/`) is spent, a `select!` yields
//! before it looks at its arms, `else` or not. The arms spend it as they
//! would anywhere (an arm may be a whole loop, or a child run inline); a
//! select that completes with an arm that spent nothing spends a unit
//! itself (`coop::spend_around`). When a pass over the arms finds none
//! ready and one of them was refused, the select yields
//! ([`yield_if_refused`]): it neither runs `else` (a refused arm only
//! looks "not ready", and a drain loop would stop early with messages
//! left) nor goes on to register.
//!
//! # Cancel safety
//! Dropping a losing arm must lose nothing: a channel `Recv` only takes a
//! message in the poll that returns `Ready`, so a losing recv arm consumed
//! nothing (and passes on any wake-up it received); a losing `Send` arm drops
//! only its own value, which never entered the channel. (Rendezvous sends are
//! the exception documented in `chan/mod.rs`.)

use crate::rand::{with_thread_rng, xorshift32};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, RawWaker, RawWakerVTable, Waker};

/// `select!`'s future around its poll function (module docs, "Cooperative
/// budget").
pub fn budgeted<F: Future>(select: F) -> Budgeted<F> {
    Budgeted { select }
}

/// Future of [`budgeted`].
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Budgeted<F> {
    select: F,
}

impl<F: Future> Future for Budgeted<F> {
    type Output = F::Output;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> std::task::Poll<F::Output> {
        // SAFETY: `select` is structurally pinned: never moved out.
        let select = unsafe { self.map_unchecked_mut(|b| &mut b.select) };
        crate::task::coop::spend_around(
            cx,
            #[inline(always)]
            |cx| select.poll(cx),
        )
    }
}

/// After a pass that found no arm ready: whether the budget refused one of
/// them (module docs). If so the select yields: it wakes its task itself,
/// as a refusal in the probing pass woke only the probe waker.
#[doc(hidden)]
#[inline]
pub fn yield_if_refused(cx: &Context<'_>) -> bool {
    let refused = crate::task::coop::refused_in_poll();
    if refused {
        cx.waker().wake_by_ref();
    }
    refused
}

/// What the probe waker points at: its address tells the probe waker from
/// every other (`will_wake` compares the data pointer and the vtable).
static PROBE_TAG: u8 = 0;

static PROBE_VTABLE: RawWakerVTable =
    RawWakerVTable::new(probe_clone, probe_nothing, probe_nothing, probe_nothing);

fn probe_clone(_: *const ()) -> RawWaker {
    RawWaker::new(&PROBE_TAG as *const u8 as *const (), &PROBE_VTABLE)
}

fn probe_nothing(_: *const ()) {}

// SAFETY: the vtable's functions ignore the data pointer; clone returns the
// same waker, and wake and drop do nothing.
static PROBE: Waker = unsafe {
    Waker::from_raw(RawWaker::new(
        &PROBE_TAG as *const u8 as *const (),
        &PROBE_VTABLE,
    ))
};

/// The waker of a `select!` poll's first pass (see the module docs): it
/// wakes nothing, and a channel operation polled with it that cannot
/// complete returns `Pending` without registering.
///
/// The probe travels with the `Context`, not with the thread: a future that
/// polls others with contexts of its own (a `JoinHandle` running its task
/// inline, a large `join_all` giving each future its own waker) polls them
/// for real, so each registers where it waits. (A thread-local flag would
/// reach those too: they would return `Pending` having registered nowhere,
/// never be polled by the second pass, and sleep for good;
/// `tests/chan_runtime.rs`.)
#[doc(hidden)]
pub fn probe_waker() -> &'static Waker {
    &PROBE
}

/// Whether `cx` is a `select!` first pass's: a channel operation that cannot
/// complete then returns `Pending` without joining the wait list.
#[inline]
pub(crate) fn probing(cx: &Context<'_>) -> bool {
    cx.waker().will_wake(&PROBE)
}

/// Shuffles `order` in place (Fisher–Yates over `xorshift32`, `rand.rs`;
/// not for cryptography), reading and writing the thread's random state
/// once.
#[doc(hidden)]
pub fn shuffle(order: &mut [usize]) {
    with_thread_rng(|mut x| {
        for i in (1..order.len()).rev() {
            x = xorshift32(x);
            // A number in 0..=i by multiply-shift (no division).
            let j = ((x as u64 * (i as u64 + 1)) >> 32) as usize;
            order.swap(i, j);
        }
        (x, ())
    })
}

/// Pin projection of a pinned tuple into pinned fields, so that the code
/// `select!` expands to in the user's crate needs no `unsafe`.
#[doc(hidden)]
pub trait Project<'a> {
    type Fields;
    fn project(self) -> Self::Fields;
}

macro_rules! project_tuple {
    ($($t:ident $i:tt),+) => {
        impl<'a, $($t: 'a),+> Project<'a> for Pin<&'a mut ($($t,)+)> {
            type Fields = ($(Pin<&'a mut $t>,)+);
            fn project(self) -> Self::Fields {
                // Structural pinning: tuples have no `Drop` that could move a
                // field, and only pinned references to the fields are handed out.
                // SAFETY: the tuple is pinned, so its fields never move again.
                unsafe {
                    let t = self.get_unchecked_mut();
                    ($(Pin::new_unchecked(&mut t.$i),)+)
                }
            }
        }
    };
}

project_tuple!(T0 0);
project_tuple!(T0 0, T1 1);
project_tuple!(T0 0, T1 1, T2 2);
project_tuple!(T0 0, T1 1, T2 2, T3 3);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25, T26 26);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25, T26 26, T27 27);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25, T26 26, T27 27, T28 28);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25, T26 26, T27 27, T28 28, T29 29);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25, T26 26, T27 27, T28 28, T29 29, T30 30);
project_tuple!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14, T15 15, T16 16, T17 17, T18 18, T19 19, T20 20, T21 21, T22 22, T23 23, T24 24, T25 25, T26 26, T27 27, T28 28, T29 29, T30 30, T31 31);

/// Waits on several channel operations (or any futures) at once and runs the
/// arm of the first to complete.
///
/// ```ignore
/// spindle::select! {
///     v = rx1.recv() => println!("rx1: {v:?}"),
///     r = tx2.send(7) => println!("sent: {r:?}"),
///     else => println!("nothing ready"),
/// }
/// ```
///
/// - Arms are `pattern = future => body`; the pattern must be irrefutable
///   (bind the whole output and `match` on it in the body).
/// - `else => body` (optional) makes the select non-blocking: it runs when
///   no arm is ready. A select whose task has spent its cooperative budget
///   yields first (`task::coop`), `else` or not, rather than take a
///   refused arm for one not ready.
/// - The ready arm is chosen at random among those ready, so that no arm
///   starves; start with `biased;` to poll the arms in written order.
/// - Arms that lose are dropped; channel receives and sends are cancel-safe,
///   so a losing arm neither consumes nor drops a channel message.
/// - Must be used inside an `async` context (it awaits). At most 32 arms;
///   a select with neither an arm nor `else` does not compile:
///
/// ```compile_fail
/// # async fn f() {
/// spindle::select! {}
/// # }
/// ```
#[macro_export]
macro_rules! select {
    (biased; $($t:tt)*) => {
        $crate::__select_start!((true) $($t)*)
    };
    ($($t:tt)*) => {
        $crate::__select_start!((false) $($t)*)
    };
}

/// Starts the arm parser with the names available for up to 32 arms.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_start {
    (($bi:tt) $($t:tt)*) => {
        $crate::__select_parse!(@($bi) @[] @[]
            @avail[(0 _0) (1 _1) (2 _2) (3 _3) (4 _4) (5 _5) (6 _6) (7 _7)
                   (8 _8) (9 _9) (10 _10) (11 _11) (12 _12) (13 _13) (14 _14) (15 _15)
                   (16 _16) (17 _17) (18 _18) (19 _19) (20 _20) (21 _21) (22 _22) (23 _23)
                   (24 _24) (25 _25) (26 _26) (27 _27) (28 _28) (29 _29) (30 _30) (31 _31)]
            $($t)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_parse {
    // All arms parsed.
    (@($bi:tt) @[$($arms:tt)*] @[$($el:tt)*] @avail[$($av:tt)*]) => {
        $crate::__select_gen!(@($bi) @[$($arms)*] @[$($el)*])
    };
    // `else` arm.
    (@($bi:tt) @[$($arms:tt)*] @[] @avail[$($av:tt)*]
        else => $body:block, $($rest:tt)*) => {
        $crate::__select_parse!(@($bi) @[$($arms)*] @[$body] @avail[$($av)*] $($rest)*)
    };
    (@($bi:tt) @[$($arms:tt)*] @[] @avail[$($av:tt)*]
        else => $body:block $($rest:tt)*) => {
        $crate::__select_parse!(@($bi) @[$($arms)*] @[$body] @avail[$($av)*] $($rest)*)
    };
    (@($bi:tt) @[$($arms:tt)*] @[] @avail[$($av:tt)*]
        else => $body:expr $(, $($rest:tt)*)?) => {
        $crate::__select_parse!(@($bi) @[$($arms)*] @[$body] @avail[$($av)*] $($($rest)*)?)
    };
    // A 33rd arm: no name left for it.
    (@($bi:tt) @[$($arms:tt)*] @[$($el:tt)*] @avail[] $($rest:tt)+) => {
        ::core::compile_error!("select! takes at most 32 arms")
    };
    // An arm whose body is a block (comma optional).
    (@($bi:tt) @[$($arms:tt)*] @[$($el:tt)*] @avail[($i:tt $v:ident) $($av:tt)*]
        $p:pat = $f:expr => $body:block, $($rest:tt)*) => {
        $crate::__select_parse!(@($bi) @[$($arms)* (($i $v) ($p) ($f) ($body))] @[$($el)*]
            @avail[$($av)*] $($rest)*)
    };
    (@($bi:tt) @[$($arms:tt)*] @[$($el:tt)*] @avail[($i:tt $v:ident) $($av:tt)*]
        $p:pat = $f:expr => $body:block $($rest:tt)*) => {
        $crate::__select_parse!(@($bi) @[$($arms)* (($i $v) ($p) ($f) ($body))] @[$($el)*]
            @avail[$($av)*] $($rest)*)
    };
    // An arm whose body is an expression (comma needed unless last).
    (@($bi:tt) @[$($arms:tt)*] @[$($el:tt)*] @avail[($i:tt $v:ident) $($av:tt)*]
        $p:pat = $f:expr => $body:expr $(, $($rest:tt)*)?) => {
        $crate::__select_parse!(@($bi) @[$($arms)* (($i $v) ($p) ($f) ($body))] @[$($el)*]
            @avail[$($av)*] $($($rest)*)?)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_gen {
    (@($bi:tt) @[$( (($i:tt $v:ident) ($p:pat) ($f:expr) ($body:expr)) )+] @[$($el:tt)*]) => {{
        #[allow(non_camel_case_types, dead_code)]
        enum __SelectOut<$($v,)+> {
            $($v($v),)+
            __Else,
        }
        // The arm futures live only inside this block: the losing ones are
        // dropped (and their borrows end) before the winning body runs.
        let __out = {
            let mut __futs = ::core::pin::pin!(( $( $f, )+ ));
            $crate::__private::budgeted(::core::future::poll_fn(|__cx| {
                let mut __order = [$($i),+];
                if !$bi {
                    $crate::__private::shuffle(&mut __order);
                }
                // First pass: probe every arm without registering.
                let __probed = (|| {
                    let __cx = &mut ::core::task::Context::from_waker(
                        $crate::__private::probe_waker(),
                    );
                    for __k in __order {
                        match __k {
                            $(
                                $i => {
                                    let __fut = $crate::__private::Project::project(
                                        __futs.as_mut(),
                                    ).$i;
                                    if let ::core::task::Poll::Ready(__o) =
                                        ::core::future::Future::poll(__fut, __cx)
                                    {
                                        return ::core::option::Option::Some(
                                            __SelectOut::$v(__o),
                                        );
                                    }
                                }
                            )+
                            _ => ::core::unreachable!(),
                        }
                    }
                    ::core::option::Option::None
                })();
                if let ::core::option::Option::Some(__o) = __probed {
                    return ::core::task::Poll::Ready(__o);
                }
                if $crate::__private::yield_if_refused(__cx) {
                    return ::core::task::Poll::Pending;
                }
                if $crate::__select_has_else!($($el)*) {
                    return ::core::task::Poll::Ready(__SelectOut::__Else);
                }
                // Second pass: poll for real, registering on every channel.
                for __k in __order {
                    match __k {
                        $(
                            $i => {
                                let __fut =
                                    $crate::__private::Project::project(__futs.as_mut()).$i;
                                if let ::core::task::Poll::Ready(__o) =
                                    ::core::future::Future::poll(__fut, __cx)
                                {
                                    return ::core::task::Poll::Ready(__SelectOut::$v(__o));
                                }
                            }
                        )+
                        _ => ::core::unreachable!(),
                    }
                }
                ::core::task::Poll::Pending
            }))
            .await
        };
        match __out {
            $( __SelectOut::$v($p) => $body, )+
            __SelectOut::__Else => $crate::__select_else_body!($($el)*),
        }
    }};
    (@($bi:tt) @[] @[$el:expr]) => {{
        $el
    }};
    (@($bi:tt) @[] @[]) => {
        ::core::compile_error!("select! needs at least one arm, or an `else` arm")
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_has_else {
    () => {
        false
    };
    ($($el:tt)+) => {
        true
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_else_body {
    () => {
        ::core::unreachable!()
    };
    ($el:expr) => {
        $el
    };
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::shuffle;

    #[test]
    #[cfg_attr(miri, ignore = "statistical, and no unsafe code to check")]
    fn shuffle_draws_every_order_about_equally() {
        // 24 orders of 4 arms; each expected 1/24 of the draws. The bound,
        // 30 %, is over 13 standard deviations at this size; the
        // classic biased shuffle (swap with any index) is off by up to 41 %,
        // and swapping with indices below `i` only never draws 6 orders.
        let draws = 48_000;
        let mut seen = std::collections::HashMap::new();
        for _ in 0..draws {
            let mut order = [0, 1, 2, 3];
            shuffle(&mut order);
            *seen.entry(order).or_insert(0u32) += 1;
        }
        assert_eq!(seen.len(), 24, "some orders never drawn: {seen:?}");
        let expected = draws as f64 / 24.0;
        for (order, n) in seen {
            let off = (n as f64 - expected).abs() / expected;
            assert!(
                off < 0.3,
                "order {order:?} drawn {n} times, expected ~{expected}"
            );
        }
    }
}
