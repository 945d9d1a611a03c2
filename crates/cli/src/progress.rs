//! A progress bar on standard error (bytes, rate, ETA) for long runs on a terminal;
//! none when stderr is not a terminal (pipes, cron), with `--quiet`, or under CI.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::common::Prepared;
use crate::engine::BYTES_READ;
use crate::input::Compression;

/// A running progress bar; stops and clears itself when dropped.
#[derive(Debug)]
pub struct Progress {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Whether a bar should be shown: stderr is a terminal, not quiet, not CI.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// The total decompressed size when every input is a plain regular file.
fn total_bytes(prepared: &Prepared) -> Option<u64> {
    let mut total = 0;
    for (name, input) in prepared.names.iter().zip(&prepared.inputs) {
        match input {
            Ok(i) if i.compression == Compression::None && name != "-" => {
                total += std::fs::metadata(name).ok()?.len();
            }
            Ok(_) => return None,
            Err(_) => {}
        }
    }
    Some(total)
}

impl Progress {
    /// Start a bar for `prepared` (or nothing, see [`wanted`]).
    pub fn start(quiet: bool, prepared: &Prepared) -> Option<Progress> {
        if !wanted(quiet) {
            return None;
        }
        let bar = match total_bytes(prepared) {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec} ETA {eta}",
                )
                .ok()?,
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {bytes} read, {binary_bytes_per_sec}")
                    .ok()?,
            ),
        };
        let start = BYTES_READ.load(Ordering::Relaxed);
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::spawn(move || {
            // Short runs finish before the bar would show at all.
            for _ in 0..5 {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            while !stop.load(Ordering::Relaxed) {
                bar.set_position(BYTES_READ.load(Ordering::Relaxed) - start);
                bar.tick();
                std::thread::sleep(Duration::from_millis(200));
            }
            bar.finish_and_clear();
        });
        Some(Progress {
            done,
            thread: Some(thread),
        })
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
