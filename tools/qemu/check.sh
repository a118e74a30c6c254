#!/usr/bin/env bash
# Boot Debian's 6.1 kernels (generic and PREEMPT_RT) under qemu with 2 CPUs
# and run htwheel's user-space tests there: device, library and SMP stress.
#
#   tools/qemu/check.sh [--report]
#
# Run by `make check` (through tools/uml/check.sh) and `make check-qemu`,
# after make has built the programs listed in build/userprogs.list and
# build/selftests.list and the Debian packages in build/deb.  Installs what
# is missing (qemu, busybox-static, the compiler the headers name, dkms),
# downloads and unpacks the kernels into $HTWHEEL_CACHE/debian, builds
# htwheel.ko against each header tree (tools/harness.sh: W=1 and sparse,
# any warning fails that kernel's run), has DKMS build it again from the
# unpacked htwheel-dkms package (tools/deb/dkms.sh), builds an initramfs
# per kernel with the module DKMS built, boots each once (one emulator at a
# time), checks the boot loaded DKMS's module (selftests/htwheel_dkms.tap
# of the run) and that it holds no test hook, export or KUnit suite
# (htw_shipped_faults, tools/harness.sh; a fault is in the run's errors),
# and prints the run directory of every boot on stdout, one
# per line, for tools/uml/results.py.  Logs go to stderr.  Exits 0
# whatever the tests did; non-zero only when the harness itself could not
# run.  --report runs results.py on the boots afterwards (and exits with
# its status).
#
# HTW_QEMU_FLAVOURS ("amd64 rt-amd64"), HTW_QEMU_CPUS (2), HTW_QEMU_MEM
# (1024), HTW_QEMU_TIMEOUT (240 s per boot), HTW_QEMU_ACCEL (tcg | kvm),
# HTW_DEBIAN_ABI + HTW_DEBIAN_VERSION (pin the kernel) tune it;
# HTW_QEMU_ONLY, a comma-separated list of programs (`make check T=`
# sets it), runs just those.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

report=0
[ "${1:-}" = --report ] && report=1

htw_apt_install $HTW_QEMU_APT_PKGS

read -r abi version root < <("$HTW_TOP/tools/qemu/fetch.sh") || htw_die "fetching Debian's kernels failed"
kmaj=$(echo "$abi" | cut -d. -f1,2)

dkms_deb=$(ls "$HTW_TOP"/build/deb/htwheel-dkms_*_all.deb 2>/dev/null) ||
	htw_die "no build/deb/htwheel-dkms_*_all.deb: make deb builds it"

runs=$HTW_TOP/build/runs
dirs=()
for f in $HTW_QEMU_FLAVOURS; do
	run=$runs/debian-$kmaj-$f
	mobj=$(htw_modcache)/debian-$abi-$f
	kdir=$root/usr/src/linux-headers-$abi-$f
	htw_log "building htwheel.ko against linux-headers-$abi-$f ($version)"
	if ! htw_build_modules "$kdir" "$mobj"; then
		# A module that does not build is the project's failure, not the harness's.
		rm -rf "$run"
		mkdir -p "$run"
		echo "module build against linux-headers-$abi-$f failed: see $run/module-build.log" >"$run/errors"
		sed 's/^/module build: /' "$mobj/warnings" >>"$run/errors"
		cp "$mobj/build.log" "$run/module-build.log"
		dirs+=("$run")
		continue
	fi
	# The build above is the warnings gate; the boot loads the module DKMS
	# builds from the package, or, when DKMS fails (htwheel_dkms says so),
	# the gate's, so that the other tests still run.
	"$HTW_TOP/tools/deb/dkms.sh" build "$dkms_deb" "$abi-$f" "$kdir" "$mobj/dkms" ||
		htw_die "running dkms for $abi-$f failed"
	bootmod=$mobj/dkms/mod
	[ -f "$bootmod/htwheel.ko" ] || bootmod=$mobj
	"$HTW_TOP/tools/qemu/initramfs.sh" "$bootmod" "$mobj/initrd.gz" "$HTW_TOP/tools/qemu/stage.sh" \
		"$HTW_TOP/build/userprogs.list" "$HTW_TOP/build/selftests.list" ||
		htw_die "building the initramfs for $f failed"
	htw_log "booting Debian's $abi-$f under qemu, $HTW_QEMU_CPUS CPUs (log: $run/console.log)"
	"$HTW_TOP/tools/qemu/boot.sh" "$root/boot/vmlinuz-$abi-$f" "$mobj/initrd.gz" "$run" \
		htw_mod=/htw/mod htw_bin="$HTW_TOP/build" \
		${HTW_QEMU_ONLY:+htw_only=$HTW_QEMU_ONLY} \
		${HTW_STRESS_SECONDS:+HTW_STRESS_SECONDS=$HTW_STRESS_SECONDS} ||
		htw_die "could not boot $abi-$f"
	"$HTW_TOP/tools/deb/dkms.sh" verify "$mobj/dkms" "$run" ||
		htw_die "checking which module $abi-$f loaded failed"
	cp "$mobj/dkms/dkms.log" "$run/dkms.log"
	# The module booted is the shipped one: no test hooks, no exports (the
	# wheel's API and the hooks are for the KUnit suites and the benchmark
	# only, src/htw_compat.h), no KUnit suites.
	htw_shipped_faults "$bootmod/htwheel.ko" >>"$run/errors"
	[ -s "$run/errors" ] || rm -f "$run/errors"
	cp "$mobj/build.log" "$run/module-build.log"
	htw_log "  $f: qemu exit $(cat "$run/kernel.rc"), $(cat "$run/seconds.txt") s"
	dirs+=("$run")
done

printf '%s\n' "${dirs[@]}"
if [ $report -eq 1 ]; then
	exec python3 "$HTW_TOP/tools/uml/results.py" "${dirs[@]}" >&2
fi
exit 0
