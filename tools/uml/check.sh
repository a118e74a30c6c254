#!/usr/bin/env bash
# `make check`: build the programs, test the harness itself on the host,
# build the debug UML kernel and the modules if they are missing or out of
# date, boot UML twice (real time, then time travel for long delays), boot
# Debian's 6.1 generic and PREEMPT_RT kernels under qemu with 2 CPUs, and
# report every test.  HTW_SKIP_QEMU=1 leaves the qemu part out.  The
# README's "How `make check` works" has the steps in order.
#
# T and K (from `make check T=... K=...`) select: T a comma-separated list
# of test programs, harness tests and KUnit suites (suite.test_glob, as
# kunit.py filters), K of kernels (host, uml, generic, rt).
# tools/uml/selection.py turns them into a plan, a line per boot; only the
# boots of the plan run, each only its tests, and results.py judges only
# those ("partial: N passed, N failed").  Without T and K, everything.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

runs=$HTW_TOP/build/runs
mkdir -p "$runs"
plan=$runs/plan.txt
T=${T:-} K=${K:-}
partial=
# A selection that fails (an unknown name) changes nothing in build/runs.
if [ -n "$T$K" ]; then
	partial=1
	python3 "$HTW_TOP/tools/uml/selection.py" plan "$T" "$K" >"$plan.$$" ||
		{ rm -f "$plan.$$"; exit 2; }
	mv "$plan.$$" "$plan"
else
	rm -f "$plan"
fi

# selected BOOT: does this run boot BOOT? Then $progs and $kunit are its
# selection ("-" for none; empty in a full run), $kunit_glob the one
# kunit.filter_glob that runs its suites.
progs= kunit= kunit_glob=
selected() {
	progs= kunit= kunit_glob=
	[ -z "$partial" ] && return 0
	local line
	line=$(awk -v b="$1" '$1 == b' "$plan")
	[ -n "$line" ] || return 1
	read -r _ progs kunit kunit_glob <<<"$line"
}
# The qemu boots' run directories are named after the kernel's ABI.
selected_flavour() {
	[ -z "$partial" ] && return 0
	grep -qE "^debian-[^ ]*-$1 " "$plan" || return 1
	progs=$(grep -E "^debian-[^ ]*-$1 " "$plan" | head -1 | cut -d' ' -f2)
}

flavours=()
if [ -z "${HTW_SKIP_QEMU:-}" ]; then
	for f in $HTW_QEMU_FLAVOURS; do
		selected_flavour "$f" && flavours+=("$f")
	done
fi
want_host= want_rt= want_tt= want_kunit=()
selected host && want_host=1
selected check-rt && want_rt=1
selected check-tt && want_tt=1
for s in rt tt; do
	selected "kunit-$s" && want_kunit+=("$s")
done
# Only the Debian packages' tests and the qemu boots need `make deb`.
need_deb=
if [ ${#flavours[@]} -gt 0 ] || [ -z "$partial" ] ||
	grep -q 'libhtwheel_deb' "$plan" 2>/dev/null; then
	need_deb=1
fi

steps=("programs")
[ -n "$want_host" ] && steps+=("harness tests")
[ -n "$want_host$want_rt$want_tt" ] && steps+=("UML kernel and modules")
[ -n "$want_rt$want_tt" ] && steps+=("UML boots")
for s in "${want_kunit[@]}"; do steps+=("kunit.py $s"); done
for f in "${flavours[@]}"; do steps+=("qemu $f"); done
steps+=("verdict")
step=0
next_step() {
	step=$((step + 1))
	htw_progress check "$step" "${#steps[@]}" "$1"
}

next_step "building the programs${need_deb:+ and the Debian packages}"
if [ -n "$need_deb" ]; then
	"${MAKE:-make}" -C "$HTW_TOP" --no-print-directory userprogs selftests deb
else
	"${MAKE:-make}" -C "$HTW_TOP" --no-print-directory userprogs selftests HTW_NO_DEB=1
fi

boots=()
if [ -n "$want_host" ]; then
	next_step "the harness's own tests (boot host)"
	boots+=("$runs/host")
fi
# results.py judges every boot below; first check that it still catches
# each fault it must, that the bench's report.py still reads and judges
# its samples right, that the bench's churn driver keeps its books (built
# natively with libev and libuv), and that `make help` still tells every
# target and knob.  Their TAP is the boot "host" of tests/manifest.txt.
host_test() {
	local t=$1 rc=0
	shift
	case ",$progs," in ,,) ;; *",$t,"*) ;; *) return 0 ;; esac
	htw_log "testing the harness: $t"
	"$@" >"$runs/host/selftests/$t.tap" 2>&1 || rc=$?
	echo "$rc" >"$runs/host/selftests/$t.rc"
}
if [ -n "$want_host" ]; then
	selected host
	rm -rf "$runs/host"
	mkdir -p "$runs/host/selftests"
	for t in results_test selection_test bench_report_test churn_driver_test make_help_test; do
		host_test $t python3 "$HTW_TOP/tests/harness/$t.py"
	done
fi

if [ -n "$want_host$want_rt$want_tt" ]; then
	next_step "the debug UML kernel and the modules"
	"$HTW_TOP/tools/uml/kernel.sh" build debug
	"$HTW_TOP/tools/uml/module.sh" debug
fi
# The module DKMS would build for this kernel, which has KUnit, is still
# the shipped one (no hooks, no exports); also boot "host".
if [ -n "$want_host" ]; then
	selected host
	host_test shipped_module_test "$HTW_TOP/tests/harness/shipped_module_test.sh" debug
fi

# uml_boot SET: one UML boot of the stage, with its selection.
uml_boot() {
	local set=$1
	shift
	selected "check-$set"
	"$HTW_TOP/tools/uml/boot.sh" debug "$HTW_TOP/tools/uml/stage-tests.sh" \
		"$runs/check-$set" htw_set="$set" slab_nomerge \
		${partial:+htw_partial=1 htw_only=$progs htw_kunit=$kunit_glob} "$@"
}
if [ -n "$want_rt$want_tt" ]; then
	next_step "UML: ${want_rt:+KUnit suites and device tests (real time)}${want_rt:+${want_tt:+, and }}${want_tt:+long-delay suites (time travel)}"
fi
# The two UML boots are independent and each uses one CPU: run them side by
# side.  The time-travel boot is mostly the million-timer suite; in a full
# run it always runs, so that tests/manifest.txt can miss it if its suites
# do not report.
tt_pid=
if [ -n "$want_tt" ]; then
	uml_boot tt time-travel=inf-cpu &
	tt_pid=$!
	boots+=("$runs/check-tt")
fi
if [ -n "$want_rt" ]; then
	uml_boot rt
	boots+=("$runs/check-rt")
fi
[ -z "$tt_pid" ] || wait "$tt_pid"

# The same suites the kernel's way: htwheel in a kernel tree, kunit.py run
# (tools/uml/kunit.sh), after the UML boots (its kernel build wants both
# CPUs).
for s in "${want_kunit[@]}"; do
	next_step "kunit.py run: the suites in a kernel tree ($s)"
	selected "kunit-$s"
	"$HTW_TOP/tools/uml/kunit.sh" "$s" "$runs/kunit-$s" \
		${partial:+"$([ "$kunit_glob" = - ] || echo "$kunit_glob")"}
	boots+=("$runs/kunit-$s")
done

for f in "${flavours[@]}"; do
	next_step "Debian's 6.1 $f kernel under qemu, $HTW_QEMU_CPUS CPUs"
	selected_flavour "$f"
	qemu_runs=$(HTW_QEMU_FLAVOURS=$f HTW_QEMU_ONLY=${partial:+$progs} \
		"$HTW_TOP/tools/qemu/check.sh") || htw_die "the qemu harness failed"
	while read -r d; do [ -n "$d" ] && boots+=("$d"); done <<<"$qemu_runs"
done

next_step "the verdict (tools/uml/results.py)"
if [ -n "$partial" ]; then
	exec python3 "$HTW_TOP/tools/uml/results.py" --plan "$plan" \
		--selection "T=${T:-(all)} K=${K:-(all)}" "${boots[@]}"
fi
exec python3 "$HTW_TOP/tools/uml/results.py" "${boots[@]}"
