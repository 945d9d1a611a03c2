//! Outputs that would destroy an input: `tlsgap tls -o access.log access.log` must not
//! replace the log with its report, nor `--invalid-lines` or `--state` truncate an
//! input while it is read. Checked before anything is read, by device and inode
//! (whatever the spelling: `./x`, a symbolic link, a hard link).

use std::path::Path;

use crate::{err, Result};

/// Device and inode of the regular file `path` names (symbolic links followed;
/// `-` is standard input), `None` for anything else or a file that does not exist.
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let path = if path.as_os_str() == "-" {
        Path::new("/dev/stdin")
    } else {
        path
    };
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

/// Which file an output names: an existing regular file by device and inode, a file
/// not made yet by its directory (resolved) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OutputId {
    File((u64, u64)),
    New(std::path::PathBuf),
}

fn output_id(path: &Path) -> Option<OutputId> {
    if let Some(id) = file_id(path) {
        return Some(OutputId::File(id));
    }
    if path.exists() {
        // A device, a FIFO, a directory: not a file one output would replace.
        return None;
    }
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(OutputId::New(std::fs::canonicalize(dir).ok()?.join(name)))
}

/// Refuse when an output (`(flag, path)`, e.g. `("-o", ...)`) is one of the `inputs`
/// or another output, whether it exists yet or not (audit of 2026-11-28: `--state X
/// -o X` left the state's JSON in the Prometheus file). Devices and FIFOs clash with
/// nothing.
pub fn check(inputs: &[&Path], outputs: &[(&str, &Path)]) -> Result<()> {
    let ids: Vec<(&Path, (u64, u64))> = inputs
        .iter()
        .filter_map(|p| file_id(p).map(|id| (*p, id)))
        .collect();
    let mut seen: Vec<(&str, &Path, OutputId)> = Vec::new();
    for &(flag, out) in outputs {
        if out.as_os_str() == "-" {
            continue;
        }
        let Some(id) = output_id(out) else { continue };
        let existing = match &id {
            OutputId::File(f) => Some(*f),
            OutputId::New(_) => None,
        };
        if let Some((input, _)) = ids.iter().find(|(_, i)| Some(*i) == existing) {
            let shown = if input.as_os_str() == "-" {
                "standard input".to_string()
            } else {
                format!("input {}", input.display())
            };
            return Err(err!(
                "{flag} {} is the {shown} (the same file): refusing to overwrite an input",
                out.display()
            ));
        }
        if let Some((other, other_path, _)) = seen.iter().find(|(_, _, i)| *i == id) {
            return Err(err!(
                "{flag} {} and {other} {} are the same file: give each output its own",
                out.display(),
                other_path.display()
            ));
        }
        seen.push((flag, out, id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_that_is_an_input_is_refused_whatever_its_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("access.log");
        std::fs::write(&log, "x\n").unwrap();
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&log, &link).unwrap();
        let hard = dir.path().join("hard.log");
        std::fs::hard_link(&log, &hard).unwrap();
        let dotted = dir.path().join(".").join("access.log");
        for out in [&log, &link, &hard, &dotted] {
            let e = check(&[log.as_path()], &[("-o", out.as_path())]).unwrap_err();
            assert!(
                e.to_string().contains("refusing to overwrite an input"),
                "{e}"
            );
        }
        let fresh = dir.path().join("report.txt");
        check(&[log.as_path()], &[("-o", fresh.as_path())]).unwrap();
        check(&[log.as_path()], &[("-o", Path::new("/dev/null"))]).unwrap();
    }

    #[test]
    fn two_outputs_on_one_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        std::fs::write(&out, "").unwrap();
        let e = check(
            &[],
            &[("-o", out.as_path()), ("--invalid-lines", out.as_path())],
        )
        .unwrap_err();
        assert!(e.to_string().contains("same file"), "{e}");
    }
}
