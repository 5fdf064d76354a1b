//! Typing text into a CLI's tmux pane, and proving it was submitted: the mechanics under
//! `hookline deliver`.
//!
//! [`deliver`] does not decide *whether* the text may be typed: the caller must hold the
//! session's `input` allow from a live authority (the daemon) before it calls it. Given that,
//! it:
//!
//! 1. checks the text ([`check_text`]: at most [`MAX_TEXT`] bytes, no control character other
//!    than newline and tab, so the text can never end the paste early or press keys);
//! 2. checks that the pane's program still runs, and that the pane's process tree contains the
//!    session's host pid, when known (a reused pane or a restarted tmux server is refused);
//! 3. looks at the pane several times ([`Pane::sense_settled`]) and refuses when any look shows
//!    a dialog, a login or trust screen, a busy marker, a quota message, a composer already
//!    holding text, or no input prompt at all;
//! 4. types the text as one bracketed paste (tmux `load-buffer` from stdin, then `paste-buffer
//!    -p -d` of a uniquely named buffer: no key names are interpreted, multi-line text stays
//!    one submission), waits the profile's `deliver.enter-delay`, and presses Enter;
//! 5. self-heals an eaten Enter: from [`Options::heal_after`] after that Enter, while no
//!    `turn_start` has arrived, if the pane shows the delivered text still in the composer
//!    with no busy marker and no dialog, it presses Enter once more: at most once;
//! 6. confirms only by a structured event: a `turn_start` of the session that arrived after
//!    the paste, and, where the CLI reports the submitted prompt, whose prompt is the text
//!    ([`Confirmations`]). Pane text never confirms anything.
//!
//! The outcome is [`Outcome::Confirmed`], [`Outcome::Refused`] (nothing was typed) or
//! [`Outcome::Unconfirmed`] (typed, not confirmed: loud, never retried).

mod events;

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use self::events::{EventsConfirmations, prompt_of, turn_started};
use crate::errors::Error;
use crate::format::clock::now_ns;
use crate::pane::{Pane, PaneReading, composer_shows};
use crate::profile::{DeliverSpec, PanePatterns, Profile};

/// The most text one delivery types, in bytes.
pub const MAX_TEXT: usize = 256 * 1024;

/// Why a text cannot be typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextProblem {
    /// Nothing to type.
    Empty,
    /// Longer than [`MAX_TEXT`].
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
    /// A control character other than newline and tab (C0, DEL, C1: ESC and the 8-bit CSI
    /// among them).
    Control {
        /// The character.
        char: char,
        /// Its byte offset in the text.
        offset: usize,
    },
}

impl std::fmt::Display for TextProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextProblem::Empty => write!(f, "the text is empty"),
            TextProblem::TooLong { bytes } => {
                write!(f, "the text is {bytes} bytes, more than the {MAX_TEXT} a delivery types")
            }
            TextProblem::Control { char, offset } => write!(
                f,
                "the text holds the control character U+{:04X} at byte {offset}: only newline and tab may be typed",
                u32::from(*char)
            ),
        }
    }
}

/// Checks a text before anything is typed: see [`TextProblem`].
pub fn check_text(text: &str) -> Result<(), TextProblem> {
    if text.trim().is_empty() {
        return Err(TextProblem::Empty);
    }
    if text.len() > MAX_TEXT {
        return Err(TextProblem::TooLong { bytes: text.len() });
    }
    match text.char_indices().find(|(_, c)| c.is_control() && !matches!(c, '\n' | '\t')) {
        Some((offset, char)) => Err(TextProblem::Control { char, offset }),
        None => Ok(()),
    }
}

/// Why a delivery typed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Rule {
    /// The text is empty, too long, or holds a control character.
    Text,
    /// The pane's program has exited (a pane kept by `remain-on-exit`).
    PaneDead,
    /// The session's host pid is not in the pane's process tree.
    HostNotInPane,
    /// A permission, choice or question dialog is on screen.
    Dialog,
    /// A login, trust or onboarding screen is on screen.
    LoginOrTrust,
    /// A busy marker or spinner is on screen.
    Busy,
    /// A quota, rate-limit or billing message is on screen.
    Quota,
    /// The composer already holds text (a person typing, an earlier delivery unsubmitted).
    ComposerHoldsText,
    /// The profile declares an input prompt and none is on screen.
    PromptNotVisible,
    /// A multi-line text, and nothing proves it would arrive as one submission: the CLI's
    /// profile does not declare that it enables bracketed paste, or the process in the
    /// foreground of the pane's terminal is not the session's CLI (a shell, an editor).
    MultiLine,
    /// The pane is no longer the one resolved at the start (closed, or its program replaced).
    PaneChanged,
    /// The requester went away before typing started.
    Cancelled,
    /// The lease it would type under is no longer held (the session left that idle).
    LeaseLost,
}

impl Rule {
    /// The word used on the wire and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Text => "text",
            Rule::PaneDead => "pane-dead",
            Rule::HostNotInPane => "host-not-in-pane",
            Rule::Dialog => "dialog",
            Rule::LoginOrTrust => "login-or-trust",
            Rule::Busy => "busy",
            Rule::Quota => "quota",
            Rule::ComposerHoldsText => "composer-holds-text",
            Rule::PromptNotVisible => "prompt-not-visible",
            Rule::MultiLine => "multi-line-unbracketed",
            Rule::PaneChanged => "pane-changed",
            Rule::Cancelled => "requester-gone",
            Rule::LeaseLost => "lease-lost",
        }
    }
}

/// Which session a delivery is for, as its events name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionRef {
    /// The CLI's session id.
    Id(String),
    /// The orchestrator's tag (`HOOKLINE_TAG`).
    Tag(String),
}

impl SessionRef {
    /// Whether an event of this session id and tag belongs to this session.
    pub fn matches(&self, session_id: Option<&str>, tag: Option<&str>) -> bool {
        match self {
            SessionRef::Id(id) => session_id == Some(id.as_str()),
            SessionRef::Tag(t) => tag == Some(t.as_str()),
        }
    }
}

/// A `turn_start` of the session, as the source of structured events reports it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TurnStarted {
    /// The event's `seq`.
    pub seq: u64,
    /// When the relay ran, in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// The native event (`UserPromptSubmit`).
    pub native: Option<String>,
    /// The submitted prompt, when the CLI reports it (the profile's `deliver.prompt-field`).
    pub prompt: Option<String>,
    /// The event file.
    pub file: String,
}

/// Where confirmations come from: the structured events of a live generation. The daemon
/// implements it over the events it folds; [`EventsConfirmations`] reads an events directory.
pub trait Confirmations {
    /// The `turn_start` events of `session` with `ts_ns >= since_ns` that arrived since the
    /// last call, oldest first; subagents' events are never included.
    fn turn_starts(
        &mut self,
        session: &SessionRef,
        since_ns: u64,
    ) -> Result<Vec<TurnStarted>, Error>;
}

/// Whether a reported prompt is the delivered text: equal once blanks (spaces, tabs, line
/// breaks, which a paste may turn into carriage returns) are collapsed.
pub fn prompt_matches(prompt: &str, text: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    squash(prompt) == squash(text)
}

/// Timing of a delivery. Every default is here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// After the Enter, how long to wait before the self-heal may press Enter again.
    pub heal_after: Duration,
    /// After the Enter, how long to wait for the confirming `turn_start`.
    pub confirm_timeout: Duration,
    /// How many looks at the pane make one reading ([`Pane::sense_settled`]).
    pub samples: usize,
    /// The pause between those looks.
    pub sample_gap: Duration,
    /// How often confirmations are polled.
    pub poll: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            heal_after: Duration::from_millis(1500),
            confirm_timeout: Duration::from_secs(15),
            samples: 3,
            sample_gap: Duration::from_millis(80),
            poll: Duration::from_millis(50),
        }
    }
}

/// One delivery: where, what, for which session, and how.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The pane.
    pub pane: Pane,
    /// The text to type.
    pub text: String,
    /// The session that must confirm it.
    pub session: SessionRef,
    /// The session's host CLI pid, when its events gave one: the pane's process tree must
    /// contain it.
    pub host_pid: Option<u32>,
    /// The CLI's screen patterns (its profile's `[pane]`).
    pub patterns: PanePatterns,
    /// How the CLI is typed into (its profile's `[deliver]`).
    pub spec: DeliverSpec,
    /// Timing.
    pub options: Options,
}

impl Delivery {
    /// A delivery with the profile's patterns and the default options.
    pub fn new(pane: Pane, profile: &Profile, session: SessionRef, text: String) -> Delivery {
        Delivery {
            pane,
            text,
            session,
            host_pid: None,
            patterns: profile.pane.clone(),
            spec: profile.deliver.clone(),
            options: Options::default(),
        }
    }
}

/// How a delivery ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Typed, and a `turn_start` of the session confirmed it.
    Confirmed {
        /// The confirming event.
        event: TurnStarted,
    },
    /// Nothing was typed.
    Refused {
        /// The rule that refused it.
        rule: Rule,
        /// Why, for people.
        reason: String,
    },
    /// Typed (or possibly typed), and no structured event confirmed it in time.
    Unconfirmed {
        /// What was seen instead, for people.
        reason: String,
    },
}

impl Outcome {
    /// The exit code `hookline deliver` uses: 0 confirmed, 1 refused, 3 unconfirmed.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Confirmed { .. } => 0,
            Outcome::Refused { .. } => 1,
            Outcome::Unconfirmed { .. } => 3,
        }
    }
}

/// Which keys a delivery sent into the pane.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Sent {
    /// The text was pasted (or its paste may have arrived).
    pub paste: bool,
    /// How many times Enter was pressed (a second one is the self-heal's).
    pub enter: u8,
}

/// A key a delivery is about to send: the guard ([`deliver_guarded`]) is asked before each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// The paste of the text.
    Paste,
    /// The Enter that submits it.
    Enter,
    /// The self-heal's second Enter.
    HealEnter,
}

/// What a delivery did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// How it ended.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Whether anything may have been typed: `false` only when nothing was (every
    /// [`Outcome::Refused`]); a paste that failed half-way counts as typed.
    pub delivered: bool,
    /// Whether the self-heal pressed Enter a second time.
    pub enter_resent: bool,
    /// The keys sent.
    pub sent: Sent,
    /// From the call to the outcome, in milliseconds.
    pub elapsed_ms: u64,
    /// What the pane showed before typing.
    pub pane: Option<PaneReading>,
}

impl Report {
    /// Whether a structured event confirmed the delivery.
    pub fn confirmed(&self) -> bool {
        matches!(self.outcome, Outcome::Confirmed { .. })
    }
}

/// Whether `pid` is `root` or one of its descendants (Linux `/proc`).
pub fn in_process_tree(pid: u32, root: u32) -> bool {
    crate::host::in_process_tree(pid, root)
}

/// Why a pane reading refuses a delivery, if it does.
pub fn refusal(reading: &PaneReading, patterns: &PanePatterns) -> Option<(Rule, String)> {
    let e = &reading.evidence;
    let says = |key: &str| {
        reading
            .matched
            .iter()
            .find(|m| m.key == key)
            .map(|m| format!(" ({:?} on screen)", m.pattern))
            .unwrap_or_default()
    };
    Some(if e.dialog {
        (Rule::Dialog, format!("a dialog is on screen{}", says("dialog")))
    } else if e.login_or_trust {
        (Rule::LoginOrTrust, format!("a login or trust screen is on screen{}", says("login")))
    } else if e.spinner {
        let which = if says("busy").is_empty() { says("spinner") } else { says("busy") };
        (Rule::Busy, format!("the CLI looks busy{which}"))
    } else if e.quota_text {
        (Rule::Quota, format!("a quota message is on screen{}", says("quota")))
    } else if reading.evidence.typed_not_submitted {
        let text = reading.composer.clone().unwrap_or_default();
        (Rule::ComposerHoldsText, format!("the composer already holds text: {text:?}"))
    } else if reading.composer.is_none() && !patterns.prompt.is_empty() {
        (Rule::PromptNotVisible, "the input prompt is not on screen".to_owned())
    } else {
        return None;
    })
}

/// A tmux buffer name no other delivery uses.
fn buffer_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("hookline-{}-{}-{}", std::process::id(), now_ns(), NEXT.fetch_add(1, Ordering::SeqCst))
}

/// Delivers the text: see the module documentation. The caller must hold the session's
/// `input` allow. `Err` only when nothing was typed (no such pane, tmux not answering):
/// once a byte may have gone out, every failure is an [`Outcome::Unconfirmed`].
pub fn deliver(d: &Delivery, confirmations: &mut dyn Confirmations) -> Result<Report, Error> {
    deliver_guarded(d, confirmations, &|_| Ok(()))
}

/// [`deliver`], asking `guard` before each key it would send ([`Key`]): a guard that says no
/// (the pane is no longer the one resolved at the start, the requester is gone, the lease is
/// lost) stops the delivery there. Before the paste, nothing was typed: [`Outcome::Refused`]
/// with the guard's rule. After it, [`Outcome::Unconfirmed`], saying which keys were sent.
pub fn deliver_guarded(
    d: &Delivery,
    confirmations: &mut dyn Confirmations,
    guard: &dyn Fn(Key) -> Result<(), (Rule, String)>,
) -> Result<Report, Error> {
    let started = Instant::now();
    let report = |outcome, sent: Sent, pane| Report {
        outcome,
        delivered: sent.paste,
        enter_resent: sent.enter > 1,
        sent,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        pane,
    };
    let nothing = Sent::default();
    let refuse = |rule, reason, pane| report(Outcome::Refused { rule, reason }, nothing, pane);
    if let Err(problem) = check_text(&d.text) {
        return Ok(refuse(Rule::Text, problem.to_string(), None));
    }
    if d.pane.is_dead()? {
        let reason = format!("the program in pane {:?} has exited", d.pane.target);
        return Ok(refuse(Rule::PaneDead, reason, None));
    }
    let pane_pid = d.pane.pid()?;
    if let Some(host) = d.host_pid
        && !in_process_tree(host, pane_pid)
    {
        let reason = format!(
            "the session's host pid {host} is not in the process tree of pane {:?} (pid {pane_pid})",
            d.pane.target
        );
        return Ok(refuse(Rule::HostNotInPane, reason, None));
    }
    if d.text.contains(['\n', '\r'])
        && let Err(reason) = one_submission(d, pane_pid)
    {
        return Ok(refuse(Rule::MultiLine, reason, None));
    }
    let o = &d.options;
    let before = d.pane.sense_settled(&d.patterns, o.samples, o.sample_gap)?;
    if let Some((rule, reason)) = refusal(&before, &d.patterns) {
        return Ok(refuse(rule, reason, Some(before)));
    }
    if let Err((rule, reason)) = guard(Key::Paste) {
        return Ok(refuse(rule, reason, Some(before)));
    }
    // Events of the session from this instant on can confirm; the relay's clock is ours.
    let since = now_ns();
    let mut sent = Sent { paste: true, enter: 0 };
    if let Err(e) = d.pane.paste(&buffer_name(), &d.text) {
        let reason = format!("the paste may not have arrived: {e}");
        return Ok(report(Outcome::Unconfirmed { reason }, sent, Some(before)));
    }
    thread::sleep(d.spec.enter_delay);
    if let Err((_, why)) = guard(Key::Enter) {
        let reason = format!("the text was pasted; no Enter was pressed: {why}");
        return Ok(report(Outcome::Unconfirmed { reason }, sent, Some(before)));
    }
    if let Err(e) = d.pane.enter() {
        let reason = format!("the text was pasted, the Enter failed: {e}");
        return Ok(report(Outcome::Unconfirmed { reason }, sent, Some(before)));
    }
    sent.enter = 1;
    let entered = Instant::now();
    let mut others = Vec::new();
    // Where the CLI reports the submitted prompt, only a turn whose prompt is the text
    // confirms: one whose prompt cannot be read, or differs, is someone else's.
    let reports_prompt = d.spec.prompt_field.is_some();
    let mut poll = |others: &mut Vec<TurnStarted>| -> Result<Option<TurnStarted>, Error> {
        for turn in confirmations.turn_starts(&d.session, since)? {
            match &turn.prompt {
                Some(p) if prompt_matches(p, &d.text) => return Ok(Some(turn)),
                None if !reports_prompt => return Ok(Some(turn)),
                _ => others.push(turn),
            }
        }
        Ok(None)
    };
    let unconfirmed = |reason: String, sent: Sent| {
        report(Outcome::Unconfirmed { reason }, sent, Some(before.clone()))
    };
    loop {
        match poll(&mut others) {
            Ok(Some(event)) => {
                return Ok(report(Outcome::Confirmed { event }, sent, Some(before)));
            }
            Ok(None) => {}
            Err(e) => {
                return Ok(unconfirmed(format!("cannot read confirmations: {e}"), sent));
            }
        }
        let waited = entered.elapsed();
        if waited >= o.confirm_timeout {
            let mut reason = format!("no turn_start of the session within {:?}", o.confirm_timeout);
            if !others.is_empty() {
                let unread = others.iter().filter(|t| t.prompt.is_none()).count();
                reason.push_str(&format!(
                    "; {} turn_start(s) with another prompt{} arrived (seq {:?})",
                    others.len(),
                    if unread > 0 { format!(" ({unread} unreadable)") } else { String::new() },
                    others.iter().map(|t| t.seq).collect::<Vec<_>>()
                ));
            }
            return Ok(unconfirmed(reason, sent));
        }
        if sent.enter == 1 && waited >= o.heal_after && should_heal(d) {
            // A turn may have started while we looked: only a structured event says so.
            match poll(&mut others) {
                Ok(Some(event)) => {
                    return Ok(report(Outcome::Confirmed { event }, sent, Some(before)));
                }
                Ok(None) => {}
                Err(e) => return Ok(unconfirmed(format!("cannot read confirmations: {e}"), sent)),
            }
            if let Err((_, why)) = guard(Key::HealEnter) {
                let reason = format!("the self-heal pressed no Enter: {why}");
                return Ok(unconfirmed(reason, sent));
            }
            if let Err(e) = d.pane.enter() {
                return Ok(unconfirmed(format!("the self-heal Enter failed: {e}"), sent));
            }
            sent.enter = 2;
        }
        thread::sleep(o.poll);
    }
}

/// Why a multi-line text might not arrive as one submission, if it might: it is typed only
/// when the CLI's profile declares that it enables bracketed paste (tmux brackets a paste
/// only then) and the process group in the foreground of the pane's terminal is the
/// session's host's (or, with no host pid, one running a program the profile names): not a
/// shell, not an editor the CLI opened, not a CLI restarting.
fn one_submission(d: &Delivery, pane_pid: u32) -> Result<(), String> {
    if !d.spec.bracketed_paste {
        return Err("the text has several lines and the CLI's profile does not declare that it \
                    enables bracketed paste (deliver.bracketed-paste): each line could be \
                    submitted on its own"
            .into());
    }
    let foreground = crate::host::foreground_group(pane_pid).ok_or_else(|| {
        format!("the foreground of pane {:?}'s terminal cannot be read", d.pane.target)
    })?;
    match d.host_pid {
        Some(host) => {
            let group = crate::host::process_group(host);
            if group == Some(foreground) {
                Ok(())
            } else {
                Err(format!(
                    "the text has several lines and the foreground of pane {:?}'s terminal is \
                     process group {foreground} ({}), not the session's CLI (pid {host}): \
                     whatever runs there may not take it as one paste",
                    d.pane.target,
                    crate::host::command_name(foreground).unwrap_or_else(|| "?".into())
                ))
            }
        }
        None => {
            let program = crate::host::command_name(foreground).unwrap_or_default();
            if d.spec.programs.contains(&program) {
                Ok(())
            } else {
                Err(format!(
                    "the text has several lines and the foreground of pane {:?}'s terminal runs \
                     {program:?}, none of the CLI's programs ({}) (the session reports no host \
                     pid to compare with)",
                    d.pane.target,
                    d.spec.programs.join(", ")
                ))
            }
        }
    }
}

/// Whether the pane shows the delivered text still in the composer, with no busy marker, no
/// dialog and no login screen in any of several looks.
fn should_heal(d: &Delivery) -> bool {
    let o = &d.options;
    // A pane that cannot be read gets no keystroke.
    let Ok(now) = d.pane.sense_settled(&d.patterns, o.samples, o.sample_gap) else {
        return false;
    };
    let e = now.evidence;
    !e.dialog
        && !e.spinner
        && !e.login_or_trust
        && now.composer.as_deref().is_some_and(|c| composer_shows(c, &d.text, &d.patterns))
}

#[cfg(test)]
mod tests;
