#!/bin/busybox sh
# PID 1 of every htwheel qemu boot (the initramfs's /init).  Runs the stage
# script /htw/stage.sh with its results in /out, which the stage (after
# every test) and init (at the end, all of it) send to the host over the
# second serial port, ttyS1, with /htw/ship.sh; then powers off.  htw_* settings come from the kernel
# command line, which the kernel hands to init as environment variables.
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /out /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# The initramfs is itself writable: no tmpfs over /tmp, where the programs
# may sit at their host paths (a work tree under the host's /tmp).
/bin/busybox mkdir -p /scratch
export HTW_OUT=/out HOME=/scratch TMPDIR=/scratch
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up

# stty raw: no newline translation on the way out.
stty -F /dev/ttyS1 raw -echo 115200 2>/dev/null

echo "htwheel: stage /htw/stage.sh starting"
sh /htw/stage.sh
echo $? >/out/stage.rc
dmesg >/out/dmesg.txt

sh /htw/ship.sh .
sync
echo "htwheel: stage finished, powering off"
poweroff -f
