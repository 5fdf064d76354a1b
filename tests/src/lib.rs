//! Support for hookline's end-to-end tests against real agent CLIs, run offline.
//!
//! Installing and running the CLIs:
//! * [`npm_install`]: installs pinned versions of an agent CLI from npm into a reusable cache
//!   (Codex, Gemini CLI, OpenCode, Copilot CLI, Qwen Code and Factory Droid are defined there).
//! * [`claude_install`]: Claude Code's package and its two pinned versions.
//! * [`tmux`]: an isolated tmux server per test, to drive a TUI like a person.
//! * [`sandbox`]: a throwaway `HOME` and project with the CLI's first-run state pre-written.
//! * [`process`]: running a program to completion with a time limit.
//! * [`binaries`]: the workspace's built `hookline-relay` and `hookline`.
//! * [`version`]: version numbers, ordered numerically.
//!
//! The model APIs, mocked on 127.0.0.1:
//! * [`mock_http`]: the small HTTP server under all three mocks.
//! * [`mock_api`]: a scripted mock of the Anthropic Messages API, for Claude Code.
//! * [`mock_openai`]: a scripted mock of the OpenAI Responses API, for Codex, and of the Chat
//!   Completions API, for OpenCode.
//! * [`mock_gemini`]: a scripted mock of the Gemini API, for Gemini CLI.
//!
//! What hookline makes of a run:
//! * [`events`]: reading the events directory back and waiting for events.
//! * [`follow`]: `hookline watch` following the events directory, for canonical events.
//! * [`labels`]: how tables write canonical events and session states.
//! * [`transcripts`]: the CLIs' own transcripts, read back and captured for the fixtures.
//!
//! The step harnesses the scenarios are written with:
//! * [`scenario`]: the steps and expectations a scenario is a table of.
//! * [`harness`]: the checks and reports both harnesses share.
//! * [`session`]: the Claude Code harness, following the run with `hookline watch`.
//! * [`claude_hooks`]: which hook events a Claude Code version knows, and what `hookline
//!   install` registered.
//! * [`agent_session`]: the Codex, Gemini and OpenCode harness, following the run with the
//!   library's reader.
//! * [`deliver_check`]: typing into a real TUI with `hookline::deliver`, confirmed by its
//!   events.
//! * [`codex`], [`gemini`]: each CLI's sandbox setup (config, mock, first-run answers) and its
//!   registration by `hookline install`.
//! * [`copilot`]: Copilot CLI's sandbox setup (its offline BYOK provider, folder trust) and
//!   its registration by `hookline install`.
//! * [`opencode`]: OpenCode's sandbox setup (config with the mock provider) and hookline's
//!   plugin, written by the test until `hookline install opencode` exists.
//! * [`kilo`]: Kilo Code's sandbox setup (OpenCode's config, Kilo's names) and the OpenCode
//!   plugin installed for it; [`pi`]: Pi's (its custom provider, the permission gate it ships).
//! * [`plugins`]: installing a plugin as a user does, and `hookline status` asked for a state.
//! * [`qwen`], [`droid`]: Qwen Code's and Factory Droid's sandbox setup (settings with the mock
//!   as an OpenAI provider or a custom model) and their registration by `hookline install`;
//!   [`claude_style`]: what those two, which take Claude Code's hook format, share.

pub mod agent_session;
pub mod binaries;
pub mod claude_hooks;
pub mod claude_install;
pub mod claude_style;
pub mod codex;
pub mod copilot;
pub mod deliver_check;
pub mod dialog;
pub mod droid;
pub mod events;
pub mod follow;
pub mod gemini;
pub mod harness;
pub mod kilo;
pub mod labels;
pub mod mock_api;
pub mod mock_gemini;
pub mod mock_http;
pub mod mock_openai;
pub mod npm_install;
pub mod opencode;
pub mod pi;
pub mod plugins;
pub mod process;
pub mod qwen;
pub mod sandbox;
pub mod scenario;
pub mod session;
pub mod tmux;
pub mod transcripts;
pub mod version;
