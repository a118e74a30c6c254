// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for timer identity: a handle names one timer, and nothing
 * else ever answers to it, because cancel takes whatever object the
 * handle's id leads to and a wrong one would free a stranger's timer.
 *
 * - htwheel_identity: cancel must never take an object that was freed and
 *   reused for another timer since it looked the handle up, nor one that
 *   carries another wheel's handle at the same place.  A hook in
 *   htw_timer_is() plays a racing CPU's writes between its reads, so each
 *   interleaving runs deterministically.
 * - htwheel_handles: a freed id is reused at once, with its next
 *   generation, and an id whose
 *   generations are used up is retired, so no handle value comes back.
 */
#include <kunit/test.h>

#include "htw_kunit.h"

/* Schedule a one-shot timer that may be refused: the error, or 0. */
static int htw_t_try_sched(struct htw_wheel *w, u64 cookie, u64 deadline,
			   u64 *handle)
{
	struct htw_timer_spec spec = { .cookie = cookie, .deadline_ns = deadline };

	return htw_wheel_schedule(w, &spec, handle);
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
	kunit_activate_static_stub(test, htw_identity_race, htw_race_hook);
}

/* Undo the forged write, so that the wheel is whole again. */
static void htw_race_end(struct kunit *test)
{
	kunit_deactivate_static_stub(test, htw_identity_race);
	KUNIT_ASSERT_EQ(test, htw_race.calls, 1);
	KUNIT_ASSERT_NOT_NULL(test, htw_race.victim);
	WRITE_ONCE(htw_race.victim->handle, htw_race.original);
}

static void htw_t_expect_pending(struct kunit *test, struct htw_wheel *w,
				 u64 handle, const struct htw_placement *was)
{
	struct htw_placement p;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, handle, &p), 0);
	KUNIT_EXPECT_EQ(test, p.state, HTW_PENDING);
	KUNIT_EXPECT_EQ(test, p.level, was->level);
	KUNIT_EXPECT_EQ(test, p.index, was->index);
}

/*
 * Our timer's object comes to carry wheel B's handle for the timer of the
 * same raw id and generation (every wheel starts both at the same values)
 * in the bucket of the same number, between cancel's first look and its
 * check under our bucket lock.  Only the identity word tells them apart.
 */
static void htwheel_identity_reused_by_another_wheel(struct kunit *test)
{
	struct htw_wheel *a = htw_t_manual(test, MS, 64, 64, 0);
	struct htw_wheel *b = htw_t_manual(test, MS, 64, 64, 0);
	u64 ha = htw_t_sched(test, a, 1, 5 * MS, 0, 0);
	u64 hb = htw_t_sched(test, b, 2, 5 * MS, 0, 0);
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
	htw_t_expect_pending(test, a, ha, &pa);
	htw_t_expect_pending(test, b, hb, &pb);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(a, ha), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(b, hb), HTW_WHEEL_CANCEL_OK);
}

/*
 * The object was freed and reused by our own wheel, in the same bucket,
 * after cancel read its place and before it read the identity again.
 */
static void htwheel_identity_reincarnated_between_reads(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 64, 0);
	u64 h1 = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	u64 h2 = htw_t_sched(test, w, 2, 5 * MS, 0, 0);
	struct htw_placement p;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h1, &p), 0);
	htw_race_run(test, 1, h2 ^ h1 ^ 1);	/* some other handle */
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h1), HTW_WHEEL_CANCEL_UNKNOWN);
	htw_race_end(test);
	htw_t_expect_pending(test, w, h1, &p);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h1), HTW_WHEEL_CANCEL_OK);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h2), HTW_WHEEL_CANCEL_OK);
}

/* Another wheel's handles and random values name nothing here. */
static void htwheel_identity_foreign_handles(struct kunit *test)
{
	struct htw_wheel *a = htw_t_manual(test, MS, 64, 64, 0);
	struct htw_wheel *b = htw_t_manual(test, MS, 64, 64, 0);
	u64 ha = htw_t_sched(test, a, 1, 5 * MS, 0, 0);
	u64 hb = htw_t_sched(test, b, 1, 5 * MS, 0, 0);
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
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_identity_cases,
};

/* ---- htwheel_handles ---- */

/*
 * One timer at a time, scheduled and cancelled: the freed id comes back
 * at once, each time with the next generation, so every handle is new.
 */
static void htwheel_handles_lifo_reuse(struct kunit *test)
{
	const u32 n = 3 * HTW_IDS_PER_CHUNK;
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 1, 0);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	u32 i, same_id = 0, next_gen = 0;

	KUNIT_ASSERT_NOT_NULL(test, h);
	for (i = 0; i < n; i++) {
		h[i] = htw_t_sched(test, w, i, 5 * MS, 0, 0);
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_OK);
		same_id += ((h[i] ^ h[0]) & HTW_ID_MASK) == 0;
		next_gen += i && (((h[i] ^ w->handles.key) >> HTW_ID_BITS) ==
				  ((h[i - 1] ^ w->handles.key) >> HTW_ID_BITS) + 1);
	}
	KUNIT_EXPECT_EQ(test, same_id, n);
	KUNIT_EXPECT_EQ(test, next_gen, n - 1);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_t_distinct(h, n), n);
}

/*
 * Start every id two uses before the end of its generations: each gives
 * two more handles and is then retired, never reused, so stale handles
 * stay unknown and the table finally runs out of ids (ENOSPC).
 */
static void htwheel_handles_generation_end(struct kunit *test)
{
	const u32 n = 2 * HTW_IDS_PER_CHUNK;
	struct htw_wheel *w = htw_t_manual(test, MS, 64, 1, 0);
	u64 *h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	u64 handle, prime;
	u32 i, stale = 0;

	KUNIT_ASSERT_NOT_NULL(test, h);
	/* The table's first chunk exists once one timer was scheduled. */
	prime = htw_t_sched(test, w, 0, 5 * MS, 0, 0);
	KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, prime), HTW_WHEEL_CANCEL_OK);
	htw_handles_age(&(w)->handles, HTW_GEN_MAX - 1);
	for (i = 0; i < n; i++) {
		h[i] = htw_t_sched(test, w, i, 5 * MS, 0, 0);
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_OK);
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, h[i]), HTW_WHEEL_CANCEL_UNKNOWN);
	}
	KUNIT_EXPECT_EQ(test, htw_t_try_sched(w, 0, 5 * MS, &handle), -ENOSPC);
	for (i = 0; i < n; i++)
		stale += htw_wheel_cancel(w, h[i]) != HTW_WHEEL_CANCEL_UNKNOWN;
	KUNIT_EXPECT_EQ(test, stale, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, prime), HTW_WHEEL_CANCEL_UNKNOWN);
	KUNIT_EXPECT_EQ(test, htw_t_distinct(h, n), n);
}

static struct kunit_case htwheel_handles_cases[] = {
	KUNIT_CASE(htwheel_handles_lifo_reuse),
	KUNIT_CASE(htwheel_handles_generation_end),
	{}
};

static struct kunit_suite htwheel_handles_suite = {
	.name = "htwheel_handles",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_handles_cases,
};

kunit_test_suites(&htwheel_identity_suite, &htwheel_handles_suite);
