#!/usr/bin/env bash
# `make fuzz`, once make has built the tests: a long fuzzer run (over a
# million operations by default) in the debug UML kernel, then the usual
# verdict (splats, kmemleak).
#
#   HTW_FUZZ_SEED, HTW_FUZZ_OPS (per thread), HTW_FUZZ_THREADS, HTW_FUZZ_PROCS
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

seed=${HTW_FUZZ_SEED:-$(date +%s)}
ops=${HTW_FUZZ_OPS:-56000}
threads=${HTW_FUZZ_THREADS:-3}
procs=${HTW_FUZZ_PROCS:-6}

"$HTW_TOP/tools/uml/kernel.sh" build debug
"$HTW_TOP/tools/uml/module.sh" debug

run=$HTW_TOP/build/runs/fuzz
htw_log "fuzzing: seed $seed, $procs processes x $threads threads x $ops operations"
HTW_BOOT_TIMEOUT=${HTW_BOOT_TIMEOUT:-1800} "$HTW_TOP/tools/uml/boot.sh" debug \
	"$HTW_TOP/tools/uml/stage-tests.sh" "$run" htw_set=rt htw_partial=1 htw_only=htwheel_fuzz_test htw_kunit=- \
	slab_nomerge HTW_FUZZ_SEED="$seed" HTW_FUZZ_OPS="$ops" \
	HTW_FUZZ_THREADS="$threads" HTW_FUZZ_PROCS="$procs"
grep '^# ' "$run/selftests/htwheel_fuzz_test.tap" | grep -v VIOLATION | tail -n "$((procs + 2))" || true
exec python3 "$HTW_TOP/tools/uml/results.py" "$run"
