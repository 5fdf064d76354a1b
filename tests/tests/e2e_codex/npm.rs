//! The installer fails loudly when npm cannot reach the registry: the suite never skips.

use hookline_tests::npm_install::{CODEX, InstallError, STAMP_FILE};

#[test]
fn an_unreachable_registry_fails_the_install_with_a_message_that_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let version = CODEX.version();
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    let error = CODEX
        .install_into(cache.path(), version, &[("npm_config_registry", "http://127.0.0.1:9/")])
        .expect_err("an install from an unreachable registry must fail");
    let message = error.to_string();
    assert!(
        matches!(error, InstallError::Npm { offline: true, .. }),
        "not reported as unreachable: {message}"
    );
    assert!(message.contains("could not reach the registry"), "{message}");
    assert!(message.contains("does not skip"), "{message}");
    assert!(message.contains("@openai/codex"), "{message}");
    let dir = cache.path().join("codex").join(version.to_string());
    assert!(!dir.join(STAMP_FILE).exists(), "a failed install must not be stamped complete");
}
