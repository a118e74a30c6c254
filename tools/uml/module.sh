#!/usr/bin/env bash
# Build htwheel.ko (and the KUnit modules) for the um-FLAVOUR kernel.
#
#   tools/uml/module.sh FLAVOUR
#
# The module sources are mirrored into the cache so that several kernels
# can each keep their own objects and the work tree stays clean.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/mirror.sh"

flavour=$1
kobj=$(htw_kobj "$flavour")
mobj=$(htw_modobj "$flavour")
htw_mirror_sources "$mobj/src-mirror"
# Build in the mirror; kbuild only recompiles what changed.  Every file it
# compiles also goes through sparse (C=1), and any warning, from gcc's W=1
# or from sparse, fails the build.
log=$mobj/build.log
if ! make -s -C "$kobj" M="$mobj/src-mirror" ARCH=um W=1 C=1 modules >"$log" 2>&1; then
	sed "s|$mobj/src-mirror/||g" "$log" >&2
	htw_die "module build against um-$flavour failed"
fi
if grep -q 'warning:' "$log"; then
	sed "s|$mobj/src-mirror/||g" "$log" >&2
	htw_die "module build against um-$flavour has warnings"
fi
find "$mobj/src-mirror" -maxdepth 1 -name '*.ko' -exec cp -p {} "$mobj/" \;
ls "$mobj"/*.ko >/dev/null
