#!/bin/busybox sh
# PID 1 of every htwheel UML boot.  The host's root is mounted read-only
# through hostfs; the boot's results go to the host directory $htw_out
# (mounted read-write), and the stage script $htw_stage does the work.
# Both come from the kernel command line, which the kernel hands to init as
# environment variables.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
bb=/bin/busybox

$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t debugfs debugfs /sys/kernel/debug
# Scratch space on /run only: the work tree or the cache may well live
# under the host's /tmp, which must stay visible.
$bb mount -t tmpfs tmpfs /run
$bb mkdir -p /run/htw-out /run/tmp
$bb mount -t hostfs -o "$htw_out" hostfs /run/htw-out
export HTW_OUT=/run/htw-out HOME=/run/tmp TMPDIR=/run/tmp
# Loopback, for tests that talk TCP to themselves.
$bb ip link set lo up 2>/dev/null || $bb ifconfig lo 127.0.0.1 up

echo "htwheel: stage $htw_stage starting"
$bb sh "$htw_stage"
echo $? >"$HTW_OUT/stage.rc"
$bb sync
echo "htwheel: stage finished, powering off"
$bb poweroff -f
