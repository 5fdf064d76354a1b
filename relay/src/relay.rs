//! The relay program: `hookline-relay [--cli NAME] [--event NAME] [JSON]`.
//!
//! Reads the hook's JSON (from the last argument that is a JSON object when one is given, as
//! Codex's `notify` does, else from stdin within [`input::Limits`]), wraps it in an envelope
//! and writes it into the
//! events directory. Whatever happens it prints nothing and the process exits 0: problems go
//! to the diagnostics file.

use std::borrow::Cow;
use std::ffi::OsString;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::value::RawValue;

use crate::diag::{self, Level};
use crate::envelope::{EnvelopeOut, FORMAT_VERSION, RawEncoding, base64_encode, raw_encoding_for};
use crate::input::{self, Input, Limits};
use crate::location::{self, ENV_DISABLE, ENV_FSYNC, ENV_TAG};
use crate::store::{Content, EventsDir, WriteOptions, Written};
use crate::sys;

/// The profile used when `--cli` is not given.
pub const DEFAULT_CLI: &str = "claude";
const MAX_NAME_LEN: usize = 64;
const MAX_TAG_LEN: usize = 256;
/// How much of a bad argument a diagnostic quotes.
const MAX_ARG_ECHO: usize = 100;
/// At most this many argument problems are recorded per run.
const MAX_PROBLEMS: usize = 8;

/// The relay's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// `--cli`: the profile name.
    pub cli: String,
    /// `--event`: the native event name, for CLIs whose payload lacks it.
    pub event: Option<String>,
    /// The last positional argument that is a JSON object (its first non-blank character is
    /// `{`): the payload, when the CLI passes it on the command line. Other positional
    /// arguments are problems, and do not stop the relay from reading stdin: a stray word (the
    /// value of a flag this version does not know, say) must not replace the hook's payload.
    pub json_arg: Option<Vec<u8>>,
    /// Arguments that were not understood (recorded, never fatal).
    pub problems: Vec<String>,
}

impl Args {
    /// Parses the arguments after the program name. Never fails: anything not understood is
    /// kept in `problems`.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Args {
        let mut parsed =
            Args { cli: DEFAULT_CLI.into(), event: None, json_arg: None, problems: Vec::new() };
        let mut args = args.into_iter();
        let mut positionals = Vec::new();
        let mut options_done = false;
        while let Some(arg) = args.next() {
            if options_done || !arg.as_encoded_bytes().starts_with(b"--") {
                positionals.push(arg.into_vec());
                continue;
            }
            let arg = arg.to_string_lossy().into_owned();
            if arg == "--" {
                options_done = true;
                continue;
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
                None => (arg.clone(), None),
            };
            let slot = match flag.as_str() {
                "--cli" => &mut parsed.cli,
                "--event" => parsed.event.get_or_insert_with(String::new),
                _ => {
                    parsed.problems.push(format!("unknown option {:?} ignored", echo(&arg)));
                    continue;
                }
            };
            match inline.or_else(|| args.next().map(|v| v.to_string_lossy().into_owned())) {
                Some(value) => *slot = value,
                None => parsed.problems.push(format!("{flag} needs a value")),
            }
        }
        if parsed.event.as_deref() == Some("") {
            parsed.event = None;
        }
        if parsed.cli.is_empty() {
            parsed.cli = DEFAULT_CLI.into();
        }
        let json_at = positionals.iter().rposition(|arg| {
            let arg = arg.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(arg);
            arg.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        });
        for (i, arg) in positionals.into_iter().enumerate() {
            if Some(i) == json_at {
                parsed.json_arg = Some(arg);
            } else {
                let arg = String::from_utf8_lossy(&arg);
                parsed.problems.push(format!("argument {:?} ignored", echo(&arg)));
            }
        }
        if parsed.problems.len() > MAX_PROBLEMS {
            let more = parsed.problems.len() - (MAX_PROBLEMS - 1);
            parsed.problems.truncate(MAX_PROBLEMS - 1);
            parsed.problems.push(format!("{more} more argument problems"));
        }
        parsed.cli = clip(&parsed.cli, MAX_NAME_LEN).into_owned();
        parsed.event = parsed.event.map(|e| clip(&e, MAX_NAME_LEN).into_owned());
        parsed
    }
}

/// What one run did, for the diagnostics file and for tests.
#[derive(Debug, Default)]
pub struct Report {
    /// The events directory, when it could be resolved.
    pub events_dir: Option<PathBuf>,
    /// The event written, if any.
    pub written: Option<Written>,
    /// Warnings and errors, in the order they happened.
    pub notes: Vec<(Level, String)>,
    /// The native event name recorded.
    pub event: Option<String>,
}

/// The whole relay: everything the binary does except catching panics and exiting.
pub fn main() {
    let started = now_ns();
    // A host that limits file sizes (RLIMIT_FSIZE) would otherwise kill the relay with SIGXFSZ
    // in the middle of a write: a non-zero exit and a temp file left behind. Ignored, the write
    // fails with EFBIG and takes the ordinary error path.
    sys::ignore_file_size_signal();
    let env = |key: &str| std::env::var_os(key);
    if env(ENV_DISABLE).is_some_and(|v| v == "1") {
        return;
    }
    let args = Args::parse(std::env::args_os().skip(1));
    let cli = args.cli.clone();
    // SAFETY: fd 0 is only borrowed here, for the duration of the run, and never closed.
    let stdin = unsafe { BorrowedFd::borrow_raw(0) };
    let report = run(&env, args, Some(stdin), Limits::default(), started);
    record(&report, &cli, started);
}

/// Writes a report's notes to the diagnostics file beside its events directory.
pub fn record(report: &Report, cli: &str, ts_ns: u64) {
    let Some(dir) = &report.events_dir else {
        return;
    };
    if report.notes.is_empty() {
        return;
    }
    let path = location::diagnostics_path(dir);
    for (level, message) in &report.notes {
        diag::append(
            &path,
            &diag::Record {
                ts_ns,
                pid: std::process::id(),
                cli: cli.to_owned(),
                event: report.event.clone(),
                level: *level,
                message: message.clone(),
            },
        );
    }
}

/// Runs the relay with an explicit environment and stdin (`None`: no stdin at all).
pub fn run(
    env: &impl Fn(&str) -> Option<OsString>,
    args: Args,
    stdin: Option<BorrowedFd<'_>>,
    limits: Limits,
    ts_ns: u64,
) -> Report {
    let mut report = Report::default();
    for problem in &args.problems {
        report.notes.push((Level::Warn, problem.clone()));
    }
    let input = match (&args.json_arg, stdin) {
        (Some(json), _) => Input::from_bytes(json, limits.max_bytes),
        (None, Some(fd)) => match input::read_fd(fd, limits) {
            Ok(input) => input,
            Err(e) => {
                report.notes.push((Level::Warn, format!("cannot read stdin: {e}")));
                Input::default()
            }
        },
        (None, None) => Input::default(),
    };
    let parsed = Parsed::from_input(&input, limits);
    report.event = args.event.clone().or_else(|| parsed.event.clone());
    if input.timed_out {
        report.notes.push((Level::Warn, format!("stdin deadline ({:?}) passed", limits.deadline)));
    }
    if input.truncated {
        report.notes.push((
            Level::Warn,
            format!("input of {} bytes cut to {} bytes", input.total, limits.max_bytes),
        ));
    }
    if let (Some(_), Some(end)) = (parsed.payload, input.json_end) {
        // Only what arrived with the value is seen: the relay stops reading at its end.
        let rest = &input.bytes[end..];
        if !rest.iter().all(u8::is_ascii_whitespace) {
            let note = format!("{} bytes after the JSON value ignored", rest.len());
            report.notes.push((Level::Warn, note));
        }
    }

    let dir = match location::events_dir_from(env) {
        Ok(dir) => dir,
        Err(e) => {
            report.events_dir = location::events_dir_from(|k| match k {
                location::ENV_EVENTS_DIR => None,
                _ => env(k),
            })
            .ok();
            report.notes.push((Level::Error, e.to_string()));
            return report;
        }
    };
    report.events_dir = Some(dir.clone());
    let events = match EventsDir::create(&dir) {
        Ok(events) => events,
        Err(e) => {
            report.notes.push((Level::Error, error_chain(&e)));
            return report;
        }
    };

    let tag = env(ENV_TAG).map(|t| clip(&t.to_string_lossy(), MAX_TAG_LEN).into_owned());
    let host_pid = env("CLAUDE_PID").and_then(|p| p.to_str()?.trim().parse().ok());
    let host_session_id = ["CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID"]
        .iter()
        .find_map(|k| env(k).filter(|v| !v.is_empty()))
        .map(|v| clip(&v.to_string_lossy(), MAX_NAME_LEN * 2).into_owned());
    let options =
        WriteOptions { fsync: env(ENV_FSYNC).is_some_and(|v| v == "1"), ..WriteOptions::default() };
    let pid = std::process::id();
    let (raw_encoding, raw) = match (&parsed.payload, input.bytes.is_empty()) {
        (None, false) => {
            match (raw_encoding_for(&input.bytes), std::str::from_utf8(&input.bytes)) {
                (RawEncoding::Utf8, Ok(text)) => {
                    (Some(RawEncoding::Utf8), Some(Cow::Borrowed(text)))
                }
                _ => (Some(RawEncoding::Base64), Some(Cow::Owned(base64_encode(&input.bytes)))),
            }
        }
        _ => (None, None),
    };
    let write = |body: &Body<'_>| {
        events.write_event(pid, ts_ns, &options, |seq, seq_unordered| {
            let envelope = EnvelopeOut {
                v: FORMAT_VERSION,
                seq,
                seq_unordered,
                ts_ns,
                cli: &args.cli,
                event: report.event.as_deref(),
                tag: tag.as_deref(),
                pid,
                ppid: std::os::unix::process::parent_id(),
                host_pid,
                host_session_id: host_session_id.as_deref(),
                relay_version: crate::RELAY_VERSION,
                truncated: input.truncated,
                bytes: input.total,
                dropped: body.dropped,
                error: body.error,
                raw_encoding: body.raw_encoding,
                raw: body.raw,
                payload: body.payload,
            };
            let (head, body, tail) = envelope.to_parts();
            Content { head, body, tail }
        })
    };
    let full = Body {
        payload: parsed.payload,
        raw_encoding,
        raw: raw.as_deref(),
        dropped: &[],
        error: parsed.error.as_deref(),
    };
    let mut written = write(&full);
    if let Err(e) = &written
        && no_room(e)
        && let Some(lean) = full.lean()
    {
        // The event as received does not fit: its structured signal (event name, session,
        // tool) matters more than its bulk, so it is written again without the bulk.
        let what = match &lean.dropped[..] {
            [] => "the raw input".to_owned(),
            keys => format!("payload members {}", keys.join(", ")),
        };
        let note = format!("{}; writing it without {what}", error_chain(e));
        written = write(&lean.body(&full));
        let level = if written.is_ok() { Level::Warn } else { Level::Error };
        report.notes.push((level, note));
    }
    match written {
        Ok(written) => {
            if written.counter_unusable {
                report.notes.push((
                    Level::Warn,
                    format!(
                        "counter {} is not a regular file (a symlink?): wrote unordered; \
                         remove it to have events ordered again",
                        dir.join(crate::filename::COUNTER_FILE).display()
                    ),
                ));
            } else if written.name.unordered_ts_ns.is_some() {
                report.notes.push((
                    Level::Warn,
                    format!(
                        "counter lock not obtained in {:?}: wrote unordered",
                        options.lock_bound
                    ),
                ));
            }
            if written.counter_recovered {
                report.notes.push((Level::Warn, "counter rebuilt from the event files".into()));
            }
            report.written = Some(written);
        }
        Err(e) => report.notes.push((Level::Error, error_chain(&e))),
    }
    report
}

/// What an event file carries besides the envelope's fixed fields.
#[derive(Clone, Copy)]
struct Body<'a> {
    payload: Option<&'a RawValue>,
    raw_encoding: Option<RawEncoding>,
    raw: Option<&'a str>,
    dropped: &'a [&'a str],
    error: Option<&'a str>,
}

/// Payload members (and raw input) longer than this are left out of a lean event.
const LEAN_MEMBER_MAX: usize = 1024;

/// An event without its bulk, owning what differs from the full [`Body`].
struct Lean<'a> {
    payload: Option<Box<RawValue>>,
    dropped: Vec<&'a str>,
    error: Option<String>,
}

impl<'a> Body<'a> {
    /// The same event without its bulk: payload members whose value is longer than
    /// [`LEAN_MEMBER_MAX`] (the event name, session id, tool name and the like stay), or raw
    /// input that long. `None` when there is nothing to leave out.
    fn lean(&self) -> Option<Lean<'a>> {
        if let Some(payload) = self.payload {
            let mut kept = String::with_capacity(4096);
            let mut dropped = Vec::new();
            for (key, value) in TopLevel::new(payload.get()) {
                if value.len() > LEAN_MEMBER_MAX {
                    dropped.push(key.strip_prefix('"').and_then(|k| k.strip_suffix('"'))?);
                } else {
                    kept.push(if kept.is_empty() { '{' } else { ',' });
                    kept.push_str(key);
                    kept.push(':');
                    kept.push_str(value);
                }
            }
            if dropped.is_empty() {
                return None;
            }
            kept.push_str(if kept.is_empty() { "{}" } else { "}" });
            // Members of a valid object, joined again, are a valid object.
            let payload = RawValue::from_string(kept).ok()?;
            return Some(Lean { payload: Some(payload), dropped, error: None });
        }
        let raw = self.raw.filter(|raw| raw.len() > LEAN_MEMBER_MAX)?;
        let error = format!(
            "{}; the raw input ({} bytes) was left out: the event did not fit",
            self.error.unwrap_or("no usable payload"),
            raw.len()
        );
        Some(Lean { payload: None, dropped: Vec::new(), error: Some(error) })
    }
}

impl<'a> Lean<'a> {
    /// The lean event's body; what it does not replace comes from `full`.
    fn body<'b>(&'b self, full: &Body<'b>) -> Body<'b> {
        match &self.payload {
            Some(payload) => Body { payload: Some(payload), dropped: &self.dropped, ..*full },
            None => Body {
                raw: None,
                raw_encoding: None,
                error: self.error.as_deref().or(full.error),
                ..*full
            },
        }
    }
}

/// Whether a write failed for want of room (a full disk, a quota, a file-size limit), which a
/// smaller file may still get past.
fn no_room(error: &crate::Error) -> bool {
    let crate::Error::Io { source, .. } = error else { return false };
    matches!(source.raw_os_error(), Some(libc::ENOSPC | libc::EFBIG | libc::EDQUOT))
}

/// The input, understood.
struct Parsed<'a> {
    payload: Option<&'a RawValue>,
    event: Option<String>,
    error: Option<String>,
}

impl<'a> Parsed<'a> {
    fn from_input(input: &'a Input, limits: Limits) -> Parsed<'a> {
        let fail = |error: String| Parsed {
            payload: None,
            event: salvage_event_name(&input.bytes),
            error: Some(error),
        };
        if input.truncated {
            return fail(format!(
                "input is longer than the {} byte cap; only its head is kept",
                limits.max_bytes
            ));
        }
        let Some(end) = input.json_end else {
            return fail(
                match (input.bytes.iter().all(u8::is_ascii_whitespace), input.timed_out) {
                    (true, true) => format!("no input before the {:?} deadline", limits.deadline),
                    (true, false) => "empty input".into(),
                    (false, true) => {
                        format!("input incomplete at the {:?} deadline", limits.deadline)
                    }
                    (false, false) => invalid(&input.bytes),
                },
            );
        };
        let text = match std::str::from_utf8(&input.bytes[..end]) {
            Ok(text) => text,
            Err(e) => return fail(format!("input is not UTF-8: {e}")),
        };
        let raw: &RawValue = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(e) => return fail(format!("invalid JSON: {e}")),
        };
        if !raw.get().starts_with('{') {
            let kind = match raw.get().as_bytes()[0] {
                b'[' => "an array",
                b'"' => "a string",
                b't' | b'f' => "a boolean",
                b'n' => "null",
                _ => "a number",
            };
            return fail(format!("payload is {kind}, not a JSON object"));
        }
        Parsed { payload: Some(raw), event: event_name(raw), error: None }
    }
}

fn invalid(bytes: &[u8]) -> String {
    if let Err(e) = std::str::from_utf8(bytes) {
        return format!("input is not UTF-8: {e}");
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Err(e) => format!("invalid JSON: {e}"),
        Ok(_) => "invalid JSON".into(),
    }
}

/// The native event name from a payload object: `hook_event_name`, `hookEventName`, or `type`
/// (Codex's `notify`), in that order of preference.
///
/// The payload was validated once already; this walks its top-level keys without parsing the
/// values it passes over, and stops at `hook_event_name`, which CLIs put before their large
/// fields (`tool_input`, `tool_response`): the payload is not parsed a second time.
fn event_name(payload: &RawValue) -> Option<String> {
    const KEYS: [&str; 3] = ["\"hook_event_name\"", "\"hookEventName\"", "\"type\""];
    let mut found: [Option<String>; 3] = Default::default();
    for (key, value) in TopLevel::new(payload.get()) {
        let Some(slot) = KEYS.iter().position(|k| *k == key) else { continue };
        if found[slot].is_none() {
            found[slot] = serde_json::from_str::<Cow<'_, str>>(value)
                .ok()
                .filter(|name| !name.is_empty())
                .map(|name| clip(&name, MAX_NAME_LEN).into_owned());
        }
        if found[0].is_some() {
            break;
        }
    }
    found.into_iter().flatten().next()
}

/// The `(key, value)` texts of a valid JSON object's top-level members, keys with their quotes.
struct TopLevel<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> TopLevel<'a> {
    fn new(object: &'a str) -> TopLevel<'a> {
        TopLevel { text: object, at: object.find('{').map_or(object.len(), |i| i + 1) }
    }

    fn skip_ws(&mut self) {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    /// The end (exclusive) of the string starting at `start` (its opening quote).
    fn string_end(&self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut i = start + 1;
        while let Some(j) = memchr::memchr2(b'"', b'\\', &bytes[i..]) {
            if bytes[i + j] == b'"' {
                return i + j + 1;
            }
            i += j + 2;
        }
        bytes.len()
    }

    /// The end (exclusive) of the value starting at `start`.
    fn value_end(&self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i = self.string_end(i);
                    if depth == 0 {
                        return i;
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return i,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b',' if depth == 0 => return i,
                _ => {}
            }
            i += 1;
        }
        bytes.len()
    }
}

impl<'a> Iterator for TopLevel<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        self.skip_ws();
        if self.text.as_bytes().get(self.at) != Some(&b'"') {
            return None;
        }
        let key_end = self.string_end(self.at);
        let key = &self.text[self.at..key_end];
        self.at = key_end;
        self.skip_ws();
        if self.text.as_bytes().get(self.at) != Some(&b':') {
            return None;
        }
        self.at += 1;
        self.skip_ws();
        let start = self.at;
        let end = self.value_end(start);
        self.at = end;
        self.skip_ws();
        if self.text.as_bytes().get(self.at) == Some(&b',') {
            self.at += 1;
        }
        Some((key, self.text[start..end].trim_end()))
    }
}

/// Finds `"hook_event_name": "X"` (or `hookEventName`) in bytes that are not valid JSON, so a
/// truncated or damaged payload still names its event.
pub fn salvage_event_name(bytes: &[u8]) -> Option<String> {
    salvage_field(bytes, "hook_event_name").or_else(|| salvage_field(bytes, "hookEventName"))
}

/// Finds the first `"key": "value"` in bytes that are not valid JSON. Only plain values are
/// accepted (letters, digits, `_ . : -`, at most 128 bytes), so nothing odd is ever salvaged.
pub fn salvage_field(bytes: &[u8], key: &str) -> Option<String> {
    let quoted = format!("\"{key}\"");
    let quoted = quoted.as_bytes();
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(quoted.len()).position(|w| w == quoted) {
        let rest = &bytes[from + at + quoted.len()..];
        from += at + quoted.len();
        let rest = skip_ws(rest).strip_prefix(b":").map(skip_ws);
        let Some(rest) = rest.and_then(|r| r.strip_prefix(b"\"")) else {
            continue;
        };
        let len =
            rest.iter().take_while(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(b)).count();
        if len > 0 && len <= 2 * MAX_NAME_LEN && rest.get(len) == Some(&b'"') {
            return Some(String::from_utf8_lossy(&rest[..len]).into_owned());
        }
    }
    None
}

fn skip_ws(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[n..]
}

/// A bad argument as a diagnostic quotes it: clipped, so that a huge argument cannot flood
/// the diagnostics file.
fn echo(arg: &str) -> Cow<'_, str> {
    match clip(arg, MAX_ARG_ECHO) {
        Cow::Borrowed(whole) if whole.len() == arg.len() => Cow::Borrowed(whole),
        cut => Cow::Owned(format!("{cut}…")),
    }
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(text[..end].to_owned())
}

/// An error and its causes on one line: `cannot open dir /x: Permission denied`.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// Nanoseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::parse(list.iter().map(OsString::from))
    }

    #[test]
    fn arguments_are_parsed_in_every_form() {
        let a = args(&["--cli", "codex", "--event=Stop", "{\"type\":\"x\"}"]);
        assert_eq!(a.cli, "codex");
        assert_eq!(a.event.as_deref(), Some("Stop"));
        assert_eq!(a.json_arg.as_deref(), Some(&b"{\"type\":\"x\"}"[..]));
        assert!(a.problems.is_empty());
        let a = args(&[]);
        assert_eq!((a.cli.as_str(), a.event, a.json_arg), ("claude", None, None));
    }

    #[test]
    fn bad_arguments_are_recorded_not_fatal() {
        let a = args(&["--bogus", "--cli", "", "x", "y", "--event"]);
        assert_eq!(a.cli, "claude");
        assert_eq!(a.json_arg, None, "stdin is read");
        assert_eq!(
            a.problems,
            [
                "unknown option \"--bogus\" ignored",
                "--event needs a value",
                "argument \"x\" ignored",
                "argument \"y\" ignored"
            ]
        );
        let long = "n".repeat(500);
        assert_eq!(args(&["--cli", &long]).cli.len(), MAX_NAME_LEN);
    }

    #[test]
    fn only_a_json_object_argument_is_taken_as_the_payload() {
        let a = args(&["--tag", "t-1", " {\"type\":\"x\"}", "stray"]);
        assert_eq!(a.json_arg.as_deref(), Some(&b" {\"type\":\"x\"}"[..]));
        assert_eq!(a.problems.len(), 3, "{:?}", a.problems);
        assert_eq!(args(&["[1]"]).json_arg, None);
        assert_eq!(args(&["--", "--{}", "{}"]).json_arg.as_deref(), Some(&b"{}"[..]));
    }

    #[test]
    fn argument_problems_are_few_and_short() {
        let many: Vec<String> = (0..50).map(|i| format!("--x{i}={}", "v".repeat(1000))).collect();
        let a = args(&many.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(a.problems.len(), MAX_PROBLEMS);
        assert_eq!(a.problems.last().unwrap(), "43 more argument problems");
        assert!(a.problems.iter().all(|p| p.len() < MAX_ARG_ECHO + 40), "{:?}", a.problems[0]);
    }

    #[test]
    fn the_event_name_comes_from_any_known_field() {
        let name = |json: &str| event_name(&RawValue::from_string(json.into()).unwrap());
        assert_eq!(name(r#"{"hook_event_name":"Stop"}"#).as_deref(), Some("Stop"));
        assert_eq!(name(r#"{"hookEventName":"PreToolUse"}"#).as_deref(), Some("PreToolUse"));
        assert_eq!(
            name(r#"{"type":"agent-turn-complete"}"#).as_deref(),
            Some("agent-turn-complete")
        );
        assert_eq!(name(r#"{"hook_event_name":7,"type":"x"}"#).as_deref(), Some("x"));
        assert_eq!(name(r#"{"other":1}"#), None);
    }

    #[test]
    fn top_level_members_are_found_without_looking_inside_values() {
        let text = r#" { "a" : {"hook_event_name": "Nested", "x": [1, {"y": "}"}]},
            "b\"q": "s,\"}", "n": -1.5e3, "t": true, "hook_event_name": "Stop" } "#;
        let members: Vec<(&str, &str)> = TopLevel::new(text).collect();
        let keys: Vec<&str> = members.iter().map(|m| m.0).collect();
        assert_eq!(keys, [r#""a""#, r#""b\"q""#, r#""n""#, r#""t""#, r#""hook_event_name""#]);
        assert_eq!(members[1].1, r#""s,\"}""#);
        assert_eq!(members[2].1, "-1.5e3");
        assert_eq!(members[4].1, r#""Stop""#);
        let raw = RawValue::from_string(text.trim().to_owned()).unwrap();
        assert_eq!(event_name(&raw).as_deref(), Some("Stop"));
    }

    #[test]
    fn the_event_name_of_every_real_payload_matches_a_full_parse() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let Ok(raw) = serde_json::from_str::<Box<RawValue>>(&text) else { continue };
            let full: serde_json::Value = serde_json::from_str(&text).unwrap();
            let expected = full["hook_event_name"].as_str().map(str::to_owned);
            assert_eq!(event_name(&raw), expected, "{text}");
            checked += 1;
        }
        assert!(checked >= 2, "{checked}");
    }

    #[test]
    fn a_damaged_payload_still_names_its_event() {
        let cut = br#"{"session_id":"a","hook_event_name" : "PostToolUse","tool_response":"xxx"#;
        assert_eq!(salvage_event_name(cut).as_deref(), Some("PostToolUse"));
        assert_eq!(salvage_event_name(br#"{"hook_event_name":"a/../b"}"#), None);
    }

    #[test]
    fn clip_cuts_at_a_character_boundary() {
        assert_eq!(clip("héllo", 2), "h");
        assert_eq!(clip("abc", 5), "abc");
    }
}
