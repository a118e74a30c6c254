#!/bin/busybox sh
# Stage run inside a qemu boot of a Debian kernel: load htwheel, run every
# user-space test make built (device, library, stress) except the
# time-travel ones, unload, and leave the results in $HTW_OUT in the layout
# of the UML runs (selftests/NAME.tap and NAME.rc, errors, dmesg.txt) for
# results.py, and what identifies the module it loaded (module.sha256,
# module.build-id).
#
# From the kernel command line: htw_mod (directory of htwheel.ko), htw_bin
# (the build directory, at its host path), htw_cpus (CPUs asked for),
# htw_test_timeout (seconds per program; twice that for the latency test),
# htw_only (a comma-separated list of programs: just those run).
out=$HTW_OUT
mkdir -p "$out/selftests"
fail() { echo "$*" >>"$out/errors"; }

uname -a >"$out/uname.txt"
cpus=$(grep -c ^processor /proc/cpuinfo)
echo "$cpus" >"$out/cpus.txt"
[ "$cpus" -ge "${htw_cpus:-2}" ] || fail "only $cpus CPUs online, wanted ${htw_cpus:-2}"

cd "$out" || exit 1
# Which module this boot loads, for the host to hold against the one DKMS
# built (tools/deb/dkms.sh verify): the file's sha256 before insmod, the GNU
# build ID the kernel keeps of the loaded module after.
sha256sum "$htw_mod/htwheel.ko" >"$out/module.sha256"
insmod "$htw_mod/htwheel.ko" || { fail "insmod htwheel.ko failed"; exit 1; }
# htwheel_load_test reloads this very file with other parameters.
export HTW_MODULE=$htw_mod/htwheel.ko
od -An -v -tx1 /sys/module/htwheel/notes/.note.gnu.build-id | tr -d ' \n' >"$out/module.build-id"
sh /htw/ship.sh module.sha256 module.build-id
[ -c /dev/htwheel ] || fail "no /dev/htwheel after insmod"
[ -d /sys/kernel/slab/htw_timer ] || fail "no /sys/kernel/slab/htw_timer (booted without slab_nomerge?)"

# The test programs make built (build/selftests.list), the stress tests
# last: if one brings the kernel down, the others' results are already out.
# Those the initramfs could not hold (not static) are not there.
list=$htw_bin/selftests.list
tests=$(grep '_test$' "$list" | grep -v '_stress_test$'; grep '_stress_test$' "$list")
for t in $tests; do
	[ -x "$t" ] || continue
	n=${t##*/}
	case "$n" in *_tt_test) continue ;; esac	# UML time travel only
	# htw_only, a comma-separated list of programs, runs just those.
	case ",$htw_only," in ,,) ;; *",$n,"*) ;; *) continue ;; esac
	echo "htwheel: running $n"
	# If the kernel dies in this test, the host is left with this line.
	echo "# $n: started; the boot ended before it did" >"$out/selftests/$n.tap"
	sh /htw/ship.sh "selftests/$n.tap" $(ls errors 2>/dev/null)
	tmo=${htw_test_timeout:-120}
	# Up to three runs of each million-timer case, on an emulated CPU.
	case "$n" in htwheel_latency_test) tmo=$((tmo * 2)) ;; esac
	(cd "$TMPDIR" && timeout -s KILL "$tmo" "$t") \
		>"$out/selftests/$n.tap" 2>&1
	rc=$?
	echo $rc >"$out/selftests/$n.rc"
	[ $rc -eq 137 ] && fail "$n killed after $tmo s"
	sh /htw/ship.sh "selftests/$n.tap" "selftests/$n.rc" $(ls errors 2>/dev/null)
done

rmmod htwheel || fail "rmmod htwheel failed"
[ -d /sys/kernel/slab/htw_timer ] && fail "htw_timer slab still there after rmmod"
exit 0
