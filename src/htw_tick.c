// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel tick: one hrtimer per wheel, armed on the absolute tick grid for
 * the next tick at which a non-empty bucket is due (never every tick), and
 * the expiry processing it runs in softirq context: cascading timers to
 * finer levels and moving due ones to the ready queue.  A run does at most
 * HTW_BATCH timers per softirq invocation and per lock hold; the rest of a
 * big run goes to the wheel's work item, in process context.
 *
 * The top of the core: it calls down into the wheel (htw_wheel.c) and the
 * grid (htw_grid.c), and wraps the wheel operations that may need the
 * hrtimer armed, paused or stopped (htw_tick.h).
 */
#include <linux/bitops.h>
#include <linux/indirect_call_wrapper.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/sched/signal.h>

#include "htw_compat.h"
#include "htw_internal.h"
#include "htw_table.h"
#include "htw_tick.h"
#include "htw_trace.h"

/* ---- arming ---- */

static void htw_hrtimer_arm(struct htw_wheel *w, u64 at)
{
	hrtimer_start(&w->hrtimer, ns_to_ktime(at), HRTIMER_MODE_ABS_SOFT);
}

static void htw_hrtimer_disarm(struct htw_wheel *w)
{
	hrtimer_try_to_cancel(&w->hrtimer);
}

const struct htw_clock htw_hrtimer_clock = {
	.now = htw_hrtimer_now,
	.arm = htw_hrtimer_arm,
	.disarm = htw_hrtimer_disarm,
};
EXPORT_SYMBOL_IF_KUNIT(htw_hrtimer_clock);

static void htw_start_hrtimer(struct htw_wheel *w, u64 tick)
{
	u64 at = htw_grid_tick_time(&w->grid, tick);

	lockdep_assert_held(&w->arm_lock);
	/* Beyond KTIME_MAX the clock never gets there: nothing to arm. */
	if (w->dying || at > KTIME_MAX)
		return;
	INDIRECT_CALL_1(w->clock->arm, htw_hrtimer_arm, w, at);
}

/* Make sure the hrtimer fires no later than the start of tick @point. */
static void htw_arm_at_most(struct htw_wheel *w, u64 point)
{
	spin_lock_bh(&w->arm_lock);
	if (point < w->armed_tick) {
		WRITE_ONCE(w->armed_tick, point);
		htw_start_hrtimer(w, point);
	}
	spin_unlock_bh(&w->arm_lock);
}

/*
 * After a schedule or a re-arm placed a timer without tick_lock: its
 * smp_mb() came first, so either this sees the armed tick a run's end
 * left, or that run saw the timer (THE SCHEDULE/TICK RACE at struct
 * htw_wheel).  Arms only if @point comes before the armed tick.
 */
static void htw_arm_for(struct htw_wheel *w, u64 point)
{
	if (point < READ_ONCE(w->armed_tick))
		htw_arm_at_most(w, point);
}

/*
 * A table's wheel also tells user space when it next takes the submission
 * ring in; if submissions came meanwhile, that is the next tick.
 */
static void htw_rearm_table(struct htw_wheel *w)
{
	u64 room = htw_table_room_tick(w);

	if (room < READ_ONCE(w->armed_tick))
		htw_arm_at_most(w, room);
	if (!htw_table_publish_wakeup(w, READ_ONCE(w->armed_tick)))
		return;
	htw_arm_at_most(w, w->clk + 1);
	htw_table_publish_wakeup(w, READ_ONCE(w->armed_tick));
}

/*
 * End of a run: forget the old arming, then scan.  A schedule that linked
 * a timer the scan missed read armed_tick after our store (the smp_mb()s
 * pair) and arms for itself; htw_arm_at_most() only ever moves it earlier.
 */
static void htw_rearm(struct htw_wheel *w)
{
	u64 next;

	lockdep_assert_held(&w->tick_lock);
	spin_lock_bh(&w->arm_lock);
	WRITE_ONCE(w->armed_tick, U64_MAX);
	spin_unlock_bh(&w->arm_lock);
	/* Store armed_tick before scanning bits; pairs with htw_insert(). */
	smp_mb();
	next = htw_grid_next_visit(&w->grid, w->occupied, w->clk);

	spin_lock_bh(&w->arm_lock);
	if (next < w->armed_tick) {
		WRITE_ONCE(w->armed_tick, next);
		htw_start_hrtimer(w, next);
	} else if (w->armed_tick == U64_MAX) {
		/* Tickless: idle, or only timers beyond KTIME_MAX. */
		w->clock->disarm(w);
	}
	spin_unlock_bh(&w->arm_lock);
	if (w->table)
		htw_rearm_table(w);
}

/* ---- expiry ---- */

static void htw_account_lateness(struct htw_wheel *w, u64 late)
{
	u32 i = late ? min_t(u32, ilog2(late), 31) : 0;

	lockdep_assert_held(&w->tick_lock);
	w->late_hist[i]++;
	w->max_late_ns = max(w->max_late_ns, late);
}

/*
 * The timers of one visit that fire, in the order they are met, for one
 * append to the ready queue; the counters go to the wheel at once too.
 */
struct htw_fired {
	struct htw_timer *first;
	struct htw_timer *last;
	unsigned int n;
	unsigned int oneshots;
};

static void htw_fire(struct htw_wheel *w, struct htw_fired *f,
		     struct htw_timer *t, u64 now_ns)
{
	htw_account_lateness(w, now_ns - t->deadline_ns);
	t->fired_ns = now_ns;
	f->oneshots += !t->period_ns;	/* periodic ones come back */
	/* @t's link still points into the list it was taken with. */
	t->next = NULL;
	if (f->last)
		f->last->next = t;
	else
		f->first = t;
	f->last = t;
	f->n++;
}

/*
 * The expire events of one visit's fired timers, while the tick still
 * owns them: a loop of their own behind one static branch per visit, so
 * that the per-timer loop of htw_fire() does not even load an argument
 * for a disabled event.
 */
static void htw_trace_fired(struct htw_wheel *w, const struct htw_fired *f)
{
	const struct htw_timer *t;

	for (t = f->first; t; t = t->next)
		trace_htwheel_expire(w->geo.trace_id, t->handle, t->cookie,
				     t->deadline_ns, t->fired_ns);
}

static void htw_fired_commit(struct htw_wheel *w, struct htw_fired *f)
{
	lockdep_assert_held(&w->tick_lock);
	if (trace_htwheel_expire_enabled())
		htw_trace_fired(w, f);
	htw_count_bh(w, HTW_C_PENDING, -(s64)f->oneshots);
	htw_count_bh(w, HTW_C_FIRED, f->n);
	htw_enqueue_ready(w, f->first, f->last, f->n);
}

/* What htw_visit_bucket() does with a table's slots: htw_table_visit(). */
static unsigned int htw_visit_table_bucket(struct htw_wheel *w,
					   struct htw_timer *list, u64 tick,
					   u64 now_ns)
{
	struct htw_timer *t, *next;
	unsigned int fired = 0;

	for (t = list; t; t = next) {
		next = t->next;
		fired += htw_table_visit(w, t, tick, now_ns);
	}
	htw_table_publish_completions(w);
	return fired;
}

/*
 * Visit one bucket at tick @tick: take up to *@budget of its timers, fire
 * those due (expires <= tick) and place the others again relative to
 * @tick, which moves them to a finer level or, if an earlier placement
 * shared this bucket index, just to where they belong (never back into
 * this bucket: see struct htw_wheel).  One bucket lock at a time; the due
 * ones go to the ready queue in one append.  Returns the number fired.
 */
static unsigned int htw_visit_bucket(struct htw_wheel *w, u32 bucket,
				     u64 tick, u64 now_ns, unsigned int *budget)
{
	struct htw_fired f = {};
	bool cascading = bucket >= w->grid.slots;
	struct htw_timer *list, *t, *next;

	*budget -= htw_take_some(w, bucket, &list, *budget, HTW_TRANSIT);
	if (w->table)
		return htw_visit_table_bucket(w, list, tick, now_ns);
	/* Each timer is relinked as it is met, its link read first. */
	for (t = list; t; t = next) {
		next = t->next;
		if (t->expires <= tick) {
			htw_fire(w, &f, t, now_ns);
			continue;
		}
		htw_wheel_place(w, t, tick);
		if (cascading)
			w->cascaded++;
	}
	htw_fired_commit(w, &f);
	return f.n;
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

	lockdep_assert_held(&w->tick_lock);
	for (level = w->grid.levels; level-- > 0;) {
		if (!htw_grid_visits(&w->grid, level, tick, &bucket))
			continue;
		if (!test_bit(bucket, w->occupied))
			continue;
		*fired += htw_visit_bucket(w, bucket, tick, now_ns, budget);
		if (test_bit(bucket, w->occupied) && !*budget)
			return false;
	}
	return true;
}

/* The ticks of a run up to @target, as far as *@budget goes. */
static bool htw_advance_to(struct htw_wheel *w, u64 target, u64 now_ns,
			   unsigned int *budget, unsigned int *fired)
{
	u64 tick;

	for (;;) {
		if (w->tick_open) {
			if (!htw_process_tick(w, w->clk, now_ns, budget, fired))
				return false;
			w->tick_open = false;
		}
		tick = htw_grid_next_visit(&w->grid, w->occupied, w->clk);
		if (tick > target)
			return true;
		w->clk = tick;
		w->tick_open = true;
	}
}

/*
 * A table's slots that waited for room in the completion ring, then its
 * submissions: at most a quarter of a batch each, so that user space
 * never starves expiry; the rest wait for the next run, which
 * htw_rearm_table() makes the next tick.
 */
static void htw_take_table_work(struct htw_wheel *w, u64 now_ns,
				unsigned int *budget, unsigned int *fired)
{
	*budget -= htw_table_retry_waiting(w, *budget / 4, now_ns, fired);
	*budget -= htw_table_take_submissions(w, *budget / 4);
}

/*
 * A table's run that spent its budget ends there: the rest of its ticks
 * waits for the tick htw_table_run_stopped() says, after @target, the one
 * the run began for (never earlier: a tick already passed would fire at
 * once).
 */
static void htw_table_run_stop(struct htw_wheel *w, u64 target)
{
	u64 next = htw_table_run_stopped(w, target,
					 w->run_moves >= HTW_TABLE_RUN_MOVES);

	lockdep_assert_held(&w->tick_lock);
	spin_lock_bh(&w->arm_lock);
	WRITE_ONCE(w->armed_tick, next);
	htw_start_hrtimer(w, next);
	spin_unlock_bh(&w->arm_lock);
	htw_rearm_table(w);
	trace_htwheel_table_budget(w->geo.trace_id, w->run_slots, w->run_moves,
				   htw_grid_tick_time(&w->grid, next));
}

/*
 * Process ticks up to @w->run_end, the tick @now_ns fell in when the run
 * began, jumping straight from one visited tick to the next through the
 * occupancy bits, so a long idle gap costs nothing; stop once *@budget
 * timers were handled.  Returns true when the run is complete (and the
 * hrtimer re-armed), or a table's run spent its budget (slots or moves);
 * false when it stopped early with more to do.
 */
static bool htw_advance(struct htw_wheel *w, u64 now_ns, unsigned int *budget,
			unsigned int *fired)
{
	unsigned int batch = *budget, cut = 0;
	bool done;
	u64 target;

	lockdep_assert_held(&w->tick_lock);
	if (w->paused)
		return true;	/* the drain re-arms when it is done */
	if (!w->run_open) {
		w->run_open = true;
		w->run_seq++;
		w->run_slots = 0;
		w->run_moves = 0;
		w->run_end = max(htw_grid_tick_of(&w->grid, now_ns), w->clk);
	}
	target = w->run_end;
	if (w->table) {
		batch = min3(*budget, HTW_TABLE_RUN_SLOTS - w->run_slots,
			     HTW_TABLE_RUN_MOVES - w->run_moves);
		/* Given back below: the tick event counts what was done. */
		cut = *budget - batch;
		*budget = batch;
		htw_take_table_work(w, now_ns, budget, fired);
	}
	WRITE_ONCE(w->horizon, max(READ_ONCE(w->horizon), target));
	/* Pairs with smp_mb() in htw_insert(): see struct htw_wheel. */
	smp_mb();
	done = htw_advance_to(w, target, now_ns, budget, fired);
	if (w->table) {
		w->run_slots += batch - *budget;
		*budget += cut;
		if (!done && (w->run_slots >= HTW_TABLE_RUN_SLOTS ||
			      w->run_moves >= HTW_TABLE_RUN_MOVES)) {
			w->run_open = false;
			htw_table_run_stop(w, target);
			return true;
		}
	}
	if (!done)
		return false;
	w->run_open = false;
	w->clk = target;
	if (w->table)
		htw_table_run_done(w);
	htw_rearm(w);
	return true;
}

/*
 * What a batch did, and when the hrtimer fires next as the batch left it
 * (a schedule since may have moved it earlier): read after the locks are
 * dropped, only while the event is on.
 */
static void htw_trace_tick(struct htw_wheel *w, unsigned int budget,
			   unsigned int fired, u64 now, bool done)
{
	u64 armed = READ_ONCE(w->armed_tick);

	trace_htwheel_tick(w->geo.trace_id, HTW_BATCH - budget, fired, now,
			   armed == U64_MAX ? U64_MAX :
					      htw_grid_tick_time(&w->grid, armed),
			   !done);
}

/* One batch of a run; returns true when the run is complete. */
VISIBLE_IF_KUNIT bool htw_run_batch(struct htw_wheel *w, bool from_hrtimer)
{
	unsigned int budget = HTW_BATCH, fired = 0;
	bool done;
	u64 now;

	spin_lock_bh(&w->tick_lock);
	if (from_hrtimer)
		w->tick_wakeups++;
	now = htw_wheel_now(w);
	done = htw_advance(w, now, &budget, &fired);
	spin_unlock_bh(&w->tick_lock);
	if (trace_htwheel_tick_enabled())
		htw_trace_tick(w, budget, fired, now, done);
	/* Outside every wheel lock: the owner may call back into the wheel. */
	if (fired && w->ready)
		w->ready(w, w->owner);
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(htw_run_batch);

/* A whole run, batch by batch, in process context. */
VISIBLE_IF_KUNIT void htw_run_all(struct htw_wheel *w)
{
	might_sleep();
	while (!htw_run_batch(w, false))
		cond_resched();
}
EXPORT_SYMBOL_IF_KUNIT(htw_run_all);

/*
 * The workqueue of htw_run_work(), the module's own and unbound: however
 * long a run is, it never holds up the other work items of a CPU's shared
 * pool (system_wq).
 */
static struct workqueue_struct *htw_run_wq;

int htw_tick_module_init(void)
{
	htw_run_wq = alloc_workqueue("htwheel_run", WQ_UNBOUND, 0);
	return htw_run_wq ? 0 : -ENOMEM;
}

void htw_tick_module_exit(void)
{
	destroy_workqueue(htw_run_wq);
}

/* The rest of a run that one softirq invocation did not finish. */
static void htw_run_work(struct work_struct *work)
{
	htw_run_all(container_of(work, struct htw_wheel, run_work));
}

static enum hrtimer_restart htw_hrtimer_fn(struct hrtimer *hrtimer)
{
	struct htw_wheel *w = container_of(hrtimer, struct htw_wheel, hrtimer);

	if (!htw_run_batch(w, true)) {
		spin_lock(&w->arm_lock);
		if (!w->dying)
			queue_work(htw_run_wq, &w->run_work);
		spin_unlock(&w->arm_lock);
	}
	return HRTIMER_NORESTART;
}

/* ---- the wheel operations that involve the hrtimer ---- */

struct htw_wheel *htw_wheel_create(const struct htw_geometry *geo,
				   const struct htw_clock *clock,
				   htw_ready_fn ready, void *owner, gfp_t gfp)
{
	struct htw_wheel *w = htw_wheel_alloc(geo, clock, ready, owner, gfp);

	if (IS_ERR(w))
		return w;
	w->horizon = 0;
	w->clk = 0;
	w->tick_open = false;
	spin_lock_init(&w->arm_lock);
	w->armed_tick = U64_MAX;
	INIT_WORK(&w->run_work, htw_run_work);
	htw_hrtimer_setup(&w->hrtimer, htw_hrtimer_fn, w->geo.clockid,
			  HRTIMER_MODE_ABS_SOFT);
	return w;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_create);

/*
 * A wheel for a shared table of @entries slots: the geometry of @geo with
 * room for @entries timers and no quota (the caller charged them).
 */
struct htw_wheel *htw_wheel_create_table(const struct htw_geometry *geo,
					 const struct htw_clock *clock,
					 htw_ready_fn ready, void *owner,
					 u32 entries, s64 offset)
{
	struct htw_geometry g = *geo;
	struct htw_wheel *w;
	int ret;

	g.max_pending = entries;
	g.quota = NULL;
	w = htw_wheel_create(&g, clock, ready, owner, GFP_KERNEL_ACCOUNT);
	if (IS_ERR(w))
		return w;
	ret = htw_table_init(w, entries, offset);
	if (ret) {
		htw_wheel_destroy(w);
		return ERR_PTR(ret);
	}
	return w;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_create_table);

/*
 * Batch by batch, in the caller's own time, with a scheduling point
 * between batches: until the run is complete and the ring empty, or one
 * ring's worth of entries was consumed (skipped ones count), or a signal
 * is pending, whichever comes first.
 */
void htw_wheel_table_room_made(struct htw_wheel *wheel)
{
	if (htw_table_room_made(wheel))
		htw_arm_at_most(wheel, READ_ONCE(wheel->clk) + 1);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_table_room_made);

long htw_wheel_table_enter(struct htw_wheel *wheel)
{
	u64 taken = htw_table_taken(wheel), consumed = htw_table_consumed(wheel);
	bool interrupted = false;

	for (;;) {
		if (signal_pending(current)) {
			interrupted = true;
			break;
		}
		if (htw_run_batch(wheel, false) &&
		    !htw_table_more_to_take(wheel, consumed))
			break;
		cond_resched();
	}
	taken = htw_table_taken(wheel) - taken;
	return !taken && interrupted ? -EINTR : (long)min_t(u64, taken, LONG_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_table_enter);

/*
 * Synchronous: when this returns neither the callback nor the work runs,
 * and neither can start again.
 */
static void htw_tick_stop(struct htw_wheel *w)
{
	spin_lock_bh(&w->arm_lock);
	w->dying = true;
	spin_unlock_bh(&w->arm_lock);
	hrtimer_cancel(&w->hrtimer);
	cancel_work_sync(&w->run_work);
}

void htw_wheel_destroy(struct htw_wheel *wheel)
{
	if (IS_ERR_OR_NULL(wheel))
		return;
	might_sleep();
	htw_tick_stop(wheel);
	htw_table_free(wheel);
	htw_wheel_free(wheel);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_destroy);

int htw_wheel_schedule(struct htw_wheel *wheel,
		       const struct htw_timer_spec *spec, u64 *handle)
{
	u64 point;
	int ret;

	ret = htw_wheel_add(wheel, spec, handle, &point);
	if (!ret)
		htw_arm_for(wheel, point);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_schedule);

enum htw_rearm_status htw_wheel_rearm(struct htw_wheel *wheel, u64 handle,
				      u64 deadline_ns, unsigned int flags)
{
	enum htw_rearm_status ret;
	u64 point;

	ret = htw_wheel_move(wheel, handle, deadline_ns, flags, &point);
	htw_arm_for(wheel, point);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_rearm);

void htw_wheel_consume_ready(struct htw_wheel *wheel,
			     const struct htw_wheel_expiry *recs, size_t n)
{
	struct htw_timer *done = NULL;
	u64 point;

	spin_lock_bh(&wheel->tick_lock);
	point = htw_consume_locked(wheel, recs, n, &done);
	/* Periodic timers put back: arming under tick_lock, as a run does. */
	htw_arm_at_most(wheel, point);
	spin_unlock_bh(&wheel->tick_lock);
	htw_free_list(wheel, done);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_consume_ready);

/*
 * Expiry processing stops while a drain runs (htw_advance() returns at
 * once), so that no timer moves from a bucket the drain has not reached
 * to one it has passed.
 */
VISIBLE_IF_KUNIT void htw_pause(struct htw_wheel *w)
{
	spin_lock_bh(&w->tick_lock);
	WRITE_ONCE(w->paused, w->paused + 1);
	spin_unlock_bh(&w->tick_lock);
}
EXPORT_SYMBOL_IF_KUNIT(htw_pause);

VISIBLE_IF_KUNIT void htw_resume(struct htw_wheel *w)
{
	spin_lock_bh(&w->tick_lock);
	WRITE_ONCE(w->paused, w->paused - 1);
	if (!w->paused) {
		/* Whatever the open tick had left, the drain took. */
		w->tick_open = false;
		w->run_open = false;
		htw_rearm(w);	/* idle now: disarm rather than wake for nothing */
	}
	spin_unlock_bh(&w->tick_lock);
}
EXPORT_SYMBOL_IF_KUNIT(htw_resume);

size_t htw_wheel_drain(struct htw_wheel *wheel,
		       struct htw_wheel_unexpired *out, size_t max)
{
	u64 now = htw_wheel_now(wheel);
	size_t n;

	might_sleep();
	htw_pause(wheel);
	n = htw_drain_paused(wheel, now, out, max);
	htw_resume(wheel);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_drain);
