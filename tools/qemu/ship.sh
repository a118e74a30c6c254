#!/bin/busybox sh
# Send files of $HTW_OUT (paths relative to it) to the host over ttyS1: a
# base64 gzipped tar between two marker lines.  Called after every test so
# that results survive a kernel crash later in the boot; the host unpacks
# every complete block in order (tools/qemu/boot.sh).
cd "$HTW_OUT" || exit 1
{
	echo HTW-RESULTS-BEGIN
	tar -cf - "$@" | gzip | base64
	echo HTW-RESULTS-END
} >/dev/ttyS1
