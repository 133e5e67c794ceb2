//! Bad input: wiring mistakes are errors from `Graph::start` naming what is
//! wrong; locking an undeclared or busy end is a `PortError`; telemetry
//! refuses non-loopback addresses and names an address in use.

mod common;

use std::time::Duration;

use spindle_actor::{ActorState, Graph, GraphError, PortError, RestartPolicy};

fn rt() -> spindle::Runtime {
    spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap()
}

fn err(g: Graph) -> GraphError {
    match g.start(rt().handle()) {
        Ok(_) => panic!("the graph started"),
        Err(e) => e,
    }
}

#[test]
fn a_channel_nobody_reads_is_an_error() {
    let mut g = Graph::new("g");
    let (tx, _rx) = g.channel::<u64>("orphan").build();
    g.actor("writer").writes(&tx).run(move |_| async {});
    let e = err(g);
    assert!(matches!(e, GraphError::NoReader { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "channel `orphan` is written by actor `writer` but no actor reads it"
    );
}

#[test]
fn a_channel_nobody_writes_is_an_error() {
    let mut g = Graph::new("g");
    let (_tx, rx) = g.channel::<u64>("dry").build();
    g.actor("reader").reads(&rx).run(move |_| async {});
    let e = err(g);
    assert_eq!(
        e.to_string(),
        "channel `dry` is read by actor `reader` but no actor writes it"
    );
}

#[test]
fn an_unwired_channel_is_an_error() {
    let mut g = Graph::new("g");
    let _ = g.channel::<u64>("lonely").build();
    g.actor("a").run(move |_| async {});
    assert_eq!(err(g).to_string(), "channel `lonely` is wired to no actor");
}

#[test]
fn two_readers_of_one_channel_is_an_error() {
    let mut g = Graph::new("g");
    let (tx, rx) = g.channel::<u64>("c").build();
    g.actor("w").writes(&tx).run(move |_| async {});
    g.actor("r1").reads(&rx).run(move |_| async {});
    g.actor("r2").reads(&rx).run(move |_| async {});
    let e = err(g);
    assert!(
        e.to_string()
            .contains("channel `c`: actors `r1` and `r2` both read it"),
        "{e}"
    );
}

#[test]
fn duplicate_names_zero_capacity_missing_body_and_empty_graphs() {
    let mut g = Graph::new("g");
    g.actor("same").run(move |_| async {});
    g.actor("same").run(move |_| async {});
    assert_eq!(err(g).to_string(), "two actors are named `same`");

    let mut g = Graph::new("g");
    let (t1, r1) = g.channel::<u8>("c").build();
    let (t2, r2) = g.channel::<u8>("c").build();
    g.actor("a").writes(&t1).writes(&t2).run(move |_| async {});
    g.actor("b").reads(&r1).reads(&r2).run(move |_| async {});
    assert_eq!(err(g).to_string(), "two channels are named `c`");

    let mut g = Graph::new("g");
    let (t, r) = g.channel::<u8>("zero").capacity(0).build();
    g.actor("a").writes(&t).run(move |_| async {});
    g.actor("b").reads(&r).run(move |_| async {});
    assert_eq!(err(g).to_string(), "channel `zero` has capacity 0");

    let mut g = Graph::new("g");
    let _ = g.actor("bodiless");
    g.actor("other").run(move |_| async {});
    assert!(err(g)
        .to_string()
        .contains("actor `bodiless` was declared but given no body"));

    assert!(matches!(err(Graph::new("g")), GraphError::Empty));
}

#[test]
fn locking_an_undeclared_or_busy_end_fails_with_its_name() {
    let rt = rt();
    let mut g = Graph::new("g");
    let (tx, rx) = g.channel::<u64>("declared").build();
    let (tx2, rx2) = g.channel::<u64>("other").build();
    let errors = ActorState::new(Vec::<PortError>::new());
    let e = errors.clone();
    let sneaky_rx = rx.clone();
    g.actor("writer").writes(&tx).writes(&tx2).run(move |_| {
        let (tx, tx2, e) = (tx.clone(), tx2.clone(), e.clone());
        async move {
            let _a = tx.lock()?;
            e.lock().push(tx.lock().unwrap_err()); // a second lock: in use
            let _b = tx2.lock()?;
            Ok::<(), PortError>(())
        }
    });
    let legit_rx = rx.clone();
    g.actor("legit").reads(&legit_rx).run(move |_| async {});
    let e = errors.clone();
    g.actor("reader")
        .reads(&rx2)
        .restart(RestartPolicy::never())
        .run(move |_| {
            let (sneaky, e) = (sneaky_rx.clone(), e.clone());
            async move {
                let err = sneaky.lock().unwrap_err(); // not declared by `reader`
                e.lock().push(err.clone());
                Err::<(), PortError>(err)
            }
        });
    let running = g.start(rt.handle()).unwrap();
    let report = running.block_until_stopped(Duration::from_secs(10));
    let errs = errors.take().unwrap();
    assert!(errs.contains(&PortError::InUse {
        channel: "declared".into(),
        end: "write"
    }));
    assert!(errs.contains(&PortError::NotWired {
        channel: "declared".into(),
        end: "read",
        actor: "reader".into()
    }));
    let failure = &report.failures[0];
    assert!(
        failure.contains(
            "actor `reader` locked the read end of channel `declared` without declaring it"
        ),
        "{failure}"
    );
    // Once its actor stopped, an end is retired for good.
    assert!(matches!(rx.lock(), Err(PortError::Retired { .. })));
}

#[test]
fn telemetry_refuses_remote_bad_and_busy_addresses() {
    let build = |addr: &str| {
        let mut g = Graph::new("g");
        let (tx, rx) = g.channel::<u64>("c").build();
        g.actor("w").writes(&tx).run(move |_| async {});
        g.actor("r").reads(&rx).run(move |_| async {});
        g.telemetry(addr);
        g
    };
    let e = err(build("0.0.0.0:0"));
    assert!(
        matches!(e, GraphError::NonLoopbackTelemetry { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("not a loopback address"));
    let e = err(build("no address here"));
    assert_eq!(
        e.to_string(),
        "telemetry address `no address here` is not an ip:port address \
         (invalid socket address)"
    );
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap();
    let e = err(build(&addr.to_string()));
    assert!(matches!(e, GraphError::TelemetryBind { .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with(&format!("telemetry server cannot bind {addr}: ")),
        "{e}"
    );
}
