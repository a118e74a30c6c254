// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for timer identity and bounded work in the htwheel core:
 *
 * - htwheel_identity: cancel must never take an object that was freed and
 *   reused (SLAB_TYPESAFE_BY_RCU, by this wheel or another) for the timer
 *   its handle named.  A hook in htw_timer_is() plays a racing CPU's writes
 *   between its reads, so each interleaving runs deterministically.
 * - htwheel_handles: ids are reused first-in first-out, and an id whose
 *   generations are used up is retired, so no handle value comes back.
 * - htwheel_batches: a run stops after HTW_BATCH timers and resumes where
 *   it stopped, with schedule, cancel, drain and read in between.
 */
#include <kunit/test.h>
#include <linux/sort.h>

#include "htw_internal.h"
#include "htw_tick.h"

#define MS	NSEC_PER_MSEC

KUNIT_DEFINE_ACTION_WRAPPER(htw_i_destroy_action, htw_wheel_destroy,
			    struct htw_wheel *);

static struct htw_wheel *htw_i_manual(struct kunit *test, u64 max_pending)
{
	struct htw_geometry geo = {
		.tick_ns = MS,
		.slots = 64,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = max_pending,
	};
	struct htw_wheel *w;

	w = htw_wheel_create_manual(&geo, NULL, NULL, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_i_destroy_action, w), 0);
	return w;
}

static int htw_i_sched(struct htw_wheel *w, u64 cookie, u64 deadline,
		       u64 *handle)
{
	struct htw_timer_spec spec = { .cookie = cookie, .deadline_ns = deadline };

	return htw_wheel_schedule(w, &spec, handle);
}

static u64 htw_i_must_sched(struct kunit *test, struct htw_wheel *w,
			    u64 cookie, u64 deadline)
{
	u64 handle = 0;

	KUNIT_ASSERT_EQ(test, htw_i_sched(w, cookie, deadline, &handle), 0);
	KUNIT_ASSERT_NE(test, handle, 0);
	return handle;
}

/* ---- htwheel_identity ---- */

/* What the hook does, and what it saw. */
static struct {
	unsigned int step;	/* after which read of htw_timer_is() to act */
	u64 forged;		/* ->handle a racing owner would have written */
	struct htw_timer *victim;
	u64 original;
	unsigned int calls;
} htw_race;

static void htw_race_hook(struct htw_timer *t, unsigned int step)
{
	if (step != htw_race.step || htw_race.victim)
		return;
	htw_race.calls++;
	htw_race.victim = t;
	htw_race.original = t->handle;
	/* The other CPU: the object now carries another timer's identity. */
	WRITE_ONCE(t->handle, htw_race.forged);
}

static void htw_race_run(struct kunit *test, unsigned int step, u64 forged)
{
	memset(&htw_race, 0, sizeof(htw_race));
	htw_race.step = step;
	htw_race.forged = forged;
	WRITE_ONCE(htw_identity_hook, htw_race_hook);
}

/* Undo the forged write, so that the wheel is whole again. */
static void htw_race_end(struct kunit *test)
{
	WRITE_ONCE(htw_identity_hook, NULL);
	KUNIT_ASSERT_EQ(test, htw_race.calls, 1);
	KUNIT_ASSERT_NOT_NULL(test, htw_race.victim);
	WRITE_ONCE(htw_race.victim->handle, htw_race.original);
}

static void htw_i_expect_pending(struct kunit *test, struct htw_wheel *w,
				 u64 handle, const struct htw_placement *was)
{
	struct htw_placement p;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, handle, &p), 0);
	KUNIT_EXPECT_EQ(test, p.state, HTW_PENDING);
	KUNIT_EXPECT_EQ(test, p.level, was->level);
	KUNIT_EXPECT_EQ(test, p.index, was->index);
}

/*
 * Wheel B reused our timer's object for a timer of its own with the same
 * raw id and generation (every wheel starts both at the same values) in
 * the bucket of the same number, between cancel's first look and its
 * check under our bucket lock.  Only the identity word tells them apart.
 */
static void htwheel_identity_reused_by_another_wheel(struct kunit *test)
{
	struct htw_wheel *a = htw_i_manual(test, 64), *b = htw_i_manual(test, 64);
	u64 ha = htw_i_must_sched(test, a, 1, 5 * MS);
	u64 hb = htw_i_must_sched(test, b, 2, 5 * MS);
	struct htw_placement pa, pb;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(a, ha, &pa), 0);
	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(b, hb, &pb), 0);
	/* Same place in both wheels: where alone cannot tell them apart. */
	KUNIT_ASSERT_EQ(test, pa.level, pb.level);
	KUNIT_ASSERT_EQ(test, pa.index, pb.index);
	KUNIT_ASSERT_NE(test, ha, hb);

	htw_race_run(test, 0, hb);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, ha), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_race_end(test);

	/* Nothing was unlinked: both timers are where they were. */
	htw_i_expect_pending(test, a, ha, &pa);
	htw_i_expect_pending(test, b, hb, &pb);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, ha), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(b, hb), HTW_WHEEL_CANCEL_OK);
}

/*
 * The object was freed and reused by our own wheel, in the same bucket,
 * after cancel read its place and before it read the identity again.
 */
static void htwheel_identity_reincarnated_between_reads(struct kunit *test)
{
	struct htw_wheel *w = htw_i_manual(test, 64);
	u64 h1 = htw_i_must_sched(test, w, 1, 5 * MS);
	u64 h2 = htw_i_must_sched(test, w, 2, 5 * MS);
	struct htw_placement p;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h1, &p), 0);
	htw_race_run(test, 1, h2 ^ h1 ^ 1);	/* some other handle */
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h1), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_race_end(test);
	htw_i_expect_pending(test, w, h1, &p);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h1), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h2), HTW_WHEEL_CANCEL_OK);
}

/* Another wheel's handles and random values name nothing here. */
static void htwheel_identity_foreign_handles(struct kunit *test)
{
	struct htw_wheel *a = htw_i_manual(test, 64), *b = htw_i_manual(test, 64);
	u64 ha = htw_i_must_sched(test, a, 1, 5 * MS);
	u64 hb = htw_i_must_sched(test, b, 1, 5 * MS);
	u32 i;

	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, hb), HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(b, ha), HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, 0), HTW_WHEEL_CANCEL_UNKNOWN);
	for (i = 0; i < 1000; i++)
		KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, get_random_u64() | 1),
				HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, ha), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(b, hb), HTW_WHEEL_CANCEL_OK);
}

static struct kunit_case htwheel_identity_cases[] = {
	KUNIT_CASE(htwheel_identity_reused_by_another_wheel),
	KUNIT_CASE(htwheel_identity_reincarnated_between_reads),
	KUNIT_CASE(htwheel_identity_foreign_handles),
	{}
};

static struct kunit_suite htwheel_identity_suite = {
	.name = "htwheel_identity",
	.test_cases = htwheel_identity_cases,
};

/* ---- htwheel_handles ---- */

static int htw_i_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void htw_i_expect_distinct(struct kunit *test, u64 *h, u32 n)
{
	u32 i, dups = 0;

	sort(h, n, sizeof(*h), htw_i_cmp_u64, NULL);
	for (i = 1; i < n; i++)
		dups += h[i] == h[i - 1];
	KUNIT_EXPECT_EQ(test, dups, 0);
}

/*
 * One timer at a time, scheduled and cancelled: FIFO reuse walks through
 * every id of the table before any comes back, so a whole chunk of ids
 * goes by with each at its first generation.
 */
static void htwheel_handles_fifo_reuse(struct kunit *test)
{
	const u32 n = 3 * HTW_IDS_PER_CHUNK;
	struct htw_wheel *w = htw_i_manual(test, 1);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	u32 i, first_gen = 0;

	KUNIT_ASSERT_NOT_NULL(test, h);
	for (i = 0; i < n; i++) {
		h[i] = htw_i_must_sched(test, w, i, 5 * MS);
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_OK);
		first_gen += ((h[i] ^ h[0]) >> HTW_ID_BITS) == 0;
	}
	/* Same generation bits as the first handle: ids used once each. */
	KUNIT_EXPECT_EQ(test, first_gen, HTW_IDS_PER_CHUNK);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_i_expect_distinct(test, h, n);
}

/*
 * Start every id two uses before the end of its generations: each gives
 * two more handles and is then retired, never reused, so stale handles
 * stay unknown and the table finally runs out of ids (ENOSPC).
 */
static void htwheel_handles_generation_end(struct kunit *test)
{
	const u32 n = 2 * HTW_IDS_PER_CHUNK;
	struct htw_wheel *w = htw_i_manual(test, 1);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	u64 handle, prime;
	u32 i, stale = 0;

	KUNIT_ASSERT_NOT_NULL(test, h);
	/* The table's first chunk exists once one timer was scheduled. */
	prime = htw_i_must_sched(test, w, 0, 5 * MS);
	KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, prime), HTW_WHEEL_CANCEL_OK);
	htw_ids_age(w, HTW_GEN_MAX - 1);
	for (i = 0; i < n; i++) {
		h[i] = htw_i_must_sched(test, w, i, 5 * MS);
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_OK);
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_UNKNOWN);
	}
	KUNIT_EXPECT_EQ(test, htw_i_sched(w, 0, 5 * MS, &handle), -ENOSPC);
	for (i = 0; i < n; i++)
		stale += htw_wheel_cancel(w, h[i]) != HTW_WHEEL_CANCEL_UNKNOWN;
	KUNIT_EXPECT_EQ(test, stale, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, prime), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_i_expect_distinct(test, h, n);
}

static struct kunit_case htwheel_handles_cases[] = {
	KUNIT_CASE(htwheel_handles_fifo_reuse),
	KUNIT_CASE(htwheel_handles_generation_end),
	{}
};

static struct kunit_suite htwheel_handles_suite = {
	.name = "htwheel_handles",
	.test_cases = htwheel_handles_cases,
};

/* ---- htwheel_batches ---- */

static size_t htw_i_take_all(struct kunit *test, struct htw_wheel *w)
{
	struct htw_wheel_expiry rec[16];
	size_t n, total = 0, i;

	while ((n = htw_wheel_peek_ready(w, rec, ARRAY_SIZE(rec)))) {
		for (i = 0; i < n; i++)
			KUNIT_EXPECT_GE(test, rec[i].fired_ns, rec[i].deadline_ns);
		htw_wheel_consume_ready(w, rec, n);
		total += n;
	}
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
	struct htw_wheel *w = htw_i_manual(test, 2 * n);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	struct htw_wheel_stats st;
	u32 i, cancelled = 0, batches = 1;
	u64 late;

	KUNIT_ASSERT_NOT_NULL(test, h);
	for (i = 0; i < n; i++)
		h[i] = htw_i_must_sched(test, w, i, (i % 3 ? 64 : 10) * MS);
	htw_wheel_set_now(w, 64 * MS);
	KUNIT_ASSERT_FALSE(test, htw_wheel_run_batch(w));
	/* At most one batch fired; cancel some of what is left. */
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_LE(test, st.fired, HTW_BATCH);
	for (i = 0; i < n; i += 7)
		cancelled += htw_wheel_cancel(w, h[i]) == HTW_WHEEL_CANCEL_OK;
	KUNIT_EXPECT_GT(test, cancelled, 0);
	/* Due now, scheduled while the tick is open: fires, at most a tick late. */
	late = htw_i_must_sched(test, w, n, 64 * MS);
	htw_i_take_all(test, w);
	while (!htw_wheel_run_batch(w))
		batches++;
	KUNIT_EXPECT_GE(test, batches, 2);
	htw_wheel_set_now(w, 65 * MS);
	htw_wheel_run_tick(w);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.fired + cancelled, n + 1);
	htw_i_take_all(test, w);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, late), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.ready, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), U64_MAX);
}

/* A drain while a run is stopped between batches takes all the rest. */
static void htwheel_batches_drain_stopped_run(struct kunit *test)
{
	const u32 n = 2 * HTW_BATCH + 100;
	struct htw_wheel *w = htw_i_manual(test, n);
	struct htw_wheel_stats st;
	size_t drained, read;
	u32 i;

	for (i = 0; i < n; i++)
		htw_i_must_sched(test, w, i, 10 * MS);
	htw_wheel_set_now(w, 10 * MS);
	KUNIT_ASSERT_FALSE(test, htw_wheel_run_batch(w));
	drained = htw_wheel_drain(w, NULL, 0);
	htw_wheel_run_tick(w);
	read = htw_i_take_all(test, w);
	KUNIT_EXPECT_EQ(test, read, HTW_BATCH);
	KUNIT_EXPECT_EQ(test, drained + read, n);
	htw_wheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, drained);
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), U64_MAX);
}

static struct kunit_case htwheel_batches_cases[] = {
	KUNIT_CASE(htwheel_batches_resume_mid_tick),
	KUNIT_CASE(htwheel_batches_drain_stopped_run),
	{}
};

static struct kunit_suite htwheel_batches_suite = {
	.name = "htwheel_batches",
	.test_cases = htwheel_batches_cases,
};

kunit_test_suites(&htwheel_identity_suite, &htwheel_handles_suite,
		  &htwheel_batches_suite);
