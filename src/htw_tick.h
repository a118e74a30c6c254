/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel tick: a wheel's clock.  One hrtimer per wheel, armed on the
 * absolute grid for the next tick at which a non-empty bucket is due, and
 * the expiry processing it runs.  The calls below act on a whole wheel
 * (their names say so) but live here because each may arm, pause or stop
 * the hrtimer: the wheel's own operations (htw_wheel.h) report the points
 * they made and the tick arms for them, so the wheel never calls up.
 */
#ifndef _HTW_TICK_H
#define _HTW_TICK_H

#include "htw_wheel.h"

/* The workqueue of long runs; from module init and exit. */
int htw_tick_module_init(void);
void htw_tick_module_exit(void);

/* The clock of the device's wheels: ktime and an hrtimer per wheel. */
extern const struct htw_clock htw_hrtimer_clock;

/*
 * htw_wheel_create() normalises a copy of @geo (htw_geometry_normalise())
 * and returns the wheel or ERR_PTR(-EINVAL or -ENOMEM), never NULL; the
 * wheel runs on @clock, htw_hrtimer_clock unless a suite brings its own.
 * htw_wheel_destroy() stops the hrtimer and the run work synchronously,
 * then frees every timer and record; it must not race with any other call
 * on the wheel, and may sleep (it frees a batch at a time).
 */
struct htw_wheel *htw_wheel_create(const struct htw_geometry *geo,
				   const struct htw_clock *clock,
				   htw_ready_fn ready, void *owner, gfp_t gfp);
void htw_wheel_destroy(struct htw_wheel *wheel);

/*
 * Process context, may sleep.  Returns 0 and sets *handle, or
 * -ENOSPC (max_pending live timers already), -EDQUOT (the quota is
 * used up), -ENOMEM, or -EINVAL (htw_spec_check()).  On error
 * nothing changed, statistics included.  Never blocks on the tick.
 */
int htw_wheel_schedule(struct htw_wheel *wheel,
		       const struct htw_timer_spec *spec, u64 *handle);

/*
 * Move the timer @handle to the absolute @deadline_ns, keeping its handle,
 * cookie, period and slack, whether or not it already expired (the kernel's
 * mod_timer()).  A periodic timer's next expiry is @deadline_ns and its
 * later ones follow from there.  Returns
 *   HTW_WHEEL_REARM_PENDING: it was pending; now it is due at @deadline_ns;
 *   HTW_WHEEL_REARM_SERIALISE: without HTW_WHEEL_REARM_WITHDRAW, nothing
 *			      changed: its record is queued, or a drain is
 *			      moving through the buckets; call again with
 *			      the flag, serialised;
 *   HTW_WHEEL_REARM_FIRED:   with HTW_WHEEL_REARM_WITHDRAW, that record
 *			      was taken off the ready queue (it will not be
 *			      delivered) and the timer is pending again;
 *   HTW_WHEEL_REARM_UNKNOWN: no such timer (also a cancelled periodic one
 *			      whose last record is queued); nothing changed.
 * Without the flag it takes only bucket locks and never waits for a
 * reader; with it the caller serialises the call with peek/consume pairs
 * and drains (the device holds its per-fd mutex), as those walk the ready
 * queue.  Process context; never sleeps.
 */
enum htw_rearm_status htw_wheel_rearm(struct htw_wheel *wheel, u64 handle,
				      u64 deadline_ns, unsigned int flags);

/*
 * A wheel whose timers are the @entries slots of a table shared with user
 * space (htw_table.h), deadlines in a time namespace @offset from the
 * host's clock (htw_table_init()); @geo as for htw_wheel_create(), its
 * max_pending and quota ignored (the caller charges the slots).
 * ERR_PTR(-EINVAL or -ENOMEM).
 * Destroyed with htw_wheel_destroy().  It takes no handles: schedule,
 * cancel, re-arm, read and drain are not for it.
 */
struct htw_wheel *htw_wheel_create_table(const struct htw_geometry *geo,
					 const struct htw_clock *clock,
					 htw_ready_fn ready, void *owner,
					 u32 entries, s64 offset);
/*
 * Take the table's submission ring in and run what is due, now, in
 * process context (may sleep); returns the submissions taken in.
 */
long htw_wheel_table_enter(struct htw_wheel *wheel);
/*
 * The consumer may have made room in the completion ring (poll, read):
 * if slots wait for it, run at the next tick rather than after the
 * backoff.  Any context where the caller may not sleep; cheap.
 */
void htw_wheel_table_room_made(struct htw_wheel *wheel);

/* The second phase of a read: see htw_wheel_peek_ready(). */
void htw_wheel_consume_ready(struct htw_wheel *wheel,
			     const struct htw_wheel_expiry *recs, size_t n);

/*
 * Cancel every pending timer; the first @max are described in @out.
 * Returns the number cancelled (may exceed @max).  Ready records stay.
 * Process context, may sleep: it works a batch at a time and pauses expiry
 * meanwhile.  The caller serialises drains with peek/consume pairs.
 */
size_t htw_wheel_drain(struct htw_wheel *wheel,
		       struct htw_wheel_unexpired *out, size_t max);

#ifdef HTW_TEST_BUILD
/* One batch of a run, as the hrtimer's would; true when it is complete. */
bool htw_run_batch(struct htw_wheel *w, bool from_hrtimer);
/* A whole run now, in process context: may sleep. */
void htw_run_all(struct htw_wheel *w);
/*
 * Hold expiry processing, as a drain does, and let it go, which arms for
 * the earliest due tick: a backlog built meanwhile expires at once.
 */
void htw_pause(struct htw_wheel *w);
void htw_resume(struct htw_wheel *w);
#endif

#endif /* _HTW_TICK_H */
