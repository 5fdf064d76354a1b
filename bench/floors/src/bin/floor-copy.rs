//! The copy floor: the least any relay can do. Reads stdin to its end, writes it to a new temp
//! file in `$HOOKLINE_EVENTS_DIR` and renames that into place; no checks, no envelope, no
//! sequence number, no deadline. Exits 0 whatever happens, as a relay must.

use std::io::{Read, Write};
use std::path::PathBuf;

fn copy() -> std::io::Result<()> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    let dir = PathBuf::from(std::env::var_os("HOOKLINE_EVENTS_DIR").unwrap_or_default());
    let pid = std::process::id();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let temp = dir.join(format!(".tmp-{pid}"));
    std::fs::File::create_new(&temp)?.write_all(&input)?;
    std::fs::rename(&temp, dir.join(format!("{nanos:020}-{pid:010}.json")))
}

fn main() {
    let _ = copy();
}
