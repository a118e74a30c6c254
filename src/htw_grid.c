// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel grid: geometry, the absolute tick grid, slack rounding, and
 * which bucket of which level a timer goes to and when that bucket is
 * visited.  Pure arithmetic; see htw_grid.h for the level table and
 * Documentation/htwheel-design.rst for why a timer never fires early.
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>

#include "htw_compat.h"
#include "htw_grid.h"

int htw_geometry_normalise(struct htw_geometry *geo)
{
	u64 min_tick = max_t(u64, HTW_MIN_TICK_NS, hrtimer_resolution);
	u64 max_ticks;
	u32 bits;

	if (geo->tick_ns < min_tick || geo->tick_ns > HTW_MAX_TICK_NS)
		return -EINVAL;
	if (!geo->slots || geo->slots > HTW_MAX_SLOTS)
		return -EINVAL;
	if (geo->clockid != CLOCK_MONOTONIC && geo->clockid != CLOCK_BOOTTIME)
		return -EINVAL;
	if (!geo->max_pending || geo->max_pending > HTW_MAX_PENDING)
		return -EINVAL;
	geo->slots = roundup_pow_of_two(max_t(u32, geo->slots, HTW_MIN_SLOTS));
	/*
	 * Enough levels that any tick index a u64 deadline can map to is
	 * within reach of the top level: no clamping, ever.
	 */
	max_ticks = div64_u64(U64_MAX, geo->tick_ns) + 1;
	bits = fls64(max_ticks);
	geo->levels = DIV_ROUND_UP(bits, ilog2(geo->slots));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(htw_geometry_normalise);

void htw_grid_init(struct htw_grid *g, const struct htw_geometry *geo,
		   u64 base_ns)
{
	g->base_ns = base_ns;
	g->tick_ns = geo->tick_ns;
	g->max_tick = div64_u64(U64_MAX, geo->tick_ns) + 1;
	g->slots = geo->slots;
	g->slot_bits = ilog2(geo->slots);
	g->slot_mask = geo->slots - 1;
	g->tick_recip = div64_u64(U64_MAX, geo->tick_ns);
	g->level_mul = DIV_ROUND_UP(1U << 16, g->slot_bits);
	g->levels = geo->levels;
}
EXPORT_SYMBOL_IF_KUNIT(htw_grid_init);

/* Start of @tick on the wheel's clock, U64_MAX if not representable. */
u64 htw_grid_tick_time(const struct htw_grid *g, u64 tick)
{
	u64 off, t;

	if (check_mul_overflow(tick, g->tick_ns, &off) ||
	    check_add_overflow(off, g->base_ns, &t))
		return U64_MAX;
	return t;
}
EXPORT_SYMBOL_IF_KUNIT(htw_grid_tick_time);

/*
 * Is level @level visited at @tick (the start of one of its periods), and
 * if so, which bucket?
 */
bool htw_grid_visits(const struct htw_grid *g, u32 level, u64 tick, u32 *bucket)
{
	u32 shift = level * g->slot_bits;

	if (tick & ((1ULL << shift) - 1))
		return false;
	*bucket = level * g->slots + (u32)((tick >> shift) & g->slot_mask);
	return true;
}

/* First set bit of level @level at or after @start, circularly; -1 if none. */
static long htw_level_next_bit(const struct htw_grid *g,
			       const unsigned long *occupied, u32 level, u32 start)
{
	unsigned long first = (unsigned long)level * g->slots;
	unsigned long end = first + g->slots;
	unsigned long bit;

	bit = find_next_bit(occupied, end, first + start);
	if (bit < end)
		return bit - first;
	bit = find_next_bit(occupied, first + start, first);
	if (bit < first + start)
		return bit - first;
	return -1;
}

/*
 * The earliest tick after @clk at which a bucket set in @occupied is
 * visited: level-0 bucket b at the tick congruent to b, a level-L bucket
 * at the start of its level-L period.  U64_MAX if none is set.  Levels
 * are scanned finest first and stop once a level cannot be earlier.
 */
u64 htw_grid_next_visit(const struct htw_grid *g, const unsigned long *occupied,
			u64 clk)
{
	u64 best = U64_MAX;
	u32 level;

	for (level = 0; level < g->levels; level++) {
		u32 shift = level * g->slot_bits;
		u64 period = clk >> shift;
		u32 start = (period + 1) & g->slot_mask;
		long bit;
		u64 diff;

		if (period + 1 > (U64_MAX >> shift) ||
		    (period + 1) << shift >= best)
			break;
		bit = htw_level_next_bit(g, occupied, level, start);
		if (bit < 0)
			continue;
		diff = ((bit - start) & g->slot_mask) + 1;
		if (period + diff > (U64_MAX >> shift))
			continue;
		best = min(best, (period + diff) << shift);
	}
	return best;
}
