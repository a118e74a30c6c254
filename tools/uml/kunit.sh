#!/usr/bin/env bash
# The KUnit suites the kernel's way: htwheel's sources placed in a kernel
# tree as drivers/misc/htwheel (its Kconfig sourced from drivers/misc), and
# `tools/testing/kunit/kunit.py run --kunitconfig=drivers/misc/htwheel`,
# which builds UML with the project's .kunitconfig and runs every suite
# built in.  The results land in RUNDIR in the layout of the other boots
# (kunit/SUITE.ktap, console.log, kernel.rc, stage.rc) for results.py, as
# the boots "kunit-rt" and "kunit-tt".
#
#   tools/uml/kunit.sh rt|tt RUNDIR [FILTER_GLOB]
#
# Both build the .kunitconfig beside the sources (every suite but the long
# ones) with tests/kunit/tt.kunitconfig (the long ones, htwheel_tt_*:
# HTWHEEL_KUNIT_TT_TEST and UML's time travel), one kernel for both; the
# long suites carry KUnit's speed attribute very_slow.  rt boots in real
# time and runs the others (--filter 'speed>very_slow'), tt boots with
# time-travel=inf-cpu, where hours pass in seconds, and runs the long ones.
# FILTER_GLOB is kunit.py's own filter_glob.  kunit.py's UML defaults turn
# on PCI over virtio, whose init WARNs in 6.12 when no device ID is
# configured; results.py fails a boot on any WARNING, so it is turned off.
#
# The tree is a copy of the cached 6.12 source made of hard links
# ($HTWHEEL_CACHE/kunit-tree): the files this script writes there are new
# files, never the shared ones.  kunit.py builds in
# $HTWHEEL_CACHE/build/kunit.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

set=$1 run=$2 filter=${3:-}
tree=$HTWHEEL_CACHE/kunit-tree
dir=drivers/misc/htwheel
case "$set" in
rt) args=("--filter=speed>very_slow") ;;
tt) args=(--kernel_args=time-travel=inf-cpu --filter=speed=very_slow) ;;
*) htw_die "usage: $0 rt|tt RUNDIR [FILTER_GLOB]" ;;
esac

"$HTW_TOP/tools/uml/kernel.sh" source
htw_apt_install python3 rsync
if [ ! -d "$tree" ]; then
	htw_log "kunit.py: a hard-linked copy of $HTW_KSRC in $tree"
	rm -rf "$tree.tmp"
	cp -al "$HTW_KSRC" "$tree.tmp"
	mv "$tree.tmp" "$tree"
fi

# htw_tree_append FILE LINE: add LINE to FILE of the tree once, writing a
# new file (FILE is a hard link to the shared source tree).
htw_tree_append() {
	local f=$tree/$1
	grep -qxF "$2" "$f" && return 0
	{ cat "$f"; echo "$2"; } >"$f.new"
	mv "$f.new" "$f"
}

mkdir -p "$tree/$dir"
rsync -rlpc --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	--include 'Kconfig' --include 'Kbuild' --include '.kunitconfig' \
	--include 'src/***' --include 'include/***' \
	--include 'tests/' --include 'tests/kunit/***' \
	--exclude '*' "$HTW_TOP/" "$tree/$dir/"
# drivers/misc/Kconfig ends its menu last: the source line goes before it.
if ! grep -qF "source \"$dir/Kconfig\"" "$tree/drivers/misc/Kconfig"; then
	sed "\$s|^endmenu\$|source \"$dir/Kconfig\"\nendmenu|" "$tree/drivers/misc/Kconfig" \
		>"$tree/drivers/misc/Kconfig.new"
	mv "$tree/drivers/misc/Kconfig.new" "$tree/drivers/misc/Kconfig"
fi
htw_tree_append drivers/misc/Makefile "obj-\$(CONFIG_HTWHEEL) += htwheel/"

rm -rf "$run"
mkdir -p "$run/kunit"
rc=0
(cd "$tree" && python3 tools/testing/kunit/kunit.py run "${args[@]}" --arch=um \
	--kunitconfig="$dir" --kunitconfig="$dir/tests/kunit/tt.kunitconfig" \
	--kconfig_add="# CONFIG_UML_PCI_OVER_VIRTIO is not set" \
	--build_dir="$HTWHEEL_CACHE/build/kunit" --jobs="$HTW_JOBS" \
	--timeout="${HTW_KUNIT_TIMEOUT:-900}" \
	--raw_output=all ${filter:+"$filter"}) >"$run/console.log" 2>&1 || rc=$?
# kunit.py's own exit status says whether a test failed: results.py judges
# the tests; kernel.rc is only whether a kernel ran and finished.
grep -q '^KTAP version\|^TAP version' "$run/console.log" && echo 0 >"$run/kernel.rc" ||
	echo "$rc" >"$run/kernel.rc"
echo "$rc" >"$run/kunit.rc"
echo 0 >"$run/stage.rc"
# One file per suite, as the harness's boots copy them out of debugfs.
python3 "$HTW_TOP/tools/uml/ktap_split.py" "$run/console.log" "$run/kunit"
