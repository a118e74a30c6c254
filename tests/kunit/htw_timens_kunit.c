// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the time namespace conversions (src/htw_timens.h):
 * absolute times between the opener's clock and the host's.  Deadlines
 * come in on the opener's clock and the wheel runs on the host's, so a
 * conversion that wrapped or lost order would fire a timer early.
 */
#include <kunit/test.h>
#include <linux/limits.h>

#include "htw_timens.h"

#define SEC	NSEC_PER_SEC

/* A namespace ahead of the host: its clock reads host + offset. */
static void htwheel_timens_positive_offset(struct kunit *test)
{
	const s64 off = 100 * SEC;

	KUNIT_EXPECT_EQ(test, htw_timens_to_host(150 * SEC, off), 50 * SEC);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(off + 1, off), 1);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(50 * SEC, off), 150 * SEC);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(0, off), (u64)off);
}

/* A namespace behind the host (allowed while its clock stays >= 0). */
static void htwheel_timens_negative_offset(struct kunit *test)
{
	const s64 off = -3 * SEC;

	KUNIT_EXPECT_EQ(test, htw_timens_to_host(2 * SEC, off), 5 * SEC);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(0, off), 3 * SEC);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(5 * SEC, off), 2 * SEC);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(3 * SEC, off), 0);
}

static void htwheel_timens_zero_offset_is_identity(struct kunit *test)
{
	static const u64 t[] = { 0, 1, SEC, U64_MAX - 1, U64_MAX };
	int i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		KUNIT_EXPECT_EQ(test, htw_timens_to_host(t[i], 0), t[i]);
		KUNIT_EXPECT_EQ(test, htw_timens_from_host(t[i], 0), t[i]);
	}
}

/*
 * Like do_timens_ktime_to_host(): a deadline earlier than the offset is
 * before the host's clock started, so it is already due (host time 0).
 */
static void htwheel_timens_deadline_before_offset_is_due(struct kunit *test)
{
	const s64 off = 10 * SEC;

	KUNIT_EXPECT_EQ(test, htw_timens_to_host(0, off), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(off - 1, off), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(off, off), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(0, S64_MAX), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(S64_MAX, S64_MAX), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(U64_MAX, S64_MAX),
			U64_MAX - S64_MAX);
}

/* Conversions that would leave the u64 range stop at its ends. */
static void htwheel_timens_saturates(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(U64_MAX - 5, -10), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(U64_MAX, -1), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(U64_MAX - 10, -10), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(U64_MAX - 11, -10), U64_MAX - 1);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(1, S64_MIN), (u64)S64_MAX + 2);
	KUNIT_EXPECT_EQ(test, htw_timens_to_host(U64_MAX, S64_MIN), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(U64_MAX - 5, 10), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(U64_MAX, S64_MAX), U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(5, -10), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host((u64)S64_MAX, S64_MIN), 0);
	KUNIT_EXPECT_EQ(test, htw_timens_from_host(U64_MAX, S64_MIN),
			(u64)S64_MAX);
}

static const s64 htw_t_offsets[] = {
	S64_MIN, -1000 * SEC, -1, 0, 1, 1000 * SEC, S64_MAX,
};

/* Sorted, and around every offset's magnitude. */
static const u64 htw_t_times[] = {
	0, 1, 2, SEC - 1, 1000 * SEC - 1, 1000 * SEC, 1000 * SEC + 1,
	(u64)S64_MAX - 1, (u64)S64_MAX, (u64)S64_MAX + 1, (u64)S64_MAX + 2,
	U64_MAX - 1000 * SEC, U64_MAX - 1, U64_MAX,
};

/*
 * For every offset: both directions keep the order of times (so a
 * record's deadline_ns stays <= its expired_ns), and a time that converts
 * without saturating converts back to itself.
 */
static void htwheel_timens_monotonic_and_reversible(struct kunit *test)
{
	u64 prev_host, prev_ns, host, ns_time;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(htw_t_offsets); i++) {
		s64 off = htw_t_offsets[i];

		prev_host = 0;
		prev_ns = 0;
		for (j = 0; j < ARRAY_SIZE(htw_t_times); j++) {
			u64 t = htw_t_times[j];

			host = htw_timens_to_host(t, off);
			ns_time = htw_timens_from_host(t, off);
			KUNIT_EXPECT_GE_MSG(test, host, prev_host, "offset %lld t %llu", off, t);
			KUNIT_EXPECT_GE_MSG(test, ns_time, prev_ns, "offset %lld t %llu", off, t);
			prev_host = host;
			prev_ns = ns_time;
			if (host && host != U64_MAX)
				KUNIT_EXPECT_EQ_MSG(test, htw_timens_from_host(host, off), t,
						    "offset %lld t %llu", off, t);
			if (ns_time && ns_time != U64_MAX)
				KUNIT_EXPECT_EQ_MSG(test, htw_timens_to_host(ns_time, off), t,
						    "offset %lld t %llu", off, t);
		}
	}
}

static void htwheel_timens_offset_follows_clock(struct kunit *test)
{
	const struct htw_timens tn = { .monotonic = 7, .boottime = -9 };

	KUNIT_EXPECT_EQ(test, htw_timens_offset(&tn, CLOCK_MONOTONIC), 7);
	KUNIT_EXPECT_EQ(test, htw_timens_offset(&tn, CLOCK_BOOTTIME), -9);
}

/* The test runs in the initial time namespace: no offset at all. */
static void htwheel_timens_capture_init_ns(struct kunit *test)
{
	struct htw_timens tn = { .monotonic = 1, .boottime = 1 };

	htw_timens_capture(&tn);
	KUNIT_EXPECT_EQ(test, tn.monotonic, 0);
	KUNIT_EXPECT_EQ(test, tn.boottime, 0);
}

static struct kunit_case htwheel_timens_cases[] = {
	KUNIT_CASE(htwheel_timens_positive_offset),
	KUNIT_CASE(htwheel_timens_negative_offset),
	KUNIT_CASE(htwheel_timens_zero_offset_is_identity),
	KUNIT_CASE(htwheel_timens_deadline_before_offset_is_due),
	KUNIT_CASE(htwheel_timens_saturates),
	KUNIT_CASE(htwheel_timens_monotonic_and_reversible),
	KUNIT_CASE(htwheel_timens_offset_follows_clock),
	KUNIT_CASE(htwheel_timens_capture_init_ns),
	{}
};

static struct kunit_suite htwheel_timens_suite = {
	.name = "htwheel_timens",
	.test_cases = htwheel_timens_cases,
};

kunit_test_suite(htwheel_timens_suite);
