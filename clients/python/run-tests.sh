#!/bin/sh
# Tests the Python client against the real binaries: builds them, installs the package and
# pytest into a fresh venv under target/, runs clients/python/tests. Exits non-zero on any
# failure, including no tests collected.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
python=${PYTHON:-python3}

cargo build --locked -p hookline-cli -p hookline-relay -p hookline-tests --bins --manifest-path "$repo/Cargo.toml"

venv="$target/python-client-venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$here" pytest

# From outside the source tree, so the tests import the installed package.
cd "$target"
HOOKLINE_BIN=${HOOKLINE_BIN:-$target/debug/hookline} \
HOOKLINE_RELAY_BIN=${HOOKLINE_RELAY_BIN:-$target/debug/hookline-relay} \
HOOKLINE_FAKE_AGENT_BIN=${HOOKLINE_FAKE_AGENT_BIN:-$target/debug/fake_agent} \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q "$here/tests" "$@"
