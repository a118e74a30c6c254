#!/usr/bin/env bash
# DKMS builds htwheel.ko from the installed htwheel-dkms package, and a test
# boot proves it loaded that module.
#
#   tools/deb/dkms.sh build DEB KVER HEADERS DIR
#   tools/deb/dkms.sh verify DIR RUNDIR
#
# build: unpack the package DEB with dpkg-deb -x into DIR/root, as dpkg
# would install it, and run DKMS on it in a scratch tree, DIR/tree:
# `dkms add` of DIR/root/usr/src/htwheel-VERSION, then `dkms build -k KVER
# --kernelsourcedir HEADERS`, what the package's postinst has DKMS do for
# each installed kernel (the host's /var/lib/dkms and /usr/src are never
# used).  The module DKMS built is copied to DIR/mod/htwheel.ko, the one
# module there, for the boot's initramfs.  DKMS's log is DIR/dkms.log.
#
# verify: after the boot, hold what the guest loaded (RUNDIR/module.sha256
# and RUNDIR/module.build-id, written by tools/qemu/stage.sh before and after
# its insmod) against the module in DKMS's tree, and write the results as
# TAP to RUNDIR/selftests/htwheel_dkms.tap and .rc, for tools/uml/results.py.
#
# A DKMS that fails, a module that is not DKMS's, is a failed test, not an
# error: both commands exit non-zero only when they could not run.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

usage() { htw_die "usage: $0 build DEB KVER HEADERS DIR | verify DIR RUNDIR"; }

# The GNU build ID note of a module file, in hex, as the kernel shows it in
# /sys/module/NAME/notes/.note.gnu.build-id.
build_id_note() {
	objcopy -O binary --only-section=.note.gnu.build-id "$1" /dev/stdout 2>/dev/null |
		od -An -v -tx1 | tr -d ' \n'
}

# The module DKMS left in its tree for kernel KVER, if any.
dkms_module() {
	local dir=$1 kver
	kver=$(cat "$dir/kver" 2>/dev/null) || return 1
	find "$dir/tree" -path "*/$kver/*/module/htwheel.ko" 2>/dev/null | head -n 1
}

cmd_build() {
	[ $# -eq 4 ] || usage
	local deb=$1 kver=$2 headers=$3 dir=$4 src version rc=0 ko
	[ -f "$deb" ] || htw_die "no package $deb: make deb builds it"
	htw_apt_install dkms kmod binutils
	rm -rf "$dir"
	mkdir -p "$dir/tree" "$dir/mod"
	echo "$kver" >"$dir/kver"
	: >"$dir/results"
	dpkg-deb -x "$deb" "$dir/root"
	version=$(dpkg-deb -f "$deb" Version)
	version=${version%-*}
	src=$dir/root/usr/src/htwheel-$version

	# The package's version, from debian/changelog, is the one dkms.conf
	# names: dkms would not find the tree its postinst adds otherwise.
	local conf_version
	conf_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf" 2>/dev/null || true)
	{
		if [ "$conf_version" = "$version" ]; then
			echo "ok	the installed dkms.conf names the package's version"
		else
			echo "not ok	the installed dkms.conf names the package's version"
		fi
		echo "# package $version, /usr/src/htwheel-$version/dkms.conf says '$conf_version'"
	} >>"$dir/results"

	# No module signing: the test kernels load unsigned modules, and
	# DKMS would make itself a key in the host's /var/lib/dkms.
	htw_log "dkms build of htwheel $version from ${deb##*/} for $kver"
	{
		sign_file=/nonexistent dkms add -m htwheel -v "$version" \
			--dkmstree "$dir/tree" --sourcetree "$dir/root/usr/src" &&
		sign_file=/nonexistent dkms build -m htwheel -v "$version" -k "$kver" \
			--kernelsourcedir "$headers" --dkmstree "$dir/tree" --sourcetree "$dir/root/usr/src"
	} >"$dir/dkms.log" 2>&1 || rc=$?
	ko=$(dkms_module "$dir" || true)
	if [ $rc -eq 0 ] && [ -n "$ko" ]; then
		cp "$ko" "$dir/mod/htwheel.ko"
		{
			echo "ok	dkms built htwheel.ko from the installed htwheel-dkms files"
			echo "# kernel $kver, ${ko#"$dir"/}"
		} >>"$dir/results"
	else
		htw_log "dkms failed for $kver (exit $rc): see $dir/dkms.log"
		{
			echo "not ok	dkms built htwheel.ko from the installed htwheel-dkms files"
			echo "# kernel $kver: dkms exit $rc, module ${ko:-none}; see $dir/dkms.log"
			tail -n 30 "$dir/dkms.log" | sed 's/^/#   /'
		} >>"$dir/results"
	fi
}

cmd_verify() {
	[ $# -eq 2 ] || usage
	local dir=$1 run=$2 ko want got tap n=0 failed=0 line
	mkdir -p "$run/selftests"
	tap=$run/selftests/htwheel_dkms.tap
	ko=$(dkms_module "$dir" || true)

	result() {	# result OK DESCRIPTION [DIAGNOSTIC]
		n=$((n + 1))
		if [ "$1" = ok ]; then
			echo "ok $n $2"
		else
			echo "not ok $n $2"
			failed=1
		fi
		[ -z "${3:-}" ] || echo "# $3"
	}

	{
		echo "TAP version 13"
		echo "1..4"
		while IFS= read -r line; do
			case "$line" in
			"#"*) echo "$line" ;;
			*) result "${line%%	*}" "${line#*	}" ;;
			esac
		done <"$dir/results"

		want=${ko:+$(sha256sum "$ko" | cut -d' ' -f1)}
		got=$(cut -d' ' -f1 "$run/module.sha256" 2>/dev/null || true)
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			result ok "insmod loaded the file dkms built" "sha256 $got"
		else
			result "not ok" "insmod loaded the file dkms built" \
				"loaded sha256 '${got:-none: no module.sha256 from the boot}', dkms built '${want:-nothing}'"
		fi

		want=${ko:+$(build_id_note "$ko")}
		got=$(cat "$run/module.build-id" 2>/dev/null || true)
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			result ok "the kernel's htwheel module is the one dkms built" \
				"GNU build ID note ${got:32}"
		else
			result "not ok" "the kernel's htwheel module is the one dkms built" \
				"/sys/module/htwheel/notes/.note.gnu.build-id '${got:-none}', dkms built '${want:-nothing}'"
		fi
	} >"$tap"
	echo "$failed" >"$run/selftests/htwheel_dkms.rc"
	[ "$n" -eq 4 ] || htw_die "$tap: $n results, not 4"
}

case "${1:-}" in
build) shift; cmd_build "$@" ;;
verify) shift; cmd_verify "$@" ;;
*) usage ;;
esac
