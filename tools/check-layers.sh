#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-layers.sh SRCDIR [OBJDIR]: the module's files call and include
# only downwards.  This list is the one statement of the layering (the
# design doc describes it); a file may use what a lower layer or its own
# concept defines, never a higher layer's, and never a sibling's on the
# same layer.  With OBJDIR (where htw_*.o were built) the symbols each
# object uses are checked too (nm -u), not only the #include lines.
set -euo pipefail

# concept:layer.  Rank 0 are headers every file may include, and
# htw_trace.c, which only creates the trace events of htw_trace.h.
layers=(
	compat:0 timens:0 test_hooks:0 api:0 trace:0
	grid:1
	handles:2 limits:2
	wheel:3 internal:3 userns:3
	table:4
	tick:5
	table_fd:6
	dev:7
	main:8
)

declare -A rank concept
for entry in "${layers[@]}"; do
	name=${entry%%:*}
	rank[$name]=${entry##*:}
	concept[$name]=$name
done
concept[internal]=wheel

srcdir=$1
objdir=${2:-}
bad=0

# upward USER USED WHAT: complain when USER may not use USED.
upward() {
	local user=$1 used=$2 what=$3
	[ -n "${rank[$used]:-}" ] || { echo "check-layers: $user: $what: unknown file htw_$used"; bad=1; return; }
	[ "${rank[$used]}" -eq 0 ] && return
	[ "${concept[$used]}" = "${concept[$user]}" ] && return
	if [ "${rank[$used]}" -ge "${rank[$user]}" ]; then
		echo "check-layers: htw_$user (layer ${rank[$user]}) uses htw_$used (layer ${rank[$used]}): $what"
		bad=1
	fi
}

for f in "$srcdir"/htw_*.[ch]; do
	user=$(basename "$f"); user=${user#htw_}; user=${user%.?}
	[ -n "${rank[$user]:-}" ] || { echo "check-layers: $f is in no layer (add it to $0)"; bad=1; continue; }
	while read -r inc; do
		upward "$user" "$inc" "#include \"htw_$inc.h\""
	done < <(sed -n 's/^#include "htw_\([a-z_]*\)\.h"/\1/p' "$f")
done

if [ -n "$objdir" ]; then
	declare -A owner
	for o in "$objdir"/htw_*.o; do
		name=$(basename "$o" .o); name=${name#htw_}
		while read -r sym; do owner[$sym]=$name; done < <(nm --defined-only "$o" | awk '$2 ~ /[TDBR]/ {print $3}')
	done
	for o in "$objdir"/htw_*.o; do
		user=$(basename "$o" .o); user=${user#htw_}
		while read -r sym; do
			[ -n "${owner[$sym]:-}" ] && upward "$user" "${owner[$sym]}" "calls $sym()"
		done < <(nm -u "$o" | awk '{print $2}')
	done
fi
exit $bad
