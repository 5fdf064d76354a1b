//! The driver's side of `hookline-tap` (`src/bin/hookline-tap.rs`): the command line that
//! runs a CLI behind it, its control FIFO, and its log read back.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

/// One line of a tap's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// The program started as this pid.
    Child(u32),
    /// These bytes reached the program.
    In(Vec<u8>),
    /// These bytes were kept from it.
    Dropped(Vec<u8>),
    /// A control command was taken.
    Ctl(String),
    /// A file was created at a paste's start.
    Touched,
    /// The program ended with this code.
    Ended(i32),
    /// The tap exited.
    Exit(i32),
}

/// A tap's files: its log and its control FIFO.
#[derive(Debug, Clone)]
pub struct Tap {
    /// The log.
    pub log: PathBuf,
    /// The control FIFO.
    pub ctl: PathBuf,
}

impl Tap {
    /// A tap whose files are `<dir>/<name>.log` and `<dir>/<name>.ctl`.
    pub fn new(dir: &Path, name: &str) -> Tap {
        Tap { log: dir.join(format!("{name}.log")), ctl: dir.join(format!("{name}.ctl")) }
    }

    /// A script that runs `program` behind the tap (`exec`, so the tap is the pane's
    /// program), written next to the log.
    pub fn script(&self, tap: &Path, program: &Path) -> Result<PathBuf, String> {
        let q = |p: &Path| hookline_tests::sandbox::shell_quote(p);
        let text = format!(
            "#!/bin/sh\nexec {} --log {} --ctl {} -- {}\n",
            q(tap),
            q(&self.log),
            q(&self.ctl),
            q(program)
        );
        let path = self.log.with_extension("sh");
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }

    /// Every fact so far, with its time.
    pub fn facts(&self) -> Vec<(u64, Fact)> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().filter_map(parse_line).collect()
    }

    /// The program's pid, once the tap has started it.
    pub fn child(&self, timeout: Duration) -> Result<u32, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(pid) = self.facts().iter().find_map(|(_, f)| match f {
                Fact::Child(pid) => Some(*pid),
                _ => None,
            }) {
                return Ok(pid);
            }
            if Instant::now() > deadline {
                return Err(format!("the tap wrote no child pid to {}", self.log.display()));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends a control command and waits until the tap has taken it.
    pub fn command(&self, command: &str) -> Result<(), String> {
        let taken = |facts: &[(u64, Fact)]| {
            facts.iter().filter(|(_, f)| *f == Fact::Ctl(command.to_owned())).count()
        };
        let before = taken(&self.facts());
        let mut fifo = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.ctl)
            .map_err(|e| format!("{}: {e}", self.ctl.display()))?;
        fifo.write_all(format!("{command}\n").as_bytes())
            .map_err(|e| format!("{}: {e}", self.ctl.display()))?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while taken(&self.facts()) <= before {
            if Instant::now() > deadline {
                return Err(format!("the tap did not take {command:?}"));
            }
            thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// When the program ended, if it has.
    pub fn ended_ns(&self) -> Option<u64> {
        self.facts().iter().find_map(|(ns, f)| matches!(f, Fact::Ended(_)).then_some(*ns))
    }
}

fn parse_line(line: &str) -> Option<(u64, Fact)> {
    let mut words = line.splitn(3, ' ');
    let kind = words.next()?;
    let ns: u64 = words.next()?.parse().ok()?;
    let rest = words.next().unwrap_or("");
    let fact = match kind {
        "child" => Fact::Child(rest.trim().parse().ok()?),
        "in" => Fact::In(unhex(rest.trim())?),
        "drop" => Fact::Dropped(unhex(rest.trim())?),
        "ctl" => Fact::Ctl(rest.trim().to_owned()),
        "touched" => Fact::Touched,
        "ended" => Fact::Ended(rest.trim().parse().ok()?),
        "exit" => Fact::Exit(rest.trim().parse().ok()?),
        _ => return None,
    };
    Some((ns, fact))
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

/// The bytes that reached the program between `from_ns` and `to_ns`, each with its time.
pub fn bytes_between(facts: &[(u64, Fact)], from_ns: u64, to_ns: u64) -> Vec<(u64, u8)> {
    facts
        .iter()
        .filter(|(ns, _)| (from_ns..=to_ns).contains(ns))
        .flat_map(|(ns, f)| match f {
            Fact::In(bytes) => bytes.iter().map(|b| (*ns, *b)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// How many bracketed pastes start in `bytes`.
pub fn pastes(bytes: &[(u64, u8)]) -> usize {
    let plain: Vec<u8> = bytes.iter().map(|(_, b)| *b).collect();
    plain.windows(6).filter(|w| *w == b"\x1b[200~").count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_reads_back_fact_by_fact_and_bad_lines_are_passed_over() {
        let log = "child 10 4242\nin 20 1b5b3230307e68691b5b3230317e\ndrop 21 0d\n\
                   ctl 15 drop-enter-after-paste\nin 30 0d\ntouched 19 /x\nended 40 137\n\
                   exit 41 137\nin 50 zz\nnonsense\nin x 0d\n";
        let facts: Vec<(u64, Fact)> = log.lines().filter_map(parse_line).collect();
        assert_eq!(facts.len(), 8);
        assert_eq!(facts[0], (10, Fact::Child(4242)));
        assert_eq!(facts[2], (21, Fact::Dropped(vec![b'\r'])));
        assert_eq!(facts[6], (40, Fact::Ended(137)));
        let bytes = bytes_between(&facts, 0, 35);
        assert_eq!(bytes.len(), 15);
        assert_eq!(pastes(&bytes), 1);
        assert_eq!(bytes.last(), Some(&(30, b'\r')));
        assert!(bytes_between(&facts, 31, 100).is_empty());
    }
}
