#!/bin/sh
# Links the relay statically: cargo runs every rustc of a workspace member through this script
# (`build.rustc-workspace-wrapper` in .cargo/config.toml), "$1" being rustc and the rest its
# arguments. For the executables of hookline-relay and hookline-bench-floors only (not their
# libraries, test harnesses or build scripts), on Linux with glibc, it adds
# `-C target-feature=+crt-static`: a static-pie executable, with glibc, the unwinder
# (libgcc_eh instead of libgcc_s) and everything else inside. The relay then starts without the
# dynamic loader: no libc.so.6 or libgcc_s.so.1 to map, no symbol lookups, far fewer
# relocations; the relay benchmark measures what that saves (bench/README.md).
#
# Why a wrapper: cargo has no stable per-package rustflags, and RUSTFLAGS or
# `[target] rustflags` would link `hookline` statically too, where glibc's name lookups
# (getaddrinfo for NATS, through NSS) need the shared libraries. The relay looks nothing up
# (no getpwuid, getaddrinfo, iconv or dlopen: docs/format.md#a-static-executable), so static
# glibc costs it nothing but size.
#
# Everything else passes through untouched; `cargo clippy` replaces this wrapper with its own
# (it sets RUSTC_WORKSPACE_WRAPPER), which is fine: checking links nothing. Without a static
# glibc (`libc.a`: Debian's libc6-dev, Fedora's glibc-static) the relay is linked dynamically,
# with a warning; it works the same, each call a little slower.
set -eu
rustc=$1
shift
case "${CARGO_PKG_NAME:-}" in
hookline-relay | hookline-bench-floors) ;;
*) exec "$rustc" "$@" ;;
esac
bin=false
target=
prev=
for arg in "$@"; do
    case "$prev" in
    --crate-type) [ "$arg" = bin ] && bin=true ;;
    --target) target=$arg ;;
    esac
    case "$arg" in
    --test | --print*) exec "$rustc" "$@" ;;
    esac
    prev=$arg
done
if [ "$bin" != true ] || [ -z "${CARGO_BIN_NAME:-}" ]; then
    exec "$rustc" "$@"
fi
case "$target" in
*-linux-gnu*) ;;
"") [ "$(uname -s)" = Linux ] || exec "$rustc" "$@" ;;
*) exec "$rustc" "$@" ;;
esac
# rustc links with `cc` unless told otherwise; without glibc's static archive the link would
# fail, so fall back to a dynamic executable and say so.
libc_a=$("${CC:-cc}" -print-file-name=libc.a 2>/dev/null || true)
case "$libc_a" in
/*) [ -e "$libc_a" ] && exec "$rustc" "$@" -C target-feature=+crt-static ;;
esac
echo "warning: $CARGO_BIN_NAME: no static glibc (libc.a) found: linked dynamically (install libc6-dev or glibc-static for a static relay, which starts faster)" >&2
exec "$rustc" "$@"
