/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel grid: the arithmetic of a wheel's absolute tick grid and of its
 * levels, with no state, no locks and no timers.  The lowest layer of the
 * core: it includes and calls nothing of htwheel's.
 *
 * Tick k starts at base + k * tick_ns on the wheel's clock; a deadline d
 * expires at the first tick whose start is >= d, so nothing fires early.
 * Level L has `slots` buckets of slots^L ticks each.  A timer due at tick e
 * when the wheel is at tick clk sits on the level whose span holds
 * e - clk, in bucket (e >> L * slot_bits) & slot_mask, and moves to a finer
 * level at the start of the level-L period that holds e (cascading).
 *
 * The levels of the DEFAULT geometry (the device's: 1 ms ticks, 512 slots;
 * 5 levels, 2560 buckets), computed from htw_geometry_normalise() and
 * htw_grid_place():
 *
 * Level  Buckets      Granularity            Delay e - clk
 *  0        0 -  511  1 ms                   1 ms          - 511 ms
 *  1      512 - 1023  512 ms                 512 ms        - 4 min 22 s
 *  2     1024 - 1535  4 min 22 s             4 min 22 s    - 37 h 16 min
 *  3     1536 - 2047  37 h 16 min            37 h 16 min   - 795 days
 *  4     2048 - 2559  795 days               795 days      - 1115 years
 *
 * (Granularity slots^L ticks: 2^0, 2^9, 2^18, 2^27, 2^36 ms.)  Level 4
 * reaches past U64_MAX ns (584 years), so no deadline is ever clamped.
 */
#ifndef _HTW_GRID_H
#define _HTW_GRID_H

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time.h>
#include <linux/types.h>

/* A limit on live timers shared by several wheels; opaque (htw_limits.h). */
struct htw_quota;

/*
 * The shape and limits of one wheel, as asked for and, once
 * htw_geometry_normalise() accepted it, as it will be.
 */
struct htw_geometry {
	u64 tick_ns;		/* >= HTW_MIN_TICK_NS */
	u32 slots;		/* per level, rounded up to a power of two */
	u32 levels;		/* derived: enough levels to cover any u64 delay */
	clockid_t clockid;	/* CLOCK_MONOTONIC or CLOCK_BOOTTIME */
	u32 trace_id;		/* the owner's name in trace events; 0 none */
	u64 max_pending;	/* limit on live timers (pending + queued) */
	struct htw_quota *quota; /* optional: charged one per live timer */
};

#define HTW_MIN_TICK_NS		(10 * NSEC_PER_USEC)
#define HTW_MAX_TICK_NS		(10ULL * NSEC_PER_SEC)
#define HTW_MIN_SLOTS		4
#define HTW_MAX_SLOTS		65536
#define HTW_MAX_PENDING		BIT_ULL(26)	/* per wheel, live timers */

/*
 * The one check of a geometry: rounds slots up to a power of two (at
 * least HTW_MIN_SLOTS), derives levels, and returns -EINVAL for a tick
 * outside [max(HTW_MIN_TICK_NS, hrtimer resolution), HTW_MAX_TICK_NS],
 * slots 0 or above HTW_MAX_SLOTS, another clock, or max_pending 0 or
 * above HTW_MAX_PENDING.  Normalising twice changes nothing.
 */
int htw_geometry_normalise(struct htw_geometry *geo);

/* A normalised geometry anchored at @base_ns; set once, then read-only. */
struct htw_grid {
	u64 base_ns;		/* start of tick 0 on the wheel's clock */
	u64 tick_ns;
	u64 max_tick;		/* last tick an unrounded deadline can give */
	u64 slot_mask;		/* slots - 1 */
	u64 tick_recip;		/* U64_MAX / tick_ns: htw_grid_div() */
	u32 slots;
	u32 slot_bits;		/* log2(slots) */
	u32 level_mul;		/* 2^16 / slot_bits, rounded up: htw_grid_place() */
	u32 levels;
};

void htw_grid_init(struct htw_grid *g, const struct htw_geometry *geo,
		   u64 base_ns);

static inline u32 htw_grid_buckets(const struct htw_grid *g)
{
	return g->levels * g->slots;
}

static inline u32 htw_grid_level(const struct htw_grid *g, u32 bucket)
{
	return bucket >> g->slot_bits;
}

static inline u32 htw_grid_index(const struct htw_grid *g, u32 bucket)
{
	return bucket & g->slot_mask;
}

u64 htw_grid_tick_time(const struct htw_grid *g, u64 tick);
bool htw_grid_visits(const struct htw_grid *g, u32 level, u64 tick, u32 *bucket);
u64 htw_grid_next_visit(const struct htw_grid *g, const unsigned long *occupied,
			u64 clk);

/* ---- on every schedule and re-arm: inline, and no division ---- */

/*
 * @ns / tick_ns and its remainder, with a multiply instead of a 64-bit
 * division on every schedule and re-arm.  tick_recip is short of
 * 2^64 / tick_ns by less than 2, so the first quotient is short of the
 * true one by less than 3 (never over it: the remainder cannot wrap),
 * and at most two steps correct it.
 */
static inline u64 htw_grid_div(const struct htw_grid *g, u64 ns, u64 *rem)
{
	u64 q = mul_u64_u64_shr(ns, g->tick_recip, 64);
	u64 r = ns - q * g->tick_ns;

	while (r >= g->tick_ns) {
		q++;
		r -= g->tick_ns;
	}
	*rem = r;
	return q;
}

/* The tick whose start is the latest <= @ns. */
static inline u64 htw_grid_tick_of(const struct htw_grid *g, u64 ns)
{
	u64 rem;

	if (ns <= g->base_ns)
		return 0;
	return htw_grid_div(g, ns - g->base_ns, &rem);
}

/*
 * Largest s with 2^s - 1 <= slack in ticks: every tick has a multiple of
 * 2^s at most slack ticks after it, so rounding up stays within the slack.
 */
static inline u8 htw_grid_slack_shift(const struct htw_grid *g, u64 slack_ns)
{
	u64 rem;

	if (slack_ns < g->tick_ns)
		return 0;
	return fls64(htw_grid_div(g, slack_ns, &rem) + 1) - 1;
}

/*
 * The first tick whose start is >= @deadline (so never early), moved up
 * to a multiple of 2^slack_shift ticks so that timers with slack coalesce.
 */
static inline u64 htw_grid_expiry_tick(const struct htw_grid *g, u64 deadline,
				       u8 slack_shift)
{
	u64 rem, tick, rounded;

	if (deadline <= g->base_ns)
		return 0;
	tick = htw_grid_div(g, deadline - g->base_ns, &rem);
	if (rem)
		tick++;
	/*
	 * The levels hold every tick an unrounded deadline can give
	 * (htw_geometry_normalise()); slack must not round past them.
	 */
	rounded = round_up(tick, 1ULL << slack_shift);
	return rounded <= g->max_tick ? rounded : tick;
}

/*
 * Choose the bucket for a timer firing at tick @expires when the wheel is
 * at tick @clk: level L holds timers 2^(L*bits) <= expires - clk <
 * 2^((L+1)*bits) in bucket (expires >> L*bits) & mask.  That bucket is next
 * visited at *point, the start of the level-L period holding @expires,
 * which is > clk and <= expires: a timer is never visited too late.
 * A tick already passed is treated as the next tick.
 */
static inline u32 htw_grid_place(const struct htw_grid *g, u64 expires,
				 u64 clk, u64 *point)
{
	u64 tick = max(expires, clk + 1);
	/* (fls64() - 1) / slot_bits, exact for the 64 values it can be. */
	u32 level = ((fls64(tick - clk) - 1) * g->level_mul) >> 16;
	u32 shift;

	/* Never past the last level: see htw_grid_expiry_tick(). */
	if (WARN_ON_ONCE(level >= g->levels))
		level = g->levels - 1;
	shift = level * g->slot_bits;

	*point = (tick >> shift) << shift;
	return level * g->slots + (u32)((tick >> shift) & g->slot_mask);
}

#endif /* _HTW_GRID_H */
