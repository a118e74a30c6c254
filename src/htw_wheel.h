/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel wheel: the timer store of one wheel (its buckets, ready queue and
 * handles) and the operations that need no clock, for the device
 * (htw_dev.c), the tick (htw_tick.c) and the KUnit suites.  Nothing here
 * knows about files, ioctls or user memory.  The operations that arm,
 * pause or stop a wheel's hrtimer (create, destroy, schedule, consume,
 * drain) belong to the tick, which calls down into this layer: htw_tick.h.
 *
 * An instance ("wheel") keeps timers on an absolute tick grid
 * (htw_grid.h): a timer with deadline d expires at the first tick whose
 * start is >= d, so it can never fire early.  Timers live in power-of-two
 * buckets on one of several levels and cascade towards level 0 as their
 * tick approaches; each timer moves at most once per level.  See
 * Documentation/htwheel-design.rst.
 */
#ifndef _HTW_WHEEL_H
#define _HTW_WHEEL_H

#include <linux/types.h>

#include "htw_grid.h"

struct htw_wheel;

/* What a caller asks for when scheduling one timer. */
struct htw_timer_spec {
	u64 cookie;		/* opaque, returned on expiry */
	u64 deadline_ns;	/* absolute, on the wheel's clock */
	u64 period_ns;		/* 0: one-shot */
	u64 slack_ns;		/* may fire up to this much later, to coalesce */
};

/* One expiry handed back to the owner of the wheel. */
struct htw_wheel_expiry {
	u64 cookie;
	u64 handle;
	u64 deadline_ns;	/* the deadline that expired */
	u64 fired_ns;		/* clock time of the tick that moved it to ready */
	u32 overrun;		/* periods that expired beyond the first */
	u32 flags;		/* HTW_EXPIRY_* */
};

#define HTW_WHEEL_EXPIRY_PERIODIC	0x1

/* One timer that never ran, as handed back by htw_wheel_drain(). */
struct htw_wheel_unexpired {
	u64 cookie;
	u64 handle;
	u64 remaining_ns;	/* deadline minus now, 0 if already due */
};

/* Results of htw_wheel_cancel(). */
enum htw_cancel_status {
	HTW_WHEEL_CANCEL_OK = 0,	/* was pending; will never be delivered */
	HTW_WHEEL_CANCEL_FIRED = 1,	/* already expired; its record is queued or read */
	HTW_WHEEL_CANCEL_UNKNOWN = 2,	/* no such timer: stale, foreign or garbage */
};

/* Results of htw_wheel_rearm() (htw_tick.h). */
enum htw_rearm_status {
	HTW_WHEEL_REARM_PENDING = 0,	/* was pending; moved */
	HTW_WHEEL_REARM_FIRED = 1,	/* record withdrawn; pending again */
	HTW_WHEEL_REARM_UNKNOWN = 2,	/* no such timer; nothing changed */
	HTW_WHEEL_REARM_SERIALISE = 3,	/* nothing changed: retry serialised */
};

/* htw_wheel_rearm() flags */
#define HTW_WHEEL_REARM_WITHDRAW	0x1	/* may take a queued record back */

struct htw_wheel_stats {
	u64 pending;		/* scheduled, not yet expired */
	u64 ready;		/* expired, record not yet taken */
	u64 scheduled;		/* total accepted by htw_wheel_schedule() */
	u64 fired;		/* total expiries (periodic: each period counts) */
	u64 cancelled;
	u64 cascaded;		/* moves from a level to a finer one */
	u64 tick_wakeups;	/* hrtimer callback invocations */
	u64 max_late_ns;
	u64 late_hist[32];	/* [i]: lateness in [2^i, 2^(i+1)) ns, [0] also 0 */
};

/*
 * Called by the tick after new timers moved to the ready queue: from the
 * hrtimer's softirq, or from the wheel's work item (process context) for
 * the later batches of a big run; no wheel lock is held.  Must not sleep.
 */
typedef void (*htw_ready_fn)(struct htw_wheel *wheel, void *owner);

/* Create and destroy the timer chunk cache; from module init and exit. */
int htw_wheel_module_init(void);
void htw_wheel_module_exit(void);

void htw_wheel_geometry(const struct htw_wheel *wheel, struct htw_geometry *geo);
/*
 * Bytes a wheel of @geo allocates when it is created (bucket array,
 * occupancy bitmap, timer-table directory; not its timers), so that they
 * can be charged before it exists.  0 for a geometry that is refused.
 */
size_t htw_wheel_footprint(const struct htw_geometry *geo);

#ifdef HTW_TEST_BUILD
/* Where a timer is, as htw_wheel_inspect() reports it. */
struct htw_placement {
	u32 state;		/* enum htw_state (htw_internal.h) */
	u32 level;
	u32 index;		/* bucket within the level */
	u64 expires;		/* tick index */
};

/* For the suites: where the timer of @handle is; -ENOENT if nowhere. */
int htw_wheel_inspect(struct htw_wheel *wheel, u64 handle,
		      struct htw_placement *p);
#endif

/*
 * A wheel's clock, passed in when it is created: the time, and the
 * wake-ups of its tick.  The device's wheels run on htw_hrtimer_clock
 * (htw_tick.h): ktime of the geometry's clockid and the wheel's hrtimer.
 * A KUnit suite passes a clock of its own, whose time it sets and whose
 * wake-ups it only records, to check placement and firing exactly.
 */
struct htw_clock {
	/* The time now, in ns of the wheel's geo.clockid. */
	u64 (*now)(const struct htw_wheel *wheel);
	/* Wake the wheel's tick at @at ns of that clock; never early. */
	void (*arm)(struct htw_wheel *wheel, u64 at);
	/* Nothing to wake for any more (the wheel is idle). */
	void (*disarm)(struct htw_wheel *wheel);
};

u64 htw_wheel_now(const struct htw_wheel *wheel);
/* The time on @clockid as wheels on that clock see it. */
u64 htw_clock_now(clockid_t clockid);

/*
 * The wheel's rule for a timer: -EINVAL for a spec a wheel of @geo would
 * refuse whatever its state (a period shorter than the tick), else 0.
 */
int htw_spec_check(const struct htw_geometry *geo,
		   const struct htw_timer_spec *spec);

/*
 * Any handle value is safe to pass.  A one-shot's handle is UNKNOWN once
 * its record was consumed; a periodic timer's stays FIRED while a record
 * of it is queued after it was cancelled.  A wheel never issues the same
 * handle value twice (an id whose generations run out is retired, and
 * schedule then returns -ENOSPC once every id is).
 */
enum htw_cancel_status htw_wheel_cancel(struct htw_wheel *wheel, u64 handle);
/*
 * Take back a timer the caller just scheduled but could not report (a
 * failed copy to user space), counters included, as if it never was.
 * A timer that already expired stays: its record will be delivered.
 */
void htw_wheel_unschedule(struct htw_wheel *wheel, u64 handle);

/*
 * Reading is two-phase so that a failed copy to user space loses nothing:
 * htw_wheel_peek_ready() describes up to @max records at the head of the
 * ready queue without removing them; htw_wheel_consume_ready() (htw_tick.h)
 * then removes the first @n of those (after the copy succeeded).  Records
 * leave the ready queue only through consume, destroy, and a re-arm with
 * HTW_WHEEL_REARM_WITHDRAW (serialised like a pair), and the tick
 * only appends or adds overruns, so a peek/consume pair sees the same head
 * provided the caller serialises its pairs (the device holds a per-fd
 * mutex).  Overruns that accrue between peek and consume stay queued for
 * the next read.  Both hold a wheel lock for the whole of @max or @n
 * records: keep those small (the device uses 8).
 */
size_t htw_wheel_peek_ready(struct htw_wheel *wheel,
			    struct htw_wheel_expiry *out, size_t max);
bool htw_wheel_has_ready(struct htw_wheel *wheel);

void htw_wheel_get_stats(struct htw_wheel *wheel, struct htw_wheel_stats *st);

#endif /* _HTW_WHEEL_H */
