//! The `tlsgap` command-line tool: clap definitions, flags turned into the engine's
//! options, one analysis call per command, and the emitters. `main.rs` only calls
//! [`run()`]; the work is done by `tlsgap-engine`.

pub mod auth_cmd;
pub mod check_cmd;
pub mod ciphers_cmd;
pub mod cli;
pub mod clients_cmd;
pub mod export_cmd;
pub mod gaps_cmd;
pub mod merge_cmd;
pub mod report_cmd;
pub mod run;
pub mod tls_cmd;
pub mod whatif_cmd;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use cli::{Cli, Command};

/// Parse the command line and run the command. Usage errors exit 2 (clap's own), 3 for
/// `check` (the monitoring-plugin convention).
pub fn run() -> Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return Ok(check_cmd::clap_error_exit(err)),
    };
    match cli.command {
        Command::Tls(args) => tls_cmd::run(args),
        Command::Export(args) => export_cmd::run(args),
        Command::Ciphers(args) => ciphers_cmd::run(args),
        Command::Whatif(args) => whatif_cmd::run(args),
        Command::Gaps(args) => gaps_cmd::run(args),
        Command::Auth(args) => auth_cmd::run(args),
        Command::Report(args) => report_cmd::run(args),
        Command::Check(args) => check_cmd::run(args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::Clients(args) => clients_cmd::run(args),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "tlsgap", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => {
            let cmd = <Cli as clap::CommandFactory>::command();
            match dir {
                None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
                Some(dir) => {
                    for (file, page) in man_pages(cmd) {
                        let mut out = tlsgap_output::file::open(Some(&dir.join(file)))?;
                        std::io::Write::write_all(&mut out, &page)?;
                        out.finish()?;
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The manual pages: `tlsgap.1`, then `tlsgap-COMMAND.1` for each subcommand (named
/// as `git` names its pages, with the synopsis `tlsgap COMMAND ...`), as
/// (file name, roff).
pub fn man_pages(cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    let version = cmd.get_version().unwrap_or_default().to_string();
    let mut pages = Vec::new();
    let mut render = |file: String, page: clap::Command| {
        let mut roff = Vec::new();
        if clap_mangen::Man::new(page).render(&mut roff).is_ok() {
            pages.push((file, roff));
        }
    };
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name().to_string();
        let page = sub
            .clone()
            .name(format!("tlsgap-{name}"))
            .bin_name(format!("tlsgap {name}"))
            .version(version.clone());
        render(format!("tlsgap-{name}.1"), page);
    }
    render("tlsgap.1".to_string(), cmd);
    pages.rotate_right(1);
    pages
}

/// The error as `main` prints it: the whole chain, each line escaped for the terminal
/// (messages quote file names and log lines).
pub fn error_text(err: &anyhow::Error) -> String {
    format!("{err:#}")
        .split('\n')
        .map(|l| tlsgap_output::escape::terminal(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `err` is a closed pipe (`tlsgap ... | head`), which is not an error.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.to_string().contains("Broken pipe")
    })
}
