//! Real failures keep their cause: the message names the file (and the key), and the error
//! that caused it is reachable through `source()`, never only flattened into the message.

use std::fs;

use hookline::decide::Policy;
use hookline::ingest::cursor::Cursor;

/// The error's own message and every cause below it, top first.
fn chain<'e>(
    error: &'e (dyn std::error::Error + 'static),
) -> Vec<&'e (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |&e| e.source()).collect()
}

#[test]
fn a_damaged_cursor_file_names_the_file_and_keeps_the_decoder_error() {
    let tmp = tempfile::tempdir().unwrap();
    let cursor = Cursor::open(tmp.path(), "work").unwrap();
    cursor.save(&cursor.position).unwrap();
    drop(cursor);
    let file = tmp.path().join(".cursors/work.json");
    assert!(file.exists(), "the cursor was saved where this test expects it");
    fs::write(&file, "{\"seq\": 3, cut").unwrap();
    let Err(error) = Cursor::open(tmp.path(), "work") else {
        panic!("a damaged cursor file is refused")
    };
    assert!(
        matches!(&error, hookline::CursorError::Damaged { path, .. } if *path == file),
        "{error:?}"
    );
    // Callers that return the library's one error keep compiling with `?`.
    let error = hookline::Error::from(error);
    let said = error.to_string();
    assert!(said.contains(&file.display().to_string()), "{said}");
    let causes = chain(&error);
    let json = causes.iter().find_map(|e| e.downcast_ref::<serde_json::Error>());
    let json = json.unwrap_or_else(|| panic!("no serde_json error under {causes:?}"));
    assert_eq!(json.line(), 1, "{json}");
    assert!(!said.contains(&json.to_string()), "the message does not repeat its cause: {said}");
    assert!(error.fix().is_some_and(|fix| fix.contains("delete it")), "{:?}", error.fix());
}

#[test]
fn a_policy_with_a_value_of_the_wrong_type_names_the_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("policy.toml");
    fs::write(&path, "version = 1\n\n[nudge]\nmin-idle = 30\n").unwrap();
    let error = Policy::load(&path).expect_err("a number where a duration goes is refused");
    assert_eq!(error.file, path.display().to_string());
    assert_eq!((error.line, error.key.as_deref()), (Some(4), Some("nudge.min-idle")), "{error}");
    let said = hookline::Error::from(error).to_string();
    assert!(said.starts_with(&format!("policy {}:4:", path.display())), "{said}");
    assert!(said.contains("nudge.min-idle"), "{said}");
}

#[test]
fn a_policy_that_cannot_be_read_keeps_the_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let error = Policy::load(tmp.path()).expect_err("a directory is not a policy file");
    let error = hookline::Error::from(error);
    assert!(error.to_string().contains(&tmp.path().display().to_string()), "{error}");
    let causes = chain(&error);
    assert!(
        causes.iter().any(|e| e.downcast_ref::<std::io::Error>().is_some()),
        "no I/O error under {causes:?}"
    );
}
