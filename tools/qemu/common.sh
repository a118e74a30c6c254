# shellcheck shell=bash
# Shared settings for the htwheel qemu scripts (Debian's real kernels);
# sourced, never run.

HTW_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HTWHEEL_CACHE=${HTWHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/htwheel}
HTW_DEBIAN=$HTWHEEL_CACHE/debian

# The Debian kernels tested, by the suffix of their package names:
# linux-image-<abi>-<flavour>, linux-headers-<abi>-<flavour>.
HTW_QEMU_FLAVOURS=${HTW_QEMU_FLAVOURS:-"amd64 rt-amd64"}
HTW_QEMU_CPUS=${HTW_QEMU_CPUS:-2}
HTW_QEMU_MEM=${HTW_QEMU_MEM:-1024}

# Host packages the qemu runs need, by the command that proves each is there.
HTW_QEMU_APT_PKGS="qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio rsync:rsync gcc-12:gcc-12 make:make python3:python3"

htw_log() { printf '[htwheel-qemu] %s\n' "$*" >&2; }
htw_die() { printf '[htwheel-qemu] error: %s\n' "$*" >&2; exit 1; }

htw_sudo() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Install whatever host packages are missing (once).
htw_qemu_deps() {
	local missing=() spec pkg probe
	for spec in $HTW_QEMU_APT_PKGS; do
		pkg=${spec%%:*} probe=${spec#*:}
		case "$probe" in
		/*) [ -e "$probe" ] && continue ;;
		*) command -v "$probe" >/dev/null && continue ;;
		esac
		missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	htw_log "installing with apt: ${missing[*]}"
	htw_sudo apt-get update -qq >/dev/null || true
	DEBIAN_FRONTEND=noninteractive htw_sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null || htw_die "apt-get install ${missing[*]} failed"
}

# Where one Debian kernel (ABI + package version) is unpacked.
htw_debroot() { printf '%s/%s_%s\n' "$HTW_DEBIAN" "$1" "$2"; }
