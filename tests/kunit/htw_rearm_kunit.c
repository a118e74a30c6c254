// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for re-arming a timer in place (htw_wheel_rearm()): a new
 * deadline for the same handle, whether the timer is pending or its
 * record is queued, with mod_timer()'s semantics.
 *
 * - htwheel_rearm: a pending timer moved later and earlier within level
 *   0, across levels and within its bucket fires exactly at its new tick
 *   and never at the old one; it keeps its handle, cookie, period and
 *   slack; a deadline in the past fires at the next tick; the hrtimer is
 *   armed earlier for an earlier deadline; a run stopped between batches
 *   loses nothing to a re-arm and fires nothing twice.
 * - htwheel_rearm_ready: a queued record stays without
 *   HTW_WHEEL_REARM_WITHDRAW and is withdrawn with it, from any place in
 *   the ready queue, which keeps its order and its tail; periodic timers,
 *   and a cancelled periodic one whose last record is queued.
 * - htwheel_rearm_unknown: consumed, cancelled, garbage and foreign
 *   handles, and a timer freed between the look-up and the lock, name
 *   nothing, and nothing changes.
 * - htwheel_rearm_race: kthreads re-arm, cancel and schedule on shared
 *   handles while the tick runs (on a manual clock, then the real hrtimer
 *   in softirq) and records are read and withdrawn: every timer fires
 *   once or is cancelled once, the counters agree, no memory is left
 *   behind, and lockdep stays quiet about the nested bucket locks.
 *
 * Manual-clock wheels (htw_t_manual()) move tick by tick, so every firing
 * tick is exact; two cases use the real hrtimer.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/debug_locks.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/prandom.h>

#include "htw_kunit.h"

/* What the records of a test said, by cookie. */
struct htw_r_log {
	u32 n;
	u32 *fires;		/* records read */
	u64 *fired_ns;		/* the tick run the last one came from */
	u64 *deadline;		/* the deadline it reported */
	u64 *handle;
};

static struct htw_r_log *htw_r_log_new(struct kunit *test, u32 n)
{
	struct htw_r_log *log = kunit_kzalloc(test, sizeof(*log), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, log);
	log->n = n;
	log->fires = kunit_kcalloc(test, n, sizeof(*log->fires), GFP_KERNEL);
	log->fired_ns = kunit_kcalloc(test, n, sizeof(*log->fired_ns), GFP_KERNEL);
	log->deadline = kunit_kcalloc(test, n, sizeof(*log->deadline), GFP_KERNEL);
	log->handle = kunit_kcalloc(test, n, sizeof(*log->handle), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log->fires);
	KUNIT_ASSERT_NOT_NULL(test, log->fired_ns);
	KUNIT_ASSERT_NOT_NULL(test, log->deadline);
	KUNIT_ASSERT_NOT_NULL(test, log->handle);
	return log;
}

/* Read every queued one-shot record into @log: none may come twice. */
static u32 htw_r_read(struct kunit *test, struct htw_wheel *w,
		      struct htw_r_log *log)
{
	struct htw_wheel_expiry rec[8];
	size_t n, i;
	u32 total = 0;
	u64 c;

	while ((n = htw_t_take(test, w, rec, ARRAY_SIZE(rec)))) {
		for (i = 0; i < n; i++) {
			c = rec[i].cookie;
			KUNIT_ASSERT_LT(test, c, log->n);
			KUNIT_EXPECT_EQ_MSG(test, log->fires[c], 0,
					    "cookie %llu delivered twice", c);
			log->fires[c]++;
			log->fired_ns[c] = rec[i].fired_ns;
			log->deadline[c] = rec[i].deadline_ns;
			log->handle[c] = rec[i].handle;
		}
		total += n;
	}
	return total;
}

/* The manual clock through every tick (1 ms) from @from to @to, reading. */
static void htw_r_step(struct kunit *test, struct htw_wheel *w, u64 from,
		       u64 to, struct htw_r_log *log)
{
	u64 now;

	for (now = from; now <= to; now += MS) {
		htw_t_at(w, now);
		htw_r_read(test, w, log);
	}
}

static void htw_r_expect_place(struct kunit *test, struct htw_wheel *w, u64 h,
			       u32 level, u32 index, u64 expires)
{
	struct htw_placement p;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h, &p), 0);
	KUNIT_EXPECT_EQ(test, p.state, HTW_PENDING);
	KUNIT_EXPECT_EQ(test, p.level, level);
	KUNIT_EXPECT_EQ(test, p.index, index);
	KUNIT_EXPECT_EQ(test, p.expires, expires);
}

/* Cookie @c fired once, from the run of tick @at_ms, with handle @h. */
static void htw_r_expect_fired(struct kunit *test, const struct htw_r_log *log,
			       u64 c, u64 h, u64 at_ms, u64 deadline)
{
	KUNIT_EXPECT_EQ_MSG(test, log->fires[c], 1, "cookie %llu", c);
	KUNIT_EXPECT_EQ_MSG(test, log->fired_ns[c], at_ms * MS, "cookie %llu", c);
	KUNIT_EXPECT_EQ_MSG(test, log->deadline[c], deadline, "cookie %llu", c);
	KUNIT_EXPECT_EQ_MSG(test, log->handle[c], h, "cookie %llu", c);
}

static void htw_r_expect_counts(struct kunit *test, struct htw_wheel *w,
				u64 pending, u64 ready)
{
	struct htw_wheel_stats st;

	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, pending);
	KUNIT_EXPECT_EQ(test, st.ready, ready);
}

static noinline_for_stack void
htw_r_expect_same_stats(struct kunit *test, struct htw_wheel *w,
			const struct htw_wheel_stats *before)
{
	struct htw_wheel_stats now;

	htw_t_stats(w, &now);
	KUNIT_EXPECT_MEMEQ(test, &now, before, sizeof(now));
}

/* ---- htwheel_rearm ---- */

/* 1 ms ticks and 64 slots: level 0 holds delays of 1 to 63 ticks. */
static void htwheel_rearm_level0_later_and_earlier(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 8, 0);
	struct htw_r_log *log = htw_r_log_new(test, 8);
	u64 a = htw_t_sched(test, w, 1, 10 * MS, 0, 0);
	u64 b = htw_t_sched(test, w, 2, 40 * MS, 0, 0);
	struct htw_wheel_stats st;

	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 30 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, 20 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, a, 0, 30, 30);
	htw_r_expect_place(test, w, b, 0, 20, 20);
	htw_r_step(test, w, MS, 45 * MS, log);
	htw_r_expect_fired(test, log, 1, a, 30, 30 * MS);
	htw_r_expect_fired(test, log, 2, b, 20, 20 * MS);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.scheduled, 2);
	KUNIT_EXPECT_EQ(test, st.fired, 2);
	KUNIT_EXPECT_EQ(test, st.cancelled, 0);
}

/*
 * 8 slots: level 0 holds 1-7 ticks, level 1 8-63 in buckets of 8 ticks,
 * level 2 64-511 in buckets of 64.  Timers go down two levels and back,
 * and up, and each fires at its last deadline only, cascading on the way.
 */
static void htwheel_rearm_across_levels(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 8, 8, 0);
	struct htw_r_log *log = htw_r_log_new(test, 8);
	u64 a = htw_t_sched(test, w, 1, 200 * MS, 0, 0);
	u64 b = htw_t_sched(test, w, 2, 5 * MS, 0, 0);
	u64 c = htw_t_sched(test, w, 3, 20 * MS, 0, 0);
	struct htw_wheel_stats st;

	htw_r_expect_place(test, w, a, 2, 3, 200);
	htw_r_expect_place(test, w, c, 1, 2, 20);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 5 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, a, 0, 5, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 300 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, a, 2, 4, 300);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, 200 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, b, 2, 3, 200);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, c, 100 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, c, 2, 1, 100);
	htw_r_step(test, w, MS, 310 * MS, log);
	htw_r_expect_fired(test, log, 1, a, 300, 300 * MS);
	htw_r_expect_fired(test, log, 2, b, 200, 200 * MS);
	htw_r_expect_fired(test, log, 3, c, 100, 100 * MS);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_GT(test, st.cascaded, 0);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
}

/*
 * Within one bucket only the deadline changes: a level-1 bucket holds
 * ticks 16-23, and a tick holds every deadline after the one before it.
 */
static void htwheel_rearm_same_bucket(struct kunit *test)
{
	const u64 early = 5 * MS - 300 * US;
	struct htw_wheel *w = htw_t_manual(test, MS, 8, 8, 0);
	struct htw_r_log *log = htw_r_log_new(test, 8);
	u64 a = htw_t_sched(test, w, 1, 20 * MS, 0, 0);
	u64 b = htw_t_sched(test, w, 2, 5 * MS, 0, 0);

	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 22 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, a, 1, 2, 22);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, early, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, b, 0, 5, 5);
	htw_r_step(test, w, MS, 30 * MS, log);
	htw_r_expect_fired(test, log, 1, a, 22, 22 * MS);
	htw_r_expect_fired(test, log, 2, b, 5, early);
}

/* A periodic timer's later periods follow from its new deadline. */
static void htwheel_rearm_keeps_period(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	u64 h = htw_t_sched(test, w, 7, 10 * MS, 10 * MS, 0);
	struct htw_wheel_expiry rec[2];
	u32 i, periods = 0;
	size_t n;

	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 15 * MS, 0), HTW_WHEEL_REARM_PENDING);
	for (i = 1; i <= 50; i++) {
		htw_t_at(w, i * MS);
		n = htw_t_take(test, w, rec, ARRAY_SIZE(rec));
		if (i < 15 || i % 10 != 5) {
			KUNIT_EXPECT_EQ_MSG(test, n, 0, "fired at %u ms", i);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, n, 1, "nothing at %u ms", i);
		KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, i * MS);
		KUNIT_EXPECT_EQ(test, rec[0].handle, h);
		KUNIT_EXPECT_EQ(test, rec[0].cookie, 7);
		KUNIT_EXPECT_EQ(test, rec[0].flags, HTW_WHEEL_EXPIRY_PERIODIC);
		periods++;
	}
	KUNIT_EXPECT_EQ(test, periods, 4);
	htw_r_expect_counts(test, w, 1, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
}

/*
 * 7 ms of slack on 1 ms ticks rounds a timer up to a multiple of 8 ticks:
 * re-armed to 17 ms it still does (24), while a timer without slack
 * re-armed the same way fires at 17.
 */
static void htwheel_rearm_keeps_slack(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	struct htw_r_log *log = htw_r_log_new(test, 4);
	u64 a = htw_t_sched(test, w, 1, 9 * MS, 0, 7 * MS);
	u64 b = htw_t_sched(test, w, 2, 9 * MS, 0, 0);

	htw_r_expect_place(test, w, a, 0, 16, 16);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 17 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, 17 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, a, 0, 24, 24);
	htw_r_expect_place(test, w, b, 0, 17, 17);
	htw_r_step(test, w, MS, 30 * MS, log);
	htw_r_expect_fired(test, log, 1, a, 24, 17 * MS);
	htw_r_expect_fired(test, log, 2, b, 17, 17 * MS);
}

/*
 * A deadline already passed fires at the next tick (and arms for it); the
 * last representable one never does.
 */
static void htwheel_rearm_past_deadline(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	struct htw_r_log *log = htw_r_log_new(test, 4);
	u64 a = htw_t_sched(test, w, 1, 100 * MS, 0, 0);
	u64 b = htw_t_sched(test, w, 2, 100 * MS, 0, 0);
	struct htw_placement p;

	htw_t_at(w, 50 * MS);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 64);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 10 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 51);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, U64_MAX, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 51);
	htw_r_step(test, w, 51 * MS, 150 * MS, log);
	htw_r_expect_fired(test, log, 1, a, 51, 10 * MS);
	KUNIT_EXPECT_EQ(test, log->fires[2], 0);
	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, b, &p), 0);
	KUNIT_EXPECT_EQ(test, p.state, HTW_PENDING);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, b), HTW_WHEEL_CANCEL_OK);
}

/*
 * The tick the hrtimer is armed for moves earlier with an earlier
 * deadline; a later one leaves it (one early wakeup, then the run arms for
 * what is really next).
 */
static void htwheel_rearm_arms_earlier(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	struct htw_r_log *log = htw_r_log_new(test, 4);
	u64 a = htw_t_sched(test, w, 1, 50 * MS, 0, 0);
	u64 b = htw_t_sched(test, w, 2, 60 * MS, 0, 0);

	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 50);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, a, 10 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 10);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, 5 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, 80 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 5);
	htw_t_at(w, 5 * MS);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 10);
	htw_t_at(w, 10 * MS);
	KUNIT_EXPECT_EQ(test, htw_r_read(test, w, log), 1);
	/* 70 ticks away: level 1, visited at the start of its period, 64 */
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 64);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, b, 30 * MS, 0), HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 30);
	htw_r_step(test, w, 11 * MS, 90 * MS, log);
	htw_r_expect_fired(test, log, 2, b, 30, 30 * MS);
}

/*
 * The real hrtimer: a timer 10 s away re-armed to 30 ms moves the arming
 * to its tick and fires long before 10 s.
 */
static void htwheel_rearm_real_clock_arms_earlier(struct kunit *test)
{
	struct htw_geometry geo = htw_t_geo(MS, 512, 4);
	struct htw_wheel_expiry rec;
	struct htw_wheel *w;
	u64 now, h, far, near, deadline;
	int i;

	w = htw_wheel_create(&geo, &htw_hrtimer_clock, NULL, NULL, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action, w), 0);
	now = htw_wheel_now(w);
	h = htw_t_sched(test, w, 1, now + 10 * NSEC_PER_SEC, 0, 0);
	far = READ_ONCE((w)->armed_tick);
	KUNIT_EXPECT_GT(test, htw_grid_tick_time(&(w)->grid, far), now + 9 * NSEC_PER_SEC);
	deadline = now + 30 * MS;
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, deadline, 0), HTW_WHEEL_REARM_PENDING);
	near = READ_ONCE((w)->armed_tick);
	KUNIT_EXPECT_LT(test, near, far);
	KUNIT_EXPECT_GE(test, htw_grid_tick_time(&(w)->grid, near), deadline);
	KUNIT_EXPECT_LT(test, htw_grid_tick_time(&(w)->grid, near), deadline + MS);
	for (i = 0; i < 400 && !htw_wheel_has_ready(w); i++)
		usleep_range(5000, 10000);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, &rec, 1), 1);
	KUNIT_EXPECT_EQ(test, rec.handle, h);
	KUNIT_EXPECT_EQ(test, rec.deadline_ns, deadline);
	KUNIT_EXPECT_LT(test, rec.fired_ns, now + 5 * NSEC_PER_SEC);
}

/* The timers of @h still pending, as indexes; up to @max of them. */
static u32 htw_r_pending(struct kunit *test, struct htw_wheel *w, const u64 *h,
			 u32 n, u32 *out, u32 max)
{
	struct htw_placement p;
	u32 i, found = 0;

	for (i = 0; i < n && found < max; i++) {
		KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h[i], &p), 0);
		if (p.state == HTW_PENDING)
			out[found++] = i;
	}
	return found;
}

/*
 * More than a batch due in one tick: the run stops with the tick half
 * done.  One of the timers it has not reached yet is re-armed to later,
 * one to the same deadline; neither fires early, none is lost, none
 * fires twice.
 */
static void htwheel_rearm_stopped_run(struct kunit *test)
{
	const u32 n = HTW_BATCH + 10;
	struct htw_wheel *w = htw_t_manual(test, MS, 64, n, 0);
	struct htw_r_log *log = htw_r_log_new(test, n);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	u32 rest[2], i, read, once = 0;
	struct htw_wheel_stats st;

	KUNIT_ASSERT_NOT_NULL(test, h);
	for (i = 0; i < n; i++)
		h[i] = htw_t_sched(test, w, i, 10 * MS, 0, 0);
	htw_t_set_now(w, 10 * MS);
	KUNIT_ASSERT_FALSE(test, htw_run_batch(w, false));
	KUNIT_ASSERT_EQ(test, htw_r_pending(test, w, h, n, rest, 2), 2);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[rest[0]], 20 * MS, 0),
			HTW_WHEEL_REARM_PENDING);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[rest[1]], 10 * MS, 0),
			HTW_WHEEL_REARM_PENDING);
	read = htw_r_read(test, w, log);
	while (!htw_run_batch(w, false))
		read += htw_r_read(test, w, log);
	read += htw_r_read(test, w, log);
	KUNIT_EXPECT_EQ(test, read, n - 2);
	KUNIT_EXPECT_EQ(test, log->fires[rest[0]], 0);
	/* Placed while tick 10 was open: after it, so at 11 at the latest. */
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 11);
	htw_r_step(test, w, 11 * MS, 25 * MS, log);
	htw_r_expect_fired(test, log, rest[0], h[rest[0]], 20, 20 * MS);
	KUNIT_EXPECT_EQ(test, log->fires[rest[1]], 1);
	KUNIT_EXPECT_LE(test, log->fired_ns[rest[1]], 11 * MS);
	KUNIT_EXPECT_EQ(test, log->deadline[rest[1]], 10 * MS);
	for (i = 0; i < n; i++)
		once += log->fires[i] == 1;
	KUNIT_EXPECT_EQ(test, once, n);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.ready, 0);
	KUNIT_EXPECT_EQ(test, st.fired, n);
}

static struct kunit_case htwheel_rearm_cases[] = {
	KUNIT_CASE(htwheel_rearm_level0_later_and_earlier),
	KUNIT_CASE(htwheel_rearm_across_levels),
	KUNIT_CASE(htwheel_rearm_same_bucket),
	KUNIT_CASE(htwheel_rearm_keeps_period),
	KUNIT_CASE(htwheel_rearm_keeps_slack),
	KUNIT_CASE(htwheel_rearm_past_deadline),
	KUNIT_CASE(htwheel_rearm_arms_earlier),
	KUNIT_CASE(htwheel_rearm_real_clock_arms_earlier),
	KUNIT_CASE(htwheel_rearm_stopped_run),
	{}
};

static struct kunit_suite htwheel_rearm_suite = {
	.name = "htwheel_rearm",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_rearm_cases,
};

/* ---- htwheel_rearm_ready ---- */

/* The ready queue holds exactly @cookies, in this order. */
static void htw_r_expect_queue(struct kunit *test, struct htw_wheel *w,
			       const u64 *cookies, size_t n)
{
	struct htw_wheel_expiry rec[8];
	size_t got, i;

	got = htw_wheel_peek_ready(w, rec, ARRAY_SIZE(rec));
	KUNIT_ASSERT_EQ(test, got, n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, rec[i].cookie, cookies[i], "record %zu", i);
}

#define HTW_R_EXPECT_QUEUE(test, w, ...)					\
	htw_r_expect_queue(test, w, (const u64[]){ __VA_ARGS__ },		\
			   ARRAY_SIZE(((const u64[]){ __VA_ARGS__ })))

static void htwheel_rearm_ready_one_shot(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	struct htw_r_log *log = htw_r_log_new(test, 4);
	u64 h = htw_t_sched(test, w, 3, 5 * MS, 0, 0);
	struct htw_wheel_expiry rec[2];
	struct htw_placement p;

	htw_t_at(w, 5 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 20 * MS, 0), HTW_WHEEL_REARM_SERIALISE);
	/* Nothing changed: the record as it was, the timer still queued. */
	KUNIT_ASSERT_EQ(test, htw_wheel_peek_ready(w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].handle, h);
	KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, 5 * MS);
	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h, &p), 0);
	KUNIT_EXPECT_EQ(test, p.state, HTW_READY);
	htw_r_expect_counts(test, w, 0, 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), U64_MAX);

	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 20 * MS, HTW_WHEEL_REARM_WITHDRAW),
			HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_EQ(test, htw_wheel_peek_ready(w, rec, 2), 0);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	htw_r_expect_counts(test, w, 1, 0);
	htw_r_expect_place(test, w, h, 0, 20, 20);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 20);
	htw_r_step(test, w, 6 * MS, 25 * MS, log);
	htw_r_expect_fired(test, log, 3, h, 20, 20 * MS);
	htw_r_expect_counts(test, w, 0, 0);
	/* Consumed: gone, with or without the flag. */
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 30 * MS, HTW_WHEEL_REARM_WITHDRAW),
			HTW_WHEEL_REARM_UNKNOWN);
}

/*
 * Five records queued in firing order; the head, a middle one and the
 * tail are withdrawn: the others keep their order, and the next records
 * go behind the right tail.  Then the queue is emptied down to its only
 * record, which is withdrawn too, and the next record starts it afresh.
 */
static void htwheel_rearm_ready_withdraw_order(struct kunit *test)
{
	const unsigned int wd = HTW_WHEEL_REARM_WITHDRAW;
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 8, 0);
	u64 h[7];
	u32 c;

	for (c = 1; c <= 5; c++)
		h[c] = htw_t_sched(test, w, c, c * MS, 0, 0);
	htw_t_at(w, 5 * MS);
	HTW_R_EXPECT_QUEUE(test, w, 1, 2, 3, 4, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[1], 8 * MS, wd), HTW_WHEEL_REARM_FIRED);
	HTW_R_EXPECT_QUEUE(test, w, 2, 3, 4, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[3], 7 * MS, wd), HTW_WHEEL_REARM_FIRED);
	HTW_R_EXPECT_QUEUE(test, w, 2, 4, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[5], 9 * MS, wd), HTW_WHEEL_REARM_FIRED);
	HTW_R_EXPECT_QUEUE(test, w, 2, 4);
	htw_r_expect_counts(test, w, 3, 2);

	h[6] = htw_t_sched(test, w, 6, 6 * MS, 0, 0);
	htw_t_at(w, 6 * MS);
	HTW_R_EXPECT_QUEUE(test, w, 2, 4, 6);
	htw_t_at(w, 7 * MS);
	HTW_R_EXPECT_QUEUE(test, w, 2, 4, 6, 3);
	htw_t_at(w, 8 * MS);
	htw_t_at(w, 9 * MS);
	HTW_R_EXPECT_QUEUE(test, w, 2, 4, 6, 3, 1, 5);
	htw_r_expect_counts(test, w, 0, 6);

	/* Each to its own tick, 20 + cookie ms, head first: the last is alone. */
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[2], 22 * MS, wd), HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[4], 24 * MS, wd), HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[6], 26 * MS, wd), HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[3], 23 * MS, wd), HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[1], 21 * MS, wd), HTW_WHEEL_REARM_FIRED);
	HTW_R_EXPECT_QUEUE(test, w, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h[5], 25 * MS, wd), HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	htw_r_expect_counts(test, w, 6, 0);
	htw_t_at(w, 21 * MS);
	HTW_R_EXPECT_QUEUE(test, w, 1);
	htw_t_at(w, 26 * MS);
	HTW_R_EXPECT_QUEUE(test, w, 1, 2, 3, 4, 5, 6);
	htw_r_expect_counts(test, w, 0, 6);
}

/*
 * A periodic timer stays pending while its record is queued; withdrawn,
 * its next period is the new deadline and the later ones follow from it.
 */
static void htwheel_rearm_ready_periodic(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	u64 h = htw_t_sched(test, w, 4, 5 * MS, 10 * MS, 0);
	struct htw_wheel_expiry rec[2];
	u32 i, periods = 0;
	size_t n;

	htw_t_at(w, 5 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 12 * MS, 0), HTW_WHEEL_REARM_SERIALISE);
	KUNIT_ASSERT_EQ(test, htw_wheel_peek_ready(w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, 5 * MS);
	KUNIT_EXPECT_EQ(test, rec[0].flags, HTW_WHEEL_EXPIRY_PERIODIC);
	htw_r_expect_counts(test, w, 1, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 12 * MS, HTW_WHEEL_REARM_WITHDRAW),
			HTW_WHEEL_REARM_FIRED);
	KUNIT_EXPECT_EQ(test, htw_wheel_peek_ready(w, rec, 2), 0);
	htw_r_expect_counts(test, w, 1, 0);
	htw_r_expect_place(test, w, h, 0, 12, 12);
	for (i = 6; i <= 40; i++) {
		htw_t_at(w, i * MS);
		n = htw_t_take(test, w, rec, ARRAY_SIZE(rec));
		if (i % 10 != 2) {
			KUNIT_EXPECT_EQ_MSG(test, n, 0, "fired at %u ms", i);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, n, 1, "nothing at %u ms", i);
		KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, i * MS);
		KUNIT_EXPECT_EQ(test, rec[0].handle, h);
		KUNIT_EXPECT_EQ(test, rec[0].cookie, 4);
		periods++;
	}
	KUNIT_EXPECT_EQ(test, periods, 3);
	htw_r_expect_counts(test, w, 1, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
}

/* Cancelled with its last record queued: no timer to re-arm any more. */
static void htwheel_rearm_ready_cancelled_periodic(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 4, 0);
	u64 h = htw_t_sched(test, w, 5, 5 * MS, 10 * MS, 0);
	struct htw_wheel_stats *before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	struct htw_wheel_expiry rec[2];

	KUNIT_ASSERT_NOT_NULL(test, before);
	htw_t_at(w, 5 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
	htw_t_stats(w, before);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 20 * MS, 0), HTW_WHEEL_REARM_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 20 * MS, HTW_WHEEL_REARM_WITHDRAW),
			HTW_WHEEL_REARM_UNKNOWN);
	htw_r_expect_same_stats(test, w, before);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), U64_MAX);
	/* The last record is still delivered, no longer periodic. */
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].handle, h);
	KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, 5 * MS);
	KUNIT_EXPECT_EQ(test, rec[0].flags, 0);
	htw_t_at(w, 30 * MS);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 40 * MS, 0), HTW_WHEEL_REARM_UNKNOWN);
}

static struct kunit_case htwheel_rearm_ready_cases[] = {
	KUNIT_CASE(htwheel_rearm_ready_one_shot),
	KUNIT_CASE(htwheel_rearm_ready_withdraw_order),
	KUNIT_CASE(htwheel_rearm_ready_periodic),
	KUNIT_CASE(htwheel_rearm_ready_cancelled_periodic),
	{}
};

static struct kunit_suite htwheel_rearm_ready_suite = {
	.name = "htwheel_rearm_ready",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_rearm_ready_cases,
};

/* ---- htwheel_rearm_unknown ---- */

/* Neither flag finds @h; @w's counters and arming did not move. */
static void htw_r_expect_unknown(struct kunit *test, struct htw_wheel *w, u64 h)
{
	u64 armed = READ_ONCE((w)->armed_tick);
	struct htw_wheel_stats before;

	htw_t_stats(w, &before);
	KUNIT_EXPECT_EQ_MSG(test, htw_wheel_rearm(w, h, 10 * MS, 0),
			    HTW_WHEEL_REARM_UNKNOWN, "handle %llx", h);
	KUNIT_EXPECT_EQ_MSG(test, htw_wheel_rearm(w, h, 10 * MS, HTW_WHEEL_REARM_WITHDRAW),
			    HTW_WHEEL_REARM_UNKNOWN, "handle %llx", h);
	htw_r_expect_same_stats(test, w, &before);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), armed);
}

static void htwheel_rearm_unknown_handles(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 16, 0);
	struct htw_wheel *other = htw_t_manual(test, MS, 64, 16, 0);
	static const u64 junk[] = {
		0, U64_MAX, 1, 1ULL << 32, (1ULL << 32) | 1, 0xdeadbeefULL,
		(7ULL << 32) | 0x7fffffff, (1ULL << 32) | 100000000,
	};
	struct htw_r_log *log = htw_r_log_new(test, 8);
	u64 consumed, cancelled, live, foreign;
	size_t i;

	consumed = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	live = htw_t_sched(test, w, 2, 50 * MS, 0, 0);
	foreign = htw_t_sched(test, other, 3, 50 * MS, 0, 0);
	cancelled = htw_t_sched(test, w, 4, 30 * MS, 0, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, cancelled), HTW_WHEEL_CANCEL_OK);
	htw_t_at(w, 5 * MS);
	KUNIT_ASSERT_EQ(test, htw_r_read(test, w, log), 1);

	htw_r_expect_unknown(test, w, consumed);
	htw_r_expect_unknown(test, w, cancelled);
	for (i = 0; i < ARRAY_SIZE(junk); i++)
		if (junk[i] != live)
			htw_r_expect_unknown(test, w, junk[i]);
	KUNIT_EXPECT_NE(test, foreign, live);
	htw_r_expect_unknown(test, w, foreign);
	htw_r_expect_unknown(test, other, live);
	/* Both live timers are where they were and fire when they were due. */
	htw_r_expect_place(test, w, live, 0, 50, 50);
	htw_r_expect_place(test, other, foreign, 0, 50, 50);
	htw_r_step(test, w, 6 * MS, 55 * MS, log);
	htw_r_expect_fired(test, log, 2, live, 50, 50 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(other, foreign), HTW_WHEEL_CANCEL_OK);
}

/*
 * A racing CPU, played by a static stub of htw_identity_race(): after the re-arm found the
 * timer and read its place, the timer was cancelled (or its record read)
 * on another CPU and its object reused for another timer, before the
 * check under the lock.  The re-arm must look again, find no such timer
 * and say UNKNOWN, a status of the contract, having changed nothing.
 */
static struct {
	struct htw_timer *victim;
	u64 original;
	unsigned int calls;
} htw_r_reuse;

static void htw_r_reuse_hook(struct htw_timer *t, unsigned int step)
{
	if (step != 0 || htw_r_reuse.victim)
		return;
	htw_r_reuse.calls++;
	htw_r_reuse.victim = t;
	htw_r_reuse.original = t->handle;
	WRITE_ONCE(t->handle, ~t->handle);
}

static enum htw_rearm_status htw_r_rearm_reused(struct kunit *test,
						struct htw_wheel *w, u64 h,
						u64 deadline, unsigned int flags)
{
	enum htw_rearm_status ret;

	memset(&htw_r_reuse, 0, sizeof(htw_r_reuse));
	kunit_activate_static_stub(test, htw_identity_race, htw_r_reuse_hook);
	ret = htw_wheel_rearm(w, h, deadline, flags);
	kunit_deactivate_static_stub(test, htw_identity_race);
	/* Make the wheel whole again. */
	KUNIT_ASSERT_EQ(test, htw_r_reuse.calls, 1);
	WRITE_ONCE(htw_r_reuse.victim->handle, htw_r_reuse.original);
	return ret;
}

static void htwheel_rearm_unknown_freed_while_moving(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 8, 0);
	struct htw_r_log *log = htw_r_log_new(test, 4);
	u64 between = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	u64 within = htw_t_sched(test, w, 2, 5 * MS, 0, 0);
	u64 queued = htw_t_sched(test, w, 3, 3 * MS, 0, 0);

	/* To another bucket: both bucket locks. */
	KUNIT_EXPECT_EQ(test, htw_r_rearm_reused(test, w, between, 40 * MS, 0),
			HTW_WHEEL_REARM_UNKNOWN);
	htw_r_expect_place(test, w, between, 0, 5, 5);
	/* Within its bucket: one lock. */
	KUNIT_EXPECT_EQ(test, htw_r_rearm_reused(test, w, within, 5 * MS - US, 0),
			HTW_WHEEL_REARM_UNKNOWN);
	htw_r_expect_place(test, w, within, 0, 5, 5);
	/* Its record queued, withdrawn: tick_lock and ready_lock. */
	htw_t_at(w, 3 * MS);
	KUNIT_EXPECT_EQ(test, htw_r_rearm_reused(test, w, queued, 40 * MS,
						 HTW_WHEEL_REARM_WITHDRAW),
			HTW_WHEEL_REARM_UNKNOWN);
	htw_r_expect_counts(test, w, 2, 1);
	KUNIT_EXPECT_EQ(test, htw_r_read(test, w, log), 1);
	/* Nothing moved: the first two fire at 5 ms with their deadlines. */
	htw_r_step(test, w, 4 * MS, 6 * MS, log);
	htw_r_expect_fired(test, log, 1, between, 5, 5 * MS);
	htw_r_expect_fired(test, log, 2, within, 5, 5 * MS);
	htw_r_expect_fired(test, log, 3, queued, 3, 3 * MS);
}

/*
 * While a drain runs (expiry paused, as htw_pause() does), a move
 * between buckets could take a timer behind the drain: it changes
 * nothing and asks to be called again serialised with the drain; within
 * its bucket, where the drain will find it, it moves.  A caller
 * serialised with drains (the flag) moves it anyway.
 */
static void htwheel_rearm_waits_for_drain(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 8, 0);
	u64 h = htw_t_sched(test, w, 1, 5 * MS, 0, 0);

	htw_pause(w);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 40 * MS, 0),
			HTW_WHEEL_REARM_SERIALISE);
	htw_r_expect_place(test, w, h, 0, 5, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 5 * MS - US, 0),
			HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, h, 0, 5, 5);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 40 * MS, HTW_WHEEL_REARM_WITHDRAW),
			HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, h, 0, 40, 40);
	htw_resume(w);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, 20 * MS, 0), HTW_WHEEL_REARM_PENDING);
	htw_r_expect_place(test, w, h, 0, 20, 20);
}

static struct kunit_case htwheel_rearm_unknown_cases[] = {
	KUNIT_CASE(htwheel_rearm_unknown_handles),
	KUNIT_CASE(htwheel_rearm_unknown_freed_while_moving),
	KUNIT_CASE(htwheel_rearm_waits_for_drain),
	{}
};

static struct kunit_suite htwheel_rearm_unknown_suite = {
	.name = "htwheel_rearm_unknown",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_rearm_unknown_cases,
};

/* ---- htwheel_rearm_race ---- */

#define HTW_R_SHARED	32	/* handles the threads share */
#define HTW_R_WORKERS	2
#define HTW_R_OPS	2000	/* per worker */
/* Every timer a run can schedule: the shared ones, then one per op at most. */
#define HTW_R_TIMERS	(HTW_R_SHARED + HTW_R_WORKERS * HTW_R_OPS)
#define HTW_R_SPREAD	(40 * MS)	/* deadlines: now to now + this */

struct htw_r_race {
	struct htw_wheel *w;
	bool manual;		/* this thread runs the ticks; else the hrtimer */
	u64 *handle;		/* by cookie: every timer scheduled */
	atomic_t *cancelled;	/* by cookie: cancels that said OK */
	u32 slot[HTW_R_SHARED];	/* the cookie each shared slot names */
	atomic_t cookies;	/* handed out */
	atomic_t bad;		/* statuses outside the contract */
	/* The reader's side, and the workers' totals once they are done. */
	u32 ticks;		/* rounds of the reader (manual: ticks) */
	u32 moved;		/* re-arms of a pending timer */
	u32 withdrawn;		/* records taken back */
	u32 taken;		/* records read */
};

struct htw_r_worker {
	struct htw_r_race *race;
	struct completion done;
	u32 seed;
	u32 moved;		/* re-arms of a pending timer */
	int err;		/* the first schedule that failed */
};

static u64 htw_r_deadline(struct htw_wheel *w, struct rnd_state *rnd)
{
	return htw_wheel_now(w) + prandom_u32_state(rnd) % HTW_R_SPREAD;
}

/* A new timer under a new cookie, in place of @slot's. */
static void htw_r_schedule(struct htw_r_worker *wk, u32 slot,
			   struct rnd_state *rnd)
{
	struct htw_r_race *r = wk->race;
	struct htw_timer_spec spec = {};
	u32 c = atomic_inc_return(&r->cookies) - 1;
	u64 h;
	int ret;

	spec.cookie = c;
	spec.deadline_ns = htw_r_deadline(r->w, rnd);
	ret = htw_wheel_schedule(r->w, &spec, &h);
	if (ret) {
		if (!wk->err)
			wk->err = ret;
		return;
	}
	WRITE_ONCE(r->handle[c], h);
	/* The handle before the slot naming it; pairs with htw_r_worker_fn(). */
	smp_wmb();
	WRITE_ONCE(r->slot[slot], c);
}

static void htw_r_cancel(struct htw_r_race *r, u32 c, u64 h)
{
	switch (htw_wheel_cancel(r->w, h)) {
	case HTW_WHEEL_CANCEL_OK:
		atomic_inc(&r->cancelled[c]);
		break;
	case HTW_WHEEL_CANCEL_FIRED:
	case HTW_WHEEL_CANCEL_UNKNOWN:
		break;
	default:
		atomic_inc(&r->bad);
	}
}

static void htw_r_rearm(struct htw_r_worker *wk, u64 h, struct rnd_state *rnd)
{
	struct htw_r_race *r = wk->race;

	switch (htw_wheel_rearm(r->w, h, htw_r_deadline(r->w, rnd), 0)) {
	case HTW_WHEEL_REARM_PENDING:
		wk->moved++;
		break;
	case HTW_WHEEL_REARM_SERIALISE:
	case HTW_WHEEL_REARM_UNKNOWN:
		break;
	default:
		atomic_inc(&r->bad);
	}
}

static int htw_r_worker_fn(void *arg)
{
	struct htw_r_worker *wk = arg;
	struct htw_r_race *r = wk->race;
	struct rnd_state rnd;
	u32 i, slot, c;
	u64 h;

	prandom_seed_state(&rnd, wk->seed);
	for (i = 0; i < HTW_R_OPS; i++) {
		slot = prandom_u32_state(&rnd) % HTW_R_SHARED;
		c = READ_ONCE(r->slot[slot]);
		/* Pairs with the smp_wmb() in htw_r_schedule(). */
		smp_rmb();
		h = READ_ONCE(r->handle[c]);
		switch (prandom_u32_state(&rnd) % 4) {
		case 0:
		case 1:
			htw_r_rearm(wk, h, &rnd);
			break;
		case 2:
			htw_r_cancel(r, c, h);
			break;
		default:
			htw_r_schedule(wk, slot, &rnd);
		}
		/* One CPU, no preemption: let the reader and the other worker in. */
		if (i % 8 == 7)
			usleep_range(20, 40);
		else
			cond_resched();
	}
	complete(&wk->done);
	return 0;
}

/*
 * The reader's re-arms, with the flag (it alone peeks and consumes, as
 * the device's per-fd mutex would serialise them): one of the records
 * just queued, which nothing else can have taken, and a shared timer in
 * whatever state it is.  Returns the records withdrawn.
 */
static u32 htw_r_withdraw(struct kunit *test, struct htw_r_race *r,
			  struct rnd_state *rnd)
{
	const unsigned int wd = HTW_WHEEL_REARM_WITHDRAW;
	struct htw_wheel_expiry rec[4];
	u32 withdrawn = 0, c;
	size_t n;

	n = htw_wheel_peek_ready(r->w, rec, ARRAY_SIZE(rec));
	if (n) {
		KUNIT_EXPECT_EQ(test, htw_wheel_rearm(r->w, rec[n / 2].handle,
						      htw_r_deadline(r->w, rnd), wd),
				HTW_WHEEL_REARM_FIRED);
		withdrawn++;
	}
	c = READ_ONCE(r->slot[prandom_u32_state(rnd) % HTW_R_SHARED]);
	/* Pairs with the smp_wmb() in htw_r_schedule(). */
	smp_rmb();
	switch (htw_wheel_rearm(r->w, READ_ONCE(r->handle[c]),
				htw_r_deadline(r->w, rnd), wd)) {
	case HTW_WHEEL_REARM_FIRED:
		withdrawn++;
		break;
	case HTW_WHEEL_REARM_PENDING:
	case HTW_WHEEL_REARM_UNKNOWN:
		break;
	default:
		atomic_inc(&r->bad);
	}
	return withdrawn;
}

/*
 * 8 slots: moves within and across levels 0 and 1 of 1 ms ticks, or of
 * levels 0 to 3 of the real clock's 50 us ticks.
 */
static struct htw_wheel *htw_r_race_wheel(struct kunit *test, bool manual)
{
	struct htw_geometry geo = htw_t_geo(50 * US, 8, HTW_R_TIMERS);
	struct htw_wheel *w;

	if (manual)
		return htw_t_manual(test, MS, 8, HTW_R_TIMERS, 0);
	w = htw_wheel_create(&geo, &htw_hrtimer_clock, NULL, NULL, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action, w), 0);
	return w;
}

static struct htw_r_race *htw_r_race_new(struct kunit *test, bool manual)
{
	struct htw_r_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	u64 now;
	u32 c;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->handle = kunit_kcalloc(test, HTW_R_TIMERS, sizeof(*r->handle), GFP_KERNEL);
	r->cancelled = kunit_kcalloc(test, HTW_R_TIMERS, sizeof(*r->cancelled),
				     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->handle);
	KUNIT_ASSERT_NOT_NULL(test, r->cancelled);
	r->manual = manual;
	r->w = htw_r_race_wheel(test, manual);
	now = htw_wheel_now(r->w);
	for (c = 0; c < HTW_R_SHARED; c++) {
		r->handle[c] = htw_t_sched(test, r->w, c, now + (c + 1) * MS, 0, 0);
		r->slot[c] = c;
	}
	atomic_set(&r->cookies, HTW_R_SHARED);
	return r;
}

static bool htw_r_running(struct htw_r_worker *wk)
{
	u32 i;

	for (i = 0; i < HTW_R_WORKERS; i++)
		if (!completion_done(&wk[i].done))
			return true;
	return false;
}

/* Every timer fired once or was cancelled once: never both, never neither. */
static void htw_r_expect_each_once(struct kunit *test, struct htw_r_race *r,
				   const struct htw_r_log *log)
{
	u32 c, n = atomic_read(&r->cookies), wrong = 0;

	for (c = 0; c < n; c++) {
		if (log->fires[c] + atomic_read(&r->cancelled[c]) == 1)
			continue;
		if (wrong++ < 8)
			kunit_err(test, "cookie %u: fired %u, cancelled %d", c,
				  log->fires[c], atomic_read(&r->cancelled[c]));
	}
	KUNIT_EXPECT_EQ(test, wrong, 0);
}

/*
 * After the race: the manual clock runs out every deadline, or the real
 * one is waited for (a few seconds at most), reading all the while.
 */
static void htw_r_run_out(struct kunit *test, struct htw_r_race *r,
			  struct htw_r_log *log, u64 now)
{
	struct htw_wheel_stats st;
	u32 i;

	for (i = 0; i <= HTW_R_SPREAD / MS + 1 && r->manual; i++) {
		now += MS;
		htw_t_at(r->w, now);
		r->taken += htw_r_read(test, r->w, log);
	}
	for (i = 0; i < 2000 && !r->manual; i++) {
		r->taken += htw_r_read(test, r->w, log);
		htw_t_stats(r->w, &st);
		if (!st.pending && !st.ready)
			break;
		usleep_range(2000, 3000);
	}
}

/*
 * Two kthreads re-arm, cancel and schedule on the shared handles while
 * the tick runs (this thread's, or the hrtimer's in softirq) and this
 * thread withdraws records and reads the rest, yielding in between so
 * that the threads meet both pending timers and queued records.
 */
static noinline_for_stack void htw_r_hammer(struct kunit *test,
					    struct htw_r_race *r,
					    struct htw_r_log *log)
{
	struct htw_r_worker wk[HTW_R_WORKERS] = {};
	struct task_struct *task;
	struct rnd_state rnd;
	u64 now = 0;
	u32 i;

	prandom_seed_state(&rnd, 7);
	for (i = 0; i < HTW_R_WORKERS; i++) {
		wk[i].race = r;
		wk[i].seed = i + 1;
		init_completion(&wk[i].done);
		task = kthread_run(htw_r_worker_fn, &wk[i], "htw_r_%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	while (htw_r_running(wk)) {
		r->ticks++;
		if (r->manual) {
			now += MS;
			htw_t_at(r->w, now);
		}
		usleep_range(20, 40);
		r->withdrawn += htw_r_withdraw(test, r, &rnd);
		r->taken += htw_r_read(test, r->w, log);
		usleep_range(20, 40);
	}
	for (i = 0; i < HTW_R_WORKERS; i++) {
		wait_for_completion(&wk[i].done);
		KUNIT_EXPECT_EQ(test, wk[i].err, 0);
		r->moved += wk[i].moved;
	}
	htw_r_run_out(test, r, log, now);
}

/* The wheel's counters agree with what the threads and the reader saw. */
static noinline_for_stack void htw_r_expect_books(struct kunit *test,
						  struct htw_r_race *r)
{
	u32 c, cookies = atomic_read(&r->cookies);
	struct htw_wheel_stats st;
	u64 cancelled = 0;

	for (c = 0; c < cookies; c++)
		cancelled += atomic_read(&r->cancelled[c]);
	htw_t_stats(r->w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.ready, 0);
	KUNIT_EXPECT_EQ(test, st.scheduled, cookies);
	KUNIT_EXPECT_EQ(test, st.cancelled, cancelled);
	/* Every expiry counts, also those whose record was withdrawn. */
	KUNIT_EXPECT_EQ(test, st.fired, r->taken + r->withdrawn);
	KUNIT_EXPECT_EQ(test, r->taken + cancelled, cookies);
	kunit_info(test, "%u rounds, %u moved, %u withdrawn, %u read, %llu cancelled, %llu wakeups",
		   r->ticks, r->moved, r->withdrawn, r->taken, cancelled, st.tick_wakeups);
}

/*
 * The books must balance after the race: by cookie, by the wheel's
 * counters and by the slab; and lockdep, which turns itself off at its
 * first report, must still be on after the nested bucket locks.
 */
static void htw_r_race_run(struct kunit *test, bool manual)
{
	long slab = htw_t_slab_objects(test);
	struct htw_r_log *log = htw_r_log_new(test, HTW_R_TIMERS);
	struct htw_r_race *r = htw_r_race_new(test, manual);
	int locks_were_on = debug_locks;

	htw_r_hammer(test, r, log);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	KUNIT_EXPECT_GT(test, r->moved, 0);
	KUNIT_EXPECT_GT(test, r->withdrawn, 0);
	htw_r_expect_each_once(test, r, log);
	htw_r_expect_books(test, r);
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->w->handles.used), 0);
	/* The wheel keeps its chunks, no more than its timers need. */
	KUNIT_EXPECT_LE(test, htw_t_slab_objects(test), slab + HTW_T_CHUNKS(HTW_R_TIMERS));
	if (IS_ENABLED(CONFIG_PROVE_LOCKING) && locks_were_on)
		KUNIT_EXPECT_TRUE(test, debug_locks);
}

/* The ticks run by this thread, one per round, between the workers' turns. */
static void htwheel_rearm_race_conservation(struct kunit *test)
{
	htw_r_race_run(test, true);
}

/*
 * The real hrtimer's expiry in softirq, which can also run between a
 * re-arm's look-up and its lock (the timer then in transit or queued).
 */
static void htwheel_rearm_race_real_clock(struct kunit *test)
{
	htw_r_race_run(test, false);
}

static struct kunit_case htwheel_rearm_race_cases[] = {
	KUNIT_CASE(htwheel_rearm_race_conservation),
	KUNIT_CASE(htwheel_rearm_race_real_clock),
	{}
};

static struct kunit_suite htwheel_rearm_race_suite = {
	.name = "htwheel_rearm_race",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_rearm_race_cases,
};

kunit_test_suites(&htwheel_rearm_suite, &htwheel_rearm_ready_suite,
		  &htwheel_rearm_unknown_suite, &htwheel_rearm_race_suite);
