//! `hookline notify [--config FILE] [--events-dir DIR] [--policy FILE] [--check] [--poll]`: the `[[notify]]`
//! rules, fired on transitions until SIGINT or SIGTERM.

use std::process::ExitCode;

use crate::notify::deliveries::Deliveries;
use crate::notify::{Notifier, NotifyConfig, NotifyJournal, Report, Run, Runner, live, remote};
use crate::term::escape;
use hookline::format::clock::now_ns;
use hookline::ingest::reader::Start;
use hookline::ingest::watch::{Mode, WatchOptions};

use super::{Outcome, Reading, catch_signals, events_dir, policy, profiles, report, stopping};
use crate::cli::NotifyArgs;

/// The journal's size cap: at it, the file is rotated to `….1`.
const JOURNAL_MAX_BYTES: u64 = 1 << 20;

pub fn run(args: &NotifyArgs) -> Outcome {
    let Some(path) = args.config.clone().or_else(crate::notify::user_file) else {
        return Err("no notifications file: set HOME, or pass --config FILE".into());
    };
    if args.config.is_none() && !path.is_file() {
        return Err(format!(
            "no notifications file {}: write one (see docs/notify.md), or pass --config FILE",
            path.display()
        )
        .into());
    }
    let config = NotifyConfig::load(&path)?;
    for warning in &config.warnings {
        eprintln!("hookline: warning: {warning}");
    }
    if args.check {
        for rule in &config.rules {
            let on: Vec<&str> = rule.on.iter().map(|t| t.as_str()).collect();
            let run = match &rule.run {
                Run::Argv(argv) => format!("{argv:?}"),
                Run::Shell(line) => format!("sh -c {line:?}"),
            };
            println!("{}: on {} run {run}", rule.name, on.join(", "));
        }
        println!("{}: {} rules", path.display(), config.rules.len());
        return Ok(ExitCode::SUCCESS);
    }
    let profiles = profiles()?;
    // The policy's `[stale]` windows, so that `unknown` means what `status` and `top` show.
    let policy = policy(&args.policy, &profiles)?;
    if let Some(daemon) = super::connect_daemon(&args.dir, &args.daemon)? {
        // The daemon's sessions: its journals are beside its events directory.
        let dir = daemon.info().events_dir.clone();
        let decisions = daemon.info().journal.clone();
        let journal = NotifyJournal::new(NotifyJournal::default_path(&dir), JOURNAL_MAX_BYTES);
        let runner = Runner::new(Some(journal.clone()), config.max_running, say);
        let mut notifier = Notifier::new(config, runner);
        notifier.remember(&journal.read());
        catch_signals();
        let rules = notifier.config().rules.len();
        eprintln!("hookline: notify: {rules} rules");
        let position = remote::Position::default_path(&dir);
        let note = |line: String| eprintln!("hookline: notify: {line}");
        remote::run(daemon, notifier, decisions, &position, &stopping, &note)?;
        return Ok(ExitCode::SUCCESS);
    }
    let dir = events_dir(&args.dir, Reading::Following)?;
    let journal = NotifyJournal::new(NotifyJournal::default_path(&dir), JOURNAL_MAX_BYTES);
    let runner = Runner::new(Some(journal.clone()), config.max_running, say);
    let mut notifier = Notifier::new(config, runner);
    notifier.remember(&journal.read());
    // Deliveries `hookline deliver` journals (through the directory's daemon, when one runs
    // later): from this notifier's last position, else from now.
    let position = remote::Position::default_path(&dir);
    let since = remote::Position::load(&position).map_or_else(now_ns, |p| p.deliveries_ns);
    let deliveries = super::journal(&policy, &dir).map(|j| Deliveries::new(j.path(), since));
    let shown = dir.clone();
    let mut config = hookline::engine::EngineConfig::new(profiles.clone(), policy, &dir);
    config.purpose = hookline::engine::Purpose::Display;
    let reader = hookline::ingest::reader::ReaderConfig::new(dir, Start::Beginning, profiles);
    let options = WatchOptions {
        mode: if args.poll { Mode::Poll } else { Mode::Notify },
        ..WatchOptions::default()
    };
    catch_signals();
    let rules = notifier.config().rules.len();
    let ready = || eprintln!("hookline: notify: {rules} rules, following {}", shown.display());
    live::run(
        config,
        reader,
        notifier,
        deliveries,
        options,
        &stopping,
        |notice| report([notice]),
        ready,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// One line on stderr per firing, once it settled.
fn say(report: Report) {
    let r = &report.record;
    let detail = r.detail.as_deref().map(|d| format!(" ({})", escape(d))).unwrap_or_default();
    let why = r.error.as_deref().map(|e| format!(": {}", escape(e))).unwrap_or_default();
    let level = if r.outcome.is_failure() { "warning: " } else { "" };
    let outcome = serde_json::to_value(r.outcome).ok();
    let outcome = outcome.as_ref().and_then(|v| v.as_str()).unwrap_or("?");
    eprintln!(
        "hookline: {level}notify {}: {} {}{detail}: {outcome}{why}",
        escape(&r.rule),
        escape(&r.key),
        r.state
    );
    if let Some(error) = report.journal_error {
        eprintln!("hookline: warning: cannot write the notify journal {error}");
    }
}
