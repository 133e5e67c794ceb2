//! Tokio's `AsyncRead`/`AsyncWrite` on spindle's TCP streams (feature
//! `tokio-io`): tokio-util's `LinesCodec` framing lines both ways over
//! loopback, on every scheduler flavour, with no Tokio runtime running.

mod common;

use futures_util::{SinkExt, StreamExt};
use spindle::net::{TcpListener, TcpStream};
use std::net::SocketAddr;
use tokio_util::codec::{Framed, FramedRead, FramedWrite, LinesCodec};

/// Serves one connection: answers every line `l` with `l.len():l`, then,
/// at the client's end of stream, one last line `bye N` (N lines seen) and
/// closes. Reads and writes go through the owned halves.
async fn line_server() -> (SocketAddr, spindle::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = spindle::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (rd, wr) = stream.into_split();
        let mut lines = FramedRead::new(rd, LinesCodec::new());
        let mut out = FramedWrite::new(wr, LinesCodec::new());
        let mut seen = 0;
        while let Some(line) = lines.next().await {
            let line = line.unwrap();
            seen += 1;
            out.send(format!("{}:{line}", line.len())).await.unwrap();
        }
        out.send(format!("bye {seen}")).await.unwrap();
        // poll_shutdown: the client reads end of stream.
        SinkExt::<String>::close(&mut out).await.unwrap();
        seen
    });
    (addr, task)
}

rt_test! {
    fn lines_go_both_ways_through_framed() {
        let (addr, server) = line_server().await;
        let stream = TcpStream::connect(addr).await.unwrap();
        let mut framed = Framed::new(stream, LinesCodec::new());
        for word in ["hello", "", "spindle and tokio-util"] {
            framed.send(word).await.unwrap();
            let answer = framed.next().await.unwrap().unwrap();
            assert_eq!(answer, format!("{}:{word}", word.len()));
        }
        // Half-close our side: the server sees end of stream and says bye.
        SinkExt::<&str>::close(&mut framed).await.unwrap();
        assert_eq!(framed.next().await.unwrap().unwrap(), "bye 3");
        assert!(framed.next().await.is_none(), "the server closed after its bye");
        assert_eq!(server.await.unwrap(), 3);
    }
}

rt_test! {
    fn a_line_longer_than_a_socket_read_arrives_whole() {
        let (addr, server) = line_server().await;
        let stream = TcpStream::connect(addr).await.unwrap();
        // Borrowed halves: this task writes and reads at once, so neither
        // side's socket buffer has to hold the whole line.
        let (rd, wr) = stream.split();
        let mut lines = FramedRead::new(rd, LinesCodec::new());
        let mut out = FramedWrite::new(wr, LinesCodec::new());
        let long: String = (0..300_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let send = async {
            out.send(long.as_str()).await.unwrap();
            out.send("short").await.unwrap();
            SinkExt::<&str>::close(&mut out).await.unwrap();
        };
        let recv = async {
            let mut got = Vec::new();
            while let Some(line) = lines.next().await {
                got.push(line.unwrap());
            }
            got
        };
        let ((), got) = futures_util::future::join(send, recv).await;
        assert_eq!(got.len(), 3, "two answers and the bye");
        assert_eq!(got[0], format!("300000:{long}"));
        assert_eq!(got[1], "5:short");
        assert_eq!(got[2], "bye 2");
        assert_eq!(server.await.unwrap(), 2);
    }
}

rt_test! {
    fn a_full_read_buf_is_ready_without_reading() {
        use tokio::io::{AsyncRead, ReadBuf};
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut stream = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (_peer, _) = listener.accept().await.unwrap(); // sends nothing
        let mut storage = [0u8; 0];
        let mut buf = ReadBuf::new(&mut storage);
        // A read that went to the socket would be pending: nothing was sent.
        let polled = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::pin::Pin::new(&mut stream).poll_read(cx, &mut buf))
        })
        .await;
        assert!(matches!(polled, std::task::Poll::Ready(Ok(()))));
        assert!(buf.filled().is_empty());
    }
}
