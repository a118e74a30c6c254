// SPDX-License-Identifier: GPL-2.0
/*
 * Hour-long delays on a real wheel, run only in the UML boot with
 * time-travel=inf-cpu, where idle time passes instantly.
 *
 * KUnit stops a test case after 300 s, simulated seconds included, so the
 * long wait happens once in suite_init (which is not timed) and the cases
 * check what it recorded.
 */
#include <kunit/test.h>
#include <linux/wait.h>
#include <linux/slab.h>

#include "htw_kunit.h"

#define HTW_TT_TIMERS	5

static const u64 htw_tt_delays[HTW_TT_TIMERS] = {
	3600ULL * NSEC_PER_SEC,			/* 1 h */
	3600ULL * NSEC_PER_SEC + 1,		/* 1 h + 1 ns */
	5400ULL * NSEC_PER_SEC - 1,		/* 1.5 h - 1 ns */
	7200ULL * NSEC_PER_SEC,			/* 2 h */
	600ULL * NSEC_PER_SEC,			/* 10 min */
};

static struct {
	int err;
	u64 idle_wakeups;	/* over one idle hour */
	u64 deadline[HTW_TT_TIMERS];
	struct htw_wheel_expiry rec[HTW_TT_TIMERS];	/* by cookie */
	u32 got;
	struct htw_wheel_stats st;
	struct htw_geometry geo;
	atomic_t calls;
	wait_queue_head_t wq;
} htw_tt;

static void htw_tt_ready(struct htw_wheel *w, void *owner)
{
	atomic_inc(&htw_tt.calls);
	wake_up(&htw_tt.wq);
}

/* Interruptible waits: a 2 h sleep must not look like a hung task. */
static void htw_tt_sleep_until(struct htw_wheel *w, u64 until)
{
	while (htw_wheel_now(w) < until)
		wait_event_interruptible_timeout(htw_tt.wq, false, 60 * HZ);
}

static void htw_tt_collect(struct htw_wheel *w)
{
	struct htw_wheel_expiry rec[HTW_TT_TIMERS];
	size_t n, i;

	n = htw_wheel_peek_ready(w, rec, HTW_TT_TIMERS);
	for (i = 0; i < n && rec[i].cookie < HTW_TT_TIMERS; i++) {
		htw_tt.rec[rec[i].cookie] = rec[i];
		htw_tt.got++;
	}
	htw_wheel_consume_ready(w, rec, n);
}

static int htw_tt_suite_init(struct kunit_suite *suite)
{
	/* time travel runs hrtimers in low-resolution mode: honour it */
	struct htw_geometry geo = {
		.tick_ns = max_t(u64, NSEC_PER_MSEC, hrtimer_resolution),
		.slots = 64, .clockid = CLOCK_MONOTONIC, .max_pending = 16,
	};
	struct htw_timer_spec spec = {};
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 now, h;
	int i;

	init_waitqueue_head(&htw_tt.wq);
	w = htw_wheel_create(&geo, &htw_hrtimer_clock, htw_tt_ready, NULL, GFP_KERNEL);
	if (IS_ERR(w)) {
		htw_tt.err = PTR_ERR(w);
		return 0;
	}
	htw_wheel_geometry(w, &htw_tt.geo);
	htw_tt_sleep_until(w, htw_wheel_now(w) + 3600ULL * NSEC_PER_SEC);
	htw_wheel_get_stats(w, &st);
	htw_tt.idle_wakeups = st.tick_wakeups;

	now = htw_wheel_now(w);
	for (i = 0; i < HTW_TT_TIMERS; i++) {
		spec.cookie = i;
		spec.deadline_ns = now + htw_tt_delays[i];
		htw_tt.deadline[i] = spec.deadline_ns;
		htw_tt.err = htw_wheel_schedule(w, &spec, &h);
		if (htw_tt.err)
			goto out;
	}
	while (htw_tt.got < HTW_TT_TIMERS &&
	       htw_wheel_now(w) < now + 3 * 3600ULL * NSEC_PER_SEC) {
		wait_event_interruptible_timeout(htw_tt.wq, htw_wheel_has_ready(w),
						 60 * HZ);
		htw_tt_collect(w);
	}
out:
	htw_wheel_get_stats(w, &htw_tt.st);
	htw_wheel_destroy(w);
	return 0;
}

static void htwheel_tt_idle_hour_no_wakeups(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, htw_tt.err, 0);
	KUNIT_EXPECT_EQ(test, htw_tt.idle_wakeups, 0);
}

/* Fired at the first tick >= deadline, plus (simulated) latency. */
static void htwheel_tt_hours_never_early(struct kunit *test)
{
	int i;

	KUNIT_ASSERT_EQ(test, htw_tt.err, 0);
	KUNIT_ASSERT_EQ(test, htw_tt.got, HTW_TT_TIMERS);
	for (i = 0; i < HTW_TT_TIMERS; i++) {
		KUNIT_EXPECT_GE(test, htw_tt.rec[i].fired_ns, htw_tt.deadline[i]);
		KUNIT_EXPECT_LT(test, htw_tt.rec[i].fired_ns - htw_tt.deadline[i],
				htw_tt.geo.tick_ns + 100 * NSEC_PER_MSEC);
	}
	KUNIT_EXPECT_EQ(test, htw_tt.st.fired, HTW_TT_TIMERS);
	KUNIT_EXPECT_EQ(test, htw_tt.st.pending, 0);
}

/* The wheel's lateness statistics are those of the five records. */
static void htwheel_tt_lateness_stats_match_records(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, htw_tt.err, 0);
	KUNIT_ASSERT_EQ(test, htw_tt.got, HTW_TT_TIMERS);
	htw_t_expect_lateness(test, &htw_tt.st, htw_tt.rec, HTW_TT_TIMERS);
}

/*
 * Two hours are 720,000 ticks or more; the wheel woke only where a timer
 * expired or moved down a level: at most once per timer per level.
 */
static void htwheel_tt_wakeups_per_timer_not_per_tick(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, htw_tt.err, 0);
	KUNIT_EXPECT_LE(test, htw_tt.st.cascaded,
			(u64)HTW_TT_TIMERS * (htw_tt.geo.levels - 1));
	KUNIT_EXPECT_LE(test, htw_tt.st.tick_wakeups,
			(u64)HTW_TT_TIMERS * htw_tt.geo.levels + 2);
	kunit_info(test, "wakeups %llu cascaded %llu max late %llu ns",
		   htw_tt.st.tick_wakeups, htw_tt.st.cascaded,
		   htw_tt.st.max_late_ns);
}

static struct kunit_case htwheel_tt_cases[] = {
	KUNIT_CASE(htwheel_tt_idle_hour_no_wakeups),
	KUNIT_CASE(htwheel_tt_hours_never_early),
	KUNIT_CASE(htwheel_tt_lateness_stats_match_records),
	KUNIT_CASE(htwheel_tt_wakeups_per_timer_not_per_tick),
	{}
};

static struct kunit_suite htwheel_tt_wheel_suite = {
	.name = "htwheel_tt_wheel",
	/* Hours of simulated time: only with time-travel=inf-cpu. */
	.attr.speed = KUNIT_SPEED_VERY_SLOW,
	.suite_init = htw_tt_suite_init,
	.test_cases = htwheel_tt_cases,
};

kunit_test_suites(&htwheel_tt_wheel_suite);
