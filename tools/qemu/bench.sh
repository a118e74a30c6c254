#!/usr/bin/env bash
# The qemu part of `make bench`: the same benchmarks as in UML, on Debian's
# 6.1 generic kernel under qemu with 2 CPUs, where a system call costs
# about what it does on hardware (~0.8 us, against ~31 us in UML).
#
#   tools/qemu/bench.sh RUNDIR
#
# Run by tools/bench/bench.sh (`make bench`), after make has built the
# bench program (build/bench-progs.list).  Builds htwheel.ko and
# htwheel_bench.ko against the Debian headers (tools/harness.sh's
# htw_build_modules with HTW_BENCH=1), an initramfs whose stage is the
# UML bench stage, tools/bench/stage-bench.sh (htw_set=rt: in-kernel bench,
# then htwheel_ubench sched, deliver, mem and a short idle window; the idle
# hour needs UML's time travel and is not run), boots once and leaves the
# raw results in RUNDIR for tools/bench/report.py, with RUNDIR/host.txt:
# the host's load and steal before and after the boot, the commit and the
# seed (tools/bench/host-meta.sh).  Logs go to stderr.  Exits non-zero
# only when the harness itself could not run; a benchmark that failed in
# the guest is in RUNDIR/errors.
#
# Under TCG the guest's absolute times are those of emulated code: only
# ratios measured within the one boot mean anything.
#
# HTW_QEMU_BENCH_FLAVOUR (amd64), HTW_QEMU_BENCH_N (user-space timers,
# default $HTW_BENCH_N or 100000), HTW_QEMU_BENCH_SIZES (in-kernel pending
# counts, default $HTW_BENCH_SIZES or 1000,10000,100000,1000000),
# HTW_BENCH_SEED (default a fresh random one), HTW_BENCH_ROWS (the rows,
# comma-separated, but idle-hour: tools/bench/bench.sh; default all),
# HTW_BENCH_STORM (the storm row's sizes, default 100000,1000000),
# HTW_BENCH_TABLE and HTW_BENCH_KMOD as for tools/bench/bench.sh, HTW_QEMU_TIMEOUT (default
# 2400 here),
# and the settings of tools/qemu/check.sh (HTW_QEMU_CPUS, HTW_QEMU_MEM,
# HTW_QEMU_ACCEL, HTW_DEBIAN_ABI/VERSION) tune it.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

[ $# -eq 1 ] || htw_die "usage: $0 RUNDIR"
run=$1
flavour=${HTW_QEMU_BENCH_FLAVOUR:-amd64}
n=${HTW_QEMU_BENCH_N:-${HTW_BENCH_N:-100000}}
sizes=${HTW_QEMU_BENCH_SIZES:-${HTW_BENCH_SIZES:-1000,10000,100000,1000000}}
export HTW_QEMU_TIMEOUT=${HTW_QEMU_TIMEOUT:-2400}
seed=${HTW_BENCH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export HTW_BENCH_SEED=$seed

htw_apt_install $HTW_QEMU_APT_PKGS

read -r abi version root < <("$HTW_TOP/tools/qemu/fetch.sh") || htw_die "fetching Debian's kernels failed"
kdir=$root/usr/src/linux-headers-$abi-$flavour
mobj=$(htw_modcache)/debian-$abi-$flavour-bench
htw_log "building htwheel.ko and htwheel_bench.ko against linux-headers-$abi-$flavour ($version)"
htw_build_modules "$kdir" "$mobj" HTW_BENCH=1 ||
	htw_die "module build against linux-headers-$abi-$flavour failed: see $mobj/build.log"
"$HTW_TOP/tools/qemu/initramfs.sh" "$mobj" "$mobj/initrd.gz" \
	"$HTW_TOP/tools/bench/stage-bench.sh" "$HTW_TOP/build/bench-progs.list" ||
	htw_die "building the bench initramfs failed"

htw_log "booting Debian's $abi-$flavour under qemu, $HTW_QEMU_CPUS CPUs: benchmarks, seed $seed (log: $run/console.log)"
# boot.sh empties RUNDIR: host.txt is written after the boot.
before=$("$HTW_TOP/tools/bench/host-meta.sh" before)
"$HTW_TOP/tools/qemu/boot.sh" "$root/boot/vmlinuz-$abi-$flavour" "$mobj/initrd.gz" "$run" \
	htw_set=rt htw_bench_mod=/htw/mod htw_bin="$HTW_TOP/build" \
	htw_bench_n="$n" htw_bench_sizes="$sizes" htw_bench_seed="$seed" \
	htw_bench_rows="${HTW_BENCH_ROWS:-}" htw_bench_storm="${HTW_BENCH_STORM:-}" htw_bench_conn="${HTW_BENCH_CONN:-}" \
	htw_bench_table="${HTW_BENCH_TABLE:-1000,100000,1000000}" \
	htw_bench_kmod="${HTW_BENCH_KMOD:-}" || htw_die "could not boot $abi-$flavour"
{ echo "$before"; "$HTW_TOP/tools/bench/host-meta.sh" after; } >"$run/host.txt"
accel=tcg
[ "${HTW_QEMU_ACCEL:-tcg}" = kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && accel=kvm
printf 'meta\t%s\t%s\n' "debian kernel" "$abi-$flavour $version" "qemu cpus" "$HTW_QEMU_CPUS" \
	"qemu accel" "$accel" "boot seconds" "$(cat "$run/seconds.txt")" >>"$run/host.txt"
htw_log "  qemu exit $(cat "$run/kernel.rc"), $(cat "$run/seconds.txt") s"
[ "$(cat "$run/kernel.rc")" = 0 ] || echo "qemu exited with $(cat "$run/kernel.rc") (see console.log)" >>"$run/errors"
exit 0
