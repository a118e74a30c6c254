#!/usr/bin/env bash
# Build the initramfs of a qemu test boot.
#
#   tools/qemu/initramfs.sh MODDIR OUT.cpio.gz [STAGE [DIR...]]
#
# Holds busybox-static as /bin/busybox, tools/qemu/init.sh as /init,
# STAGE (default tools/qemu/stage.sh) as /htw/stage.sh, MODDIR/*.ko in
# /htw/mod, and every statically linked program of build/, build/tests/
# and each further DIR (an absolute path) at its host path (so that tests
# which find their programs through the build directory work as they do
# in UML).  Dynamically linked programs and scripts stay out: they are
# listed on stderr.  tools/qemu/bench.sh passes tools/bench/stage-bench.sh
# and build/bench.
set -euo pipefail
. "$(dirname "$0")/common.sh"

moddir=$1 out=$2
stage_script=${3:-$HTW_TOP/tools/qemu/stage.sh}
shift $(($# < 3 ? $# : 3))
[ -f "$stage_script" ] || htw_die "no stage script $stage_script"
progs=("$HTW_TOP"/build/* "$HTW_TOP"/build/tests/*)
for d in "$@"; do
	case "$d" in /*) ;; *) htw_die "program directory $d is not an absolute path" ;; esac
	progs+=("$d"/*)
done
bb=/bin/busybox
# grep -q would quit at the first match and, with pipefail, a busybox killed
# by SIGPIPE would read as "not busybox-static": let grep read it all.
[ -x $bb ] && $bb --list | grep -x poweroff >/dev/null || htw_die "$bb is not busybox-static"
stage=$(mktemp -d)
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,out,htw/mod}
cp $bb "$stage/bin/busybox"
cp "$HTW_TOP/tools/qemu/init.sh" "$stage/init"
cp "$stage_script" "$stage/htw/stage.sh"
cp "$HTW_TOP/tools/qemu/ship.sh" "$stage/htw/ship.sh"
cp "$moddir"/*.ko "$stage/htw/mod/"
# The console must exist before /init runs (devtmpfs is mounted by init).
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true

is_static_elf() {
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ] || return 1
	! readelf -lW "$1" 2>/dev/null | grep -q 'program interpreter'
}

skipped=()
for f in "${progs[@]}"; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	if is_static_elf "$f"; then
		mkdir -p "$stage$(dirname "$f")"
		cp "$f" "$stage$f"
	else
		skipped+=("${f#"$HTW_TOP"/}")
	fi
done
[ ${#skipped[@]} -eq 0 ] || htw_log "not in the initramfs (not static ELF): ${skipped[*]}"

(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
