//! Where results go: standard output or a file written atomically (a temporary file
//! in the same directory, renamed into place when complete).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// `err` with `what` in front of its message, keeping its kind.
fn context(err: io::Error, what: String) -> io::Error {
    io::Error::new(err.kind(), format!("{what}: {err}"))
}

/// An output stream.
#[derive(Debug)]
pub enum Output {
    /// Standard output.
    Stdout(BufWriter<io::Stdout>),
    /// A temporary file renamed to `dest` by [`Output::finish`].
    File {
        /// The temporary file.
        file: BufWriter<File>,
        /// Its path.
        tmp: PathBuf,
        /// Where it goes.
        dest: PathBuf,
    },
}

/// Open `path` (`None` = stdout).
pub fn open(path: Option<&Path>) -> io::Result<Output> {
    let Some(dest) = path else {
        return Ok(Output::Stdout(BufWriter::with_capacity(
            1 << 16,
            io::stdout(),
        )));
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dest.with_file_name(format!(".{name}.tlsgap-{}.tmp", std::process::id()));
    let file =
        File::create(&tmp).map_err(|e| context(e, format!("creating {}", dest.display())))?;
    Ok(Output::File {
        file: BufWriter::with_capacity(1 << 16, file),
        tmp,
        dest: dest.to_path_buf(),
    })
}

impl Output {
    /// Flush, and move a file into place.
    pub fn finish(mut self) -> io::Result<()> {
        match &mut self {
            Output::Stdout(w) => w.flush()?,
            Output::File { file, tmp, dest } => {
                file.flush()
                    .map_err(|e| context(e, format!("writing {}", dest.display())))?;
                file.get_ref().sync_all().ok();
                std::fs::rename(&*tmp, &*dest)
                    .map_err(|e| context(e, format!("renaming into {}", dest.display())))?;
            }
        }
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File { file, .. } => file.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.write_all(buf),
            Output::File { file, .. } => file.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File { file, .. } => file.flush(),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // An output abandoned half-way (an error) must not leave its temporary file.
        if let Output::File { tmp, .. } = self {
            if tmp.exists() {
                let _ = std::fs::remove_file(&*tmp);
            }
        }
    }
}
