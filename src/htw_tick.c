// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel tick: one hrtimer per wheel, armed on the absolute tick grid for
 * the next tick at which a non-empty bucket is due (never every tick), and
 * the expiry processing it runs in softirq context: cascading timers to
 * finer levels and moving due ones to the ready queue.  A run does at most
 * HTW_BATCH timers per softirq invocation and per lock hold; the rest of a
 * big run goes to the wheel's work item, in process context.
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

	lockdep_assert_held(&w->arm_lock);
	/* Beyond KTIME_MAX the clock never gets there: nothing to arm. */
	if (w->manual || w->dying || at > KTIME_MAX)
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
 * Visit one bucket at tick @tick: take up to *@budget of its timers, fire
 * those due (expires <= tick) and place the others again relative to
 * @tick, which moves them to a finer level or, if an earlier placement
 * shared this bucket index, just to where they belong (never back into
 * this bucket: see LOCKING in htw_internal.h).  One bucket lock at a time.
 * Returns the number fired.
 */
static unsigned int htw_visit_bucket(struct htw_wheel *w, u32 bucket,
				     u64 tick, u64 now_ns, unsigned int *budget)
{
	bool cascading = bucket >= w->geo.slots;
	struct hlist_node *tmp;
	struct htw_timer *t;
	unsigned int fired = 0;
	HLIST_HEAD(list);
	u32 to;
	u64 point;

	*budget -= htw_take_some(w, bucket, &list, *budget, HTW_TRANSIT);
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

/*
 * Everything due at @tick: cascades (coarsest first), then level 0, as
 * far as *@budget goes.  Returns false if a bucket of @tick still has
 * timers; calling it again for the same tick carries on (emptied buckets
 * stay empty for this tick).
 */
static bool htw_process_tick(struct htw_wheel *w, u64 tick, u64 now_ns,
			     unsigned int *budget, unsigned int *fired)
{
	u32 level, bucket;

	for (level = w->geo.levels; level-- > 0;) {
		u32 shift = level * w->slot_bits;

		if (tick & ((1ULL << shift) - 1))
			continue;
		bucket = level * w->geo.slots + ((tick >> shift) & w->slot_mask);
		if (!test_bit(bucket, w->occupied))
			continue;
		*fired += htw_visit_bucket(w, bucket, tick, now_ns, budget);
		if (test_bit(bucket, w->occupied) && !*budget)
			return false;
	}
	return true;
}

/*
 * Process ticks up to the one @now_ns falls in, jumping straight from one
 * visited tick to the next through the occupancy bits, so a long idle gap
 * costs nothing; stop once *@budget timers were handled.  Returns true
 * when the run is complete (and the hrtimer re-armed), false when it
 * stopped early with more to do.
 */
static bool htw_advance(struct htw_wheel *w, u64 now_ns, unsigned int *budget,
			unsigned int *fired)
{
	u64 target = max(htw_tick_of(w, now_ns), w->clk);
	u64 tick;

	lockdep_assert_held(&w->tick_lock);
	if (w->paused)
		return true;	/* the drain re-arms when it is done */
	WRITE_ONCE(w->horizon, max(READ_ONCE(w->horizon), target));
	/* Pairs with smp_mb() in htw_insert(): see struct htw_wheel. */
	smp_mb();
	for (;;) {
		if (w->tick_open) {
			if (!htw_process_tick(w, w->clk, now_ns, budget, fired))
				return false;
			w->tick_open = false;
		}
		tick = htw_next_event(w, w->clk);
		if (tick > target)
			break;
		w->clk = tick;
		w->tick_open = true;
	}
	w->clk = target;
	htw_rearm(w);
	return true;
}

/* One batch of a run; returns true when the run is complete. */
static bool htw_run_batch(struct htw_wheel *w, bool from_hrtimer)
{
	unsigned int budget = HTW_BATCH, fired = 0;
	bool done;

	spin_lock_bh(&w->tick_lock);
	if (from_hrtimer)
		w->tick_wakeups++;
	done = htw_advance(w, htw_wheel_now(w), &budget, &fired);
	spin_unlock_bh(&w->tick_lock);
	/* Outside every wheel lock: the owner may call back into the wheel. */
	if (fired && w->ready)
		w->ready(w, w->owner);
	return done;
}

/* The rest of a run that one softirq invocation did not finish. */
static void htw_run_work(struct work_struct *work)
{
	struct htw_wheel *w = container_of(work, struct htw_wheel, run_work);

	while (!htw_run_batch(w, false))
		cond_resched();
}

static enum hrtimer_restart htw_hrtimer_fn(struct hrtimer *hrtimer)
{
	struct htw_wheel *w = container_of(hrtimer, struct htw_wheel, hrtimer);

	if (!htw_run_batch(w, true)) {
		spin_lock(&w->arm_lock);
		if (!w->dying)
			queue_work(system_wq, &w->run_work);
		spin_unlock(&w->arm_lock);
	}
	return HRTIMER_NORESTART;
}

/* A whole run, batch by batch, in process context. */
void htw_run_all(struct htw_wheel *w)
{
	might_sleep();
	while (!htw_run_batch(w, false))
		cond_resched();
}

void htw_wheel_run_tick(struct htw_wheel *wheel)
{
	htw_run_all(wheel);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_run_tick);

#if IS_ENABLED(CONFIG_KUNIT) || defined(HTW_BENCH_HOOKS)
bool htw_wheel_run_batch(struct htw_wheel *w)
{
	return htw_run_batch(w, false);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_run_batch);
#endif

void htw_tick_init(struct htw_wheel *w)
{
	w->horizon = 0;
	w->clk = 0;
	w->tick_open = false;
	INIT_WORK(&w->run_work, htw_run_work);
	htw_hrtimer_setup(&w->hrtimer, htw_hrtimer_fn, w->geo.clockid,
			  HRTIMER_MODE_ABS_SOFT);
}

/*
 * Synchronous: when this returns neither the callback nor the work runs,
 * and neither can start again.
 */
void htw_tick_stop(struct htw_wheel *w)
{
	spin_lock_bh(&w->arm_lock);
	w->dying = true;
	spin_unlock_bh(&w->arm_lock);
	hrtimer_cancel(&w->hrtimer);
	cancel_work_sync(&w->run_work);
}
