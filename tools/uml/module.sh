#!/usr/bin/env bash
# Build htwheel.ko and the KUnit modules for the um-FLAVOUR kernel, with the
# harness's one module-build recipe (tools/harness.sh: W=1 and sparse, any
# warning fails).
#
#   tools/uml/module.sh FLAVOUR
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

flavour=$1
htw_build_modules "$(htw_kobj "$flavour")" "$(htw_modobj "$flavour")" ARCH=um ||
	htw_die "module build against um-$flavour failed"
