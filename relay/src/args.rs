//! The relay's command line: `hookline-relay [--cli NAME] [--event NAME] [JSON]`. Parsing it
//! never fails: anything not understood is a problem noted in the diagnostics file.

use std::borrow::Cow;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use hookline_relay::envelope::MAX_NAME_BYTES;

/// The profile used when `--cli` is not given.
const DEFAULT_CLI: &str = "claude";
/// How much of a bad argument a diagnostic quotes.
const MAX_ARG_ECHO: usize = 100;
/// At most this many argument problems are recorded per run.
const MAX_PROBLEMS: usize = 8;

/// The relay's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Args {
    /// `--cli`: the profile name.
    pub(crate) cli: String,
    /// `--event`: the native event name, for CLIs whose payload lacks it.
    pub(crate) event: Option<String>,
    /// The last positional argument that is a JSON object (its first non-blank character is
    /// `{`): the payload, when the CLI passes it on the command line. Other positional
    /// arguments are problems, and do not stop the relay from reading stdin: a stray word (the
    /// value of a flag this version does not know, say) must not replace the hook's payload.
    pub(crate) json_arg: Option<Vec<u8>>,
    /// Arguments that were not understood (recorded, never fatal).
    pub(crate) problems: Vec<String>,
    /// `--help` or `-h` was given: the usage is printed when a person runs the relay (stdin
    /// is a terminal); as a hook the flag is only a problem noted.
    pub(crate) help: bool,
}

/// What `hookline-relay --help` prints, on stderr.
pub(crate) const USAGE: &str = "\
hookline-relay: the hook command agent CLIs run. It writes each hook call as one event file.

usage: hookline-relay [--cli NAME] [--event NAME] [JSON]

The payload is the last argument that is a JSON object, else stdin (read until one JSON value
is complete, at most 16 MiB, within a deadline).

  --cli NAME     the profile the event is mapped with (default: claude)
  --event NAME   the native event name, for CLIs whose payload does not carry it

Events go to $HOOKLINE_EVENTS_DIR, else $XDG_STATE_HOME/hookline/events, else
~/.local/state/hookline/events. Run as a hook it prints nothing and exits 0 whatever happens;
problems go to the diagnostics file beside the events directory, which `hookline doctor` reads.
`hookline install` registers it with a CLI; the format is in docs/format.md.
";

impl Args {
    /// Parses the arguments after the program name. Never fails: anything not understood is
    /// kept in `problems`.
    pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Args {
        let mut parsed = Args {
            cli: DEFAULT_CLI.into(),
            event: None,
            json_arg: None,
            problems: Vec::new(),
            help: false,
        };
        let mut args = args.into_iter();
        let mut positionals = Vec::new();
        let mut options_done = false;
        while let Some(arg) = args.next() {
            if !options_done && (arg == "--help" || arg == "-h") {
                parsed.help = true;
                parsed.problems.push(format!("{:?} ignored: run as a hook", arg.to_string_lossy()));
                continue;
            }
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
        parsed.cli = clip(&parsed.cli, MAX_NAME_BYTES).into_owned();
        parsed.event = parsed.event.map(|e| clip(&e, MAX_NAME_BYTES).into_owned());
        parsed
    }
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
pub(crate) fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(text[..end].to_owned())
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
        assert_eq!(args(&["--cli", &long]).cli.len(), MAX_NAME_BYTES);
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
    fn clip_cuts_at_a_character_boundary() {
        assert_eq!(clip("héllo", 2), "h");
        assert_eq!(clip("abc", 5), "abc");
    }
}
