// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel wheel: the timer store of a wheel and its operations: buckets,
 * timer lifetime and identity, insertion (and its race with the tick),
 * cancel, the ready queue, drain, statistics, create and free.  It calls
 * down into the grid (htw_grid.c) and the handle table (htw_handles.c)
 * and never into the tick: the operations the tick wraps report the
 * points they made (htw_wheel_add(), htw_consume_locked()) and the tick
 * arms for them.  Design: Documentation/htwheel-design.rst
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/indirect_call_wrapper.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "htw_compat.h"
#include "htw_internal.h"
#include "htw_limits.h"
#include "htw_trace.h"

/*
 * Between htw_timer_is()'s reads of a timer (@step 0: after the first read
 * of ->handle, 1: after ->where): nothing in the shipped module; in a test
 * build, a point where a KUnit suite plays a racing CPU's writes,
 * deterministically, with a static stub.
 */
VISIBLE_IF_KUNIT void htw_identity_race(struct htw_timer *t, unsigned int step)
{
	KUNIT_STATIC_STUB_REDIRECT(htw_identity_race, t, step);
}
EXPORT_SYMBOL_IF_KUNIT(htw_identity_race);

/*
 * Timers live in chunks of HTW_IDS_PER_CHUNK, one per object of this
 * cache (32 KiB, an order-3 allocation): SLAB_ACCOUNT charges them to the
 * caller's memcg, and as a slab of its own the chunks show in
 * /sys/kernel/slab and can be failed on purpose.
 */
static struct kmem_cache *htw_chunk_cache;

int htw_wheel_module_init(void)
{
	BUILD_BUG_ON(sizeof(struct htw_timer) != 56);
	BUILD_BUG_ON(HTW_IDS_PER_CHUNK * sizeof(struct htw_timer) > 32768);
	htw_chunk_cache = kmem_cache_create("htw_timer",
					    HTW_IDS_PER_CHUNK * sizeof(struct htw_timer),
					    0, SLAB_ACCOUNT, NULL);
	return htw_chunk_cache ? 0 : -ENOMEM;
}

void htw_wheel_module_exit(void)
{
	kmem_cache_destroy(htw_chunk_cache);
	htw_chunk_cache = NULL;
}

void htw_wheel_geometry(const struct htw_wheel *wheel, struct htw_geometry *geo)
{
	*geo = wheel->geo;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_geometry);

u64 htw_clock_now(clockid_t clockid)
{
	if (clockid == CLOCK_BOOTTIME)
		return ktime_get_boottime_ns();
	return ktime_get_ns();
}
EXPORT_SYMBOL_IF_KUNIT(htw_clock_now);

u64 htw_hrtimer_now(const struct htw_wheel *w)
{
	return htw_clock_now(w->geo.clockid);
}

u64 htw_wheel_now(const struct htw_wheel *wheel)
{
	return INDIRECT_CALL_1(wheel->clock->now, htw_hrtimer_now, wheel);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_now);

/* ---- links ---- */

static u32 htw_timer_id(const struct htw_wheel *w, const struct htw_timer *t)
{
	return htw_handle_id(&w->handles, t->handle);
}

/* The timer of @id, linked in a list we hold the lock of. */
static struct htw_timer *htw_timer_of_id(const struct htw_wheel *w, u32 id)
{
	struct htw_timer *chunk = htw_id_chunk_in_use(&w->handles, id);

	return chunk + htw_id_index(id);
}

/* Link @t first in the list at @head, a bucket's; under its lock. */
static void htw_list_add_head(struct htw_wheel *w, struct htw_timer **head,
			      struct htw_timer *t)
{
	struct htw_timer *first = *head;

	t->next = first;
	t->prev = HTW_PREV_FIRST;
	if (first)
		first->prev = htw_timer_id(w, t);
	*head = t;
}

/*
 * Take @t out of the list at @head (a bucket's or the ready queue), under
 * its lock.  Returns the timer before it, NULL if it was first.
 */
static struct htw_timer *htw_list_del(struct htw_wheel *w,
				      struct htw_timer **head,
				      struct htw_timer *t)
{
	u32 prev = t->prev;
	struct htw_timer *before = NULL;

	if (prev == HTW_PREV_FIRST) {
		WRITE_ONCE(*head, t->next);
	} else {
		before = htw_timer_of_id(w, prev);
		before->next = t->next;
	}
	if (t->next)
		t->next->prev = prev;
	return before;
}

/* ---- buckets ---- */

static void htw_link_locked(struct htw_wheel *w, u32 bucket, struct htw_timer *t)
{
	struct htw_bucket *bk = &w->buckets[bucket];

	lockdep_assert_held(&bk->lock);
	htw_list_add_head(w, &bk->first, t);
	/*
	 * Only this bucket's lock clears its bit, and we hold it: no atomic
	 * when the bucket had timers already.
	 */
	if (!test_bit(bucket, w->occupied))
		set_bit(bucket, w->occupied);
	/* The timer before its place: pairs with htw_timer_is(). */
	smp_wmb();
	htw_timer_set_where(t, HTW_PENDING, bucket);
}

static void htw_unlink_locked(struct htw_wheel *w, u32 bucket,
			      struct htw_timer *t)
{
	struct htw_bucket *bk = &w->buckets[bucket];

	lockdep_assert_held(&bk->lock);
	htw_list_del(w, &bk->first, t);
	if (!bk->first)
		clear_bit(bucket, w->occupied);
}

/*
 * Link @t, which the caller owns (HTW_TRANSIT under tick_lock), in the
 * bucket its ->expires selects as seen from tick @from.  Returns the
 * bucket's visit point (htw_grid_place()).
 */
u64 htw_wheel_place(struct htw_wheel *w, struct htw_timer *t, u64 from)
{
	u64 point;
	u32 bucket;

	lockdep_assert_held(&w->tick_lock);
	bucket = htw_grid_place(&w->grid, t->expires, from, &point);
	spin_lock(&w->buckets[bucket].lock);
	htw_link_locked(w, bucket, t);
	spin_unlock(&w->buckets[bucket].lock);
	return point;
}

/*
 * Take @t, which only tick_lock's holder moves (a table's slot), out of
 * the bucket it is in, if any: it is then the caller's, HTW_TRANSIT.
 */
void htw_wheel_take_out(struct htw_wheel *w, struct htw_timer *t)
{
	u32 where = READ_ONCE(t->where), bucket;

	lockdep_assert_held(&w->tick_lock);
	if (htw_where_state(where) == HTW_PENDING) {
		bucket = where & HTW_WHERE_BUCKET_MASK;
		spin_lock(&w->buckets[bucket].lock);
		htw_unlink_locked(w, bucket, t);
		spin_unlock(&w->buckets[bucket].lock);
	}
	htw_timer_set_where(t, HTW_TRANSIT, 0);
}

/*
 * Detach up to @max timers from the head of @bucket into @list, marking
 * each @state (HTW_TRANSIT: the caller holds tick_lock and owns them;
 * HTW_FREE: they are being cancelled).  Returns how many.
 */
unsigned int htw_take_some(struct htw_wheel *w, u32 bucket,
			   struct htw_timer **list, unsigned int max,
			   enum htw_state state)
{
	struct htw_bucket *bk = &w->buckets[bucket];
	struct htw_timer *last = NULL, *pos;
	unsigned int n = 0;

	if (state == HTW_TRANSIT)
		lockdep_assert_held(&w->tick_lock);
	spin_lock_bh(&bk->lock);
	for (pos = bk->first; pos && n < max; pos = pos->next, n++) {
		htw_timer_set_where(pos, state, 0);
		last = pos;
	}
	*list = NULL;
	if (last) {
		/* Cut the list after @last: the head part becomes @list. */
		*list = bk->first;
		bk->first = pos;
		if (pos)
			pos->prev = HTW_PREV_FIRST;
		last->next = NULL;
	}
	if (!bk->first)
		clear_bit(bucket, w->occupied);
	spin_unlock_bh(&bk->lock);
	return n;
}

/* ---- timer identity and lifetime ---- */

/*
 * Is @t, found through the handle table and maybe freed and reused since
 * for another timer of this wheel, the timer @handle and at @where?  Call
 * under the lock that guards @where.
 *
 * The table writes ->handle before it hands the object out, an owner then
 * writes ->where (smp_wmb() between, by the lock that links it), and only
 * under the lock of the place it leaves or enters; a freed object's
 * ->where is HTW_FREE before its ->handle changes.  Reading handle, where,
 * handle again with smp_rmb() in between: if both handle reads give
 * @handle, which no other incarnation of the object ever carries, the
 * ->where read came from the timer @handle itself.  And if that ->where is
 * the place whose lock we hold, it cannot change before we drop it.
 */
static bool htw_timer_is(struct htw_timer *t, u64 handle, u32 where)
{
	if (READ_ONCE(t->handle) != handle)
		return false;
	htw_identity_race(t, 0);
	/* Pairs with the ordering of htw_handle_get() and htw_link_locked(). */
	smp_rmb();
	if (READ_ONCE(t->where) != where)
		return false;
	htw_identity_race(t, 1);
	/* Pairs with the smp_wmb() of the object's next owner. */
	smp_rmb();
	return READ_ONCE(t->handle) == handle;
}

/* htw_quota_charge() and htw_quota_uncharge(): see htw_limits.h. */

/*
 * A timer from the wheel's own table: no allocation unless the table
 * grows by a chunk.  It stays HTW_FREE, unknown to cancel, until
 * htw_link_locked() gives it a place.
 */
static struct htw_timer *htw_timer_alloc(struct htw_wheel *w)
{
	struct htw_timer *t;
	u64 handle;
	int ret;

	ret = htw_quota_charge(w->geo.quota);
	if (ret) {
		trace_htwheel_limit(w->geo.trace_id, HTW_TRACE_LIMIT_TIMERS, ret);
		return ERR_PTR(ret);
	}
	t = htw_handle_get(&w->handles, &handle);
	if (IS_ERR(t)) {
		/* All max_pending ids in use, or every id used up and retired. */
		if (PTR_ERR(t) == -ENOSPC)
			trace_htwheel_limit(w->geo.trace_id,
					    HTW_TRACE_LIMIT_MAX_PENDING, -ENOSPC);
		htw_quota_uncharge(w->geo.quota);
		return t;
	}
	return t;
}

/* Give the charges back; the memory stays the table's. */
static void htw_timer_release(struct htw_wheel *w)
{
	htw_quota_uncharge(w->geo.quota);
}

/* Cancel treats a timer marked HTW_FREE as gone (UNKNOWN). */
static void htw_timer_free(struct htw_wheel *w, struct htw_timer *t)
{
	htw_timer_set_where(t, HTW_FREE, 0);
	htw_handle_put(&w->handles, t);
	htw_timer_release(w);
}

/*
 * Free every timer of @list (linked through ->next), which nothing else
 * can reach any more.  Each link is read before its timer is freed: the
 * object may be another timer's at once.
 */
void htw_free_list(struct htw_wheel *w, struct htw_timer *list)
{
	struct htw_timer *t, *next;

	for (t = list; t; t = next) {
		next = t->next;
		htw_timer_free(w, t);
	}
}

/* ---- insertion ---- */

/*
 * Slow path of insertion: a tick run moved the horizon while we linked, so
 * the run may have skipped our bucket.  Under tick_lock no batch is in
 * progress and clk is where the run resumes from (or ended); if the timer
 * is still where we put it, place it again relative to clk.  Returns the
 * bucket's visit point.  A re-armed timer (@rearmed) is left where it is
 * while a drain runs: the drain had not reached that bucket when the timer
 * moved in (htw_move_between()) and will take it, where a new place might
 * be behind the drain.
 */
static u64 htw_replace_slow(struct htw_wheel *w, struct htw_timer *t,
			    u64 handle, u32 bucket, u64 point, bool rearmed)
{
	/* Ours still if the handle matches: then so does the slack. */
	u32 where = htw_where(HTW_PENDING, bucket) |
		    (READ_ONCE(t->where) & HTW_WHERE_SLACK_MASK);
	struct htw_bucket *bk = &w->buckets[bucket];
	bool moved = false;

	spin_lock_bh(&w->tick_lock);
	spin_lock(&bk->lock);
	if (!(rearmed && w->paused) && htw_timer_is(t, handle, where)) {
		htw_unlink_locked(w, bucket, t);
		htw_timer_set_where(t, HTW_TRANSIT, 0);
		moved = true;
	}
	spin_unlock(&bk->lock);
	if (moved)
		point = htw_wheel_place(w, t, w->clk);
	else
		point = U64_MAX;	/* the tick placed it and armed for it */
	spin_unlock_bh(&w->tick_lock);
	return point;
}

/*
 * Link and publish a new timer without tick_lock; see THE SCHEDULE/TICK
 * RACE at struct htw_wheel.  Returns the point the hrtimer must fire by
 * for it, U64_MAX if a tick run took care of that.
 */
static u64 htw_insert(struct htw_wheel *w, struct htw_timer *t)
{
	u64 handle = t->handle;
	u64 horizon, point;
	u32 bucket;

	horizon = READ_ONCE(w->horizon);
	bucket = htw_grid_place(&w->grid, t->expires, horizon, &point);
	spin_lock_bh(&w->buckets[bucket].lock);
	htw_link_locked(w, bucket, t);
	htw_count_bh(w, HTW_C_PENDING, 1);
	htw_count_bh(w, HTW_C_SCHEDULED, 1);
	spin_unlock_bh(&w->buckets[bucket].lock);
	/*
	 * Pairs with smp_mb() in htw_advance() and htw_rearm(); it also
	 * orders our bit before the caller's read of armed_tick.
	 */
	smp_mb();
	if (READ_ONCE(w->horizon) != horizon)
		point = htw_replace_slow(w, t, handle, bucket, point, false);
	return point;
}

int htw_spec_check(const struct htw_geometry *geo,
		   const struct htw_timer_spec *spec)
{
	if (spec->period_ns && spec->period_ns < geo->tick_ns)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(htw_spec_check);

/*
 * htw_wheel_schedule() without the arming: *@point is where the hrtimer
 * must fire by for the new timer (U64_MAX: nothing to do), which the tick
 * compares with armed_tick after this returns (the smp_mb() in
 * htw_insert() comes first).
 */
int htw_wheel_add(struct htw_wheel *w, const struct htw_timer_spec *spec,
		  u64 *handle, u64 *point)
{
	struct htw_timer *t;
	u8 shift;

	might_sleep();
	if (htw_spec_check(&w->geo, spec))
		return -EINVAL;
	/* The table's limit is max_pending; this only puts it before EDQUOT. */
	if (htw_handles_full(&w->handles)) {
		trace_htwheel_limit(w->geo.trace_id, HTW_TRACE_LIMIT_MAX_PENDING,
				    -ENOSPC);
		return -ENOSPC;
	}
	t = htw_timer_alloc(w);
	if (IS_ERR(t))
		return PTR_ERR(t);
	t->cookie = spec->cookie;
	t->deadline_ns = spec->deadline_ns;
	t->period_ns = spec->period_ns;
	/*
	 * Coalescing less than the slack allows is never wrong: a shift above
	 * what ->where holds (2^31 ticks) is cut to it.  Still HTW_FREE.
	 */
	shift = min_t(u8, htw_grid_slack_shift(&w->grid, spec->slack_ns),
		      HTW_SLACK_SHIFT_MAX);
	WRITE_ONCE(t->where, htw_where(HTW_FREE, 0) |
			     (u32)shift << HTW_WHERE_BUCKET_BITS);
	t->expires = htw_grid_expiry_tick(&w->grid, t->deadline_ns, shift);
	*handle = t->handle;
	*point = htw_insert(w, t);
	return 0;
}

/* ---- finding a timer by its handle ---- */

/*
 * The timer @handle names and, in *@where, where it is, both read without
 * a lock; NULL and HTW_FREE if it names none (never issued, or gone).
 * The caller takes the lock that guards that place and confirms with
 * htw_timer_is(), or looks again.
 */
static struct htw_timer *htw_timer_find(struct htw_wheel *w, u64 handle,
					u32 *where)
{
	struct htw_timer *t = htw_handle_lookup(&w->handles, handle);

	if (!t || READ_ONCE(t->handle) != handle) {
		*where = htw_where(HTW_FREE, 0);
		return NULL;
	}
	/* The identity before the place; see htw_timer_is(). */
	smp_rmb();
	*where = READ_ONCE(t->where);
	return t;
}

/*
 * An HTW_TRANSIT timer's owner holds tick_lock: once we have had the
 * lock, that batch is over and the timer has a place to look it up in.
 */
static void htw_wait_transit(struct htw_wheel *w)
{
	spin_lock_bh(&w->tick_lock);
	spin_unlock_bh(&w->tick_lock);
}

/* ---- cancel ---- */

static bool htw_cancel_pending(struct htw_wheel *w, struct htw_timer *t,
			       u64 handle, u32 where)
{
	u32 bucket = where & HTW_WHERE_BUCKET_MASK;
	struct htw_bucket *bk = &w->buckets[bucket];
	bool found;

	spin_lock_bh(&bk->lock);
	found = htw_timer_is(t, handle, where);
	if (found) {
		htw_unlink_locked(w, bucket, t);
		/* Ours now: a racing cancel of the same handle must not match. */
		htw_timer_set_where(t, HTW_FREE, 0);
		htw_count_bh(w, HTW_C_PENDING, -1);
		htw_count_bh(w, HTW_C_CANCELLED, 1);
	}
	spin_unlock_bh(&bk->lock);
	if (found)
		htw_timer_free(w, t);
	return found;
}

static int htw_cancel_ready(struct htw_wheel *w, struct htw_timer *t,
			    u64 handle, u32 where)
{
	int ret = -EAGAIN;

	spin_lock_bh(&w->ready_lock);
	if (htw_timer_is(t, handle, where)) {
		ret = HTW_WHEEL_CANCEL_FIRED;
		if (t->period_ns && !(where & HTW_WHERE_FINAL)) {
			WRITE_ONCE(t->where, where | HTW_WHERE_FINAL);
			htw_count_bh(w, HTW_C_PENDING, -1);
			htw_count_bh(w, HTW_C_CANCELLED, 1);
			ret = HTW_WHEEL_CANCEL_OK;
		}
	}
	spin_unlock_bh(&w->ready_lock);
	return ret;
}

/* Each case that does not return found the timer moved: look again. */
enum htw_cancel_status htw_wheel_cancel(struct htw_wheel *wheel, u64 handle)
{
	struct htw_timer *t;
	u32 where;
	int r;

	for (;;) {
		t = htw_timer_find(wheel, handle, &where);
		switch (htw_where_state(where)) {
		case HTW_PENDING:
			if (htw_cancel_pending(wheel, t, handle, where))
				return HTW_WHEEL_CANCEL_OK;
			break;
		case HTW_READY:
			r = htw_cancel_ready(wheel, t, handle, where);
			if (r >= 0)
				return r;
			break;
		case HTW_TRANSIT:
			htw_wait_transit(wheel);
			break;
		default:
			return HTW_WHEEL_CANCEL_UNKNOWN;
		}
	}
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_cancel);

void htw_wheel_unschedule(struct htw_wheel *wheel, u64 handle)
{
	if (htw_wheel_cancel(wheel, handle) != HTW_WHEEL_CANCEL_OK)
		return;
	htw_count(wheel, HTW_C_CANCELLED, -1);
	htw_count(wheel, HTW_C_SCHEDULED, -1);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_unschedule);

/* ---- re-arm ---- */

/* The result of one attempt: a status, or look again. */
#define HTW_MOVE_RETRY	(-1)

/*
 * Change a pending timer's deadline within its bucket: the bucket a
 * placement from @horizon gives is the one it is in.
 */
static int htw_move_within(struct htw_wheel *w, struct htw_timer *t, u64 handle,
			   u32 where, u64 deadline, u64 expires)
{
	struct htw_bucket *bk = &w->buckets[where & HTW_WHERE_BUCKET_MASK];
	int ret = HTW_MOVE_RETRY;

	spin_lock_bh(&bk->lock);
	if (htw_timer_is(t, handle, where)) {
		t->deadline_ns = deadline;
		t->expires = expires;
		ret = HTW_WHEEL_REARM_PENDING;
	}
	spin_unlock_bh(&bk->lock);
	return ret;
}

/*
 * Move a pending timer from bucket @from to bucket @to.  It is in neither
 * while it moves, so both locks are held, lower bucket first (the only
 * place two bucket locks nest): cancel and the tick, which take one, find
 * it in one bucket or the other, never between.
 */
static int htw_move_between(struct htw_wheel *w, struct htw_timer *t, u64 handle,
			    u32 where, u32 to, u64 deadline, u64 expires,
			    unsigned int flags)
{
	u32 from = where & HTW_WHERE_BUCKET_MASK;
	struct htw_bucket *lo = &w->buckets[min(from, to)];
	struct htw_bucket *hi = &w->buckets[max(from, to)];
	int ret = HTW_MOVE_RETRY;

	spin_lock_bh(&lo->lock);
	spin_lock_nested(&hi->lock, SINGLE_DEPTH_NESTING);
	/*
	 * A drain that passed either bucket paused expiry first, so under
	 * their locks we see it: then the move could take the timer behind
	 * the drain, and the caller waits for the drain instead (the drain
	 * pauses under tick_lock before it takes any bucket lock).  A caller
	 * with HTW_WHEEL_REARM_WITHDRAW is serialised with drains already.
	 */
	if (!(flags & HTW_WHEEL_REARM_WITHDRAW) && READ_ONCE(w->paused)) {
		ret = HTW_WHEEL_REARM_SERIALISE;
	} else if (htw_timer_is(t, handle, where)) {
		htw_unlink_locked(w, from, t);
		t->deadline_ns = deadline;
		t->expires = expires;
		htw_link_locked(w, to, t);
		ret = HTW_WHEEL_REARM_PENDING;
	}
	spin_unlock(&hi->lock);
	spin_unlock_bh(&lo->lock);
	return ret;
}

/*
 * Re-arm a pending timer without tick_lock, placing it relative to the
 * published horizon as insertion does (THE SCHEDULE/TICK RACE at struct
 * htw_wheel, and the same slow path when the horizon moved).  The slack
 * shift comes with @where, read without a lock: htw_timer_is() confirms
 * both under the bucket's.
 */
static int htw_move_pending(struct htw_wheel *w, struct htw_timer *t, u64 handle,
			    u32 where, u64 deadline, unsigned int flags, u64 *point)
{
	u8 shift = htw_where_slack_shift(where);
	u64 horizon, expires;
	u32 to;
	int ret;

	expires = htw_grid_expiry_tick(&w->grid, deadline, shift);
	horizon = READ_ONCE(w->horizon);
	to = htw_grid_place(&w->grid, expires, horizon, point);
	if (to == (where & HTW_WHERE_BUCKET_MASK))
		ret = htw_move_within(w, t, handle, where, deadline, expires);
	else
		ret = htw_move_between(w, t, handle, where, to, deadline, expires,
				       flags);
	if (ret != HTW_WHEEL_REARM_PENDING) {
		*point = U64_MAX;	/* nothing moved: nothing to arm */
		return ret;
	}
	/* Pairs with smp_mb() in htw_advance(), as in htw_insert(). */
	smp_mb();
	if (READ_ONCE(w->horizon) != horizon)
		*point = htw_replace_slow(w, t, handle, to, *point, true);
	return ret;
}

/* Take @t off the ready queue; the caller then owns it (HTW_TRANSIT). */
static void htw_ready_unlink_locked(struct htw_wheel *w, struct htw_timer *t)
{
	struct htw_timer *before;

	lockdep_assert_held(&w->tick_lock);
	lockdep_assert_held(&w->ready_lock);
	before = htw_list_del(w, &w->ready_first, t);
	if (w->ready_tail == t)
		w->ready_tail = before;
	htw_timer_set_where(t, HTW_TRANSIT, 0);
	atomic64_dec(&w->nready);
}

/*
 * Re-arm an expired timer whose record is queued: withdraw the record and
 * place the timer again relative to @clk under tick_lock, as consume puts
 * a periodic timer back.  The caller serialises this with peek/consume
 * and drains, the other walkers of the ready queue.
 */
static int htw_move_ready(struct htw_wheel *w, struct htw_timer *t, u64 handle,
			  u32 where, u64 deadline, unsigned int flags, u64 *point)
{
	int ret;

	spin_lock_bh(&w->tick_lock);
	spin_lock(&w->ready_lock);
	if (!htw_timer_is(t, handle, where)) {
		ret = HTW_MOVE_RETRY;
	} else if (where & HTW_WHERE_FINAL) {
		ret = HTW_WHEEL_REARM_UNKNOWN;
	} else if (!(flags & HTW_WHEEL_REARM_WITHDRAW)) {
		ret = HTW_WHEEL_REARM_SERIALISE;
	} else {
		htw_ready_unlink_locked(w, t);
		ret = HTW_WHEEL_REARM_FIRED;
	}
	spin_unlock(&w->ready_lock);
	if (ret == HTW_WHEEL_REARM_FIRED) {
		if (!t->period_ns)
			htw_count(w, HTW_C_PENDING, 1);	/* periodic ones still are */
		t->deadline_ns = deadline;
		t->expires = htw_grid_expiry_tick(&w->grid, deadline,
						  htw_timer_slack_shift(t));
		*point = htw_wheel_place(w, t, w->clk);
	}
	spin_unlock_bh(&w->tick_lock);
	return ret;
}

/*
 * htw_wheel_rearm() without the arming: *@point is where the hrtimer must
 * fire by for the moved timer (U64_MAX: nothing to do).
 */
enum htw_rearm_status htw_wheel_move(struct htw_wheel *w, u64 handle,
				     u64 deadline, unsigned int flags, u64 *point)
{
	struct htw_timer *t;
	int ret = HTW_MOVE_RETRY;
	u32 where;

	*point = U64_MAX;
	while (ret == HTW_MOVE_RETRY) {
		t = htw_timer_find(w, handle, &where);
		switch (htw_where_state(where)) {
		case HTW_PENDING:
			ret = htw_move_pending(w, t, handle, where, deadline, flags,
					       point);
			break;
		case HTW_READY:
			ret = htw_move_ready(w, t, handle, where, deadline, flags,
					     point);
			break;
		case HTW_TRANSIT:
			htw_wait_transit(w);
			break;
		default:
			ret = HTW_WHEEL_REARM_UNKNOWN;
			break;
		}
	}
	return ret;
}

/* ---- ready queue ---- */

/*
 * Append @list, @n timers the tick owns ending at @last, to the ready
 * queue in one lock hold: called with no other wheel lock, for at most a
 * batch of timers.  Each becomes HTW_READY under ready_lock, where cancel
 * looks for it next.
 */
void htw_enqueue_ready(struct htw_wheel *w, struct htw_timer *first,
		       struct htw_timer *last, unsigned int n)
{
	struct htw_timer *t, *before;

	lockdep_assert_held(&w->tick_lock);
	if (!n)
		return;
	spin_lock(&w->ready_lock);
	before = w->ready_tail;
	for (t = first; t; before = t, t = t->next) {
		t->prev = before ? htw_timer_id(w, before) : HTW_PREV_FIRST;
		htw_timer_set_where(t, HTW_READY, 0);
	}
	if (w->ready_tail)
		w->ready_tail->next = first;
	else
		WRITE_ONCE(w->ready_first, first);
	w->ready_tail = last;
	spin_unlock(&w->ready_lock);
	atomic64_add(n, &w->nready);
}

/* The first record, taken off the queue; *@was: its ->where there. */
static struct htw_timer *htw_dequeue_ready_locked(struct htw_wheel *w, u32 *was)
{
	struct htw_timer *t;

	lockdep_assert_held(&w->tick_lock);
	lockdep_assert_held(&w->ready_lock);
	t = w->ready_first;
	if (!t)
		return NULL;
	*was = t->where;
	htw_list_del(w, &w->ready_first, t);
	if (w->ready_tail == t)
		w->ready_tail = NULL;
	htw_timer_set_where(t, HTW_TRANSIT, 0);
	atomic64_dec(&w->nready);
	return t;
}

/* Periods after the reported deadline that have also passed by @now. */
static u32 htw_overrun(const struct htw_timer *t, u64 now)
{
	if (!t->period_ns || now <= t->deadline_ns)
		return 0;
	return min_t(u64, div64_u64(now - t->deadline_ns, t->period_ns), U32_MAX);
}

/* A periodic timer that will come back after this record is consumed. */
static bool htw_still_periodic(const struct htw_timer *t, u64 now)
{
	u64 step, next;

	if (!t->period_ns || (t->where & HTW_WHERE_FINAL))
		return false;
	/* The same arithmetic as htw_rearm_periodic(). */
	return !check_mul_overflow((u64)htw_overrun(t, now) + 1, t->period_ns, &step) &&
	       !check_add_overflow(t->deadline_ns, step, &next);
}

size_t htw_wheel_peek_ready(struct htw_wheel *wheel,
			    struct htw_wheel_expiry *out, size_t max)
{
	u64 now = htw_wheel_now(wheel);
	struct htw_timer *t;
	size_t n = 0;

	spin_lock_bh(&wheel->ready_lock);
	for (t = wheel->ready_first; t; t = t->next) {
		if (n == max)
			break;
		out[n] = (struct htw_wheel_expiry) {
			.cookie = t->cookie,
			.handle = t->handle,
			.deadline_ns = t->deadline_ns,
			.fired_ns = t->fired_ns,
			.overrun = htw_overrun(t, now),
			.flags = htw_still_periodic(t, now) ?
				 HTW_WHEEL_EXPIRY_PERIODIC : 0,
		};
		n++;
	}
	spin_unlock_bh(&wheel->ready_lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_peek_ready);

/*
 * Put a delivered periodic timer back on its own grid: the next deadline
 * is the reported one plus (1 + overrun) periods, never now + period.
 * Returns false if that is beyond u64 (the timer is then finished), else
 * sets *@point to the visit point of its bucket.
 */
static bool htw_rearm_periodic(struct htw_wheel *w, struct htw_timer *t,
			       u32 overrun, u64 *point)
{
	u64 step, next;

	lockdep_assert_held(&w->tick_lock);
	if (check_mul_overflow((u64)overrun + 1, t->period_ns, &step) ||
	    check_add_overflow(t->deadline_ns, step, &next))
		return false;
	t->deadline_ns = next;
	t->expires = htw_grid_expiry_tick(&w->grid, next, htw_timer_slack_shift(t));
	*point = htw_wheel_place(w, t, w->clk);
	return true;
}

/*
 * The part of htw_wheel_consume_ready() under tick_lock: take the first
 * @n records off the ready queue, put periodic timers back on their grid
 * and move the finished ones to @done, for htw_free_list() once the locks
 * are dropped.  Returns the earliest visit point of the timers put back
 * (U64_MAX: none), for the tick to arm while it still holds tick_lock.
 */
u64 htw_consume_locked(struct htw_wheel *w, const struct htw_wheel_expiry *recs,
		       size_t n, struct htw_timer **done)
{
	u64 earliest = U64_MAX, point;
	struct htw_timer *t;
	bool periodic;
	u32 was;
	size_t i;

	lockdep_assert_held(&w->tick_lock);
	spin_lock(&w->ready_lock);
	for (i = 0; i < n; i++) {
		t = htw_dequeue_ready_locked(w, &was);
		if (WARN_ON_ONCE(!t))
			break;
		WARN_ON_ONCE(t->handle != recs[i].handle);
		htw_count_bh(w, HTW_C_FIRED, recs[i].overrun);
		periodic = t->period_ns && !(was & HTW_WHERE_FINAL);
		if (periodic && htw_rearm_periodic(w, t, recs[i].overrun, &point)) {
			earliest = min(earliest, point);
			continue;
		}
		if (periodic)
			htw_count_bh(w, HTW_C_PENDING, -1);	/* ran off the clock */
		htw_timer_set_where(t, HTW_FREE, 0);
		t->next = *done;
		*done = t;
	}
	spin_unlock(&w->ready_lock);
	return earliest;
}

bool htw_wheel_has_ready(struct htw_wheel *wheel)
{
	return READ_ONCE(wheel->ready_first);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_has_ready);

/* ---- drain ---- */

static void htw_describe(const struct htw_timer *t, u64 now,
			 struct htw_wheel_unexpired *out, size_t max, size_t n)
{
	if (n >= max)
		return;
	out[n] = (struct htw_wheel_unexpired) {
		.cookie = t->cookie,
		.handle = t->handle,
		.remaining_ns = t->deadline_ns > now ? t->deadline_ns - now : 0,
	};
}

/*
 * Every bucket in order, empty or not, each under its lock: a re-arm that
 * would move a timer from a bucket not reached yet into one passed holds
 * both locks, so it sees the pause (htw_move_between()) and waits for
 * the drain instead.  Skipping the empty buckets by their bits would let
 * it slip into one the drain found empty.
 */
static size_t htw_drain_buckets(struct htw_wheel *w, u64 now,
				struct htw_wheel_unexpired *out, size_t max,
				size_t n)
{
	u32 b, nbuckets = htw_grid_buckets(&w->grid);
	struct htw_timer *list, *t, *next;
	unsigned int taken;

	for (b = 0; b < nbuckets; b++) {
		do {
			taken = htw_take_some(w, b, &list, HTW_BATCH, HTW_FREE);
			for (t = list; t; t = next) {
				next = t->next;
				htw_describe(t, now, out, max, n++);
				htw_timer_free(w, t);
			}
			cond_resched();
		} while (taken == HTW_BATCH);
	}
	return n;
}

/* A queued periodic timer's future periods are pending too. */
static size_t htw_drain_one_ready(struct htw_wheel *w, struct htw_timer *t,
				  u64 now, struct htw_wheel_unexpired *out,
				  size_t max, size_t n)
{
	u64 next;

	lockdep_assert_held(&w->ready_lock);
	if (!t->period_ns || (t->where & HTW_WHERE_FINAL))
		return n;
	WRITE_ONCE(t->where, t->where | HTW_WHERE_FINAL);
	next = t->deadline_ns + t->period_ns;
	if (next < t->deadline_ns)
		next = U64_MAX;
	if (n < max)
		out[n] = (struct htw_wheel_unexpired) {
			.cookie = t->cookie,
			.handle = t->handle,
			.remaining_ns = next > now ? next - now : 0,
		};
	return n + 1;
}

/*
 * Walk the ready queue a batch at a time.  @last stays queued while the
 * lock is dropped: only consume and destroy remove records, and neither
 * runs during a drain.
 */
static size_t htw_drain_ready(struct htw_wheel *w, u64 now,
			      struct htw_wheel_unexpired *out, size_t max, size_t n)
{
	struct htw_timer *t, *last = NULL;
	unsigned int batch;

	do {
		spin_lock_bh(&w->ready_lock);
		t = last ? last->next : w->ready_first;
		for (batch = 0; t && batch < HTW_BATCH; batch++) {
			n = htw_drain_one_ready(w, t, now, out, max, n);
			last = t;
			t = t->next;
		}
		spin_unlock_bh(&w->ready_lock);
		cond_resched();
	} while (t);
	return n;
}

/*
 * The body of htw_wheel_drain(), which pauses expiry processing around
 * it: no timer moves from a bucket the drain has not reached to one it
 * has passed.  The caller serialises drains with peek/consume, which are
 * then the only other writers of the ready queue besides cancel (flags
 * only).
 */
size_t htw_drain_paused(struct htw_wheel *w, u64 now,
			struct htw_wheel_unexpired *out, size_t max)
{
	size_t n;

	n = htw_drain_buckets(w, now, out, max, 0);
	n = htw_drain_ready(w, now, out, max, n);
	htw_count(w, HTW_C_PENDING, -(s64)n);
	htw_count(w, HTW_C_CANCELLED, n);
	return n;
}

/* ---- stats ---- */

void htw_wheel_get_stats(struct htw_wheel *wheel, struct htw_wheel_stats *st)
{
	s64 sum[HTW_C_NR] = {};
	int cpu, c;

	memset(st, 0, sizeof(*st));
	for_each_possible_cpu(cpu)
		for (c = 0; c < HTW_C_NR; c++)
			sum[c] += READ_ONCE(per_cpu_ptr(wheel->counts, cpu)->v[c]);
	/* A sum taken while CPUs update their shares can be a hair off. */
	st->pending = max_t(s64, sum[HTW_C_PENDING], 0);
	st->scheduled = sum[HTW_C_SCHEDULED];
	st->cancelled = sum[HTW_C_CANCELLED];
	st->fired = sum[HTW_C_FIRED];
	st->ready = atomic64_read(&wheel->nready);
	spin_lock_bh(&wheel->tick_lock);
	st->cascaded = wheel->cascaded;
	st->tick_wakeups = wheel->tick_wakeups;
	st->max_late_ns = wheel->max_late_ns;
	memcpy(st->late_hist, wheel->late_hist, sizeof(st->late_hist));
	spin_unlock_bh(&wheel->tick_lock);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_get_stats);

/* ---- create and free ---- */

static int htw_buckets_init(struct htw_wheel *w)
{
	u32 n = htw_grid_buckets(&w->grid), i;

	BUILD_BUG_ON(HTW_WHERE_BUCKET_MASK < 32 * HTW_MAX_SLOTS);
	w->buckets = kvmalloc_array(n, sizeof(*w->buckets), GFP_KERNEL_ACCOUNT);
	w->occupied = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	w->counts = alloc_percpu_gfp(struct htw_wheel_counts, GFP_KERNEL_ACCOUNT);
	if (!w->buckets || !w->occupied || !w->counts)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		spin_lock_init(&w->buckets[i].lock);
		w->buckets[i].first = NULL;
	}
	return 0;
}

static void htw_wheel_free_mem(struct htw_wheel *w)
{
	kvfree(w->buckets);
	bitmap_free(w->occupied);
	free_percpu(w->counts);
	htw_handles_destroy(&w->handles);
	kfree(w);
}

/*
 * Tick 0 of the grid.  A real clock's grid sits on multiples of the tick
 * (as the kernel's own timers sit on jiffies): anchored at the creation
 * instant instead, every "now + whole ticks" timer scheduled right after
 * it (a wheel is created by its first schedule) would land a hair after a
 * tick boundary and wait a whole tick.
 */
static u64 htw_grid_base(const struct htw_wheel *w)
{
	u64 now = htw_wheel_now(w), rem;

	div64_u64_rem(now, w->geo.tick_ns, &rem);
	return now - rem;
}

/*
 * A wheel without its tick (htw_wheel_create() adds that): ERR_PTR(-EINVAL)
 * for a geometry htw_geometry_normalise() refuses, or -ENOMEM.
 */
struct htw_wheel *htw_wheel_alloc(const struct htw_geometry *geo,
				  const struct htw_clock *clock,
				  htw_ready_fn ready, void *owner, gfp_t gfp)
{
	struct htw_wheel *w;

	BUILD_BUG_ON(HTW_HANDLES_MAX < HTW_MAX_PENDING);
	if (WARN_ON_ONCE(!htw_chunk_cache))	/* htw_wheel_module_init() */
		return ERR_PTR(-ENODEV);
	w = kzalloc(sizeof(*w), gfp);
	if (!w)
		return ERR_PTR(-ENOMEM);
	w->geo = *geo;
	if (htw_geometry_normalise(&w->geo)) {
		kfree(w);
		return ERR_PTR(-EINVAL);
	}
	w->ready = ready;
	w->owner = owner;
	w->clock = clock;
	htw_grid_init(&w->grid, &w->geo, htw_grid_base(w));
	spin_lock_init(&w->tick_lock);
	spin_lock_init(&w->ready_lock);
	if (htw_buckets_init(w) ||
	    htw_handles_init(&w->handles, w->geo.max_pending, get_random_u64(),
			     sizeof(struct htw_timer),
			     offsetof(struct htw_timer, handle), htw_chunk_cache)) {
		htw_wheel_free_mem(w);
		return ERR_PTR(-ENOMEM);
	}
	return w;
}

/*
 * Free every timer of @list.  Nothing else can reach them any more (see
 * htw_wheel_free()), and the handle table goes with the wheel, so the
 * handles are not given back.
 */
static void htw_discard_list(struct htw_wheel *w, struct htw_timer **list)
{
	struct htw_timer *t;
	unsigned int n = 0;

	for (t = *list; t; t = t->next) {
		htw_timer_release(w);
		if (++n % HTW_BATCH == 0)
			cond_resched();
	}
	*list = NULL;
}

/*
 * Free the wheel, its timers and its records once its tick is stopped:
 * then no one else touches it (the caller guarantees no other call races
 * with destroy), so no lock is needed and a million timers are freed with
 * scheduling points in between.
 */
void htw_wheel_free(struct htw_wheel *w)
{
	u32 b;

	might_sleep();
	/* A table's timers were charged all at once, by its owner. */
	if (!w->table_timers) {
		for_each_set_bit(b, w->occupied, htw_grid_buckets(&w->grid))
			htw_discard_list(w, &w->buckets[b].first);
		htw_discard_list(w, &w->ready_first);
	}
	w->ready_tail = NULL;
	htw_wheel_free_mem(w);
}

/* What htw_buckets_init() and htw_handles_init() allocate for @geo. */
size_t htw_wheel_footprint(const struct htw_geometry *geo)
{
	struct htw_geometry g = *geo;
	size_t nbuckets;

	if (htw_geometry_normalise(&g))
		return 0;
	nbuckets = (size_t)g.levels * g.slots;
	return nbuckets * sizeof(struct htw_bucket) +
	       BITS_TO_LONGS(nbuckets) * sizeof(unsigned long) +
	       num_possible_cpus() * sizeof(struct htw_wheel_counts) +
	       htw_handles_footprint(g.max_pending);
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_footprint);

/* ---- for the suites ---- */

#ifdef HTW_TEST_BUILD
int htw_wheel_inspect(struct htw_wheel *w, u64 handle, struct htw_placement *p)
{
	struct htw_timer *t;
	u32 where, bucket;
	int ret = -ENOENT;

	spin_lock_bh(&w->tick_lock);	/* no batch, nothing in transit */
	t = htw_handle_lookup(&w->handles, handle);
	if (t && t->handle == handle && htw_where_state(t->where) != HTW_FREE) {
		where = READ_ONCE(t->where);
		bucket = where & HTW_WHERE_BUCKET_MASK;
		p->state = htw_where_state(where);
		p->level = p->state == HTW_PENDING ? htw_grid_level(&w->grid, bucket) : 0;
		p->index = p->state == HTW_PENDING ? htw_grid_index(&w->grid, bucket) : 0;
		p->expires = p->state == HTW_PENDING ? t->expires : 0;
		ret = 0;
	}
	spin_unlock_bh(&w->tick_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(htw_wheel_inspect);
#endif
