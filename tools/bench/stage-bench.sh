#!/bin/busybox sh
# Stage run inside UML (and qemu) by tools/bench/bench.sh.  $htw_set: "rt"
# runs the in-kernel and user-space benchmarks, "tt" (time travel) the
# idle hour.  Every result is a text file in $HTW_OUT in the sample format
# of Documentation/benchmark.rst, for tools/bench/report.py.
#
# $htw_bench_seed seeds both producers: htwheel_bench.ko's seed= and
# htwheel_ubench's environment HTW_BENCH_SEED.  $htw_bench_rows lists the
# rows run (comma-separated; empty: all of them): "kernel" (htwheel_bench.ko
# at each pending count of $htw_bench_sizes) and htwheel_ubench's
# commands, sched, rearm, deliver and mem at each N of $htw_bench_n, conn
# at each of its own connection counts, $htw_bench_conn (empty: 1000,
# 100000, 1000000), and idle (a 2 s window).  sched runs at
# $htw_bench_sched_n, churn, idle-rearm and awake at $htw_bench_serve
# when they are set (UML's own sizes: tools/bench/bench.sh).
# table runs the shared timer table beside the peers of sched, rearm,
# deliver and mem at each of the sizes $htw_bench_table (empty: N); conn
# has its table variant among its own.  churn (steady churn: random
# cancel and arm at now+T), idle-rearm (a random timer moved to now+T)
# and awake (expiries to a loop awake anyway) run at the same sizes.
# $htw_bench_kmod: more htwheel_bench.ko parameters, comma-separated
# (say expiry=0,reps=3).
out=$HTW_OUT
ub=$htw_bin/bench/htwheel_ubench
seed=${htw_bench_seed:-0}
fail() { echo "$*" >>"$out/errors"; }
meta() { printf 'meta\t%s\t%s\n' "$1" "$2" >>"$out/stage.txt"; }

hres() { sed -n 's/^ *\.resolution: \([0-9]*\) nsecs$/\1/p' /proc/timer_list 2>/dev/null | head -n 1; }

uname -r >"$out/uname.txt"
cat /proc/cmdline >"$out/cmdline.txt"
meta kernel "$(uname -r)"
meta "stage set" "$htw_set"

# hrtimers switch to high resolution on a tick after boot; under time
# travel the boot takes no virtual time, so none has come yet and the
# module would refuse its default 1 ms tick (below the low-resolution
# jiffy).  A second's sleep is free there and long done elsewhere.
i=0
while [ "$(hres)" != 1 ] && [ $i -lt 5 ]; do
	sleep 1
	i=$((i + 1))
done
meta "hrtimer resolution ns" "$(hres)"

insmod "$htw_bench_mod/htwheel.ko" || { fail "insmod htwheel.ko failed"; exit 1; }
export HTW_BENCH_SEED="$seed"

if [ "$htw_set" = tt ]; then
	"$ub" idle 3599 >"$out/idle-hour.txt" 2>>"$out/errors" || fail "idle hour failed"
	rmmod htwheel
	exit 0
fi

# A million-slot table (about 120 MB) beside a million timers read()
# (the table's expiry section), and a million connections' table, need
# more than the default per-user limits of a guest of 1 or 2 GiB (1/16 of
# the RAM for wheel memory; 1/8 at 64 B a timer).  The bench is root's and
# alone here: half the RAM for each, said in the metadata.
lim=/sys/module/htwheel/parameters
ram=$(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
echo $((ram * 512)) >"$lim/max_user_wheel_bytes" || fail "raising max_user_wheel_bytes failed"
echo $((ram * 512 / 64)) >"$lim/max_user_timers" || fail "raising max_user_timers failed"
meta "max_user_wheel_bytes" "$(cat "$lim/max_user_wheel_bytes") (half the RAM; the default is 1/16)"
meta "max_user_timers" "$(cat "$lim/max_user_timers") (half the RAM at 64 B a timer; the default is 1/8)"

# The rows, in order, each at each of its sizes a section: its results go
# to the row's file, its length to stage.txt ("section seconds ROW N"),
# and, under qemu, the files leave the guest as it ends (/htw/ship.sh), so
# that a boot killed later loses only the section it was in.
# "htw-section K/N ROW SIZE" on the console is the host's progress line
# (tools/bench/bench.sh).
rows=${htw_bench_rows:-kernel,storm,sched,rearm,deliver,mem,table,churn,idle-rearm,awake,conn,idle}
ship() { [ -f /htw/ship.sh ] && sh /htw/ship.sh "$@"; true; }

# sizes_of ROW: the sizes a row runs at, one a line.
sizes_of() {
	case "$1" in
	kernel) echo "$htw_bench_sizes" ;;
	storm) echo "${htw_bench_storm:-100000,1000000}" ;;
	conn) echo "${htw_bench_conn:-1000,100000,1000000}" ;;
	churn | idle-rearm | awake) echo "${htw_bench_serve:-${htw_bench_table:-$htw_bench_n}}" ;;
	table) echo "${htw_bench_table:-$htw_bench_n}" ;;
	sched) echo "${htw_bench_sched_n:-$htw_bench_n}" ;;
	idle) echo 2 ;;
	*) echo "$htw_bench_n" ;;
	esac | tr , '\n'
}

# kbench PARAMETER...: htwheel_bench.ko loaded with these parameters.
kbench() {
	# shellcheck disable=SC2046 # one word per parameter
	if insmod "$htw_bench_mod/htwheel_bench.ko" "$@" seed="$seed" \
		$(echo "${htw_bench_kmod:-}" | tr , ' '); then
		cat /sys/kernel/debug/htwheel_bench >>"$out/kbench.txt"
		rmmod htwheel_bench
	else
		fail "insmod htwheel_bench.ko $* failed"
	fi
}

# section ROW SIZE: one row at one size.  The in-kernel benchmark is
# htwheel_bench.ko loaded for that size: "kernel" its operation and
# expiry sections at N pending, "storm" its N timers due in one tick; the
# others are htwheel_ubench's command of the row's name (idle's size is
# its window, in seconds).
section() {
	case "$1" in
	kernel) kbench sizes="$2" storm= ; return ;;
	storm) kbench sizes= storm="$2" ; return ;;
	esac
	f=$out/ubench-$1.txt
	[ "$1" = idle ] && f=$out/idle-rt.txt
	"$ub" "$1" "$2" "$out" >>"$f" 2>>"$out/errors" || fail "htwheel_ubench $1 $2 failed"
}

nsec=0
for r in $(echo "$rows" | tr , ' '); do
	nsec=$((nsec + $(sizes_of "$r" | grep -c .)))
done
cd "$TMPDIR" || exit 1
k=0
for r in $(echo "$rows" | tr , ' '); do
	for z in $(sizes_of "$r"); do
		k=$((k + 1))
		echo "htw-section $k/$nsec $r $z"
		t0=$(date +%s)
		section "$r" "$z"
		meta "section seconds $r $z" "$(($(date +%s) - t0))"
		ship stage.txt $(cd "$out" && ls kbench.txt "ubench-$r.txt" idle-rt.txt errors 2>/dev/null)
	done
done

rmmod htwheel || fail "rmmod htwheel failed"
dmesg >"$out/dmesg.txt"
exit 0
