//! The transcripts a CLI wrote during a scenario: reading Claude Code's back for assertions,
//! and copying every CLI's out of the sandbox when [`CAPTURE_ENV`] names a directory, to
//! re-record the fixtures in `watcher/tests/transcript/`.
//!
//! Claude Code writes `~/.claude/projects/<project>/<session>.jsonl` (the hooks' payloads name
//! it as `transcript_path`), Codex `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`, Gemini CLI
//! `~/.gemini/tmp/<project>/chats/session-….jsonl`. A capture copies every `.jsonl` file under
//! the sandbox (the events directory aside), at its relative path, into
//! `<CAPTURE_ENV>/<scenario label>/`, with the sandbox's path replaced by [`SANDBOX_PLACEHOLDER`]
//! and this machine's kernel release and host name by [`MACHINE_PLACEHOLDER`], nothing else
//! changed.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sandbox::Sandbox;

/// Set to a directory to copy each scenario's transcripts there when its session ends.
pub const CAPTURE_ENV: &str = "HOOKLINE_E2E_CAPTURE_TRANSCRIPTS";

/// What the sandbox's path becomes in a captured transcript (as in the pane fixtures).
pub const SANDBOX_PLACEHOLDER: &str = "/tmp/hookline-e2e-SANDBOX";

/// What this machine's kernel release and host name become in a captured transcript.
pub const MACHINE_PLACEHOLDER: &str = "SCRUBBED";

/// Copies the sandbox's transcripts into `<CAPTURE_ENV>/<label>/` when [`CAPTURE_ENV`] is set;
/// returns what it wrote. Problems are printed, never fatal: a capture is a by-product.
pub fn capture(label: &str, sandbox: &Sandbox) -> Vec<PathBuf> {
    match std::env::var_os(CAPTURE_ENV) {
        Some(dir) => capture_into(Path::new(&dir), label, sandbox),
        None => Vec::new(),
    }
}

/// [`capture`] into `dir`.
pub fn capture_into(dir: &Path, label: &str, sandbox: &Sandbox) -> Vec<PathBuf> {
    let target = dir.join(label.replace(' ', "-"));
    let mut written = Vec::new();
    let root = sandbox.root();
    for file in jsonl_files(root, &sandbox.events_dir()) {
        let Ok(relative) = file.strip_prefix(root) else { continue };
        let to = target.join(scrub_name(&relative.to_string_lossy(), root));
        let copied = fs::read(&file).map(|bytes| scrub(&bytes, root)).and_then(|bytes| {
            fs::create_dir_all(to.parent().unwrap_or(&target))?;
            fs::write(&to, bytes)
        });
        match copied {
            Ok(()) => written.push(to),
            Err(e) => eprintln!("[{label}] capturing {}: {e}", file.display()),
        }
    }
    if !written.is_empty() {
        eprintln!("[{label}] captured {} transcript(s) into {}", written.len(), target.display());
    }
    written
}

/// The sandbox folder's name, replaced by that of [`SANDBOX_PLACEHOLDER`] wherever it appears
/// (in paths, and in the names made of them: Claude's `-tmp-hookline-e2e-XXXXXX-project`).
fn scrub_name(text: &str, root: &Path) -> String {
    let placeholder = Path::new(SANDBOX_PLACEHOLDER).file_name().and_then(|n| n.to_str());
    match (root.file_name().and_then(|n| n.to_str()), placeholder) {
        (Some(name), Some(placeholder)) if !name.is_empty() => text.replace(name, placeholder),
        _ => text.to_owned(),
    }
}

/// The bytes with the sandbox's path replaced by [`SANDBOX_PLACEHOLDER`] ([`scrub_name`]), and
/// what names this machine (its kernel release, in the system prompt's environment, and its
/// host name, when long enough not to match ordinary words) by [`MACHINE_PLACEHOLDER`].
fn scrub(bytes: &[u8], root: &Path) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut text = text.replace(root.to_string_lossy().as_ref(), SANDBOX_PLACEHOLDER);
    for (file, min) in [("/proc/sys/kernel/osrelease", 1), ("/proc/sys/kernel/hostname", 6)] {
        let value = fs::read_to_string(file).unwrap_or_default();
        let value = value.trim();
        if value.len() >= min {
            text = text.replace(value, MACHINE_PLACEHOLDER);
        }
    }
    scrub_name(&text, root).into_bytes()
}

/// Every regular `.jsonl` file under `dir`, `skip` and symbolic links aside, sorted.
fn jsonl_files(dir: &Path, skip: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() && path != skip {
                pending.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The entries of a JSONL transcript, one JSON value per non-empty line; a line that is not
/// JSON (one being written) is left out.
pub fn read_entries(path: &Path) -> Result<Vec<Value>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// The text blocks of a Claude transcript entry's `message.content` (a string or an array of
/// blocks).
pub fn texts(entry: &Value) -> Vec<&str> {
    match &entry["message"]["content"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_copies_the_jsonl_files_with_the_sandbox_path_replaced() {
        let sandbox = Sandbox::for_cli("t", Vec::new());
        let root = sandbox.root().to_owned();
        let name = root.file_name().unwrap().to_str().unwrap().to_owned();
        let chats = sandbox.home().join(format!(".gemini/tmp/-tmp-{name}-project/chats"));
        fs::create_dir_all(&chats).unwrap();
        let line = format!("{{\"cwd\":\"{}/project\",\"dir\":\"-tmp-{name}\"}}\n", root.display());
        fs::write(chats.join("session-1.jsonl"), &line).unwrap();
        fs::write(chats.join("notes.txt"), "not a transcript").unwrap();
        fs::create_dir_all(sandbox.events_dir()).unwrap();
        fs::write(sandbox.events_dir().join("x.jsonl"), "{}").unwrap();
        let out = tempfile::tempdir().unwrap();
        let written = capture_into(out.path(), "cli 1.0 scenario", &sandbox);
        let expected = out
            .path()
            .join("cli-1.0-scenario/home/.gemini/tmp/-tmp-hookline-e2e-SANDBOX-project/chats")
            .join("session-1.jsonl");
        assert_eq!(written, std::slice::from_ref(&expected));
        assert_eq!(
            fs::read_to_string(expected).unwrap(),
            format!(
                "{{\"cwd\":\"{SANDBOX_PLACEHOLDER}/project\",\"dir\":\"-tmp-hookline-e2e-SANDBOX\"}}\n"
            )
        );
    }
}
