#!/usr/bin/env bash
# Build (or reuse) the User-Mode Linux kernel htwheel is tested in.
#
#   tools/uml/kernel.sh deps            install missing Debian packages
#   tools/uml/kernel.sh source          and unpack and patch the source only
#   tools/uml/kernel.sh config FLAVOUR  unpack and configure um-FLAVOUR only
#   tools/uml/kernel.sh build FLAVOUR   unpack, configure and build um-FLAVOUR
#   tools/uml/kernel.sh path FLAVOUR    print the build directory
#
# FLAVOUR is "debug" (KUnit, KASAN, lockdep, ...) or "bench" (no checkers).
# Everything lives under $HTWHEEL_CACHE (default ~/.cache/htwheel); nothing
# is unpacked, configured or built again unless its inputs changed.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

# What building the UML kernel and running the tests in it need.
deps() {
	htw_apt_install "linux-source-$HTW_KVER" bc flex bison libelf-dev libssl-dev \
		busybox-static rsync python3 gcc make libc6-dev xz-utils patch pkg-config \
		man-db groff-base sparse
}

unpack() {
	local tarball=/usr/src/linux-source-$HTW_KVER.tar.xz
	[ -f "$HTW_KSRC/.htw-unpacked" ] && return 0
	[ -f "$tarball" ] || htw_die "$tarball missing (apt-get install linux-source-$HTW_KVER)"
	htw_log "unpacking $tarball into $HTWHEEL_CACHE"
	rm -rf "$HTW_KSRC" "$HTW_KSRC.tmp"
	mkdir -p "$HTW_KSRC.tmp"
	tar -xJf "$tarball" -C "$HTW_KSRC.tmp" --strip-components=1
	touch "$HTW_KSRC.tmp/.htw-unpacked"
	mv "$HTW_KSRC.tmp" "$HTW_KSRC"
}

# Fixes the 6.12 UML needs on today's hosts; each applied once, in order.
patch_tree() {
	local p
	for p in "$HTW_TOP"/tools/uml/patches/*.patch; do
		[ -e "$p" ] || continue
		patch -d "$HTW_KSRC" -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1 && continue
		htw_log "patching the kernel source: ${p##*/}"
		patch -d "$HTW_KSRC" -p1 -s -f --no-backup-if-mismatch <"$p" >/dev/null ||
			htw_die "${p##*/} does not apply"
	done
}

# What the built kernel depends on besides the pristine source.
inputs_sum() {
	{ fragments "$1"; ls "$HTW_TOP"/tools/uml/patches/*.patch 2>/dev/null; } |
		xargs cat | sha256sum | cut -c1-16
}

fragments() {
	printf '%s\n' "$HTW_TOP/tests/config/base.config" "$HTW_TOP/tests/config/$1.config"
}

# Fail loudly when Kconfig silently dropped an option we asked for.
verify_config() {
	local obj=$1 frag line opt want have bad=0
	while read -r frag; do
		while read -r line; do
			case "$line" in
			CONFIG_*=*) opt=${line%%=*}; want=$line ;;
			"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; want= ;;
			*) continue ;;
			esac
			have=$(grep -E "^$opt=" "$obj/.config" || true)
			if [ "$have" != "$want" ]; then
				htw_log "config: wanted '${want:-$opt unset}', got '${have:-unset}'"
				bad=1
			fi
		done <"$frag"
	done < <(fragments "$2")
	[ $bad -eq 0 ] || htw_die "kernel config for $2 does not match tests/config"
}

configure() {
	local flavour=$1 obj sum
	obj=$(htw_kobj "$flavour")
	sum=$(fragments "$flavour" | xargs cat | sha256sum | cut -c1-16)
	if [ -f "$obj/.config" ] && [ "$(cat "$obj/.htw-config" 2>/dev/null)" = "$sum" ]; then
		return 0
	fi
	htw_log "configuring um-$flavour"
	mkdir -p "$obj"
	rm -f "$obj/.htw-built"
	make -s -C "$HTW_KSRC" O="$obj" ARCH=um tinyconfig >/dev/null
	# shellcheck disable=SC2046
	(cd "$obj" && "$HTW_KSRC/scripts/kconfig/merge_config.sh" -m -O "$obj" \
		"$obj/.config" $(fragments "$flavour") >/dev/null)
	make -s -C "$HTW_KSRC" O="$obj" ARCH=um olddefconfig >/dev/null
	verify_config "$obj" "$flavour"
	echo "$sum" >"$obj/.htw-config"
}

# Run make with its output in a log, printing one progress line every 30 s.
build() {
	local flavour=$1 obj log pid start rc
	obj=$(htw_kobj "$flavour")
	[ "$(cat "$obj/.htw-built" 2>/dev/null)" = "$(inputs_sum "$flavour")" ] &&
		[ -x "$obj/linux" ] && return 0
	log=$obj/build.log
	htw_log "building um-$flavour kernel (log: $log)"
	start=$(date +%s)
	make -C "$HTW_KSRC" O="$obj" ARCH=um -j"$HTW_JOBS" >"$log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		sleep 30 &
		wait $! || true
		kill -0 $pid 2>/dev/null || break
		htw_log "  um-$flavour: $(grep -c '^  CC' "$log" || true) files compiled, $(($(date +%s) - start)) s"
	done
	rc=0
	wait $pid || rc=$?
	if [ $rc -ne 0 ]; then
		grep -E 'error|Error' "$log" | head -n 20 >&2 || true
		tail -n 20 "$log" >&2
		htw_die "kernel build failed (exit $rc)"
	fi
	htw_log "um-$flavour kernel ready in $(($(date +%s) - start)) s"
	inputs_sum "$flavour" >"$obj/.htw-built"
}

case "${1:-}" in
deps) deps ;;
source)
	deps
	unpack
	patch_tree
	;;
build)
	[ -n "${2:-}" ] && [ -f "$HTW_TOP/tests/config/$2.config" ] || htw_die "usage: $0 build debug|bench"
	deps
	unpack
	patch_tree
	configure "$2"
	build "$2"
	;;
config)
	[ -n "${2:-}" ] && [ -f "$HTW_TOP/tests/config/$2.config" ] || htw_die "usage: $0 config debug|bench"
	deps
	unpack
	patch_tree
	configure "$2"
	;;
path) htw_kobj "${2:?flavour}" ;;
*) htw_die "usage: $0 deps | source | config FLAVOUR | build FLAVOUR | path FLAVOUR" ;;
esac
