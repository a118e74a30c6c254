#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Every man page of tools/man renders with `man -l`, without a warning from
# groff, and says something; every public function of libhtwheel has one.
# @MANDIR@ is filled in by htwheel.mk.
mandir=@MANDIR@
export MANWIDTH=80 MANPAGER=cat PAGER=cat LC_ALL=C.UTF-8 HOME=${TMPDIR:-/tmp}

# From the top of the tree, so that ".so man3/page.3" links resolve.
cd "$mandir" || exit 1
pages=$(ls man*/*.[0-9] 2>/dev/null)
funcs="htw_open htw_close htw_fd htw_now htw_schedule htw_schedule_many
htw_cancel htw_cancel_many htw_rearm htw_rearm_many htw_read htw_wait htw_drain htw_stats
htw_set_eventfd htw_parse_duration htw_ms htw_us htw_sec htw_table2_create
htw_table2_close htw_table2_enter htw_table2_stats htw_table2_arm htw_table2_cancel
htw_table2_cancel_quiet htw_table2_gen htw_table2_peek htw_table2_advance
htw_table2_reap libhtwheel"

if ! command -v man >/dev/null; then
	echo "1..0 # SKIP man is not installed"
	exit 0
fi
n=0
total=$(($(echo "$pages" | wc -w) + $(echo "$funcs" | wc -w)))
echo "TAP version 13"
echo "1..$total"
rc=0
for p in $pages; do
	n=$((n + 1))
	name=$p
	warn=$(man --warnings -l "$p" 2>&1 >/dev/null)
	words=$(man -l "$p" 2>/dev/null | wc -w)
	if [ -z "$warn" ] && [ "$words" -gt 20 ]; then
		echo "ok $n $name"
	else
		echo "# $name: $words words; $warn"
		echo "not ok $n $name"
		rc=1
	fi
done
for f in $funcs; do
	n=$((n + 1))
	if [ -f "$mandir/man3/$f.3" ]; then
		echo "ok $n man3/$f.3 exists"
	else
		echo "not ok $n man3/$f.3 exists"
		rc=1
	fi
done
exit $rc
