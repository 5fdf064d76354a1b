//! The fuzz targets' bodies on stable: over the committed corpus, and over mutants of it made
//! by a small deterministic generator (`FUZZ_MUTANTS` per seed, default 400), so that CI runs the
//! same checks when cargo-fuzz or a nightly toolchain is not available.

use std::path::{Path, PathBuf};

/// The relay's test generator (xorshift), so that a failure reproduces.
#[path = "../../relay/src/xorshift.rs"]
mod xorshift;

use xorshift::Rng;

/// Pieces that push the parsers to their edges.
const TOKENS: &[&str] = &[
    r#""\ud800""#,
    r"\ud83d",
    r"\ude00",
    "1e999999",
    "-1e400",
    "99999999999999999999999",
    "[[[[[[[[",
    "]]]]",
    "{\"k\":",
    "}",
    "\"",
    "\\",
    ",",
    ":",
    "null",
    "\u{feff}",
    "\n",
    "é",
    "\"hook_event_name\":\"Stop\"",
    "\"payload\":",
    "\u{0}",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            0 if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                bytes[i] ^= 1 << rng.below(8);
            }
            1 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 => bytes.truncate(at),
            3 => {
                let end = (at + rng.below(64)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, copy);
            }
            _ => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let times = if rng.below(8) == 0 { 1 + rng.below(200) } else { 1 };
                bytes.splice(at..at, token.repeat(times));
            }
        }
    }
    bytes
}

fn seeds(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target);
    let mut seeds: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 5, "{} seeds in {}", seeds.len(), dir.display());
    seeds
}

fn run(target: &str, body: fn(&[u8])) {
    let mutants: usize =
        std::env::var("FUZZ_MUTANTS").ok().and_then(|n| n.parse().ok()).unwrap_or(400);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ran = 0;
    for (path, seed) in seeds(target) {
        body(&seed);
        for i in 0..mutants {
            let mutant = mutate(&mut rng, &seed);
            let result = std::panic::catch_unwind(|| body(&mutant));
            if result.is_err() {
                let out = std::env::temp_dir().join(format!("hookline-fuzz-{target}-failure"));
                std::fs::write(&out, &mutant).unwrap();
                panic!("mutant {i} of {} failed; input saved to {}", path.display(), out.display());
            }
            ran += 1;
        }
    }
    assert!(ran >= mutants, "{ran} inputs");
}

#[test]
fn the_relay_input_body_holds_over_the_corpus_and_its_mutants() {
    run("relay_input", hookline_fuzz::relay_input);
}

#[test]
fn the_reader_envelope_body_holds_over_the_corpus_and_its_mutants() {
    run("reader_envelope", hookline_fuzz::reader_envelope);
}
