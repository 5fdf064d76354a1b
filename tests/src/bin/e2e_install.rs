//! Installs every pinned agent CLI the end-to-end suites run into their cache, as the suites
//! would on first use, and exits: `.ci/run` starts it in the background while clippy and the
//! docs build, so that the suites find their CLIs installed instead of downloading them one
//! after the other. Safe beside a suite installing the same CLI: installs of one version are
//! serialized by a lock file and a complete install is reused (`npm_install`).
//!
//! Usage: `e2e_install` (the cache is `$HOOKLINE_E2E_CACHE`, else `.e2e-cache` in the
//! workspace). Exit status 0 when every CLI is installed, 1 otherwise, naming each failure; the
//! suites then report their own.

use std::process::ExitCode;
use std::thread;

use hookline_tests::claude_install::{CLAUDE, Pin};
use hookline_tests::npm_install::{
    CODEX, COPILOT, DROID, GEMINI, KILO, NpmCli, OPENCODE, PI, QWEN, cache_dir,
};
use hookline_tests::version::Version;

fn main() -> ExitCode {
    let mut pins: Vec<(&'static NpmCli, Version)> =
        vec![(&CLAUDE, Pin::Primary.version()), (&CLAUDE, Pin::Second.version())];
    for cli in [&CODEX, &GEMINI, &OPENCODE, &COPILOT, &PI, &KILO, &QWEN, &DROID] {
        pins.push((cli, cli.version()));
    }
    eprintln!("e2e_install: {} pinned CLIs into {}", pins.len(), cache_dir().display());
    // Two at a time: the downloads overlap, and the machine keeps a core for the build.
    let mut failed = 0;
    for pair in pins.chunks(2) {
        let installs: Vec<_> = pair
            .iter()
            .map(|&(cli, version)| thread::spawn(move || (cli, version, cli.install(version))))
            .collect();
        for install in installs {
            match install.join() {
                Ok((_, _, Ok(_))) => {}
                Ok((cli, version, Err(e))) => {
                    eprintln!("e2e_install: {} {version}: {e}", cli.cli);
                    failed += 1;
                }
                Err(_) => {
                    eprintln!("e2e_install: an install panicked");
                    failed += 1;
                }
            }
        }
    }
    if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
