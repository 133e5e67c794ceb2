//! `OpenOptions`: how a [`File`] is opened, as [`std::fs::OpenOptions`].

use super::{on_path, File};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Options for opening a [`File`]: [`std::fs::OpenOptions`]'s builder,
/// with an `async` [`open`](Self::open) that runs on the blocking pool.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let log = spindle::fs::OpenOptions::new()
///     .append(true)
///     .create(true)
///     .open("/tmp/app.log")
///     .await?;
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// Every option off (set at least one of read, write or append).
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Open for writing.
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Open for appending: every write goes to the end of the file.
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Truncate the file to length 0 when opening (needs write).
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Create the file if it does not exist (needs write or append).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Create the file, failing with [`io::ErrorKind::AlreadyExists`] if it
    /// exists (needs write or append).
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// The permission bits of a file this creates (before the umask).
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        self.0.mode(mode);
        self
    }

    /// Further `open(2)` flags (`libc::O_NOFOLLOW`, …).
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        self.0.custom_flags(flags);
        self
    }

    /// Opens `path` with these options, on the blocking pool.
    ///
    /// Errors name the path: `could not open /tmp/x/missing.txt: No such
    /// file or directory (os error 2)`, with the kind kept.
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref();
        let options = self.0.clone();
        let std = on_path(path, "open", move |p| options.open(p)).await?;
        Ok(File::with_path(std, path.into()))
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(options)
    }
}
