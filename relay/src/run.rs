//! The run: read the input, wrap it in an envelope, write it into the events directory.
//!
//! The payload comes from the last argument that is a JSON object when one is given (as
//! Codex's `notify` does), else from stdin within [`Limits`]. Whatever happens nothing is
//! printed: problems become notes of the [`Report`], for the diagnostics file.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::fd::BorrowedFd;

use hookline_relay::clock::now_ns;
use hookline_relay::diag::Level;
use hookline_relay::envelope::{
    EnvelopeOut, MAX_SESSION_ID_BYTES, MAX_TAG_BYTES, RawEncoding, base64_encode, raw_encoding_for,
};
use hookline_relay::filename::COUNTER_FILE;
use hookline_relay::location::{self, ENV_DISABLE, ENV_FSYNC, ENV_TAG};
use hookline_relay::rawjson::Members;
use hookline_relay::store::{Content, EventsDir, WriteOptions};
use serde_json::value::RawValue;

use crate::args::{Args, USAGE, clip};
use crate::diagnostics::{Report, error_chain, record};
use crate::input::{self, Input, Limits};
use crate::payload::Parsed;

/// The whole relay: everything the binary does except catching panics and exiting.
pub(crate) fn main() {
    let started = now_ns();
    // A host that limits file sizes (RLIMIT_FSIZE) would otherwise kill the relay with SIGXFSZ
    // in the middle of a write: a non-zero exit and a temp file left behind. Ignored, the write
    // fails with EFBIG and takes the ordinary error path.
    ignore_file_size_signal();
    let env = |key: &str| std::env::var_os(key);
    if env(ENV_DISABLE).is_some_and(|v| v == "1") {
        return;
    }
    // Debug builds only (the tests'): a panic on demand, so that a test sees the binary as
    // built (linked statically, its own `main`) catch it, note it and still exit 0.
    #[cfg(debug_assertions)]
    if env("HOOKLINE_RELAY_TEST_PANIC").is_some_and(|v| v == "1") {
        panic!("HOOKLINE_RELAY_TEST_PANIC=1");
    }
    let args = Args::parse(std::env::args_os().skip(1));
    if args.help && std::io::stdin().is_terminal() {
        // A person at a terminal asked: the only output the relay ever gives, and no event.
        let _ = std::io::stderr().write_all(USAGE.as_bytes());
        return;
    }
    let cli = args.cli.clone();
    // SAFETY: fd 0 is only borrowed here, for the duration of the run, and never closed.
    let stdin = unsafe { BorrowedFd::borrow_raw(0) };
    let report = run(&env, args, Some(stdin), Limits::default(), started);
    record(&report, &cli, started);
}

/// Runs the relay with an explicit environment and stdin (`None`: no stdin at all).
pub(crate) fn run(
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

    let tag = env(ENV_TAG).map(|t| clip(&t.to_string_lossy(), MAX_TAG_BYTES).into_owned());
    let host_pid = env("CLAUDE_PID").and_then(|p| p.to_str()?.trim().parse().ok());
    let host_session_id = ["CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID"]
        .iter()
        .find_map(|k| env(k).filter(|v| !v.is_empty()))
        .map(|v| clip(&v.to_string_lossy(), MAX_SESSION_ID_BYTES).into_owned());
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
        let size = body.payload.map_or(0, str::len) + body.raw.map_or(0, str::len);
        events.write_event_sized(pid, ts_ns, &options, size, |seq, seq_unordered| {
            let envelope = EnvelopeOut {
                event: report.event.as_deref(),
                tag: tag.as_deref(),
                host_pid,
                host_session_id: host_session_id.as_deref(),
                truncated: input.truncated,
                bytes: input.total,
                dropped: body.dropped,
                error: body.error,
                raw_encoding: body.raw_encoding,
                raw: body.raw,
                ..EnvelopeOut::this_process(seq, seq_unordered, ts_ns, &args.cli)
            };
            // The payload was validated as it was read: written as its text, not parsed again.
            let (head, body, tail) = envelope.to_parts_with(body.payload);
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
                        dir.join(COUNTER_FILE).display()
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
            if let Some(repair) = written.counter_repaired {
                let counter = dir.join(COUNTER_FILE);
                let why = if repair.was == u64::MAX {
                    "is at its end".to_owned()
                } else {
                    format!("was behind the event files (newest seq {})", repair.newest)
                };
                report.notes.push((
                    Level::Warn,
                    format!(
                        "counter {} at {} {why}: repaired, this event has seq {}",
                        counter.display(),
                        repair.was,
                        written.name.seq
                    ),
                ));
            }
            if written.counter_recovered && written.counter_repaired.is_none() {
                report.notes.push((Level::Warn, "counter rebuilt from the event files".into()));
            }
        }
        Err(e) => report.notes.push((Level::Error, error_chain(&e))),
    }
    report
}

/// What an event file carries besides the envelope's fixed fields.
#[derive(Clone, Copy)]
struct Body<'a> {
    /// The payload's text: a JSON object serde_json accepts.
    payload: Option<&'a str>,
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
            for (key, value) in Members::new(payload) {
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
            Some(payload) => Body { payload: Some(payload.get()), dropped: &self.dropped, ..*full },
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
fn no_room(error: &hookline_relay::Error) -> bool {
    let hookline_relay::Error::Io { source, .. } = error else { return false };
    matches!(source.raw_os_error(), Some(libc::ENOSPC | libc::EFBIG | libc::EDQUOT))
}

/// Ignores SIGXFSZ, so that exceeding RLIMIT_FSIZE fails the write (EFBIG) instead of killing the
/// process.
fn ignore_file_size_signal() {
    // SAFETY: SIG_IGN is a valid disposition for SIGXFSZ, and nothing else in this process
    // installs a handler for it.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
