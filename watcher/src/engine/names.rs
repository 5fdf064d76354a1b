//! How a person's name for a session is read: exactly for every act, by prefix only to help a
//! person find a session in a read-only command, and with the known names it resembles when
//! none has it.

use crate::protocol::{Found, LookupAnswer};
use crate::state::{Match, Tracker};

/// How many similar names a lookup that finds none lists.
const SIMILAR_MAX: usize = 5;

/// What `query` names among the tracker's sessions: the one prefix rule
/// ([`Tracker::lookup`]), and for a name no session has, the known names it resembles.
pub(crate) fn lookup(tracker: &Tracker, query: &str) -> LookupAnswer {
    match tracker.lookup(query) {
        Ok(Some(found)) => LookupAnswer {
            found: match found.by {
                Match::Exact => Found::Exact,
                Match::Prefix => Found::Prefix,
            },
            name: Some(found.name().to_owned()),
            candidates: match found.by {
                Match::Exact => Vec::new(),
                Match::Prefix => vec![found.session.key.describe()],
            },
            similar: Vec::new(),
        },
        Err(crate::Error::AmbiguousSession { candidates, .. }) => {
            LookupAnswer { found: Found::Ambiguous, name: None, candidates, similar: Vec::new() }
        }
        Ok(None) | Err(_) => LookupAnswer {
            found: Found::None,
            name: None,
            candidates: Vec::new(),
            similar: similar(tracker, query),
        },
    }
}

/// The known sessions whose id or tag resembles `query` (a typo, letters swapped, a
/// different case), closest first, as people read them.
pub(crate) fn similar(tracker: &Tracker, query: &str) -> Vec<String> {
    let query = query.strip_suffix('…').unwrap_or(query).to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, String)> = tracker
        .snapshots(0)
        .into_iter()
        .filter_map(|s| {
            let key = crate::canonical::SessionKey {
                cli: s.cli.clone(),
                session_id: s.session_id.clone(),
                tag: s.tag.clone(),
                host: s.host.clone(),
            };
            let score = [&s.session_id, &s.tag]
                .into_iter()
                .flatten()
                .filter_map(|name| resemblance(&query, &name.to_lowercase()))
                .min()?;
            Some((score, key.describe()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(SIMILAR_MAX).map(|(_, name)| name).collect()
}

/// How far `name` is from `query` when it resembles it at all: their edit distance, within a
/// third of the query's length (at least 2); or a shared start or containment of at least
/// three characters.
fn resemblance(query: &str, name: &str) -> Option<usize> {
    let distance = edit_distance(query, name);
    let allowed = (query.chars().count() / 3).max(2);
    if distance <= allowed {
        return Some(distance);
    }
    let shared = query.chars().zip(name.chars()).take_while(|(a, b)| a == b).count();
    if shared >= 3 || (query.len() >= 3 && name.contains(query)) {
        return Some(allowed + 1 + distance);
    }
    None
}

/// The Damerau–Levenshtein distance (adjacent letters swapped count one) between two
/// strings, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best =
                (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_a_typo_and_a_shared_start_resemble_and_a_stranger_does_not() {
        assert_eq!(edit_distance("tsak-42", "task-42"), 1);
        assert_eq!(edit_distance("task-1", "task-10"), 1);
        assert!(resemblance("tsak-42", "task-42").is_some());
        assert!(resemblance("task", "task-42-long-name").is_some());
        assert!(resemblance("build-7", "task-42").is_none());
    }
}
