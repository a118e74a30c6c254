// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the wheel's operations as its owner calls them:
 * schedule, cancel, reading the ready queue (which re-arms periodic
 * timers) and drain.  These are the promises the device passes on to
 * user space, so each is checked on its edges.
 *
 * - htwheel_cancel: before and after expiry, with a stale, a forged and
 *   another wheel's handle, and on periodic timers.
 * - htwheel_periodic: a periodic timer keeps its phase over 1,000 periods
 *   and reports the periods it was not read for as one overrun.
 * - htwheel_limits: a full wheel refuses with -ENOSPC and a period shorter
 *   than the tick with -EINVAL, and a refusal changes nothing.
 * - htwheel_drain: drain hands back the unexpired timers with the time
 *   they had left and keeps the records already queued.
 *
 * All on manual-clock wheels (htw_t_manual()), so every tick is exact.
 */
#include <kunit/test.h>

#include "htw_kunit.h"

/* ---- htwheel_cancel ---- */

static void htwheel_cancel_before_fire(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 16, 0);
	struct htw_wheel_stats st;
	u64 h;

	h = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_t_at(w, 10 * MS);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, 1);
	KUNIT_EXPECT_EQ(test, st.fired, 0);
}

static void htwheel_cancel_after_fire(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 16, 0);
	struct htw_wheel_expiry rec;
	u64 h;

	h = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	htw_t_at(w, 5 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_FIRED);
	/* the record is still delivered */
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, &rec, 1), 1);
	KUNIT_EXPECT_EQ(test, rec.handle, h);
	/* consumed: the wheel forgot it */
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_UNKNOWN);
}

/* A reused handle slot gets a new generation; the old handle is dead. */
static void htwheel_cancel_stale_handle(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 16, 0);
	u64 a, b;

	a = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, a), HTW_WHEEL_CANCEL_OK);
	/* A freed id is the next one handed out. */
	b = htw_t_sched(test, w, 2, 6 * MS, 0, 0);
	KUNIT_EXPECT_EQ(test, (a ^ b) & HTW_ID_MASK, 0);	/* same id, reused */
	KUNIT_EXPECT_NE(test, a, b);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, a), HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, b), HTW_WHEEL_CANCEL_OK);
}

static void htwheel_cancel_garbage_and_foreign(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 16, 0);
	struct htw_wheel *other = htw_t_manual(test, MS, 64, 16, 0);
	static const u64 junk[] = {
		0, U64_MAX, 1, 1ULL << 32, (1ULL << 32) | 1, 0xdeadbeefULL,
		(7ULL << 32) | 0x7fffffff, (1ULL << 32) | 100000000,
	};
	struct htw_wheel_stats st;
	u64 h, ho;
	size_t i;

	h = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	ho = htw_t_sched(test, other, 2, 50 * MS, 0, 0);
	for (i = 0; i < ARRAY_SIZE(junk); i++)
		if (junk[i] != h)
			KUNIT_EXPECT_EQ_MSG(test, htw_wheel_cancel(w, junk[i]),
					    HTW_WHEEL_CANCEL_UNKNOWN, "%llx", junk[i]);
	/*
	 * Same slot and generation in another wheel, but each wheel scrambles
	 * its handles: the other wheel's handle is not one of ours.
	 */
	KUNIT_EXPECT_NE(test, ho, h);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, ho), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(other, ho), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(other, h), HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
}

static void htwheel_cancel_periodic(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 16, 0);
	struct htw_wheel_stats st;
	struct htw_wheel_expiry rec;
	u64 h;

	/* pending periodic: cancelled outright */
	h = htw_t_sched(test, w, 1, 5 * MS, 10 * MS, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
	/* with a record queued: future periods stop, the record stays */
	h = htw_t_sched(test, w, 2, 5 * MS, 10 * MS, 0);
	htw_t_at(w, 5 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_FIRED);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, &rec, 1), 1);
	KUNIT_EXPECT_EQ(test, rec.cookie, 2);
	/* its last record: no longer marked periodic, nothing more comes */
	KUNIT_EXPECT_EQ(test, rec.flags, 0);
	htw_t_at(w, 100 * MS);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, 2);
}

static struct kunit_case htwheel_cancel_cases[] = {
	KUNIT_CASE(htwheel_cancel_before_fire),
	KUNIT_CASE(htwheel_cancel_after_fire),
	KUNIT_CASE(htwheel_cancel_stale_handle),
	KUNIT_CASE(htwheel_cancel_garbage_and_foreign),
	KUNIT_CASE(htwheel_cancel_periodic),
	{}
};

static struct kunit_suite htwheel_cancel_suite = {
	.name = "htwheel_cancel",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_cancel_cases,
};

/* ---- htwheel_periodic ---- */

/* 1,000 periods, read every time: every deadline exactly on the grid. */
static void htwheel_periodic_keeps_phase(struct kunit *test)
{
	const u64 start = 777 * US, period = MS, first = start + MS + 37 * US;
	struct htw_wheel *w = htw_t_manual(test, 100 * US, 64, 4, start);
	struct htw_wheel_stats st;
	struct htw_wheel_expiry rec;
	u64 k = 0, armed;

	htw_t_sched(test, w, 42, first, period, 0);
	while (k < 1000) {
		armed = READ_ONCE((w)->armed_tick);
		KUNIT_ASSERT_NE(test, armed, U64_MAX);
		htw_t_at(w, htw_grid_tick_time(&(w)->grid, armed));
		if (!htw_t_take(test, w, &rec, 1))
			continue;
		KUNIT_ASSERT_EQ(test, rec.deadline_ns, first + k * period);
		KUNIT_EXPECT_EQ(test, rec.overrun, 0);
		KUNIT_EXPECT_LT(test, rec.fired_ns - rec.deadline_ns, 100 * US);
		k++;
	}
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.fired, 1000);
	KUNIT_EXPECT_EQ(test, st.pending, 1);
	/* the 1001st period is armed exactly on the grid */
	armed = READ_ONCE((w)->armed_tick);
	KUNIT_EXPECT_GE(test, htw_grid_tick_time(&(w)->grid, armed), first + 1000 * period);
	KUNIT_EXPECT_LT(test, htw_grid_tick_time(&(w)->grid, armed),
			first + 1000 * period + 100 * US);
}

/* Not read for 5.5 periods: one record, overrun 5, then back on the grid. */
static void htwheel_periodic_overrun(struct kunit *test)
{
	const u64 period = MS, first = 2 * MS;
	struct htw_wheel *w = htw_t_manual(test, 100 * US, 64, 4, 0);
	struct htw_wheel_stats st;
	struct htw_wheel_expiry rec[2];
	u64 t;

	htw_t_sched(test, w, 7, first, period, 0);
	for (t = first; t <= first + 5 * period + period / 2; t += 100 * US)
		htw_t_at(w, t);
	KUNIT_ASSERT_EQ(test, htw_wheel_peek_ready(w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, first);
	KUNIT_EXPECT_EQ(test, rec[0].overrun, 5);
	htw_wheel_consume_ready(w, rec, 1);
	htw_t_at(w, first + 6 * period);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, rec, 2), 1);
	KUNIT_EXPECT_EQ(test, rec[0].deadline_ns, first + 6 * period);
	KUNIT_EXPECT_EQ(test, rec[0].overrun, 0);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.fired, 7);	/* every period counts */
}

static struct kunit_case htwheel_periodic_cases[] = {
	KUNIT_CASE(htwheel_periodic_keeps_phase),
	KUNIT_CASE(htwheel_periodic_overrun),
	{}
};

static struct kunit_suite htwheel_periodic_suite = {
	.name = "htwheel_periodic",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_periodic_cases,
};

/* ---- htwheel_limits ---- */

static void htw_t_expect_same_stats(struct kunit *test, struct htw_wheel *w,
				    const struct htw_wheel_stats *before)
{
	struct htw_wheel_stats now;

	htw_t_stats(w, &now);
	KUNIT_EXPECT_MEMEQ(test, &now, before, sizeof(now));
}

static void htwheel_limits_enospc_and_einval(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 8, 4, 0);
	struct htw_timer_spec spec = { .deadline_ns = 10 * MS };
	struct htw_wheel_stats before;
	struct htw_wheel_expiry rec[4];
	u64 h = 0, handles[4];
	int i;

	for (i = 0; i < 4; i++)
		handles[i] = htw_t_sched(test, w, i, (i + 1) * MS, 0, 0);
	htw_t_stats(w, &before);
	KUNIT_EXPECT_EQ(test, htw_wheel_schedule(w, &spec, &h), -ENOSPC);
	KUNIT_EXPECT_EQ(test, h, 0);
	htw_t_expect_same_stats(test, w, &before);

	/* queued records still count: memory stays bounded */
	htw_t_at(w, 4 * MS);
	htw_t_stats(w, &before);
	KUNIT_EXPECT_EQ(test, before.ready, 4);
	KUNIT_EXPECT_EQ(test, htw_wheel_schedule(w, &spec, &h), -ENOSPC);
	htw_t_expect_same_stats(test, w, &before);
	KUNIT_EXPECT_EQ(test, htw_t_take(test, w, rec, 4), 4);

	/* a period shorter than the tick cannot be served */
	htw_t_stats(w, &before);
	spec.period_ns = MS - 1;
	KUNIT_EXPECT_EQ(test, htw_wheel_schedule(w, &spec, &h), -EINVAL);
	htw_t_expect_same_stats(test, w, &before);
	spec.period_ns = 0;
	KUNIT_EXPECT_EQ(test, htw_wheel_schedule(w, &spec, &h), 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, handles[0]), HTW_WHEEL_CANCEL_UNKNOWN);
}

static struct kunit_case htwheel_limits_cases[] = {
	KUNIT_CASE(htwheel_limits_enospc_and_einval),
	{}
};

static struct kunit_suite htwheel_limits_suite = {
	.name = "htwheel_limits",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_limits_cases,
};

/* ---- htwheel_drain ---- */

static void htwheel_drain_returns_unexpired(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 32, 0);
	struct htw_wheel_unexpired *out = kunit_kcalloc(test, 3, sizeof(*out), GFP_KERNEL);
	struct htw_wheel_expiry *rec = kunit_kcalloc(test, 8, sizeof(*rec), GFP_KERNEL);
	struct htw_wheel_stats st;
	u64 i;
	size_t n;

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, rec);

	for (i = 0; i < 5; i++)
		htw_t_sched(test, w, i, (i + 1) * MS, 0, 0);		/* fire */
	for (i = 5; i < 10; i++)
		htw_t_sched(test, w, i, 1000 * MS * i, 0, 0);		/* pending */
	htw_t_sched(test, w, 10, 2 * MS, 10 * MS, 0);			/* periodic */
	htw_t_at(w, 5 * MS);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.ready, 6);
	KUNIT_EXPECT_EQ(test, st.pending, 6);

	n = htw_wheel_drain(w, out, 3);
	KUNIT_EXPECT_EQ(test, n, 6);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_GE(test, out[i].cookie, 5);
		if (out[i].cookie < 10)
			KUNIT_EXPECT_EQ(test, out[i].remaining_ns,
					1000 * MS * out[i].cookie - 5 * MS);
	}
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.ready, 6);
	KUNIT_EXPECT_EQ(test, st.cancelled, 6);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_t_take(test, w, rec, 8), 6);
	htw_t_at(w, 100 * MS);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	KUNIT_EXPECT_EQ(test, htw_wheel_drain(w, out, 3), 0);
}

static struct kunit_case htwheel_drain_cases[] = {
	KUNIT_CASE(htwheel_drain_returns_unexpired),
	{}
};

static struct kunit_suite htwheel_drain_suite = {
	.name = "htwheel_drain",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_drain_cases,
};

kunit_test_suites(&htwheel_cancel_suite, &htwheel_periodic_suite,
		  &htwheel_limits_suite, &htwheel_drain_suite);
