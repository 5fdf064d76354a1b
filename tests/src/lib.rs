//! Support for hookline's end-to-end tests against real agent CLIs, run offline.
//!
//! * [`claude_install`]: installs pinned Claude Code versions from npm into a reusable cache.
//! * [`mock_api`]: a scripted mock of the Anthropic Messages API on 127.0.0.1.
//! * [`tmux`]: an isolated tmux server per test, to drive a TUI like a person.
//! * [`sandbox`]: a throwaway `HOME` and project with the CLI's first-run state pre-written.
//! * [`binaries`]: the workspace's built `hookline-relay` and `hookline`.
//! * [`claude_hooks`]: which hook events a Claude Code version knows, and the temporary
//!   registration of the relay for them.
//! * [`events`]: reading the events directory back and waiting for events.
//! * [`session`]: all of the above around one running CLI, with descriptive failures.
//! * [`version`]: version numbers, ordered numerically.

pub mod binaries;
pub mod claude_hooks;
pub mod claude_install;
pub mod events;
pub mod mock_api;
pub mod sandbox;
pub mod session;
pub mod tmux;
pub mod version;
