//! `hookline profiles [--check FILE]`: the profiles in force, and a file checked strictly with
//! errors naming file, key and line.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn profiles(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookline"))
        .arg("profiles")
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap()
}

fn shipped(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles").join(name);
    fs::read_to_string(path).unwrap()
}

#[test]
fn profiles_lists_every_shipped_profile() {
    let home = tempfile::tempdir().unwrap();
    let out = profiles(home.path(), &[]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for cli in ["claude", "codex", "gemini", "copilot", "cursor"] {
        let at = text
            .lines()
            .position(|l| l.starts_with(&format!("{cli} — ")))
            .unwrap_or_else(|| panic!("{cli} is not listed:\n{text}"));
        let block: Vec<&str> =
            text.lines().skip(at + 1).take_while(|l| l.starts_with("  ")).collect();
        assert!(block.iter().any(|l| l.starts_with("  input-ready: ")), "{cli}: {block:?}");
        assert!(block.iter().any(|l| l.starts_with("  rules: ")), "{cli}: {block:?}");
        assert!(block.contains(&&*format!("  from: embedded:{cli}.toml")), "{cli}: {block:?}");
    }
    assert!(text.contains("hole esc-interrupt [active → unknown after 15m]"), "{text}");
}

#[test]
fn profiles_check_accepts_a_good_file_and_names_file_key_and_line_of_a_bad_one() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("claude.toml");
    fs::write(&good, shipped("claude.toml")).unwrap();
    let out = profiles(tmp.path(), &["--check", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with(&format!("{}: ok (", good.display())), "{text}");

    let cases = [
        ("binary = \"claude\"", "binray = \"claude\"", "binray", "unknown key"),
        ("stale-after = \"15m\"", "stale-afte = \"15m\"", "holes[0].stale-afte", "unknown key"),
        ("stale-after = \"15m\"", "stale-after = 15", "holes[0].stale-after", "must be a string"),
        ("kind = \"turn_start\"", "kind = \"turn_begin\"", "map[2].kind", "turn_begin"),
    ];
    for (from, to, key, why) in cases {
        let text = shipped("claude.toml").replacen(from, to, 1);
        let line = text.lines().position(|l| l == to).unwrap() + 1;
        let bad = tmp.path().join("bad.toml");
        fs::write(&bad, &text).unwrap();
        let out = profiles(tmp.path(), &["--check", bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{to}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want = format!("hookline: profile {}:{line}:", bad.display());
        assert!(
            stderr.starts_with(&want)
                && stderr.contains(&format!(": {key}: "))
                && stderr.contains(why),
            "{to}: want {want}…{why}, got {stderr}"
        );
        assert!(out.stdout.is_empty(), "{to}: {out:?}");
    }

    let out = profiles(tmp.path(), &["--check", tmp.path().join("missing.toml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.toml"), "{out:?}");
}
