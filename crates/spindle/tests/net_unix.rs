//! Unix domain sockets and `AsyncFd`, on every scheduler flavour.
//!
//! Socket files go to a directory of the test's own under the system's
//! temporary directory, removed at the end. No assertion depends on timing.

mod common;

use spindle::io::AsyncFd;
use spindle::net::{OwnedReadHalf, UnixDatagram, UnixListener, UnixStream};
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::path::PathBuf;

/// A fresh, empty directory for one test's socket files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spindle-unix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

rt_test! {
    fn stream_echo_through_a_listener() {
        let dir = scratch("echo");
        let path = dir.join("echo.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = spindle::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            loop {
                match stream.read(&mut buf).await.unwrap() {
                    0 => return,
                    n => stream.write_all(&buf[..n]).await.unwrap(),
                }
            }
        });
        let client = UnixStream::connect(&path).await.unwrap();
        let msg = vec![7u8; 200_000]; // more than a socket buffer holds
        let (rd, wr) = client.split();
        let mut back = vec![0u8; msg.len()];
        let sent = async {
            wr.write_all(&msg).await.unwrap();
            wr.shutdown().unwrap();
        };
        let (_, received) = futures_util::future::join(sent, rd.read_exact(&mut back)).await;
        received.unwrap();
        assert_eq!(back, msg);
        assert_eq!(client.read(&mut [0u8; 8]).await.unwrap(), 0, "server closed after our half-close");
        server.await.unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}

rt_test! {
    fn owned_halves_of_a_pair_work_from_two_tasks() {
        let (a, b) = UnixStream::pair().unwrap();
        let (rd, wr): (OwnedReadHalf<UnixStream>, _) = a.into_split();
        let writer = spindle::spawn(async move {
            for i in 0..100u8 {
                wr.write_all(&[i; 10]).await.unwrap();
            }
        });
        let echo = spindle::spawn(async move {
            let mut buf = [0u8; 10];
            for i in 0..100u8 {
                b.read_exact(&mut buf).await.unwrap();
                assert_eq!(buf, [i; 10]);
                b.write_all(&[i]).await.unwrap();
            }
        });
        let mut got = [0u8; 100];
        rd.read_exact(&mut got).await.unwrap();
        assert_eq!(got.to_vec(), (0..100u8).collect::<Vec<_>>());
        writer.await.unwrap();
        echo.await.unwrap();
    }
}

rt_test! {
    fn datagrams_by_path_and_connected() {
        let dir = scratch("dgram");
        let server = UnixDatagram::bind(dir.join("server.sock")).unwrap();
        let client = UnixDatagram::bind(dir.join("client.sock")).unwrap();
        client.send_to(b"ping", dir.join("server.sock")).await.unwrap();
        let mut buf = [0u8; 16];
        let (n, from) = server.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"ping");
        assert_eq!(from.as_pathname(), Some(dir.join("client.sock").as_path()));
        server.connect(dir.join("client.sock")).unwrap();
        server.send(b"pong").await.unwrap();
        assert_eq!(client.recv(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf[..4], b"pong");
        let (x, y) = UnixDatagram::pair().unwrap();
        x.send(b"pair").await.unwrap();
        assert_eq!(y.recv(&mut buf).await.unwrap(), 4);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

rt_test! {
    fn binding_a_path_that_exists_names_it() {
        let dir = scratch("exists");
        let path = dir.join("taken.sock");
        let _first = UnixListener::bind(&path).unwrap();
        let e = UnixListener::bind(&path).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AddrInUse);
        let msg = e.to_string();
        assert!(msg.contains(&*path.to_string_lossy()) && msg.contains("the path exists"), "{msg}");
        let e = UnixDatagram::bind(&path).unwrap_err();
        assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

rt_test! {
    fn connecting_to_a_missing_path_names_it() {
        let path = scratch("missing").join("nobody.sock");
        let e = UnixStream::connect(&path).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}");
        let e = UnixDatagram::unbound().unwrap().send_to(b"x", &path).await.unwrap_err();
        assert!(e.to_string().contains("could not send to"), "{e}");
    }
}

rt_test! {
    fn async_fd_reads_with_retry_and_through_a_guard() {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let fd = AsyncFd::new(a).unwrap();
        // Nothing to read yet: a guard's attempt sees WouldBlock.
        {
            let mut guard = fd.readable().await;
            let e = guard.try_io(|s| (&*s).read(&mut [0u8; 4])).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::WouldBlock);
        }
        let writer = std::thread::spawn(move || {
            b.write_all(b"hello").unwrap();
            b
        });
        let mut buf = [0u8; 5];
        let n = fd.read_with(|s| (&*s).read(&mut buf)).await.unwrap();
        assert_eq!(&buf[..n], &b"hello"[..n]);
        let mut b = writer.join().unwrap();
        // Writable at once; the write lands on the other end.
        let n = fd.write_with(|s| (&*s).write(b"back")).await.unwrap();
        assert_eq!(n, 4);
        let mut back = [0u8; 4];
        b.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"back");
        // into_inner hands the socket back, still open.
        let a = fd.into_inner();
        a.shutdown(Shutdown::Both).unwrap();
    }
}

rt_test! {
    fn async_fd_of_a_regular_file_is_refused_by_name() {
        let file = std::fs::File::open("/proc/self/status").unwrap();
        let fd_number = std::os::fd::AsRawFd::as_raw_fd(&file);
        let e = AsyncFd::new(file).unwrap_err();
        assert!(e.to_string().contains(&format!("fd {fd_number}")), "{e}");
    }
}
