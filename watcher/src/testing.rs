//! Test support: documentation sections generated from the code, kept in sync by tests.

use std::path::Path;

/// Checks that the section `name` of the file at `path` (relative to the workspace root),
/// between `<!-- generated:NAME:start -->` and `<!-- generated:NAME:end -->`, is exactly
/// `content`. With `HOOKLINE_BLESS=1` in the environment it rewrites the section instead.
pub fn assert_generated_section(path: &str, name: &str, content: &str) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = format!("<!-- generated:{name}:start -->\n");
    let end = format!("<!-- generated:{name}:end -->");
    let (Some(a), Some(b)) = (text.find(&start), text.find(&end)) else {
        panic!("{path} has no {start:?} … {end:?} markers");
    };
    let current = &text[a + start.len()..b];
    if current == content {
        return;
    }
    if std::env::var_os("HOOKLINE_BLESS").is_some() {
        let updated = format!("{}{content}{}", &text[..a + start.len()], &text[b..]);
        std::fs::write(&file, updated).unwrap();
        return;
    }
    panic!(
        "the generated section {name:?} of {path} is out of date: run \
         `HOOKLINE_BLESS=1 cargo test -p hookline` and commit the result"
    );
}
