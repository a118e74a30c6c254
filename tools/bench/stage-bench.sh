#!/bin/busybox sh
# Stage run inside UML by tools/bench/bench.sh.  $htw_set: "rt" runs the
# in-kernel and user-space benchmarks, "tt" (time travel) the idle hour.
# Every result is a text file in $HTW_OUT for tools/bench/report.py.
out=$HTW_OUT
ub=$htw_bin/bench/htwheel_ubench
fail() { echo "$*" >>"$out/errors"; }

uname -r >"$out/uname.txt"
cat /proc/cmdline >"$out/cmdline.txt"
insmod "$htw_bench_mod/htwheel.ko" || { fail "insmod htwheel.ko failed"; exit 1; }

if [ "$htw_set" = tt ]; then
	"$ub" idle 3599 >"$out/idle-hour.txt" 2>>"$out/errors" || fail "idle hour failed"
	rmmod htwheel
	exit 0
fi

echo "htwheel: in-kernel bench (sizes $htw_bench_sizes)"
if insmod "$htw_bench_mod/htwheel_bench.ko" sizes="$htw_bench_sizes"; then
	cat /sys/kernel/debug/htwheel_bench >"$out/kbench.txt"
	rmmod htwheel_bench
else
	fail "insmod htwheel_bench.ko failed"
fi

cd "$TMPDIR" || exit 1
for c in sched deliver mem; do
	echo "htwheel: user-space bench: $c"
	"$ub" $c "$htw_bench_n" "$out" >"$out/ubench-$c.txt" 2>>"$out/errors" ||
		fail "htwheel_ubench $c failed"
done
echo "htwheel: user-space bench: idle"
"$ub" idle 5 >"$out/idle-rt.txt" 2>>"$out/errors" || fail "idle failed"

rmmod htwheel || fail "rmmod htwheel failed"
dmesg >"$out/dmesg.txt"
exit 0
