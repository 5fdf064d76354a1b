//! Host processes, as Linux's `/proc` describes them: whether a pid runs, when it started, its
//! parent, its process group, and which process group holds its terminal's foreground. The one
//! place hookline reads them, for `crashed` (is the host CLI still alive?) and for `deliver`
//! (is the session's CLI in the pane, and in its foreground?).

use std::fs;

/// The fields of `/proc/<pid>/stat` after the command's `)`: state is the first.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_owned).collect())
}

fn field(pid: u32, index: usize) -> Option<i64> {
    stat_fields(pid)?.get(index)?.parse().ok()
}

/// The parent of `pid`.
pub fn parent(pid: u32) -> Option<u32> {
    u32::try_from(field(pid, 1)?).ok()
}

/// The process group of `pid`.
pub fn process_group(pid: u32) -> Option<u32> {
    u32::try_from(field(pid, 2)?).ok()
}

/// The process group in the foreground of `pid`'s controlling terminal (`tpgid`); `None` when
/// it has none.
pub fn foreground_group(pid: u32) -> Option<u32> {
    u32::try_from(field(pid, 5)?).ok().filter(|g| *g > 0)
}

/// The command name of `pid` (`/proc/<pid>/comm`), as the kernel keeps it (15 bytes at most).
pub fn command_name(pid: u32) -> Option<String> {
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end_matches('\n').to_owned())
}

/// Whether `pid` is `root` or one of its descendants.
pub fn in_process_tree(pid: u32, root: u32) -> bool {
    let mut current = pid;
    for _ in 0..128 {
        if current == root {
            return true;
        }
        match parent(current) {
            Some(p) if p > 0 && p != current => current = p,
            _ => return false,
        }
    }
    false
}

/// When a process started, in nanoseconds since the Unix epoch.
pub(crate) fn start_ns(pid: u32) -> Option<u64> {
    // Field 22 (starttime, clock ticks since boot); fields after the command's ')' start at 3.
    let ticks = u64::try_from(field(pid, 19)?).ok()?;
    let boot_s: u64 = fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0)?;
    Some(boot_s * 1_000_000_000 + ticks * 1_000_000_000 / hz)
}

/// Whether `pid` runs, by `kill(pid, 0)`: `Some(true)` alive (or another user's),
/// `Some(false)` gone, `None` when it cannot be told. A process that has ended but is not
/// reaped yet (a zombie: a CLI killed a moment ago, its pane not yet marked dead) is gone:
/// `kill` still finds it, `/proc/<pid>/stat` says `Z` (or `X`).
pub fn alive(pid: u32) -> Option<bool> {
    let pid_t = libc::pid_t::try_from(pid).ok().filter(|p| *p > 0)?;
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid_t, 0) };
    if rc == 0 {
        let ended = stat_fields(pid)
            .and_then(|f| f.into_iter().next())
            .is_some_and(|state| state == "Z" || state == "X");
        return Some(!ended);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ESRCH) => Some(false),
        Some(libc::EPERM) => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_parent_a_group_and_a_name_and_is_in_its_parents_tree() {
        let me = std::process::id();
        let parent = parent(me).expect("a parent");
        assert!(in_process_tree(me, parent));
        assert!(!in_process_tree(parent, me));
        assert!(process_group(me).is_some());
        assert!(command_name(me).is_some_and(|n| !n.is_empty()));
        assert_eq!(alive(me), Some(true));
        assert!(start_ns(me).is_some());
    }

    #[test]
    fn a_killed_child_not_yet_reaped_is_gone() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert_eq!(alive(pid), Some(true));
        child.kill().unwrap();
        // Not waited for: a zombie until the wait below.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while stat_fields(pid).and_then(|f| f.into_iter().next()).as_deref() != Some("Z") {
            assert!(std::time::Instant::now() < deadline, "the child never became a zombie");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(alive(pid), Some(false));
        child.wait().unwrap();
        assert_eq!(alive(pid), Some(false));
    }

    #[test]
    fn a_reaped_child_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(alive(pid), Some(false));
        assert_eq!(parent(pid), None);
    }
}
