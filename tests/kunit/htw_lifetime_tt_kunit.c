// SPDX-License-Identifier: GPL-2.0
/*
 * 1,000,000 timers scheduled and cancelled on one wheel, with every byte
 * handed back.  Not about time: it runs in the second (time-travel) boot
 * because under KASAN, kmemleak and SLUB_RCU_DEBUG a million slab
 * allocations and frees take about a minute of real time in UML, more than
 * the real-time run may spend.  The wheel's own work is O(1) per timer.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "htw_kunit.h"

#define HTW_MILLION	1000000U

static void htwheel_tt_million_schedule_cancel(struct kunit *test)
{
	struct htw_geometry geo = {
		.tick_ns = max_t(u64, NSEC_PER_MSEC, hrtimer_resolution),
		.slots = 512,
		.clockid = CLOCK_MONOTONIC, .max_pending = HTW_MILLION,
	};
	long slab = htw_t_slab_objects(test);
	struct htw_timer_spec spec = {};
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u32 i, ok = 0, failed = 0;
	u64 *handles;

	handles = vmalloc(array_size(HTW_MILLION, sizeof(*handles)));
	KUNIT_ASSERT_NOT_NULL(test, handles);
	w = htw_wheel_create(&geo, htw_t_clock(test, 0), NULL, NULL, GFP_KERNEL);
	if (IS_ERR(w)) {
		vfree(handles);
		KUNIT_FAIL(test, "create: %ld", PTR_ERR(w));
		return;
	}
	for (i = 0; i < HTW_MILLION; i++) {
		spec.cookie = i;
		/* spread over 100 s: every level-0 and level-1 bucket in use */
		spec.deadline_ns = (u64)(i * 2654435761U % 100000000U) *
				   NSEC_PER_USEC + 1;
		failed += htw_wheel_schedule(w, &spec, &handles[i]) != 0;
	}
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, failed, 0);
	KUNIT_EXPECT_EQ(test, st.pending, HTW_MILLION);
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->handles.used), HTW_MILLION);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + HTW_T_CHUNKS(HTW_MILLION));

	for (i = 0; i < HTW_MILLION; i++)
		ok += htw_wheel_cancel(w, handles[i]) == HTW_WHEEL_CANCEL_OK;
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, ok, HTW_MILLION);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, HTW_MILLION);
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->handles.used), 0);
	/* every handle is dead now */
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, handles[0]), HTW_WHEEL_CANCEL_UNKNOWN);
	/* the wheel still exists and keeps its chunks for its next timers */
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + HTW_T_CHUNKS(HTW_MILLION));
	htw_wheel_destroy(w);
	vfree(handles);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab);
}

static struct kunit_case htwheel_tt_million_cases[] = {
	KUNIT_CASE(htwheel_tt_million_schedule_cancel),
	{}
};

static struct kunit_suite htwheel_tt_million_suite = {
	.name = "htwheel_tt_million",
	/* A million timers under the checkers: with time-travel=inf-cpu. */
	.attr.speed = KUNIT_SPEED_VERY_SLOW,
	.test_cases = htwheel_tt_million_cases,
};

kunit_test_suites(&htwheel_tt_million_suite);
