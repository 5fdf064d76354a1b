//! Claude Code's npm package and its two pinned versions, installed by [`crate::npm_install`]
//! into `<cache>/claude-code/<version>/`.
//!
//! The program is the native `claude` binary: `node_modules/.bin/claude` once the package's
//! postinstall has linked it there, else the one in the optional platform package
//! `@anthropic-ai/claude-code-linux-x64`.

use crate::npm_install::{NpmCli, Program, pinned};
use crate::version::Version;

pub use crate::npm_install::{InstallError, Installed, STAMP_FILE};

/// The Claude Code version the suite runs by default: the newest on npm when pinned.
pub const PRIMARY_VERSION: &str = "2.1.332";
/// The second version: the newest whose `engines` field accepts Node 20.
pub const SECOND_VERSION: &str = "2.1.197";
/// Overrides [`PRIMARY_VERSION`].
pub const ENV_VERSION: &str = "HOOKLINE_E2E_CLAUDE_VERSION";
/// Overrides [`SECOND_VERSION`].
pub const ENV_VERSION_2: &str = "HOOKLINE_E2E_CLAUDE_VERSION_2";

/// `@anthropic-ai/claude-code`; its default version is [`PRIMARY_VERSION`] (see [`Pin`] for
/// both).
pub static CLAUDE: NpmCli = NpmCli {
    cli: "claude",
    package: "@anthropic-ai/claude-code",
    folder: "claude-code",
    default_version: PRIMARY_VERSION,
    env_version: ENV_VERSION,
    bin: "claude",
    program: Program::Native { platform_package: "@anthropic-ai/claude-code-linux-x64" },
};

/// One of the two pinned versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// [`PRIMARY_VERSION`], or `$HOOKLINE_E2E_CLAUDE_VERSION`.
    Primary,
    /// [`SECOND_VERSION`], or `$HOOKLINE_E2E_CLAUDE_VERSION_2`.
    Second,
}

impl Pin {
    /// The version to test, after the environment override. Panics on an invalid override.
    pub fn version(self) -> Version {
        match self {
            Pin::Primary => pinned(ENV_VERSION, PRIMARY_VERSION),
            Pin::Second => pinned(ENV_VERSION_2, SECOND_VERSION),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn the_pins_are_valid_versions_and_the_second_is_older() {
        assert!(Version::lit(SECOND_VERSION) < Version::lit(PRIMARY_VERSION));
    }

    #[test]
    fn a_placeholder_bin_script_is_passed_over_for_the_native_binary() {
        let tmp = tempfile::tempdir().unwrap();
        let dot_bin = tmp.path().join("node_modules/.bin");
        fs::create_dir_all(&dot_bin).unwrap();
        fs::write(dot_bin.join("claude"), "#!/bin/sh\necho run postinstall\n").unwrap();
        assert_eq!(CLAUDE.program_in(tmp.path()), None);
        let native = tmp.path().join("node_modules/@anthropic-ai/claude-code-linux-x64");
        fs::create_dir_all(&native).unwrap();
        fs::write(native.join("claude"), b"\x7fELF").unwrap();
        assert_eq!(CLAUDE.program_in(tmp.path()), Some(native.join("claude")));
    }
}
