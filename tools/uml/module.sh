#!/usr/bin/env bash
# Build htwheel.ko and the KUnit modules for the um-FLAVOUR kernel, with the
# harness's one module-build recipe (tools/harness.sh: W=1 and sparse, any
# warning fails).  HTW_KUNIT=1 asks Kbuild for the KUnit modules, and with
# them for htwheel.ko's test hooks, when the kernel has KUnit: a build
# without it (DKMS's) makes the shipped module whatever the kernel.
#
#   tools/uml/module.sh FLAVOUR
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

flavour=$1
kunit=()
grep -q '^CONFIG_KUNIT=y' "$(htw_kobj "$flavour")/.config" 2>/dev/null && kunit=(HTW_KUNIT=1)
htw_build_modules "$(htw_kobj "$flavour")" "$(htw_modobj "$flavour")" ARCH=um "${kunit[@]}" ||
	htw_die "module build against um-$flavour failed"
