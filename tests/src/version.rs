//! Claude Code version numbers (`2.1.332`), ordered numerically.

use std::fmt;
use std::str::FromStr;

/// A `major.minor.patch` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Patch number.
    pub patch: u32,
}

impl Version {
    /// Parses a literal known to be valid; panics otherwise (for constants in tables).
    pub fn lit(text: &str) -> Version {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl FromStr for Version {
    type Err = String;

    fn from_str(text: &str) -> Result<Version, String> {
        let bad = || format!("{text:?} is not a version like 2.1.332");
        let mut parts = text.trim().split('.').map(|p| p.parse::<u32>().map_err(|_| bad()));
        let version = Version {
            major: parts.next().ok_or_else(bad)??,
            minor: parts.next().ok_or_else(bad)??,
            patch: parts.next().ok_or_else(bad)??,
        };
        match parts.next() {
            None => Ok(version),
            Some(_) => Err(bad()),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_number_not_by_text() {
        assert!(Version::lit("2.1.197") < Version::lit("2.1.332"));
        assert!(Version::lit("2.1.99") < Version::lit("2.1.100"));
        assert_eq!(Version::lit("2.1.332").to_string(), "2.1.332");
    }

    #[test]
    fn anything_but_three_numbers_is_refused() {
        for text in ["", "2.1", "2.1.x", "2.1.3.4", "latest", "2.1.3-beta"] {
            assert!(text.parse::<Version>().is_err(), "{text}");
        }
    }
}
