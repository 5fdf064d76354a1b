//! `hookline top`: every session, those that need a person first, updated on each event.
//! On a terminal, a ratatui dashboard (feature `tui`, on by default): arrows select, Enter
//! opens the session's explanation, q, Esc or Ctrl-C quits. Elsewhere (or built without `tui`), the same
//! table printed once.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::term::escape;
use hookline::state::{StateKind, View};
use hookline::units::format_age;

use hookline::engine::History;

use super::{Outcome, replay};
use crate::cli::TopArgs;

pub fn run(args: &TopArgs) -> Outcome {
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    // The daemon's live generation when one answers: what it shows is what `decide` would
    // answer (and nothing shown takes a slot).
    let daemon = super::connect_daemon(&args.source.dir, &args.daemon)?;
    #[cfg(feature = "tui")]
    if terminal {
        return tui::run(args, daemon);
    }
    #[cfg(not(feature = "tui"))]
    if terminal {
        eprintln!("hookline: built without the `tui` feature: printing the table once");
    }
    let views = match daemon {
        Some(mut daemon) => daemon.sessions()?,
        None => {
            let history = History::Last(hookline::state::HISTORY);
            replay(&args.source, &args.policy, history)?.views()
        }
    };
    print_table(&rows(&views));
    Ok(ExitCode::SUCCESS)
}

/// One row of the table, as text.
#[derive(Debug, Clone)]
struct Row {
    /// The name that finds the session exactly (its id, else its tag; `@host` after it for
    /// another host's): what explain is asked for.
    #[cfg_attr(not(feature = "tui"), allow(dead_code))]
    id: String,
    state: StateKind,
    /// The state and its detail.
    status: String,
    age: String,
    host: String,
    tag: String,
    cli: String,
    cwd: String,
    /// Background tasks and wake-ups the last stop left.
    pending: String,
    last: String,
}

/// Sessions that need a person first, then those nobody can tell, then the rest; the most
/// recently active first within each.
fn rank(state: StateKind) -> u8 {
    match state {
        StateKind::WaitingOnHuman | StateKind::EnvFault => 0,
        StateKind::Unknown => 1,
        StateKind::Idle => 2,
        StateKind::Active | StateKind::ChildCommand => 3,
        StateKind::Ended => 4,
    }
}

fn rows(views: &[View]) -> Vec<Row> {
    let mut rows: Vec<Row> = views
        .iter()
        .map(|v| {
            let state = v.state;
            let status = match &v.detail {
                Some(detail) => format!("{state} {}", escape(detail)),
                None => state.to_string(),
            };
            let text = |v: Option<&str>| escape(v.unwrap_or("-")).into_owned();
            let pending = v.pending.tasks + v.pending.wakes;
            let name = v.session_id.clone().or_else(|| v.tag.clone()).unwrap_or_default();
            Row {
                id: match &v.host {
                    Some(host) => format!("{name}@{host}"),
                    None => name,
                },
                state,
                status,
                age: format_age(std::time::Duration::from_millis(v.age_ms)),
                host: text(v.host.as_deref()),
                tag: text(v.tag.as_deref()),
                cli: text(Some(&v.cli)),
                cwd: text(v.cwd.as_deref()),
                pending: if pending == 0 { "-".into() } else { pending.to_string() },
                last: text(v.last_event.native.as_deref().or(Some(&v.last_event.kind))),
            }
        })
        .collect();
    rows.sort_by_key(|r| rank(r.state));
    rows
}

const HEADERS: [&str; 9] = ["STATE", "AGE", "HOST", "TAG", "CLI", "CWD", "BG", "LAST EVENT", ""];
/// Column widths but the cwd's, which takes what is left.
/// (The host's is 0, and the column left out, when every session is this machine's.)
const WIDTHS: [usize; 7] = [27, 6, 9, 10, 6, 2, 13];

/// The column widths for these rows: no host column unless a session is another host's.
fn widths(rows: &[Row]) -> [usize; 7] {
    let mut widths = WIDTHS;
    if rows.iter().all(|r| r.host == "-") {
        widths[2] = 0;
    }
    widths
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

fn clip_left(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - width.saturating_sub(1)).collect();
    format!("…{kept}")
}

fn print_table(rows: &[Row]) {
    if rows.is_empty() {
        println!("no sessions");
        return;
    }
    let [s, a, h, t, c, b, l] = widths(rows);
    let cwd = 20;
    let host = |text: &str| if h == 0 { String::new() } else { format!("{:<h$} ", clip(text, h)) };
    println!(
        "{:<s$} {:>a$} {}{:<t$} {:<c$} {:<cwd$} {:>b$} {}",
        HEADERS[0],
        HEADERS[1],
        host(HEADERS[2]),
        HEADERS[3],
        HEADERS[4],
        HEADERS[5],
        HEADERS[6],
        HEADERS[7]
    );
    for r in rows {
        println!(
            "{:<s$} {:>a$} {}{:<t$} {:<c$} {:<cwd$} {:>b$} {}",
            clip(&r.status, s),
            r.age,
            host(&r.host),
            clip(&r.tag, t),
            clip(&r.cli, c),
            clip_left(&r.cwd, cwd),
            r.pending,
            clip(&r.last, l)
        );
    }
}

#[cfg(feature = "tui")]
mod tui {
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::time::Duration;

    use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    use ratatui::layout::{Constraint, Layout};
    use ratatui::style::{Color, Modifier, Style};
    use ratatui::text::Line;
    use ratatui::widgets::{Block, Paragraph, Row as TableRow, Table, TableState};
    use ratatui::{DefaultTerminal, Frame};

    use std::sync::{Arc, Mutex};

    use hookline::daemon::Client;
    use hookline::daemon::follow::Follower;
    use hookline::format::clock::now_ns;
    use hookline::state::Transition;

    use super::*;
    use crate::cmd::{Live, Update};

    /// Where the sessions come from: an engine of top's own over the events directory, or
    /// a daemon's live generation.
    enum Backend {
        Local(Live),
        Daemon { views: Arc<Mutex<Vec<View>>>, explain: Client },
    }

    impl Backend {
        fn views(&self) -> Vec<View> {
            match self {
                Backend::Local(live) => live.snapshots().iter().map(View::from).collect(),
                Backend::Daemon { views, .. } => {
                    views.lock().unwrap_or_else(|p| p.into_inner()).clone()
                }
            }
        }

        /// The session's view and last transitions.
        fn explain(&mut self, id: &str) -> (Option<View>, Vec<Transition>, Option<String>) {
            match self {
                Backend::Local(live) => live.running.with_decider(|d| {
                    let tracker = d.tracker();
                    let history = tracker.find(id).map(|s| s.history().cloned().collect());
                    (tracker.view(id, now_ns()), history.unwrap_or_default(), None)
                }),
                Backend::Daemon { explain, .. } => match explain.explain(id) {
                    Ok(answer) => (answer.view.map(|v| *v), answer.transitions, None),
                    Err(e) => (None, Vec::new(), Some(e.to_string())),
                },
            }
        }
    }

    /// Follows the daemon on a thread of its own, keeping `views` current and waking the
    /// dashboard on each change; reconnects when the daemon goes and comes back.
    fn follow_daemon(
        client: Client,
        views: Arc<Mutex<Vec<View>>>,
        wakes: mpsc::Sender<Wake>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let socket = client.socket().to_owned();
        let (mut follower, now) = Follower::new(client)?;
        *views.lock().unwrap_or_else(|p| p.into_inner()) = now;
        std::thread::spawn(move || {
            loop {
                match follower.next(TICK) {
                    Ok(update) => {
                        *views.lock().unwrap_or_else(|p| p.into_inner()) = update.sessions;
                        if wakes.send(Wake::Live(Update::Event)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let why = format!("the daemon: {e}");
                        if wakes.send(Wake::Live(Update::Failed(why))).is_err() {
                            return;
                        }
                        std::thread::sleep(TICK);
                        if let Ok((again, now)) =
                            Client::connect_socket(&socket).and_then(Follower::new)
                        {
                            follower = again;
                            *views.lock().unwrap_or_else(|p| p.into_inner()) = now;
                        }
                    }
                }
            }
        });
        Ok(())
    }

    /// What wakes the dashboard.
    enum Wake {
        Live(Update),
        Key(KeyCode),
        /// Ctrl-C, or the keyboard is gone: quit.
        KeysGone,
    }

    /// The age column ticks once a second without an event.
    const TICK: Duration = Duration::from_secs(1);

    struct App {
        backend: Backend,
        selected: TableState,
        explain: Option<String>,
        note: Option<String>,
    }

    pub fn run(args: &TopArgs, daemon: Option<Client>) -> Outcome {
        let (tx, wakes) = mpsc::channel();
        let backend = match daemon {
            Some(client) => {
                let explain = Client::connect_socket(client.socket())?;
                let views = Arc::new(Mutex::new(Vec::new()));
                follow_daemon(client, Arc::clone(&views), tx.clone())?;
                Backend::Daemon { views, explain }
            }
            None => {
                Backend::Local(Live::start(&args.source, &args.policy, tx.clone(), Wake::Live)?)
            }
        };
        std::thread::spawn(move || {
            loop {
                match event::read() {
                    // Raw mode turns Ctrl-C into a key: it quits, as it would without.
                    Ok(Event::Key(key))
                        if key.kind == KeyEventKind::Press
                            && key.code == KeyCode::Char('c')
                            && key.modifiers.contains(KeyModifiers::CONTROL) =>
                    {
                        let _ = tx.send(Wake::KeysGone);
                        return;
                    }
                    Ok(Event::Key(key)) if key.kind == KeyEventKind::Press => {
                        if tx.send(Wake::Key(key.code)).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {
                        // A resize: redraw.
                        if tx.send(Wake::Live(Update::Event)).is_err() {
                            return;
                        }
                    }
                    Err(_) => {
                        let _ = tx.send(Wake::KeysGone);
                        return;
                    }
                }
            }
        });
        let mut app = App {
            backend,
            selected: TableState::default().with_selected(0),
            explain: None,
            note: None,
        };
        let mut terminal = ratatui::init();
        let result = app.run(&mut terminal, &wakes);
        ratatui::restore();
        result.map(|()| ExitCode::SUCCESS)
    }

    impl App {
        fn run(
            &mut self,
            terminal: &mut DefaultTerminal,
            wakes: &mpsc::Receiver<Wake>,
        ) -> Result<(), Box<dyn std::error::Error>> {
            loop {
                let rows = rows(&self.backend.views());
                if let Some(i) = self.selected.selected() {
                    self.selected.select(Some(i.min(rows.len().saturating_sub(1))));
                }
                terminal.draw(|frame| self.draw(frame, &rows))?;
                let wake = match wakes.recv_timeout(TICK) {
                    Ok(wake) => wake,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                };
                match wake {
                    Wake::Live(Update::Event) => {
                        if self.note.as_deref().is_some_and(|n| n.starts_with("events stopped")) {
                            self.note = None;
                        }
                    }
                    Wake::Live(Update::Notice(notice)) => self.note = Some(notice.to_string()),
                    Wake::Live(Update::Failed(why)) => {
                        self.note = Some(format!("events stopped: {why}"))
                    }
                    Wake::KeysGone => return Ok(()),
                    Wake::Key(key) => {
                        if !self.key(key, &rows) {
                            return Ok(());
                        }
                    }
                }
            }
        }

        /// Handles a key; `false` to quit.
        fn key(&mut self, key: KeyCode, rows: &[Row]) -> bool {
            match key {
                KeyCode::Char('q') => return false,
                KeyCode::Esc | KeyCode::Backspace if self.explain.is_some() => self.explain = None,
                KeyCode::Esc => return false,
                KeyCode::Down | KeyCode::Char('j') => self.selected.select_next(),
                KeyCode::Up | KeyCode::Char('k') => self.selected.select_previous(),
                KeyCode::Enter | KeyCode::Char('e') => {
                    if self.explain.is_some() {
                        self.explain = None;
                    } else if let Some(row) = self.selected.selected().and_then(|i| rows.get(i)) {
                        self.explain = Some(row.id.clone());
                    }
                }
                _ => {}
            }
            true
        }

        fn draw(&mut self, frame: &mut Frame, rows: &[Row]) {
            let [head, body, foot] = Layout::vertical([
                Constraint::Length(1),
                Constraint::Min(3),
                Constraint::Length(1),
            ])
            .areas(frame.area());
            let need = rows.iter().filter(|r| rank(r.state) == 0).count();
            let from = match &self.backend {
                Backend::Local(_) => "events directory".to_owned(),
                Backend::Daemon { explain, .. } => format!("daemon {}", explain.socket().display()),
            };
            let title = format!("hookline top: {} sessions, {need} need you ({from})", rows.len());
            frame.render_widget(
                Paragraph::new(Line::from(title).style(Style::new().add_modifier(Modifier::BOLD))),
                head,
            );
            let help = match &self.explain {
                Some(_) => "esc back  q quit".to_owned(),
                None => "↑↓ select  enter explain  q quit".to_owned(),
            };
            let foot_text = match &self.note {
                Some(note) => format!("{help}  |  {}", escape(note)),
                None => help,
            };
            frame.render_widget(
                Paragraph::new(foot_text).style(Style::new().fg(Color::DarkGray)),
                foot,
            );
            match self.explain.clone() {
                Some(id) => self.draw_explain(frame, body, &id),
                None => self.draw_table(frame, body, rows),
            }
        }

        fn draw_table(&mut self, frame: &mut Frame, area: ratatui::layout::Rect, rows: &[Row]) {
            let [s, a, h, t, c, b, l] = widths(rows);
            let fixed = (s + a + h + t + c + b + l + 6 + usize::from(h > 0)) as u16;
            let cwd = area.width.saturating_sub(fixed).max(8) as usize;
            // The host column only when a session is another host's.
            let keep = |i: usize| i != 2 || h > 0;
            let table_rows = rows.iter().map(|r| {
                let cells = [
                    Line::from(clip(&r.status, s)).style(colour(r.state)),
                    Line::from(r.age.clone()).right_aligned(),
                    Line::from(clip(&r.host, h)),
                    Line::from(clip(&r.tag, t)),
                    Line::from(clip(&r.cli, c)),
                    Line::from(clip_left(&r.cwd, cwd)),
                    Line::from(r.pending.clone()).right_aligned(),
                    Line::from(clip(&r.last, l)),
                ];
                TableRow::new(
                    cells.into_iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, c)| c),
                )
            });
            let widths: Vec<Constraint> = [s, a, h, t, c, cwd, b, l]
                .into_iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, w)| Constraint::Length(w as u16))
                .collect();
            let header = TableRow::new(
                HEADERS[..8].iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, h)| *h),
            )
            .style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
            let table = Table::new(table_rows, widths)
                .header(header)
                .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
                .highlight_symbol("")
                .column_spacing(1);
            if rows.is_empty() {
                frame.render_widget(Paragraph::new("no sessions yet: waiting for events"), area);
            } else {
                frame.render_stateful_widget(table, area, &mut self.selected);
            }
        }

        fn draw_explain(&mut self, frame: &mut Frame, area: ratatui::layout::Rect, id: &str) {
            let (view, history, problem) = self.backend.explain(id);
            let mut lines = explain_lines(view.as_ref(), &history, area, id);
            if let Some(problem) = problem {
                lines.push(Line::from(escape(&problem).into_owned()));
            }
            let block = Block::bordered().title(format!(" explain {} ", escape(id)));
            frame.render_widget(Paragraph::new(lines).block(block), area);
        }
    }

    /// The lines of a session's explain view.
    fn explain_lines(
        view: Option<&View>,
        history: &[Transition],
        area: ratatui::layout::Rect,
        id: &str,
    ) -> Vec<Line<'static>> {
        {
            let mut lines = Vec::new();
            if let Some(view) = view {
                lines.push(
                    Line::from(format!(
                        "now: {} for {}{}",
                        view.state.as_str(),
                        view.age,
                        view.detail
                            .as_deref()
                            .map(|d| format!(" ({})", escape(d)))
                            .unwrap_or_default()
                    ))
                    .style(colour(view.state)),
                );
                lines.push(Line::from(format!(
                    "set by {} under rule {}",
                    escape(view.evidence.native.as_deref().unwrap_or("-")),
                    view.evidence.rule
                )));
                lines.push(Line::from(format!("input: {}", escape(&view.input))));
                lines.push(Line::from(""));
                let room = area.height.saturating_sub(6) as usize;
                for step in history.iter().skip(history.len().saturating_sub(room)) {
                    let e = &step.evidence;
                    let time = hookline::units::rfc3339(e.ts_ns);
                    let state = step.state.map_or("·".to_owned(), |s| format!("→ {}", s.as_str()));
                    lines.push(Line::from(format!(
                        "{} seq {:>4} {:<18} {:<18} {}",
                        time.get(11..23).unwrap_or(&time),
                        e.seq,
                        clip(&escape(e.native.as_deref().unwrap_or("-")), 18),
                        state,
                        e.rule
                    )));
                }
            } else {
                lines.push(Line::from(format!("no session {}", escape(id))));
            }
            lines
        }
    }

    fn colour(state: StateKind) -> Style {
        match state {
            StateKind::WaitingOnHuman => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            StateKind::EnvFault => Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
            StateKind::Unknown => Style::new().fg(Color::Yellow),
            StateKind::Idle => Style::new().fg(Color::Green),
            StateKind::Active | StateKind::ChildCommand => Style::new().fg(Color::Cyan),
            StateKind::Ended => Style::new().fg(Color::DarkGray),
        }
    }
}
