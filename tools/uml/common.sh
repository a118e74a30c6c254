# shellcheck shell=bash
# Shared settings for the htwheel UML scripts; sourced, never run.

HTW_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HTWHEEL_CACHE=${HTWHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/htwheel}
HTW_KVER=6.12
HTW_KSRC=$HTWHEEL_CACHE/linux-$HTW_KVER
HTW_JOBS=${HTW_JOBS:-$(nproc)}

# Every package the harness needs, by the command or file that proves it is there.
HTW_APT_PKGS="linux-source-$HTW_KVER bc flex bison libelf-dev libssl-dev busybox-static rsync python3 gcc make libc6-dev xz-utils patch pkg-config man-db groff-base sparse"

htw_log() { printf '[htwheel] %s\n' "$*" >&2; }
htw_die() { printf '[htwheel] error: %s\n' "$*" >&2; exit 1; }

# The build directory of one kernel flavour ("debug" for tests, "bench" for benchmarks).
htw_kobj() { printf '%s/build/um-%s\n' "$HTWHEEL_CACHE" "$1"; }

# Where the modules built for one kernel flavour go (a copy of the sources).
htw_modobj() { printf '%s/module/um-%s\n' "$HTWHEEL_CACHE" "$1"; }
