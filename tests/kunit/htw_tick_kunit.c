// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the tick: the run that fires the timers due, moves
 * the others down the levels and re-arms the hrtimer for the next event.
 *
 * - htwheel_batches: a run stops after HTW_BATCH timers, so that one
 *   hrtimer callback stays short, and resumes where it stopped with
 *   schedule, cancel, drain and read in between.
 * - htwheel_lateness: on a manual clock every expiry's lateness is exact,
 *   and each is counted in the histogram bucket worked out by hand.
 * - htwheel_realtime: real wheels with their hrtimer on CLOCK_MONOTONIC:
 *   no wakeups while idle, none early, wakeups per timer and not per
 *   tick, schedule and cancel from two threads while the tick runs.  No
 *   tight upper bounds on time: the test kernel is slow and shared.
 *
 * Hour-long delays need time travel: htw_tick_tt_kunit.c.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/wait.h>

#include "htw_kunit.h"

/* ---- htwheel_batches ---- */

/* Read every queued record, each checked against the never-early rule. */
static size_t htw_t_take_all(struct kunit *test, struct htw_wheel *w)
{
	struct htw_wheel_expiry rec[16];
	size_t n, total = 0;

	while ((n = htw_t_take(test, w, rec, ARRAY_SIZE(rec))))
		total += n;
	return total;
}

/*
 * 3 batches and a bit due at one tick, plus some on a coarser level that
 * cascade at the same tick: the first batch stops with the tick half done;
 * cancels, a new timer and reads happen in between, and the run resumes.
 */
static void htwheel_batches_resume_mid_tick(struct kunit *test)
{
	const u32 n = 3 * HTW_BATCH + 5;
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 2 * n, 0);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	struct htw_wheel_stats st;
	u32 i, cancelled = 0, batches = 1;
	u64 late;

	KUNIT_ASSERT_NOT_NULL(test, h);
	for (i = 0; i < n; i++)
		h[i] = htw_t_sched(test, w, i, (i % 3 ? 64 : 10) * MS, 0, 0);
	htw_t_set_now(w, 64 * MS);
	KUNIT_ASSERT_FALSE(test, htw_run_batch(w, false));
	/* At most one batch fired; cancel some of what is left. */
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_LE(test, st.fired, HTW_BATCH);
	for (i = 0; i < n; i += 7)
		cancelled += htw_wheel_cancel(w, h[i]) == HTW_WHEEL_CANCEL_OK;
	KUNIT_EXPECT_GT(test, cancelled, 0);
	/* Due now, scheduled while the tick is open: fires, at most a tick late. */
	late = htw_t_sched(test, w, n, 64 * MS, 0, 0);
	htw_t_take_all(test, w);
	while (!htw_run_batch(w, false))
		batches++;
	KUNIT_EXPECT_GE(test, batches, 2);
	htw_t_set_now(w, 65 * MS);
	htw_run_all(w);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.fired + cancelled, n + 1);
	htw_t_take_all(test, w);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, late), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.ready, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), U64_MAX);
}

/* A drain while a run is stopped between batches takes all the rest. */
static void htwheel_batches_drain_stopped_run(struct kunit *test)
{
	const u32 n = 2 * HTW_BATCH + 100;
	struct htw_wheel *w = htw_t_manual(test, MS, 64, n, 0);
	struct htw_wheel_stats st;
	size_t drained, read;
	u32 i;

	for (i = 0; i < n; i++)
		htw_t_sched(test, w, i, 10 * MS, 0, 0);
	htw_t_set_now(w, 10 * MS);
	KUNIT_ASSERT_FALSE(test, htw_run_batch(w, false));
	drained = htw_wheel_drain(w, NULL, 0);
	htw_run_all(w);
	read = htw_t_take_all(test, w);
	KUNIT_EXPECT_EQ(test, read, HTW_BATCH);
	KUNIT_EXPECT_EQ(test, drained + read, n);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, drained);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), U64_MAX);
}

static struct kunit_case htwheel_batches_cases[] = {
	KUNIT_CASE(htwheel_batches_resume_mid_tick),
	KUNIT_CASE(htwheel_batches_drain_stopped_run),
	{}
};

static struct kunit_suite htwheel_batches_suite = {
	.name = "htwheel_batches",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_batches_cases,
};

/* ---- htwheel_lateness: a manual clock makes every lateness exact ---- */

struct htw_late_case {
	u64 deadline_ns;
	u64 at_ns;		/* the clock is moved here, in this order */
	u64 late_ns;		/* so the expiry is this late ... */
	u32 bucket;		/* ... and counted here (worked out by hand) */
};

/*
 * Tick 1 ms from 0.  Deadlines L ns before a tick, with the clock moved
 * exactly onto that tick, are L late; the clock may also overshoot (a
 * late interrupt), a deadline may be in the past when it is scheduled,
 * and a lateness of 2^31 ns or more is in the last, open-ended bucket.
 */
static const struct htw_late_case htw_late_cases[] = {
	{ 10 * MS,		10 * MS,	0,		0 },
	{ 11 * MS - 1,		11 * MS,	1,		0 },
	{ 12 * MS - 2,		12 * MS,	2,		1 },
	{ 13 * MS - 3,		13 * MS,	3,		1 },
	{ 14 * MS - 4,		14 * MS,	4,		2 },
	{ 15 * MS - 7,		15 * MS,	7,		2 },
	{ 16 * MS - 8,		16 * MS,	8,		3 },
	{ 17 * MS - 1023,	17 * MS,	1023,		9 },
	{ 18 * MS - 1024,	18 * MS,	1024,		10 },
	{ 19 * MS - 1025,	19 * MS,	1025,		10 },
	{ 20 * MS - 65535,	20 * MS,	65535,		15 },
	{ 21 * MS - 65536,	21 * MS,	65536,		16 },
	{ 22 * MS - 999999,	22 * MS,	999999,		19 },
	/* the clock jumps 3 ms + 5 ns past the deadline's tick */
	{ 30 * MS,		33 * MS + 5,	3 * MS + 5,	21 },
};

static void htwheel_lateness_exact(struct kunit *test)
{
	const size_t n = ARRAY_SIZE(htw_late_cases);
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 64, 0);
	u64 hist[ARRAY_SIZE(((struct htw_wheel_stats *)0)->late_hist)] = {};
	struct htw_wheel_expiry rec[2];
	struct htw_wheel_stats st;
	size_t i;

	for (i = 0; i < n; i++)
		htw_t_sched(test, w, i, htw_late_cases[i].deadline_ns, 0, 0);
	for (i = 0; i < n; i++) {
		const struct htw_late_case *c = &htw_late_cases[i];

		htw_t_at(w, c->at_ns);
		KUNIT_ASSERT_EQ_MSG(test, htw_t_take(test, w, rec, 2), 1, "case %zu", i);
		KUNIT_EXPECT_EQ(test, rec[0].cookie, i);
		KUNIT_EXPECT_EQ_MSG(test, rec[0].fired_ns - rec[0].deadline_ns,
				    c->late_ns, "case %zu", i);
		hist[c->bucket]++;
	}
	/* scheduled 51 ms + 7 ns in the past: fires on the next tick, 201 ms */
	htw_t_at(w, 200 * MS);
	htw_t_sched(test, w, 100, 150 * MS - 7, 0, 0);
	htw_t_at(w, 201 * MS);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].fired_ns - rec[0].deadline_ns, 51 * MS + 7);
	hist[25]++;		/* 2^25 = 33.6 ms <= 51 ms < 2^26 */
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.max_late_ns, 51 * MS + 7);

	/* 5 s late (a clock jump): 2^32 < 5e9, kept in the last bucket, 31 */
	htw_t_sched(test, w, 101, 1000 * MS, 0, 0);
	htw_t_at(w, 6000 * MS);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].fired_ns - rec[0].deadline_ns, 5000 * MS);
	hist[31]++;

	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.fired, n + 2);
	KUNIT_EXPECT_EQ(test, st.max_late_ns, 5000 * MS);
	for (i = 0; i < ARRAY_SIZE(hist); i++)
		KUNIT_EXPECT_EQ_MSG(test, st.late_hist[i], hist[i], "late_hist[%zu]", i);
}

static struct kunit_case htwheel_lateness_cases[] = {
	KUNIT_CASE(htwheel_lateness_exact),
	{}
};

static struct kunit_suite htwheel_lateness_suite = {
	.name = "htwheel_lateness",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_lateness_cases,
};

/* ---- htwheel_realtime: the hrtimer on CLOCK_MONOTONIC ---- */

struct htw_t_waiter {
	atomic_t calls;
	wait_queue_head_t wq;
};

static void htw_t_ready_cb(struct htw_wheel *w, void *owner)
{
	struct htw_t_waiter *wt = owner;

	atomic_inc(&wt->calls);
	wake_up(&wt->wq);
}

static struct htw_wheel *htw_t_real(struct kunit *test, u64 tick, u32 slots,
				    u64 max, struct htw_t_waiter *wt)
{
	struct htw_geometry geo = htw_t_geo(tick, slots, max);
	struct htw_wheel *w;

	atomic_set(&wt->calls, 0);
	init_waitqueue_head(&wt->wq);
	w = htw_wheel_create(&geo, &htw_hrtimer_clock, htw_t_ready_cb, wt, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action, w), 0);
	return w;
}

static u64 htw_t_fired(struct htw_wheel *w)
{
	struct htw_wheel_stats st;

	htw_wheel_get_stats(w, &st);
	return st.fired;
}

/* Idle wheel: hrtimer never armed, zero wakeups. */
static void htwheel_realtime_idle_no_wakeups(struct kunit *test)
{
	struct htw_t_waiter *wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 h, wakeups;

	KUNIT_ASSERT_NOT_NULL(test, wt);
	w = htw_t_real(test, MS, 64, 16, wt);
	msleep(200);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.tick_wakeups, 0);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&w->hrtimer));

	/* one timer: a handful of wakeups, then idle again */
	h = htw_t_sched(test, w, 1, htw_wheel_now(w) + 20 * MS, 0, 0);
	KUNIT_EXPECT_TRUE(test, hrtimer_active(&w->hrtimer));
	KUNIT_EXPECT_GT(test, wait_event_timeout(wt->wq, atomic_read(&wt->calls),
						 5 * HZ), 0);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_GE(test, st.tick_wakeups, 1);
	KUNIT_EXPECT_LE(test, st.tick_wakeups, 3);
	wakeups = st.tick_wakeups;
	msleep(200);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.tick_wakeups, wakeups);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_FIRED);
}

/*
 * Random delays up to 150 ms on a 1 ms tick, some in the past: all fire,
 * none early, and the wheel wakes for non-empty ticks only.
 */
static void htwheel_realtime_never_early(struct kunit *test)
{
	const u32 n = 200;
	struct htw_t_waiter *wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);
	struct htw_wheel_expiry *recs = kunit_kcalloc(test, n, sizeof(*recs), GFP_KERNEL);
	struct htw_wheel_stats st;
	struct rnd_state rnd;
	struct htw_wheel *w;
	u32 i, got = 0;
	u64 now;

	KUNIT_ASSERT_NOT_NULL(test, wt);
	KUNIT_ASSERT_NOT_NULL(test, recs);
	prandom_seed_state(&rnd, 42);
	w = htw_t_real(test, MS, 64, n, wt);
	now = htw_wheel_now(w);
	for (i = 0; i < n; i++) {
		u64 delay = (prandom_u32_state(&rnd) % 150000) * US;

		htw_t_sched(test, w, i, i % 10 ? now + delay : now - delay, 0, 0);
	}
	wait_event_timeout(wt->wq, htw_t_fired(w) == n, 10 * HZ);
	KUNIT_ASSERT_EQ(test, htw_t_fired(w), n);
	while (got < n) {
		u32 k = htw_t_take(test, w, recs + got, n - got);

		KUNIT_ASSERT_GT(test, k, 0);
		got += k;
	}
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.ready, 0);
	/* at most one wakeup per distinct tick plus cascades and a spare */
	KUNIT_EXPECT_LE(test, st.tick_wakeups, 150 + 10);
	kunit_info(test, "wakeups %llu max late %llu ns cascaded %llu", st.tick_wakeups,
		   st.max_late_ns, st.cascaded);
	htw_t_expect_lateness(test, &st, recs, n);
}

/* Sparse timers: wakeups track timers, not the 1 ms ticks in between. */
static void htwheel_realtime_tickless(struct kunit *test)
{
	struct htw_t_waiter *wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);
	struct htw_wheel_expiry *recs = kunit_kcalloc(test, 10, sizeof(*recs), GFP_KERNEL);
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 now, i;

	KUNIT_ASSERT_NOT_NULL(test, wt);
	KUNIT_ASSERT_NOT_NULL(test, recs);
	w = htw_t_real(test, MS, 16, 16, wt);
	now = htw_wheel_now(w);
	for (i = 0; i < 10; i++)
		htw_t_sched(test, w, i, now + (i + 1) * 30 * MS, 0, 0);
	wait_event_timeout(wt->wq, htw_t_fired(w) == 10, 10 * HZ);
	KUNIT_ASSERT_EQ(test, htw_t_fired(w), 10);
	KUNIT_EXPECT_EQ(test, htw_t_take(test, w, recs, 10), 10);
	htw_wheel_get_stats(w, &st);
	/* 300 ticks went by; 10 expiries and < 300/16 cascade points */
	KUNIT_EXPECT_LE(test, st.tick_wakeups, 10 + 300 / 16 + 4);
	KUNIT_EXPECT_GE(test, st.tick_wakeups, 10 / 2);
}

struct htw_t_worker {
	struct htw_wheel *w;
	struct completion done;
	u32 seed;
	u32 scheduled;
	u32 cancelled_ok;
	int err;
};

static int htw_t_worker_fn(void *arg)
{
	struct htw_t_worker *wk = arg;
	struct htw_timer_spec spec = {};
	struct rnd_state rnd;
	u64 h;
	u32 i;

	prandom_seed_state(&rnd, wk->seed);
	for (i = 0; i < 2000; i++) {
		spec.cookie = i;
		spec.deadline_ns = htw_wheel_now(wk->w) +
				   prandom_u32_state(&rnd) % (3 * MS);
		wk->err = htw_wheel_schedule(wk->w, &spec, &h);
		if (wk->err)
			break;
		wk->scheduled++;
		if (i % 2 && htw_wheel_cancel(wk->w, h) == HTW_WHEEL_CANCEL_OK)
			wk->cancelled_ok++;
		if (i % 64 == 0)
			usleep_range(100, 200);
	}
	complete(&wk->done);
	return 0;
}

/* Two threads schedule and cancel while the real tick runs: books balance. */
static void htwheel_realtime_concurrent(struct kunit *test)
{
	struct htw_t_waiter *wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);
	struct htw_t_worker wk[2] = {};
	struct htw_wheel_expiry *recs;
	struct htw_wheel_stats st;
	struct task_struct *task;
	struct htw_wheel *w;
	u64 taken = 0;
	int i;

	recs = kunit_kcalloc(test, 256, sizeof(*recs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wt);
	KUNIT_ASSERT_NOT_NULL(test, recs);
	w = htw_t_real(test, 20 * US, 16, 10000, wt);
	for (i = 0; i < 2; i++) {
		wk[i].w = w;
		wk[i].seed = i + 1;
		init_completion(&wk[i].done);
		task = kthread_run(htw_t_worker_fn, &wk[i], "htw_t_%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	for (i = 0; i < 2; i++)
		wait_for_completion(&wk[i].done);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, wk[i].err, 0);
		KUNIT_EXPECT_EQ(test, wk[i].scheduled, 2000);
	}
	for (i = 0; i < 1000; i++) {
		htw_wheel_get_stats(w, &st);
		if (!st.pending)
			break;
		msleep(20);
	}
	while (htw_wheel_has_ready(w))
		taken += htw_t_take(test, w, recs, 256);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.scheduled, 4000);
	KUNIT_EXPECT_EQ(test, st.fired + st.cancelled, 4000);
	KUNIT_EXPECT_EQ(test, st.cancelled, wk[0].cancelled_ok + wk[1].cancelled_ok);
	KUNIT_EXPECT_EQ(test, taken, st.fired);
}

static struct kunit_case htwheel_realtime_cases[] = {
	KUNIT_CASE(htwheel_realtime_idle_no_wakeups),
	KUNIT_CASE(htwheel_realtime_never_early),
	KUNIT_CASE(htwheel_realtime_tickless),
	KUNIT_CASE(htwheel_realtime_concurrent),
	{}
};

/*
 * Start quiet, whichever suites ran before: the timers they freed reach
 * the slab only after a grace period (SLUB_RCU_DEBUG), and thousands of
 * those RCU callbacks running in softirq would delay the soft hrtimer
 * these cases measure.  So no suite has to run before or after this one.
 */
static int htw_t_realtime_init(struct kunit_suite *suite)
{
	rcu_barrier();
	return htw_t_high_res(suite);
}

static struct kunit_suite htwheel_realtime_suite = {
	.name = "htwheel_realtime",
	.suite_init = htw_t_realtime_init,
	.test_cases = htwheel_realtime_cases,
};

kunit_test_suites(&htwheel_batches_suite, &htwheel_lateness_suite,
		  &htwheel_realtime_suite);
