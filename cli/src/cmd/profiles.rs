//! `hookline profiles [--check FILE]`: list the profiles in force, or check one file.

use std::process::ExitCode;

use hookline::profile::{Profile, Profiles};
use hookline::units::format_duration;

use super::{Outcome, profiles};
use crate::cli::ProfilesArgs;

pub fn run(args: ProfilesArgs) -> Outcome {
    if let Some(file) = &args.check {
        return match Profiles::check_file(file) {
            Ok(profile) => {
                println!("{}: ok ({} rules)", file.display(), profile.rules.len());
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("hookline: {e}");
                Ok(ExitCode::from(1))
            }
        };
    }
    for profile in profiles()?.iter() {
        print_profile(profile);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_profile(p: &Profile) {
    let versions = match &p.max_version {
        Some(max) => format!("{} to {max}", p.min_version),
        None => format!("{} and later", p.min_version),
    };
    let tested: Vec<String> = p.tested.iter().map(ToString::to_string).collect();
    println!("{} — {} (binary `{}`), versions {versions}", p.name, p.display_name, p.binary);
    if tested.is_empty() {
        println!("  tested against: no real run (unverified)");
    } else {
        println!("  tested against: {}", tested.join(", "));
    }
    let input_ready: Vec<&str> = p.input_ready.iter().map(|k| k.as_str()).collect();
    println!("  input-ready: {}", input_ready.join(", "));
    println!("  rules: {}", p.rules.len());
    for hole in &p.holes {
        let stale = match (&hole.state, hole.stale_after) {
            (Some(state), Some(after)) => {
                format!(" [{state} → unknown after {}]", format_duration(after))
            }
            (Some(state), None) => format!(" [{state}]"),
            _ => String::new(),
        };
        println!("  hole {}{stale}: {}", hole.id, hole.description);
    }
    match &p.install {
        Some(spec) => {
            let events: Vec<&str> = spec.events.iter().map(|e| e.key()).collect();
            println!(
                "  install: {} dialect, {} events ({})",
                spec.dialect,
                events.len(),
                events.join(", ")
            );
        }
        None => println!("  install: not installable"),
    }
    println!("  from: {}", p.origins.join(", "));
}
