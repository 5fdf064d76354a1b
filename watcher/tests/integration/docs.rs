//! The documentation holds together: every relative link in the repository's Markdown files
//! names a file that exists (and a heading that exists, when it names one), and docs/events.md
//! describes every canonical kind of the generated table.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

/// The Markdown files of the repository, outside build output and caches.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The lines of a Markdown file outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The targets of the inline links `[text](target)` of a line, skipping code spans.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(i + 1) == Some(&b'(') => {
                if let Some(len) = line[i + 2..].find(')') {
                    out.push(line[i + 2..i + 2 + len].to_string());
                    i += 2 + len;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(file: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(file).unwrap();
    prose(&text)
        .into_iter()
        .filter_map(|l| l.trim_start_matches('#').strip_prefix(' ').filter(|_| l.starts_with('#')))
        .map(anchor)
        .collect()
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    let names: Vec<_> = files.iter().map(|f| f.strip_prefix(&root).unwrap().to_owned()).collect();
    for expected in ["README.md", "docs/commands.md", "docs/states.md", "tests/README.md"] {
        assert!(names.contains(&PathBuf::from(expected)), "{expected} not found in {names:?}");
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(&root).unwrap().display();
        for target in prose(&text).into_iter().flat_map(link_targets) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let resolved =
                if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            if !resolved.exists() {
                broken.push(format!("{shown}: {target}: no such file"));
                continue;
            }
            if let Some(fragment) = fragment
                && resolved.extension().is_some_and(|e| e == "md")
                && !anchors(&resolved).contains(fragment)
            {
                broken.push(format!("{shown}: {target}: no such heading"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 30, "only {checked} links checked");
}

#[test]
fn the_events_doc_describes_every_canonical_kind() {
    let root = root();
    let table = fs::read_to_string(root.join("docs/canonical-table.md")).unwrap();
    let events = fs::read_to_string(root.join("docs/events.md")).unwrap();
    let kinds: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert!(kinds.len() > 10, "{kinds:?}");
    for kind in kinds {
        assert!(events.contains(&format!("`{kind}`")), "docs/events.md does not describe {kind}");
    }
}

/// The systemd unit in docs/daemon.md runs `hookline` from where docs/install.md installs it.
#[test]
fn the_systemd_unit_runs_hookline_where_install_puts_it() {
    let install = fs::read_to_string(root().join("docs/install.md")).unwrap();
    assert!(
        install.contains("cargo install --locked --path cli        # hookline into ~/.cargo/bin"),
        "docs/install.md no longer says where hookline goes"
    );
    let daemon = fs::read_to_string(root().join("docs/daemon.md")).unwrap();
    let units: Vec<&str> = daemon.lines().filter(|l| l.starts_with("ExecStart=")).collect();
    assert!(!units.is_empty(), "docs/daemon.md has no unit");
    for line in units {
        assert!(line.starts_with("ExecStart=%h/.cargo/bin/hookline "), "{line}");
    }
}

#[test]
fn the_serve_protocols_op_table_names_every_op_in_order() {
    let text = fs::read_to_string(root().join("docs/decide.md")).unwrap();
    let table = text.split("| op | request | reply").nth(1).expect("the op table");
    let ops: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    let all: Vec<&str> = hookline::protocol::Op::ALL.iter().map(|op| op.as_str()).collect();
    assert_eq!(ops, all, "docs/decide.md's op table");
}
