//! Live sessions driven from a shell: fake agents (`src/bin/fake_agent.rs`) in panes of one
//! real tmux server, their hooks through the real relay, a real `hookline daemon`, and the
//! built `hookline` run as a person or a script would run it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use hookline_tests::binaries;
use hookline_tests::deliver_check::Daemon;
use hookline_tests::tmux::Tmux;

/// One fake agent: what it is called, where it runs, what it received.
pub struct Agent {
    /// Its session id.
    pub session: String,
    /// Its tag, when it has one: the name acts use.
    pub tag: Option<String>,
    /// Its pane's id (`%3`): stable whatever tmux renumbers.
    pub pane: String,
    /// Every byte it read, in order.
    log: PathBuf,
}

impl Agent {
    /// The name acts use: its tag, else its session id.
    pub fn name(&self) -> &str {
        self.tag.as_deref().unwrap_or(&self.session)
    }

    /// Every byte it received so far.
    pub fn received(&self) -> String {
        let bytes = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8(bytes).unwrap()
    }

    /// Waits until what it received ends with `tail`, then returns all of it.
    pub fn wait_received(&self, tail: &str) -> String {
        wait_for(&format!("{} to receive {tail:?}", self.name()), || {
            let got = self.received();
            got.ends_with(tail).then_some(got)
        })
    }
}

/// How to start a fake agent.
pub struct Spec<'a> {
    session: &'a str,
    tag: Option<&'a str>,
    flags: Vec<String>,
    /// Its events go here instead of the daemon's directory (a session the daemon never
    /// hears of).
    events: Option<PathBuf>,
}

impl<'a> Spec<'a> {
    /// An agent with session id `session`.
    pub fn new(session: &'a str) -> Spec<'a> {
        Spec { session, tag: None, flags: Vec::new(), events: None }
    }

    /// Launched with `HOOKLINE_TAG=tag`.
    pub fn tag(mut self, tag: &'a str) -> Spec<'a> {
        self.tag = Some(tag);
        self
    }

    /// With the fake agent's behaviour flags.
    pub fn flags(mut self, flags: &[&str]) -> Spec<'a> {
        self.flags.extend(flags.iter().map(|f| (*f).to_owned()));
        self
    }

    /// Its hooks write into `events`, a directory no daemon reads.
    pub fn silent_in(mut self, events: PathBuf) -> Spec<'a> {
        self.events = Some(events);
        self
    }
}

/// A tmux server of fake agents, their events directory, a configuration directory
/// (`XDG_CONFIG_HOME`) shared by the daemon and every command, and the daemon.
pub struct Live {
    pub dir: tempfile::TempDir,
    pub tmux: Tmux,
    pub agents: Vec<Agent>,
    daemon: Option<Daemon>,
    /// `TMUX_TMPDIR` of the daemon, when it is not the tests'.
    daemon_env: Vec<(&'static str, PathBuf)>,
}

impl Live {
    /// A tmux server whose first pane (`main:0.0`) runs the agent `first`, at its prompt.
    pub fn start(first: Spec) -> Live {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config/hookline")).unwrap();
        let (script, agent) = write_agent(dir.path(), &first);
        let tmux = Tmux::start(dir.path(), &script).unwrap();
        Live::with_server(dir, tmux, agent)
    }

    /// [`Live::start`], the tmux server being the default one of `TMUX_TMPDIR=tmpdir`.
    pub fn start_default_in(first: Spec, tmpdir: &Path) -> Live {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config/hookline")).unwrap();
        let (script, agent) = write_agent(dir.path(), &first);
        let tmux = Tmux::start_default_in(dir.path(), &script, tmpdir).unwrap();
        Live::with_server(dir, tmux, agent)
    }

    fn with_server(dir: tempfile::TempDir, tmux: Tmux, mut agent: Agent) -> Live {
        agent.pane =
            tmux.command(&["display-message", "-p", "-t", "main:0.0", "#{pane_id}"]).unwrap();
        let live = Live { dir, tmux, agents: vec![agent], daemon: None, daemon_env: vec![] };
        live.wait_for_prompt(0);
        live
    }

    /// Starts another agent in a new pane of window 0, after the others (`main:0.N`), at its
    /// prompt (or its dialog); returns its index in [`Live::agents`].
    pub fn add(&mut self, spec: Spec) -> usize {
        let (script, mut agent) = write_agent(self.dir.path(), &spec);
        let script = script.to_str().unwrap().to_owned();
        // Split the last pane: the new one comes right after it.
        let last = self.agents.last().map_or("main:0", |a| a.pane.as_str()).to_owned();
        let pane = self
            .tmux
            .command(&["split-window", "-d", "-P", "-F", "#{pane_id}", "-t", &last, &script])
            .unwrap();
        // Many panes need room: each gets an even share of the window.
        self.tmux.command(&["select-layout", "-t", "main:0", "even-vertical"]).unwrap();
        agent.pane = pane;
        self.agents.push(agent);
        let index = self.agents.len() - 1;
        self.wait_for_prompt(index);
        index
    }

    fn wait_for_prompt(&self, index: usize) {
        self.wait_for_screen(index, |s| {
            s.contains("? for shortcuts") || s.contains("Do you want to proceed?")
        });
    }

    /// The events directory the daemon reads.
    pub fn events(&self) -> PathBuf {
        self.dir.path().join("events")
    }

    /// `XDG_CONFIG_HOME` of the daemon and of every command.
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// Writes the policy the daemon reads (at its start, and at a reload).
    pub fn write_policy(&self, toml: &str) {
        write_atomically(&self.config().join("hookline/policy.toml"), toml);
    }

    /// Writes a profile overlay for `cli`.
    pub fn write_overlay(&self, cli: &str, toml: &str) {
        let dir = self.config().join("hookline/profiles");
        std::fs::create_dir_all(&dir).unwrap();
        write_atomically(&dir.join(format!("{cli}.toml")), toml);
    }

    /// The daemon runs with `TMUX_TMPDIR=tmpdir` (its own default tmux server).
    pub fn daemon_tmux_tmpdir(&mut self, tmpdir: &Path) {
        self.daemon_env = vec![("TMUX_TMPDIR", tmpdir.to_owned())];
    }

    /// Starts the daemon (stopping a running one first: a restart, a new generation).
    pub fn start_daemon(&mut self) {
        drop(self.daemon.take());
        let env: Vec<(&str, &OsStr)> =
            self.daemon_env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        self.daemon = Some(Daemon::start_configured(&self.events(), &self.config(), &env).unwrap());
    }

    /// The daemon's pid.
    pub fn daemon_pid(&self) -> u32 {
        self.daemon.as_ref().expect("a daemon").pid()
    }

    /// A client of the daemon.
    pub fn client(&self) -> hookline::daemon::Client {
        hookline::daemon::Client::connect(&self.events()).unwrap()
    }

    /// `hookline SUBCOMMAND --events-dir EVENTS ARGS...`, outside tmux, with the shared
    /// configuration directory.
    pub fn hookline(&self, subcommand: &str, args: &[&str]) -> Command {
        let mut command = Command::new(binaries::hookline());
        command
            .arg(subcommand)
            .arg("--events-dir")
            .arg(self.events())
            .args(args)
            .env_remove("TMUX")
            .env_remove("HOOKLINE_EVENTS_DIR")
            .env("XDG_CONFIG_HOME", self.config());
        command
    }

    /// `hookline decide NAME QUESTION ARGS...`.
    pub fn decide(&self, name: &str, question: &str, args: &[&str]) -> Output {
        let mut all = vec![name, question];
        all.extend_from_slice(args);
        self.hookline("decide", &all).output().unwrap()
    }

    /// `hookline lease ARGS...`.
    pub fn lease(&self, args: &[&str]) -> Output {
        self.hookline("lease", args).output().unwrap()
    }

    /// `hookline deliver` into the pane `target` of this tmux server, for the session
    /// `name`, with short timings.
    pub fn deliver_command(&self, name: &str, target: &str, args: &[&str]) -> Command {
        let socket = self.tmux.socket_path().unwrap().to_str().unwrap().to_owned();
        let mut all = vec!["--tmux", target, "--tmux-socket", &socket, "--session", name];
        all.extend_from_slice(&["--heal-after", "600ms"]);
        if !args.contains(&"--confirm-timeout") {
            all.extend_from_slice(&["--confirm-timeout", "4s"]);
        }
        all.extend_from_slice(args);
        self.hookline("deliver", &all)
    }

    /// `hookline deliver` into agent `index`'s pane (by its id), naming it as acts do.
    pub fn deliver(&self, index: usize, args: &[&str]) -> Output {
        let agent = &self.agents[index];
        self.deliver_command(agent.name(), &agent.pane, args).output().unwrap()
    }

    /// Waits until agent `index`'s screen satisfies `what`.
    pub fn wait_for_screen(&self, index: usize, what: impl Fn(&str) -> bool) -> String {
        let pane = &self.agents[index].pane;
        wait_for(&format!("the screen of {pane}"), || {
            let screen = self.tmux.command(&["capture-pane", "-p", "-t", pane]).ok()?;
            what(&screen).then_some(screen)
        })
    }

    /// Types `line` into agent `index`'s pane and presses Enter, as a person does.
    pub fn type_line(&self, index: usize, line: &str) {
        let pane = &self.agents[index].pane;
        self.tmux.command(&["send-keys", "-t", pane, "-l", line]).unwrap();
        self.tmux.command(&["send-keys", "-t", pane, "Enter"]).unwrap();
    }

    /// Presses one key (by its tmux name) in agent `index`'s pane.
    pub fn press(&self, index: usize, key: &str) {
        self.tmux.command(&["send-keys", "-t", &self.agents[index].pane, key]).unwrap();
    }

    /// The daemon's view of agent `index`'s session.
    pub fn view(&self, index: usize) -> Option<hookline::state::View> {
        self.client().state(self.agents[index].name()).unwrap()
    }

    /// One turn typed by a person into agent `index`'s pane, ended live: returns once the
    /// daemon holds the idle it ends in (and what the agent received).
    pub fn turn(&self, index: usize, line: &str) -> String {
        let before = self.view(index).map(|v| v.seq);
        self.type_line(index, line);
        self.wait_idle_after(index, before);
        self.agents[index].wait_received(&format!("{line}\r"))
    }

    /// Waits until the daemon holds an explicit, live idle of agent `index`'s session, after
    /// the event `seq` when given.
    pub fn wait_idle_after(&self, index: usize, seq: Option<u64>) -> hookline::state::View {
        let name = self.agents[index].name().to_owned();
        wait_for(&format!("{name} to be idle after seq {seq:?}"), || {
            let view = self.view(index)?;
            let idle = view.state.as_str() == "idle" && view.authoritative;
            (idle && seq.is_none_or(|s| view.seq > s)).then_some(view)
        })
    }

    /// The decision journal's records.
    pub fn journal(&self) -> Vec<serde_json::Value> {
        let path = self.dir.path().join("events.decisions.ndjson");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

/// Writes agent `spec`'s launch script into `dir`: the script, and the agent given its pane.
fn write_agent(dir: &Path, spec: &Spec) -> (PathBuf, Agent) {
    let log = dir.join(format!("received-{}.bin", spec.session));
    let events = spec.events.clone().unwrap_or_else(|| dir.join("events"));
    let script = dir.join(format!("agent-{}.sh", spec.session));
    let mut command = format!(
        "#!/bin/sh\nexec '{}' --log '{}' --relay '{}' --events-dir '{}' --session '{}'",
        env!("CARGO_BIN_EXE_fake_agent"),
        log.display(),
        binaries::relay().display(),
        events.display(),
        spec.session,
    );
    if let Some(tag) = spec.tag {
        command.push_str(&format!(" --tag '{tag}'"));
    }
    for flag in &spec.flags {
        command.push_str(&format!(" '{flag}'"));
    }
    command.push('\n');
    std::fs::write(&script, command).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (session, tag) = (spec.session.to_owned(), spec.tag.map(str::to_owned));
    (script, Agent { session, tag, pane: String::new(), log })
}

fn write_atomically(path: &Path, text: &str) {
    let temp = path.with_extension("tmp");
    std::fs::write(&temp, text).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

/// Polls `what` every 20 ms until it gives a value; panics naming `waiting_for` after 10 s.
pub fn wait_for<T>(waiting_for: &str, mut what: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(value) = what() {
            return value;
        }
        assert!(Instant::now() < deadline, "waited 10 s for {waiting_for}");
        thread::sleep(Duration::from_millis(20));
    }
}

/// The process's stdout, as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The process's stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The process's stdout, as JSON.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// The id `hookline decide` printed on its last line, `lease ID`.
pub fn lease_of(out: &Output) -> String {
    let text = stdout(out);
    let last = text.lines().last().unwrap_or_default();
    last.strip_prefix("lease ")
        .unwrap_or_else(|| panic!("no `lease ID` last line: {text}"))
        .to_owned()
}

/// What tmux delivers for a bracketed paste of `text`.
pub fn pasted(text: &str) -> String {
    super::pasted(text)
}
