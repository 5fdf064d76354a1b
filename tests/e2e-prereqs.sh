#!/usr/bin/env bash
# Prerequisites of the end-to-end suites against the real Claude Code, Codex CLI, Gemini CLI,
# OpenCode, Copilot CLI, Pi, Kilo Code, Qwen Code and Factory Droid (tests/tests/e2e_claude,
# e2e_codex, e2e_gemini, e2e_opencode, e2e_copilot, e2e_pi, e2e_kilo, e2e_qwen, e2e_droid): tmux, Node.js and npm, git, each installed with apt-get when missing. The CLIs themselves are installed by the suites from the npm registry into
# their cache on first use (tests/src/claude_install.rs, tests/src/npm_install.rs).
#
# Usage: bash tests/e2e-prereqs.sh   (idempotent; root or sudo is needed only to install)
# Exit status: 0 when everything is there, 1 otherwise, with a message saying what is missing.
set -euo pipefail

say() { printf 'e2e-prereqs: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        say "need root (or sudo) to run: $*"
        return 1
    fi
}

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        say "$* missing and apt-get is not available: install by hand"
        return 1
    fi
    say "installing $* with apt-get"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

command -v tmux >/dev/null 2>&1 || apt_install tmux
say "tmux: $(tmux -V)"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
say "node: $(node --version), npm: $(npm --version)"
if [ "$node_major" -lt 18 ]; then
    say "node $(node --version) is too old for npm's install of @anthropic-ai/claude-code (need >= 18)"
    exit 1
fi
# Gemini CLI runs on Node (engines: node >= 20); Codex's npm wrapper needs >= 16 and execs a
# native binary.
if [ "$node_major" -lt 20 ]; then
    say "node $(node --version) is too old for @google/gemini-cli (need >= 20)"
    exit 1
fi

# `codex exec` runs only inside a git repository: the Codex suite runs `git init` in its project.
command -v git >/dev/null 2>&1 || apt_install git
say "git: $(git --version)"

# The fleet tests (cli/tests/integration/fleet.rs) start nats-server themselves, on loopback.
nats=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$nats" ] || apt_install nats-server
nats=$(command -v nats-server || echo /usr/sbin/nats-server)
say "nats-server: $("$nats" --version)"

# The web view's tests (cli/tests/integration/web.rs) drive Debian's headless chromium
# through chromedriver (about 30 s to install on a fresh machine).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    apt_install chromium chromium-driver
fi
say "chromium: $(chromium --version 2>/dev/null || echo missing)"
# Claude Code 2.1.x ships a native binary and does not run on Node; versions newer than 2.1.197
# declare engines >= 22, which npm only warns about.

registry=$(npm config get registry)
say "npm registry: $registry (needed the first time a version is installed into the cache)"

# Say before the tests start what the end-to-end suites will download, how much, and where: the
# first run is a large, quiet download (sizes measured as in tests/README.md).
cache="${HOOKLINE_E2E_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.e2e-cache}"
missing=()
total=0
for pin in claude-code/2.1.332:384 claude-code/2.1.197:235 codex/0.171.0:424 gemini/0.61.0:100 \
           opencode/1.18.33:417 copilot/1.0.102:423 pi/0.73.1:204 kilo/7.7.7:292 \
           qwen/0.24.4:144 droid/0.225.2:243; do
    dir=${pin%%:*} mb=${pin##*:}
    if [ ! -e "$cache/$dir/.hookline-install-complete" ]; then
        missing+=("$dir (~${mb} MB)")
        total=$((total + mb))
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    say "pinned CLIs: all in $cache, nothing to download"
else
    say "the end-to-end suites will install from npm into $cache: ${missing[*]}; about ${total} MB, plus npm's own cache in ~/.npm; this takes minutes with little output"
fi
