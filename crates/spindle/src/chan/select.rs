//! Support for [`select!`](crate::select): a tiny per-thread random source and
//! the macro itself.
//!
//! # How `select!` works
//! The arm futures are built once, kept in a tuple on the awaiting task's
//! (pinned) state and polled in a fresh random order on every poll (a
//! Fisher–Yates shuffle driven by a thread-local xorshift), or in written
//! order with `biased;`. The first arm to return `Ready` wins; the others are
//! dropped right away. With an `else` arm, the arms are polled once and the
//! `else` body runs if none was ready.
//!
//! # Cancel safety
//! Dropping a losing arm must lose nothing: a channel `Recv` only takes a
//! message in the poll that returns `Ready`, so a losing recv arm consumed
//! nothing (and passes on any wake-up it received); a losing `Send` arm drops
//! only its own value, which never entered the channel. (Rendezvous sends are
//! the exception documented in `chan/mod.rs`.)

use std::cell::Cell;

thread_local! {
    static RNG: Cell<u32> = Cell::new(seed());
}

fn seed() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(&h as *const _ as usize);
    (h.finish() as u32) | 1
}

/// A pseudo-random number in `0..n` (xorshift32; not for cryptography).
#[doc(hidden)]
pub fn rand_below(n: usize) -> usize {
    RNG.with(|c| {
        let mut x = c.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c.set(x);
        ((x as u64 * n as u64) >> 32) as usize
    })
}

/// Shuffles `order` in place (Fisher–Yates).
#[doc(hidden)]
pub fn shuffle(order: &mut [usize]) {
    for i in (1..order.len()).rev() {
        let j = rand_below(i + 1);
        order.swap(i, j);
    }
}

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
/// - `else => body` (optional) makes the select non-blocking.
/// - The ready arm is chosen at random among those ready, so that no arm
///   starves; start with `biased;` to poll the arms in written order.
/// - Arms that lose are dropped; channel receives and sends are cancel-safe,
///   so a losing arm neither consumes nor drops a channel message.
/// - Must be used inside an `async` context (it awaits). At most 32 arms.
#[macro_export]
macro_rules! select {
    (biased; $($t:tt)*) => {
        $crate::__select_parse!(@(true) @[] @[]
            @avail[(0 _0) (1 _1) (2 _2) (3 _3) (4 _4) (5 _5) (6 _6) (7 _7)
                   (8 _8) (9 _9) (10 _10) (11 _11) (12 _12) (13 _13) (14 _14) (15 _15)
                   (16 _16) (17 _17) (18 _18) (19 _19) (20 _20) (21 _21) (22 _22) (23 _23)
                   (24 _24) (25 _25) (26 _26) (27 _27) (28 _28) (29 _29) (30 _30) (31 _31)]
            $($t)*)
    };
    ($($t:tt)*) => {
        $crate::__select_parse!(@(false) @[] @[]
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
        let mut __futs = ( $( $f, )+ );
        let __out = {
            let __futs = &mut __futs;
            ::core::future::poll_fn(move |__cx| {
                let mut __order = [$($i),+];
                if !$bi {
                    $crate::chan::select::shuffle(&mut __order);
                }
                for __k in __order {
                    match __k {
                        $(
                            $i => {
                                // SAFETY: `__futs` lives in this (pinned)
                                // async frame, is only reached through this
                                // borrow and is never moved before it is
                                // dropped in place at the end of the block.
                                #[allow(unused_unsafe)]
                                let __fut = unsafe {
                                    ::core::pin::Pin::new_unchecked(&mut __futs.$i)
                                };
                                if let ::core::task::Poll::Ready(__o) =
                                    ::core::future::Future::poll(__fut, __cx)
                                {
                                    return ::core::task::Poll::Ready(__SelectOut::$v(__o));
                                }
                            }
                        )+
                        _ => unreachable!(),
                    }
                }
                if $crate::__select_has_else!($($el)*) {
                    return ::core::task::Poll::Ready(__SelectOut::__Else);
                }
                ::core::task::Poll::Pending
            })
            .await
        };
        drop(__futs);
        match __out {
            $( __SelectOut::$v($p) => $body, )+
            __SelectOut::__Else => $crate::__select_else_body!($($el)*),
        }
    }};
    (@($bi:tt) @[] @[$el:expr]) => {{
        $el
    }};
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
        unreachable!()
    };
    ($el:expr) => {
        $el
    };
}
