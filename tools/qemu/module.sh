#!/usr/bin/env bash
# Build htwheel.ko against one unpacked Debian header tree.
#
#   tools/qemu/module.sh KDIR OUTDIR
#
# The sources are mirrored into OUTDIR/src-mirror (like tools/uml/module.sh)
# so the work tree stays clean; the modules end up in OUTDIR.  The build's
# output goes to OUTDIR/build.log; every compiler or modpost warning is
# also written to OUTDIR/warnings (empty when clean).  Exits non-zero only
# when no htwheel.ko came out.
#
# With HTW_BENCH=1 in the environment the in-kernel benchmark module,
# htwheel_bench.ko (tools/bench/kmod), is built too (tools/qemu/bench.sh).
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$HTW_TOP/tools/uml/mirror.sh"

kdir=$1 out=$2
mkdir -p "$out"
htw_mirror_sources "$out/src-mirror"
rm -f "$out"/*.ko
rc=0
# Debian's headers name their compiler (gcc-12); W=1 as for UML.
bench=()
[ -n "${HTW_BENCH:-}" ] && bench=(HTW_BENCH=1)
make -C "$kdir" M="$out/src-mirror" W=1 "${bench[@]}" modules >"$out/build.log" 2>&1 || rc=$?
sed "s|$out/src-mirror/||g" "$out/build.log" |
	grep -E 'warning:|WARNING:|error:' >"$out/warnings" || true
if [ $rc -ne 0 ]; then
	tail -n 30 "$out/build.log" >&2
	htw_die "module build against $kdir failed"
fi
find "$out/src-mirror" -maxdepth 1 -name '*.ko' -exec cp -p {} "$out/" \;
[ -f "$out/htwheel.ko" ] || htw_die "no htwheel.ko built against $kdir"
# The shipped module exports nothing: the wheel's API and the test hooks are
# for the KUnit suites and the benchmark only (src/htw_compat.h).
if [ -z "${HTW_BENCH:-}" ]; then
	nm "$out/htwheel.ko" | sed -n 's/.* __ksymtab_\(.*\)/exports \1 (only test builds may)/p' >>"$out/warnings"
fi
