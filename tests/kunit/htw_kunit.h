/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit files of htwheel share, defined once in
 * htw_kunit_module.c: wheels on a manual clock, scheduling and reading
 * with the never-early check on every record, the lateness statistics a
 * set of records implies, and the htw_timer slab's object count for the
 * leak checks.  A helper only one file needs stays in that file.
 *
 * Out of line, not static inline: inlined into a test that calls them
 * often, their KUnit assertions' stack slots (kept apart under KASAN) push
 * the test's frame past the 1024-byte limit of -Wframe-larger-than.
 */
#ifndef _HTW_KUNIT_H
#define _HTW_KUNIT_H

#include <kunit/static_stub.h>
#include <kunit/test.h>

#include "htw_internal.h"
#include "htw_tick.h"

#define MS	NSEC_PER_MSEC
#define US	NSEC_PER_USEC

/* A kunit action that destroys the wheel it is given. */
void htw_t_destroy_action(void *wheel);

int htw_t_high_res(struct kunit_suite *suite);
struct htw_geometry htw_t_geo(u64 tick_ns, u32 slots, u64 max_pending);

/* A clock whose time the test sets (htw_t_set_now()); lives as the test. */
const struct htw_clock *htw_t_clock(struct kunit *test, u64 start_ns);
void htw_t_set_now(struct htw_wheel *w, u64 now_ns);

/* A manual-clock wheel destroyed when the test ends. */
struct htw_wheel *htw_t_manual(struct kunit *test, u64 tick_ns, u32 slots,
			       u64 max_pending, u64 start_ns);

/* Move the manual clock to @now_ns and run the tick there. */
void htw_t_at(struct htw_wheel *w, u64 now_ns);

/* Schedule a timer that must be accepted; returns its handle. */
u64 htw_t_sched(struct kunit *test, struct htw_wheel *w, u64 cookie,
		u64 deadline, u64 period, u64 slack);

/* Up to @max records off the ready queue, each checked never early. */
size_t htw_t_take(struct kunit *test, struct htw_wheel *w,
		  struct htw_wheel_expiry *out, size_t max);

void htw_t_stats(struct htw_wheel *w, struct htw_wheel_stats *st);

/* How many different values @v holds (sorted in place). */
u32 htw_t_distinct(u64 *v, u32 n);

/* The wheel's lateness statistics are those of these one-shot records. */
void htw_t_expect_lateness(struct kunit *test, const struct htw_wheel_stats *st,
			   const struct htw_wheel_expiry *recs, size_t n);

/* Live objects of the htw_timer slab: real memory, not the module's count. */
long htw_t_slab_objects(struct kunit *test);
/* Chunks of the htw_timer cache a fresh wheel takes for @n timers. */
#define HTW_T_CHUNKS(n)	DIV_ROUND_UP(n, HTW_IDS_PER_CHUNK)

#endif /* _HTW_KUNIT_H */
