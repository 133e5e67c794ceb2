//! TCP and UDP over loopback, and ctrl_c, on every scheduler flavour.
//!
//! Connections go to 127.0.0.1 only; every loop is bounded. No assertion
//! depends on timing: where a test sleeps, it is only to make the
//! interesting path (a parked worker, a full socket buffer) likely.

mod common;

use spindle::net::{TcpListener, TcpStream, UdpSocket};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// Serves echo on 127.0.0.1:0: one task per connection, until the listener
/// task is dropped or aborted. Returns the address and the accept task.
async fn echo_server() -> (SocketAddr, spindle::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = spindle::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            drop(spindle::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if stream.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
            })); // detached: it ends when its client closes
        }
    });
    (addr, task)
}

/// The byte at `offset` of a test stream: a period (251) that no buffer
/// size divides, so a lost, repeated or reordered chunk shows.
fn pattern_byte(offset: usize) -> u8 {
    (offset % 251) as u8
}

fn fill_pattern(offset: usize, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(offset + i);
    }
}

/// The pattern over a window, so a check is a slice comparison.
fn pattern_window(len: usize) -> Vec<u8> {
    (0..len + 251).map(pattern_byte).collect()
}

rt_test! {
    fn echo_many_concurrent_connections() {
        let (addr, server) = echo_server().await;
        let clients = common::scaled(640).min(64);
        let rounds = 20;
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                spindle::spawn(async move {
                    let stream = TcpStream::connect(addr).await.unwrap();
                    stream.set_nodelay(true).unwrap();
                    assert_eq!(stream.peer_addr().unwrap(), addr);
                    for r in 0..rounds {
                        let msg = format!("client {c} round {r} {}", "x".repeat(c * 7 + r));
                        stream.write_all(msg.as_bytes()).await.unwrap();
                        let mut back = vec![0u8; msg.len()];
                        stream.read_exact(&mut back).await.unwrap();
                        assert_eq!(back, msg.as_bytes(), "client {c} round {r}");
                    }
                    rounds
                })
            })
            .collect();
        let mut done = 0;
        for h in handles {
            done += h.await.unwrap();
        }
        assert_eq!(done, clients * rounds);
        server.abort();
    }
}

rt_test! {
    fn large_writes_wait_for_a_full_buffer_to_drain() {
        // More than loopback's send and receive buffers can hold together
        // (4 MiB + 32 MiB at most here), so the writer must see WouldBlock
        // and be woken by writability once the reader starts.
        const TOTAL: usize = 64 << 20;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let written = Arc::new(AtomicUsize::new(0));
        let progress = written.clone();
        let writer = spindle::spawn(async move {
            let stream = TcpStream::connect(addr).await.unwrap();
            let mut chunk = vec![0u8; 1 << 20];
            let mut off = 0;
            while off < TOTAL {
                fill_pattern(off, &mut chunk);
                stream.write_all(&chunk).await.unwrap();
                off += chunk.len();
                progress.store(off, SeqCst);
            }
            stream.shutdown(Shutdown::Write).unwrap();
        });
        let (reader, _) = listener.accept().await.unwrap();
        // Nobody reads yet: the writer fills the buffers and waits.
        spindle::time::sleep(Duration::from_millis(20)).await;
        assert!(!writer.is_finished(), "64 MiB cannot fit in the socket buffers");
        assert!(written.load(SeqCst) < TOTAL);
        let window = pattern_window(64 * 1024);
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = 0;
        loop {
            let n = reader.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            let start = got % 251;
            assert!(buf[..n] == window[start..start + n], "corrupt data at offset {got}");
            got += n;
        }
        assert_eq!(got, TOTAL);
        writer.await.unwrap();
    }
}

rt_test! {
    fn half_close_lets_the_peer_answer() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spindle::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            // Read to end of stream, then answer with what was read.
            let mut all = Vec::new();
            let mut buf = [0u8; 1000];
            loop {
                match stream.read(&mut buf).await.unwrap() {
                    0 => break,
                    n => all.extend_from_slice(&buf[..n]),
                }
            }
            let answer = format!("got {} bytes", all.len());
            stream.write_all(answer.as_bytes()).await.unwrap();
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (rd, wr) = stream.split();
        wr.write_all(&[7u8; 12_345]).await.unwrap();
        wr.shutdown().unwrap();
        let mut answer = Vec::new();
        let mut buf = [0u8; 100];
        loop {
            match rd.read(&mut buf).await.unwrap() {
                0 => break,
                n => answer.extend_from_slice(&buf[..n]),
            }
        }
        assert_eq!(String::from_utf8(answer).unwrap(), "got 12345 bytes");
        server.await.unwrap();
    }
}

rt_test! {
    fn owned_halves_work_from_two_tasks() {
        let (addr, server) = echo_server().await;
        let (rd, wr) = TcpStream::connect(addr).await.unwrap().into_split();
        const TOTAL: usize = 1 << 20;
        let writer = spindle::spawn(async move {
            let mut chunk = vec![0u8; 10_000];
            let mut off = 0;
            while off < TOTAL {
                let n = chunk.len().min(TOTAL - off);
                fill_pattern(off, &mut chunk[..n]);
                wr.write_all(&chunk[..n]).await.unwrap();
                off += n;
            }
            wr
        });
        let reader = spindle::spawn(async move {
            let window = pattern_window(4096);
            let mut buf = [0u8; 4096];
            let mut got = 0;
            while got < TOTAL {
                let n = rd.read(&mut buf).await.unwrap();
                assert!(n > 0, "echo ended early at {got}");
                let start = got % 251;
                assert!(buf[..n] == window[start..start + n], "corrupt echo at {got}");
                got += n;
            }
            got
        });
        assert_eq!(reader.await.unwrap(), TOTAL);
        writer.await.unwrap();
        server.abort();
    }
}

rt_test! {
    fn connect_refused_names_the_address() {
        // A port that was just free: nothing listens there any more.
        let addr = {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            l.local_addr().unwrap()
        };
        let e = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("could not connect to {addr}")), "{msg}");
    }
}

rt_test! {
    fn binding_a_port_in_use_names_the_address() {
        let first = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = first.local_addr().unwrap();
        let e = TcpListener::bind(addr).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AddrInUse, "{e}");
        assert!(e.to_string().contains(&format!("could not bind {addr}")), "{e}");
        // The same through a string, and for UDP.
        let e = TcpListener::bind(addr.to_string()).await.unwrap_err();
        assert!(e.to_string().contains(&format!("could not bind {addr}")), "{e}");
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let uaddr = udp.local_addr().unwrap();
        let e = UdpSocket::bind(uaddr).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AddrInUse, "{e}");
        assert!(e.to_string().contains(&format!("could not bind {uaddr}")), "{e}");
        // Not an address at all: named too.
        let e = TcpListener::bind("no port here").await.unwrap_err();
        assert!(e.to_string().contains("no port here"), "{e}");
    }
}

rt_test! {
    fn udp_round_trip() {
        let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let server_addr = server.local_addr().unwrap();
        let echo = spindle::spawn(async move {
            let mut buf = [0u8; 1500];
            for _ in 0..10 {
                let (n, from) = server.recv_from(&mut buf).await.unwrap();
                server.send_to(&buf[..n], from).await.unwrap();
            }
        });
        let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut buf = [0u8; 1500];
        for i in 0..5u8 {
            let msg = [i; 100];
            client.send_to(&msg, server_addr).await.unwrap();
            let (n, from) = client.recv_from(&mut buf).await.unwrap();
            assert_eq!((n, from), (100, server_addr));
            assert_eq!(buf[..n], msg);
        }
        client.connect(server_addr).await.unwrap();
        assert_eq!(client.peer_addr().unwrap(), server_addr);
        for i in 5..10u8 {
            let msg = vec![i; 1000];
            assert_eq!(client.send(&msg).await.unwrap(), 1000);
            let n = client.recv(&mut buf).await.unwrap();
            assert_eq!(buf[..n], msg[..]);
        }
        echo.await.unwrap();
    }
}

rt_test! {
    fn udp_socket_shared_by_two_receivers() {
        // Two tasks wait on the same socket's read readiness: both are woken.
        let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let addr = socket.local_addr().unwrap();
        let receivers: Vec<_> = (0..2)
            .map(|_| {
                let s = socket.clone();
                spindle::spawn(async move {
                    let mut buf = [0u8; 16];
                    s.recv_from(&mut buf).await.unwrap().0
                })
            })
            .collect();
        spindle::time::sleep(Duration::from_millis(10)).await;
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        sender.send_to(b"one", addr).await.unwrap();
        sender.send_to(b"two", addr).await.unwrap();
        for r in receivers {
            assert_eq!(r.await.unwrap(), 3);
        }
    }
}

rt_test! {
    fn a_failed_send_to_names_its_target() {
        // An IPv6 target from an IPv4 socket: refused by the kernel.
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let err = sender.send_to(b"x", "[::1]:9").await.unwrap_err();
        assert!(err.to_string().starts_with("could not send to [::1]:9: "), "{err}");
    }
}

rt_test! {
    fn read_woken_while_the_worker_is_parked_on_the_driver() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        // A plain thread, outside the runtime, is the peer.
        let peer = std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            wait.recv().unwrap();
            s.write_all(b"wake up").unwrap();
            let mut back = [0u8; 2];
            s.read_exact(&mut back).unwrap();
            back
        });
        let (stream, _) = listener.accept().await.unwrap();
        let reader = spindle::spawn(async move {
            let mut buf = [0u8; 7];
            stream.read_exact(&mut buf).await.unwrap();
            stream.write_all(b"ok").await.unwrap();
            buf
        });
        // Everything idles: a worker (or the current-thread driver) parks
        // in the poller with nothing due but this read.
        spindle::time::sleep(Duration::from_millis(20)).await;
        assert!(!reader.is_finished());
        go.send(()).unwrap();
        assert_eq!(&reader.await.unwrap(), b"wake up");
        assert_eq!(&peer.join().unwrap(), b"ok");
    }
}

rt_test! {
    fn futures_io_traits_read_and_write() {
        use futures_io::{AsyncRead, AsyncWrite};
        use std::pin::Pin;
        let (addr, server) = echo_server().await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let n = std::future::poll_fn(|cx| Pin::new(&mut stream).poll_write(cx, b"traits"))
            .await
            .unwrap();
        assert_eq!(n, 6);
        let mut buf = [0u8; 6];
        let mut got = 0;
        while got < 6 {
            got += std::future::poll_fn(|cx| Pin::new(&mut &stream).poll_read(cx, &mut buf[got..]))
                .await
                .unwrap();
        }
        assert_eq!(&buf, b"traits");
        std::future::poll_fn(|cx| Pin::new(&mut stream).poll_close(cx))
            .await
            .unwrap();
        // After our half-close the echo server sees end of stream and closes.
        assert_eq!(stream.read(&mut buf).await.unwrap(), 0);
        server.abort();
    }
}

rt_test! {
    fn write_vectored_sends_every_buffer_in_order() {
        use std::io::IoSlice;
        let (addr, server) = echo_server().await;
        let stream = TcpStream::connect(addr).await.unwrap();
        let parts: [&[u8]; 3] = [b"one ", b"", b"two three"];
        let slices: Vec<IoSlice<'_>> = parts.iter().map(|p| IoSlice::new(p)).collect();
        // Loopback takes 13 bytes in one writev: all of them, in order.
        let n = stream.write_vectored(&slices).await.unwrap();
        assert_eq!(n, 13);
        let mut buf = [0u8; 13];
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"one two three");
        // The futures-io trait goes through the same writev.
        let mut s = &stream;
        let n = std::future::poll_fn(|cx| {
            futures_io::AsyncWrite::poll_write_vectored(std::pin::Pin::new(&mut s), cx, &slices)
        })
        .await
        .unwrap();
        assert_eq!(n, 13);
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"one two three");
        server.abort();
    }
}

rt_test! {
    fn ctrl_c_wakes_every_waiter() {
        // Waiters made before the signal, some in tasks, one here.
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let c = spindle::signal::ctrl_c();
                spindle::spawn(async move { c.await.is_ok() })
            })
            .collect();
        let mine = spindle::signal::ctrl_c();
        // One dropped unpolled and one dropped while pending: neither
        // stands in anybody's way.
        drop(spindle::signal::ctrl_c());
        {
            let mut pending = spindle::signal::ctrl_c();
            let waker = std::task::Waker::noop();
            let mut cx = std::task::Context::from_waker(waker);
            assert!(std::pin::Pin::new(&mut pending).poll(&mut cx).is_pending());
        }
        signal_hook::low_level::raise(signal_hook::consts::SIGINT).unwrap();
        mine.await.unwrap();
        for w in waiters {
            assert!(w.await.unwrap());
        }
    }
}

#[test]
fn sockets_outside_a_runtime_say_so() {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut bind = std::pin::pin!(TcpListener::bind("127.0.0.1:0"));
    let std::task::Poll::Ready(Err(e)) = bind.as_mut().poll(&mut cx) else {
        panic!("bind outside a runtime should fail at once");
    };
    assert!(e.to_string().contains("inside a spindle runtime"), "{e}");
}

use std::future::Future as _;

/// A connected UDP socket's ICMP "refused" is an error reported once: the
/// receive after it waits again (here, until its timeout) instead of
/// spinning inside one poll on a readiness that never clears (as it would
/// were errors sticky). A watchdog thread, as the spin never returns to
/// the scheduler.
#[test]
fn a_udp_error_is_reported_once_and_the_next_receive_waits() {
    for (name, rt) in common::flavours() {
        let (done, finished) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let timed_out = rt.block_on(async {
                let dead = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                let dead_addr = dead.local_addr().unwrap();
                drop(dead); // nothing listens there: the send draws an ICMP error
                let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                s.connect(dead_addr).await.unwrap();
                s.send(b"ping").await.unwrap();
                // The driver collects the error event meanwhile.
                spindle::time::sleep(Duration::from_millis(50)).await;
                let mut buf = [0u8; 16];
                let first = s.recv(&mut buf).await.unwrap_err();
                assert_eq!(first.kind(), ErrorKind::ConnectionRefused);
                spindle::time::timeout(Duration::from_millis(100), s.recv(&mut buf))
                    .await
                    .is_err()
            });
            let _ = done.send(timed_out);
        });
        let timed_out = finished
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{name}: the second receive spun"));
        t.join().unwrap();
        assert!(
            timed_out,
            "{name}: nothing was sent, yet the receive returned"
        );
    }
}

rt_test! {
    /// A hundred receive loops on one shared socket, more than a direction
    /// keeps wakers for at first: after the first flush they settle
    /// instead of waking each other for ever, and each gets a datagram.
    fn many_receives_waiting_on_one_socket_settle() {
        const N: usize = 100;
        let sock = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let addr = sock.local_addr().unwrap();
        let polls = Arc::new(AtomicUsize::new(0));
        let receives: Vec<_> = (0..N)
            .map(|_| {
                let (sock, polls) = (sock.clone(), polls.clone());
                spindle::spawn(async move {
                    let mut buf = [0u8; 8];
                    let mut recv = Box::pin(sock.recv_from(&mut buf));
                    let got = std::future::poll_fn(|cx| {
                        polls.fetch_add(1, SeqCst);
                        recv.as_mut().poll(cx)
                    })
                    .await;
                    got.unwrap().0
                })
            })
            .collect();
        spindle::time::sleep(Duration::from_millis(200)).await;
        let idle_polls = polls.load(SeqCst);
        assert!(idle_polls < 10 * N, "{idle_polls} polls of {N} waiting receives in 200 ms");
        let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        for _ in 0..N {
            client.send_to(b"x", addr).await.unwrap();
        }
        for r in receives {
            assert_eq!(r.await.unwrap(), 1);
        }
    }
}
