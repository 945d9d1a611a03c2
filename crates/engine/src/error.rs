//! The engine's error: a kind a front end can act on (exit codes, monitoring states),
//! a message that names the file (and line) where it can, and the cause underneath.

use std::fmt;

/// What went wrong, broadly. Front ends map kinds to exit codes; the message says the
/// rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The options do not make sense (a bad `--log-format`, a window bound that is not
    /// a time, a format without the fields the analysis needs).
    Invalid,
    /// Nothing could be processed: no input could be opened or read.
    NoInput,
    /// Reading or writing failed (an input, a state file, an output).
    Io,
    /// Another run holds the `--state` lock.
    Locked,
}

/// An engine error. `Display` shows the message; `source()` the cause, so that
/// `anyhow`'s `{:#}` prints `message: cause`.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// `Result` with the engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message` and no cause.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Invalid options: see [`ErrorKind::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Invalid, message)
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the cause.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `kind` instead.
    pub fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.kind = kind;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            // `{:#}` shows the whole chain, as anyhow does.
            write!(f, "{}", self.message)?;
            let mut next = self.source.as_deref().map(|e| e as &dyn std::error::Error);
            while let Some(e) = next {
                write!(f, ": {e}")?;
                next = e.source();
            }
            Ok(())
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// An I/O error without context becomes its own message (kind [`ErrorKind::Io`]).
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, e.to_string())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::new(ErrorKind::Io, e.to_string())
    }
}

#[cfg(feature = "parquet")]
impl From<polars::prelude::PolarsError> for Error {
    fn from(e: polars::prelude::PolarsError) -> Error {
        Error::new(ErrorKind::Io, e.to_string())
    }
}

/// Add context to a failure, as `anyhow::Context` does: the failure becomes the cause.
pub trait Context<T> {
    /// Wrap the failure in `message` (kind [`ErrorKind::Io`]).
    fn context(self, message: impl Into<String>) -> Result<T>;
    /// Wrap the failure in the message `f` makes, only when there is one.
    fn with_context<M: Into<String>>(self, f: impl FnOnce() -> M) -> Result<T>;
}

impl<T, E> Context<T> for std::result::Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn context(self, message: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error {
            kind: ErrorKind::Io,
            message: message.into(),
            source: Some(Box::new(e)),
        })
    }

    fn with_context<M: Into<String>>(self, f: impl FnOnce() -> M) -> Result<T> {
        self.map_err(|e| Error {
            kind: ErrorKind::Io,
            message: f().into(),
            source: Some(Box::new(e)),
        })
    }
}

/// Return early with an [`ErrorKind::Invalid`] error whose message is `format!(...)`.
#[macro_export]
#[doc(hidden)]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::invalid(format!($($arg)*)))
    };
}

/// An [`ErrorKind::Invalid`] error whose message is `format!(...)`.
#[macro_export]
#[doc(hidden)]
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::Error::invalid(format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_display_shows_the_chain() {
        let e: Result<()> = Err(std::io::Error::other("disk full")).context("writing out.json");
        let e = e.unwrap_err();
        assert_eq!(format!("{e}"), "writing out.json");
        assert_eq!(format!("{e:#}"), "writing out.json: disk full");
        assert_eq!(e.kind(), ErrorKind::Io);
    }
}
