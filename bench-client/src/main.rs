//! `bench-client load URL …`, `bench-client suite …` and `bench-client
//! compare A B`; see `--help`.
//!
//! Exit codes: 0 success; 1 a run failed or was incomplete (errors counted,
//! preflight mismatch, a server died), or the suite could not start (the
//! build failed, a server binary is missing), with one line on stderr; 2 bad
//! input; 130 interrupted (Ctrl-C or SIGTERM), after writing what was
//! measured and stopping the servers.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bench_client::plan::{Cli, Command};
use bench_client::{calibrate, compare, load, report, responder, suite};
use clap::Parser;
use clap::error::ErrorKind;

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.render().to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: bad arguments"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed)) {
            eprintln!("warning: cannot catch Ctrl-C: {e}");
        }
    }
    match cli.command {
        Command::Load(args) => {
            let cmd = match args.plan() {
                Ok(cmd) => cmd,
                Err(e) => return usage_error(&e),
            };
            if let Err(e) = bench_client::limits::ensure_fds_for(cmd.settings.connections.get()) {
                return usage_error(&e);
            }
            match load::run(&cmd, &stop) {
                Ok(_) if stop.load(Ordering::Relaxed) => ExitCode::from(EXIT_INTERRUPTED),
                Ok(figures) if figures.is_failure() => ExitCode::from(EXIT_FAILED),
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => failed(&e),
            }
        }
        Command::Flamegraph(args) => {
            let plan = match args.plan() {
                Ok(plan) => plan,
                Err(e) => return usage_error(&e),
            };
            match suite::flamegraph_command(&plan, &stop) {
                Ok(svg) => {
                    println!("{}", svg.display());
                    ExitCode::SUCCESS
                }
                Err(e) if stop.load(Ordering::Relaxed) => {
                    eprintln!("error: {e:#}");
                    ExitCode::from(EXIT_INTERRUPTED)
                }
                Err(e) => failed(&e),
            }
        }
        Command::Calibrate(args) => {
            let plan = match args.plan() {
                Ok(plan) => plan,
                Err(e) => return usage_error(&e),
            };
            if let Err(e) = bench_client::limits::ensure_fds_for(plan.settings.connections.get()) {
                return usage_error(&e);
            }
            match calibrate::measure(&plan, &stop) {
                Ok(_) if stop.load(Ordering::Relaxed) => ExitCode::from(EXIT_INTERRUPTED),
                Ok(ceiling) => {
                    println!("{}", ceiling.summary());
                    if ceiling.figures.is_failure() { ExitCode::from(EXIT_FAILED) } else { ExitCode::SUCCESS }
                }
                Err(e) => failed(&e),
            }
        }
        Command::Responder(args) => {
            if let Err(e) = bench_client::limits::ensure_fds_for(4096) {
                eprintln!("warning: {e:#}");
            }
            match responder::serve(args.addr, &stop) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => usage_error(&e),
            }
        }
        Command::Compare(args) => match compare::run(&args.a, &args.b, args.threshold, args.force) {
            Ok(compare::Outcome::NoRegression) => ExitCode::SUCCESS,
            Ok(compare::Outcome::Regression) => ExitCode::from(EXIT_FAILED),
            Ok(compare::Outcome::Refused) => ExitCode::from(EXIT_USAGE),
            Err(e) => usage_error(&e),
        },
        Command::Suite(args) => {
            let plan = match args.plan() {
                Ok(plan) => plan,
                Err(e) => return usage_error(&e),
            };
            if let Err(e) = bench_client::limits::ensure_fds_for(plan.settings.connections.get()) {
                return usage_error(&e);
            }
            match suite::run(&plan, &stop) {
                Ok(outcome) => {
                    println!("\n{}", report::delta_table(&outcome.results));
                    let sweep = report::sweep_table(&outcome.results);
                    if !sweep.is_empty() {
                        println!("Layer sweep:\n\n{sweep}");
                    }
                    let mut all = vec![&outcome.results];
                    all.extend(outcome.other_profiles.iter());
                    let side = report::profiles_table(&all);
                    if !side.is_empty() {
                        println!("Profiles side by side (latest of each in the results folder):\n\n{side}");
                    }
                    println!("results: {}", outcome.dir.join("results.json").display());
                    println!("report:  {}", outcome.dir.join("report.md").display());
                    if outcome.interrupted {
                        eprintln!("interrupted: partial results written");
                        ExitCode::from(EXIT_INTERRUPTED)
                    } else if outcome.clean() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(EXIT_FAILED)
                    }
                }
                // Ctrl-C during the build: cargo fails, but the user stopped it.
                Err(e) if stop.load(Ordering::Relaxed) => {
                    eprintln!("error: {e:#}");
                    ExitCode::from(EXIT_INTERRUPTED)
                }
                Err(e) => failed(&e),
            }
        }
    }
}

fn usage_error(e: &anyhow::Error) -> ExitCode {
    eprintln!("error: {e:#}");
    ExitCode::from(EXIT_USAGE)
}

fn failed(e: &anyhow::Error) -> ExitCode {
    eprintln!("error: {e:#}");
    ExitCode::from(EXIT_FAILED)
}
