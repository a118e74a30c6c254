#!/usr/bin/env bash
# Download and unpack Debian's 6.1 kernels (headers and image) into the cache.
#
#   tools/qemu/fetch.sh        prints "ABI VERSION ROOT" on stdout
#
# The ABI (e.g. 6.1.0-57) and version (e.g. 6.1.192-3) are the current
# candidates of linux-headers-amd64 / linux-image-<abi>-amd64 unless
# HTW_DEBIAN_ABI and HTW_DEBIAN_VERSION pin them.  Headers and images of
# every flavour are taken at that one version.  Nothing is installed:
# `apt-get download` into ROOT/debs, then `dpkg-deb -x` into ROOT, whose
# usr/src/linux-headers-ABI-FLAVOUR is a module build tree and whose
# boot/vmlinuz-ABI-FLAVOUR is the kernel.  Offline, the newest tree already
# in the cache is used.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

resolve() {
	local dep
	dep=$(apt-cache depends linux-headers-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-headers-\(.*\)-amd64$/\1/p' | head -n 1)
	[ -n "$dep" ] || return 1
	abi=$dep
	version=$(apt-cache show --no-all-versions "linux-image-$abi-amd64" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1)
	[ -n "$version" ]
}

abi=${HTW_DEBIAN_ABI:-} version=${HTW_DEBIAN_VERSION:-}
if [ -z "$abi" ] || [ -z "$version" ]; then
	if ! resolve; then
		htw_log "apt knows no linux-headers-amd64: apt-get update"
		htw_sudo apt-get update -qq >/dev/null 2>&1 || true
		if ! resolve; then
			# Offline: the newest complete tree in the cache.
			last=$(ls -1d "$HTW_DEBIAN"/*_*/.htw-ready 2>/dev/null | sort -V | tail -n 1 || true)
			[ -n "$last" ] || htw_die "cannot resolve Debian's kernel packages (no apt lists, nothing cached)"
			last=${last%/.htw-ready}
			last=${last##*/}
			abi=${last%%_*} version=${last#*_}
			htw_log "offline: using cached $abi ($version)"
		fi
	fi
fi

root=$(htw_debroot "$abi" "$version")
# Both kernels the project tests, and any other asked for, are unpacked
# together: a run that boots one flavour (make check K=generic) must not
# leave a tree that a later run of the other finds ready without it.
flavours=$(printf '%s\n' amd64 rt-amd64 $HTW_QEMU_FLAVOURS | awk 'NF && !seen[$0]++')
ready=1
[ -f "$root/.htw-ready" ] || ready=
for f in $flavours; do
	[ -f "$root/boot/vmlinuz-$abi-$f" ] && [ -f "$root/usr/src/linux-headers-$abi-$f/.config" ] ||
		ready=
done
if [ -z "$ready" ]; then
	kmaj=$(echo "$abi" | cut -d. -f1,2)
	pkgs=("linux-kbuild-$kmaj" "linux-headers-$abi-common" "linux-headers-$abi-common-rt")
	for f in $flavours; do
		pkgs+=("linux-headers-$abi-$f" "linux-image-$abi-$f")
	done
	mkdir -p "$root/debs"
	want=()
	for p in "${pkgs[@]}"; do
		compgen -G "$root/debs/${p}_*.deb" >/dev/null || want+=("$p=$version")
	done
	if [ ${#want[@]} -gt 0 ]; then
		htw_log "downloading Debian $abi ($version): ${want[*]}"
		(cd "$root/debs" && apt-get download -q -o APT::Sandbox::User=root "${want[@]}" >/dev/null) ||
			htw_die "apt-get download failed"
	fi
	htw_log "unpacking Debian $abi into $root"
	rm -rf "$root/usr" "$root/boot"
	for p in "${pkgs[@]}"; do
		deb=$(ls "$root/debs/${p}"_*.deb)
		case "$p" in
		linux-image-*)
			# The kernel only: no need for its 400 MB of modules.
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" --wildcards './boot/*' ;;
		*) dpkg-deb -x "$deb" "$root" ;;
		esac
	done
	# The flavour trees include the common tree by its absolute /usr/src
	# path; everything else in them is a relative symlink.
	for f in $flavours; do
		mk=$root/usr/src/linux-headers-$abi-$f/Makefile
		sed -i "s|^include /usr/src/|include $root/usr/src/|" "$mk"
		[ -f "$root/boot/vmlinuz-$abi-$f" ] || htw_die "no boot/vmlinuz-$abi-$f in the image package"
	done
	touch "$root/.htw-ready"
fi
echo "$abi $version $root"
