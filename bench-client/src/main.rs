//! `bench-client load URL …`, `bench-client suite …`, `bench-client compare
//! A B`, …; see `--help`. Exit codes are documented (and decided) in
//! [`bench_client::cli::Outcome`].

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bench_client::cli;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(outcome) => return outcome.into(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed)) {
            eprintln!("warning: cannot catch Ctrl-C: {e}");
        }
    }
    cli::run(cli, &stop).into()
}
