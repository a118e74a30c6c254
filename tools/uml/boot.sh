#!/usr/bin/env bash
# Boot the um-FLAVOUR kernel once, run a stage script inside it, collect.
#
#   tools/uml/boot.sh FLAVOUR STAGE RUNDIR [kernel args...]
#
# STAGE runs as root inside UML with HTW_OUT pointing at RUNDIR (writable),
# and htw_mod / htw_bin telling where the modules and user programs are.
# The console goes to RUNDIR/console.log.  A boot that does not power off
# within HTW_BOOT_TIMEOUT seconds (default 900) is killed and fails.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

flavour=$1 stage=$2 run=$3
shift 3
kobj=$(htw_kobj "$flavour")
[ -x "$kobj/linux" ] || htw_die "no um-$flavour kernel; run: tools/uml/kernel.sh build $flavour"
rm -rf "$run"
mkdir -p "$run"
run=$(cd "$run" && pwd)

timeout=${HTW_BOOT_TIMEOUT:-900}
rc=0
# timeout kills the whole process group: UML's helper processes too.
TMPDIR=/tmp timeout -s KILL "$timeout" "$kobj/linux" mem=${HTW_UML_MEM:-1G} \
	root=/dev/root rootfstype=hostfs rootflags=/ ro \
	init="$HTW_TOP/tools/uml/init.sh" con=null con0=fd:0,fd:1 \
	htw_out="$run" htw_stage="$stage" \
	htw_mod="$(htw_modobj "$flavour")" htw_bin="$HTW_TOP/build" \
	"$@" </dev/null >"$run/console.log" 2>&1 || rc=$?
echo "$rc" >"$run/kernel.rc"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	htw_log "UML did not power off within ${timeout}s: killed"
fi
exit 0
