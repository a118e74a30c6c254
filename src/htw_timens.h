/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: absolute times on the clock of a time namespace.
 *
 * Wheels run on the host's clocks.  Absolute times that cross the ABI (an
 * HTW_TIMER_ABSTIME deadline in, deadline_ns and expired_ns of read()
 * records out) are on the clock of the time namespace of the task that
 * opened the file, which is the host's clock plus that namespace's offset.
 * The offsets of a namespace are frozen once a task has joined it, so the
 * device captures them at open() and converts with the pure functions
 * below.  Relative delays need no conversion.
 */
#ifndef _HTW_TIMENS_H
#define _HTW_TIMENS_H

#include <linux/limits.h>
#include <linux/nsproxy.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/time.h>
#include <linux/time_namespace.h>
#include <linux/types.h>

/* A time namespace's offsets, ns: its clock minus the host's. */
struct htw_timens {
	s64 monotonic;
	s64 boottime;
};

/* The offsets of the current task's time namespace; 0 outside one. */
static inline void htw_timens_capture(struct htw_timens *tn)
{
	const struct timens_offsets *off;

	tn->monotonic = 0;
	tn->boottime = 0;
	/* Without CONFIG_TIME_NS there is no namespace and no offset. */
	if (!IS_ENABLED(CONFIG_TIME_NS))
		return;
	off = &current->nsproxy->time_ns->offsets;
	tn->monotonic = timespec64_to_ns(&off->monotonic);
	tn->boottime = timespec64_to_ns(&off->boottime);
}

/*
 * Whether the current task's clocks are those @tn captured: its time
 * namespace has the same offsets (the opener's, or one just like it), so
 * that absolute times mean the same to both.
 */
static inline bool htw_timens_is_current(const struct htw_timens *tn)
{
	struct htw_timens now;

	htw_timens_capture(&now);
	return now.monotonic == tn->monotonic && now.boottime == tn->boottime;
}

static inline s64 htw_timens_offset(const struct htw_timens *tn,
				    clockid_t clockid)
{
	return clockid == CLOCK_BOOTTIME ? tn->boottime : tn->monotonic;
}

/* |@offset| as a u64, S64_MIN included. */
static inline u64 htw_timens_magnitude(s64 offset)
{
	return offset < 0 ? 0 - (u64)offset : (u64)offset;
}

/*
 * A namespace time as a host time, like do_timens_ktime_to_host(): a time
 * before the namespace's offset is already due (0); saturates at U64_MAX.
 */
static inline u64 htw_timens_to_host(u64 ns_time, s64 offset)
{
	u64 mag = htw_timens_magnitude(offset), host;

	if (offset >= 0)
		return ns_time > mag ? ns_time - mag : 0;
	return check_add_overflow(ns_time, mag, &host) ? U64_MAX : host;
}

/* A host time on the namespace's clock; saturates at 0 and U64_MAX. */
static inline u64 htw_timens_from_host(u64 host_time, s64 offset)
{
	u64 mag = htw_timens_magnitude(offset), ns_time;

	if (offset < 0)
		return host_time > mag ? host_time - mag : 0;
	return check_add_overflow(host_time, mag, &ns_time) ? U64_MAX : ns_time;
}

#endif /* _HTW_TIMENS_H */
