//! `serve-echo` (see `spindle_peer_common::echo`): a task per connection on
//! a multi-thread runtime of W workers, with `tokio::net` and `AsyncReadExt`.

use spindle_peer_common::echo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub fn serve(workers: usize) -> ! {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt.block_on(async {
        TcpListener::bind(echo::BIND)
            .await
            .unwrap_or_else(|e| panic!("could not bind {}: {e}", echo::BIND))
    });
    echo::announce(listener.local_addr().expect("local address"));
    drop(rt.spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => drop(tokio::spawn(connection(stream))),
                Err(e) => eprintln!("accept: {e}"),
            }
        }
    }));
    echo::exit_when_stdin_closes()
}

async fn connection(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; echo::BUF];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if stream.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
