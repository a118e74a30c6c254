#!/usr/bin/env bash
# `make check`, once make has built the programs (build/userprogs.list,
# build/selftests.list): test the harness itself on the host, build the
# debug UML kernel and the modules if they are missing or out of date, boot
# UML twice (real time, then time travel for long delays), boot Debian's
# 6.1 generic and PREEMPT_RT kernels under qemu with 2 CPUs, and report
# every test.  HTW_SKIP_QEMU=1 leaves the qemu part out (a quicker local
# loop).  The README's "How `make check` works" has the steps in order.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

runs=$HTW_TOP/build/runs
# results.py judges every boot below; first check that it still catches
# each fault it must, that the bench's report.py still reads and judges
# its samples right, that the bench's churn driver keeps its books (built
# natively with libev and libuv), and that `make help` still tells every
# target and knob.  Their TAP is the boot "host" of tests/manifest.txt.
rm -rf "$runs/host"
mkdir -p "$runs/host/selftests"
for t in results_test bench_report_test churn_driver_test make_help_test; do
	htw_log "testing the harness: tests/harness/$t.py"
	rc=0
	python3 "$HTW_TOP/tests/harness/$t.py" >"$runs/host/selftests/$t.tap" 2>&1 || rc=$?
	echo "$rc" >"$runs/host/selftests/$t.rc"
done

"$HTW_TOP/tools/uml/kernel.sh" build debug
"$HTW_TOP/tools/uml/module.sh" debug
# The module DKMS would build for this kernel, which has KUnit, is still
# the shipped one (no hooks, no exports); also boot "host".
htw_log "testing the harness: tests/harness/shipped_module_test.sh"
rc=0
"$HTW_TOP/tests/harness/shipped_module_test.sh" debug \
	>"$runs/host/selftests/shipped_module_test.tap" 2>&1 || rc=$?
echo "$rc" >"$runs/host/selftests/shipped_module_test.rc"

boots=("$runs/host" "$runs/check-rt" "$runs/check-tt")
# The two UML boots are independent and each uses one CPU: run them side by
# side.  The time-travel boot is mostly the million-timer suite; it always
# runs, so that tests/manifest.txt can miss it if its suites do not report.
htw_log "booting UML: long-delay suites (time-travel=inf-cpu), in the background"
"$HTW_TOP/tools/uml/boot.sh" debug "$HTW_TOP/tools/uml/stage-tests.sh" \
	"$runs/check-tt" htw_set=tt time-travel=inf-cpu slab_nomerge &
tt_pid=$!
htw_log "booting UML: KUnit suites and device tests (real time)"
"$HTW_TOP/tools/uml/boot.sh" debug "$HTW_TOP/tools/uml/stage-tests.sh" \
	"$runs/check-rt" htw_set=rt slab_nomerge
wait "$tt_pid"
if [ -z "${HTW_SKIP_QEMU:-}" ]; then
	htw_log "booting Debian's 6.1 kernels (generic, PREEMPT_RT) under qemu, 2 CPUs"
	qemu_runs=$("$HTW_TOP/tools/qemu/check.sh") || htw_die "the qemu harness failed"
	while read -r d; do [ -n "$d" ] && boots+=("$d"); done <<<"$qemu_runs"
fi
exec python3 "$HTW_TOP/tools/uml/results.py" "${boots[@]}"
