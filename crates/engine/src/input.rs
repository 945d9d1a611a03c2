//! Opening inputs: files or stdin, compressed (gzip, zstd, bzip2 — detected by their
//! magic bytes, not by the file name) or plain.
//!
//! Plain files are read with `read(2)` into line-aligned blocks rather than mapped:
//! logs are read while logrotate may truncate them (copytruncate), and a truncated
//! mapping kills the process with SIGBUS, while a short read is just the end.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

/// Standard input when it is a regular file (`tlsgap tls < access.log`), with where
/// its reading starts (its offset now, before anything reads it).
fn stdin_file() -> Option<(File, u64)> {
    use std::os::fd::AsFd;
    let mut file = File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let at = file.stream_position().ok()?;
    Some((file, at))
}

/// A path as text for messages and reports: as it is when it is UTF-8, else with
/// each byte that is not as `\xHH` (file names are bytes on Unix; a Latin-1 name
/// must be opened as it is and shown without loss).
pub fn path_text(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    tlsgap_parser::lossless_text(path.as_os_str().as_bytes()).into_owned()
}

/// The compression of an input, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (`1f 8b`), including concatenated members.
    Gzip,
    /// Zstandard (`28 b5 2f fd`).
    Zstd,
    /// bzip2 (`BZh`).
    Bzip2,
}

impl Compression {
    /// The compression of the file at `path`, from its first bytes (`None` when it
    /// cannot be read).
    pub fn of_file(path: &Path) -> Compression {
        let mut magic = Vec::with_capacity(4);
        match File::open(path) {
            Ok(f) => {
                let _ = f.take(4).read_to_end(&mut magic);
                Compression::sniff(&magic)
            }
            Err(_) => Compression::None,
        }
    }

    fn sniff(head: &[u8]) -> Compression {
        match head {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            [b'B', b'Z', b'h', ..] => Compression::Bzip2,
            _ => Compression::None,
        }
    }
}

/// An opened input: its name and a reader of its (decompressed) bytes.
pub struct Input {
    /// The path as given (shown: bytes that are not UTF-8 as `\xHH`), or `-` for
    /// stdin.
    pub name: String,
    /// How it was compressed.
    pub compression: Compression,
    /// Bytes already read for peeking; they come before `reader`'s.
    head: Vec<u8>,
    head_pos: usize,
    /// An error met while peeking, returned once the peeked bytes are consumed.
    pending_error: Option<io::Error>,
    reader: Box<dyn Read + Send>,
    /// A plain regular file and the offset reading starts at: workers can then read
    /// their own ranges of it ([`Input::take_plain`]).
    plain: Option<(File, u64)>,
    /// The bytes left to read when known: a plain regular file's size past the offset.
    left: Option<u64>,
    /// Whether reading starts at the content's first byte and nothing was read yet
    /// (peeking aside): only then can a leading hole be skipped ([`Input::skip_hole`]).
    at_start: bool,
    /// The NUL bytes skipped at its start.
    hole: u64,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("name", &self.name)
            .field("compression", &self.compression)
            .finish()
    }
}

impl Input {
    /// Open `name` (`-` is stdin).
    pub fn open(name: &Path) -> io::Result<Input> {
        let mut regular = None;
        let mut size = None;
        let raw: Box<dyn Read + Send> = if name.as_os_str() == "-" {
            regular = stdin_file();
            Box::new(io::stdin())
        } else {
            let file = File::open(name)?;
            let meta = file.metadata()?;
            if meta.is_dir() {
                return Err(io::Error::other("is a directory"));
            }
            if meta.is_file() {
                regular = file.try_clone().ok().map(|f| (f, 0));
                size = Some(meta.len());
            }
            Box::new(file)
        };
        let mut raw = BufReader::with_capacity(1 << 16, raw);
        let mut magic = Vec::with_capacity(4);
        (&mut raw).take(4).read_to_end(&mut magic)?;
        let compression = Compression::sniff(&magic);
        let chained = Cursor::new(magic).chain(raw);
        let reader: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(chained),
            Compression::Gzip => Box::new(GzMembers::new(BufReader::new(chained))),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(chained)?),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(chained)),
        };
        Ok(Input {
            name: path_text(name),
            compression,
            head: Vec::new(),
            head_pos: 0,
            pending_error: None,
            reader,
            plain: regular.filter(|_| compression == Compression::None),
            left: size.filter(|_| compression == Compression::None),
            at_start: true,
            hole: 0,
        })
    }

    /// Open `name` positioned `offset` bytes into its decompressed content (for
    /// incremental runs, see [`crate::state`]): plain files seek, compressed ones skip
    /// `offset` decompressed bytes. An offset past the end gives an input that is at
    /// its end. Standard input cannot start at an offset other than 0.
    pub fn open_at(name: &Path, offset: u64) -> io::Result<Input> {
        if offset == 0 {
            return Input::open(name);
        }
        if name.as_os_str() == "-" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "standard input cannot be read from an offset",
            ));
        }
        let mut file = File::open(name)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        let mut magic = Vec::with_capacity(4);
        (&mut file).take(4).read_to_end(&mut magic)?;
        let compression = Compression::sniff(&magic);
        // Sniff and decode from the same open file, so that a rotation between the two
        // cannot mix two files.
        let mut plain = None;
        let reader: Box<dyn Read + Send> = if compression == Compression::None {
            if meta.is_file() {
                plain = file.try_clone().ok().map(|f| (f, offset));
            }
            file.seek(SeekFrom::Start(offset))?;
            Box::new(BufReader::with_capacity(1 << 16, file))
        } else {
            file.seek(SeekFrom::Start(0))?;
            let raw = BufReader::with_capacity(1 << 16, file);
            match compression {
                Compression::Gzip => Box::new(GzMembers::new(raw)),
                Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(raw)?),
                Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(raw)),
                Compression::None => Box::new(raw),
            }
        };
        let mut input = Input {
            name: path_text(name),
            compression,
            head: Vec::new(),
            head_pos: 0,
            pending_error: None,
            left: plain.as_ref().map(|_| meta.len().saturating_sub(offset)),
            reader,
            plain,
            at_start: false,
            hole: 0,
        };
        if compression != Compression::None {
            io::copy(&mut (&mut input).take(offset), &mut io::sink())?;
        }
        Ok(input)
    }

    /// The file and the offset reading starts at, when the input is a plain
    /// (uncompressed) regular file: positioned reads of it then need no reader.
    /// Taking it leaves the input readable as before.
    pub fn take_plain(&mut self) -> Option<(File, u64)> {
        self.plain.take()
    }

    /// How many bytes are left to read, when known (a plain regular file).
    pub fn len_hint(&self) -> Option<u64> {
        self.left
    }

    /// Skip the NUL bytes the content starts with, if reading starts at its first
    /// byte; how many there were (all of them so far: a second call adds none).
    ///
    /// A log truncated in place (logrotate's `copytruncate`) while its writer keeps its
    /// file offset (a program started with `> access.log`, not appending) gets its next
    /// line at that offset: the file then starts with a hole as long as the file was,
    /// read as NUL bytes, with no line end in it. Taken as a line, the hole and the
    /// record after it made one `binary` line (or, longer than the line cap, a
    /// `too_long` one, and no format could be detected): the record was lost. The
    /// server never writes a NUL byte, so a run of them where the content starts is no
    /// record; the first line starts after it. NUL bytes anywhere else are left as
    /// they are (a line holding one is `binary`).
    pub fn skip_hole(&mut self) -> u64 {
        if !self.at_start {
            return self.hole;
        }
        self.at_start = false;
        let mut skipped = 0u64;
        // Nothing was read: the peeked bytes start at the content's first byte.
        while !self.peek(1 << 16).is_empty() {
            let zeros = self.head.iter().take_while(|&&b| b == 0).count();
            skipped += zeros as u64;
            self.head.drain(..zeros);
            if !self.head.is_empty() {
                break;
            }
            // All NUL: read on (a read error is kept for the next read).
            if self.pending_error.is_some() {
                break;
            }
        }
        if skipped > 0 {
            self.hole = skipped;
            if let Some((_, start)) = self.plain.as_mut() {
                *start += skipped;
            }
            self.left = self.left.map(|l| l.saturating_sub(skipped));
        }
        self.hole
    }

    /// The NUL bytes [`Input::skip_hole`] skipped.
    pub fn hole(&self) -> u64 {
        self.hole
    }

    /// Up to `n` first bytes (decompressed), without consuming them.
    /// A read error while peeking is kept and reported by the next `read` after the
    /// peeked bytes, so the data before damage is still processed.
    pub fn peek(&mut self, n: usize) -> &[u8] {
        while self.head.len() < n && self.pending_error.is_none() {
            let mut buf = vec![0u8; (n - self.head.len()).min(1 << 16)];
            match self.reader.read(&mut buf) {
                Ok(0) => break,
                Ok(got) => self.head.extend_from_slice(buf.get(..got).unwrap_or(&[])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => self.pending_error = Some(e),
            }
        }
        self.head.get(..n.min(self.head.len())).unwrap_or(&[])
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.at_start = false;
        if self.head_pos < self.head.len() {
            let rest = self.head.get(self.head_pos..).unwrap_or(&[]);
            let n = rest.len().min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
                dst.copy_from_slice(src);
            }
            self.head_pos += n;
            return Ok(n);
        }
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        self.reader.read(buf)
    }
}

/// gzip data as `gzip -d` reads it: members one after another, and zero bytes after
/// the last member ignored (tape-style padding, which `gzip -t` accepts); anything
/// else after a member is damage.
struct GzMembers<R: BufRead> {
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> GzMembers<R> {
    fn new(r: R) -> Self {
        GzMembers {
            member: Some(flate2::bufread::GzDecoder::new(r)),
        }
    }
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The member ended: another one, zero padding to the end, or damage.
            let raw = member.get_mut();
            loop {
                let avail = raw.fill_buf()?;
                let Some(&first) = avail.first() else {
                    self.member = None;
                    return Ok(0);
                };
                if first == 0x1f {
                    break;
                }
                let zeros = avail.iter().take_while(|&&b| b == 0).count();
                if zeros == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bytes after the last gzip member that are neither a member nor zero padding",
                    ));
                }
                raw.consume(zeros);
            }
            let Some(done) = self.member.take() else {
                return Ok(0);
            };
            self.member = Some(flate2::bufread::GzDecoder::new(done.into_inner()));
        }
    }
}

/// Whether `path` can be opened for reading as an input (not a directory); the file
/// is closed again at once.
pub fn check_readable(path: &Path) -> io::Result<()> {
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    Ok(())
}

/// A readable explanation of a read error, naming compressed damage as such.
pub fn describe_read_error(input: &Input, err: &io::Error, bytes_before: u64) -> String {
    match input.compression {
        Compression::None => format!("read error after {bytes_before} bytes: {err}"),
        c => format!(
            "{} data is truncated or corrupt after {bytes_before} bytes of output \
             (lines before the damage were counted): {err}",
            match c {
                Compression::Gzip => "gzip",
                Compression::Zstd => "zstd",
                Compression::Bzip2 => "bzip2",
                Compression::None => "plain",
            }
        ),
    }
}

/// What an input holds, judged from its first lines (decompressed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// strace output: most sampled lines are system calls, signals or exits.
    Strace,
    /// An access log: a known log format fits most sampled lines.
    AccessLog,
    /// Neither, empty, or unreadable.
    Unknown,
}

/// Read up to 64 KiB (at most 50 lines) of the file `name` (not `-`: standard input
/// cannot be read twice) and say whether it is strace output or an access log (in
/// `log_format`, as `--log-format` takes it, or a preset when it is `auto`). For
/// telling apart the files a shell glob put after a flag that takes several values.
pub fn sniff(name: &Path, log_format: &str) -> Content {
    if name.as_os_str() == "-" {
        return Content::Unknown;
    }
    let Ok(mut input) = Input::open(name) else {
        return Content::Unknown;
    };
    input.skip_hole();
    let mut head = Vec::new();
    if input.take(64 * 1024).read_to_end(&mut head).is_err() && head.is_empty() {
        return Content::Unknown;
    }
    let lines: Vec<&[u8]> = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .take(50)
        .collect();
    if lines.is_empty() {
        return Content::Unknown;
    }
    let traced = lines
        .iter()
        .filter(|l| tlsgap_parser::strace::parse_line(l).is_ok())
        .count();
    if traced * 2 > lines.len() {
        return Content::Strace;
    }
    let fits = if log_format == "auto" {
        tlsgap_parser::detect::detect(&lines).map_or(0, |d| d.parsed)
    } else {
        let Ok(format) = tlsgap_parser::Format::compile(log_format) else {
            return Content::Unknown;
        };
        let mut parser = tlsgap_parser::LineParser::new(&format);
        let mut rec = tlsgap_parser::Record::new(&format);
        lines
            .iter()
            .filter(|l| parser.parse(l, &mut rec).is_ok())
            .count()
    };
    if fits * 2 > lines.len() {
        Content::AccessLog
    } else {
        Content::Unknown
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::*;

    #[test]
    fn the_size_hint_is_what_is_left_of_a_plain_file_and_unknown_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("trace.1");
        std::fs::write(&plain, b"0123456789\n").unwrap();
        let mut input = Input::open(&plain).unwrap();
        assert_eq!(input.len_hint(), Some(11));
        let mut all = Vec::new();
        input.read_to_end(&mut all).unwrap();
        assert_eq!(all.len(), 11);
        assert_eq!(Input::open_at(&plain, 4).unwrap().len_hint(), Some(7));
        let gz = dir.path().join("trace.2.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"0123456789\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert_eq!(Input::open(&gz).unwrap().len_hint(), None);
        assert_eq!(Input::open_at(&gz, 4).unwrap().len_hint(), None);
    }

    /// What is left of `input` once read.
    fn rest(mut input: Input) -> Vec<u8> {
        let mut all = Vec::new();
        input.read_to_end(&mut all).unwrap();
        all
    }

    #[test]
    fn a_hole_where_the_content_starts_is_skipped_and_counted_and_nul_elsewhere_kept() {
        let dir = tempfile::tempdir().unwrap();
        let lines = b"a\0b\nc\n\0\0";
        // Longer than one read (64 KiB), and not a multiple of it.
        let hole = 200_001;
        let mut holed = vec![0u8; hole];
        holed.extend_from_slice(lines);
        let plain = dir.path().join("access.log");
        std::fs::write(&plain, &holed).unwrap();
        let mut input = Input::open(&plain).unwrap();
        // Peeking first (as format detection does) changes nothing.
        assert_eq!(input.peek(3), &[0, 0, 0]);
        assert_eq!(input.skip_hole(), hole as u64);
        assert_eq!(
            input.skip_hole(),
            hole as u64,
            "a second call skips nothing more"
        );
        assert_eq!(input.peek(2), b"a\0");
        assert_eq!(input.len_hint(), Some(lines.len() as u64));
        assert_eq!(input.take_plain().map(|(_, at)| at), Some(hole as u64));
        assert_eq!(rest(input), lines);
        // Compressed, and from standard input's point of view (a stream).
        let gz = dir.path().join("access.log.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&holed).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let mut input = Input::open(&gz).unwrap();
        assert_eq!(input.skip_hole(), hole as u64);
        assert_eq!(input.hole(), hole as u64);
        assert_eq!(rest(input), lines);
        // Started inside the content (an incremental run): nothing is skipped.
        let mut input = Input::open_at(&plain, 5).unwrap();
        assert_eq!(input.skip_hole(), 0);
        assert_eq!(rest(input).len(), holed.len() - 5);
        // After a read, nothing either.
        let mut input = Input::open(&plain).unwrap();
        let mut one = [9u8; 1];
        input.read_exact(&mut one).unwrap();
        assert_eq!(input.skip_hole(), 0);
        // No hole; only NUL bytes; empty.
        let clean = dir.path().join("clean.log");
        std::fs::write(&clean, lines).unwrap();
        let mut input = Input::open(&clean).unwrap();
        assert_eq!(input.skip_hole(), 0);
        assert_eq!(rest(input), lines);
        let zeros = dir.path().join("zeros.log");
        std::fs::write(&zeros, vec![0u8; 70_000]).unwrap();
        let mut input = Input::open(&zeros).unwrap();
        assert_eq!(input.skip_hole(), 70_000);
        assert!(rest(input).is_empty());
        let empty = dir.path().join("empty.log");
        std::fs::write(&empty, b"").unwrap();
        assert_eq!(Input::open(&empty).unwrap().skip_hole(), 0);
    }
}
