//! The framing of checkpoint files: where they are, their header, their atomic write and
//! reading them back. What a checkpoint holds, and when one may be used, is the engine's
//! ([`crate::engine::checkpoint`]); each part of it is in the wire form of its owner.
//!
//! A checkpoint is `<events_dir>/.cursors/<folder>.checkpoint`, next to the cursors. It is
//! written atomically (a temp file renamed over it) and holds, after a one-line header
//! (`hookline-checkpoint <format> <length> <digest>`) that tells a cut-short or damaged body
//! from a good one, a JSON document.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::digest::{Digesting, digest};
use crate::errors::CheckpointProblem;
use crate::format::store::EventsDir;
use crate::paths::CURSORS_DIR;
use crate::untrusted::{self, Link};

/// The state format: bumped whenever what a checkpoint holds, or what it means, changes.
pub const FORMAT: u32 = 1;

/// The first word of a checkpoint file.
const MAGIC: &str = "hookline-checkpoint";
/// The largest checkpoint read (read whole, never through a link, never blocking on a FIFO).
const MAX_BYTES: u64 = 1 << 30;

/// What folded the state a checkpoint holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Folder {
    /// A tracker alone.
    Tracker,
    /// A decider: a tracker and what the decisions remember of the events.
    Decider,
}

impl Folder {
    fn file_name(self) -> &'static str {
        match self {
            Folder::Tracker => "tracker.checkpoint",
            Folder::Decider => "decider.checkpoint",
        }
    }
}

/// The checkpoint file of `folder` in an events directory.
pub fn path(events_dir: &Path, folder: Folder) -> PathBuf {
    events_dir.join(CURSORS_DIR).join(folder.file_name())
}

/// The bytes of the checkpoint file at `path`, read whole, never through a link; `None` when
/// there is none.
pub(crate) fn read(path: &Path) -> Result<Option<Vec<u8>>, CheckpointProblem> {
    match untrusted::read_regular(path, MAX_BYTES, Link::Refuse) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CheckpointProblem::Unreadable(std::sync::Arc::new(e))),
    }
}

/// The header line: the length zero-padded, so that the real one, known only once the body
/// is written, takes the place of a placeholder of the same width.
pub(crate) fn header(len: u64, digest: u64) -> String {
    format!("{MAGIC} {FORMAT} {len:020} {digest:016x}\n")
}

/// The body after a good header.
pub(crate) fn body(bytes: &[u8]) -> Result<&[u8], CheckpointProblem> {
    let foreign = |why: &str| CheckpointProblem::Foreign(why.to_owned());
    let end = bytes.iter().position(|b| *b == b'\n').ok_or_else(|| foreign("no header line"))?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| foreign("no header line"))?;
    let body = &bytes[end + 1..];
    let mut words = header.split(' ');
    if words.next() != Some(MAGIC) {
        return Err(foreign("its header does not start with hookline-checkpoint"));
    }
    let mut number = |radix| {
        words
            .next()
            .and_then(|w| u64::from_str_radix(w, radix).ok())
            .ok_or(CheckpointProblem::Damaged { why: "a bad header", source: None })
    };
    let format = number(10)?;
    if format != u64::from(FORMAT) {
        return Err(CheckpointProblem::Mismatch {
            what: "state format",
            saved: format.to_string(),
            current: FORMAT.to_string(),
        });
    }
    let (length, expected) = (number(10)?, number(16)?);
    if body.len() as u64 != length {
        return Err(CheckpointProblem::Truncated { expected: length, found: body.len() as u64 });
    }
    if digest(0, body) != expected {
        return Err(CheckpointProblem::Damaged {
            why: "its content does not match its digest",
            source: None,
        });
    }
    Ok(body)
}

/// Writes a checkpoint file atomically: encoded straight into a temp file in its directory,
/// its header put in place, then renamed over the old one.
pub(crate) fn write(path: &Path, body_value: &impl Serialize) -> Result<(), Error> {
    use std::io::{Seek, Write};
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    EventsDir::create(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp-hookline-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file in", dir, e))?;
    let io = |e: std::io::Error| Error::io("write", path, e);
    let (len, digest) = {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, temp.as_file_mut());
        out.write_all(header(0, 0).as_bytes()).map_err(io)?;
        let mut body = Digesting::new(out);
        serde_json::to_writer(&mut body, body_value)
            .map_err(|e| Error::io("encode", path, e.into()))?;
        body.inner.flush().map_err(io)?;
        (body.len, body.fnv.finish())
    };
    let out = temp.as_file_mut();
    out.rewind().map_err(io)?;
    out.write_all(header(len, digest).as_bytes()).map_err(io)?;
    out.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io("chmod", path, e))?;
    temp.persist(path).map_err(|e| Error::io("replace", path, e.error))?;
    Ok(())
}
