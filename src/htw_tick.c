// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel tick: one hrtimer per wheel, armed on the absolute tick grid for
 * the next tick at which a non-empty bucket is due (never every tick), and
 * the expiry processing it runs in softirq context: cascading timers to
 * finer levels and moving due ones to the ready queue.
 */
#include <linux/bitops.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include "htw_internal.h"
#include "htw_compat.h"

/* First set bit of level @level at or after @start, circularly; -1 if none. */
static long htw_level_next_bit(const struct htw_wheel *w, u32 level, u32 start)
{
	unsigned long first = (unsigned long)level * w->geo.slots;
	unsigned long end = first + w->geo.slots;
	unsigned long bit;

	bit = find_next_bit(w->occupied, end, first + start);
	if (bit < end)
		return bit - first;
	bit = find_next_bit(w->occupied, first + start, first);
	if (bit < first + start)
		return bit - first;
	return -1;
}

/*
 * The earliest tick after @clk at which some non-empty bucket is visited:
 * level-0 bucket b at the tick congruent to b, a level-L bucket at the
 * start of its level-L period.  U64_MAX if the wheel is empty.  Levels are
 * scanned finest first and stop once a level cannot be earlier.
 */
u64 htw_next_event(const struct htw_wheel *w, u64 clk)
{
	u64 best = U64_MAX;
	u32 level;

	for (level = 0; level < w->geo.levels; level++) {
		u32 shift = level * w->slot_bits;
		u64 period = clk >> shift;
		u32 start = (period + 1) & w->slot_mask;
		long bit;
		u64 diff;

		if (period + 1 > (U64_MAX >> shift) ||
		    (period + 1) << shift >= best)
			break;
		bit = htw_level_next_bit(w, level, start);
		if (bit < 0)
			continue;
		diff = ((bit - start) & w->slot_mask) + 1;
		if (period + diff > (U64_MAX >> shift))
			continue;
		best = min(best, (period + diff) << shift);
	}
	return best;
}

static void htw_start_hrtimer(struct htw_wheel *w, u64 tick)
{
	u64 at = htw_tick_time(w, tick);

	/* Beyond KTIME_MAX the clock never gets there: nothing to arm. */
	if (w->manual || at > KTIME_MAX)
		return;
	hrtimer_start(&w->hrtimer, ns_to_ktime(at), HRTIMER_MODE_ABS_SOFT);
}

/* Make sure the hrtimer fires no later than the start of tick @point. */
void htw_arm_at_most(struct htw_wheel *w, u64 point)
{
	spin_lock_bh(&w->arm_lock);
	if (point < w->armed_tick) {
		WRITE_ONCE(w->armed_tick, point);
		htw_start_hrtimer(w, point);
	}
	spin_unlock_bh(&w->arm_lock);
}

/*
 * End of a run: forget the old arming, then scan.  A schedule that linked
 * a timer the scan missed read armed_tick after our store (the smp_mb()s
 * pair) and arms for itself; htw_arm_at_most() only ever moves it earlier.
 */
void htw_rearm(struct htw_wheel *w)
{
	u64 next;

	lockdep_assert_held(&w->tick_lock);
	spin_lock_bh(&w->arm_lock);
	WRITE_ONCE(w->armed_tick, U64_MAX);
	spin_unlock_bh(&w->arm_lock);
	/* Store armed_tick before scanning bits; pairs with htw_insert(). */
	smp_mb();
	next = htw_next_event(w, w->clk);

	spin_lock_bh(&w->arm_lock);
	if (next < w->armed_tick) {
		WRITE_ONCE(w->armed_tick, next);
		htw_start_hrtimer(w, next);
	} else if (w->armed_tick == U64_MAX && !w->manual) {
		/* Tickless: idle, or only timers beyond KTIME_MAX. */
		hrtimer_try_to_cancel(&w->hrtimer);
	}
	spin_unlock_bh(&w->arm_lock);
}

static void htw_account_lateness(struct htw_wheel *w, u64 late)
{
	u32 i = late ? min_t(u32, ilog2(late), 31) : 0;

	w->late_hist[i]++;
	w->max_late_ns = max(w->max_late_ns, late);
}

static void htw_fire(struct htw_wheel *w, struct htw_timer *t, u64 now_ns)
{
	htw_account_lateness(w, now_ns - t->deadline_ns);
	t->fired_ns = now_ns;
	if (!t->period_ns)
		atomic64_dec(&w->pending);	/* periodic ones come back */
	atomic64_inc(&w->fired);
	htw_enqueue_ready(w, t);
}

/*
 * Visit one bucket at tick @tick: take all its timers, fire those due
 * (expires <= tick) and place the others again relative to @tick, which
 * moves them to a finer level or, if an earlier placement shared this
 * bucket index, just to where they belong.  One bucket lock at a time.
 */
static unsigned int htw_visit_bucket(struct htw_wheel *w, u32 bucket,
				     u64 tick, u64 now_ns)
{
	struct htw_bucket *bk = &w->buckets[bucket];
	bool cascading = bucket >= w->geo.slots;
	struct hlist_node *tmp;
	struct htw_timer *t;
	unsigned int fired = 0;
	HLIST_HEAD(list);
	u32 to;
	u64 point;

	spin_lock(&bk->lock);
	hlist_move_list(&bk->timers, &list);
	hlist_for_each_entry(t, &list, node)
		WRITE_ONCE(t->where, htw_where(HTW_TRANSIT, 0));
	clear_bit(bucket, w->occupied);
	spin_unlock(&bk->lock);

	hlist_for_each_entry_safe(t, tmp, &list, node) {
		hlist_del(&t->node);
		if (t->expires <= tick) {
			htw_fire(w, t, now_ns);
			fired++;
			continue;
		}
		to = htw_place(w, t->expires, tick, &point);
		spin_lock(&w->buckets[to].lock);
		htw_link_locked(w, to, t);
		spin_unlock(&w->buckets[to].lock);
		if (cascading)
			w->cascaded++;
	}
	return fired;
}

/* Everything due at @tick: cascades (coarsest first), then level 0. */
static unsigned int htw_process_tick(struct htw_wheel *w, u64 tick, u64 now_ns)
{
	unsigned int fired = 0;
	u32 level;

	for (level = w->geo.levels - 1; level > 0; level--) {
		u32 shift = level * w->slot_bits;
		u32 bucket;

		if (tick & ((1ULL << shift) - 1))
			continue;
		bucket = level * w->geo.slots + ((tick >> shift) & w->slot_mask);
		if (test_bit(bucket, w->occupied))
			fired += htw_visit_bucket(w, bucket, tick, now_ns);
	}
	if (test_bit(tick & w->slot_mask, w->occupied))
		fired += htw_visit_bucket(w, tick & w->slot_mask, tick, now_ns);
	return fired;
}

/*
 * Process every tick up to the one @now_ns falls in, jumping straight from
 * one visited tick to the next through the occupancy bits, so a long idle
 * gap costs nothing.  Returns the number of timers moved to ready.
 */
static unsigned int htw_advance(struct htw_wheel *w, u64 now_ns)
{
	u64 target = max(htw_tick_of(w, now_ns), w->clk);
	unsigned int fired = 0;
	u64 tick;

	lockdep_assert_held(&w->tick_lock);
	WRITE_ONCE(w->horizon, target);
	/* Pairs with smp_mb() in htw_insert(): see struct htw_wheel. */
	smp_mb();
	while ((tick = htw_next_event(w, w->clk)) <= target) {
		w->clk = tick;
		fired += htw_process_tick(w, tick, now_ns);
	}
	w->clk = target;
	htw_rearm(w);
	return fired;
}

void htw_run(struct htw_wheel *w, u64 now_ns, bool from_hrtimer)
{
	unsigned int fired;

	spin_lock_bh(&w->tick_lock);
	if (from_hrtimer)
		w->tick_wakeups++;
	fired = htw_advance(w, now_ns);
	spin_unlock_bh(&w->tick_lock);
	/* Outside every wheel lock: the owner may call back into the wheel. */
	if (fired && w->ready)
		w->ready(w, w->owner);
}

static enum hrtimer_restart htw_hrtimer_fn(struct hrtimer *hrtimer)
{
	struct htw_wheel *w = container_of(hrtimer, struct htw_wheel, hrtimer);

	htw_run(w, htw_wheel_now(w), true);
	return HRTIMER_NORESTART;
}

void htw_wheel_run_tick(struct htw_wheel *wheel)
{
	htw_run(wheel, htw_wheel_now(wheel), false);
}
EXPORT_SYMBOL_NS_GPL(htw_wheel_run_tick, HTWHEEL);

void htw_tick_init(struct htw_wheel *w)
{
	w->horizon = 0;
	w->clk = 0;
	htw_hrtimer_setup(&w->hrtimer, htw_hrtimer_fn, w->geo.clockid,
			  HRTIMER_MODE_ABS_SOFT);
}

/* Synchronous: when this returns the callback is not running nor armed. */
void htw_tick_stop(struct htw_wheel *w)
{
	hrtimer_cancel(&w->hrtimer);
}
