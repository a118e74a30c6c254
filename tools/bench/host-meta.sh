#!/usr/bin/env bash
# Facts about the host around one benchmark boot, as meta lines of the
# sample format (Documentation/benchmark.rst) for tools/bench/report.py:
#
#   tools/bench/host-meta.sh WHEN      WHEN: before or after
#
# The 1, 5 and 15 minute load averages and the host's "cpu" line of
# /proc/stat (user nice system idle iowait irq softirq steal, in
# USER_HZ): the report takes the steal share of the boot from the
# difference of the two.  Other engineers' work on a shared machine or a
# hypervisor's steal moves every absolute figure; the record says whether
# a run was quiet.  "before" also records the commit (with "-dirty" for
# uncommitted changes) and the seed, $HTW_BENCH_SEED.
set -euo pipefail
when=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$when" = before ]; then
	printf 'meta\tgit commit\t%s\n' "$(git -C "$top" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)"
	printf 'meta\tseed\t%s\n' "${HTW_BENCH_SEED:?}"
fi
printf 'meta\thost loadavg %s\t%s\n' "$when" "$(cat /proc/loadavg)"
printf 'meta\thost cpu %s\t%s\n' "$when" "$(awk '$1 == "cpu" { print $2, $3, $4, $5, $6, $7, $8, $9; exit }' /proc/stat)"
printf 'meta\thost date %s\t%s\n' "$when" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
