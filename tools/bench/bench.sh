#!/usr/bin/env bash
# `make bench`: build the lean um-bench kernel (cached), htwheel.ko and
# htwheel_bench.ko for it, the user-space bench program; boot UML twice
# (real time: everything; time travel: the idle hour), then Debian's 6.1
# generic kernel under qemu with 2 CPUs (tools/qemu/bench.sh: the same
# benchmarks but the idle hour), and print the table.
#
# Environment: HTW_BENCH_N (user-space timers, default 100000),
# HTW_BENCH_SIZES (in-kernel pending counts, default 1000,10000,100000,1000000),
# HTW_UML_MEM (default 2G here), HTW_BENCH_SKIP_QEMU=1 (UML only).
# Results: build/bench/.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/uml/common.sh"
. "$top/tools/uml/mirror.sh"

out=$HTW_TOP/build/bench
mkdir -p "$out"
start=$(date +%s)

"$HTW_TOP/tools/uml/kernel.sh" build bench

# htwheel.ko and htwheel_bench.ko, built in a mirror of their sources so the
# work tree stays clean (tools/uml/module.sh does the same without the bench).
kobj=$(htw_kobj bench)
mobj=$(htw_modobj bench)-bench
htw_mirror_sources "$mobj/src-mirror"
htw_log "building htwheel.ko and htwheel_bench.ko for um-bench"
if ! make -s -C "$kobj" M="$mobj/src-mirror" ARCH=um HTW_BENCH=1 modules 2>&1 |
	sed "s|$mobj/src-mirror/||g" >&2; then
	htw_die "module build against um-bench failed"
fi
cp -p "$mobj/src-mirror/htwheel.ko" "$mobj/src-mirror/htwheel_bench.ko" "$mobj/"

make -s -C "$HTW_TOP" bench-progs

export HTW_UML_MEM=${HTW_UML_MEM:-2G}
export HTW_BOOT_TIMEOUT=${HTW_BOOT_TIMEOUT:-900}
n=${HTW_BENCH_N:-100000}
sizes=${HTW_BENCH_SIZES:-1000,10000,100000,1000000}

# boot.sh passes htw_mod=<module/um-bench>; our modules live next to it.
htw_log "booting um-bench (real time): in-kernel and user-space benchmarks"
"$HTW_TOP/tools/uml/boot.sh" bench "$HTW_TOP/tools/bench/stage-bench.sh" \
	"$out/run-rt" htw_set=rt htw_bench_mod="$mobj" htw_bench_n="$n" \
	htw_bench_sizes="$sizes" slab_nomerge
htw_log "booting um-bench (time-travel=inf-cpu): an idle hour"
"$HTW_TOP/tools/uml/boot.sh" bench "$HTW_TOP/tools/bench/stage-bench.sh" \
	"$out/run-tt" htw_set=tt htw_bench_mod="$mobj" time-travel=inf-cpu slab_nomerge

qemu=()
if [ "${HTW_BENCH_SKIP_QEMU:-0}" != 1 ]; then
	htw_log "booting Debian's 6.1 generic kernel under qemu (2 CPUs): the same benchmarks"
	qemu=(--qemu "$out/run-qemu")
	rm -rf "$out/run-qemu"
	if ! "$HTW_TOP/tools/qemu/bench.sh" "$out/run-qemu"; then
		mkdir -p "$out/run-qemu"
		echo "tools/qemu/bench.sh failed (see the log above)" >>"$out/run-qemu/errors"
	fi
fi

python3 "$HTW_TOP/tools/bench/report.py" --out "$out" \
	--elapsed "$(($(date +%s) - start))" "${qemu[@]}" "$out/run-rt" "$out/run-tt"
