//! A TCP echo server: every connection gets its own task, which writes back
//! whatever it reads. Ctrl-C stops it, printing how many connections it served.
//!
//! `cargo run --release -p spindle --example echo -- --addr 127.0.0.1:7000`
//! (the default address is 127.0.0.1:7000; port 0 picks a free one).
//! Try it with `nc 127.0.0.1 7000`.

use spindle::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

fn usage(err: &str) -> ! {
    eprintln!("error: {err}\nusage: echo [--addr HOST:PORT]");
    std::process::exit(2);
}

#[spindle::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut addr = "127.0.0.1:7000".to_string();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--addr" => {
                addr = args
                    .next()
                    .unwrap_or_else(|| usage("--addr needs HOST:PORT"))
            }
            "-h" | "--help" => usage("no error, here is how"),
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    let listener = match TcpListener::bind(addr.as_str()).await {
        Ok(l) => l,
        Err(e) => {
            // Names the address: "could not bind 127.0.0.1:7000: Address already in use ..."
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "listening on {}",
        listener.local_addr().expect("local address")
    );

    let served = Arc::new(AtomicU64::new(0));
    let stop = spindle::signal::ctrl_c();
    let accepting = async {
        loop {
            match listener.accept().await {
                Ok((stream, _peer)) => {
                    served.fetch_add(1, Relaxed);
                    drop(spindle::spawn(echo(stream))); // detached
                }
                // Out of file descriptors and the like: report, keep serving.
                Err(e) => eprintln!("accept failed: {e}"),
            }
        }
    };
    spindle::select! {
        r = stop => r.expect("SIGINT handler"),
        _ = accepting => {}
    }
    println!("interrupted: served {} connections", served.load(Relaxed));
}

async fn echo(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; 16 * 1024];
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
