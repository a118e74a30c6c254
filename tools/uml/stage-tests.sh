#!/bin/busybox sh
# Stage run inside UML by `make check`: load the module, run the
# user-space tests and then the KUnit suites, unload, look for leaks.
#
# The test programs are those make built, as it listed them in
# $htw_bin/selftests.list: a program whose source is gone may linger in
# build/, but it is not listed and never runs.  $htw_set selects the boot:
# "rt" (real time: htwheel_kunit.ko and every listed *_test except
# *_tt_test) or "tt" (UML time travel: htwheel_kunit_tt.ko and the
# *_tt_test programs).  $htw_partial=1 (`make check T=... K=...`) runs
# only the programs of $htw_only (comma-separated) and the KUnit suites
# that match $htw_kunit, KUnit's own filter_glob ("suite",
# "suite.test_glob"; "-" for none).
out=$HTW_OUT
tests=$(grep '_test$' "$htw_bin/selftests.list")
mkdir -p "$out/kunit" "$out/selftests"
fail() { echo "$*" >>"$out/errors"; }

leaks=/sys/kernel/debug/kmemleak
[ -w $leaks ] && echo clear >$leaks

# The loops below pass over a missing KUnit module or a test program that
# cannot run: say so here, or the boot would look clean without them.
want_kunit=htwheel_kunit
[ "$htw_set" = tt ] && want_kunit=htwheel_kunit_tt
[ -n "$htw_partial" ] || [ -f "$htw_mod/$want_kunit.ko" ] ||
	fail "no KUnit module $htw_mod/$want_kunit.ko"
[ -n "$tests" ] || fail "no test programs in $htw_bin/selftests.list"
for t in $tests; do
	[ -x "$t" ] || fail "test program $t is missing or not executable"
done

insmod "$htw_mod/htwheel.ko" || { fail "insmod htwheel.ko failed"; exit 1; }
# htwheel_load_test reloads this very file with other parameters.
export HTW_MODULE=$htw_mod/htwheel.ko

for t in $tests; do
	[ -x "$t" ] || continue
	n=${t##*/}
	set=rt
	case "$n" in *_tt_test) set=tt ;; esac
	[ "$set" = "$htw_set" ] || continue
	[ -z "$htw_partial" ] || case ",$htw_only," in *",$n,"*) ;; *) continue ;; esac
	echo "htwheel: running $n"
	(cd "$TMPDIR" && "$t") >"$out/selftests/$n.tap" 2>&1
	echo $? >"$out/selftests/$n.rc"
done

# The KUnit suites after the user-space tests: UML has no KASAN_VMALLOC,
# so once a module is unloaded its globals' shadow stays poisoned, and a
# large vmalloc() of a later test that lands there (the wheels of 65,536
# slots of htwheel_limits_test do) is reported as global-out-of-bounds.
kunit_mod=htwheel_kunit
[ "$htw_set" = tt ] && kunit_mod=htwheel_kunit_tt
# run_kunit [FILTER]: load the KUnit module (its suites run while it
# loads, those FILTER matches when one is given), keep the results.
run_kunit() {
	if [ -n "$1" ]; then
		# No newline: the parameter would keep it, and match nothing.
		printf %s "$1" >/sys/module/kunit/parameters/filter_glob ||
			{ fail "cannot set kunit.filter_glob to $1"; return; }
	fi
	insmod "$htw_mod/$kunit_mod.ko" || fail "insmod $kunit_mod.ko failed"
	for d in /sys/kernel/debug/kunit/*/; do
		[ -f "$d/results" ] || continue
		s=${d%/}
		cp "$d/results" "$out/kunit/${s##*/}.ktap"
	done
	rmmod "$kunit_mod" || fail "rmmod $kunit_mod failed"
}
if [ -f "$htw_mod/$kunit_mod.ko" ]; then
	if [ -z "$htw_partial" ]; then
		run_kunit ""
	else
		# One load only: see the KASAN note above.
		[ "$htw_kunit" = - ] || run_kunit "$htw_kunit"
	fi
fi

rmmod htwheel || fail "rmmod htwheel failed"

if [ -w $leaks ]; then
	# kmemleak ignores objects younger than 5 s.
	sleep 6
	echo scan >$leaks
	cat $leaks >"$out/kmemleak.txt"
fi
dmesg >"$out/dmesg.txt"
# For results.py, which checkers were still on at the end: UML's KASAN
# prints nothing at boot, and lockdep turns itself off at its first report.
{
	grep -q ' kasan_report$' /proc/kallsyms && echo kasan
	grep -q 'debug_locks: *1$' /proc/lockdep_stats 2>/dev/null && echo lockdep
} >"$out/checkers.txt"
exit 0
