//! The `tlsgap` binary: see the README for usage.

use std::process::ExitCode;

fn main() -> ExitCode {
    match tlsgap::run() {
        Ok(code) => code,
        Err(err) => {
            if tlsgap::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("tlsgap: error: {}", tlsgap::error_text(&err));
            ExitCode::from(2)
        }
    }
}
