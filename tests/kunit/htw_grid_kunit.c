// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the tick grid: which tick a deadline expires on, where
 * on the levels a timer waits for it, and that it fires exactly at the
 * first tick at or after its deadline, never a tick before.  Every later
 * guarantee of the wheel rests on this arithmetic.
 *
 * - htwheel_geometry: a geometry is normalised (slots rounded up to a
 *   power of two) or refused, and its levels cover every u64 deadline.
 * - htwheel_placement: worked examples, and every level boundary +-1 ns:
 *   the right level and bucket, fired at the right tick.
 * - htwheel_sweep: random deadlines, the clock moved to each tick the
 *   wheel arms: never armed later than the earliest timer, each timer
 *   fired on its tick, the work per timer moved and not per tick.
 * - htwheel_slack: timers with slack round up to coarser ticks so that
 *   they coalesce, within their slack and never early.
 * - htwheel_grid_arith: the multiply that stands for a division by the
 *   tick, and the level of a distance, against plain division.
 *
 * All on manual-clock wheels (htw_t_manual()), so every tick is exact.
 */
#include <kunit/test.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/prandom.h>

#include "htw_kunit.h"

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
		w = htw_wheel_create(&geo, &htw_hrtimer_clock, NULL, NULL, GFP_KERNEL);
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
	.suite_init = htw_t_high_res,
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
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 4);
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
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 8);
	for (tick = 3; tick < 8; tick++) {
		htw_t_at(w, tick * 100 * MS);
		htw_t_expect_at(test, w, h, HTW_PENDING, 1, 1);
	}
	htw_t_at(w, 800 * MS);
	htw_t_expect_at(test, w, h, HTW_PENDING, 0, 3);
	KUNIT_EXPECT_EQ(test, READ_ONCE((w)->armed_tick), 11);
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
		u64 at = htw_grid_tick_time(&(w)->grid, e);
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
	.suite_init = htw_t_high_res,
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
	const u64 start = 1000 * c->tick_ns;
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
	/* the grid is on multiples of the tick: tick k is start + k * tick */
	for (i = 0; i < HTW_SWEEP_N; i++) {
		u64 d = htw_t_random_deadline(&rnd, start, c->tick_ns, geo.slots);

		deadline[i] = d;
		due[i] = d <= start ? 1 : htw_t_ceil_div(d - start, c->tick_ns);
		htw_t_sched(test, w, i, d, 0, 0);
	}
	for (;;) {
		armed = READ_ONCE((w)->armed_tick);
		min_due = U64_MAX;
		for (i = 0; i < HTW_SWEEP_N; i++)
			if (deadline[i] != 0)
				min_due = min(min_due, due[i]);
		KUNIT_ASSERT_LE(test, armed, min_due);
		if (armed == U64_MAX)
			break;
		at = htw_grid_tick_time(&(w)->grid, armed);
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
		if (deadline[i] && htw_grid_tick_time(&(w)->grid, due[i]) == U64_MAX)
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
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_sweep_cases,
};

/* ---- htwheel_slack ---- */

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
		while (READ_ONCE((w)->armed_tick) != U64_MAX) {
			htw_t_at(w, htw_grid_tick_time(&(w)->grid, READ_ONCE((w)->armed_tick)));
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

/*
 * A timer keeps its slack shift in five bits: slack beyond 2^31 ticks
 * coalesces on 2^31 ticks, which is still within the slack and never
 * early; a re-arm keeps it.
 */
static void htwheel_slack_beyond_31_bits(struct kunit *test)
{
	const u64 tick = MS, top = BIT_ULL(31);
	struct htw_wheel *w = htw_t_manual(test, tick, 64, 4, 0);
	struct htw_wheel_expiry rec;
	struct htw_placement p;
	u64 h;

	h = htw_t_sched(test, w, 1, 5 * tick, 0, BIT_ULL(40) * tick);
	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h, &p), 0);
	KUNIT_EXPECT_EQ(test, p.expires, top);
	KUNIT_EXPECT_EQ(test, htw_wheel_rearm(w, h, (top + 3) * tick, 0),
			HTW_WHEEL_REARM_PENDING);
	KUNIT_ASSERT_EQ(test, htw_wheel_inspect(w, h, &p), 0);
	KUNIT_EXPECT_EQ(test, p.expires, 2 * top);
	htw_t_at(w, htw_grid_tick_time(&(w)->grid, 2 * top) - 1);
	KUNIT_EXPECT_EQ(test, htw_t_take(test, w, &rec, 1), 0);
	htw_t_at(w, htw_grid_tick_time(&(w)->grid, 2 * top));
	KUNIT_ASSERT_EQ(test, htw_t_take(test, w, &rec, 1), 1);
	KUNIT_EXPECT_EQ(test, rec.handle, h);
}

static struct kunit_case htwheel_slack_cases[] = {
	KUNIT_CASE(htwheel_slack_coalesces),
	KUNIT_CASE(htwheel_slack_beyond_31_bits),
	{}
};

static struct kunit_suite htwheel_slack_suite = {
	.name = "htwheel_slack",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_slack_cases,
};

/* ---- htwheel_grid_arith ---- */

/* A grid for @tick_ns and @slots, levels enough for any distance. */
static void htw_t_grid(struct htw_grid *g, u64 tick_ns, u32 slots)
{
	struct htw_geometry geo = {
		.tick_ns = tick_ns,
		.slots = slots,
		.levels = DIV_ROUND_UP(64, ilog2(slots)),
	};

	htw_grid_init(g, &geo, 0);
}

static void htw_t_expect_div(struct kunit *test, const struct htw_grid *g,
			     u64 ns)
{
	u64 rem, want_rem, q = htw_grid_div(g, ns, &rem);
	u64 want = div64_u64_rem(ns, g->tick_ns, &want_rem);

	KUNIT_EXPECT_EQ_MSG(test, q, want, "%llu / %llu", ns, g->tick_ns);
	KUNIT_EXPECT_EQ_MSG(test, rem, want_rem, "%llu %% %llu", ns, g->tick_ns);
}

static void htwheel_grid_div_is_division(struct kunit *test)
{
	static const u64 ticks[] = {
		HTW_MIN_TICK_NS, 999983, NSEC_PER_MSEC, NSEC_PER_SEC / HZ,
		1ULL << 20, 3 * NSEC_PER_SEC, HTW_MAX_TICK_NS - 1, HTW_MAX_TICK_NS,
	};
	struct rnd_state rnd;
	struct htw_grid g;
	unsigned int i, j;
	u64 d, last, ns;

	prandom_seed_state(&rnd, 20261201);
	for (i = 0; i < ARRAY_SIZE(ticks); i++) {
		d = ticks[i];
		last = div64_u64(U64_MAX, d) * d;	/* the last multiple */
		htw_t_grid(&g, d, 512);
		for (j = 0; j < 3; j++) {
			htw_t_expect_div(test, &g, j);
			htw_t_expect_div(test, &g, j * d - 1);
			htw_t_expect_div(test, &g, j * d + 1);
			htw_t_expect_div(test, &g, U64_MAX - j);
			htw_t_expect_div(test, &g, last - j);
		}
		htw_t_expect_div(test, &g, d);
		htw_t_expect_div(test, &g, 1ULL << 63);
		for (j = 0; j < 20000; j++) {
			ns = ((u64)prandom_u32_state(&rnd) << 32 | prandom_u32_state(&rnd)) >>
			     (j % 64);
			htw_t_expect_div(test, &g, ns);
		}
	}
}

/* Every distance 2^k..2^(k+1)-1 goes to level k / slot_bits. */
static void htwheel_grid_level_of_distance(struct kunit *test)
{
	u64 point, clk = 12345;
	struct htw_grid g;
	u32 slots, bits, k, bucket;

	for (slots = HTW_MIN_SLOTS; slots <= HTW_MAX_SLOTS; slots <<= 1) {
		htw_t_grid(&g, NSEC_PER_MSEC, slots);
		bits = ilog2(slots);
		for (k = 0; k < 63; k++) {
			u32 want = min(k / bits, g.levels - 1);

			bucket = htw_grid_place(&g, clk + (1ULL << k), clk, &point);
			KUNIT_EXPECT_EQ_MSG(test, bucket / slots, want,
					    "slots %u, distance 2^%u", slots, k);
			bucket = htw_grid_place(&g, clk + (2ULL << k) - 1, clk, &point);
			KUNIT_EXPECT_EQ_MSG(test, bucket / slots, want,
					    "slots %u, distance 2^%u+", slots, k);
		}
	}
}

static struct kunit_case htwheel_grid_arith_cases[] = {
	KUNIT_CASE(htwheel_grid_div_is_division),
	KUNIT_CASE(htwheel_grid_level_of_distance),
	{}
};

static struct kunit_suite htwheel_grid_arith_suite = {
	.name = "htwheel_grid_arith",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_grid_arith_cases,
};

kunit_test_suites(&htwheel_geometry_suite, &htwheel_placement_suite,
		  &htwheel_sweep_suite, &htwheel_slack_suite,
		  &htwheel_grid_arith_suite);
