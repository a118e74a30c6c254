#!/usr/bin/env bash
# The module DKMS builds is the shipped one even for a kernel built with
# CONFIG_KUNIT: no exports, no hooks into KUnit (static stubs), no KUnit
# suites.  What decides is the test build's own flag (HTW_KUNIT=1, for
# which Kbuild defines HTW_TEST_BUILD), never the kernel's CONFIG_KUNIT.
#
#   tests/harness/shipped_module_test.sh [FLAVOUR]
#
# Against the um-FLAVOUR kernel (default debug, which has KUnit): install
# the DKMS source tree as the package does (make dkms-source), build it
# with dkms.conf's own MAKE[0] command line, and check the module
# (tools/harness.sh: htw_shipped_faults, which the qemu boots run on the
# module DKMS built there too).  Then that the same check finds the hooks
# of the test build tools/uml/module.sh made, so that it can fail.  TAP on
# stdout, for tools/uml/results.py (boot "host").
set -uo pipefail
. "$(dirname "$0")/../../tools/harness.sh"

flavour=${1:-debug}
kdir=$(htw_kobj "$flavour")
out=$(htw_modcache)/shipped-$flavour
test_ko=$(htw_modobj "$flavour")/htwheel.ko
n=0 failed=0

# result DESCRIPTION < DETAIL: ok when DETAIL is empty, else not ok with
# it as a comment.  Fed by redirection, never a pipe: it counts in this shell.
result() {
	local detail
	detail=$(cat)
	n=$((n + 1))
	if [ -z "$detail" ]; then
		echo "ok $n $1"
	else
		failed=$((failed + 1))
		echo "not ok $n $1"
		printf '%s\n' "$detail" | head -n 40 | sed 's/^/# /'
	fi
}

echo "1..6"

result kernel_has_kunit < <(grep -q '^CONFIG_KUNIT=y' "$kdir/.config" 2>/dev/null ||
	echo "$kdir/.config: no CONFIG_KUNIT=y")

rm -rf "$out"
mkdir -p "$out"
# The tree the htwheel-dkms package installs (tools/deb/deb.mk).
if make -s -C "$HTW_TOP" dkms-source DESTDIR="$out/root" >"$out/install.log" 2>&1; then
	src=$(ls -d "$out"/root/usr/src/htwheel-* | head -n 1)
	result dkms_source_installs </dev/null
else
	src=
	result dkms_source_installs <"$out/install.log"
fi

# dkms.conf's MAKE[0], with the paths DKMS substitutes, for UML.
built=
if [ -n "$src" ]; then
	cmd=$(sed -n 's/^MAKE\[0\]="\(.*\)"$/\1/p' "$src/dkms.conf")
	cmd=${cmd//'${kernel_source_dir}'/$kdir}
	cmd=${cmd//'${dkms_tree}/${PACKAGE_NAME}/${PACKAGE_VERSION}/build'/$src}
	read -ra argv <<<"$cmd"
	if "${argv[@]}" ARCH=um -j"$HTW_JOBS" >"$out/build.log" 2>&1 && [ -f "$src/htwheel.ko" ]; then
		built=$src/htwheel.ko
		result builds_as_dkms_does </dev/null
	else
		result builds_as_dkms_does < <(echo "$cmd ARCH=um"; tail -n 15 "$out/build.log")
	fi
else
	result builds_as_dkms_does <<<"no source tree"
fi

if [ -n "$built" ]; then
	result builds_no_test_module < <(find "$src" -name '*.ko' ! -name htwheel.ko \
		-printf 'also built: %P\n')
	result no_hooks_exports_or_suites < <(htw_shipped_faults "$built")
else
	result builds_no_test_module <<<"not built"
	result no_hooks_exports_or_suites <<<"not built"
fi

# The control: the test build has them, and the check says so.
if [ -f "$test_ko" ]; then
	faults=$(htw_shipped_faults "$test_ko")
	result test_build_has_them < <(
		grep -q ' exports ' <<<"$faults" || echo "$test_ko: no export found"
		grep -q ' hooks into KUnit' <<<"$faults" || echo "$test_ko: no hook into KUnit found")
else
	result test_build_has_them <<<"no test build $test_ko (tools/uml/module.sh $flavour)"
fi
exit $((failed > 0))
