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
$bb mount -t tmpfs tmpfs /tmp
$bb mount -t tmpfs tmpfs /run
$bb mkdir -p /tmp/htw-out
$bb mount -t hostfs -o "$htw_out" hostfs /tmp/htw-out
export HTW_OUT=/tmp/htw-out HOME=/tmp TMPDIR=/tmp

echo "htwheel: stage $htw_stage starting"
$bb sh "$htw_stage"
echo $? >/tmp/htw-out/stage.rc
$bb sync
echo "htwheel: stage finished, powering off"
$bb poweroff -f
