#!/usr/bin/env bash
# The test harness's shared shell library, sourced by the scripts of
# tools/uml, tools/qemu and tools/bench: where things are cached, how host
# packages get installed and how the modules are built, the same for every
# kernel.  Those directories keep only what differs (boot, init, stage).
#
# Run rather than sourced, it serves the Makefile:
#
#   tools/harness.sh paths              print HTWHEEL_CACHE and HTW_KSRC
#   tools/harness.sh apt-install PKG... install the packages that are missing

HTW_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# CI caches this directory: keep the default where it is.
HTWHEEL_CACHE=${HTWHEEL_CACHE:-$HOME/.cache/htwheel}
export HTWHEEL_CACHE
HTW_KVER=6.12
HTW_KSRC=$HTWHEEL_CACHE/linux-$HTW_KVER
HTW_DEBIAN=$HTWHEEL_CACHE/debian
HTW_JOBS=${HTW_JOBS:-$(nproc)}

htw_log() { printf '[htwheel] %s\n' "$*" >&2; }
htw_die() { printf '[htwheel] error: %s\n' "$*" >&2; exit 1; }

# Progress of a long run, one line a step: "check [2/5] UML, real time,
# 01:23", with the time since HTW_T0 (seconds since the epoch; the first
# call sets it, and children inherit it).  htw_progress WHAT STEP TOTAL TEXT.
htw_progress() {
	: "${HTW_T0:=$(date +%s)}"
	export HTW_T0
	local s=$(($(date +%s) - HTW_T0))
	printf '%s [%s/%s] %s, %02d:%02d\n' "$1" "$2" "$3" "$4" $((s / 60)) $((s % 60)) >&2
}

htw_sudo() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Install with apt whichever of the named Debian packages are not installed.
htw_apt_install() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	htw_log "installing with apt: ${missing[*]}"
	htw_sudo apt-get update -qq >/dev/null || true
	DEBIAN_FRONTEND=noninteractive htw_sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null || htw_die "apt-get install ${missing[*]} failed"
}

# ---- the cache's layout ----

# The build directory of one UML kernel flavour ("debug" for tests, "bench").
htw_kobj() { printf '%s/build/um-%s\n' "$HTWHEEL_CACHE" "$1"; }

# Where the modules are built: HTW_MODULE_CACHE moves them out of the
# cache, so that two work trees can build side by side.
htw_modcache() { printf '%s\n' "${HTW_MODULE_CACHE:-$HTWHEEL_CACHE/module}"; }

# Where the modules built for one UML kernel flavour go.
htw_modobj() { printf '%s/um-%s\n' "$(htw_modcache)" "$1"; }

# ---- Debian's kernels under qemu ----

# The kernels tested, by the suffix of their package names:
# linux-image-<abi>-<flavour>, linux-headers-<abi>-<flavour>.
HTW_QEMU_FLAVOURS=${HTW_QEMU_FLAVOURS:-"amd64 rt-amd64"}
HTW_QEMU_CPUS=${HTW_QEMU_CPUS:-2}
HTW_QEMU_MEM=${HTW_QEMU_MEM:-1024}
# What the qemu boots need on the host, besides what building modules does.
# shellcheck disable=SC2034 # read by the qemu scripts that source this
HTW_QEMU_APT_PKGS="qemu-system-x86 busybox-static cpio python3"

# Where one Debian kernel (ABI, package version) is unpacked.
htw_debroot() { printf '%s/%s_%s\n' "$HTW_DEBIAN" "$1" "$2"; }

# ---- building the modules ----

# htw_mirror_sources DIR: copy what kbuild needs to build the modules
# (Kbuild, src/, include/, the KUnit suites and the bench module) into DIR,
# keeping the objects already built there, so that each kernel gets its own
# objects and the work tree stays clean.
htw_mirror_sources() {
	mkdir -p "$1"
	# By content, and without the sources' times: a copied file gets a new
	# time, so kbuild rebuilds it even when objects of another tree's
	# version of it (another work tree with the same cache) look newer.
	rsync -rlpc --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
		--include 'Kbuild' --include 'src/***' --include 'include/***' \
		--include 'tests/' --include 'tests/kunit/***' \
		--include 'tools/' --include 'tools/bench/' --include 'tools/bench/kmod/***' \
		--exclude '*' "$HTW_TOP/" "$1/"
}

# The compiler the kernel of build tree KDIR was built with, which its
# modules must be built with too ("gcc-12" for Debian 6.1, "gcc" for UML):
# a Debian package of the same name.
htw_kernel_cc() {
	local cc
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$1/.config" 2>/dev/null)
	[ -n "$cc" ] || { htw_log "$1/.config names no compiler"; return 1; }
	echo "$cc"
}

# htw_build_modules KDIR OUT [MAKE-ARGUMENT...]: build htwheel.ko, and the
# KUnit and benchmark modules when KDIR's config or the arguments ask for
# them, against the kernel build tree KDIR, in a mirror of the sources
# under OUT; copy the modules to OUT.  Every file goes through gcc's W=1
# and sparse (C=1), and any warning fails the build as an error does, for
# every kernel alike.  Debian 6.1's headers, generic and RT, are themselves
# clean under both, so nothing is filtered.  The build's output is in
# OUT/build.log, its warnings and errors in OUT/warnings; on failure both
# are also printed.  Then tools/check-layers.sh checks that src/ calls
# and includes only downwards.
htw_build_modules() {
	local kdir=$1 out=$2 rc=0 cc
	shift 2
	cc=$(htw_kernel_cc "$kdir") || return 1
	htw_apt_install make rsync sparse "$cc"
	htw_mirror_sources "$out/src-mirror"
	rm -f "$out"/*.ko
	make -C "$kdir" M="$out/src-mirror" W=1 C=1 "$@" modules >"$out/build.log" 2>&1 || rc=$?
	sed "s|$out/src-mirror/||g" "$out/build.log" |
		grep -E 'warning:|WARNING:|error:' >"$out/warnings" || true
	if [ $rc -ne 0 ] || [ -s "$out/warnings" ]; then
		sed "s|$out/src-mirror/||g" "$out/build.log" >&2
		htw_log "module build against $kdir: exit $rc, $(wc -l <"$out/warnings") warnings and errors"
		return 1
	fi
	find "$out/src-mirror" -maxdepth 1 -name '*.ko' -exec cp -p {} "$out/" \;
	[ -f "$out/htwheel.ko" ] || { htw_log "no htwheel.ko built against $kdir"; return 1; }
	"$HTW_TOP/tools/check-layers.sh" "$out/src-mirror/src" "$out/src-mirror/src" ||
		{ htw_log "src/ calls or includes upwards (tools/check-layers.sh)"; return 1; }
}

# ---- what the shipped module holds ----

# htw_shipped_faults KO: print one line for each thing a shipped htwheel.ko
# must not hold, whatever the kernel it was built for: an exported symbol
# (only test builds export: VISIBLE_IF_KUNIT, EXPORT_SYMBOL_IF_KUNIT in
# src/htw_compat.h), a hook into KUnit (a static stub,
# KUNIT_STATIC_STUB_REDIRECT, reads kunit_running and calls KUnit), KUnit
# suites.  Prints nothing for a clean module.
htw_shipped_faults() {
	local ko=$1
	nm "$ko" | sed -n 's/.* __ksymtab_\(.*\)/htwheel.ko exports \1 (only test builds may)/p'
	nm -u "$ko" | sed -n 's/.* U \(.*kunit.*\)/htwheel.ko hooks into KUnit: uses \1/p'
	readelf -S -W "$ko" | grep -q '\.kunit_test_suites' &&
		echo "htwheel.ko has KUnit suites (.kunit_test_suites)"
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	case "${1:-}" in
	paths) printf '%s %s\n' "$HTWHEEL_CACHE" "$HTW_KSRC" ;;
	apt-install) shift; htw_apt_install "$@" ;;
	*) htw_die "usage: $0 paths | apt-install PACKAGE..." ;;
	esac
fi
