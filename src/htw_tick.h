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

/*
 * htw_wheel_create() normalises a copy of @geo (htw_geometry_normalise())
 * and returns the wheel or ERR_PTR(-EINVAL or -ENOMEM), never NULL.
 * htw_wheel_destroy() stops the hrtimer and the run work synchronously,
 * then frees every timer and record; it must not race with any other call
 * on the wheel, and may sleep (it frees a batch at a time).
 */
struct htw_wheel *htw_wheel_create(const struct htw_geometry *geo,
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

#endif /* _HTW_TICK_H */
