# shellcheck shell=bash
# Sourced, never run: htw_mirror_sources DIR copies what kbuild needs to
# build the modules (Kbuild, src/, include/, the KUnit suites and the bench
# module) into DIR, keeping the objects already built there, so that each
# kernel gets its own objects and the work tree stays clean.
htw_mirror_sources() {
	mkdir -p "$1"
	rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
		--include 'Kbuild' --include 'src/***' --include 'include/***' \
		--include 'tests/' --include 'tests/kunit/***' \
		--include 'tools/' --include 'tools/bench/' --include 'tools/bench/kmod/***' \
		--exclude '*' "$HTW_TOP/" "$1/"
}
