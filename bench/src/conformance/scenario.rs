//! A scenario as data: one TOML file per scenario in `bench/conformance/scenarios/`, the same
//! for every CLI that can play it. Steps say what a person or an orchestrator does
//! (prompt for something, press the key that approves, wait until the dialog is on screen);
//! each CLI's [`super::clis::Cli`] says how that is done in it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// One scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Scenario {
    /// Its name: the file's stem.
    #[serde(skip)]
    pub name: String,
    /// One line: what it plays.
    pub summary: String,
    /// What a CLI must be able to do to play it; one it cannot do skips it, with the reason.
    #[serde(default)]
    pub needs: Vec<Need>,
    /// The profile holes it is known to touch (their ids, in any CLI's profile): a wrong state
    /// during it is named after the first of these the CLI's profile has.
    #[serde(default)]
    pub holes: Vec<String>,
    /// Part of `--quick`.
    #[serde(default)]
    pub quick: bool,
    /// The steps, in order.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

/// What a scenario needs of a CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Need {
    /// A permission dialog before a shell command.
    Dialog,
    /// A "no" among the dialog's choices, apart from Escape.
    DenyChoice,
    /// A question to the user, answered in a dialog.
    Question,
    /// An answer streamed slowly enough to interrupt (every mock can).
    Slow,
    /// A background command whose end starts a turn by itself.
    Background,
    /// A one-shot scheduled wake.
    Wake,
    /// A subagent.
    Subagent,
    /// A compaction command.
    Compact,
    /// A dialog that opens by itself while the session sits idle (a background command's end
    /// starting a turn that asks for permission).
    WakeDialog,
    /// Screen patterns for the composer (`[pane]`): a draft can be seen.
    Composer,
}

impl Need {
    /// The word scenario files use.
    pub fn as_str(self) -> &'static str {
        match self {
            Need::Dialog => "dialog",
            Need::DenyChoice => "deny-choice",
            Need::Question => "question",
            Need::Slow => "slow",
            Need::Background => "background",
            Need::Wake => "wake",
            Need::Subagent => "subagent",
            Need::Compact => "compact",
            Need::WakeDialog => "wake-dialog",
            Need::Composer => "composer",
        }
    }
}

/// One step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", tag = "do")]
pub enum Step {
    /// Types a prompt and presses Enter, through the session's input slot when hookline
    /// says it is idle (as an orchestrator does).
    Prompt {
        /// What to ask for.
        prompt: Prompt,
    },
    /// Waits for a condition of the world (never of hookline's answers).
    Wait {
        /// The condition.
        #[serde(rename = "for")]
        until: Until,
        /// How long it may take.
        #[serde(default = "default_timeout", deserialize_with = "duration")]
        timeout: Duration,
        /// Whether the run breaks when it does not come (`false`: the scenario goes on; after
        /// a perturbed delivery, its turn may never come).
        #[serde(default = "yes")]
        required: bool,
    },
    /// Does nothing for this long: a window in which hookline's answers are measured.
    Hold {
        /// How long.
        #[serde(rename = "for", deserialize_with = "duration")]
        time: Duration,
    },
    /// Presses the keys that approve the dialog on screen.
    Approve,
    /// Approves the dialog if one opens before the turn goes on without one.
    ApproveIfAsked,
    /// Chooses the dialog's "no".
    Deny,
    /// Presses Escape (the keys that cancel, in that CLI).
    Escape,
    /// Answers the question on screen with its first choice.
    Answer,
    /// Types the CLI's compaction command.
    Compact,
    /// Types the CLI's exit command.
    Exit,
    /// Kills the CLI's processes with SIGKILL.
    Kill,
    /// Types a draft into the composer without submitting it, as a person would.
    Draft {
        /// The text.
        text: String,
    },
    /// Delivers a text through the daemon (`hookline deliver`'s op), under a perturbation.
    Deliver {
        /// The text.
        text: String,
        /// What goes wrong meanwhile.
        #[serde(default)]
        perturb: Perturbation,
    },
}

fn yes() -> bool {
    true
}

/// How long a wait may take by default.
fn default_timeout() -> Duration {
    Duration::from_secs(60)
}

fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(d)?;
    hookline::units::parse_duration(&text).map_err(serde::de::Error::custom)
}

/// What a prompt asks the mock for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prompt {
    /// A plain answer.
    Plain,
    /// An answer streamed slowly (about 20 s).
    Slow,
    /// A shell command that needs approval.
    Dialog,
    /// A shell command running several seconds (approved first where the CLI asks).
    LongTool,
    /// A question to the user.
    Question,
    /// The API's 429.
    RateLimit,
    /// The API's overload or server error (529 for Anthropic, 503 for the others).
    Overloaded,
    /// The API's answer to a used-up quota or credit.
    Quota,
    /// A background command whose end starts a new turn.
    Background,
    /// A background command that waits for the delivery's paste, whose end starts a turn
    /// that asks for permission.
    WakeDialog,
    /// A one-shot scheduled wake.
    Wake,
    /// A subagent.
    Subagent,
}

/// A condition of the world a step waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Until {
    /// The CLI's prompt is on screen, no dialog.
    Ready,
    /// The CLI's permission (or question) dialog is on screen.
    Dialog,
    /// The mock has been streaming the turn's answer for a moment.
    Streaming,
    /// The mock has sent an answer that ends the turn, since the last step that acted.
    TurnEnd,
    /// The mock has finished any answer, a side request's too (a compaction's summary
    /// may be asked as one), since the last step.
    Answer,
    /// The mock has answered with an error, since the last step that acted.
    ApiError,
    /// The mock got a request the CLI made by itself (a wake), since the last step that acted.
    Request,
    /// The CLI's process has ended.
    Exit,
}

/// What goes wrong during a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Perturbation {
    /// Nothing.
    #[default]
    None,
    /// The CLI never sees the first Enter after the paste.
    EatenEnter,
    /// Everything the CLI draws reaches the pane 400 ms late.
    SlowRedraw,
    /// The paste's start ends a background command, whose turn asks for permission.
    DialogDuringPaste,
    /// The composer holds a person's draft.
    TextInComposer,
    /// A second delivery to the same session at the same instant.
    SecondDeliverer,
}

impl Perturbation {
    /// The word scenario files use.
    pub fn as_str(self) -> &'static str {
        match self {
            Perturbation::None => "none",
            Perturbation::EatenEnter => "eaten-enter",
            Perturbation::SlowRedraw => "slow-redraw",
            Perturbation::DialogDuringPaste => "dialog-during-paste",
            Perturbation::TextInComposer => "text-in-composer",
            Perturbation::SecondDeliverer => "second-deliverer",
        }
    }
}

/// The folder of the shipped scenarios.
pub fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance").join("scenarios")
}

/// Every scenario in `dir`, by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

/// One scenario file.
pub fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut scenario: Scenario =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    scenario.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if scenario.steps.is_empty() {
        return Err(format!("{}: no [[step]]", path.display()));
    }
    Ok(scenario)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_parses_and_plays_something() {
        let scenarios = load_dir(&shipped_dir()).unwrap();
        assert!(scenarios.len() >= 20, "{} scenarios", scenarios.len());
        for scenario in &scenarios {
            assert!(!scenario.summary.is_empty(), "{}", scenario.name);
            let acts =
                scenario.steps.iter().any(|s| !matches!(s, Step::Wait { .. } | Step::Hold { .. }));
            assert!(acts, "{} does nothing", scenario.name);
        }
        let quick: Vec<&str> =
            scenarios.iter().filter(|s| s.quick).map(|s| s.name.as_str()).collect();
        let delivers = |name: &str| {
            scenarios.iter().any(|s| {
                s.name == name
                    && s.steps.iter().any(|st| {
                        matches!(st, Step::Deliver { perturb, .. } if *perturb != Perturbation::None)
                    })
            })
        };
        assert!(
            quick.iter().any(|n| delivers(n)),
            "--quick needs a delivery perturbation: {quick:?}"
        );
        assert!(
            quick
                .iter()
                .any(|n| scenarios.iter().any(|s| s.name == *n && s.needs.contains(&Need::Dialog))),
            "--quick needs a dialog: {quick:?}"
        );
    }

    #[test]
    fn a_bad_scenario_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(
            &path,
            "summary = \"x\"\n[[step]]\ndo = \"prompt\"\nprompt = \"nonsense\"\n",
        )
        .unwrap();
        let error = load(&path).unwrap_err();
        assert!(error.contains("bad.toml") && error.contains("nonsense"), "{error}");
        std::fs::write(&path, "summary = \"x\"\nstep = []\n").unwrap();
        assert!(load(&path).unwrap_err().contains("no [[step]]"));
        std::fs::write(&path, "summary = \"x\"\n[[step]]\ndo = \"hold\"\nfor = \"soon\"\n")
            .unwrap();
        assert!(load(&path).is_err());
    }
}
