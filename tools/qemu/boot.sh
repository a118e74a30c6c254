#!/usr/bin/env bash
# Boot one Debian kernel under qemu with an initramfs, collect the results.
#
#   tools/qemu/boot.sh VMLINUZ INITRD RUNDIR [kernel args...]
#
# The console (ttyS0) goes to RUNDIR/console.log; the guest sends its
# results over ttyS1 (tools/qemu/ship.sh), unpacked here into RUNDIR.
# qemu's exit status goes to RUNDIR/kernel.rc, as UML's does: 0
# after a clean power-off, 137 when the boot did not end within
# HTW_QEMU_TIMEOUT seconds (default 240) and was killed.
#
# HTW_QEMU_ACCEL: "tcg" (default: qemu's multi-threaded TCG, as on any
# machine) or "kvm" (when /dev/kvm is usable, else TCG).
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

kernel=$1 initrd=$2 run=$3
shift 3
rm -rf "$run"
mkdir -p "$run"
run=$(cd "$run" && pwd)

accel=(-accel tcg,thread=multi)
if [ "${HTW_QEMU_ACCEL:-tcg}" = kvm ]; then
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		accel=(-accel kvm -cpu host)
	else
		htw_log "no usable /dev/kvm: TCG"
	fi
fi

timeout=${HTW_QEMU_TIMEOUT:-240}
rc=0
start=$(date +%s)
timeout -s KILL "$timeout" qemu-system-x86_64 "${accel[@]}" \
	-smp "$HTW_QEMU_CPUS" -m "$HTW_QEMU_MEM" \
	-display none -monitor none -no-reboot \
	-serial stdio -serial "file:$run/serial1.txt" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic slab_nomerge htw_cpus=$HTW_QEMU_CPUS $*" \
	</dev/null >"$run/console.log" 2>&1 || rc=$?
echo "$rc" >"$run/kernel.rc"
echo "$(($(date +%s) - start))" >"$run/seconds.txt"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	htw_log "qemu did not power off within ${timeout}s: killed"
fi

# The results: every complete block the guest sent, unpacked in order.
blocks=$(mktemp -d)
awk -v dir="$blocks" '
	/^HTW-RESULTS-BEGIN/ { n++; f = sprintf("%s/%06d.b64", dir, n); next }
	/^HTW-RESULTS-END/ { if (f) { close(f); print "" > (f ".done"); close(f ".done") } f = ""; next }
	f { sub(/\r$/, ""); print > f }
' "$run/serial1.txt" 2>/dev/null || true
got=0
for b in "$blocks"/*.b64; do
	[ -f "$b.done" ] || continue
	if base64 -d "$b" | tar -xzf - -C "$run" 2>/dev/null; then
		got=1
	else
		echo "a result block sent by the guest did not unpack" >>"$run/errors"
	fi
done
rm -rf "$blocks"
[ $got -eq 1 ] || echo "the guest sent no results (see console.log)" >>"$run/errors"
rm -f "$run/serial1.txt"
exit 0
