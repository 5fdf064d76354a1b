//! Small value types shared by profiles and policy: durations written as `"15m"` and CLI
//! versions such as `2.1.332`.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Parses `"500ms"`, `"30s"`, `"15m"`, `"2h"`, `"1d"`, or a sum of them such as `"1h30m"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let bad =
        || format!("{text:?} is not a duration like \"15m\" or \"1h30m\" (units ms, s, m, h, d)");
    let mut rest = text;
    let mut total = Duration::ZERO;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let part = match &rest[..unit_len] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n * 60),
            "h" => Duration::from_secs(n * 3600),
            "d" => Duration::from_secs(n * 86400),
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += part;
    }
    Ok(total)
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

/// A time in nanoseconds since the Unix epoch as RFC 3339 UTC with milliseconds
/// (`2026-11-30T15:51:45.123Z`).
pub fn rfc3339(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let millis = ns / 1_000_000 % 1000;
    let (y, m, d) = civil_from_days((secs / 86400) as i64);
    let rem = secs % 86400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Parses an RFC 3339 UTC time as the CLIs write it in transcripts
/// (`2026-12-01T09:04:15.801Z`, fractional seconds optional, `Z` or `+00:00`) into
/// nanoseconds since the Unix epoch. `None` for anything else, or a time before 1970.
pub(crate) fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut frac_ns = 0u64;
    if let Some(f) = rest.strip_prefix('.') {
        let digits = f.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for (i, c) in f[..digits].bytes().take(9).enumerate() {
            frac_ns += u64::from(c - b'0') * 10u64.pow(8 - i as u32);
        }
        rest = &f[digits..];
    }
    if !matches!(rest, "Z" | "z" | "+00:00" | "-00:00") {
        return None;
    }
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86400 + h * 3600 + mi * 60 + s;
    u64::try_from(secs).ok().map(|s| s * 1_000_000_000 + frac_ns)
}

/// (year, month, day) → days since 1970-01-01, the inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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
            // `GitHub Copilot CLI 1.0.102.` ends its sentence with a period.
            .map(|t| t.trim_start_matches('v').trim_end_matches('.'))
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

    #[test]
    fn rfc3339_times_parse_back_to_what_rfc3339_writes() {
        for ns in
            [0, 1_796_048_674_123_000_000, 1_000_000_000_000_000_000, 4_102_444_800_000_000_000]
        {
            assert_eq!(parse_rfc3339(&rfc3339(ns)), Some(ns), "{ns}");
        }
        assert_eq!(
            parse_rfc3339("2026-12-01T09:04:15Z"),
            parse_rfc3339("2026-12-01T09:04:15.000+00:00")
        );
        for bad in [
            "",
            "2026-12-01",
            "2026-13-01T00:00:00Z",
            "2026-12-01T09:04:15+02:00",
            "2026-12-01T09:04:15.Z",
            "x026-12-01T09:04:15Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }
    use super::*;

    #[test]
    fn durations_parse_and_format_both_ways() {
        for (text, secs) in [("30s", 30), ("15m", 900), ("2h", 7200), ("1d", 86400)] {
            assert_eq!(parse_duration(text).unwrap(), Duration::from_secs(secs));
            assert_eq!(format_duration(Duration::from_secs(secs)), text);
        }
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("15").unwrap_err().contains("units"));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("31m1s").unwrap(), Duration::from_secs(1861));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5x").is_err());
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
        assert_eq!(Version::find_in("GitHub Copilot CLI 1.0.102."), Some(v("1.0.102")));
        assert_eq!(Version::find_in("no version here"), None);
        assert!("x.y".parse::<Version>().is_err());
    }

    #[test]
    fn times_format_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000_000_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_796_054_339_906_112_270), "2026-11-30T15:58:59.906Z");
    }

    #[test]
    fn ages_read_well() {
        assert_eq!(format_age(Duration::from_secs(4)), "4s");
        assert_eq!(format_age(Duration::from_secs(192)), "3m12s");
        assert_eq!(format_age(Duration::from_secs(7500)), "2h05m");
    }
}
