//! Whole-file and directory operations, each one blocking job.

use super::{on_path, run};
use crate::io_error::context;
use std::fs::Metadata;
use std::io;
use std::path::Path;

/// Reads the whole file at `path` ([`std::fs::read`] on the blocking pool).
///
/// Errors name the path: `could not read /etc/nope: No such file or
/// directory (os error 2)`.
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    on_path(path.as_ref(), "read", |p| std::fs::read(p)).await
}

/// Reads the whole file at `path` as UTF-8 ([`std::fs::read_to_string`]);
/// invalid UTF-8 is an [`io::ErrorKind::InvalidData`] error naming the path.
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    on_path(path.as_ref(), "read", |p| std::fs::read_to_string(p)).await
}

/// Writes `contents` to `path`, creating the file or truncating it
/// ([`std::fs::write`]). `contents` is copied for the job. Dropping the
/// future does not stop a write that was queued.
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let contents = contents.as_ref().to_vec();
    on_path(path.as_ref(), "write", move |p| std::fs::write(p, contents)).await
}

/// Creates the directory `path` ([`std::fs::create_dir`]): its parent must
/// exist and `path` must not.
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    on_path(path.as_ref(), "create directory", |p| {
        std::fs::create_dir(p)
    })
    .await
}

/// Creates the directory `path` and any missing parents
/// ([`std::fs::create_dir_all`]); a directory that exists already is fine.
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    on_path(path.as_ref(), "create directory", |p| {
        std::fs::create_dir_all(p)
    })
    .await
}

/// Removes the file `path` ([`std::fs::remove_file`]).
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    on_path(path.as_ref(), "remove", |p| std::fs::remove_file(p)).await
}

/// Removes the empty directory `path` ([`std::fs::remove_dir`]).
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    on_path(path.as_ref(), "remove directory", |p| {
        std::fs::remove_dir(p)
    })
    .await
}

/// Removes the directory `path` and everything in it
/// ([`std::fs::remove_dir_all`]), as one blocking job.
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    on_path(path.as_ref(), "remove directory", |p| {
        std::fs::remove_dir_all(p)
    })
    .await
}

/// The metadata of `path`, following symbolic links ([`std::fs::metadata`]).
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    on_path(path.as_ref(), "read metadata of", |p| std::fs::metadata(p)).await
}

/// Renames `from` to `to`, replacing `to` if it is a file
/// ([`std::fs::rename`]). Errors name both paths.
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    on_paths("rename", from.as_ref(), to.as_ref(), |f, t| {
        std::fs::rename(f, t)
    })
    .await
}

/// Copies the contents and permissions of the file `from` to `to`
/// ([`std::fs::copy`]); returns the bytes copied. Errors name both paths.
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    on_paths("copy", from.as_ref(), to.as_ref(), |f, t| {
        std::fs::copy(f, t)
    })
    .await
}

/// `f(from, to)` on the blocking pool; its error prefixed with "could not
/// {verb} {from} to {to}".
async fn on_paths<T, F>(verb: &str, from: &Path, to: &Path, f: F) -> io::Result<T>
where
    F: FnOnce(&Path, &Path) -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    let (f_owned, t_owned) = (from.to_path_buf(), to.to_path_buf());
    run(move || f(&f_owned, &t_owned)).await.map_err(|e| {
        let (from, to) = (from.display(), to.display());
        context(e, format_args!("could not {verb} {from} to {to}"))
    })
}
