// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the htwheel core (src/htw_wheel.c, src/htw_tick.c).
 *
 * Most cases use a "manual" wheel: its clock only moves when the test sets
 * it and it never arms its hrtimer, so placement, cascading, arming and
 * expiry are checked exactly and fast.  htwheel_realtime uses real wheels
 * with their hrtimer on CLOCK_MONOTONIC and asserts no tight upper bounds.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "htw_internal.h"
#include "htw_tick.h"
#include "htwheel_kunit_slab.h"

#define MS	NSEC_PER_MSEC
#define US	NSEC_PER_USEC

KUNIT_DEFINE_ACTION_WRAPPER(htw_t_destroy_action, htw_wheel_destroy,
			    struct htw_wheel *);

static struct htw_geometry htw_t_geo(u64 tick_ns, u32 slots, u64 max_pending)
{
	return (struct htw_geometry) {
		.tick_ns = tick_ns,
		.slots = slots,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = max_pending,
	};
}

/* A manual-clock wheel destroyed when the test ends. */
static struct htw_wheel *htw_t_manual(struct kunit *test, u64 tick_ns,
				      u32 slots, u64 max_pending, u64 start_ns)
{
	struct htw_geometry geo = htw_t_geo(tick_ns, slots, max_pending);
	struct htw_wheel *w;

	w = htw_wheel_create_manual(&geo, NULL, NULL, start_ns);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action, w), 0);
	return w;
}

/* Move the manual clock to @now_ns and run the tick there. */
static void htw_t_at(struct htw_wheel *w, u64 now_ns)
{
	htw_wheel_set_now(w, now_ns);
	htw_wheel_run_tick(w);
}

static u64 htw_t_sched(struct kunit *test, struct htw_wheel *w, u64 cookie,
		       u64 deadline, u64 period, u64 slack)
{
	struct htw_timer_spec spec = {
		.cookie = cookie,
		.deadline_ns = deadline,
		.period_ns = period,
		.slack_ns = slack,
	};
	u64 handle = 0;

	KUNIT_ASSERT_EQ(test, htw_wheel_schedule(w, &spec, &handle), 0);
	KUNIT_ASSERT_NE(test, handle, 0);
	return handle;
}

/*
 * Take up to @max records off the ready queue; every one is checked
 * against the never-early rule.
 */
static size_t htw_t_take(struct kunit *test, struct htw_wheel *w,
			 struct htw_wheel_expiry *out, size_t max)
{
	size_t n = htw_wheel_peek_ready(w, out, max), i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_GE_MSG(test, out[i].fired_ns, out[i].deadline_ns,
				    "cookie %llu fired early", out[i].cookie);
	htw_wheel_consume_ready(w, out, n);
	return n;
}

static void htw_t_stats(struct htw_wheel *w, struct htw_wheel_stats *st)
{
	htw_wheel_get_stats(w, st);
}

static u64 htw_t_ceil_div(u64 n, u64 d)
{
	u64 rem, q = div64_u64_rem(n, d, &rem);

	return q + (rem != 0);
}

/* ---- htwheel_geometry ---- */

static void htwheel_geometry_normalises(struct kunit *test)
{
	struct htw_geometry geo = htw_t_geo(MS, 5, 100);

	KUNIT_ASSERT_EQ(test, htw_geometry_normalise(&geo), 0);
	KUNIT_EXPECT_EQ(test, geo.slots, 8);
	geo.slots = 1;
	KUNIT_ASSERT_EQ(test, htw_geometry_normalise(&geo), 0);
	KUNIT_EXPECT_EQ(test, geo.slots, HTW_MIN_SLOTS);
	geo.slots = 512;
	KUNIT_ASSERT_EQ(test, htw_geometry_normalise(&geo), 0);
	KUNIT_EXPECT_EQ(test, geo.slots, 512);
	geo.slots = HTW_MAX_SLOTS;
	KUNIT_ASSERT_EQ(test, htw_geometry_normalise(&geo), 0);
	KUNIT_EXPECT_EQ(test, geo.slots, HTW_MAX_SLOTS);
}

static void htwheel_geometry_rejects(struct kunit *test)
{
	static const struct htw_geometry bad[] = {
		{ .tick_ns = HTW_MIN_TICK_NS - 1, .slots = 8, .max_pending = 1 },
		{ .tick_ns = HTW_MAX_TICK_NS + 1, .slots = 8, .max_pending = 1 },
		{ .tick_ns = MS, .slots = 0, .max_pending = 1 },
		{ .tick_ns = MS, .slots = HTW_MAX_SLOTS + 1, .max_pending = 1 },
		{ .tick_ns = MS, .slots = 8, .max_pending = 0 },
		{ .tick_ns = MS, .slots = 8, .max_pending = HTW_MAX_PENDING + 1 },
		{ .tick_ns = MS, .slots = 8, .max_pending = 1,
		  .clockid = CLOCK_REALTIME },
	};
	struct htw_geometry geo;
	struct htw_wheel *w;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		geo = bad[i];
		if (i < ARRAY_SIZE(bad) - 1)	/* 0 is CLOCK_REALTIME */
			geo.clockid = CLOCK_MONOTONIC;
		KUNIT_EXPECT_EQ_MSG(test, htw_geometry_normalise(&geo), -EINVAL,
				    "case %zu", i);
		w = htw_wheel_create(&geo, NULL, NULL, GFP_KERNEL);
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(w), -EINVAL, "case %zu", i);
		if (!IS_ERR_OR_NULL(w))
			htw_wheel_destroy(w);
	}
}

struct htw_geo_case {
	u64 tick_ns;
	u32 slots;
};

static const struct htw_geo_case htw_geo_cases[] = {
	{ 10 * US, 4 }, { 10 * US, 64 }, { 100 * US, 8 }, { MS, 512 },
	{ MS, 5 }, { 3 * MS + 7, 32 }, { 100 * MS, 8 }, { 10 * NSEC_PER_SEC, 16 },
	{ 250 * US, 4096 },
};

static void htw_geo_case_desc(const struct htw_geo_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "tick %llu ns, %u slots",
		 c->tick_ns, c->slots);
}

KUNIT_ARRAY_PARAM(htw_geo, htw_geo_cases, htw_geo_case_desc);

/* slots^levels ticks cover every u64 ns; one level fewer would not. */
static void htwheel_geometry_levels_cover_u64(struct kunit *test)
{
	const struct htw_geo_case *c = test->param_value;
	struct htw_geometry geo = htw_t_geo(c->tick_ns, c->slots, 1);
	u32 bits, need;

	KUNIT_ASSERT_EQ(test, htw_geometry_normalise(&geo), 0);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(geo.slots));
	KUNIT_EXPECT_GE(test, geo.slots, c->slots);
	KUNIT_EXPECT_LT(test, geo.slots, 2 * max_t(u32, c->slots, HTW_MIN_SLOTS));
	bits = ilog2(geo.slots);
	/* ticks up to ceil(U64_MAX / tick) must be < 2^(bits * levels) */
	need = fls64(div64_u64(U64_MAX, geo.tick_ns) + 1);
	KUNIT_EXPECT_GE(test, bits * geo.levels, need);
	KUNIT_EXPECT_LT(test, bits * (geo.levels - 1), need);
}

static struct kunit_case htwheel_geometry_cases[] = {
	KUNIT_CASE(htwheel_geometry_normalises),
	KUNIT_CASE(htwheel_geometry_rejects),
	KUNIT_CASE_PARAM(htwheel_geometry_levels_cover_u64, htw_geo_gen_params),
	{}
};

static struct kunit_suite htwheel_geometry_suite = {
	.name = "htwheel_geometry",
	.test_cases = htwheel_geometry_cases,
};

/* ---- htwheel_placement ---- */

static void htw_t_expect_at(struct kunit *test, struct htw_wheel *w, u64 h,
			    enum htw_state state, u32 level, u32 index)
{
	struct htw_placement p;

	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h, &p), 0);
	KUNIT_EXPECT_EQ(test, p.state, state);
	if (state != HTW_PENDING)
		return;
	KUNIT_EXPECT_EQ(test, p.level, level);
	KUNIT_EXPECT_EQ(test, p.index, index);
}

/* Netty's example: tick 100 ms, 8 slots, a 350 ms timer is in slot 4. */
static void htwheel_placement_350ms_in_slot_4(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, 100 * MS, 8, 16, 0);
	struct htw_wheel_expiry rec;
	u64 h;

	h = htw_t_sched(test, w, 1, 350 * MS, 0, 0);
	/* level 0 is the "0 rounds" wheel: bucket 4, fires at tick 4 */
	htw_t_expect_at(test, w, h, HTW_PENDING, 0, 4);
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), 4);
	htw_t_at(w, 399 * MS);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	htw_t_at(w, 400 * MS);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, &rec, 1), 1);
	KUNIT_EXPECT_EQ(test, rec.cookie, 1);
	KUNIT_EXPECT_EQ(test, rec.fired_ns, 400 * MS);
}

/*
 * Netty's example: at slot 2, a 900 ms timer needs one full round.  Here it
 * waits on level 1 (bucket 11 >> 3 = 1), untouched by the level-0 passes,
 * moves to level-0 bucket 3 when that level-1 bucket comes round at tick 8
 * and fires at tick 11 (1100 ms), not a tick before.
 */
static void htwheel_placement_900ms_one_round(struct kunit *test)
{
	struct htw_wheel *w = htw_t_manual(test, 100 * MS, 8, 16, 0);
	struct htw_wheel_stats st;
	struct htw_wheel_expiry rec;
	u64 h, tick;

	htw_t_at(w, 200 * MS);		/* the wheel is at slot 2 */
	h = htw_t_sched(test, w, 9, 200 * MS + 900 * MS, 0, 0);
	htw_t_expect_at(test, w, h, HTW_PENDING, 1, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), 8);
	for (tick = 3; tick < 8; tick++) {
		htw_t_at(w, tick * 100 * MS);
		htw_t_expect_at(test, w, h, HTW_PENDING, 1, 1);
	}
	htw_t_at(w, 800 * MS);
	htw_t_expect_at(test, w, h, HTW_PENDING, 0, 3);
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), 11);
	htw_t_at(w, 1100 * MS - 1);
	KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
	htw_t_at(w, 1100 * MS);
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, &rec, 1), 1);
	KUNIT_EXPECT_EQ(test, rec.deadline_ns, 1100 * MS);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.cascaded, 1);
	KUNIT_EXPECT_EQ(test, st.fired, 1);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
}

/* Expected placement of tick @e for a wheel at tick 0, computed directly. */
static void htw_t_expected(const struct htw_geometry *geo, u64 e, u32 *level,
			   u32 *index)
{
	u32 bits = ilog2(geo->slots), l = 0;

	while (l + 1 < geo->levels && (e >> (bits * (l + 1))) != 0)
		l++;
	*level = l;
	*index = (e >> (bits * l)) & (geo->slots - 1);
}

/*
 * Deadlines at each level boundary (slots^L ticks) and one tick before
 * it, each -1, 0, +1 ns: placed on the right level and bucket, and fired
 * exactly at the first tick >= deadline.
 */
static void htwheel_placement_level_boundaries(struct kunit *test)
{
	const struct htw_geo_case *c = test->param_value;
	struct htw_geometry geo = htw_t_geo(c->tick_ns, c->slots, 1);
	static const s64 offs[] = { -1, 0, 1 };
	u64 *deadlines, *handles, boundary, prev_e = 0;
	struct htw_wheel_expiry rec[8];
	struct htw_placement p;
	struct htw_wheel *w;
	u32 l, level, index, n = 0, i, j, k, b;

	KUNIT_ASSERT_EQ(test, htw_geometry_normalise(&geo), 0);
	deadlines = kunit_kcalloc(test, 6 * geo.levels + 8, sizeof(u64), GFP_KERNEL);
	handles = kunit_kcalloc(test, 6 * geo.levels + 8, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, deadlines);
	KUNIT_ASSERT_NOT_NULL(test, handles);
	w = htw_t_manual(test, c->tick_ns, c->slots, 6 * geo.levels + 8, 0);
	/* increasing: (boundary - 1 tick) +-1 ns, then boundary +-1 ns */
	for (l = 0; l <= geo.levels; l++) {
		if (check_shl_overflow(1ULL, ilog2(geo.slots) * l, &boundary) ||
		    check_mul_overflow(boundary, geo.tick_ns, &boundary) ||
		    boundary == U64_MAX)
			break;
		for (b = 0; b < 2; b++) {
			u64 at = b ? boundary : boundary - geo.tick_ns;

			if (!at)
				continue;
			for (k = 0; k < 3; k++) {
				deadlines[n] = at + offs[k];
				handles[n] = htw_t_sched(test, w, n, deadlines[n], 0, 0);
				n++;
			}
		}
	}
	/* and the largest deadline there is */
	deadlines[n] = U64_MAX;
	handles[n] = htw_t_sched(test, w, n, U64_MAX, 0, 0);
	n++;

	for (i = 0; i < n; i++) {
		u64 e = htw_t_ceil_div(deadlines[i], geo.tick_ns);

		htw_t_expected(&geo, e, &level, &index);
		KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, handles[i], &p), 0);
		KUNIT_EXPECT_EQ_MSG(test, p.expires, e, "deadline %llu", deadlines[i]);
		KUNIT_EXPECT_EQ_MSG(test, p.level, level, "deadline %llu", deadlines[i]);
		KUNIT_EXPECT_EQ_MSG(test, p.index, index, "deadline %llu", deadlines[i]);
	}
	/* Visit each expiry tick, and 1 ns before it: exactly its timers fire. */
	for (i = 0; i < n; i++) {
		u64 e = htw_t_ceil_div(deadlines[i], geo.tick_ns);
		u64 at = htw_wheel_tick_time(w, e);
		u32 want = 0, got;

		if (e == prev_e)
			continue;
		prev_e = e;
		if (at == U64_MAX) {
			/* cannot fire before the end of time, and does not */
			htw_t_at(w, U64_MAX);
			KUNIT_EXPECT_FALSE(test, htw_wheel_has_ready(w));
			continue;
		}
		for (j = i; j < n; j++)
			want += htw_t_ceil_div(deadlines[j], geo.tick_ns) == e;
		htw_t_at(w, at - 1);
		KUNIT_EXPECT_FALSE_MSG(test, htw_wheel_has_ready(w),
				       "deadline %llu early", deadlines[i]);
		htw_t_at(w, at);
		got = htw_t_take(test, w, rec, ARRAY_SIZE(rec));
		KUNIT_ASSERT_EQ_MSG(test, got, want, "deadline %llu", deadlines[i]);
		for (j = 0; j < got; j++) {
			KUNIT_EXPECT_EQ(test, htw_t_ceil_div(deadlines[rec[j].cookie],
							     geo.tick_ns), e);
			KUNIT_EXPECT_EQ(test, rec[j].fired_ns, at);
		}
	}
}

static struct kunit_case htwheel_placement_cases[] = {
	KUNIT_CASE(htwheel_placement_350ms_in_slot_4),
	KUNIT_CASE(htwheel_placement_900ms_one_round),
	KUNIT_CASE_PARAM(htwheel_placement_level_boundaries, htw_geo_gen_params),
	{}
};

static struct kunit_suite htwheel_placement_suite = {
	.name = "htwheel_placement",
	.test_cases = htwheel_placement_cases,
};

/* ---- htwheel_sweep: random deadlines, driven by the wheel's own arming ---- */

#define HTW_SWEEP_N	400

static u64 htw_t_random_deadline(struct rnd_state *rnd, u64 start, u64 tick,
				 u32 slots)
{
	u32 kind = prandom_u32_state(rnd) % 8;
	u64 r = prandom_u32_state(rnd) | (u64)prandom_u32_state(rnd) << 32;

	switch (kind) {
	case 0:		/* in the past */
		return start - (r % start);
	case 1:		/* exactly on a tick */
		return start - start % tick + (r % (4ULL * slots)) * tick;
	case 2:		/* far: any magnitude, up to U64_MAX */
		r >>= prandom_u32_state(rnd) % 64;
		return start + min(r, U64_MAX - start);
	default:	/* within a few rotations of level 0 and 1 */
		return start + r % (3ULL * slots * slots * tick + 1);
	}
}

/*
 * Schedule HTW_SWEEP_N random timers, then repeatedly jump the clock to the
 * tick the wheel armed for.  Every timer must fire exactly at the first
 * tick >= its deadline (the next tick for past ones), the wheel must never
 * be armed later than the earliest unfired timer, and each timer moves at
 * most once per level.
 */
static void htwheel_sweep_random(struct kunit *test)
{
	const struct htw_geo_case *c = test->param_value;
	const u64 start = 1000 * c->tick_ns + 12345;
	struct htw_wheel_expiry *recs;
	struct htw_wheel_stats st;
	struct rnd_state rnd;
	struct htw_wheel *w;
	struct htw_geometry geo;
	u64 *deadline, *due;
	u64 runs = 0, armed, min_due, at;
	size_t n, i, fired = 0, unreachable = 0;

	deadline = kunit_kcalloc(test, HTW_SWEEP_N, sizeof(*deadline), GFP_KERNEL);
	due = kunit_kcalloc(test, HTW_SWEEP_N, sizeof(*due), GFP_KERNEL);
	recs = kunit_kcalloc(test, HTW_SWEEP_N, sizeof(*recs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, deadline);
	KUNIT_ASSERT_NOT_NULL(test, due);
	KUNIT_ASSERT_NOT_NULL(test, recs);
	prandom_seed_state(&rnd, 0x4854570000ULL + c->tick_ns + c->slots);
	w = htw_t_manual(test, c->tick_ns, c->slots, HTW_SWEEP_N, start);
	htw_wheel_geometry(w, &geo);
	/* the grid starts at creation time: tick k is start + k * tick */
	for (i = 0; i < HTW_SWEEP_N; i++) {
		u64 d = htw_t_random_deadline(&rnd, start, c->tick_ns, geo.slots);

		deadline[i] = d;
		due[i] = d <= start ? 1 : htw_t_ceil_div(d - start, c->tick_ns);
		htw_t_sched(test, w, i, d, 0, 0);
	}
	for (;;) {
		armed = htw_wheel_armed_tick(w);
		min_due = U64_MAX;
		for (i = 0; i < HTW_SWEEP_N; i++)
			if (deadline[i] != 0)
				min_due = min(min_due, due[i]);
		KUNIT_ASSERT_LE(test, armed, min_due);
		if (armed == U64_MAX)
			break;
		at = htw_wheel_tick_time(w, armed);
		if (at == U64_MAX)
			break;
		htw_t_at(w, at);
		runs++;
		n = htw_t_take(test, w, recs, HTW_SWEEP_N);
		for (i = 0; i < n; i++) {
			u64 k = recs[i].cookie;

			KUNIT_ASSERT_LT(test, k, HTW_SWEEP_N);
			KUNIT_EXPECT_NE_MSG(test, deadline[k], 0, "%llu twice", k);
			KUNIT_EXPECT_EQ_MSG(test, armed, due[k],
					    "timer %llu deadline %llu", k, deadline[k]);
			/* manual clock on exact ticks: late < 1 tick unless past */
			if (deadline[k] > start)
				KUNIT_EXPECT_LT(test, recs[i].fired_ns - deadline[k],
						c->tick_ns);
			deadline[k] = 0;
			fired++;
		}
	}
	for (i = 0; i < HTW_SWEEP_N; i++)
		if (deadline[i] && htw_wheel_tick_time(w, due[i]) == U64_MAX)
			unreachable++;
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, fired + unreachable, HTW_SWEEP_N);
	KUNIT_EXPECT_EQ(test, st.pending, unreachable);
	KUNIT_EXPECT_EQ(test, st.fired, fired);
	KUNIT_EXPECT_LE(test, st.cascaded, (u64)HTW_SWEEP_N * (geo.levels - 1));
	/* work is per timer moved, never per tick of the sweep */
	KUNIT_EXPECT_LE(test, runs, (u64)HTW_SWEEP_N * geo.levels);
}

static struct kunit_case htwheel_sweep_cases[] = {
	KUNIT_CASE_PARAM(htwheel_sweep_random, htw_geo_gen_params),
	{}
};

static struct kunit_suite htwheel_sweep_suite = {
	.name = "htwheel_sweep",
	.test_cases = htwheel_sweep_cases,
};

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
	u32 i;

	a = htw_t_sched(test, w, 1, 5 * MS, 0, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_cancel(w, a), HTW_WHEEL_CANCEL_OK);
	/* Ids are reused first-in first-out: go round the free list once. */
	for (i = 1; i < HTW_IDS_PER_CHUNK; i++)
		KUNIT_ASSERT_EQ(test, htw_wheel_cancel(w, htw_t_sched(test, w, 3, MS, 0, 0)),
				HTW_WHEEL_CANCEL_OK);
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
		armed = htw_wheel_armed_tick(w);
		KUNIT_ASSERT_NE(test, armed, U64_MAX);
		htw_t_at(w, htw_wheel_tick_time(w, armed));
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
	armed = htw_wheel_armed_tick(w);
	KUNIT_EXPECT_GE(test, htw_wheel_tick_time(w, armed), first + 1000 * period);
	KUNIT_EXPECT_LT(test, htw_wheel_tick_time(w, armed),
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
	.test_cases = htwheel_limits_cases,
};

/* ---- htwheel_slack ---- */

static int htw_t_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u32 htw_t_distinct(u64 *v, u32 n)
{
	u32 i, d = n ? 1 : 0;

	sort(v, n, sizeof(*v), htw_t_cmp_u64, NULL);
	for (i = 1; i < n; i++)
		d += v[i] != v[i - 1];
	return d;
}

/*
 * 128 timers one tick apart: without slack they fire at 128 ticks; with 15
 * ticks of slack at multiples of 16, within their slack, never early.
 */
static void htwheel_slack_coalesces(struct kunit *test)
{
	const u64 tick = MS, slack_ticks = 15, n = 128;
	struct htw_wheel_expiry *rec = kunit_kcalloc(test, n, sizeof(*rec), GFP_KERNEL);
	u64 *fired = kunit_kcalloc(test, n, sizeof(*fired), GFP_KERNEL);
	struct htw_wheel *w;
	u64 slack, i, got;
	int pass;

	KUNIT_ASSERT_NOT_NULL(test, rec);
	KUNIT_ASSERT_NOT_NULL(test, fired);
	for (pass = 0; pass < 2; pass++) {
		slack = pass ? slack_ticks * tick : 0;
		w = htw_t_manual(test, tick, 64, n, 0);
		for (i = 0; i < n; i++)
			htw_t_sched(test, w, i, (100 + i) * tick - tick / 2, 0, slack);
		got = 0;
		while (htw_wheel_armed_tick(w) != U64_MAX) {
			htw_t_at(w, htw_wheel_tick_time(w, htw_wheel_armed_tick(w)));
			got += htw_t_take(test, w, rec + got, n - got);
		}
		KUNIT_ASSERT_EQ(test, got, n);
		for (i = 0; i < n; i++) {
			u64 k = rec[i].cookie;

			KUNIT_EXPECT_LE(test, rec[i].fired_ns,
					rec[i].deadline_ns + slack + tick);
			if (pass)
				KUNIT_EXPECT_EQ(test, (rec[i].fired_ns / tick) % 16, 0);
			else
				KUNIT_EXPECT_EQ(test, rec[i].fired_ns, (100 + k) * tick);
			fired[i] = rec[i].fired_ns;
		}
		/* round_up(100..227, 16): 112, 128, ..., 240 */
		KUNIT_EXPECT_EQ(test, htw_t_distinct(fired, n), pass ? 9 : 128);
	}
}

static struct kunit_case htwheel_slack_cases[] = {
	KUNIT_CASE(htwheel_slack_coalesces),
	{}
};

static struct kunit_suite htwheel_slack_suite = {
	.name = "htwheel_slack",
	.test_cases = htwheel_slack_cases,
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
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), U64_MAX);
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
	.test_cases = htwheel_drain_cases,
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
	.test_cases = htwheel_lateness_cases,
};

/* ---- htwheel_lifetime ---- */

/*
 * Destroy with timers pending, queued and periodic: everything freed, by
 * the module's counter and by the slab's own count of live objects.
 */
static void htwheel_lifetime_destroy_in_flight(struct kunit *test)
{
	struct htw_geometry geo = htw_t_geo(MS, 64, 64);
	long before = htw_timers_allocated(), slab = htw_t_slab_objects(test);
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 i;

	w = htw_wheel_create_manual(&geo, NULL, NULL, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	for (i = 0; i < 40; i++)
		htw_t_sched(test, w, i, i * 3 * MS, i % 3 ? 0 : 5 * MS, 0);
	htw_t_at(w, 50 * MS);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_GT(test, st.ready, 0);	/* some queued, some pending */
	KUNIT_EXPECT_GT(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, htw_timers_allocated(), before + 40);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + 40);
	htw_wheel_destroy(w);
	KUNIT_EXPECT_EQ(test, htw_timers_allocated(), before);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab);
}

/* A real wheel destroyed while its hrtimer is armed and timers expire. */
static void htwheel_lifetime_destroy_running(struct kunit *test)
{
	struct htw_geometry geo = htw_t_geo(50 * US, 64, 1000);
	long before = htw_timers_allocated(), slab = htw_t_slab_objects(test);
	struct htw_wheel *w;
	u64 i, now;

	w = htw_wheel_create(&geo, NULL, NULL, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	now = htw_wheel_now(w);
	for (i = 0; i < 500; i++)
		htw_t_sched(test, w, i, now + i * 10 * US, i % 5 ? 0 : 100 * US, 0);
	usleep_range(1000, 2000);
	/* fired or not, nobody read a record: all 500 are still allocated */
	KUNIT_EXPECT_EQ(test, htw_timers_allocated(), before + 500);
	htw_wheel_destroy(w);
	KUNIT_EXPECT_EQ(test, htw_timers_allocated(), before);
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
	long before = htw_timers_allocated(), slab = htw_t_slab_objects(test);
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
	KUNIT_EXPECT_EQ(test, htw_timers_allocated(), before + n);
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab + n);
	for (i = 0; i < n; i++)
		ok += htw_wheel_cancel(w, handles[i]) == HTW_WHEEL_CANCEL_OK;
	KUNIT_EXPECT_EQ(test, ok, n);
	htw_t_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_EQ(test, st.cancelled, n);
	KUNIT_EXPECT_EQ(test, htw_timers_allocated(), before);
	KUNIT_EXPECT_EQ(test, htw_wheel_armed_tick(w), 1);	/* stale, harmless */
	/* the wheel still exists: cancel alone gave every object back */
	KUNIT_EXPECT_EQ(test, htw_t_slab_objects(test), slab);
}

static struct kunit_case htwheel_lifetime_cases[] = {
	KUNIT_CASE(htwheel_lifetime_destroy_in_flight),
	KUNIT_CASE(htwheel_lifetime_destroy_running),
	KUNIT_CASE(htwheel_lifetime_many),
	{}
};

static struct kunit_suite htwheel_lifetime_suite = {
	.name = "htwheel_lifetime",
	.test_cases = htwheel_lifetime_cases,
};

/*
 * The lateness statistics are those of @recs, the records of every expiry
 * of the wheel (one-shot timers): an expiry at clock time fired_ns is
 * fired_ns - deadline_ns late, in bucket 0 below 2 ns, in bucket i for
 * [2^i, 2^(i+1)) ns and in the last one from 2^31 ns on.
 */
static void htw_t_expect_lateness(struct kunit *test,
				  const struct htw_wheel_stats *st,
				  const struct htw_wheel_expiry *recs, size_t n)
{
	u64 hist[ARRAY_SIZE(st->late_hist)] = {}, worst = 0, late;
	size_t i;

	for (i = 0; i < n; i++) {
		late = recs[i].fired_ns - recs[i].deadline_ns;
		worst = max(worst, late);
		hist[late < 2 ? 0 : min_t(u32, fls64(late) - 1, ARRAY_SIZE(hist) - 1)]++;
	}
	KUNIT_EXPECT_EQ(test, st->max_late_ns, worst);
	for (i = 0; i < ARRAY_SIZE(hist); i++)
		KUNIT_EXPECT_EQ_MSG(test, st->late_hist[i], hist[i],
				    "late_hist[%zu] ([2^%zu, 2^%zu) ns)", i, i, i + 1);
}

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
	w = htw_wheel_create(&geo, htw_t_ready_cb, wt, GFP_KERNEL);
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

static struct kunit_suite htwheel_realtime_suite = {
	.name = "htwheel_realtime",
	.test_cases = htwheel_realtime_cases,
};

/* Real-time suites first: the heavy lifetime suite floods RCU and softirq. */
kunit_test_suites(&htwheel_realtime_suite, &htwheel_geometry_suite,
		  &htwheel_placement_suite, &htwheel_sweep_suite,
		  &htwheel_cancel_suite, &htwheel_periodic_suite,
		  &htwheel_limits_suite, &htwheel_slack_suite,
		  &htwheel_drain_suite, &htwheel_lateness_suite,
		  &htwheel_lifetime_suite);
