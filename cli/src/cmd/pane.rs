//! `hookline pane --tmux TARGET [--tmux-socket PATH] [--cli NAME] [--json]`: what the CLI's
//! screen patterns find on a pane's visible screen.

use std::process::ExitCode;

use crate::errors::Error;
use hookline::pane::{self, Pane};

use super::{Outcome, profiles};
use crate::cli::PaneArgs;

pub fn run(args: &PaneArgs) -> Outcome {
    let profiles = profiles()?;
    let patterns = match &args.cli {
        Some(name) => match profiles.get(name) {
            Some(profile) => profile.pane.clone(),
            None => {
                let known = profiles.iter().map(|p| p.name.clone()).collect();
                return Err(Error::UnknownCli { name: name.clone(), known }.into());
            }
        },
        None => pane::union(profiles.iter().map(|p| &p.pane)),
    };
    let target = match &args.tmux_socket {
        Some(socket) => Pane::on_socket(socket, &args.tmux),
        None => Pane::new(&args.tmux),
    };
    let reading = target.sense(&patterns)?;
    if args.json {
        println!("{}", serde_json::to_string(&reading)?);
        return Ok(ExitCode::SUCCESS);
    }
    let e = &reading.evidence;
    let fields = [
        ("text_says_idle", e.text_says_idle),
        ("spinner", e.spinner),
        ("dialog", e.dialog),
        ("login_or_trust", e.login_or_trust),
        ("quota_text", e.quota_text),
        ("typed_not_submitted", e.typed_not_submitted),
    ];
    for (name, set) in fields {
        println!("{name}: {set}");
    }
    match &reading.composer {
        Some(text) => println!("composer: {text:?}"),
        None => println!("composer: not on screen"),
    }
    for m in &reading.matched {
        println!("  {} {:?} in {:?}", m.key, m.pattern, m.line);
    }
    println!("(one snapshot: it can show what is there, never prove what is not)");
    Ok(ExitCode::SUCCESS)
}
