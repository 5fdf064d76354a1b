//! Small value types shared by profiles and policy: durations written as `"15m"` and CLI
//! versions such as `2.1.332`.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Parses `"500ms"`, `"30s"`, `"15m"`, `"2h"`, `"1d"` (one number, one unit).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| format!("{text:?} is not a duration like \"15m\""))?;
    let secs = match unit {
        "ms" => return Ok(Duration::from_millis(n)),
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        _ => return Err(format!("{text:?}: unit must be one of ms, s, m, h, d")),
    };
    Ok(Duration::from_secs(secs))
}

/// Formats a duration the way [`parse_duration`] reads it, in the largest exact unit.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let s = d.as_secs();
    for (unit, size) in [("d", 86400), ("h", 3600), ("m", 60)] {
        if s >= size && s.is_multiple_of(size) {
            return format!("{}{unit}", s / size);
        }
    }
    format!("{s}s")
}

/// A human-readable age: `4s`, `3m12s`, `2h05m`.
pub fn format_age(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A CLI version: dot-separated numbers (`2.1.332`); anything after the numbers (`-beta`) is
/// ignored for ordering.
#[derive(Debug, Clone)]
pub struct Version(Vec<u64>);

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Version {}

impl Version {
    /// Finds the first version-looking token in a CLI's `--version` output
    /// (`"2.1.332 (Claude Code)"`, `"codex-cli 0.171.0"`).
    pub fn find_in(text: &str) -> Option<Version> {
        text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
            .map(|t| t.trim_start_matches('v'))
            .filter(|t| t.contains('.'))
            .find_map(|t| t.parse().ok())
    }
}

impl FromStr for Version {
    type Err = String;
    fn from_str(text: &str) -> Result<Version, String> {
        let core = text.split(['-', '+']).next().unwrap_or("");
        let parts: Result<Vec<u64>, _> = core.split('.').map(str::parse).collect();
        match parts {
            Ok(parts) if !parts.is_empty() && parts.len() <= 4 => Ok(Version(parts)),
            _ => Err(format!("{text:?} is not a version like \"2.1.332\"")),
        }
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let len = self.0.len().max(other.0.len());
        (0..len)
            .map(|i| self.0.get(i).unwrap_or(&0).cmp(other.0.get(i).unwrap_or(&0)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_format_both_ways() {
        for (text, secs) in [("30s", 30), ("15m", 900), ("2h", 7200), ("1d", 86400)] {
            assert_eq!(parse_duration(text).unwrap(), Duration::from_secs(secs));
            assert_eq!(format_duration(Duration::from_secs(secs)), text);
        }
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("15").unwrap_err().contains("unit"));
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("1.5h").is_err());
    }

    #[test]
    fn versions_compare_numerically_and_are_found_in_version_output() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(v("2.1.332") > v("2.1.197"));
        assert!(v("2.1.99") < v("2.1.100"));
        assert_eq!(v("2.1"), v("2.1.0"));
        assert_eq!(v("1.0.0-beta"), v("1.0.0"));
        assert_eq!(Version::find_in("2.1.332 (Claude Code)"), Some(v("2.1.332")));
        assert_eq!(Version::find_in("codex-cli 0.171.0"), Some(v("0.171.0")));
        assert_eq!(Version::find_in("no version here"), None);
        assert!("x.y".parse::<Version>().is_err());
    }

    #[test]
    fn ages_read_well() {
        assert_eq!(format_age(Duration::from_secs(4)), "4s");
        assert_eq!(format_age(Duration::from_secs(192)), "3m12s");
        assert_eq!(format_age(Duration::from_secs(7500)), "2h05m");
    }
}
