// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the memory of timers: a wheel destroyed with timers
 * pending, queued, periodic or firing gives every one back, and so does
 * cancelling many; by the module's own counter of live timers and by the
 * slab's count of live timer chunks, which a leak in the counter itself
 * cannot hide from.  Cancel gives a timer back to its wheel's table; the
 * chunks go with the wheel.
 */
#include <kunit/test.h>
#include <linux/delay.h>

#include "htw_kunit.h"

/* ---- htwheel_lifetime ---- */

/*
 * Destroy with timers pending, queued and periodic: everything freed, by
 * the module's counter and by the slab's own count of live objects.
 */
static void htwheel_lifetime_destroy_in_flight(struct kunit *test)
{
	struct htw_geometry geo = htw_t_geo(MS, 64, 64);
	long slab = htw_t_slab_objects(test);
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 i;

	w = htw_wheel_create(&geo, htw_t_clock(test, 0), NULL, NULL, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	for (i = 0; i < 40; i++)
		htw_t_sched(test, w, i, i * 3 * MS, i % 3 ? 0 : 5 * MS, 0);
	htw_t_at(w, 50 * MS);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_GT(test, st.ready, 0);	/* some queued, some pending */
	KUNIT_EXPECT_GT(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->handles.used), 40);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + HTW_T_CHUNKS(40));
	htw_wheel_destroy(w);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab);
}

/* A real wheel destroyed while its hrtimer is armed and timers expire. */
static void htwheel_lifetime_destroy_running(struct kunit *test)
{
	struct htw_geometry geo = htw_t_geo(50 * US, 64, 1000);
	long slab = htw_t_slab_objects(test);
	struct htw_wheel *w;
	u64 i, now;

	w = htw_wheel_create(&geo, &htw_hrtimer_clock, NULL, NULL, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	now = htw_wheel_now(w);
	for (i = 0; i < 500; i++)
		htw_t_sched(test, w, i, now + i * 10 * US, i % 5 ? 0 : 100 * US, 0);
	usleep_range(1000, 2000);
	/* fired or not, nobody read a record: all 500 are still allocated */
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->handles.used), 500);
	htw_wheel_destroy(w);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab);
}

/*
 * Many timers scheduled and cancelled: all memory comes back.  The
 * 1,000,000-timer run is htwheel_tt_million (second boot): under KASAN and
 * kmemleak one slab allocation plus free costs ~50 us in UML.
 */
static void htwheel_lifetime_many(struct kunit *test)
{
	const u32 n = 20000;
	long slab = htw_t_slab_objects(test);
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 *handles;
	u32 i, ok = 0;

	handles = kunit_kcalloc(test, n, sizeof(*handles), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, handles);
	w = htw_t_manual(test, MS, 512, n, 0);
	for (i = 0; i < n; i++)
		handles[i] = htw_t_sched(test, w, i, (u64)(i * 7919U % n) * MS + 1,
					 0, 0);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, n);
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->handles.used), n);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + HTW_T_CHUNKS(n));
	for (i = 0; i < n; i++)
		ok += htw_wheel_cancel(w, handles[i]) == HTW_WHEEL_CANCEL_OK;
	KUNIT_EXPECT_EQ(test, ok, n);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, n);
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->handles.used), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 1);	/* stale, harmless */
	/* the wheel still exists and keeps its chunks for its next timers */
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + HTW_T_CHUNKS(n));
}

static struct kunit_case htwheel_lifetime_cases[] = {
	KUNIT_CASE(htwheel_lifetime_destroy_in_flight),
	KUNIT_CASE(htwheel_lifetime_destroy_running),
	KUNIT_CASE(htwheel_lifetime_many),
	{}
};

static struct kunit_suite htwheel_lifetime_suite = {
	.name = "htwheel_lifetime",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_lifetime_cases,
};

kunit_test_suite(htwheel_lifetime_suite);
