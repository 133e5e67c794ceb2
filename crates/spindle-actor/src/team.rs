//! Teams: several actors sharing one spindle task (so one worker at a
//! time), polled one by one when woken.
//!
//! # Invariants
//! - Each member has its own waker, which sets the member's `ready` flag and
//!   then wakes the team's task. The team stores its own waker before it
//!   polls any member, and clears a member's flag *before* polling it, so a
//!   wake-up that lands during a poll re-polls the team: none is lost.
//! - A member is polled only when its flag is set (all are at first), so a
//!   wake-up of one member costs one poll, not one per member.
//! - The team completes when every member has completed.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::supervisor::Supervised;

struct TeamWaker {
    waker: Mutex<Option<Waker>>,
}

struct MemberWaker {
    ready: AtomicBool,
    team: Arc<TeamWaker>,
}

impl Wake for MemberWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        // Release: the member's state change happens-before its re-poll,
        // which starts with the team's Acquire swap of this flag.
        self.ready.store(true, Ordering::Release);
        let w = self
            .team
            .waker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(w) = w {
            w.wake();
        }
    }
}

struct Member {
    fut: Supervised,
    flag: Arc<MemberWaker>,
    waker: Waker,
    done: bool,
}

/// Actors sharing one task.
pub(crate) struct Team {
    shared: Arc<TeamWaker>,
    members: Vec<Member>,
}

impl Team {
    pub(crate) fn new(members: Vec<Supervised>) -> Team {
        let shared = Arc::new(TeamWaker {
            waker: Mutex::new(None),
        });
        let members = members
            .into_iter()
            .map(|fut| {
                let flag = Arc::new(MemberWaker {
                    ready: AtomicBool::new(true),
                    team: shared.clone(),
                });
                Member {
                    fut,
                    waker: Waker::from(flag.clone()),
                    flag,
                    done: false,
                }
            })
            .collect();
        Team { shared, members }
    }
}

impl Future for Team {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        {
            let mut g = this.shared.waker.lock().unwrap_or_else(|p| p.into_inner());
            match &*g {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => *g = Some(cx.waker().clone()),
            }
        }
        let mut live = 0;
        for m in &mut this.members {
            if m.done {
                continue;
            }
            if m.flag.ready.swap(false, Ordering::AcqRel) {
                let mut mcx = Context::from_waker(&m.waker);
                if Pin::new(&mut m.fut).poll(&mut mcx).is_ready() {
                    m.done = true;
                    continue;
                }
            }
            live += 1;
        }
        if live == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
