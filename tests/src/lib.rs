//! Support for hookline's end-to-end tests against real agent CLIs, run offline.
//!
//! * [`npm_install`]: installs pinned versions of an agent CLI from npm into a reusable cache
//!   (Codex and Gemini CLI are defined there).
//! * [`claude_install`]: Claude Code's package and its two pinned versions.
//! * [`mock_api`]: a scripted mock of the Anthropic Messages API on 127.0.0.1.
//! * [`tmux`]: an isolated tmux server per test, to drive a TUI like a person.
//! * [`sandbox`]: a throwaway `HOME` and project with the CLI's first-run state pre-written.
//! * [`process`]: running a program to completion with a time limit.
//! * [`binaries`]: the workspace's built `hookline-relay` and `hookline`.
//! * [`claude_hooks`]: which hook events a Claude Code version knows, and what `hookline install`
//!   registered.
//! * [`events`]: reading the events directory back and waiting for events.
//! * [`follow`]: `hookline watch` following the events directory, for canonical events.
//! * [`labels`]: how tables and reports write canonical events and session states.
//! * [`session`]: all of the above around one running CLI, with descriptive failures.
//! * [`version`]: version numbers, ordered numerically.
//! * [`agent_session`]: the step harness of the Codex and Gemini suites, asserting native events,
//!   canonical events and session states.
//! * [`codex`], [`gemini`]: each CLI's sandbox setup (config, mock, first-run answers) and its
//!   registration by `hookline install`.
//! * [`mock_http`]: the small HTTP server under all three API mocks.
//! * [`mock_openai`]: a scripted mock of the OpenAI Responses API, for Codex.
//! * [`mock_gemini`]: a scripted mock of the Gemini API, for Gemini CLI.

pub mod agent_session;
pub mod binaries;
pub mod claude_hooks;
pub mod claude_install;
pub mod codex;
pub mod events;
pub mod follow;
pub mod gemini;
pub mod labels;
pub mod mock_api;
pub mod mock_gemini;
pub mod mock_http;
pub mod mock_openai;
pub mod npm_install;
pub mod process;
pub mod sandbox;
pub mod session;
pub mod tmux;
pub mod version;
