//! The notifications file: `[[notify]]` rules, parsed strictly.
//!
//! Keys are kebab-case. Top-level keys set the defaults of every rule (`timeout`, `debounce`,
//! `unknown-after`) and of the notifier (`late-after`); each `[[notify]]` table is one rule.
//! Every default lives in [`Defaults::default`]. As in the policy, `version` is read first and
//! an unknown key is an error naming its path (`notify[1].runn`), so a misspelt key never
//! silently turns a notification off.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use hookline::config::{ConfigError, ConfigKind, Toml};
use hookline::units::parse_duration;

use super::Trigger;

/// The notifications file's schema version.
pub const NOTIFY_VERSION: u32 = 1;

/// The file name in the configuration directory: `notify.toml`.
pub const FILE_NAME: &str = "notify.toml";

/// The user's notifications file: [`FILE_NAME`] in hookline's configuration directory
/// ([`hookline::paths::config_dir`]), whether or not it exists.
pub fn user_file() -> Option<std::path::PathBuf> {
    hookline::paths::config_dir().map(|c| c.join(FILE_NAME))
}

/// The rules and the notifier's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// `late-after`: an event older than this when the notifier reads it (it was written while
    /// no notifier ran) updates the state but fires nothing; zero means no limit.
    pub late_after: Duration,
    /// `max-running`: commands running at once; a firing beyond it is journaled, not run.
    pub max_running: usize,
    /// What is worth saying about a file that is usable: no rules, no `version`.
    pub warnings: Vec<ConfigError>,
}

/// The defaults a rule inherits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    /// `timeout`: a command still running after this is killed with its process group.
    pub timeout: Duration,
    /// `debounce`: the same rule does not fire again for the same session and trigger within
    /// this long (a flapping state notifies once).
    pub debounce: Duration,
    /// `unknown-after`: how long a session must be `unknown` before `on = ["unknown"]` fires.
    pub unknown_after: Duration,
    /// `late-after` (see [`NotifyConfig::late_after`]).
    pub late_after: Duration,
    /// `max-running` (see [`NotifyConfig::max_running`]).
    pub max_running: usize,
}

impl Default for Defaults {
    fn default() -> Defaults {
        Defaults {
            timeout: Duration::from_secs(10),
            debounce: Duration::from_secs(5),
            unknown_after: Duration::from_secs(120),
            late_after: Duration::from_secs(600),
            max_running: 16,
        }
    }
}

/// One `[[notify]]` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `name`, else `notify[INDEX]`: how the journal names it.
    pub name: String,
    /// `on`: the transitions it fires on.
    pub on: Vec<Trigger>,
    /// `cli`: only sessions of these CLIs (profile names); empty: any.
    pub cli: Vec<String>,
    /// `tag`: only sessions whose tag matches one of these globs; empty: any.
    pub tag: Vec<Glob>,
    /// `cwd`: only sessions whose working directory matches one of these globs; empty: any.
    pub cwd: Vec<Glob>,
    /// `run` (with `shell`): what it runs.
    pub run: Run,
    /// `timeout`.
    pub timeout: Duration,
    /// `debounce`.
    pub debounce: Duration,
    /// `unknown-after`.
    pub unknown_after: Duration,
}

/// What a rule runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// A program and its arguments, run directly: no shell, no word splitting, no expansion.
    Argv(Vec<String>),
    /// A command line run by `/bin/sh -c` (`shell = true`).
    Shell(String),
}

/// A glob: `*` matches any run of characters but `/`, `**` any run at all, `?` one character
/// but `/`; everything else matches itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(pub String);

impl Glob {
    /// Whether `text` matches the whole glob.
    pub fn matches(&self, text: &str) -> bool {
        let pattern: Vec<char> = self.0.chars().collect();
        let text: Vec<char> = text.chars().collect();
        glob(&pattern, &text)
    }
}

fn glob(p: &[char], t: &[char]) -> bool {
    match p {
        [] => t.is_empty(),
        ['*', '*', rest @ ..] => (0..=t.len()).any(|i| glob(rest, &t[i..])),
        ['*', rest @ ..] => {
            (0..=t.len()).take_while(|&i| i == 0 || t[i - 1] != '/').any(|i| glob(rest, &t[i..]))
        }
        ['?', rest @ ..] => t.first().is_some_and(|c| *c != '/') && glob(rest, &t[1..]),
        [c, rest @ ..] => t.first() == Some(c) && glob(rest, &t[1..]),
    }
}

/// One documented key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// The key (`notify.run` for a rule's).
    pub path: &'static str,
    /// What it does.
    pub doc: &'static str,
}

/// Every key, with what it does: `docs/notify.md` lists them, and a test keeps it in step.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc { path: "version", doc: "The file's schema version: 1." },
    KeyDoc {
        path: "timeout",
        doc: "Default for every rule: a command still running after this is killed (SIGKILL to its process group) and the kill journaled. Default `10s`.",
    },
    KeyDoc {
        path: "debounce",
        doc: "Default for every rule: after a rule fired for a session and trigger, the same firing within this long is journaled as `debounced` and not run (a flapping state notifies once). `0s`: never debounce. Default `5s`.",
    },
    KeyDoc {
        path: "unknown-after",
        doc: "Default for every rule: how long a session must have been `unknown` before `on = [\"unknown\"]` fires (once per `unknown` spell). Default `2m`.",
    },
    KeyDoc {
        path: "late-after",
        doc: "An event read more than this after it was written (it arrived while no notifier ran) updates the state but fires nothing; journaled as `late`. `0s`: no limit. Default `10m`.",
    },
    KeyDoc {
        path: "max-running",
        doc: "Commands running at once; a firing beyond it is journaled as `too_many` and not run. Default `16`.",
    },
    KeyDoc {
        path: "notify.name",
        doc: "The rule's name in the journal and on stderr. Default `notify[INDEX]` (from 0).",
    },
    KeyDoc {
        path: "notify.on",
        doc: "Required: the transitions that fire it, a list of `waiting_on_human` (any reason), `waiting_on_human.permission`, `waiting_on_human.question`, `waiting_on_human.elicitation`, `waiting_on_human.interrupted` (detail `other`), `idle`, `env_fault`, `ended`, `unknown` (for longer than `unknown-after`), `delivery_unconfirmed` (a delivery the decision journal records `unconfirmed`, once per delivery).",
    },
    KeyDoc {
        path: "notify.cli",
        doc: "Only sessions of these CLIs (profile names: `claude`, `codex`, ...). A string or a list; unset: any.",
    },
    KeyDoc {
        path: "notify.tag",
        doc: "Only sessions whose tag (`HOOKLINE_TAG`) matches one of these globs. A string or a list; unset: any, including untagged sessions.",
    },
    KeyDoc {
        path: "notify.cwd",
        doc: "Only sessions whose working directory matches one of these globs (`*` stops at `/`, `**` does not). A string or a list; unset: any.",
    },
    KeyDoc {
        path: "notify.run",
        doc: "Required: the command, as a list (program, then arguments), run directly with no shell. With `shell = true`, one string run by `/bin/sh -c`.",
    },
    KeyDoc {
        path: "notify.shell",
        doc: "Run `run` through `/bin/sh -c` (then `run` is one string). Default `false`.",
    },
    KeyDoc { path: "notify.timeout", doc: "This rule's `timeout`." },
    KeyDoc { path: "notify.debounce", doc: "This rule's `debounce`." },
    KeyDoc { path: "notify.unknown-after", doc: "This rule's `unknown-after`." },
];

impl NotifyConfig {
    /// Reads a notifications file strictly.
    pub fn load(path: &Path) -> Result<NotifyConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Toml::unreadable(ConfigKind::Notifications, path, e))?;
        NotifyConfig::parse(&text, &path.display().to_string())
    }

    /// Parses notifications text strictly; `label` names it in errors. A usable file without
    /// rules or without `version` gets [`NotifyConfig::warnings`].
    pub fn parse(text: &str, label: &str) -> Result<NotifyConfig, ConfigError> {
        let file = Toml::new(ConfigKind::Notifications, label, text);
        let root = file.parse()?;
        let version = file.version(&root);
        if let Some(v) = version
            && v.get_ref().as_integer().and_then(|i| i.as_str().parse::<i64>().ok())
                != Some(i64::from(NOTIFY_VERSION))
        {
            let message = format!(
                "notifications version {} is not supported (this build reads {NOTIFY_VERSION})",
                file.written(v)
            );
            return Err(file.error(Some("version"), message));
        }
        let had_version = version.is_some();
        let (wire, unknown): (wire::File, _) = file.read(root)?;
        if let Some(key) = unknown.into_iter().next() {
            let known: Vec<&str> = KEYS.iter().map(|k| k.path).collect();
            let hint = hookline::config::suggest(&key, &known, &[], &["notify"]);
            return Err(file.error(Some(&key), format!("unknown key{hint}")));
        }
        let mut config =
            wire.into_config().map_err(|(key, message)| file.error(Some(&key), message))?;
        if config.rules.is_empty() {
            config.warnings.push(file.error(
                None,
                "no [[notify]] rules: nothing will ever run (each rule is a [[notify]] table, \
                 see docs/notify.md)",
            ));
        }
        if !had_version {
            config.warnings.push(file.error(
                None,
                format!("no version key: add `version = {NOTIFY_VERSION}` at the top"),
            ));
        }
        Ok(config)
    }
}

/// The file as written.
mod wire {
    use super::*;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct File {
        pub version: Option<u32>,
        pub timeout: Option<String>,
        pub debounce: Option<String>,
        pub unknown_after: Option<String>,
        pub late_after: Option<String>,
        pub max_running: Option<usize>,
        pub notify: Vec<Rule>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "kebab-case")]
    pub(super) struct Rule {
        pub name: Option<String>,
        pub on: Option<Vec<String>>,
        pub cli: Option<OneOrMany>,
        pub tag: Option<OneOrMany>,
        pub cwd: Option<OneOrMany>,
        pub run: Option<RunValue>,
        pub shell: bool,
        pub timeout: Option<String>,
        pub debounce: Option<String>,
        pub unknown_after: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    pub(super) enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }

    impl OneOrMany {
        fn into_vec(self) -> Vec<String> {
            match self {
                OneOrMany::One(one) => vec![one],
                OneOrMany::Many(many) => many,
            }
        }
    }

    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    pub(super) enum RunValue {
        Line(String),
        Argv(Vec<String>),
    }

    type Fault = (String, String);

    fn duration(key: String, value: Option<&str>, default: Duration) -> Result<Duration, Fault> {
        match value {
            None => Ok(default),
            Some(text) => parse_duration(text).map_err(|e| (key, e)),
        }
    }

    impl File {
        pub(super) fn into_config(self) -> Result<NotifyConfig, Fault> {
            let d = Defaults::default();
            let defaults = Defaults {
                timeout: duration("timeout".into(), self.timeout.as_deref(), d.timeout)?,
                debounce: duration("debounce".into(), self.debounce.as_deref(), d.debounce)?,
                unknown_after: duration(
                    "unknown-after".into(),
                    self.unknown_after.as_deref(),
                    d.unknown_after,
                )?,
                late_after: duration(
                    "late-after".into(),
                    self.late_after.as_deref(),
                    d.late_after,
                )?,
                max_running: self.max_running.unwrap_or(d.max_running),
            };
            if defaults.max_running == 0 {
                return Err(("max-running".into(), "must be at least 1".into()));
            }
            if defaults.timeout.is_zero() {
                return Err(("timeout".into(), "must be longer than 0s".into()));
            }
            let rules = self
                .notify
                .into_iter()
                .enumerate()
                .map(|(i, rule)| rule.into_rule(i, &defaults))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(NotifyConfig {
                rules,
                late_after: defaults.late_after,
                max_running: defaults.max_running,
                warnings: Vec::new(),
            })
        }
    }

    impl Rule {
        fn into_rule(self, i: usize, d: &Defaults) -> Result<super::Rule, Fault> {
            let at = |key: &str| format!("notify[{i}].{key}");
            let Some(words) = self.on.filter(|on| !on.is_empty()) else {
                return Err((
                    at("on"),
                    format!("required: a list of {}", Trigger::WORDS.join(", ")),
                ));
            };
            let mut on = Vec::new();
            for word in words {
                let trigger = Trigger::from_word(&word).ok_or_else(|| {
                    (at("on"), format!("{word:?} is not a trigger ({})", Trigger::WORDS.join(", ")))
                })?;
                if !on.contains(&trigger) {
                    on.push(trigger);
                }
            }
            let run = match (self.run, self.shell) {
                (None, _) => {
                    return Err((at("run"), "required: the command, as a list of words".into()));
                }
                (Some(RunValue::Argv(argv)), false) if !argv.is_empty() && !argv[0].is_empty() => {
                    Run::Argv(argv)
                }
                (Some(RunValue::Argv(_)), false) => {
                    return Err((at("run"), "the list must start with the program".into()));
                }
                (Some(RunValue::Line(_)), false) => {
                    return Err((
                        at("run"),
                        "a string is a shell command line: write the command as a list \
                         ([\"notify-send\", \"hookline\"]), or set shell = true"
                            .into(),
                    ));
                }
                (Some(RunValue::Line(line)), true) if !line.trim().is_empty() => Run::Shell(line),
                (Some(_), true) => {
                    return Err((
                        at("run"),
                        "with shell = true, run is one non-empty command line (a string)".into(),
                    ));
                }
            };
            let globs = |v: Option<OneOrMany>| {
                v.map(OneOrMany::into_vec).unwrap_or_default().into_iter().map(Glob).collect()
            };
            let timeout = duration(at("timeout"), self.timeout.as_deref(), d.timeout)?;
            if timeout.is_zero() {
                return Err((at("timeout"), "must be longer than 0s".into()));
            }
            Ok(super::Rule {
                name: self.name.unwrap_or_else(|| format!("notify[{i}]")),
                on,
                cli: self.cli.map(OneOrMany::into_vec).unwrap_or_default(),
                tag: globs(self.tag),
                cwd: globs(self.cwd),
                run,
                timeout,
                debounce: duration(at("debounce"), self.debounce.as_deref(), d.debounce)?,
                unknown_after: duration(
                    at("unknown-after"),
                    self.unknown_after.as_deref(),
                    d.unknown_after,
                )?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<NotifyConfig, String> {
        NotifyConfig::parse(text, "n.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn a_rule_inherits_the_top_level_defaults_and_keeps_its_own() {
        let config = parse(
            r#"
            version = 1
            debounce = "1s"
            [[notify]]
            on = ["waiting_on_human.permission", "env_fault"]
            cli = "claude"
            tag = ["task-*"]
            run = ["notify-send", "hookline"]
            [[notify]]
            name = "late"
            on = ["unknown"]
            unknown-after = "30s"
            run = "echo $HOOKLINE_STATE >> /tmp/x"
            shell = true
            "#,
        )
        .unwrap();
        let [first, second] = &config.rules[..] else { panic!("{config:?}") };
        assert_eq!(first.name, "notify[0]");
        assert_eq!(first.on, [Trigger::Permission, Trigger::EnvFault]);
        assert_eq!(first.cli, ["claude"]);
        assert_eq!(first.run, Run::Argv(vec!["notify-send".into(), "hookline".into()]));
        assert_eq!(first.debounce, Duration::from_secs(1));
        assert_eq!(first.unknown_after, Defaults::default().unknown_after);
        assert_eq!(second.name, "late");
        assert_eq!(second.unknown_after, Duration::from_secs(30));
        assert_eq!(second.run, Run::Shell("echo $HOOKLINE_STATE >> /tmp/x".into()));
        assert_eq!(config.late_after, Defaults::default().late_after);
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_its_path() {
        let e = parse("[[notify]]\non = [\"idle\"]\nrun = [\"true\"]\nunknown_after = \"1s\"\n")
            .unwrap_err();
        assert_eq!(
            e,
            "notifications n.toml:4:1: notify[0].unknown_after: unknown key (keys are kebab-case: unknown-after)"
        );
        let e = parse("debounse = \"1s\"\n").unwrap_err();
        assert_eq!(e, "notifications n.toml:1:1: debounse: unknown key (did you mean debounce?)");
        let e = parse("[[notify]]\non = [\"idle\"]\nrun = [\"true\"]\nwhen = 1\n").unwrap_err();
        let keys = "name, on, cli, tag, cwd, run, shell, timeout, debounce, unknown-after";
        assert_eq!(
            e,
            format!("notifications n.toml:4:1: notify[0].when: unknown key (keys here: {keys})")
        );
    }

    #[test]
    fn a_rule_says_what_is_missing_or_wrong() {
        for (text, expected) in [
            (
                "[[notify]]\nrun = [\"true\"]\n",
                "notify[0].on: required: a list of waiting_on_human, ",
            ),
            (
                "[[notify]]\non = [\"busy\"]\nrun = [\"true\"]\n",
                "notify[0].on: \"busy\" is not a trigger",
            ),
            ("[[notify]]\non = [\"idle\"]\n", "notify[0].run: required"),
            (
                "[[notify]]\non = [\"idle\"]\nrun = \"notify-send hi\"\n",
                "notify[0].run: a string is a shell command line",
            ),
            (
                "[[notify]]\non = [\"idle\"]\nrun = [\"a\"]\nshell = true\n",
                "notify[0].run: with shell = true",
            ),
            ("[[notify]]\non = [\"idle\"]\nrun = []\n", "notify[0].run: the list must start"),
            (
                "[[notify]]\non = [\"idle\"]\nrun = [\"a\"]\ntimeout = \"soon\"\n",
                "notify[0].timeout: \"soon\" is not a duration",
            ),
            ("version = 2\n", "version: notifications version 2 is not supported"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with("notifications n.toml:"), "{text}: {e}");
            assert!(e.contains(&format!(": {expected}")), "{text}: {e}");
        }
    }

    #[test]
    fn the_notify_docs_list_every_key_and_their_recipes_parse() {
        let mut table = String::from("| key | meaning |\n|---|---|\n");
        for key in KEYS {
            table.push_str(&format!("| `{}` | {} |\n", key.path, key.doc));
        }
        hookline::testing::assert_generated_section("docs/notify.md", "notify-keys", &table);
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/notify.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let recipes: Vec<&str> =
            doc.split("```toml\n").skip(1).map(|b| b.split("```").next().unwrap()).collect();
        assert!(recipes.len() >= 4, "{} recipes", recipes.len());
        for recipe in recipes {
            let config = NotifyConfig::parse(recipe, "docs/notify.md").unwrap();
            assert_eq!(config.rules.len(), 1, "{recipe}");
        }
        for trigger in Trigger::WORDS {
            assert!(doc.contains(&format!("| `{trigger}` |")), "docs/notify.md lacks {trigger}");
        }
    }

    #[test]
    fn globs_stop_at_slashes_unless_doubled() {
        let g = |p: &str| Glob(p.into());
        assert!(g("/work/*").matches("/work/a"));
        assert!(!g("/work/*").matches("/work/a/b"));
        assert!(g("/work/**").matches("/work/a/b"));
        assert!(g("task-?").matches("task-1"));
        assert!(!g("task-?").matches("task-12"));
        assert!(g("*").matches(""));
        assert!(!g("a").matches("ab"));
    }
}
