#!/usr/bin/env bash
# Build htwheel's Debian packages from a copy of the work tree, and check
# them with lintian.
#
#   tools/deb/build.sh OUTDIR
#
# Run by `make deb` (tools/deb/deb.mk) with OUTDIR build/deb.  Installs
# what is missing (debhelper, dh-dkms, lintian...), copies the work tree as
# it is, without .git, build/ and kbuild's objects, to
# OUTDIR/src/htwheel-VERSION, so that the tree itself stays clean, and runs
# `dpkg-buildpackage -b -us -uc` there (log: OUTDIR/build.log).  lintian
# checks the result (OUTDIR/lintian.txt, also printed): any error or
# warning fails; a warning that stays is overridden in
# debian/*.lintian-overrides, with its reason there.  The four .debs, the
# .buildinfo and the .changes end up in OUTDIR, the -dbgsym packages in
# OUTDIR/dbgsym.
set -euo pipefail
. "$(dirname "$0")/../harness.sh"

[ $# -eq 1 ] || htw_die "usage: $0 OUTDIR"
mkdir -p "$1"
out=$(cd "$1" && pwd)
# pkg-config for the consumer that tools/deb/deb.mk builds from the packages.
htw_apt_install build-essential debhelper dh-dkms dkms dpkg-dev lintian \
	pkg-config rsync

# The one version is debian/changelog's (tools/lib/htwheel.mk reads it);
# <htwheel.h> names the library's MAJOR.MINOR, which must be its start.
version=$(dpkg-parsechangelog -l "$HTW_TOP/debian/changelog" -S Version)
upstream=${version%-*}
hdr=$(sed -n 's/^#define LIBHTWHEEL_VERSION_M[AI][JN]OR[[:space:]]*\([0-9]*\).*/\1/p' \
	"$HTW_TOP/tools/lib/include/htwheel.h" | paste -sd.)
case "$upstream" in
"$hdr".*) ;;
*) htw_die "debian/changelog says $upstream, but tools/lib/include/htwheel.h says libhtwheel $hdr" ;;
esac

src=$out/src/htwheel-$upstream
rm -rf "$out/src" "$out/dbgsym" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$src"
rsync -a --exclude /.git --exclude /build --exclude '*.o' --exclude '*.ko' \
	--exclude '*.mod' --exclude '*.mod.c' --exclude '.*.cmd' --exclude modules.order \
	--exclude Module.symvers "$HTW_TOP/" "$src/"

htw_log "dpkg-buildpackage -b -us -uc in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	htw_die "dpkg-buildpackage failed: see $out/build.log"
fi

changes=$(ls "$out/src/htwheel_${version}"_*.changes)
htw_log "lintian ${changes##*/}"
rc=0
lintian --fail-on error,warning --display-info "$changes" >"$out/lintian.txt" 2>&1 || rc=$?
sed 's/^/[lintian] /' "$out/lintian.txt" >&2
[ $rc -eq 0 ] || htw_die "lintian found errors or warnings (above; $out/lintian.txt)"

# The four packages in OUTDIR, so that `apt install ./build/deb/*.deb`
# installs them; debhelper's automatic debug symbol packages beside, in
# OUTDIR/dbgsym.
mkdir -p "$out/dbgsym"
mv "$out"/src/*-dbgsym_*.deb "$out/dbgsym/"
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out/"
htw_log "built $(cd "$out" && echo *.deb)"
