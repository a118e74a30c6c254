# shellcheck shell=bash
# Sourced, never run: htw_mirror_sources DIR copies what kbuild needs to
# build the modules (Kbuild, src/, include/, the KUnit suites and the bench
# module) into DIR, keeping the objects already built there, so that each
# kernel gets its own objects and the work tree stays clean.  Only files
# whose content changed are copied.
htw_mirror_sources() {
	mkdir -p "$1"
	# By content, and without the sources' times: a copied file gets a new
	# time, so kbuild rebuilds it even when objects of another tree's
	# version of it (another work tree with the same cache) look newer.
	rsync -rlpc --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
		--include 'Kbuild' --include 'src/***' --include 'include/***' \
		--include 'tests/' --include 'tests/kunit/***' \
		--include 'tools/' --include 'tools/bench/' --include 'tools/bench/kmod/***' \
		--exclude '*' "$HTW_TOP/" "$1/"
}
