//! A unified diff of two texts, for `--dry-run`.
//!
//! Lines common to both ends are trimmed first, then the middle is compared with a plain
//! longest-common-subsequence table: hookline's edits are small and local, and a middle too
//! large for the table is shown as one replaced block.

const CONTEXT: usize = 3;
const MAX_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

/// The unified diff from `old` to `new`, with `---`/`+++` headers naming `label`; empty when
/// the texts are equal.
pub fn unified(label: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_ops(&a, &b);
    let mut out = format!("--- {label}\n+++ {label} (hookline)\n");
    // Positions (old line, new line) before each op.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0, 0);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Add => j += 1,
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Same).collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (i0, j0) = pos[start];
        let dels = ops[start..end].iter().filter(|o| **o != Op::Add).count();
        let adds = ops[start..end].iter().filter(|o| **o != Op::Del).count();
        let first = |line: usize, count: usize| if count == 0 { line } else { line + 1 };
        out.push_str(&format!("@@ -{},{dels} +{},{adds} @@\n", first(i0, dels), first(j0, adds)));
        for (op, &(i, j)) in ops[start..end].iter().zip(&pos[start..end]) {
            let (sign, line) = match op {
                Op::Same => (' ', a[i]),
                Op::Del => ('-', a[i]),
                Op::Add => ('+', b[j]),
            };
            out.push(sign);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

fn diff_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix =
        a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops = vec![Op::Same; prefix];
    if (ma.len() + 1) * (mb.len() + 1) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Del, ma.len()));
        ops.extend(std::iter::repeat_n(Op::Add, mb.len()));
    } else {
        // lcs[i][j]: length of the LCS of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                ops.push(Op::Same);
                i += 1;
                j += 1;
            } else if i < ma.len() && (j == mb.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])
            {
                ops.push(Op::Del);
                i += 1;
            } else {
                ops.push(Op::Add);
                j += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, suffix));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_insertion_is_shown_with_three_lines_of_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nd\nX\ne\nf\ng\n";
        assert_eq!(
            unified("s.json", old, new),
            "--- s.json\n+++ s.json (hookline)\n@@ -2,6 +2,7 @@\n b\n c\n d\n+X\n e\n f\n g\n"
        );
    }

    #[test]
    fn a_new_file_and_a_missing_final_newline_are_marked() {
        assert_eq!(unified("s", "", "{}\n"), "--- s\n+++ s (hookline)\n@@ -0,0 +1,1 @@\n+{}\n");
        assert_eq!(
            unified("s", "a", "b"),
            "--- s\n+++ s (hookline)\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn distant_changes_make_separate_hunks_and_equal_texts_none() {
        let old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let new: String = (0..30)
            .map(|i| match i {
                3 => "three\n".to_owned(),
                25 => "twenty-five\n".to_owned(),
                i => format!("{i}\n"),
            })
            .collect();
        let diff = unified("f", &old, &new);
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert_eq!(unified("f", &old, &old), "");
    }
}
