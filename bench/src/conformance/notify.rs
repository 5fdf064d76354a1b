//! Notification latency: a real `hookline notify` follows the run's events directory with one
//! rule for every transition a person hears about, whose command is this benchmark's own
//! `__stamp` (a compiled program: its start is the command firing). Each stamp is matched with
//! the journal line of its firing, whose `since_ns` is the relay's time of the event that
//! made the transition.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The notify rules file for a run, whose command appends to `stamps`.
pub fn config(stamper: &Path, stamps: &Path) -> String {
    let q = |p: &Path| serde_json::to_string(&p.to_string_lossy()).unwrap_or_default();
    format!(
        "version = 1\ndebounce = \"0s\"\n\n[[notify]]\nname = \"conformance\"\n\
         on = [\"waiting_on_human\", \"idle\", \"env_fault\", \"ended\"]\n\
         run = [{}, \"__stamp\", {}]\n",
        q(stamper),
        q(stamps)
    )
}

/// A running `hookline notify`, stopped (SIGTERM) on drop.
pub struct Notifier {
    child: Child,
    /// Where its commands stamp.
    pub stamps: PathBuf,
    /// Its journal.
    pub journal: PathBuf,
}

impl Notifier {
    /// Starts `hookline notify` on `events` with a rules file in `dir`, in `command`'s
    /// environment (the sandbox's).
    pub fn start(mut command: Command, events: &Path, dir: &Path) -> Result<Notifier, String> {
        let stamper = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let stamps = dir.join("notify-stamps.txt");
        let file = dir.join("notify.toml");
        std::fs::write(&file, config(&stamper, &stamps))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let child = command
            .args(["notify", "--events-dir"])
            .arg(events)
            .arg("--config")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("hookline notify: {e}"))?;
        let mut journal = events.as_os_str().to_owned();
        journal.push(".notify.ndjson");
        Ok(Notifier { child, stamps, journal: PathBuf::from(journal) })
    }

    /// From the event that made each transition to its command's start (ns), in firing order.
    pub fn latencies(&self) -> Vec<u64> {
        let stamps = std::fs::read_to_string(&self.stamps).unwrap_or_default();
        let journal = std::fs::read_to_string(&self.journal).unwrap_or_default();
        latencies(&stamps, &journal)
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process this helper started.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `__stamp FILE`: appends `<now ns> <state> <detail>` (from `HOOKLINE_STATE`,
/// `HOOKLINE_DETAIL`) to FILE in one write.
pub fn stamp(mut args: impl Iterator<Item = String>) -> crate::Result<()> {
    let now = hookline::format::clock::now_ns();
    let file = args.next().ok_or("__stamp FILE")?;
    let var = |name| std::env::var(name).unwrap_or_default();
    let line = format!("{now} {} {}\n", var("HOOKLINE_STATE"), var("HOOKLINE_DETAIL"));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)?
        .write_all(line.as_bytes())?;
    Ok(())
}

/// Matches each stamp with the latest firing of the same state and detail that ran before it,
/// each firing once; returns stamp − `since_ns` per stamp that found one.
pub fn latencies(stamps: &str, journal: &str) -> Vec<u64> {
    let mut firings: Vec<(u64, String, String, bool)> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["outcome"] == "ran")
        .filter_map(|r| {
            let since = r["since_ns"].as_u64()?;
            let state = r["state"].as_str()?.to_owned();
            Some((since, state, r["detail"].as_str().unwrap_or("").to_owned(), false))
        })
        .collect();
    let mut out = Vec::new();
    for line in stamps.lines() {
        let mut words = line.splitn(3, ' ');
        let (Some(at), Some(state)) =
            (words.next().and_then(|w| w.parse::<u64>().ok()), words.next())
        else {
            continue;
        };
        let detail = words.next().unwrap_or("").trim();
        let best = firings
            .iter_mut()
            .filter(|(since, s, d, used)| !used && *since <= at && s == state && d == detail)
            .max_by_key(|(since, ..)| *since);
        if let Some(firing) = best {
            firing.3 = true;
            out.push(at - firing.0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_matched_with_their_firings_once_each() {
        let journal = [
            r#"{"state":"waiting_on_human","detail":"permission","since_ns":1000,"outcome":"ran"}"#,
            r#"{"state":"idle","since_ns":5000,"outcome":"ran"}"#,
            r#"{"state":"idle","since_ns":9000,"outcome":"debounced"}"#,
            "not json",
        ]
        .join("\n");
        let stamps = "1004 waiting_on_human permission\n5007 idle \n9100 idle \n";
        assert_eq!(latencies(stamps, &journal), [4, 7]);
        let config = config(Path::new("/b/hookline-bench"), Path::new("/t/s.txt"));
        assert!(
            config.contains(r#"run = ["/b/hookline-bench", "__stamp", "/t/s.txt"]"#),
            "{config}"
        );
    }
}
