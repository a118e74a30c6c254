#!/usr/bin/env bash
# Build the initramfs of a qemu test boot.
#
#   tools/qemu/initramfs.sh MODDIR OUT.cpio.gz STAGE LIST...
#
# Holds busybox-static as /bin/busybox, tools/qemu/init.sh as /init, STAGE
# as /htw/stage.sh, MODDIR/*.ko in /htw/mod, and each LIST (a file make
# wrote, build/GROUP.list) with every statically linked program it names,
# all at their host paths (so that tests which find their programs through
# the build directory work as they do in UML).  Only what make listed goes
# in, never whatever else build/ holds.  Dynamically linked programs and
# scripts stay out: they are listed on stderr.  tools/qemu/check.sh passes
# tools/qemu/stage.sh with build/userprogs.list and build/selftests.list,
# tools/qemu/bench.sh tools/bench/stage-bench.sh with build/bench-progs.list.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

[ $# -ge 4 ] || htw_die "usage: $0 MODDIR OUT.cpio.gz STAGE LIST..."
moddir=$1 out=$2 stage_script=$3
shift 3
[ -f "$stage_script" ] || htw_die "no stage script $stage_script"
lists=() progs=()
for l in "$@"; do
	case "$l" in /*) ;; *) htw_die "program list $l is not an absolute path" ;; esac
	[ -f "$l" ] || htw_die "no program list $l: make writes it"
	lists+=("$l")
	while read -r p; do
		[ -n "$p" ] && progs+=("$p")
	done <"$l"
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

for l in "${lists[@]}"; do
	mkdir -p "$stage$(dirname "$l")"
	cp "$l" "$stage$l"
done
skipped=()
for f in "${progs[@]}"; do
	[ -f "$f" ] && [ -x "$f" ] || htw_die "$f, listed by make, is missing"
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
