//! `hookline-bench conformance`: how often, how fast and how safely hookline tells the truth
//! about real agent CLIs.
//!
//!     hookline-bench conformance [--quick] [--cli NAME]... [--scenario NAME]...
//!                                [--json PATH] [--markdown PATH] [--publish PATH]
//!
//! Each scenario of `bench/conformance/scenarios/` ([`scenario`]) is played against each
//! CLI's pinned binary ([`clis`]) by a driver that knows the truth by construction ([`run`](mod@run),
//! [`truth`]); hookline's answers, from a real daemon, are scored against it ([`score`],
//! [`figures`]). The run's header and tables go to stdout (and `--markdown`), everything to
//! `--json`; `--publish` puts them into a document between its [`BEGIN`] and [`END`] markers
//! (docs/conformance.md), so the published figures are what the command printed.
//!
//! Exit status: 0; 1 when any peek allowed input or a nudge while the truth was not an idle
//! prompt, or any byte reached a dialog or another pane; 2 on an error (a scenario that broke
//! counts as one).

mod clis;
mod figures;
mod notify;
mod run;
mod scenario;
mod score;
mod tap;
mod truth;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use hookline::profile::Profiles;
use serde_json::json;

use self::clis::{CLIS, Cli};
use self::figures::{CliFigures, human_ns, percentile};
use self::scenario::Scenario;

pub use self::notify::stamp;

/// What the command was asked.
struct Options {
    quick: bool,
    clis: Vec<String>,
    scenarios: Vec<String>,
    json: Option<PathBuf>,
    markdown: Option<PathBuf>,
    publish: Option<PathBuf>,
}

/// The line after which `--publish` writes the run, in the document it is given.
pub const BEGIN: &str =
    "<!-- conformance: the last run, written by hookline-bench conformance --publish -->";
/// The line before which it stops.
pub const END: &str = "<!-- conformance: end of the last run -->";

fn options(args: impl Iterator<Item = String>) -> crate::Result<Options> {
    let mut o = Options {
        quick: false,
        clis: Vec::new(),
        scenarios: Vec::new(),
        json: None,
        markdown: None,
        publish: None,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--cli" => o.clis.push(value()?),
            "--scenario" => o.scenarios.push(value()?),
            "--json" => o.json = Some(PathBuf::from(value()?)),
            "--markdown" => o.markdown = Some(PathBuf::from(value()?)),
            "--publish" => o.publish = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    for name in &o.clis {
        if Cli::named(name).is_none() {
            let known: Vec<&str> = CLIS.iter().map(|c| c.name).collect();
            return Err(format!("no CLI {name:?}; known: {}", known.join(", ")).into());
        }
    }
    Ok(o)
}

/// The command.
pub fn run(args: impl Iterator<Item = String>) -> crate::Result<()> {
    let o = options(args)?;
    let all = scenario::load_dir(&scenario::shipped_dir())?;
    for name in &o.scenarios {
        if !all.iter().any(|s| &s.name == name) {
            return Err(
                format!("no scenario {name:?} in {}", scenario::shipped_dir().display()).into()
            );
        }
    }
    let scenarios: Vec<&Scenario> = all
        .iter()
        .filter(|s| {
            if o.scenarios.is_empty() { !o.quick || s.quick } else { o.scenarios.contains(&s.name) }
        })
        .collect();
    let clis: Vec<&'static Cli> = match (&o.clis[..], o.quick) {
        ([], true) => vec![&CLIS[0]],
        ([], false) => CLIS.iter().collect(),
        (names, _) => names.iter().filter_map(|n| Cli::named(n)).collect(),
    };
    let profiles = Profiles::shipped()?;
    let started = Instant::now();
    let load_before = load_average();
    let mut results = Vec::new();
    let mut broken = Vec::new();
    // The machine is shared: the 1-minute load average at the end of each run.
    let mut loads: Vec<f64> = Vec::new();
    for cli in clis {
        let installed = cli.install()?;
        let mut figures = CliFigures {
            cli: cli.name.into(),
            title: cli.title.into(),
            version: installed.version.to_string(),
            runs: Vec::new(),
        };
        for scenario in &scenarios {
            let at = Instant::now();
            let outcome = run::play(cli, &installed, scenario);
            let mut score = figures::score(scenario, &outcome, profiles.get(cli.name));
            score.load = load_average().first().copied();
            loads.extend(score.load);
            eprintln!(
                "conformance: {} {} {}: {}{} ({:.0} s)",
                cli.name,
                installed.version,
                scenario.name,
                score.status,
                score.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default(),
                at.elapsed().as_secs_f64()
            );
            if score.status == "failed" {
                broken.push(format!(
                    "{} {}: {}",
                    cli.name,
                    scenario.name,
                    score.reason.clone().unwrap_or_default()
                ));
            }
            figures.runs.push(score);
        }
        results.push(figures);
    }
    let load_after = load_average();
    let meta = json!({
        "date": hookline::units::rfc3339(hookline::format::clock::now_ns()),
        "machine": machine(),
        "load_average": {"before": load_before, "after": load_after, "runs": load_summary(&loads)},
        "seconds": started.elapsed().as_secs_f64(),
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "hookline": env!("CARGO_PKG_VERSION"),
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "commit": commit(),
    });
    let markdown = format!("{}\n{}", header(&meta, &broken), tables(&results, &scenarios));
    println!("{markdown}");
    if let Some(path) = &o.markdown {
        write_atomically(path, markdown.as_bytes())?;
    }
    if let Some(path) = &o.publish {
        publish(path, &markdown)?;
    }
    if let Some(path) = &o.json {
        let value =
            json!({"meta": meta, "clis": results.iter().map(CliFigures::json).collect::<Vec<_>>()});
        let text = serde_json::to_string_pretty(&value)?;
        write_atomically(path, text.as_bytes())?;
    }
    eprintln!("conformance: {meta}");
    let unsafe_runs: usize = results.iter().map(|f| f.false_auths().0 + f.wrongful()).sum();
    if unsafe_runs > 0 {
        eprintln!("conformance: {unsafe_runs} false authorizations or wrongful keystrokes");
        std::process::exit(1);
    }
    if !broken.is_empty() {
        return Err(format!("{} runs broke:\n  {}", broken.len(), broken.join("\n  ")).into());
    }
    Ok(())
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> crate::Result<()> {
    let dir =
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut temp, bytes)?;
    temp.persist(path).map_err(|e| format!("{}: {}", path.display(), e.error))?;
    Ok(())
}

/// Replaces what lies between the document's [`BEGIN`] and [`END`] lines with `markdown`.
fn publish(path: &std::path::Path, markdown: &str) -> crate::Result<()> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let replaced = splice(&text, markdown)
        .ok_or_else(|| format!("{}: no {BEGIN:?} line followed by {END:?}", path.display()))?;
    write_atomically(path, replaced.as_bytes())
}

/// `text` with the lines between its [`BEGIN`] and [`END`] lines replaced by `markdown`.
fn splice(text: &str, markdown: &str) -> Option<String> {
    let begin = text.find(&format!("{BEGIN}\n"))? + BEGIN.len() + 1;
    let end = begin + text[begin..].find(&format!("\n{END}"))? + 1;
    Some(format!("{}\n{}\n{}", &text[..begin], markdown.trim(), &text[end..]))
}

/// The run in a few lines: the command, when, what was built, the machine and its load.
fn header(meta: &serde_json::Value, broken: &[String]) -> String {
    let loads = |v: &serde_json::Value| {
        v.as_array().and_then(|a| a.first()).map_or("?".to_owned(), |l| l.to_string())
    };
    let load = &meta["load_average"];
    let runs = &load["runs"];
    let mut out = String::new();
    let _ = writeln!(out, "    {}\n", meta["command"].as_str().unwrap_or_default());
    let _ = writeln!(
        out,
        "Run {} in {:.0} min; hookline {} ({} build{}); {}; 1-minute load average {} before, {} / {} / {} (least / median / most) after each scenario, {} after.",
        meta["date"].as_str().unwrap_or_default(),
        meta["seconds"].as_f64().unwrap_or_default() / 60.0,
        meta["hookline"].as_str().unwrap_or_default(),
        meta["build"].as_str().unwrap_or_default(),
        meta["commit"].as_str().map(|c| format!(", commit {c}")).unwrap_or_default(),
        meta["machine"].as_str().unwrap_or_default(),
        loads(&load["before"]),
        runs["min"],
        runs["median"],
        runs["max"],
        loads(&load["after"]),
    );
    if !broken.is_empty() {
        let _ = writeln!(
            out,
            "\nRuns that broke (the CLI did not do what the scenario needs in time, or the driver failed): only their false authorizations and wrongful keystrokes are counted.\n"
        );
        for b in broken {
            let first = b.lines().next().unwrap_or_default();
            let _ = writeln!(out, "* {}", first.trim_end_matches("; the screen:"));
        }
    }
    out
}

/// The commit the bench was built from, when run from a git checkout.
fn commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let rev = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    out.status.success().then_some(rev).filter(|r| !r.is_empty())
}

/// The least, median and most of the runs' 1-minute load averages.
fn load_summary(loads: &[f64]) -> serde_json::Value {
    let mut sorted = loads.to_vec();
    sorted.sort_by(f64::total_cmp);
    match (sorted.first(), sorted.get(sorted.len() / 2), sorted.last()) {
        (Some(min), Some(median), Some(max)) => json!({"min": min, "median": median, "max": max}),
        _ => serde_json::Value::Null,
    }
}

/// `/proc/loadavg`'s three averages.
fn load_average() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The machine, in one line: CPUs, memory, kernel.
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let mem_kb: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:").and_then(|m| m.trim().trim_end_matches(" kB").parse().ok())
        })
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpus} CPUs ({model}), {:.0} GiB, Linux {}", mem_kb as f64 / 1048576.0, kernel.trim())
}

fn p(values: &[u64], q: f64) -> String {
    percentile(values, q).map_or("—".into(), human_ns)
}

/// The Markdown: a summary row per CLI, then per CLI its figures, its transitions and its
/// runs.
fn tables(results: &[CliFigures], scenarios: &[&Scenario]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| CLI | agreement | unknown | time to truth p50 / p99 | worst wrong state | false authorizations | deliveries confirmed / refused / unconfirmed | wrongful keystrokes | allow → confirmed p50 / p99 | notification p50 / p99 |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|");
    for f in results {
        let _ = writeln!(out, "{}", summary_row(f));
    }
    let _ = writeln!(out, "\n| scenario | what it plays |\n|---|---|");
    for s in scenarios {
        let _ = writeln!(out, "| {} | {} |", s.name, s.summary);
    }
    for f in results {
        let _ = writeln!(out, "\n### {} {}\n", f.title, f.version);
        let all: Vec<u64> = f.to_truth().values().flat_map(|(s, _)| s.iter().copied()).collect();
        let _ =
            writeln!(out, "| transition | n | p50 | p99 | not said before the truth moved on |");
        let _ = writeln!(out, "|---|---:|---:|---:|---:|");
        for (kind, (said, missed)) in f.to_truth() {
            let _ = writeln!(
                out,
                "| {kind} | {} | {} | {} | {missed} |",
                said.len(),
                p(&said, 50.0),
                p(&said, 99.0)
            );
        }
        let _ = writeln!(out, "| all | {} | {} | {} | |", all.len(), p(&all, 50.0), p(&all, 99.0));
        let _ = writeln!(
            out,
            "\n| scenario | result | agreement | unknown | worst wrong state | false auth. | deliveries |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---|---:|---|");
        for r in &f.runs {
            let c = &r.comparison;
            let share = |x: u64| {
                if c.total_ns == 0 {
                    "—".to_owned()
                } else {
                    format!("{:.1} %", 100.0 * x as f64 / c.total_ns as f64)
                }
            };
            let result = match (r.status, &r.reason) {
                ("played", _) => "played".to_owned(),
                (status, Some(why)) => {
                    let first = why.lines().next().unwrap_or_default().replace('|', "/");
                    format!("{status}: {first}")
                }
                (status, None) => status.to_owned(),
            };
            let worst = r.worst.as_ref().map_or("—".into(), |(w, cause)| {
                format!(
                    "{} `{}` for `{}` ({})",
                    human_ns(w.len_ns),
                    w.reported.as_str(),
                    w.truth.as_str(),
                    cause.label()
                )
            });
            let deliveries: Vec<String> = r
                .deliveries
                .iter()
                .map(|d| {
                    let mut s = format!("{}: {}", d.perturb.as_str(), d.outcome);
                    if d.enter_resent {
                        s.push_str(", Enter resent");
                    }
                    if let Some(rule) = d.rule.as_deref().filter(|_| d.outcome != "confirmed") {
                        s.push_str(&format!(" (`{rule}`)"));
                    }
                    s
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                r.scenario,
                result,
                share(c.agree_ns),
                share(c.unknown_ns),
                worst,
                r.false_auths.len(),
                if deliveries.is_empty() { "—".into() } else { deliveries.join("; ") }
            );
        }
    }
    out
}

fn summary_row(f: &CliFigures) -> String {
    let (agreement, unknown) = f.agreement().map_or(("—".into(), "—".into()), |(a, u)| {
        (format!("{:.1} %", 100.0 * a), format!("{:.1} %", 100.0 * u))
    });
    let all = f.all_to_truth();
    let worst = f.worst().map_or("—".into(), |(scenario, w, cause)| {
        format!(
            "{} `{}` for `{}` in {scenario} ({})",
            human_ns(w.len_ns),
            w.reported.as_str(),
            w.truth.as_str(),
            cause.label()
        )
    });
    let (false_auths, peeks) = f.false_auths();
    let count = |o: &str| f.count_outcome(o);
    let allow = f.allow_to_confirmed();
    let notes = f.notifications();
    format!(
        "| {} {} | {agreement} | {unknown} | {} / {} | {worst} | {false_auths} of {peeks} | {} / {} / {} | {} | {} / {} | {} / {} |",
        f.title,
        f.version,
        p(&all, 50.0),
        p(&all, 99.0),
        count("confirmed"),
        count("refused"),
        count("unconfirmed"),
        f.wrongful(),
        p(&allow, 50.0),
        p(&allow, 99.0),
        p(&notes, 50.0),
        p(&notes, 99.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishing_replaces_only_the_run_between_the_markers() {
        let doc = format!("# Title\n\nmethod\n\n{BEGIN}\nold table\nold line\n{END}\n\nafter\n");
        let new = splice(&doc, "new table\n").unwrap();
        // A blank line after the marker: what follows is Markdown, not part of the comment.
        assert_eq!(new, format!("# Title\n\nmethod\n\n{BEGIN}\n\nnew table\n{END}\n\nafter\n"));
        // Twice gives the same document.
        assert_eq!(splice(&new, "new table\n").unwrap(), new);
        // Without both markers, in order, nothing is written.
        assert_eq!(splice("# Title\n", "x"), None);
        assert_eq!(splice(&format!("{END}\n{BEGIN}\n"), "x"), None);
        assert_eq!(splice(&format!("{BEGIN}\nno end\n"), "x"), None);
    }
}
