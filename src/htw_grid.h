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

#include <linux/bits.h>
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

u64 htw_grid_div(const struct htw_grid *g, u64 ns, u64 *rem);
u64 htw_grid_tick_of(const struct htw_grid *g, u64 ns);
u64 htw_grid_tick_time(const struct htw_grid *g, u64 tick);
u8 htw_grid_slack_shift(const struct htw_grid *g, u64 slack_ns);
u64 htw_grid_expiry_tick(const struct htw_grid *g, u64 deadline, u8 slack_shift);
u32 htw_grid_place(const struct htw_grid *g, u64 expires, u64 clk, u64 *point);
bool htw_grid_visits(const struct htw_grid *g, u32 level, u64 tick, u32 *bucket);
u64 htw_grid_next_visit(const struct htw_grid *g, const unsigned long *occupied,
			u64 clk);

#endif /* _HTW_GRID_H */
