#!/usr/bin/env bash
# `make demo`, once make has built the CLI: build the kernel and the module
# if needed, boot UML, load htwheel and run the CLI against /dev/htwheel,
# printing what it shows.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

"$HTW_TOP/tools/uml/kernel.sh" build debug
"$HTW_TOP/tools/uml/module.sh" debug

run=$HTW_TOP/build/runs/demo
htw_log "booting UML (log: $run/console.log)"
"$HTW_TOP/tools/uml/boot.sh" debug "$HTW_TOP/tools/uml/stage-demo.sh" "$run" quiet
# Show the stage's own output: everything between its start and end marks.
sed -n '/^htwheel: stage .* starting/,/^htwheel: stage finished/p' "$run/console.log" |
	sed '1d;$d'
[ "$(cat "$run/kernel.rc")" = 0 ] && [ "$(cat "$run/stage.rc" 2>/dev/null)" = 0 ] ||
	htw_die "demo failed; see $run/console.log"
