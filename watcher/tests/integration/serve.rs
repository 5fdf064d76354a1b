//! `hookline serve` driven over its JSON-lines protocol by a Python script, as an orchestrator
//! in another language would drive it, with events written by the real relay.

use std::path::Path;
use std::process::Command;

#[test]
fn the_serve_protocol_holds_when_driven_from_python() {
    let python = Command::new("python3").arg("--version").output();
    assert!(
        python.as_ref().is_ok_and(|o| o.status.success()),
        "python3 is required to test the serve protocol (Python 3, standard library only): \
         install it ({python:?})"
    );
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(manifest.join("tests/serve_protocol.py"))
        .arg("--hookline")
        .arg(env!("CARGO_BIN_EXE_hookline"))
        .arg("--relay")
        .arg(super::watch::relay())
        .arg("--fixtures")
        .arg(manifest.join("tests/fixtures"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "serve_protocol.py failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("checks passed"), "{stdout}");
}
