//! Pane sensing: what a CLI's screen shows, as the last-resort source of caller evidence.
//!
//! [`Pane::capture`] reads the visible screen of a tmux pane through the tmux command line
//! (bounded in time and size); [`strip_escapes`] removes what a terminal would interpret;
//! [`sense`] evaluates the patterns a profile declares in its `[pane]` table
//! ([`PanePatterns`]) into the [`PaneEvidence`] the decision layer takes, plus what the
//! composer holds.
//!
//! Screen text is never authority. Pane evidence can only make an answer more careful: it never
//! allows input, never ends a session and never confirms a delivery. And a single snapshot is
//! never trusted to say that something is *absent*: a TUI may defer its redraw until the next
//! keystroke, so a screen can show a state the program has already left. Callers that need
//! "no busy marker" look several times ([`Pane::sense_settled`]).

mod tmux;

use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use self::tmux::{MAX_OUTPUT, Pane, Resolved, Server};
use crate::errors::Error;
use crate::evidence::PaneEvidence;
use crate::profile::PanePatterns;

/// A tmux pane: its target and, optionally, its server's socket (default: tmux's own rules,
/// `$TMUX` or its default socket, as the server process sees them).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmuxPane {
    /// `session:window.pane`, `%ID`, ...
    pub target: String,
    /// The tmux server's socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
}

impl TmuxPane {
    /// The pane to read and type into.
    pub fn pane(&self) -> Pane {
        match &self.socket {
            Some(socket) => Pane::on_socket(socket, &self.target),
            None => Pane::new(&self.target),
        }
    }
}

/// The tmux server this process would talk to: the one `$TMUX` names (its first
/// comma-separated field), else tmux's default socket (`$TMUX_TMPDIR`, else `/tmp`, then
/// `tmux-<uid>/default`). A client sends it to the daemon, so that the daemon reads and types
/// into the caller's server, never into its own default.
pub fn caller_socket() -> Option<PathBuf> {
    if let Some(tmux) = std::env::var_os("TMUX")
        && let Some(socket) = tmux.to_str().and_then(|t| t.split(',').next())
        && !socket.is_empty()
    {
        return Some(PathBuf::from(socket));
    }
    let dir = std::env::var_os("TMUX_TMPDIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    Some(dir.join(format!("tmux-{uid}")).join("default"))
}

/// How many non-blank lines at the bottom of the screen the composer is looked for in: a
/// prompt-looking line higher up is the echo of an earlier prompt in the conversation.
pub const COMPOSER_WINDOW: usize = 8;

/// What one screen shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PaneReading {
    /// The evidence fields the decision layer takes.
    #[serde(flatten)]
    /// `typed_not_submitted` among them: the input prompt is on screen and its composer holds
    /// text the CLI has not been given (a person typing, an earlier delivery left unsubmitted).
    pub evidence: PaneEvidence,
    /// The composer's text when the input prompt is on screen (`""`: empty, or only its
    /// placeholder); `None` when no input prompt was seen (hidden under a dialog, scrolled,
    /// or the profile declares none).
    pub composer: Option<String>,
    /// Which pattern set each field, for people: `("dialog", "Do you want to proceed?")`.
    pub matched: Vec<Matched>,
}

/// One pattern that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Matched {
    /// The `[pane]` key (`busy`, `dialog`, ...).
    pub key: &'static str,
    /// The pattern.
    pub pattern: String,
    /// The screen line it matched, trimmed.
    pub line: String,
}

/// Removes escape sequences (CSI, OSC, DCS and other `ESC`-introduced strings, 8-bit CSI) and
/// control characters other than newline and tab, so that the text is what a person sees.
pub fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \).
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                // Character set designations take one more character.
                Some('(' | ')' | '*' | '+') => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Evaluates `patterns` on a screen (escape sequences are stripped first).
///
/// * `busy`, `dialog`, `login`, `quota`, `idle`: a line containing the pattern;
/// * `spinner`: a line starting (after blanks) with the glyph, a space, then a word ending in
///   `…` or `...`;
/// * `prompt`: the composer is the last line, among the bottom [`COMPOSER_WINDOW`] non-blank
///   lines, that starts with the pattern exactly; what follows, trimmed of blanks and a box
///   border, is its text, unless it starts with a `placeholder`. A dialog or a login screen
///   hides the composer.
/// * `text_says_idle`: the composer is visible and empty, no busy marker, spinner, dialog or
///   login screen is, and (when `idle` patterns are declared) one of them is.
pub fn sense(screen: &str, patterns: &PanePatterns) -> PaneReading {
    // Claude Code draws its prompt as "❯" and a no-break space once the composer holds text.
    let screen = strip_escapes(screen).replace('\u{a0}', " ");
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let mut matched = Vec::new();
    let mut any = |key: &'static str, list: &[String], test: &dyn Fn(&str, &str) -> bool| {
        let hit = lines.iter().find_map(|line| {
            list.iter().find(|p| !p.is_empty() && test(line, p)).map(|p| (p, line))
        });
        if let Some((pattern, line)) = hit {
            matched.push(Matched { key, pattern: pattern.clone(), line: line.trim().to_owned() });
        }
        hit.is_some()
    };
    let contains = |line: &str, p: &str| line.contains(p);
    let busy = any("busy", &patterns.busy, &contains);
    let spinner = any("spinner", &patterns.spinner, &is_spinner_line);
    let dialog = any("dialog", &patterns.dialog, &contains);
    let login = any("login", &patterns.login, &contains);
    let quota = any("quota", &patterns.quota, &contains);
    let idle_marker = any("idle", &patterns.idle, &contains);
    // Its choices look like a prompt line (`❯ 1. Yes`, `› 1. Trust and continue`).
    let composer = if dialog || login { None } else { composer(&lines, patterns) };
    let typed = composer.as_deref().is_some_and(|c| !c.is_empty());
    let text_says_idle = composer.as_deref() == Some("")
        && !busy
        && !spinner
        && !dialog
        && !login
        && (patterns.idle.is_empty() || idle_marker);
    PaneReading {
        evidence: PaneEvidence {
            text_says_idle,
            spinner: busy || spinner,
            dialog,
            login_or_trust: login,
            quota_text: quota,
            typed_not_submitted: typed,
            screen: None,
        },
        composer,
        matched,
    }
}

fn is_spinner_line(line: &str, glyph: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix(glyph) else { return false };
    let Some(rest) = rest.strip_prefix(' ') else { return false };
    rest.split_whitespace()
        .next()
        .is_some_and(|word| word.len() > 3 && (word.ends_with('…') || word.ends_with("...")))
}

/// The composer's text: see [`sense`].
fn composer(lines: &[&str], patterns: &PanePatterns) -> Option<String> {
    let bottom: Vec<&str> = lines
        .iter()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(COMPOSER_WINDOW)
        .copied()
        .collect();
    let text = bottom.iter().find_map(|line| {
        // Lines are trimmed at the end: an empty composer's `"❯ "` reads `"❯"`.
        patterns.prompt.iter().filter(|p| !p.trim().is_empty()).find_map(|p| {
            line.strip_prefix(p.as_str()).or_else(|| (*line == p.trim_end()).then_some(""))
        })
    })?;
    let text = text.trim().trim_end_matches(['│', '┃', '|']).trim();
    if patterns.placeholder.iter().any(|p| !p.is_empty() && text.starts_with(p.as_str())) {
        return Some(String::new());
    }
    Some(text.to_owned())
}

/// Whether a composer's text shows `delivered` still sitting there: it starts with the
/// delivered text's first line (or the first 24 characters of it), blanks collapsed, or
/// shows one of the profile's `pasted` markers.
pub(crate) fn composer_shows(composer: &str, delivered: &str, patterns: &PanePatterns) -> bool {
    if composer.is_empty() {
        return false;
    }
    if patterns.pasted.iter().any(|p| !p.is_empty() && composer.contains(p.as_str())) {
        return true;
    }
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = delivered.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let head: String = squash(first).chars().take(24).collect();
    !head.is_empty() && squash(composer).starts_with(&head)
}

impl Pane {
    /// Captures the visible screen and senses it.
    pub fn sense(&self, patterns: &PanePatterns) -> Result<PaneReading, Error> {
        Ok(sense(&self.capture()?, patterns))
    }

    /// Senses the screen `samples` times, `gap` apart, and combines the readings so that
    /// presence wins: a field is set when any snapshot set it, and the composer must be the
    /// same in every snapshot to be reported (otherwise it reads as holding text). `idle` is
    /// set only when every snapshot said so. This is how "no busy marker" and "no dialog" are
    /// looked for: never from one snapshot.
    pub fn sense_settled(
        &self,
        patterns: &PanePatterns,
        samples: usize,
        gap: Duration,
    ) -> Result<PaneReading, Error> {
        let mut readings = Vec::new();
        for i in 0..samples.max(1) {
            if i > 0 {
                thread::sleep(gap);
            }
            readings.push(self.sense(patterns)?);
        }
        Ok(combine(readings))
    }
}

/// The patterns of several profiles together, for a pane whose CLI is not known: every field
/// any of them would set is set, which can only make an answer more careful.
pub fn union<'a>(all: impl IntoIterator<Item = &'a PanePatterns>) -> PanePatterns {
    let mut u = PanePatterns::default();
    for p in all {
        let lists = [
            (&mut u.prompt, &p.prompt),
            (&mut u.placeholder, &p.placeholder),
            (&mut u.pasted, &p.pasted),
            (&mut u.busy, &p.busy),
            (&mut u.spinner, &p.spinner),
            (&mut u.dialog, &p.dialog),
            (&mut u.login, &p.login),
            (&mut u.quota, &p.quota),
        ];
        for (into, from) in lists {
            into.extend(from.iter().filter(|x| !into.contains(x)).cloned().collect::<Vec<_>>());
        }
    }
    // `idle` markers of one CLI say nothing of another's screen.
    u
}

/// Combines readings of one pane: presence wins (see [`Pane::sense_settled`]).
pub(crate) fn combine(readings: Vec<PaneReading>) -> PaneReading {
    let mut iter = readings.into_iter();
    let Some(mut all) = iter.next() else { return PaneReading::default() };
    for r in iter {
        let (a, b) = (&mut all.evidence, r.evidence);
        a.text_says_idle &= b.text_says_idle;
        a.spinner |= b.spinner;
        a.dialog |= b.dialog;
        a.login_or_trust |= b.login_or_trust;
        a.quota_text |= b.quota_text;
        a.typed_not_submitted |= b.typed_not_submitted;
        if all.composer != r.composer {
            // Changing under us: someone is typing, or the screen is being redrawn.
            all.composer = match (all.composer.take(), r.composer) {
                (Some(a), Some(b)) => Some(if a.is_empty() { b } else { a }),
                (a, b) => a.or(b),
            };
            all.evidence.typed_not_submitted = true;
        }
        for m in r.matched {
            if !all.matched.contains(&m) {
                all.matched.push(m);
            }
        }
    }
    if all.evidence.dialog || all.evidence.login_or_trust {
        all.composer = None;
        all.evidence.typed_not_submitted = false;
    }
    all
}

#[cfg(test)]
mod tests;
