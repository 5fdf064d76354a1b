#!/usr/bin/env bash
# Runs each fuzz target briefly, for CI: FUZZ_SECONDS (default 30) per target with cargo-fuzz on
# a nightly toolchain when both are installed; otherwise the same target bodies over the corpus
# and generated mutants of it, as a stable test (fuzz/tests/corpus.rs). Fails on any broken
# check; cargo-fuzz leaves the failing input in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-30}"
targets=(relay_input reader_envelope)

if cargo fuzz --version >/dev/null 2>&1 && cargo +nightly --version >/dev/null 2>&1; then
  for target in "${targets[@]}"; do
    # New inputs go to a scratch corpus; the committed seeds are only read.
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    echo "fuzzing $target for ${seconds}s"
    cargo +nightly fuzz run "$target" "$scratch" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" -max_len=65536 -print_final_stats=1
    rm -rf "$scratch"
    trap - EXIT
  done
else
  echo "cargo-fuzz or a nightly toolchain is not installed: running the fuzz targets' bodies" \
    "over fuzz/corpus and its mutants on stable instead" >&2
  # In the workspace's target directory, unoptimised: it reuses what the tests built (34 s
  # instead of 81 s for a release build of its own), and the corpus runs in seconds either way.
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(pwd)/target}" \
    cargo test --manifest-path fuzz/Cargo.toml --locked --test corpus
fi
