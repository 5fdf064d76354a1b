//! The closed vocabularies every layer shares: canonical kinds, wait reasons, failure kinds,
//! compaction phases, session states and the reasons behind them, settings dialects, decision
//! questions, verdicts, actions, signals and the rules behind a decision, and the transitions a
//! notification fires on.
//!
//! Each is an enum defined once here, its wire words listed variant by variant at the end of
//! the file (serde reads and writes the same words, which a test holds): profiles parse into
//! these enums, the state machine and the decisions match on them, and strings appear only at
//! the wire edge and in messages. Adding a word is one variant and its word; the compiler then
//! finds every `match` that must say what it means, and [`ALL`](StateKind::ALL) /
//! [`WORDS`](StateKind::WORDS) carry it into help text, error hints and generated docs.
//!
//! Most are `#[non_exhaustive]`: a new word is not a breaking change, and an embedder's
//! `match` keeps a careful arm for it. [`Question`], [`Action`], [`StateKind`] and [`Dialect`]
//! are not, on purpose: what to do at each answer and each state, and how to write each
//! settings dialect, must be decided again (by the compiler's say) wherever one is added.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Gives a closed vocabulary's enum, whose variants are listed with their wire words, `COUNT`,
/// `ALL`, `WORDS`, `as_str`, `from_word` and `Display`. The `match` in `as_str` fails to compile
/// when a variant is missing from the list; a test holds serde's words to these.
macro_rules! words {
    ($name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        impl $name {
            /// How many words the vocabulary has.
            pub const COUNT: usize = <[()]>::len(&[$(words!(@unit $variant)),+]);

            /// Every word, in the order of the vocabulary (and of the documentation).
            pub const ALL: [$name; Self::COUNT] = [$($name::$variant),+];

            /// Every word as written on the wire, in the same order as [`Self::ALL`].
            pub const WORDS: [&'static str; Self::COUNT] = [$($word),+];

            /// The word used on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The variant a wire word names, if any.
            pub fn from_word(word: &str) -> Option<$name> {
                $name::ALL.into_iter().find(|v| v.as_str() == word)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    (@unit $variant:ident) => { () };
}

pub(crate) use words;

/// The canonical kinds, by name: what [`Kind`](crate::canonical::Kind) says happened,
/// without its fields. Profiles map native events to these; `input-ready` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum KindName {
    /// A session started, resumed, was cleared, compacted or forked.
    SessionStart,
    /// The session ended.
    SessionEnd,
    /// A prompt was submitted: a turn begins.
    TurnStart,
    /// A tool is about to run.
    ToolStart,
    /// A tool finished.
    ToolEnd,
    /// The CLI is about to ask the human for permission to run a tool.
    PermissionRequest,
    /// The CLI is waiting for the human.
    WaitingForInput,
    /// The CLI has been idle at its prompt for a while.
    IdlePrompt,
    /// The agent finished its turn.
    Stop,
    /// The turn ended because of an API error.
    StopFailure,
    /// Context compaction.
    Compact,
    /// A subagent started.
    SubagentStart,
    /// A subagent finished.
    SubagentStop,
    /// The session's own task list changed (a task hook such as Claude's `TaskCreated`).
    Todo,
    /// Any other notification.
    Notification,
    /// A native event no rule maps, or an unreadable event file.
    Unknown,
}

/// Why a session waits for its human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WaitReason {
    /// A permission dialog is open.
    Permission,
    /// The agent asked a question.
    Question,
    /// An MCP server asked for input.
    Elicitation,
    /// The human interrupted the turn (Esc while it ran, or at a permission dialog): no hook
    /// fires for it; the CLI's transcript says so (see `docs/transcripts.md`).
    Interrupted,
    /// Anything else (a wait the CLI did not classify).
    #[default]
    Other,
}

/// The class of error that ended a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// Rate limit or usage quota.
    RateLimit,
    /// Billing problem.
    Billing,
    /// Authentication or authorization.
    Auth,
    /// The API is overloaded.
    Overloaded,
    /// A server error.
    Server,
    /// Anything else.
    #[default]
    Other,
}

/// Before or after compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CompactPhase {
    /// Compaction is about to run.
    #[default]
    Pre,
    /// Compaction finished.
    Post,
}

/// The session states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StateKind {
    /// Nothing structured says what the session is doing. Loud: never treated as idle.
    Unknown,
    /// A turn is in progress.
    Active,
    /// A tool is running; silence is normal.
    ChildCommand,
    /// The session waits for its human (permission, question, elicitation, other).
    WaitingOnHuman,
    /// Explicitly at the input prompt.
    Idle,
    /// The turn ended on a quota, rate-limit, auth, billing or server error.
    EnvFault,
    /// The session ended.
    Ended,
}

/// Why a session reads `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnknownReason {
    /// The tracker (this generation) has seen no event for it yet.
    NoEventYet,
    /// A session start began a new epoch; nothing has said what it does since.
    SessionStarted,
    /// Another host process took the session over.
    NewProducer,
    /// The turn ended, but this CLI's `stop` does not mean "at the prompt".
    StopNotInputReady,
    /// The state the events said went stale: the CLI can leave it without any event.
    Stale,
    /// Only its transcript is read (no hook event at all: the fallback producer): what the
    /// transcript held when hookline started reading it is history, and says nothing.
    TranscriptOnly,
}

/// The session-start sources the state machine tells apart (`session_start`'s `source`, as the
/// CLI says it; any other is a start like `startup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StartWord {
    /// A new session.
    Startup,
    /// A session resumed.
    Resume,
    /// `/clear`: a new session id.
    Clear,
    /// Context compaction restarted the session: its state stays.
    Compact,
    /// A forked session.
    Fork,
}

/// The session-end reasons the decisions tell apart. Any other reason the CLI gives is
/// kept as its text ([`EndReason::Other`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EndWord {
    /// `/clear`: the session id ends, the CLI process goes on under a new one.
    Clear,
    /// The session was resumed under another id: the CLI process goes on.
    Resume,
    /// The human logged out.
    Logout,
    /// The human left the prompt (Ctrl-D, `/exit`).
    PromptInputExit,
    /// The CLI exited.
    Exit,
}

/// Why a session ended: one of the reasons the decisions tell apart, or the CLI's own text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// A reason hookline knows.
    Known(EndWord),
    /// Anything else, as the CLI says it.
    Other(String),
}

impl EndReason {
    /// Reads the CLI's text.
    pub fn parse(text: &str) -> EndReason {
        EndWord::from_word(text).map_or_else(|| EndReason::Other(text.to_owned()), EndReason::Known)
    }

    /// The text, as the CLI gave it.
    pub fn as_str(&self) -> &str {
        match self {
            EndReason::Known(word) => word.as_str(),
            EndReason::Other(text) => text,
        }
    }

    /// Whether the CLI process goes on after this end, under a new session id (`/clear`,
    /// resume): the session id is over, the CLI is not.
    pub fn process_goes_on(&self) -> bool {
        matches!(self, EndReason::Known(EndWord::Clear | EndWord::Resume))
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A settings dialect: how a CLI's hooks file registers a command (what `hookline install`
/// writes for each is in docs/install.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Claude Code's `settings.json`.
    Claude,
    /// Codex's `hooks.json` (Claude's shape).
    Codex,
    /// Gemini CLI's `settings.json` (Claude's shape, named handlers, timeouts in ms).
    Gemini,
    /// Copilot CLI's hook files (flat handlers, `bash`, `timeoutSec`).
    Copilot,
    /// Cursor's `hooks.json` (flat handlers).
    Cursor,
    /// OpenCode's plugin folder: OpenCode has no command hooks, so hookline's plugin
    /// (`profiles/opencode-plugin.js`) is one file of its own there, written whole
    /// (by `hookline install`); no events are registered. Kilo Code, an OpenCode fork,
    /// loads the same plugin from its own folder.
    OpencodePlugin,
    /// Pi's extension folder: Pi has no command hooks, so hookline's extension
    /// (`profiles/pi-extension.ts`) is one file of its own there, written whole; no events
    /// are registered.
    PiExtension,
}

impl Dialect {
    /// Whether the dialect registers no hooks: hookline's plugin is a file of its own, written
    /// whole, and sends the events itself (OpenCode, Kilo Code, Pi).
    pub fn is_plugin(self) -> bool {
        matches!(self, Dialect::OpencodePlugin | Dialect::PiExtension)
    }
}

/// How a CLI writes its transcript: the `[transcript]` table's `format` (see
/// [`crate::transcript`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TranscriptFormat {
    /// Claude Code's session JSONL (`~/.claude/projects/<dir>/<session>.jsonl`).
    ClaudeJsonl,
    /// Codex's rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`).
    CodexRollout,
    /// Gemini CLI's chat JSONL (`~/.gemini/tmp/<project>/chats/session-….jsonl`).
    GeminiChats,
    /// Qwen Code's chat JSONL (`~/.qwen/projects/<dir>/chats/<session>.jsonl`).
    QwenChats,
}

/// The decision questions. Each asks whether the orchestrator may go ahead, unattended,
/// with something that would be wrong if hookline were wrong; `allow` is the permissive
/// answer and `withhold` the careful one, for every question.
///
/// Adding one is this variant plus its rules (`decide/rules.rs`) and its column of the
/// caller-evidence table (`evidence.rs`), both of which the compiler asks for; a
/// test asks for its row in the documentation tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// May I deliver input (type into the session) now? Allowing takes the idle's input
    /// slot.
    Input,
    /// May I send a stall nudge now? A nudge is input: allowing takes the input slot too.
    Nudge,
    /// May I declare this session finished or crashed (and retry or reclaim it)?
    Crashed,
    /// May I carry on as if the environment were fine (retry, charge an attempt)?
    /// Withheld with `pause` when there is env-fault evidence (quota, rate limit, billing,
    /// auth).
    #[serde(rename = "env-fault", alias = "env_fault")]
    EnvFault,
    /// May I carry on without a human? Withheld with `escalate` when a human should look.
    Escalate,
    /// Does this session, at the end of its turn, want a stall nudge? Allowed for a definite
    /// stall (a livelock) or an open item of its own task list, with the text to send;
    /// withheld while a wake is pending or the session is not at an explicit idle. It
    /// authorizes no keystroke and never takes the input slot: ask `nudge` (or take the slot)
    /// before typing.
    Stall,
}

impl Question {
    /// Every question's word, for people: `input, nudge, crashed, env-fault, escalate or
    /// stall`.
    pub fn listed() -> String {
        let (last, rest) = Question::WORDS.split_last().expect("there are questions");
        format!("{} or {last}", rest.join(", "))
    }
}

impl std::str::FromStr for Question {
    type Err = String;

    /// A question's word; `_` may stand for `-` (`env_fault`).
    fn from_str(s: &str) -> Result<Question, String> {
        Question::ALL
            .into_iter()
            .find(|q| q.as_str() == s || q.as_str().replace('-', "_") == s)
            .ok_or_else(|| format!("{s:?} is not a question: ask {}", Question::listed()))
    }
}

/// The status of an item of a session's own task list (Claude's `TaskUpdate` / `TodoWrite`
/// words). A status the CLI writes otherwise is kept as missing: such an item is not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Removed from the list.
    Deleted,
}

impl TodoStatus {
    /// Whether an item with this status is still to do.
    pub fn is_open(self) -> bool {
        matches!(self, TodoStatus::Pending | TodoStatus::InProgress)
    }
}

/// The answer, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Do not; [`Action`] says what to do instead.
    Withhold,
}

/// What the orchestrator should do, from the most permissive to the most careful. The
/// order is the one evidence is combined in: caller evidence may move a decision up this
/// list, never down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Go ahead (the only action with verdict `allow`).
    Proceed,
    /// hookline has no structured signal for this: keep your own existing behaviour
    /// (which the caller's evidence may still make more careful).
    FallBack,
    /// Do not act now; ask again later (after the next event).
    Hold,
    /// Pause the run: an environment fault (quota, rate limit, billing, auth); do not
    /// retry, do not charge an attempt.
    Pause,
    /// Ask a human.
    Escalate,
}

/// Which source decided. Sources are ranked (see [`crate::decide::precedence`]): only a
/// structured event, or for `crashed` a deterministic liveness signal, can allow anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Signal {
    /// An explicit hook event, through the session's state.
    StructuredEvent,
    /// The host CLI's process is gone (its pid is dead or reused).
    HostProcess,
    /// The caller reported the session's window or pane dead.
    Window,
    /// The caller's transcript-derived evidence.
    Transcript,
    /// The caller's pane heuristics.
    Pane,
    /// No structured signal: hookline cannot tell, the caller keeps its own behaviour.
    None,
    /// The configured classifier's verdict, through the act-gate
    /// ([`crate::decide::classifier::gate`]): it may make `stall` allow only where the
    /// structural answer was `fall_back`, and otherwise only make an answer more careful.
    Classifier,
}

/// What a classifier may answer about a silent session before `crashed` (the first line of
/// its stdout, one word). Anything else it says reads `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CrashedVerdict {
    /// The screen shows the session waiting on its human (a dialog, a question).
    WaitingOnHuman,
    /// The screen shows it working quietly.
    Working,
    /// The screen shows it stuck (hung, looping, a crash message).
    Wedged,
    /// The classifier cannot tell, or did not answer.
    Unknown,
}

/// What a classifier may answer about the end of a turn with no structural signal, for
/// `stall` (the first line of its stdout, one word). Anything else it says reads `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StallVerdict {
    /// The last message trails off with work left: a nudge is wanted.
    Stalled,
    /// The last message says the work is done: withhold the nudge (it ends nothing).
    Finished,
    /// The classifier cannot tell, or did not answer.
    Unknown,
}

/// A classifier verdict, of the vocabulary of the question it was consulted on. On the wire
/// it is the word alone (`unknown` reads back as the `crashed` one; the record beside it
/// names the question).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum ClassifierVerdict {
    /// Consulted before `crashed`.
    Crashed(CrashedVerdict),
    /// Consulted at `stall`'s `fall_back`.
    Stall(StallVerdict),
}

impl ClassifierVerdict {
    /// The `unknown` of a question's vocabulary; `None` for a question that is never
    /// consulted.
    pub fn unknown(question: Question) -> Option<ClassifierVerdict> {
        match question {
            Question::Crashed => Some(ClassifierVerdict::Crashed(CrashedVerdict::Unknown)),
            Question::Stall => Some(ClassifierVerdict::Stall(StallVerdict::Unknown)),
            _ => None,
        }
    }

    /// A classifier's answer line as a verdict of `question`'s vocabulary: trimmed, any
    /// case, exactly one word of it; anything else is `unknown`.
    pub fn parse(question: Question, line: &str) -> Option<ClassifierVerdict> {
        let word = line.trim().to_ascii_lowercase();
        match question {
            Question::Crashed => Some(ClassifierVerdict::Crashed(
                CrashedVerdict::from_word(&word).unwrap_or(CrashedVerdict::Unknown),
            )),
            Question::Stall => Some(ClassifierVerdict::Stall(
                StallVerdict::from_word(&word).unwrap_or(StallVerdict::Unknown),
            )),
            _ => None,
        }
    }

    /// The word.
    pub fn as_str(self) -> &'static str {
        match self {
            ClassifierVerdict::Crashed(v) => v.as_str(),
            ClassifierVerdict::Stall(v) => v.as_str(),
        }
    }

    /// Whether it is its vocabulary's `unknown` (which changes nothing).
    pub fn is_unknown(self) -> bool {
        matches!(
            self,
            ClassifierVerdict::Crashed(CrashedVerdict::Unknown)
                | ClassifierVerdict::Stall(StallVerdict::Unknown)
        )
    }

    /// Every verdict of `question`'s vocabulary (none for a question never consulted).
    pub fn all_for(question: Question) -> Vec<ClassifierVerdict> {
        match question {
            Question::Crashed => {
                CrashedVerdict::ALL.into_iter().map(ClassifierVerdict::Crashed).collect()
            }
            Question::Stall => {
                StallVerdict::ALL.into_iter().map(ClassifierVerdict::Stall).collect()
            }
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for ClassifierVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rule behind a decision: a stable name for scripts, the journal and the docs
/// (docs/decide.md lists each; the caller-evidence rules are `transcript-<field>` and
/// `pane-<field>`, the classifier's `stall-classifier-…` and `crashed-classifier-…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RuleId {
    /// No event was ever seen for the session (hooks not installed or not trusted, an old relay, another events directory).
    NoStructuredSignal,
    /// The state is `unknown` (launch, a new producer, a stale state).
    UnknownState,
    /// The state went stale while waiting on its human.
    LastEvidenceIsAWaitForItsHuman,
    /// The turn ended on a `stop_failure` in `env-fault.pause-on`.
    EnvFaultPause,
    /// The turn ended on a transient `stop_failure` (`env-fault.backoff-on`), within `env-fault.backoff`.
    EnvFaultBackoff,
    /// A transient error older than `env-fault.backoff`: a retry is allowed.
    EnvFaultBackoffOver,
    /// After the backoff a retry is allowed, but input waits for an explicit idle.
    EnvFaultIsNotIdle,
    /// The turn ended on an API error of no known class: a quota cannot be told from a bad request.
    EnvFaultUnclassified,
    /// A notification reporting a quota is the session's freshest evidence.
    QuotaNotification,
    /// The caller reports the session's window dead.
    WindowDead,
    /// Explicit, fresh, authoritative idle of this generation and epoch: the input slot is taken.
    InputAtExplicitIdle,
    /// The idle's input slot cannot be taken (replayed history, already taken, spent).
    InputSlotRefused,
    /// Asked under a lease that is unknown, spent, another session's or another question's.
    LeaseRefused,
    /// Idle for longer than `input.max-idle-age`.
    IdleTooOld,
    /// A one-shot reader (`hookline decide`) saw a live idle: it never authorizes.
    OneShotNeverAuthorizesInput,
    /// Input asked of a session in any state but idle.
    NotIdle,
    /// The CLI's profile has no input-ready event.
    CliHasNoInputReadyEvent,
    /// No nudge while the session waits on its human.
    NudgeNeverWhileWaitingOnHuman,
    /// No nudge while a tool runs.
    NudgeNeverWhileChildCommand,
    /// No nudge during a turn (`active`).
    NudgeNeverDuringATurn,
    /// No nudge after the session ended.
    NudgeNeverAfterSessionEnd,
    /// Idle, but the last stop reported a pending wake.
    NudgeNeverWithPendingWake,
    /// Idle for less than `nudge.min-idle`.
    NudgeWaitsForMinIdle,
    /// `nudge.max-in-a-row` nudges allowed with no allowed input in between.
    NudgeCapReached,
    /// Every nudge rule passed at an explicit idle: the slot is taken.
    NudgeAtExplicitIdle,
    /// Not stalled: the session waits on its human.
    StallNeverWhileWaitingOnHuman,
    /// Not stalled: a tool is running.
    StallNeverWhileChildCommand,
    /// Not stalled: the turn has not ended.
    StallNeverDuringATurn,
    /// Not stalled: the session ended.
    StallNeverAfterSessionEnd,
    /// Idle with a pending wake: the session will wake itself.
    StallWithheldPendingWake,
    /// Idle after identical consecutive tool calls: a definite stall.
    StallLivelock,
    /// Idle with an open item on the session's own task list.
    StallOpenTodoItem,
    /// Idle and no structural signal either way.
    StallNoStructuralSignal,
    /// The session ended (not by `/clear`): a completion signal.
    SessionEnded,
    /// The host CLI's process is gone.
    HostProcessDead,
    /// The host CLI's pid belongs to a younger process: the host is gone.
    HostPidReused,
    /// Waiting on its human is the freshest evidence: not crashed.
    NeverCrashedWhileWaitingOnHuman,
    /// `/clear` ended the session id; the CLI goes on under a new one.
    SessionClearedProcessGoesOn,
    /// A live state, no session end, the host alive or unknown, no dead window.
    NoCompletionSignal,
    /// The CLI's profile maps nothing to `stop_failure`.
    CliReportsNoEnvFault,
    /// The CLI can report API errors and none stands.
    NoEnvFaultEvidence,
    /// `escalate.withheld-in-a-row` withheld verdicts while the state stayed the same.
    WithheldInARow,
    /// `unknown` for `escalate.unknown-after`.
    UnknownTooLong,
    /// Waiting on its human for `escalate.waiting-after`.
    WaitingOnHumanTooLong,
    /// `unknown`, but not for long yet.
    UnknownNotYetTooLong,
    /// Nothing calls for a human.
    NothingToEscalate,
    /// The last guard: an allow from a source that may not allow.
    OnlyStructuredSignalsAllow,
    /// The classifier reads the last message as stalled where no structural signal answered.
    StallClassifierStalled,
    /// The classifier reads the last message as finished: the nudge is withheld.
    StallClassifierFinished,
    /// The classifier reads the screen as waiting on its human: not crashed.
    CrashedClassifierWaitingOnHuman,
    /// The classifier read the screen as waiting on its human too many times in a row.
    CrashedClassifierWaitingInARow,
    /// The classifier reads the screen as working: grace extended.
    CrashedClassifierWorking,
    /// The classifier reads the screen as wedged: ask a human.
    CrashedClassifierWedged,
    /// The caller's transcript shows a turn in progress.
    TranscriptTurnInProgress,
    /// The caller's transcript shows the turn interrupted by its human.
    TranscriptInterrupted,
    /// The caller's transcript shows a quota error.
    TranscriptQuotaError,
    /// The caller's transcript shows turns producing no tokens.
    TranscriptZeroTokens,
    /// The caller's transcript shows the turn finished.
    TranscriptTurnFinished,
    /// The caller's pane text says idle.
    PaneTextSaysIdle,
    /// The caller's pane shows a spinner.
    PaneSpinner,
    /// The caller's pane shows a dialog.
    PaneDialog,
    /// The caller's pane shows a login or trust screen.
    PaneLoginOrTrust,
    /// The caller's pane shows a quota message.
    PaneQuotaText,
    /// The caller's pane shows typed text not submitted.
    PaneTypedNotSubmitted,
}

/// What a background task's status says, as far as a decision cares: ended, or still pending
/// work. The CLI's own word is kept beside it
/// ([`BackgroundTask::status`](crate::canonical::BackgroundTask::status)); a word hookline
/// does not know reads as pending (the task is counted and gates a nudge), never as ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// A word that says the task ended: completed, failed, killed, cancelled, ...
    Finished,
    /// Any other word (`running`, `pending`, one hookline has never seen): pending work.
    Pending,
}

impl TaskStatus {
    /// The status words (compared in lower case) that say a task ended.
    pub const FINISHED_WORDS: &'static [&'static str] = &[
        "completed",
        "complete",
        "done",
        "finished",
        "succeeded",
        "success",
        "failed",
        "failure",
        "error",
        "killed",
        "cancelled",
        "canceled",
        "stopped",
        "exited",
        "timeout",
    ];

    /// The status a CLI's word says, in any case.
    pub fn read(word: &str) -> TaskStatus {
        let word = word.to_ascii_lowercase();
        if TaskStatus::FINISHED_WORDS.contains(&word.as_str()) {
            TaskStatus::Finished
        } else {
            TaskStatus::Pending
        }
    }
}

/// A background task's type, as far as a decision tells them apart. The CLI's own word is kept
/// beside it ([`BackgroundTask::task_type`](crate::canonical::BackgroundTask::task_type)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskType {
    /// `shell`: a command running in the background (a dev server, a build).
    Shell,
    /// `monitor`: each line it prints wakes the session.
    Monitor,
    /// `subagent`: a background subagent, whose end wakes the session.
    Subagent,
    /// A type hookline does not know (`workflow`, a new one): counted as pending work and said
    /// so, never taken for idle.
    Unknown,
}

impl TaskType {
    /// The type a CLI's word names (exactly as written).
    pub fn read(word: &str) -> TaskType {
        match word {
            "shell" => TaskType::Shell,
            "monitor" => TaskType::Monitor,
            "subagent" => TaskType::Subagent,
            _ => TaskType::Unknown,
        }
    }
}

// The wire words of every vocabulary above, variant by variant.
words!(KindName {
    SessionStart = "session_start", SessionEnd = "session_end", TurnStart = "turn_start",
    ToolStart = "tool_start", ToolEnd = "tool_end", PermissionRequest = "permission_request",
    WaitingForInput = "waiting_for_input", IdlePrompt = "idle_prompt", Stop = "stop",
    StopFailure = "stop_failure", Compact = "compact", SubagentStart = "subagent_start",
    SubagentStop = "subagent_stop", Todo = "todo", Notification = "notification",
    Unknown = "unknown",
});
words!(WaitReason {
    Permission = "permission", Question = "question", Elicitation = "elicitation",
    Interrupted = "interrupted", Other = "other",
});
words!(FailureKind {
    RateLimit = "rate_limit", Billing = "billing", Auth = "auth", Overloaded = "overloaded",
    Server = "server", Other = "other",
});
words!(TranscriptFormat {
    ClaudeJsonl = "claude-jsonl", CodexRollout = "codex-rollout", GeminiChats = "gemini-chats",
    QwenChats = "qwen-chats",
});
words!(CompactPhase { Pre = "pre", Post = "post" });
words!(StateKind {
    Unknown = "unknown", Active = "active", ChildCommand = "child_command",
    WaitingOnHuman = "waiting_on_human", Idle = "idle", EnvFault = "env_fault", Ended = "ended",
});
words!(UnknownReason {
    NoEventYet = "no event of this generation yet", SessionStarted = "session started",
    NewProducer = "new producer",
    StopNotInputReady = "the turn ended but this CLI's stop is not input-ready", Stale = "stale",
    TranscriptOnly = "no hook event: only the transcript is read",
});
words!(StartWord {
    Startup = "startup", Resume = "resume", Clear = "clear", Compact = "compact", Fork = "fork",
});
words!(EndWord {
    Clear = "clear", Resume = "resume", Logout = "logout", PromptInputExit = "prompt_input_exit",
    Exit = "exit",
});
words!(Dialect {
    Claude = "claude", Codex = "codex", Gemini = "gemini", Copilot = "copilot", Cursor = "cursor",
    OpencodePlugin = "opencode_plugin", PiExtension = "pi_extension",
});
words!(Question {
    Input = "input", Nudge = "nudge", Crashed = "crashed", EnvFault = "env-fault",
    Escalate = "escalate", Stall = "stall",
});
words!(TodoStatus {
    Pending = "pending", InProgress = "in_progress", Completed = "completed", Deleted = "deleted",
});
words!(Verdict { Allow = "allow", Withhold = "withhold" });
words!(Action {
    Proceed = "proceed", FallBack = "fall_back", Hold = "hold", Pause = "pause",
    Escalate = "escalate",
});
words!(Signal {
    StructuredEvent = "structured_event", HostProcess = "host_process", Window = "window",
    Transcript = "transcript", Pane = "pane", None = "none", Classifier = "classifier",
});
words!(CrashedVerdict {
    WaitingOnHuman = "waiting_on_human", Working = "working", Wedged = "wedged",
    Unknown = "unknown",
});
words!(StallVerdict { Stalled = "stalled", Finished = "finished", Unknown = "unknown" });
words!(RuleId {
    NoStructuredSignal = "no-structured-signal", UnknownState = "unknown-state",
    LastEvidenceIsAWaitForItsHuman = "last-evidence-is-a-wait-for-its-human",
    EnvFaultPause = "env-fault-pause", EnvFaultBackoff = "env-fault-backoff",
    EnvFaultBackoffOver = "env-fault-backoff-over", EnvFaultIsNotIdle = "env-fault-is-not-idle",
    EnvFaultUnclassified = "env-fault-unclassified", QuotaNotification = "quota-notification",
    WindowDead = "window-dead", InputAtExplicitIdle = "input-at-explicit-idle",
    InputSlotRefused = "input-slot-refused", LeaseRefused = "lease-refused",
    IdleTooOld = "idle-too-old", OneShotNeverAuthorizesInput = "one-shot-never-authorizes-input",
    NotIdle = "not-idle", CliHasNoInputReadyEvent = "cli-has-no-input-ready-event",
    NudgeNeverWhileWaitingOnHuman = "nudge-never-while-waiting-on-human",
    NudgeNeverWhileChildCommand = "nudge-never-while-child-command",
    NudgeNeverDuringATurn = "nudge-never-during-a-turn",
    NudgeNeverAfterSessionEnd = "nudge-never-after-session-end",
    NudgeNeverWithPendingWake = "nudge-never-with-pending-wake",
    NudgeWaitsForMinIdle = "nudge-waits-for-min-idle", NudgeCapReached = "nudge-cap-reached",
    NudgeAtExplicitIdle = "nudge-at-explicit-idle",
    StallNeverWhileWaitingOnHuman = "stall-never-while-waiting-on-human",
    StallNeverWhileChildCommand = "stall-never-while-child-command",
    StallNeverDuringATurn = "stall-never-during-a-turn",
    StallNeverAfterSessionEnd = "stall-never-after-session-end",
    StallWithheldPendingWake = "stall-withheld-pending-wake", StallLivelock = "stall-livelock",
    StallOpenTodoItem = "stall-open-todo-item",
    StallNoStructuralSignal = "stall-no-structural-signal", SessionEnded = "session-ended",
    HostProcessDead = "host-process-dead", HostPidReused = "host-pid-reused",
    NeverCrashedWhileWaitingOnHuman = "never-crashed-while-waiting-on-human",
    SessionClearedProcessGoesOn = "session-cleared-process-goes-on",
    NoCompletionSignal = "no-completion-signal", CliReportsNoEnvFault = "cli-reports-no-env-fault",
    NoEnvFaultEvidence = "no-env-fault-evidence", WithheldInARow = "withheld-in-a-row",
    UnknownTooLong = "unknown-too-long", WaitingOnHumanTooLong = "waiting-on-human-too-long",
    UnknownNotYetTooLong = "unknown-not-yet-too-long", NothingToEscalate = "nothing-to-escalate",
    OnlyStructuredSignalsAllow = "only-structured-signals-allow",
    StallClassifierStalled = "stall-classifier-stalled",
    StallClassifierFinished = "stall-classifier-finished",
    CrashedClassifierWaitingOnHuman = "crashed-classifier-waiting-on-human",
    CrashedClassifierWaitingInARow = "crashed-classifier-waiting-in-a-row",
    CrashedClassifierWorking = "crashed-classifier-working",
    CrashedClassifierWedged = "crashed-classifier-wedged",
    TranscriptTurnInProgress = "transcript-turn-in-progress",
    TranscriptInterrupted = "transcript-interrupted",
    TranscriptQuotaError = "transcript-quota-error",
    TranscriptZeroTokens = "transcript-zero-tokens",
    TranscriptTurnFinished = "transcript-turn-finished", PaneTextSaysIdle = "pane-text-says-idle",
    PaneSpinner = "pane-spinner", PaneDialog = "pane-dialog",
    PaneLoginOrTrust = "pane-login-or-trust", PaneQuotaText = "pane-quota-text",
    PaneTypedNotSubmitted = "pane-typed-not-submitted",
});

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that serde writes and reads each word as `as_str` and `from_word` do.
    fn wire_words_round_trip<T>(all: &[T])
    where
        T: Copy + PartialEq + fmt::Debug + fmt::Display + Serialize + for<'de> Deserialize<'de>,
    {
        for value in all {
            let word = value.to_string();
            assert_eq!(serde_json::to_value(value).unwrap(), word.as_str(), "{value:?}");
            assert_eq!(serde_json::from_value::<T>(word.clone().into()).unwrap(), *value);
        }
    }

    #[test]
    fn every_vocabulary_reads_and_writes_its_wire_words() {
        macro_rules! round_trip {
            ($($vocabulary:ty),+) => { $(wire_words_round_trip(&<$vocabulary>::ALL);)+ };
        }
        round_trip! {
            KindName, WaitReason, FailureKind, CompactPhase, StateKind, StartWord, EndWord,
            Dialect, Question, TodoStatus, Verdict, Action, Signal, CrashedVerdict,
            StallVerdict, RuleId
        }
        for state in StateKind::ALL {
            assert_eq!(StateKind::from_word(state.as_str()), Some(state));
        }
        assert_eq!(StateKind::from_word("busy"), None);
        assert_eq!(StateKind::WORDS.len(), StateKind::COUNT);
    }

    #[test]
    fn a_classifier_answer_is_exactly_one_word_of_its_questions_vocabulary() {
        let crashed = |line: &str| ClassifierVerdict::parse(Question::Crashed, line).unwrap();
        let stall = |line: &str| ClassifierVerdict::parse(Question::Stall, line).unwrap();
        assert_eq!(
            crashed("  WAITING_ON_HUMAN \r"),
            ClassifierVerdict::Crashed(CrashedVerdict::WaitingOnHuman)
        );
        assert_eq!(stall("Finished"), ClassifierVerdict::Stall(StallVerdict::Finished));
        for line in [
            "finished",
            "working.",
            "working wedged",
            "\"working\"",
            "",
            "idle",
            "{\"action\":\"proceed\"}",
        ] {
            assert!(crashed(line).is_unknown(), "{line:?}");
        }
        for line in ["working", "stalled!", "stalled finished", "Enter", "allow"] {
            assert!(stall(line).is_unknown(), "{line:?}");
        }
        assert_eq!(ClassifierVerdict::parse(Question::Input, "working"), None);
        assert_eq!(ClassifierVerdict::all_for(Question::Crashed).len(), CrashedVerdict::COUNT);
        assert_eq!(ClassifierVerdict::all_for(Question::Nudge), Vec::new());
    }

    #[test]
    fn a_task_status_hookline_does_not_know_is_pending_work_never_finished() {
        assert_eq!(TaskStatus::read("Completed"), TaskStatus::Finished);
        assert_eq!(TaskStatus::read("killed"), TaskStatus::Finished);
        for word in ["running", "pending", "", "paused", "finishing"] {
            assert_eq!(TaskStatus::read(word), TaskStatus::Pending, "{word:?}");
        }
        assert_eq!(TaskType::read("shell"), TaskType::Shell);
        assert_eq!(TaskType::read("subagent"), TaskType::Subagent);
        for word in ["workflow", "Shell", "", "agent"] {
            assert_eq!(TaskType::read(word), TaskType::Unknown, "{word:?}");
        }
    }

    #[test]
    fn end_reasons_keep_the_clis_text() {
        assert_eq!(EndReason::parse("clear"), EndReason::Known(EndWord::Clear));
        assert!(EndReason::parse("resume").process_goes_on());
        assert!(!EndReason::parse("logout").process_goes_on());
        let other = EndReason::parse("window closed");
        assert_eq!((other.as_str(), other.process_goes_on()), ("window closed", false));
    }

    #[test]
    fn questions_are_listed_for_people_from_the_enum() {
        assert_eq!(Question::listed(), "input, nudge, crashed, env-fault, escalate or stall");
        assert_eq!("env_fault".parse::<Question>().unwrap(), Question::EnvFault);
        let e = "idle".parse::<Question>().unwrap_err();
        assert_eq!(
            e,
            "\"idle\" is not a question: ask input, nudge, crashed, env-fault, escalate or stall"
        );
    }
}
