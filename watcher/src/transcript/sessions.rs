//! The transcripts of every session a tracker knows: one [`Follower`] per session whose
//! events named a transcript and whose CLI's profile says how to read it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::profile::TranscriptSpec;

use super::reading::TranscriptFacts;

use super::follower::Follower;
use super::tail::TailLimits;

/// Followers of the sessions' transcripts, kept between polls (`serve`, the daemon) or used
/// once (`status`, `explain`, one-shot `decide`).
#[derive(Debug, Default)]
pub struct Followers {
    limits: TailLimits,
    by_session: HashMap<String, Follower>,
}

impl Followers {
    /// Followers reading within `limits`.
    pub fn new(limits: TailLimits) -> Followers {
        Followers { limits, by_session: HashMap::new() }
    }

    /// How many transcripts are followed.
    pub fn len(&self) -> usize {
        self.by_session.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_session.is_empty()
    }

    /// Reads what each transcript `wanted` names gained since the last poll (the tracker says
    /// which: [`Tracker::transcripts_wanted`](crate::state::Tracker::transcripts_wanted)) and
    /// returns, per session key, the facts to hand to
    /// [`Tracker::observe_transcript`](crate::state::Tracker::observe_transcript) (or
    /// [`Decider::observe_transcript`](crate::decide::Decider::observe_transcript)). A
    /// session that ended, or whose transcript changed path, drops its follower; a new
    /// follower reads its file's tail as history. A transcript that cannot be read is skipped
    /// (it can only ever have made an answer more careful), with the error returned beside.
    pub fn poll_wanted(
        &mut self,
        wanted: Vec<Wanted>,
        now_ns: u64,
    ) -> (Vec<(String, TranscriptFacts)>, Vec<crate::Error>) {
        let mut facts = Vec::new();
        let mut errors = Vec::new();
        let wanted: HashMap<String, Wanted> =
            wanted.into_iter().map(|w| (w.key.clone(), w)).collect();
        self.by_session.retain(|key, f| {
            wanted.get(key).is_some_and(|w| f.path().as_os_str() == w.path.as_str())
        });
        for (key, Wanted { path, format, session_id, .. }) in wanted {
            let follower = self
                .by_session
                .entry(key.clone())
                .or_insert_with(|| Follower::new(&path, format, session_id, self.limits, now_ns));
            match follower.poll(now_ns) {
                Ok(_) if !follower.bound() => {}
                Ok(_) => facts.push((
                    key,
                    TranscriptFacts {
                        path,
                        format,
                        reading: follower.reading().clone(),
                        grew_ns: follower.grew_ns(),
                    },
                )),
                Err(e) => errors.push(e),
            }
        }
        (facts, errors)
    }
}

/// A session's transcript to read ([`Followers::poll_wanted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The session's key.
    pub key: String,
    /// The transcript file.
    pub path: String,
    /// How it is written.
    pub format: crate::vocab::TranscriptFormat,
    /// The session id the file must name.
    pub session_id: Option<String>,
}

/// The fallback producer: follows the transcripts in a CLI's transcript directory, for
/// sessions that have no hook events (hooks not installed or not trusted, an old CLI, a
/// hand-started session). Each file is a session, named by the session id it holds (else its
/// file name); what it holds when first read is history. See
/// [`Tracker::observe_unhooked_transcript`](crate::state::Tracker::observe_unhooked_transcript).
#[derive(Debug)]
pub struct Unhooked {
    cli: String,
    dir: PathBuf,
    spec: TranscriptSpec,
    limits: TailLimits,
    /// The most files followed: the most recently modified.
    max_files: usize,
    by_path: HashMap<PathBuf, Follower>,
}

impl Unhooked {
    /// Follows the transcripts under `dir` of CLI `cli`, written as `spec` says.
    pub fn new(cli: &str, dir: impl Into<PathBuf>, spec: TranscriptSpec) -> Unhooked {
        Unhooked {
            cli: cli.to_owned(),
            dir: dir.into(),
            spec,
            limits: TailLimits::default(),
            max_files: 64,
            by_path: HashMap::new(),
        }
    }

    /// The directory searched.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The CLI whose transcripts these are.
    pub fn cli(&self) -> &str {
        &self.cli
    }

    /// Finds the newest transcripts under the directory and reads what each gained: per file,
    /// the session id it names (else its file name), its facts, and when hookline started
    /// reading it; for [`Tracker::observe_unhooked_transcript`](crate::state::Tracker::observe_unhooked_transcript).
    #[allow(clippy::type_complexity)]
    pub fn read(
        &mut self,
        now_ns: u64,
    ) -> (Vec<(String, TranscriptFacts, u64)>, Vec<crate::Error>) {
        let mut errors = Vec::new();
        let mut found = Vec::new();
        let mut files = Vec::new();
        collect(&self.dir, &self.spec.file_suffix, 0, &mut files);
        files.sort_by_key(|f| std::cmp::Reverse(f.1));
        files.truncate(self.max_files);
        let keep: std::collections::HashSet<&PathBuf> = files.iter().map(|(p, _)| p).collect();
        self.by_path.retain(|p, _| keep.contains(p));
        for (path, _) in &files {
            let follower = self.by_path.entry(path.clone()).or_insert_with(|| {
                Follower::new(path, self.spec.format, None, self.limits, now_ns)
            });
            if let Err(e) = follower.poll(now_ns) {
                errors.push(e);
                continue;
            }
            let id = follower
                .session_id()
                .map(str::to_owned)
                .or_else(|| path.file_stem().and_then(|s| s.to_str()).map(str::to_owned));
            let Some(id) = id else { continue };
            let facts = TranscriptFacts {
                path: path.display().to_string(),
                format: self.spec.format,
                reading: follower.reading().clone(),
                grew_ns: follower.grew_ns(),
            };
            found.push((id, facts, follower.started_ns()));
        }
        (found, errors)
    }
}

/// The files under `dir` whose names end in `suffix`, with their modification times, to a
/// bounded depth.
fn collect(dir: &Path, suffix: &str, depth: usize, out: &mut Vec<(PathBuf, SystemTime)>) {
    const MAX_DEPTH: usize = 6;
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() && depth < MAX_DEPTH {
            collect(&path, suffix, depth + 1, out);
        } else if kind.is_file()
            && entry.file_name().to_str().is_some_and(|n| n.ends_with(suffix))
            && let Ok(modified) = entry.metadata().and_then(|m| m.modified())
        {
            out.push((path, modified));
        }
    }
}
