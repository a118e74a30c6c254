#!/usr/bin/env bash
# `make check`: build what is missing, boot the debug UML kernel twice
# (real time, then time travel for long delays), and report every test.
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$HTW_TOP/tools/uml/kernel.sh" build debug
"$HTW_TOP/tools/uml/module.sh" debug
make -s -C "$HTW_TOP" userprogs selftests

runs=$HTW_TOP/build/runs
boots=("$runs/check-rt")
htw_log "booting UML: KUnit suites and device tests (real time)"
"$HTW_TOP/tools/uml/boot.sh" debug "$HTW_TOP/tools/uml/stage-tests.sh" \
	"$runs/check-rt" htw_set=rt slab_nomerge
if [ -f "$(htw_modobj debug)/htwheel_kunit_tt.ko" ] ||
	compgen -G "$HTW_TOP/build/tests/*_tt_test" >/dev/null; then
	htw_log "booting UML: long-delay suites (time-travel=inf-cpu)"
	"$HTW_TOP/tools/uml/boot.sh" debug "$HTW_TOP/tools/uml/stage-tests.sh" \
		"$runs/check-tt" htw_set=tt time-travel=inf-cpu slab_nomerge
	boots+=("$runs/check-tt")
fi
exec python3 "$HTW_TOP/tools/uml/results.py" "${boots[@]}"
