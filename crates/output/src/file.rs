//! Where results go: standard output, or a path.
//!
//! A path is never destroyed by being written to:
//! - a regular file (or nothing yet) is replaced atomically: a temporary file in the
//!   same directory, written, flushed to disk, given the replaced file's mode and
//!   owner, renamed into place, and the directory flushed;
//! - a symbolic link is followed: the file it points to is replaced that way and the
//!   link stays a link;
//! - a character device, a FIFO or a socket (`/dev/null`, `/dev/stdout`, a named
//!   pipe a dashboard reads) is written to directly, never replaced by a regular file;
//! - `/dev/stdout`, `/dev/fd/1` and `/proc/self/fd/1` are standard output itself, and
//!   `/dev/stderr`, `/dev/fd/2` and `/proc/self/fd/2` standard error's descriptor (the
//!   file a stream was redirected to is neither replaced nor reopened);
//! - anything else (a directory, a block device) is an error naming the path.
//!
//! Every error names the path (or "standard output").

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// `err` with `what` in front of its message, keeping its kind.
fn context(err: io::Error, what: String) -> io::Error {
    io::Error::new(err.kind(), format!("{what}: {err}"))
}

/// An output stream.
#[derive(Debug)]
pub enum Output {
    /// Standard output.
    Stdout {
        /// The stream.
        w: BufWriter<io::Stdout>,
        /// See [`Output::drain_closed_pipe`].
        drain: bool,
        /// The reader went away (and `drain` is set): the rest is discarded.
        closed: bool,
    },
    /// A device, FIFO or socket, written to directly.
    Direct {
        /// The opened path.
        file: BufWriter<File>,
        /// Its name, for messages.
        dest: PathBuf,
    },
    /// A temporary file renamed to `dest` by [`Output::finish`].
    File {
        /// The temporary file.
        file: BufWriter<File>,
        /// Its path.
        tmp: PathBuf,
        /// Where it goes (symbolic links resolved).
        dest: PathBuf,
        /// The name as given, for messages.
        shown: PathBuf,
    },
}

/// Whether `path` is spelled as standard output.
fn is_stdout_alias(path: &Path) -> bool {
    matches!(
        path.to_str(),
        Some("/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1")
    )
}

/// Whether `path` is spelled as standard error.
fn is_stderr_alias(path: &Path) -> bool {
    matches!(
        path.to_str(),
        Some("/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2")
    )
}

/// Follow `path` through symbolic links (relative targets are relative to the link's
/// directory) to what it finally names, which may not exist yet.
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Open `path` (`None` = stdout).
pub fn open(path: Option<&Path>) -> io::Result<Output> {
    let Some(shown) = path else {
        return Ok(stdout());
    };
    if is_stdout_alias(shown) {
        return Ok(stdout());
    }
    if is_stderr_alias(shown) {
        // The process's own descriptor, duplicated: replacing or reopening the file
        // standard error was redirected to (`2>> cron.log`) would destroy it.
        use std::os::fd::AsFd;
        let named = |e: io::Error| context(e, format!("writing {}", shown.display()));
        let fd = io::stderr().as_fd().try_clone_to_owned().map_err(named)?;
        return Ok(Output::Direct {
            file: BufWriter::with_capacity(1 << 16, File::from(fd)),
            dest: shown.to_path_buf(),
        });
    }
    let named = |e: io::Error| context(e, format!("writing {}", shown.display()));
    let dest = resolve_links(shown).map_err(named)?;
    let existing = match fs::metadata(&dest) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(named(e)),
    };
    if let Some(m) = &existing {
        let t = m.file_type();
        if t.is_char_device() || t.is_fifo() || t.is_socket() {
            let file = OpenOptions::new().write(true).open(&dest).map_err(named)?;
            return Ok(Output::Direct {
                file: BufWriter::with_capacity(1 << 16, file),
                dest: shown.to_path_buf(),
            });
        }
        if t.is_dir() {
            return Err(named(io::Error::other("it is a directory")));
        }
        if !t.is_file() {
            return Err(named(io::Error::other(
                "it is neither a regular file nor a character device or FIFO; refusing to replace it",
            )));
        }
    }
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dest.with_file_name(format!(".{name}.tlsgap-{}.tmp", std::process::id()));
    let file =
        File::create(&tmp).map_err(|e| context(e, format!("creating {}", shown.display())))?;
    let out = Output::File {
        file: BufWriter::with_capacity(1 << 16, file),
        tmp,
        dest,
        shown: shown.to_path_buf(),
    };
    if let (Some(m), Output::File { file, .. }) = (&existing, &out) {
        // The replacement keeps what the replaced file had: its mode and, when this
        // process may set them (root), its owner and group.
        let f = file.get_ref();
        f.set_permissions(fs::Permissions::from_mode(m.mode() & 0o7777))
            .map_err(named)?;
        let _ = std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid()));
    }
    Ok(out)
}

fn stdout() -> Output {
    Output::Stdout {
        w: BufWriter::with_capacity(1 << 16, io::stdout()),
        drain: false,
        closed: false,
    }
}

/// Run `op` on standard output unless its reader is gone; a closed pipe, when
/// draining, marks it gone and succeeds.
fn on_stdout(
    w: &mut BufWriter<io::Stdout>,
    drain: bool,
    closed: &mut bool,
    op: impl FnOnce(&mut BufWriter<io::Stdout>) -> io::Result<()>,
) -> io::Result<()> {
    if *closed {
        return Ok(());
    }
    match op(w) {
        Err(e) if drain && e.kind() == io::ErrorKind::BrokenPipe => {
            *closed = true;
            // Whatever is buffered can never be written: drop it, or dropping the
            // writer would try again.
            let _ = std::mem::replace(w, BufWriter::new(io::stdout())).into_parts();
            Ok(())
        }
        r => r,
    }
}

impl Output {
    /// When standard output is a pipe whose reader goes away (`| head`), go on
    /// without error, discarding the rest, instead of failing at the first write: a
    /// `--state` run must read its inputs to the end and record them, so that a closed
    /// pipe is success for both the result and the state. Without it the closed pipe
    /// is a `BrokenPipe` error that ends the run at once (which `main` treats as
    /// success, state or not: there is none to save).
    pub fn drain_closed_pipe(mut self, drain: bool) -> Output {
        if let Output::Stdout { drain: d, .. } = &mut self {
            *d = drain;
        }
        self
    }

    /// What the output is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Output::Stdout { .. } => "standard output".into(),
            Output::Direct { dest, .. } | Output::File { shown: dest, .. } => {
                dest.display().to_string()
            }
        }
    }

    /// Flush, make durable, and move a file into place. Only after this returned `Ok`
    /// is the result written.
    pub fn finish(mut self) -> io::Result<()> {
        let what = self.describe();
        let named = |e: io::Error| context(e, format!("writing {what}"));
        match &mut self {
            Output::Stdout { w, drain, closed } => {
                on_stdout(w, *drain, closed, |w| w.flush()).map_err(named)?;
                if !*closed {
                    sync_stdout().map_err(named)?;
                }
            }
            Output::Direct { file, .. } => file.flush().map_err(named)?,
            Output::File {
                file, tmp, dest, ..
            } => {
                file.flush().map_err(named)?;
                file.get_ref().sync_all().map_err(named)?;
                fs::rename(&*tmp, &*dest)
                    .map_err(|e| context(e, format!("renaming into {what}")))?;
                // The rename itself is durable once the directory is.
                let dir = match dest.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                if let Ok(d) = File::open(&dir) {
                    d.sync_all().map_err(named)?;
                }
            }
        }
        Ok(())
    }
}

/// When standard output is a regular file (`> report.txt`), flush it to disk: the
/// result is durable before `--state` says it was delivered. Pipes and terminals need
/// nothing.
fn sync_stdout() -> io::Result<()> {
    use std::os::fd::AsFd;
    let stdout = io::stdout();
    let owned = stdout.as_fd().try_clone_to_owned()?;
    let file = File::from(owned);
    if file.metadata()?.is_file() {
        file.sync_all()?;
    }
    Ok(())
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let r = match self {
            Output::Stdout { w, drain, closed } => {
                on_stdout(w, *drain, closed, |w| w.write_all(buf))
            }
            Output::Direct { file, .. } | Output::File { file, .. } => file.write_all(buf),
        };
        r.map_err(|e| context(e, format!("writing {}", self.describe())))
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = match self {
            Output::Stdout { w, drain, closed } => on_stdout(w, *drain, closed, |w| w.flush()),
            Output::Direct { file, .. } | Output::File { file, .. } => file.flush(),
        };
        r.map_err(|e| context(e, format!("writing {}", self.describe())))
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // An output abandoned half-way (an error) must not leave its temporary file.
        if let Output::File { tmp, .. } = self {
            if tmp.exists() {
                let _ = fs::remove_file(&*tmp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        let mut out = open(Some(path)).unwrap();
        out.write_all(text.as_bytes()).unwrap();
        out.finish().unwrap();
    }

    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("reports/today.txt");
        fs::create_dir(dir.path().join("reports")).unwrap();
        fs::write(&target, "old").unwrap();
        let link = dir.path().join("latest.txt");
        std::os::unix::fs::symlink("reports/today.txt", &link).unwrap();
        write(&link, "new");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.prom");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write(&p, "new");
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o7777, 0o640);
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
    }

    #[test]
    fn a_fifo_is_written_to_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("feed");
        // The standard library has no mkfifo: use coreutils'.
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
        };
        write(&fifo, "through the pipe");
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_directory_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = open(Some(dir.path())).unwrap_err();
        assert!(
            e.to_string().contains(&dir.path().display().to_string()),
            "{e}"
        );
    }
}
