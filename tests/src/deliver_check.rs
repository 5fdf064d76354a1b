//! Delivering into a real TUI with the library's `hookline::deliver`, confirmed from the
//! sandbox's events directory: the typing mechanics `hookline deliver` drives once the daemon
//! has authorized the input.

use std::path::Path;
use std::time::Duration;

use hookline::deliver::{
    Delivery, EventsConfirmations, Options, Outcome, Report, SessionRef, deliver,
};
use hookline::pane::Pane;
use hookline::profile::Profiles;

use crate::tmux::{TARGET, Tmux};

/// Types `text` into the TUI running in `tmux` as one bracketed paste and an Enter, for the
/// session tagged `tag` of the profile `cli`, and waits up to `confirm` for its `turn_start`.
pub fn deliver_text(
    tmux: &Tmux,
    events: &Path,
    cli: &str,
    tag: &str,
    text: &str,
    confirm: Duration,
) -> Result<Report, String> {
    let profiles = Profiles::shipped().map_err(|e| e.to_string())?;
    let profile = profiles.get(cli).ok_or_else(|| format!("no profile {cli}"))?;
    let socket = tmux.socket_path().ok_or("the tmux server has no socket path")?;
    let mut delivery = Delivery::new(
        Pane::on_socket(socket, TARGET),
        profile,
        SessionRef::Tag(tag.into()),
        text.into(),
    );
    delivery.options = Options { confirm_timeout: confirm, ..Options::default() };
    let mut confirmations =
        EventsConfirmations::open(events, profiles.clone()).map_err(|e| e.to_string())?;
    deliver(&delivery, &mut confirmations).map_err(|e| e.to_string())
}

/// [`deliver_text`], which must end confirmed by a `turn_start` whose prompt is `text`.
pub fn deliver_confirmed(
    tmux: &Tmux,
    events: &Path,
    cli: &str,
    tag: &str,
    text: &str,
) -> Result<Report, String> {
    let report = deliver_text(tmux, events, cli, tag, text, Duration::from_secs(20))?;
    match &report.outcome {
        Outcome::Confirmed { event } if event.prompt.as_deref() == Some(text) => Ok(report),
        _ => Err(format!("the delivery of {text:?} was not confirmed: {report:?}")),
    }
}
