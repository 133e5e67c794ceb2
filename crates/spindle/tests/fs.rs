//! `spindle::fs` on every scheduler flavour: round trips through the free
//! functions, `read_dir`, `File` (writes, seeks, read-ahead undone, the
//! deferred write error, a dropped `File`'s write), and errors that name
//! the path.
//!
//! Each test works in a directory of its own under the system's temporary
//! directory, removed at the end.

mod common;

use futures_io::AsyncRead;
use spindle::fs::{self, File, OpenOptions};
use std::collections::BTreeSet;
use std::future::{poll_fn, Future};
use std::io::{ErrorKind, SeekFrom};
use std::path::{Path, PathBuf};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A fresh directory, removed (with what is in it) on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "spindle-fs-{}-{name}-{}",
            std::process::id(),
            N.fetch_add(1, SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes that no power-of-two chunking lines up with.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

async fn read_all(f: &mut File) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 100_000];
    loop {
        match f.read(&mut buf).await.unwrap() {
            0 => return out,
            n => out.extend_from_slice(&buf[..n]),
        }
    }
}

rt_test! {
    fn write_then_read_round_trips() {
        let dir = TempDir::new("round");
        let path = dir.join("a.txt");
        fs::write(&path, "hello, spindle").await.unwrap();
        assert_eq!(fs::read(&path).await.unwrap(), b"hello, spindle");
        assert_eq!(fs::read_to_string(&path).await.unwrap(), "hello, spindle");
        assert_eq!(fs::metadata(&path).await.unwrap().len(), 14);
        let big = pattern(3 << 20);
        fs::write(&path, &big).await.unwrap();
        assert!(fs::read(&path).await.unwrap() == big);
        fs::remove_file(&path).await.unwrap();
        let e = fs::metadata(&path).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}

rt_test! {
    fn directories_copies_and_renames() {
        let dir = TempDir::new("dirs");
        let deep = dir.join("a/b/c");
        fs::create_dir_all(&deep).await.unwrap();
        fs::create_dir_all(&deep).await.unwrap(); // exists already: fine
        assert!(fs::metadata(&deep).await.unwrap().is_dir());
        fs::create_dir(dir.join("a/d")).await.unwrap();
        fs::write(deep.join("x"), b"xyz").await.unwrap();
        assert_eq!(fs::copy(deep.join("x"), deep.join("y")).await.unwrap(), 3);
        fs::rename(deep.join("y"), dir.join("a/d/z")).await.unwrap();
        assert_eq!(fs::read(dir.join("a/d/z")).await.unwrap(), b"xyz");
        fs::remove_file(dir.join("a/d/z")).await.unwrap();
        fs::remove_dir(dir.join("a/d")).await.unwrap();
        fs::remove_dir_all(dir.join("a")).await.unwrap();
        assert!(fs::metadata(dir.join("a")).await.is_err());
    }
}

rt_test! {
    fn errors_name_the_path_and_keep_the_kind() {
        let dir = TempDir::new("errors");
        let missing = dir.join("missing.txt");
        let shown = missing.display();

        let e = File::open(&missing).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            format!("could not open {shown}: No such file or directory (os error 2)")
        );
        let e = fs::remove_file(&missing).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert!(e.to_string().starts_with(&format!("could not remove {shown}: ")), "{e}");
        let e = fs::read(&missing).await.unwrap_err();
        assert!(e.to_string().starts_with(&format!("could not read {shown}: ")), "{e}");
        let e = fs::read_dir(&missing).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert!(e.to_string().contains(&format!("directory {shown}: ")), "{e}");
        let e = fs::rename(&missing, dir.join("b")).await.unwrap_err();
        assert!(e.to_string().contains(&format!("rename {shown} to ")), "{e}");

        let bad = dir.join("latin1.txt");
        fs::write(&bad, [0xe9u8, b'!']).await.unwrap();
        let e = fs::read_to_string(&bad).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        assert!(e.to_string().contains(&bad.display().to_string()), "{e}");

        // A directory under a file cannot be made.
        let e = fs::create_dir_all(bad.join("sub")).await.unwrap_err();
        assert!(e.to_string().contains("could not create directory"), "{e}");
    }
}

rt_test! {
    fn read_dir_lists_what_was_created_across_batches() {
        let dir = TempDir::new("list");
        let mut want = BTreeSet::new();
        for i in 0..70 {
            let name = format!("f{i:02}");
            fs::write(dir.join(&name), vec![7u8; i]).await.unwrap();
            want.insert(name);
        }
        fs::create_dir(dir.join("sub")).await.unwrap();

        want.insert("sub".to_string());

        let mut list = fs::read_dir(&dir.0).await.unwrap();
        let mut got = BTreeSet::new();
        // A `next_entry` dropped while its batch is being taken loses nothing.
        let mut first = Box::pin(list.next_entry());
        if let Poll::Ready(e) = first.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            got.insert(e.unwrap().unwrap().file_name().into_string().unwrap());
        }
        drop(first);
        while let Some(entry) = list.next_entry().await.unwrap() {
            let name = entry.file_name().into_string().unwrap();
            assert_eq!(entry.path(), dir.join(&name));
            let kind = entry.file_type().await.unwrap();
            if name == "sub" {
                assert!(kind.is_dir());
            } else {
                assert!(kind.is_file());
                let len = entry.metadata().await.unwrap().len() as usize;
                assert_eq!(len, name[1..].parse::<usize>().unwrap());
            }
            assert!(got.insert(name), "listed twice");
        }
        assert_eq!(got, want);
        assert!(list.next_entry().await.unwrap().is_none());
    }
}

rt_test! {
    fn file_write_seek_read_and_length() {
        let dir = TempDir::new("file");
        let path = dir.join("data.bin");
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .await
            .unwrap();
        // Three chunks of the pool's per-job maximum and a bit.
        let data = pattern((3 << 20) + 12_345);
        f.write_all(&data).await.unwrap();
        assert_eq!(f.metadata().await.unwrap().len(), data.len() as u64);
        assert_eq!(f.seek(SeekFrom::Start(0)).await.unwrap(), 0);
        assert!(read_all(&mut f).await == data);
        assert_eq!(f.seek(SeekFrom::Current(-10)).await.unwrap(), data.len() as u64 - 10);
        let mut tail = [0u8; 64];
        assert_eq!(f.read(&mut tail).await.unwrap(), 10);
        assert_eq!(tail[..10], data[data.len() - 10..]);
        assert_eq!(f.seek(SeekFrom::End(-3)).await.unwrap(), data.len() as u64 - 3);

        f.set_len(1000).await.unwrap();
        f.sync_all().await.unwrap();
        assert_eq!(fs::metadata(&path).await.unwrap().len(), 1000);
        f.seek(SeekFrom::Start(0)).await.unwrap();
        assert!(read_all(&mut f).await == data[..1000]);
    }
}

rt_test! {
    fn a_write_after_read_ahead_lands_where_the_reader_stopped() {
        let dir = TempDir::new("ahead");
        let path = dir.join("ahead.bin");
        fs::write(&path, pattern(200)).await.unwrap();
        let mut f = OpenOptions::new().read(true).write(true).open(&path).await.unwrap();
        // A read with a 100-byte buffer that pends, then finishes into a
        // 10-byte one: 90 bytes stay as read-ahead.
        let (mut big, mut small) = ([0u8; 100], [0u8; 10]);
        let mut calls = 0;
        let n = poll_fn(|cx| {
            calls += 1;
            let dst: &mut [u8] = if calls == 1 { &mut big } else { &mut small };
            Pin::new(&mut f).poll_read(cx, dst)
        })
        .await
        .unwrap();
        let at = if calls == 1 { 100 } else { 10 }; // the first poll rarely finishes
        assert_eq!(n, at);
        assert_eq!(f.seek(SeekFrom::Current(0)).await.unwrap(), at as u64);
        f.write_all(b"XYZ").await.unwrap();
        f.flush().await.unwrap();
        let back = fs::read(&path).await.unwrap();
        let mut want = pattern(200);
        want[at..at + 3].copy_from_slice(b"XYZ");
        assert_eq!(back, want);
    }
}

rt_test! {
    fn a_failed_write_is_reported_by_the_next_flush() {
        let dir = TempDir::new("werr");
        let path = dir.join("ro.txt");
        fs::write(&path, b"read only").await.unwrap();
        let mut f = File::open(&path).await.unwrap(); // opened for reading
        // Accepted at once: the write runs on the pool.
        f.write_all(b"nope").await.unwrap();
        let e = f.flush().await.unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("could not write {}: ", path.display())),
            "{e}"
        );
        f.flush().await.unwrap(); // reported once
        assert_eq!(fs::read(&path).await.unwrap(), b"read only");
    }
}

rt_test! {
    fn a_dropped_file_still_completes_its_write() {
        let dir = TempDir::new("dropped");
        let path = dir.join("late.txt");
        let mut f = File::create(&path).await.unwrap();
        let data = pattern(500_000);
        f.write_all(&data).await.unwrap();
        drop(f); // no flush
        let mut tries = 0;
        while fs::read(&path).await.unwrap() != data {
            tries += 1;
            assert!(tries < 500, "the dropped File's write never landed");
            spindle::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[test]
fn outside_a_runtime_fs_says_it_needs_one() {
    let path = Path::new("/tmp/spindle-outside");
    let mut read = pin!(fs::read(path));
    let Poll::Ready(r) = read.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
        panic!("fs::read outside a runtime should fail at once");
    };
    let e = r.unwrap_err();
    assert!(e.to_string().contains("/tmp/spindle-outside"), "{e}");
    assert!(e.to_string().contains("needs a spindle runtime"), "{e}");
}
