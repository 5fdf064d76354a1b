//! The command-line grammar. One variant per subcommand; each is run by `cmd::<name>`.

// clap takes a field's doc comment for its help text: a flattened group of arguments has none
// of its own, and a field without one shows only its value name; and the text is written for
// `--help`, not as Markdown (`<P>_raw.<host>` is a subject, not a tag).
#![allow(missing_docs, rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Structured signals about agent CLI sessions.
#[derive(Debug, Parser)]
#[command(name = "hookline", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// hookline's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scripted Claude Code session through the real relay and show what hookline sees.
    Demo(DemoArgs),
    /// Stream canonical events as NDJSON, one object per line.
    Watch(WatchArgs),
    /// One row per session: live from the events directory's daemon when it answers, else
    /// rebuilt from the events directory (replayed: shown, never authoritative).
    Status(StatusArgs),
    /// The events and rules that produced a session's current state.
    Explain(ExplainArgs),
    /// List the profiles in force, or check a profile file.
    Profiles(ProfilesArgs),
    /// Remove consumed events older than the retention age.
    Prune(PruneArgs),
    /// List the durable cursors of the events directory (where each is, when it was saved,
    /// how many events it has not read), or remove one no consumer uses any more.
    Cursors(CursorsArgs),
    /// Register hookline's relay in a CLI's hooks settings (merging, never replacing).
    Install(InstallArgs),
    /// Remove hookline's relay from a CLI's hooks settings, leaving everything else.
    Uninstall(InstallArgs),
    /// Check that hooks are registered, the relay runs and events arrive.
    Doctor(DoctorArgs),
    /// Answer one question about a session: may I deliver input, nudge, declare it crashed,
    /// carry on despite an env fault, carry on without a human? Asks the events directory's
    /// daemon when one answers (an allowed input or nudge takes the idle's slot as a lease,
    /// printed as `lease ID`; `--peek` takes nothing); else rebuilt from history, which never
    /// authorizes input. Exit 0 allow, 1 withhold, 3 no structured signal (withhold: keep your
    /// own behaviour), 2 error.
    Decide(DecideArgs),
    /// The leases on input slots: `list` those held, `release ID` give one back (the slot is
    /// free again for the next caller).
    Lease(LeaseArgs),
    /// Answer decisions and state questions as JSON lines on stdin/stdout, from one live
    /// tracker generation (can authorize input).
    Serve(ServeArgs),
    /// Publish this machine's canonical events to a NATS JetStream stream, for a central
    /// `watch --nats` or `serve --nats` (see docs/fleet.md).
    Forward(ForwardArgs),
    /// Read a tmux pane's visible screen and say what the CLI's screen patterns find there
    /// (evidence that can only make a decision more careful, never allow).
    Pane(PaneArgs),
    /// Serve the same protocol on a Unix socket in the events directory, for every client at
    /// once: the one live authority `decide`, `status` and `deliver` use.
    Daemon(DaemonArgs),
    /// Type a text into a session's tmux pane once the daemon allows input (or a nudge, with
    /// `--nudge`), under a lease you hold (`--lease`) or one of its own, and confirm by the
    /// session's next turn_start that it was submitted. Exit 0 confirmed, 1 refused (nothing
    /// typed), 3 typed but not confirmed (loud; never retried), 2 usage or environment error
    /// (no daemon, no such pane: nothing typed).
    Deliver(DeliverArgs),
    /// Run the `[[notify]]` rules: a command on each transition a person should hear about
    /// (a permission dialog, a question, idle, an env fault, ...).
    Notify(NotifyArgs),
    /// A live dashboard of every session, those that need a person first (a static table
    /// when stdout is not a terminal).
    Top(TopArgs),
    /// Mark tmux panes with their session's state (`@hookline_state`, `@hookline_detail`) and
    /// print a summary for `status-right`.
    Tmux(TmuxArgs),
    /// A read-only web view of the daemon's sessions, for a browser or a phone: those that
    /// need a person first, updated live. Loopback only, unless given a token file.
    Web(WebArgs),
    /// The scripted agent TUI of `demo --live`.
    #[command(hide = true)]
    DemoAgent(DemoAgentArgs),
}

/// Where the events are.
#[derive(Debug, Args)]
pub struct DirArgs {
    /// The events directory [default: $HOOKLINE_EVENTS_DIR, else
    /// $XDG_STATE_HOME/hookline/events, else ~/.local/state/hookline/events].
    // Global: `hookline lease list --events-dir DIR` as well as `lease --events-dir DIR list`.
    #[arg(long, value_name = "DIR", global = true)]
    pub events_dir: Option<PathBuf>,
}

/// Which daemon a display reads.
#[derive(Debug, Args)]
pub struct DaemonSocketArgs {
    /// Read this daemon's socket (a `daemon --nats` central's, say) [default: the events
    /// directory's daemon when one answers, else the events directory itself].
    #[arg(long, value_name = "SOCKET")]
    pub daemon: Option<PathBuf>,
}

/// Where the events are, with the legacy directories to merge in.
#[derive(Debug, Args)]
pub struct SourceArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Also read this legacy directory (the older Python relay's); never created or modified.
    /// Repeatable.
    #[arg(long = "legacy-dir", value_name = "DIR")]
    pub legacy_dirs: Vec<PathBuf>,
}

/// `hookline demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Print canonical events as NDJSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Pause between hook calls, in milliseconds.
    #[arg(long, default_value_t = 250, value_name = "MS")]
    pub pace: u64,
    /// Keep the events directory instead of deleting it at the end.
    #[arg(long)]
    pub keep: bool,
    /// A live playground instead: two scripted agent TUIs in a private tmux server, their
    /// hooks through the real relay into a temporary events directory, and its daemon; prints
    /// the commands to try, and removes everything on q, Ctrl-C or SIGTERM.
    #[arg(long, conflicts_with_all = ["json", "keep", "pace"])]
    pub live: bool,
}

/// `hookline demo-agent` (hidden): the scripted agent TUI `demo --live` runs in each tmux
/// window, drawn like Claude Code, its hooks fired with captured Claude Code payloads through
/// the real relay.
#[derive(Debug, Args)]
pub struct DemoAgentArgs {
    /// The relay to run for each hook.
    #[arg(long, value_name = "PATH")]
    pub relay: PathBuf,
    /// The events directory the relay writes to.
    #[arg(long, value_name = "DIR")]
    pub events_dir: PathBuf,
    /// The session's tag (`HOOKLINE_TAG`).
    #[arg(long, value_name = "TAG")]
    pub tag: String,
    /// A prompt the agent submits itself once started, as if typed.
    #[arg(long, value_name = "TEXT")]
    pub opening: Option<String>,
}

/// `hookline watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Resume from this durable cursor and save it after each event written. A new cursor
    /// starts with the events that arrive from now on (with --from-start: the oldest present).
    #[arg(long, value_name = "NAME")]
    pub cursor: Option<String>,
    /// Start from the oldest event present (default: only events that arrive from now on).
    /// With --cursor, only a new cursor: an existing one resumes where it stopped.
    #[arg(long)]
    pub from_start: bool,
    /// Exit once every event present has been written, instead of waiting for more.
    #[arg(long)]
    pub no_follow: bool,
    /// Poll the directory instead of using filesystem notifications.
    #[arg(long)]
    pub poll: bool,
    /// Polling period with --poll, in milliseconds.
    #[arg(long, default_value_t = 100, value_name = "MS")]
    pub poll_interval: u64,
    /// Prune consumed events older than this while watching with a cursor (e.g. 7d, 12h).
    #[arg(long, default_value = "7d", value_name = "AGE")]
    pub retention: String,
    #[command(flatten)]
    pub nats: CentralArgs,
}

/// `hookline status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print JSON on a terminal too (output that is not a terminal is always JSON).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub transcripts: TranscriptArgs,
    #[command(flatten)]
    pub daemon: DaemonSocketArgs,
}

/// The fallback producer: sessions only their transcripts report.
#[derive(Debug, Args)]
pub struct TranscriptArgs {
    /// Also follow the sessions whose transcripts are under DIR and that have no hook event
    /// (the fallback producer: `unknown` at first, with the transcript as their source). With
    /// `--transcripts-cli`.
    #[arg(long, value_name = "DIR", requires = "transcripts_cli")]
    pub transcripts: Option<PathBuf>,
    /// The CLI whose transcripts `--transcripts` names (its profile's `[transcript]` says how
    /// to read them).
    #[arg(long, value_name = "CLI", requires = "transcripts")]
    pub transcripts_cli: Option<String>,
}

/// `hookline explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A session id or tag, or the start of one no other session's begins with.
    pub session: String,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `hookline profiles`.
#[derive(Debug, Args)]
pub struct ProfilesArgs {
    /// Check this file as a complete profile (strictly) instead of listing.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
}

/// `hookline prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Remove consumed events older than this (e.g. 7d, 12h; default 7d). Given explicitly,
    /// it also removes events by age alone when no cursor is registered.
    #[arg(long, value_name = "AGE")]
    pub max_age: Option<String>,
}

/// `hookline cursors`.
#[derive(Debug, Args)]
pub struct CursorsArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// `remove NAME`.
    #[command(subcommand)]
    pub action: Option<CursorsAction>,
}

/// What `hookline cursors` does besides listing.
#[derive(Debug, Subcommand)]
pub enum CursorsAction {
    /// Remove a cursor no consumer uses any more, so that it no longer holds back `prune`
    /// (refused while a process has it open).
    Remove {
        /// The cursor.
        name: String,
    },
}

/// Where a CLI's hooks settings live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The user's settings (e.g. `~/.claude/settings.json`).
    User,
    /// The project's shared settings (e.g. `.claude/settings.json`).
    Project,
    /// The project's local, untracked settings (e.g. `.claude/settings.local.json`).
    Local,
}

impl Scope {
    /// The scope's name in profiles.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

/// Arguments of `install` and `uninstall`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The CLI: a profile that can be installed (claude, codex, gemini, copilot, cursor,
    /// opencode, qwen, droid; `hookline profiles` lists them).
    pub cli: String,
    /// Which settings file (default: the profile's, usually user).
    #[arg(long, value_enum, conflicts_with = "settings")]
    pub scope: Option<Scope>,
    /// Edit this settings file instead of a scope's.
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,
    /// Print the change as a unified diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The relay to register (default: hookline-relay beside hookline, else on PATH).
    #[arg(long, value_name = "PATH")]
    pub relay: Option<PathBuf>,
}

/// Arguments of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check only this CLI (and fail when it is registered nowhere).
    pub cli: Option<String>,
    #[command(flatten)]
    pub dir: DirArgs,
    /// The relay `install` would register (default: found as `install` finds it).
    #[arg(long, value_name = "PATH")]
    pub relay: Option<PathBuf>,
}

/// The policy file.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// The decision policy [default: $XDG_CONFIG_HOME/hookline/policy.toml or
    /// ~/.config/hookline/policy.toml when it exists, else built-in defaults].
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// `hookline decide`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// A session id or tag; for `crashed`, `env-fault`, `escalate` and `stall`, also the
    /// start of one no other session's begins with (`input` and `nudge` name it exactly).
    pub session: String,
    /// input, nudge, crashed, env-fault, escalate or stall.
    pub question: hookline::decide::Question,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The caller's evidence, as JSON: {"pane": {...}, "transcript": {...}, "window_dead": bool}.
    #[arg(long, value_name = "JSON")]
    pub evidence: Option<String>,
    /// Also read this tmux pane (`session:window.pane`, `%ID`) and add what it shows to the
    /// pane evidence (it can only make the answer more careful).
    #[arg(long, value_name = "TARGET")]
    pub tmux: Option<String>,
    /// The tmux server's socket [default: tmux's own rules: $TMUX, else its default socket].
    #[arg(long, value_name = "PATH", requires = "tmux")]
    pub tmux_socket: Option<PathBuf>,
    /// Count a withheld nudge or crashed toward escalate.withheld-in-a-row, as a live
    /// generation's are (for a caller whose polling is its stall timer).
    #[arg(long)]
    pub count: bool,
    /// Answer without taking anything: no lease, no classifier consult, nothing counted toward
    /// a cap, a streak or a counter.
    #[arg(long, conflicts_with = "count")]
    pub peek: bool,
    /// Print the decision as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookline serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub transcripts: TranscriptArgs,
    /// Poll the directory instead of using filesystem notifications.
    #[arg(long)]
    pub poll: bool,
    #[command(flatten)]
    pub nats: CentralArgs,
}

/// How to reach the NATS server.
#[derive(Debug, Clone, Args)]
pub struct NatsAuth {
    /// The JetStream stream.
    #[arg(long, default_value = "HOOKLINE", value_name = "NAME")]
    pub stream: String,
    /// A NATS credentials file (user JWT and NKey seed).
    #[arg(long, value_name = "FILE")]
    pub creds: Option<PathBuf>,
    /// A file holding an NKey seed.
    #[arg(long, value_name = "FILE")]
    pub nkey: Option<PathBuf>,
    /// PEM CA certificates to trust; TLS is then required.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
}

/// Reading a JetStream consumer instead of the events directory (`watch`, `serve`).
#[derive(Debug, Clone, Args)]
pub struct CentralArgs {
    /// Read the events of many machines from this NATS server (nats://host:port) instead of
    /// the events directory.
    #[arg(long, value_name = "URL", requires = "consumer")]
    pub nats: Option<String>,
    /// The durable consumer to read (with --nats); one reader at a time.
    #[arg(long, value_name = "NAME", requires = "nats")]
    pub consumer: Option<String>,
    /// Only subjects matching this (with --nats), e.g. hookline.build-3.>.
    #[arg(long, value_name = "SUBJECT", requires = "nats")]
    pub filter: Option<String>,
    #[command(flatten)]
    pub auth: NatsAuth,
}

/// What the stream keeps, when `forward` creates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RetentionArg {
    /// Until the stream's age limit.
    Limits,
    /// Until every consumer has acknowledged.
    Interest,
    /// Until one consumer has acknowledged.
    WorkQueue,
}

/// `hookline forward`.
#[derive(Debug, Args)]
pub struct ForwardArgs {
    /// The NATS server (nats://host:port; several separated by commas).
    #[arg(long, value_name = "URL")]
    pub nats: String,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub auth: NatsAuth,
    /// The first token of every subject.
    #[arg(long, default_value = "hookline", value_name = "P")]
    pub subject_prefix: String,
    /// This machine's name in subjects, message ids and origins [default: the hostname].
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Also publish each raw envelope, on <P>_raw.<host>.<cli>.<session>.
    #[arg(long)]
    pub raw: bool,
    /// The stream's retention when it is created.
    #[arg(long, value_enum, default_value = "limits")]
    pub retention: RetentionArg,
    /// The stream's replicas when it is created (a cluster of at least as many servers).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub replicas: usize,
    /// The oldest message the stream keeps when it is created (e.g. 7d; 0 for no limit).
    #[arg(long, default_value = "7d", value_name = "AGE")]
    pub max_age: String,
    /// Poll the directory instead of using filesystem notifications.
    #[arg(long)]
    pub poll: bool,
}

/// `hookline pane`.
#[derive(Debug, Args)]
pub struct PaneArgs {
    /// The tmux target: `session:window.pane`, `%ID`, ...
    #[arg(long, value_name = "TARGET")]
    pub tmux: String,
    /// The tmux server's socket [default: tmux's own rules: $TMUX, else its default socket].
    #[arg(long, value_name = "PATH")]
    pub tmux_socket: Option<PathBuf>,
    /// The CLI whose `[pane]` patterns to use [default: every profile's together].
    #[arg(long, value_name = "NAME")]
    pub cli: Option<String>,
    /// Print the reading as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookline deliver`.
#[derive(Debug, Args)]
pub struct DeliverArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// The session's tmux pane: `session:window.pane`, `%ID`, ...
    #[arg(long, value_name = "TARGET")]
    pub tmux: String,
    /// The tmux server's socket [default: $TMUX's, else tmux's default socket, as this shell
    /// sees them: sent to the daemon, which types into no other server].
    #[arg(long, value_name = "PATH")]
    pub tmux_socket: Option<PathBuf>,
    /// The session: its id or its tag, exactly.
    #[arg(long, value_name = "ID|TAG")]
    pub session: String,
    /// Type under this lease (from an allowed `hookline decide S input` or `nudge`); without
    /// it the delivery takes a lease of its own, and gives it back if it types nothing.
    #[arg(long, value_name = "ID")]
    pub lease: Option<String>,
    /// Ask `nudge` (with its policy: nudge.min-idle, nudge.max-in-a-row) instead of `input`;
    /// without TEXT, type the nudge text the allowed nudge carries (what `stall` quotes).
    #[arg(long)]
    pub nudge: bool,
    /// Print the outcome as JSON (the stderr line of an unconfirmed delivery is printed too).
    #[arg(long)]
    pub json: bool,
    /// Wait up to this long for an allow (e.g. `30s`) [default: ask once, don't wait].
    #[arg(long, value_name = "DUR", value_parser = hookline::units::parse_duration)]
    pub wait: Option<std::time::Duration>,
    /// How long after the Enter to wait for the confirming turn_start.
    #[arg(long, value_name = "DUR", default_value = "15s", value_parser = hookline::units::parse_duration)]
    pub confirm_timeout: std::time::Duration,
    /// How long after the Enter the self-heal may press Enter once more, when the text still
    /// sits unsubmitted in the composer.
    #[arg(long, value_name = "DUR", default_value = "1500ms", value_parser = hookline::units::parse_duration)]
    pub heal_after: std::time::Duration,
    /// Read the text from this file.
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// The text to type; `-` reads it from stdin.
    #[arg(value_name = "TEXT", required_unless_present_any = ["file", "nudge"])]
    pub text: Option<String>,
}

/// `hookline lease`.
#[derive(Debug, Args)]
pub struct LeaseArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print JSON (`list`).
    #[arg(long, global = true)]
    pub json: bool,
    /// What to do.
    #[command(subcommand)]
    pub action: LeaseAction,
}

/// What `hookline lease` does.
#[derive(Debug, Subcommand)]
pub enum LeaseAction {
    /// Every lease the daemon holds for its requesters.
    List,
    /// Give a lease back: the slot is free again for the next caller (exit 1 for an unknown
    /// or spent lease).
    Release {
        /// The lease's id (`l-…`).
        id: String,
    },
}

/// `hookline daemon`.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Tell the running daemon of the events directory to read its policy and profiles again
    /// (as SIGHUP does), keeping its live generation, then exit.
    #[arg(long)]
    pub reload: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub transcripts: TranscriptArgs,
    #[command(flatten)]
    pub nats: CentralArgs,
}

/// `hookline notify`.
#[derive(Debug, Args)]
pub struct NotifyArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// The notifications file [default: $XDG_CONFIG_HOME/hookline/notify.toml or
    /// ~/.config/hookline/notify.toml].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Check the file, print its rules, and exit.
    #[arg(long)]
    pub check: bool,
    /// Poll the directory instead of using filesystem notifications.
    #[arg(long)]
    pub poll: bool,
    #[command(flatten)]
    pub daemon: DaemonSocketArgs,
}

/// `hookline top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub daemon: DaemonSocketArgs,
}

/// `hookline web`.
#[derive(Debug, Args)]
pub struct WebArgs {
    /// The address to listen on; one that is not loopback needs --token-file.
    #[arg(long, default_value = "127.0.0.1:8470", value_name = "ADDR:PORT")]
    pub listen: std::net::SocketAddr,
    /// A file (mode 0600) holding the token every request must carry (`Authorization:
    /// Bearer TOKEN`, or `?token=TOKEN` once, which sets a cookie).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub daemon: DaemonSocketArgs,
}

/// `hookline tmux`.
#[derive(Debug, Args)]
pub struct TmuxArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Keep the marks up to date as events arrive, printing the summary when it changes.
    #[arg(long)]
    pub follow: bool,
    /// The tmux server's socket [default: tmux's own rules: $TMUX, else its default socket].
    #[arg(long, value_name = "PATH")]
    pub tmux_socket: Option<PathBuf>,
    #[command(flatten)]
    pub daemon: DaemonSocketArgs,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use hookline::decide::Question;

    #[test]
    fn the_grammar_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// docs/commands.md has a section per subcommand naming each of its arguments, and names
    /// no flag the subcommand does not take.
    #[test]
    fn every_flag_is_in_the_commands_reference() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/commands.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let command = super::Cli::command();
        let subcommands: Vec<_> = command.get_subcommands().collect();
        assert!(subcommands.len() >= 11, "{} subcommands", subcommands.len());
        // A hidden subcommand is documented with the command that runs it.
        for sub in subcommands.into_iter().filter(|s| !s.is_hide_set()) {
            let name = sub.get_name();
            let heading = doc
                .split("\n## ")
                .skip(1)
                .find(|s| s.lines().next().unwrap().contains(&format!("`hookline {name}`")))
                .unwrap_or_else(|| panic!("docs/commands.md has no section for `hookline {name}`"));
            let mut longs = vec!["help".to_string()];
            for arg in sub.get_arguments().filter(|a| a.get_id() != "help") {
                let word = match arg.get_long() {
                    Some(long) => {
                        longs.push(long.to_string());
                        format!("--{long}")
                    }
                    None => arg.get_id().as_str().to_uppercase(),
                };
                assert!(
                    heading.contains(&word),
                    "docs/commands.md: `hookline {name}` lacks {word}"
                );
            }
            for (i, _) in heading.match_indices("--") {
                let flag: String = heading[i + 2..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                    .collect();
                // `|---|` is a table rule, not a flag.
                if !flag.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue;
                }
                assert!(
                    longs.contains(&flag),
                    "docs/commands.md: `hookline {name}` documents --{flag}, which it does not take"
                );
            }
        }
    }

    #[test]
    fn decide_lists_every_question_in_its_help() {
        let command = super::Cli::command();
        let decide = command.find_subcommand("decide").unwrap();
        let arg = decide.get_arguments().find(|a| a.get_id() == "question").unwrap();
        let help = arg.get_help().unwrap().to_string();
        assert_eq!(help, Question::listed(), "the help of `decide QUESTION`");
    }
}
