//! `spindle::process` on every scheduler flavour: output, piped streams
//! with backpressure, exit statuses, kill, kill-on-drop and reaping, and
//! errors that name the program.
//!
//! The children are `echo`, `cat`, `sh`, `sleep` and `head` from the
//! system. No assertion depends on timing: where a test waits for
//! something to happen in the background, it polls with a generous bound.

mod common;

use futures_io::AsyncWrite;
use spindle::process::{ChildStdout, Command, Stdio};
use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

/// Everything `out` gives until its end.
async fn read_to_end(out: &ChildStdout) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        match out.read(&mut buf).await.unwrap() {
            0 => return all,
            n => all.extend_from_slice(&buf[..n]),
        }
    }
}

/// Waits (polling, up to 10 s) until no process has id `pid`: it exited
/// and was reaped.
async fn until_gone(pid: u32) {
    let proc = format!("/proc/{pid}");
    for _ in 0..1000 {
        if !Path::new(&proc).exists() {
            return;
        }
        spindle::time::sleep(Duration::from_millis(10)).await;
    }
    let state = std::fs::read_to_string(format!("{proc}/stat")).unwrap_or_default();
    panic!("process {pid} still there: {state}");
}

rt_test! {
    fn echo_output_and_status() {
        let out = Command::new("echo").args(["hello", "spindle"]).output().await.unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello spindle\n");
        assert!(out.stderr.is_empty());
        let status = Command::new("sh").args(["-c", "exit 3"]).status().await.unwrap();
        assert_eq!(status.code(), Some(3));
        let out = Command::new("sh").args(["-c", "echo oops >&2; exit 3"]).output().await.unwrap();
        assert_eq!((out.status.code(), &out.stderr[..]), (Some(3), &b"oops\n"[..]));
    }
}

rt_test! {
    fn output_reads_both_pipes_while_waiting() {
        // Each stream is several times a pipe's buffer: read one after the
        // other, the child would block on the second.
        let out = Command::new("sh")
            .args(["-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2"])
            .output()
            .await
            .unwrap();
        assert!(out.status.success());
        assert_eq!((out.stdout.len(), out.stderr.len()), (300_000, 200_000));
    }
}

rt_test! {
    fn cat_round_trips_through_piped_stdin_and_stdout() {
        let data: Vec<u8> = (0..400_000usize).map(|i| (i % 251) as u8).collect();
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let sent = data.clone();
        // Far more than the pipes hold: the writer waits for cat, which
        // waits for the reader.
        let writer = spindle::spawn(async move {
            stdin.write_all(&sent).await.unwrap();
            std::future::poll_fn(|cx| Pin::new(&mut stdin).poll_close(cx)).await.unwrap();
        });
        let back = read_to_end(&stdout).await;
        writer.await.unwrap();
        assert!(back == data, "{} bytes back of {}", back.len(), data.len());
        assert!(child.wait().await.unwrap().success());
    }
}

rt_test! {
    fn kill_ends_a_sleeping_child_with_sigkill() {
        let mut child = Command::new("sleep").arg("100").spawn().unwrap();
        let pid = child.id().unwrap();
        assert!(child.try_wait().unwrap().is_none());
        child.start_kill().unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.signal(), Some(9));
        assert!(!status.success());
        assert_eq!(child.id(), None); // collected: the pid is not ours any more
        assert_eq!(child.wait().await.unwrap(), status);
        child.start_kill().unwrap(); // a no-op now
        until_gone(pid).await;

        let mut child = Command::new("sleep").arg("100").spawn().unwrap();
        child.kill().await.unwrap();
        assert_eq!(child.try_wait().unwrap().unwrap().signal(), Some(9));
    }
}

rt_test! {
    fn kill_on_drop_kills_and_reaps() {
        let child = Command::new("sleep").arg("100").kill_on_drop(true).spawn().unwrap();
        let pid = child.id().unwrap();
        drop(child);
        until_gone(pid).await;
    }
}

rt_test! {
    fn a_dropped_child_is_reaped_when_it_exits() {
        if !pidfd_available() {
            eprintln!("no pidfd here: a dropped child is not reaped (documented)");
            return;
        }
        let child = Command::new("sleep").arg("0.2").spawn().unwrap();
        let pid = child.id().unwrap();
        drop(child); // runs on, then exits; no zombie is left
        until_gone(pid).await;
    }
}

rt_test! {
    fn wait_is_cancel_safe() {
        let mut child = Command::new("sleep").arg("0.3").spawn().unwrap();
        let early = spindle::time::timeout(Duration::from_millis(20), child.wait()).await;
        assert!(early.is_err(), "sleep 0.3 exited within 20 ms");
        assert!(child.wait().await.unwrap().success());
    }
}

rt_test! {
    fn many_children_waited_at_once() {
        let waits: Vec<_> = (0..16)
            .map(|i| {
                spindle::spawn(async move {
                    let script = format!("exit {i}");
                    let mut child = Command::new("sh").args(["-c", &script]).spawn().unwrap();
                    child.wait().await.unwrap().code()
                })
            })
            .collect();
        for (i, w) in waits.into_iter().enumerate() {
            assert_eq!(w.await.unwrap(), Some(i as i32));
        }
    }
}

rt_test! {
    fn environment_arguments_and_directory() {
        let out = Command::new("sh")
            .args(["-c", "echo \"$FOO|$GONE|$(pwd)\""])
            .env("FOO", "bar")
            .env("GONE", "x")
            .env_remove("GONE")
            .current_dir("/")
            .output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"bar||/\n");
        let out = Command::new("/usr/bin/env").env_clear().env("ONLY", "1").output().await.unwrap();
        assert_eq!(out.stdout, b"ONLY=1\n");
    }
}

rt_test! {
    fn writing_to_a_child_that_exited_is_a_broken_pipe() {
        let mut child = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        assert!(child.wait().await.unwrap().success());
        let e = stdin.write_all(&[0u8; 100_000]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BrokenPipe);
        stdin.close();
        let e = stdin.write(b"x").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    }
}

rt_test! {
    fn a_program_that_is_not_found_is_named() {
        let e = Command::new("no-such-prog").spawn().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            "could not spawn `no-such-prog`: No such file or directory (os error 2)"
        );
        let e = Command::new("no-such-prog").output().await.unwrap_err();
        assert!(e.to_string().starts_with("could not spawn `no-such-prog`: "), "{e}");
    }
}

#[test]
fn spawning_outside_a_runtime_says_it_needs_one() {
    let e = Command::new("true").spawn().unwrap_err();
    assert!(e.to_string().contains("needs a spindle runtime"), "{e}");
    assert!(e.to_string().starts_with("could not spawn `true`"), "{e}");
}

/// Whether the kernel gives this process pidfds (what `Child` waits on).
fn pidfd_available() -> bool {
    // SAFETY: pidfd_open takes two integers; a descriptor it returns is
    // closed right away.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
    if fd >= 0 {
        // SAFETY: `fd` was just returned to us and is not used after this.
        unsafe { libc::close(fd as i32) };
    }
    fd >= 0
}
