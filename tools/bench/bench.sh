#!/usr/bin/env bash
# `make bench`, once make has built the user-space bench program: build the
# lean um-bench kernel (cached), htwheel.ko and htwheel_bench.ko for it
# (tools/harness.sh: W=1 and sparse, any warning fails); boot UML twice
# (real time: everything; time travel: the idle hour), then Debian's 6.1
# generic kernel under qemu with 2 CPUs (tools/qemu/bench.sh: the same
# benchmarks but the idle hour), and print the table.
#
# Environment: HTW_BENCH_N (user-space timers, default 100000),
# HTW_BENCH_SIZES (in-kernel pending counts, default 1000,10000,100000,1000000),
# HTW_BENCH_SEED (the delays' seed, default a fresh random one),
# HTW_BENCH_UBENCH (htwheel_ubench commands, default all: sched,rearm,
# deliver,mem,table,churn,idle-rearm,awake,conn), HTW_BENCH_CONN (conn's
# connection counts), HTW_BENCH_TABLE (the sizes of the shared timer
# table, churn, idle-rearm and awake, default 1000,100000,1000000),
# HTW_BENCH_KMOD (more htwheel_bench.ko parameters, comma-separated, say
# expiry=0,reps=3: for a quick look, not for the table),
# HTW_UML_MEM (default 2G here), HTW_BENCH_SKIP_QEMU=1 (UML only).
# Results: build/bench/; each run directory's host.txt holds the host's
# load and steal before and after its boot, the commit and the seed.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

out=$HTW_TOP/build/bench
mkdir -p "$out"
start=$(date +%s)

"$HTW_TOP/tools/uml/kernel.sh" build bench

# htwheel.ko and htwheel_bench.ko; the bench module drives htwheel.ko's test
# hooks, which only HTW_BENCH=1 builds export (Kbuild).
mobj=$(htw_modobj bench)-bench
htw_log "building htwheel.ko and htwheel_bench.ko for um-bench"
htw_build_modules "$(htw_kobj bench)" "$mobj" ARCH=um HTW_BENCH=1 ||
	htw_die "module build against um-bench failed"

export HTW_UML_MEM=${HTW_UML_MEM:-2G}
export HTW_BOOT_TIMEOUT=${HTW_BOOT_TIMEOUT:-2400}
n=${HTW_BENCH_N:-100000}
sizes=${HTW_BENCH_SIZES:-1000,10000,100000,1000000}
ubench=${HTW_BENCH_UBENCH:-}
conn=${HTW_BENCH_CONN:-}
table=${HTW_BENCH_TABLE:-1000,100000,1000000}
# A fresh seed each run, so that no one draw of delays decides a verdict;
# recorded, so that a run can be repeated.
seed=${HTW_BENCH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export HTW_BENCH_SEED=$seed

# boot.sh empties the run directory: host.txt is written after the boot.
host_boot() {
	local run=$1 before
	shift
	before=$("$HTW_TOP/tools/bench/host-meta.sh" before)
	"$@"
	{ echo "$before"; "$HTW_TOP/tools/bench/host-meta.sh" after; } >"$run/host.txt"
}

# boot.sh passes htw_mod=<module/um-bench>; our modules live next to it.
htw_log "booting um-bench (real time): in-kernel and user-space benchmarks, seed $seed"
host_boot "$out/run-rt" "$HTW_TOP/tools/uml/boot.sh" bench "$HTW_TOP/tools/bench/stage-bench.sh" \
	"$out/run-rt" htw_set=rt htw_bench_mod="$mobj" htw_bench_n="$n" \
	htw_bench_sizes="$sizes" htw_bench_seed="$seed" htw_bench_ubench="$ubench" htw_bench_conn="$conn" \
	htw_bench_table="$table" \
	htw_bench_kmod="${HTW_BENCH_KMOD:-}" slab_nomerge
htw_log "booting um-bench (time-travel=inf-cpu): an idle hour"
host_boot "$out/run-tt" "$HTW_TOP/tools/uml/boot.sh" bench "$HTW_TOP/tools/bench/stage-bench.sh" \
	"$out/run-tt" htw_set=tt htw_bench_mod="$mobj" htw_bench_seed="$seed" \
	time-travel=inf-cpu slab_nomerge

runs=("$out/run-rt" "$out/run-tt")
if [ "${HTW_BENCH_SKIP_QEMU:-0}" != 1 ]; then
	htw_log "booting Debian's 6.1 generic kernel under qemu (2 CPUs): the same benchmarks"
	runs+=("$out/run-qemu")
	rm -rf "$out/run-qemu"
	if ! "$HTW_TOP/tools/qemu/bench.sh" "$out/run-qemu"; then
		mkdir -p "$out/run-qemu"
		echo "tools/qemu/bench.sh failed (see the log above)" >>"$out/run-qemu/errors"
	fi
fi

python3 "$HTW_TOP/tools/bench/report.py" --out "$out" \
	--elapsed "$(($(date +%s) - start))" "${runs[@]}"
