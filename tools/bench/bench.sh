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
# ROWS (the rows run, comma-separated, default all of BENCH_ROWS below;
# `make bench ROWS=churn,idle-rearm`), SIZES (every row's sizes at once,
# comma-separated: `make bench SIZES=100000`), HTW_BENCH_CONN (conn's
# connection counts), HTW_BENCH_TABLE (the sizes of the shared timer
# table, churn, idle-rearm and awake, default 1000,100000,1000000),
# HTW_BENCH_KMOD (more htwheel_bench.ko parameters, comma-separated, say
# expiry=0,reps=3: for a quick look, not for the table),
# HTW_UML_MEM (default 2G here), HTW_BENCH_SKIP_QEMU=1 (UML only).
# Results: build/bench/; each run directory's host.txt holds the host's
# load and steal before and after its boot, the commit and the seed.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

# Every row, in the order a boot runs them: "kernel" and "storm" are
# htwheel_bench.ko (in kernel: operations and expiry at N pending; N
# timers due in one tick), idle-hour the time-travel boot (UML only), the others the
# commands of htwheel_ubench (Documentation/benchmark.rst has each).
BENCH_ROWS="kernel storm sched rearm deliver mem table churn idle-rearm awake conn idle idle-hour"
qemu_on=1
[ "${HTW_BENCH_SKIP_QEMU:-0}" = 1 ] && qemu_on=0

# What a row costs, in seconds, at 1,000, 100,000 and 1,000,000 in UML
# (um-bench) and under qemu (TCG, 2 CPUs), as measured on this machine by
# the "section seconds" of full runs (Documentation/benchmark.rst, "How
# long a run takes"); row_cost ROW SIZE uml|qemu interpolates linearly
# between them (and beyond 1,000,000).  A boot's timeout is the sum over
# its rows and sizes, doubled, plus two minutes for the boot itself.
row_cost() {
	local c
	case "$1:$3" in
	kernel:uml) c="24 29 110" ;;	kernel:qemu) c="30 40 220" ;;
	storm:uml) c="1 1 9" ;;	storm:qemu) c="1 1 12" ;;
	sched:uml) c="8 267 2670" ;;	sched:qemu) c="3 28 280" ;;
	rearm:uml) c="92 112 1120" ;;	rearm:qemu) c="30 36 360" ;;
	deliver:*) c="5 40 400" ;;
	mem:uml) c="5 174 1740" ;;	mem:qemu) c="3 13 130" ;;
	table:uml) c="9 19 88" ;;	table:qemu) c="18 23 70" ;;
	churn:uml) c="41 205 351" ;;	churn:qemu) c="40 52 61" ;;
	idle-rearm:uml) c="40 109 199" ;; idle-rearm:qemu) c="40 41 94" ;;
	awake:*) c="33 38 97" ;;
	conn:uml) c="32 97 97" ;;	conn:qemu) c="32 41 41" ;;
	*) c="30 30 30" ;;
	esac
	# shellcheck disable=SC2086 # three numbers
	set -- "$2" $c
	if [ "$1" -le 1000 ]; then
		echo "$2"
	elif [ "$1" -le 100000 ]; then
		echo $(($2 + ($3 - $2) * ($1 - 1000) / 99000))
	else
		echo $(($3 + ($4 - $3) * ($1 - 100000) / 900000))
	fi
}

# rows_plan ROWS N SIZES TABLE CONN STORM UML_N UML_SERVE: check ROWS (empty:
# all) against BENCH_ROWS and print "RT_ROWS UML_SECTIONS QEMU_SECTIONS TT
# UML_TIMEOUT QEMU_TIMEOUT": the real-time boots' rows in order
# (comma-separated), how many sections (a row at one size) each boot runs,
# whether the time-travel boot runs (0/1), and the two boots' timeouts in
# seconds.  An unknown row fails with the list.
rows_plan() {
	local want=${1:-$BENCH_ROWS} r rt="" tt=0 u=120 q=120 sz s ku=0 kq=0
	want=$(echo "$want" | tr , ' ')
	for r in $want; do
		case " $BENCH_ROWS " in *" $r "*) ;; *)
			htw_log "make bench: unknown row $r in ROWS=; valid: $BENCH_ROWS"
			return 1 ;;
		esac
	done
	for r in $BENCH_ROWS; do
		case " $want " in *" $r "*) ;; *) continue ;; esac
		if [ "$r" = idle-hour ]; then tt=1; continue; fi
		rt=${rt:+$rt,}$r
		case "$r" in
		kernel) sz=$3 ;; storm) sz=$6 ;; sched | rearm | deliver | mem) sz=$2 ;;
		conn) sz=${5:-1000,100000,1000000} ;; idle) sz=2 ;; *) sz=$4 ;;
		esac
		for s in $(echo "$sz" | tr , ' '); do
			kq=$((kq + 1))
			q=$((q + 2 * $(row_cost "$r" "$s" qemu)))
		done
		# UML's own sizes: uml_n (sched) and uml_serve.
		case "$r" in sched) sz=$7 ;; churn | idle-rearm | awake) sz=$8 ;; esac
		for s in $(echo "$sz" | tr , ' '); do
			ku=$((ku + 1))
			u=$((u + 2 * $(row_cost "$r" "$s" uml)))
		done
	done
	echo "${rt:--} $ku $kq $tt $u $q"
}

# follow_sections RUNDIR LABEL: while a boot runs, a progress line for each
# section its stage starts ("htw-section K/N ROW SIZE" on its console), numbered
# in the whole run from $done_sections of $total.
follow_sections() {
	local log=$1/console.log label=$2 seen=0 n line k
	while :; do
		n=$(grep -c 'htw-section ' "$log" 2>/dev/null) || n=0
		while [ "$seen" -lt "$n" ]; do
			seen=$((seen + 1))
			line=$(grep 'htw-section ' "$log" 2>/dev/null | sed -n "${seen}p" | tr -d '\r')
			# shellcheck disable=SC2086 # its words
			set -- ${line#*htw-section } "" "" ""
			k=${1%/*}
			[ -n "$k" ] || continue
			htw_progress bench $((done_sections + k)) "$total" "$2 $3, $label"
		done
		sleep 2
	done
}

out=$HTW_TOP/build/bench
mkdir -p "$out"
start=$(date +%s)

export HTW_UML_MEM=${HTW_UML_MEM:-2G}
n=${HTW_BENCH_N:-100000}
sizes=${HTW_BENCH_SIZES:-1000,10000,100000,1000000}
conn=${HTW_BENCH_CONN:-}
table=${HTW_BENCH_TABLE:-1000,100000,1000000}
storm=100000,1000000
# sched in UML: 10,000 timers.  Its per-timer system calls (timerfd,
# POSIX timers, one timer per ioctl) are ptrace round trips there, 30 us
# and more, flat in N: at 100,000 the row took 400 s of UML's boot, to
# measure ptrace (27 s at 10,000).  qemu runs it at N.
uml_n=${HTW_BENCH_N:-10000}
# churn, idle-rearm and awake in UML: 1,000 and 100,000.  At a million,
# filling and emptying each contender's million timers, through ptrace
# round trips and with UML's one CPU, made each run some 20 s for a 2 s
# window: the three rows would have taken 12 minutes of UML's 30.  qemu
# runs them at a million too.
uml_serve=${HTW_BENCH_TABLE:-1000,100000}
# SIZES= (make bench SIZES=100000) is every row's sizes at once.
if [ -n "${SIZES:-}" ]; then
	n=$SIZES sizes=$SIZES conn=$SIZES table=$SIZES storm=$SIZES uml_n=$SIZES uml_serve=$SIZES
fi
# A fresh seed each run, so that no one draw of delays decides a verdict;
# recorded, so that a run can be repeated.
seed=${HTW_BENCH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export HTW_BENCH_SEED=$seed

# The rows of real-time boots (UML and qemu) and the two boots' timeouts.
plan=$(rows_plan "${ROWS:-}" "$n" "$sizes" "$table" "$conn" "$storm" "$uml_n" "$uml_serve") ||
	exit 2
read -r rt_rows uml_sections qemu_sections tt uml_timeout qemu_timeout <<<"$plan"
[ "$rt_rows" != - ] || rt_rows=
total=$((uml_sections + qemu_on * qemu_sections + tt))


htw_progress bench 0 "$total" "building um-bench and the modules"
"$HTW_TOP/tools/uml/kernel.sh" build bench

# htwheel.ko and htwheel_bench.ko; the bench module drives htwheel.ko's test
# hooks, which only HTW_BENCH=1 builds export (Kbuild).
mobj=$(htw_modobj bench)-bench
htw_log "building htwheel.ko and htwheel_bench.ko for um-bench"
htw_build_modules "$(htw_kobj bench)" "$mobj" ARCH=um HTW_BENCH=1 ||
	htw_die "module build against um-bench failed"

# boot.sh empties the run directory: host.txt is written after the boot.
host_boot() {
	local run=$1 before
	shift
	before=$("$HTW_TOP/tools/bench/host-meta.sh" before)
	"$@"
	{ echo "$before"; "$HTW_TOP/tools/bench/host-meta.sh" after; } >"$run/host.txt"
}

runs=()
done_sections=0
if [ -n "$rt_rows" ]; then
	htw_log "booting um-bench (real time): rows $rt_rows, seed $seed, timeout ${uml_timeout}s"
	rm -f "$out/run-rt/console.log"	# not the last run's, to the follower
	follow_sections "$out/run-rt" uml &
	follower=$!
	HTW_BOOT_TIMEOUT=${HTW_BOOT_TIMEOUT:-$uml_timeout} host_boot "$out/run-rt" \
		"$HTW_TOP/tools/uml/boot.sh" bench "$HTW_TOP/tools/bench/stage-bench.sh" \
		"$out/run-rt" htw_set=rt htw_bench_mod="$mobj" htw_bench_n="$n" \
		htw_bench_sched_n="$uml_n" htw_bench_serve="$uml_serve" \
		htw_bench_sizes="$sizes" htw_bench_seed="$seed" htw_bench_rows="$rt_rows" \
		htw_bench_conn="$conn" htw_bench_table="$table" htw_bench_storm="$storm" \
		htw_bench_kmod="${HTW_BENCH_KMOD:-}" slab_nomerge
	kill "$follower" 2>/dev/null || true
	runs+=("$out/run-rt")
	done_sections=$uml_sections
fi
if [ "$tt" = 1 ]; then
	htw_progress bench $((done_sections + 1)) "$total" "idle-hour, uml time travel"
	HTW_BOOT_TIMEOUT=${HTW_BOOT_TIMEOUT:-600} host_boot "$out/run-tt" \
		"$HTW_TOP/tools/uml/boot.sh" bench "$HTW_TOP/tools/bench/stage-bench.sh" \
		"$out/run-tt" htw_set=tt htw_bench_mod="$mobj" htw_bench_seed="$seed" \
		time-travel=inf-cpu slab_nomerge
	runs+=("$out/run-tt")
	done_sections=$((done_sections + 1))
fi

if [ "$qemu_on" = 1 ] && [ -n "$rt_rows" ]; then
	htw_log "booting Debian's 6.1 generic kernel under qemu (2 CPUs): rows $rt_rows, timeout ${qemu_timeout}s"
	runs+=("$out/run-qemu")
	rm -rf "$out/run-qemu"
	mkdir -p "$out/run-qemu"
	follow_sections "$out/run-qemu" qemu &
	follower=$!
	if ! HTW_QEMU_TIMEOUT=${HTW_QEMU_TIMEOUT:-$qemu_timeout} HTW_QEMU_BENCH_N=$n \
		HTW_QEMU_BENCH_SIZES=$sizes HTW_BENCH_TABLE=$table HTW_BENCH_CONN=$conn \
		HTW_BENCH_STORM=$storm \
		HTW_BENCH_ROWS=$rt_rows "$HTW_TOP/tools/qemu/bench.sh" "$out/run-qemu"; then
		mkdir -p "$out/run-qemu"
		echo "tools/qemu/bench.sh failed (see the log above)" >>"$out/run-qemu/errors"
	fi
	kill "$follower" 2>/dev/null || true
fi

python3 "$HTW_TOP/tools/bench/report.py" --out "$out" \
	--elapsed "$(($(date +%s) - start))" "${runs[@]}"
