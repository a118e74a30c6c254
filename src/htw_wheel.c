// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel core: geometry, levels and buckets, the handle table, schedule,
 * cancel, the ready queue, drain and statistics.  The tick (hrtimer,
 * expiry, cascading) is in htw_tick.c.  Design: Documentation/htwheel-design.rst
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/log2.h>
#include <linux/timekeeping.h>
#include "htw_internal.h"
#include "htw_compat.h"
#include "htw_limits.h"

static struct kmem_cache *htw_timer_cache;

#if IS_ENABLED(CONFIG_KUNIT) || defined(HTW_BENCH_HOOKS)
/* Timers allocated by every wheel, for the suites' leak checks only. */
static DEFINE_PER_CPU(long, htw_timers_live);
static inline void htw_count_timer(long d)
{
	this_cpu_add(htw_timers_live, d);
}
#else
static inline void htw_count_timer(long d) { }
#endif

int htw_wheel_module_init(void)
{
	BUILD_BUG_ON(sizeof(struct htw_timer) > 64);
	/*
	 * SLAB_TYPESAFE_BY_RCU: cancel reads a timer found through the handle
	 * table before it knows which bucket lock guards it; the memory stays
	 * a struct htw_timer while rcu_read_lock() is held, and the identity is
	 * rechecked under that lock (htw_timer_is()).
	 */
	/* Lookups after free read where and handle: never the cookie. */
	htw_timer_cache = htw_cache_create_rcu("htw_timer", sizeof(struct htw_timer),
					       offsetof(struct htw_timer, cookie),
					       SLAB_ACCOUNT);
	return htw_timer_cache ? 0 : -ENOMEM;
}

void htw_wheel_module_exit(void)
{
	kmem_cache_destroy(htw_timer_cache);
	htw_timer_cache = NULL;
}

/* ---- geometry and the tick grid ---- */

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
EXPORT_SYMBOL_IF_HTW_TESTS(htw_geometry_normalise);

void htw_wheel_geometry(const struct htw_wheel *wheel, struct htw_geometry *geo)
{
	*geo = wheel->geo;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_geometry);

u64 htw_clock_now(clockid_t clockid)
{
	if (clockid == CLOCK_BOOTTIME)
		return ktime_get_boottime_ns();
	return ktime_get_ns();
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_clock_now);

u64 htw_wheel_now(const struct htw_wheel *wheel)
{
	if (wheel->manual)
		return READ_ONCE(wheel->manual_now);
	return htw_clock_now(wheel->geo.clockid);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_now);

/* The tick whose start is the latest <= @ns. */
u64 htw_tick_of(const struct htw_wheel *w, u64 ns)
{
	if (ns <= w->base_ns)
		return 0;
	return div64_u64(ns - w->base_ns, w->geo.tick_ns);
}

/* Start of @tick on the wheel's clock, U64_MAX if not representable. */
u64 htw_tick_time(const struct htw_wheel *w, u64 tick)
{
	u64 off, t;

	if (check_mul_overflow(tick, w->geo.tick_ns, &off) ||
	    check_add_overflow(off, w->base_ns, &t))
		return U64_MAX;
	return t;
}

/*
 * The first tick whose start is >= @deadline (so never early), moved up
 * to a multiple of 2^slack_shift ticks so that timers with slack coalesce.
 */
static u64 htw_expiry_tick(const struct htw_wheel *w, u64 deadline,
			   u8 slack_shift)
{
	u64 rem, tick, rounded;

	if (deadline <= w->base_ns)
		return 0;
	tick = div64_u64_rem(deadline - w->base_ns, w->geo.tick_ns, &rem);
	if (rem)
		tick++;
	/*
	 * The levels hold every tick an unrounded deadline can give
	 * (htw_geometry_normalise()); slack must not round past them.
	 */
	rounded = round_up(tick, 1ULL << slack_shift);
	return rounded <= w->max_tick ? rounded : tick;
}

/*
 * Largest s with 2^s - 1 <= slack in ticks: every tick has a multiple of
 * 2^s at most slack ticks after it, so rounding up stays within the slack.
 */
static u8 htw_slack_shift(const struct htw_wheel *w, u64 slack_ns)
{
	u64 slack_ticks = div64_u64(slack_ns, w->geo.tick_ns);

	return fls64(slack_ticks + 1) - 1;
}

/*
 * Choose the bucket for a timer firing at tick @expires when the wheel is
 * at tick @clk: level L holds timers 2^(L*bits) <= expires - clk <
 * 2^((L+1)*bits) in bucket (expires >> L*bits) & mask.  That bucket is next
 * visited at *point, the start of the level-L period holding @expires,
 * which is > clk and <= expires: a timer is never visited too late.
 * A tick already passed is treated as the next tick.
 */
u32 htw_place(const struct htw_wheel *w, u64 expires, u64 clk, u64 *point)
{
	u64 tick = max(expires, clk + 1);
	u32 level = (fls64(tick - clk) - 1) / w->slot_bits;
	u32 shift;

	/* Never past the last level: see htw_expiry_tick(). */
	if (WARN_ON_ONCE(level >= w->geo.levels))
		level = w->geo.levels - 1;
	shift = level * w->slot_bits;

	*point = (tick >> shift) << shift;
	return level * w->geo.slots + (u32)((tick >> shift) & w->slot_mask);
}

void htw_link_locked(struct htw_wheel *w, u32 bucket, struct htw_timer *t)
{
	struct htw_bucket *bk = &w->buckets[bucket];

	lockdep_assert_held(&bk->lock);
	hlist_add_head(&t->node, &bk->timers);
	set_bit(bucket, w->occupied);
	WRITE_ONCE(t->where, htw_where(HTW_PENDING, bucket));
}

static void htw_unlink_locked(struct htw_wheel *w, u32 bucket,
			      struct htw_timer *t)
{
	struct htw_bucket *bk = &w->buckets[bucket];

	lockdep_assert_held(&bk->lock);
	hlist_del(&t->node);
	if (hlist_empty(&bk->timers))
		clear_bit(bucket, w->occupied);
}

/*
 * Detach up to @max timers from the head of @bucket into @list, marking
 * each @state (HTW_TRANSIT: the caller holds tick_lock and owns them;
 * HTW_FREE: they are being cancelled).  Returns how many.
 */
unsigned int htw_take_some(struct htw_wheel *w, u32 bucket,
			   struct hlist_head *list, unsigned int max,
			   enum htw_state state)
{
	struct htw_bucket *bk = &w->buckets[bucket];
	struct hlist_node *last = NULL, *pos;
	unsigned int n = 0;

	spin_lock_bh(&bk->lock);
	for (pos = bk->timers.first; pos && n < max; pos = pos->next, n++) {
		WRITE_ONCE(hlist_entry(pos, struct htw_timer, node)->where,
			   htw_where(state, 0));
		last = pos;
	}
	if (last) {
		/* Cut the list after @last: the head part becomes @list. */
		list->first = bk->timers.first;
		list->first->pprev = &list->first;
		bk->timers.first = pos;
		if (pos)
			pos->pprev = &bk->timers.first;
		last->next = NULL;
	}
	if (hlist_empty(&bk->timers))
		clear_bit(bucket, w->occupied);
	spin_unlock_bh(&bk->lock);
	return n;
}

/* ---- handle table ---- */

static atomic64_t *htw_id_entry(struct htw_ids *ids, u32 id)
{
	atomic64_t *chunk;

	if (id >= (u64)ids->nchunks * HTW_IDS_PER_CHUNK)
		return NULL;
	/* Pairs with the release in htw_ids_grow(): entries initialised. */
	chunk = smp_load_acquire(&ids->dir[id / HTW_IDS_PER_CHUNK]);
	return chunk ? &chunk[id % HTW_IDS_PER_CHUNK] : NULL;
}

static u64 htw_id_free_entry(u64 gen, u32 next)
{
	return gen << (HTW_ID_BITS + 2) | (u64)next << 1 | 1;
}

static u64 htw_id_entry_gen(u64 entry)
{
	return entry >> (HTW_ID_BITS + 2);
}

static u32 htw_id_entry_next(u64 entry)
{
	return (entry >> 1) & HTW_ID_NONE;
}

/* Append the chain first..last, already linked through its entries. */
static void htw_ids_append_locked(struct htw_ids *ids, u32 first, u32 last)
{
	atomic64_t *tail;
	u64 entry;

	lockdep_assert_held(&ids->lock);
	if (ids->tail == HTW_ID_NONE) {
		ids->head = first;
	} else {
		tail = htw_id_entry(ids, ids->tail);
		entry = atomic64_read(tail);
		atomic64_set(tail, htw_id_free_entry(htw_id_entry_gen(entry), first));
	}
	ids->tail = last;
}

static int htw_ids_grow(struct htw_ids *ids)
{
	atomic64_t *chunk;
	u32 i, first;
	int ret = 0;

	mutex_lock(&ids->grow_lock);
	if (READ_ONCE(ids->head) != HTW_ID_NONE)
		goto out;	/* someone freed or grew meanwhile */
	if (ids->used_chunks == ids->nchunks) {
		ret = -ENOSPC;
		goto out;
	}
	chunk = kmalloc_array(HTW_IDS_PER_CHUNK, sizeof(*chunk),
			      GFP_KERNEL_ACCOUNT);
	if (!chunk) {
		ret = -ENOMEM;
		goto out;
	}
	first = ids->used_chunks * HTW_IDS_PER_CHUNK;
	/* Generation 0 is never handed out. */
	for (i = 0; i < HTW_IDS_PER_CHUNK; i++)
		atomic64_set(&chunk[i], htw_id_free_entry(1, i + 1 < HTW_IDS_PER_CHUNK ?
							   first + i + 1 : HTW_ID_NONE));
	/* Entries before the pointer: lookups may race with growth. */
	smp_store_release(&ids->dir[ids->used_chunks], chunk);
	ids->used_chunks++;
	spin_lock(&ids->lock);
	htw_ids_append_locked(ids, first, first + HTW_IDS_PER_CHUNK - 1);
	spin_unlock(&ids->lock);
out:
	mutex_unlock(&ids->grow_lock);
	return ret;
}

/* Take the oldest free id; process context (may grow the table). */
static int htw_id_get(struct htw_ids *ids, u32 *id, u64 *gen)
{
	u64 entry;
	int ret;

	for (;;) {
		spin_lock(&ids->lock);
		if (ids->head != HTW_ID_NONE)
			break;
		spin_unlock(&ids->lock);
		ret = htw_ids_grow(ids);
		if (ret)
			return ret;
	}
	*id = ids->head;
	entry = atomic64_read(htw_id_entry(ids, *id));
	ids->head = htw_id_entry_next(entry);
	if (ids->head == HTW_ID_NONE)
		ids->tail = HTW_ID_NONE;
	spin_unlock(&ids->lock);
	*gen = htw_id_entry_gen(entry);
	return 0;
}

/*
 * Free @id, whose last user had generation @gen.  An id whose generations
 * are used up is retired: its entry stays free but off the list, so no
 * handle is ever issued twice.
 */
static void htw_id_put(struct htw_ids *ids, u32 id, u64 gen)
{
	atomic64_t *slot = htw_id_entry(ids, id);

	if (gen >= HTW_GEN_MAX) {
		atomic64_set(slot, htw_id_free_entry(0, HTW_ID_NONE));
		return;
	}
	spin_lock(&ids->lock);
	atomic64_set(slot, htw_id_free_entry(gen + 1, HTW_ID_NONE));
	htw_ids_append_locked(ids, id, id);
	spin_unlock(&ids->lock);
}

static struct htw_timer *htw_id_lookup(struct htw_ids *ids, u32 id)
{
	atomic64_t *slot = htw_id_entry(ids, id);
	u64 entry;

	if (!slot)
		return NULL;
	entry = atomic64_read(slot);
	if (entry & 1)
		return NULL;
	return (struct htw_timer *)(uintptr_t)entry;
}

static u32 htw_ids_nchunks(u64 max_pending)
{
	return DIV_ROUND_UP_ULL(max_pending, HTW_IDS_PER_CHUNK);
}

static int htw_ids_init(struct htw_ids *ids, u64 max_pending)
{
	BUILD_BUG_ON(BIT_ULL(HTW_ID_BITS) < HTW_MAX_PENDING);
	BUILD_BUG_ON(HTW_ID_BITS + HTW_GEN_BITS > 63);
	BUILD_BUG_ON(HTW_ID_BITS + 2 + HTW_GEN_BITS != 64);
	ids->nchunks = htw_ids_nchunks(max_pending);
	ids->dir = kvcalloc(ids->nchunks, sizeof(*ids->dir), GFP_KERNEL_ACCOUNT);
	if (!ids->dir)
		return -ENOMEM;
	spin_lock_init(&ids->lock);
	ids->head = HTW_ID_NONE;
	ids->tail = HTW_ID_NONE;
	mutex_init(&ids->grow_lock);
	return 0;
}

static void htw_ids_free(struct htw_ids *ids)
{
	u32 i;

	for (i = 0; i < ids->used_chunks; i++)
		kfree(ids->dir[i]);
	kvfree(ids->dir);
	mutex_destroy(&ids->grow_lock);
}

static u64 htw_make_handle(const struct htw_wheel *w, u32 id, u64 gen)
{
	return (gen << HTW_ID_BITS | id) ^ w->handle_key;
}

/*
 * Decode @handle into id and generation; false for a value this wheel
 * never issues (generation 0 or bits above the generation set).
 */
static bool htw_handle_decode(const struct htw_wheel *w, u64 handle,
			      u32 *id, u64 *gen)
{
	u64 raw = handle ^ w->handle_key;

	*id = raw & HTW_ID_MASK;
	*gen = raw >> HTW_ID_BITS;
	return *gen && *gen <= HTW_GEN_MAX;
}

static u32 htw_timer_id(const struct htw_wheel *w, const struct htw_timer *t)
{
	return (t->handle ^ w->handle_key) & HTW_ID_MASK;
}

/*
 * Is @t, found through the handle table and maybe freed and reused since
 * (SLAB_TYPESAFE_BY_RCU, by this wheel or another), the timer @handle and
 * at @where?  Call under the lock that guards @where in this wheel.
 *
 * An owner writes ->handle, then smp_wmb(), then ->where, and only changes
 * ->where under the lock of the place it leaves or enters.  Reading
 * handle, where, handle again with smp_rmb() in between: if both handle
 * reads give @handle, which no other incarnation of any object of this
 * wheel ever carries, the ->where read came from the timer @handle itself
 * (another wheel's incarnation would need a key colliding with ours).  And
 * if that ->where is the place whose lock we hold, it cannot change before
 * we drop it.
 */
static bool htw_timer_is(struct htw_timer *t, u64 handle, u32 where)
{
	if (READ_ONCE(t->handle) != handle)
		return false;
	htw_identity_probe(t, 0);
	/* Pairs with the smp_wmb() in htw_timer_alloc(). */
	smp_rmb();
	if (READ_ONCE(t->where) != where)
		return false;
	htw_identity_probe(t, 1);
	/* Pairs with the smp_wmb() of the object's next owner. */
	smp_rmb();
	return READ_ONCE(t->handle) == handle;
}

/* ---- timer lifetime ---- */

/* htw_quota_charge() and htw_quota_uncharge(): see htw_limits.h. */

static struct htw_timer *htw_timer_alloc(struct htw_wheel *w)
{
	struct htw_timer *t;
	u64 gen;
	u32 id;
	int ret;

	if (atomic64_inc_return(&w->live) > w->geo.max_pending) {
		ret = -ENOSPC;
		goto undo_live;
	}
	ret = htw_quota_charge(w->geo.quota);
	if (ret)
		goto undo_live;
	ret = -ENOMEM;
	t = kmem_cache_alloc(htw_timer_cache, GFP_KERNEL);
	if (!t)
		goto undo_quota;
	ret = htw_id_get(&w->ids, &id, &gen);
	if (ret) {
		kmem_cache_free(htw_timer_cache, t);
		goto undo_quota;
	}
	WRITE_ONCE(t->handle, htw_make_handle(w, id, gen));
	/* The identity before any place; pairs with htw_timer_is(). */
	smp_wmb();
	WRITE_ONCE(t->where, htw_where(HTW_TRANSIT, 0));
	t->flags = 0;
	t->reserved = 0;
	htw_count_timer(1);
	return t;

undo_quota:
	htw_quota_uncharge(w->geo.quota);
undo_live:
	atomic64_dec(&w->live);
	return ERR_PTR(ret);
}

/* Give the memory and the charges back; the id is the caller's business. */
static void htw_timer_release(struct htw_wheel *w, struct htw_timer *t)
{
	kmem_cache_free(htw_timer_cache, t);
	htw_quota_uncharge(w->geo.quota);
	atomic64_dec(&w->live);
	htw_count_timer(-1);
}

/* Cancel treats a timer marked HTW_FREE as gone (UNKNOWN). */
static void htw_timer_free(struct htw_wheel *w, struct htw_timer *t)
{
	u64 raw = t->handle ^ w->handle_key;

	WRITE_ONCE(t->where, htw_where(HTW_FREE, 0));
	htw_id_put(&w->ids, raw & HTW_ID_MASK, raw >> HTW_ID_BITS);
	htw_timer_release(w, t);
}

static void htw_publish(struct htw_wheel *w, struct htw_timer *t)
{
	/* Fields first: lookups may dereference as soon as the entry is set. */
	smp_wmb();
	/* Before the bucket lock is dropped: nothing can free it earlier. */
	atomic64_set(htw_id_entry(&w->ids, htw_timer_id(w, t)), (u64)(uintptr_t)t);
}

/* ---- schedule ---- */

/*
 * Slow path of insertion: a tick run moved the horizon while we linked, so
 * the run may have skipped our bucket.  Under tick_lock no batch is in
 * progress and clk is where the run resumes from (or ended); if the timer
 * is still where we put it, place it again relative to clk.  Returns the
 * bucket's visit point.
 */
static u64 htw_replace_slow(struct htw_wheel *w, struct htw_timer *t,
			    u64 handle, u32 bucket, u64 point)
{
	u32 where = htw_where(HTW_PENDING, bucket);
	struct htw_bucket *bk = &w->buckets[bucket];
	bool moved = false;

	spin_lock_bh(&w->tick_lock);
	spin_lock(&bk->lock);
	if (htw_timer_is(t, handle, where)) {
		htw_unlink_locked(w, bucket, t);
		WRITE_ONCE(t->where, htw_where(HTW_TRANSIT, 0));
		moved = true;
	}
	spin_unlock(&bk->lock);
	if (moved) {
		bucket = htw_place(w, t->expires, w->clk, &point);
		bk = &w->buckets[bucket];
		spin_lock(&bk->lock);
		htw_link_locked(w, bucket, t);
		spin_unlock(&bk->lock);
	} else {
		point = U64_MAX;	/* the tick placed it and armed for it */
	}
	spin_unlock_bh(&w->tick_lock);
	return point;
}

/* Link and publish a new timer without tick_lock; see struct htw_wheel. */
static void htw_insert(struct htw_wheel *w, struct htw_timer *t)
{
	u64 handle = t->handle;
	u64 horizon, point;
	u32 bucket;

	rcu_read_lock();
	horizon = READ_ONCE(w->horizon);
	bucket = htw_place(w, t->expires, horizon, &point);
	spin_lock_bh(&w->buckets[bucket].lock);
	htw_link_locked(w, bucket, t);
	htw_publish(w, t);
	spin_unlock_bh(&w->buckets[bucket].lock);
	/* Pairs with smp_mb() in htw_advance() and htw_rearm(). */
	smp_mb();
	if (READ_ONCE(w->horizon) != horizon)
		point = htw_replace_slow(w, t, handle, bucket, point);
	rcu_read_unlock();
	if (point < READ_ONCE(w->armed_tick))
		htw_arm_at_most(w, point);
}

int htw_spec_check(const struct htw_geometry *geo,
		   const struct htw_timer_spec *spec)
{
	if (spec->period_ns && spec->period_ns < geo->tick_ns)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_spec_check);

int htw_wheel_schedule(struct htw_wheel *wheel,
		       const struct htw_timer_spec *spec, u64 *handle)
{
	struct htw_timer *t;

	might_sleep();
	if (htw_spec_check(&wheel->geo, spec))
		return -EINVAL;
	if (atomic64_read(&wheel->live) >= wheel->geo.max_pending)
		return -ENOSPC;
	t = htw_timer_alloc(wheel);
	if (IS_ERR(t))
		return PTR_ERR(t);
	t->cookie = spec->cookie;
	t->deadline_ns = spec->deadline_ns;
	t->period_ns = spec->period_ns;
	t->slack_shift = htw_slack_shift(wheel, spec->slack_ns);
	t->expires = htw_expiry_tick(wheel, t->deadline_ns, t->slack_shift);
	*handle = t->handle;
	atomic64_inc(&wheel->pending);
	atomic64_inc(&wheel->scheduled);
	htw_insert(wheel, t);
	return 0;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_schedule);

/* ---- cancel ---- */

static bool htw_cancel_pending(struct htw_wheel *w, struct htw_timer *t,
			       u64 handle, u32 where)
{
	u32 bucket = where & HTW_WHERE_BUCKET_MASK;
	struct htw_bucket *bk;
	bool found;

	/*
	 * The object may have been freed and reused by another wheel since
	 * we read @where (SLAB_TYPESAFE_BY_RCU): check the bucket is ours
	 * before taking its lock; htw_timer_is() then checks the rest.
	 */
	if (bucket >= w->geo.levels * w->geo.slots)
		return false;
	bk = &w->buckets[bucket];

	spin_lock_bh(&bk->lock);
	found = htw_timer_is(t, handle, where);
	if (found) {
		htw_unlink_locked(w, bucket, t);
		/* Ours now: a racing cancel of the same handle must not match. */
		WRITE_ONCE(t->where, htw_where(HTW_FREE, 0));
	}
	spin_unlock_bh(&bk->lock);
	if (found) {
		atomic64_dec(&w->pending);
		atomic64_inc(&w->cancelled);
		htw_timer_free(w, t);
	}
	return found;
}

static int htw_cancel_ready(struct htw_wheel *w, struct htw_timer *t,
			    u64 handle)
{
	int ret = -EAGAIN;

	spin_lock_bh(&w->ready_lock);
	if (htw_timer_is(t, handle, htw_where(HTW_READY, 0))) {
		ret = HTW_WHEEL_CANCEL_FIRED;
		if (t->period_ns && !(t->flags & HTW_TF_CANCELLED)) {
			t->flags |= HTW_TF_CANCELLED;
			atomic64_dec(&w->pending);
			atomic64_inc(&w->cancelled);
			ret = HTW_WHEEL_CANCEL_OK;
		}
	}
	spin_unlock_bh(&w->ready_lock);
	return ret;
}

enum htw_cancel_status htw_wheel_cancel(struct htw_wheel *wheel, u64 handle)
{
	enum htw_cancel_status ret = HTW_WHEEL_CANCEL_UNKNOWN;
	struct htw_timer *t;
	u32 where, id;
	u64 gen;
	int r;

	if (!htw_handle_decode(wheel, handle, &id, &gen))
		return ret;
	rcu_read_lock();
	for (;;) {
		t = htw_id_lookup(&wheel->ids, id);
		if (!t || READ_ONCE(t->handle) != handle)
			break;
		/* The identity before the place; see htw_timer_is(). */
		smp_rmb();
		where = READ_ONCE(t->where);
		switch (htw_where_state(where)) {
		case HTW_PENDING:
			if (htw_cancel_pending(wheel, t, handle, where)) {
				ret = HTW_WHEEL_CANCEL_OK;
				goto out;
			}
			continue;	/* moved under us: look again */
		case HTW_READY:
			r = htw_cancel_ready(wheel, t, handle);
			if (r >= 0) {
				ret = r;
				goto out;
			}
			continue;
		case HTW_TRANSIT:
			/*
			 * Its owner holds tick_lock: once we have had the lock,
			 * that batch is over and the timer has a place; look
			 * again.
			 */
			spin_lock_bh(&wheel->tick_lock);
			spin_unlock_bh(&wheel->tick_lock);
			continue;
		default:
			goto out;
		}
	}
out:
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_cancel);

void htw_wheel_unschedule(struct htw_wheel *wheel, u64 handle)
{
	if (htw_wheel_cancel(wheel, handle) != HTW_WHEEL_CANCEL_OK)
		return;
	atomic64_dec(&wheel->cancelled);
	atomic64_dec(&wheel->scheduled);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_unschedule);

/* ---- ready queue ---- */

/* Called by the tick with tick_lock held and no other wheel lock. */
void htw_enqueue_ready(struct htw_wheel *w, struct htw_timer *t)
{
	spin_lock(&w->ready_lock);
	if (w->ready_tail)
		hlist_add_behind(&t->node, &w->ready_tail->node);
	else
		hlist_add_head(&t->node, &w->ready_head);
	w->ready_tail = t;
	WRITE_ONCE(t->where, htw_where(HTW_READY, 0));
	spin_unlock(&w->ready_lock);
	atomic64_inc(&w->nready);
}

static struct htw_timer *htw_dequeue_ready_locked(struct htw_wheel *w)
{
	struct htw_timer *t;

	lockdep_assert_held(&w->ready_lock);
	if (hlist_empty(&w->ready_head))
		return NULL;
	t = hlist_entry(w->ready_head.first, struct htw_timer, node);
	hlist_del(&t->node);
	if (w->ready_tail == t)
		w->ready_tail = NULL;
	WRITE_ONCE(t->where, htw_where(HTW_TRANSIT, 0));
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

	if (!t->period_ns || (t->flags & HTW_TF_CANCELLED))
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
	hlist_for_each_entry(t, &wheel->ready_head, node) {
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
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_peek_ready);

/*
 * Put a delivered periodic timer back on its own grid: the next deadline
 * is the reported one plus (1 + overrun) periods, never now + period.
 * Returns false if that is beyond u64 (the timer is then finished).
 */
static bool htw_rearm_periodic(struct htw_wheel *w, struct htw_timer *t,
			       u32 overrun)
{
	u64 step, next;
	u32 bucket;
	u64 point;

	lockdep_assert_held(&w->tick_lock);
	if (check_mul_overflow((u64)overrun + 1, t->period_ns, &step) ||
	    check_add_overflow(t->deadline_ns, step, &next))
		return false;
	t->deadline_ns = next;
	t->expires = htw_expiry_tick(w, next, t->slack_shift);
	bucket = htw_place(w, t->expires, w->clk, &point);
	spin_lock(&w->buckets[bucket].lock);
	htw_link_locked(w, bucket, t);
	spin_unlock(&w->buckets[bucket].lock);
	htw_arm_at_most(w, point);
	return true;
}

void htw_wheel_consume_ready(struct htw_wheel *wheel,
			     const struct htw_wheel_expiry *recs, size_t n)
{
	HLIST_HEAD(done);
	struct htw_timer *t;
	struct hlist_node *tmp;
	size_t i;

	spin_lock_bh(&wheel->tick_lock);
	spin_lock(&wheel->ready_lock);
	for (i = 0; i < n; i++) {
		t = htw_dequeue_ready_locked(wheel);
		if (WARN_ON_ONCE(!t))
			break;
		WARN_ON_ONCE(t->handle != recs[i].handle);
		atomic64_add(recs[i].overrun, &wheel->fired);
		if (t->period_ns && !(t->flags & HTW_TF_CANCELLED) &&
		    htw_rearm_periodic(wheel, t, recs[i].overrun))
			continue;
		if (t->period_ns && !(t->flags & HTW_TF_CANCELLED))
			atomic64_dec(&wheel->pending);	/* ran off the clock */
		WRITE_ONCE(t->where, htw_where(HTW_FREE, 0));
		hlist_add_head(&t->node, &done);
	}
	spin_unlock(&wheel->ready_lock);
	spin_unlock_bh(&wheel->tick_lock);

	hlist_for_each_entry_safe(t, tmp, &done, node) {
		hlist_del(&t->node);
		htw_timer_free(wheel, t);
	}
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_consume_ready);

bool htw_wheel_has_ready(struct htw_wheel *wheel)
{
	return !hlist_empty(&wheel->ready_head);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_has_ready);

/* ---- drain ---- */

static void htw_describe(const struct htw_wheel *w,
			 const struct htw_timer *t, u64 now,
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
 * Expiry processing stops while a drain runs, so that no timer moves from a
 * bucket the drain has not reached to one it has passed.  The caller
 * serialises drains with peek/consume, which are then the only other
 * writers of the ready queue besides cancel (flags only).
 */
static void htw_pause(struct htw_wheel *w)
{
	spin_lock_bh(&w->tick_lock);
	w->paused++;
	spin_unlock_bh(&w->tick_lock);
}

static void htw_resume(struct htw_wheel *w)
{
	spin_lock_bh(&w->tick_lock);
	if (!--w->paused) {
		/* Whatever the open tick had left, the drain took. */
		w->tick_open = false;
		htw_rearm(w);	/* idle now: disarm rather than wake for nothing */
	}
	spin_unlock_bh(&w->tick_lock);
}

static size_t htw_drain_buckets(struct htw_wheel *w, u64 now,
				struct htw_wheel_unexpired *out, size_t max,
				size_t n)
{
	u32 nbuckets = w->geo.levels * w->geo.slots;
	struct hlist_node *tmp;
	struct htw_timer *t;
	unsigned int taken;
	u32 b;

	for_each_set_bit(b, w->occupied, nbuckets) {
		do {
			HLIST_HEAD(list);

			taken = htw_take_some(w, b, &list, HTW_BATCH, HTW_FREE);
			hlist_for_each_entry_safe(t, tmp, &list, node) {
				hlist_del(&t->node);
				htw_describe(w, t, now, out, max, n++);
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
	if (!t->period_ns || (t->flags & HTW_TF_CANCELLED))
		return n;
	t->flags |= HTW_TF_CANCELLED;
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
		t = hlist_entry_safe(last ? last->node.next : w->ready_head.first,
				     struct htw_timer, node);
		for (batch = 0; t && batch < HTW_BATCH; batch++) {
			n = htw_drain_one_ready(w, t, now, out, max, n);
			last = t;
			t = hlist_entry_safe(t->node.next, struct htw_timer, node);
		}
		spin_unlock_bh(&w->ready_lock);
		cond_resched();
	} while (t);
	return n;
}

size_t htw_wheel_drain(struct htw_wheel *wheel,
		       struct htw_wheel_unexpired *out, size_t max)
{
	u64 now = htw_wheel_now(wheel);
	size_t n;

	might_sleep();
	htw_pause(wheel);
	n = htw_drain_buckets(wheel, now, out, max, 0);
	n = htw_drain_ready(wheel, now, out, max, n);
	htw_resume(wheel);
	atomic64_sub(n, &wheel->pending);
	atomic64_add(n, &wheel->cancelled);
	return n;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_drain);

/* ---- stats ---- */

void htw_wheel_get_stats(struct htw_wheel *wheel, struct htw_wheel_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->pending = atomic64_read(&wheel->pending);
	st->ready = atomic64_read(&wheel->nready);
	st->scheduled = atomic64_read(&wheel->scheduled);
	st->fired = atomic64_read(&wheel->fired);
	st->cancelled = atomic64_read(&wheel->cancelled);
	spin_lock_bh(&wheel->tick_lock);
	st->cascaded = wheel->cascaded;
	st->tick_wakeups = wheel->tick_wakeups;
	st->max_late_ns = wheel->max_late_ns;
	memcpy(st->late_hist, wheel->late_hist, sizeof(st->late_hist));
	spin_unlock_bh(&wheel->tick_lock);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_get_stats);

/* ---- create / destroy ---- */

static int htw_buckets_init(struct htw_wheel *w)
{
	u32 n = w->geo.levels * w->geo.slots, i;

	BUILD_BUG_ON(HTW_WHERE_BUCKET_MASK < 32 * HTW_MAX_SLOTS);
	w->buckets = kvmalloc_array(n, sizeof(*w->buckets), GFP_KERNEL_ACCOUNT);
	w->occupied = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	if (!w->buckets || !w->occupied)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		spin_lock_init(&w->buckets[i].lock);
		INIT_HLIST_HEAD(&w->buckets[i].timers);
	}
	return 0;
}

static void htw_wheel_free(struct htw_wheel *w)
{
	kvfree(w->buckets);
	bitmap_free(w->occupied);
	if (w->ids.dir)
		htw_ids_free(&w->ids);
	kfree(w);
}

/*
 * Tick 0 of the grid.  A real clock's grid sits on multiples of the tick
 * (as the kernel's own timers sit on jiffies): anchored at the creation
 * instant instead, every "now + whole ticks" timer scheduled right after
 * it (a wheel is created by its first schedule) would land a hair after a
 * tick boundary and wait a whole tick.  A manual (test) clock starts at
 * the instant it was given, which the KUnit suites rely on.
 */
static u64 htw_grid_base(const struct htw_wheel *w)
{
	u64 now = htw_wheel_now(w), rem;

	if (w->manual)
		return now;
	div64_u64_rem(now, w->geo.tick_ns, &rem);
	return now - rem;
}

static struct htw_wheel *htw_wheel_alloc(const struct htw_geometry *geo,
					 htw_ready_fn ready, void *owner,
					 gfp_t gfp, bool manual, u64 now)
{
	struct htw_wheel *w;

	if (WARN_ON_ONCE(!htw_timer_cache))	/* htw_wheel_module_init() */
		return ERR_PTR(-ENODEV);
	w = kzalloc(sizeof(*w), gfp);
	if (!w)
		return ERR_PTR(-ENOMEM);
	w->geo = *geo;
	if (htw_geometry_normalise(&w->geo)) {
		kfree(w);
		return ERR_PTR(-EINVAL);
	}
	w->handle_key = get_random_u64() | HTW_HANDLE_KEY_TOP;
	w->max_tick = div64_u64(U64_MAX, w->geo.tick_ns) + 1;
	w->slot_bits = ilog2(w->geo.slots);
	w->slot_mask = w->geo.slots - 1;
	w->ready = ready;
	w->owner = owner;
	w->manual = manual;
	w->manual_now = now;
	spin_lock_init(&w->tick_lock);
	spin_lock_init(&w->arm_lock);
	spin_lock_init(&w->ready_lock);
	w->armed_tick = U64_MAX;
	if (htw_buckets_init(w) || htw_ids_init(&w->ids, w->geo.max_pending)) {
		htw_wheel_free(w);
		return ERR_PTR(-ENOMEM);
	}
	w->base_ns = htw_grid_base(w);
	htw_tick_init(w);
	return w;
}

/* Returns the wheel or ERR_PTR(-EINVAL / -ENOMEM), never NULL. */
struct htw_wheel *htw_wheel_create(const struct htw_geometry *geo,
				   htw_ready_fn ready, void *owner, gfp_t gfp)
{
	return htw_wheel_alloc(geo, ready, owner, gfp, false, 0);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_create);

/*
 * Free every timer of @list.  Nothing else can reach them any more (see
 * htw_wheel_destroy()), and the handle table goes with the wheel, so the
 * ids are not given back.
 */
static void htw_discard_list(struct htw_wheel *w, struct hlist_head *list)
{
	struct hlist_node *tmp;
	struct htw_timer *t;
	unsigned int n = 0;

	hlist_for_each_entry_safe(t, tmp, list, node) {
		htw_timer_release(w, t);
		if (++n % HTW_BATCH == 0)
			cond_resched();
	}
	INIT_HLIST_HEAD(list);
}

/*
 * Once the tick is stopped no one else touches the wheel (the caller
 * guarantees no other call races with destroy), so no lock is needed and
 * a million timers are freed with scheduling points in between.
 */
void htw_wheel_destroy(struct htw_wheel *wheel)
{
	u32 nbuckets, b;

	if (IS_ERR_OR_NULL(wheel))
		return;
	might_sleep();
	htw_tick_stop(wheel);
	nbuckets = wheel->geo.levels * wheel->geo.slots;
	for_each_set_bit(b, wheel->occupied, nbuckets)
		htw_discard_list(wheel, &wheel->buckets[b].timers);
	htw_discard_list(wheel, &wheel->ready_head);
	wheel->ready_tail = NULL;
	WARN_ON_ONCE(atomic64_read(&wheel->live));
	htw_wheel_free(wheel);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_destroy);

/* ---- test hooks ---- */

#if IS_ENABLED(CONFIG_KUNIT) || defined(HTW_BENCH_HOOKS)
struct htw_wheel *htw_wheel_create_manual(const struct htw_geometry *geo,
					  htw_ready_fn ready, void *owner,
					  u64 start_ns)
{
	return htw_wheel_alloc(geo, ready, owner, GFP_KERNEL, true, start_ns);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_create_manual);

void htw_wheel_set_now(struct htw_wheel *w, u64 now_ns)
{
	WRITE_ONCE(w->manual_now, now_ns);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_set_now);

int htw_wheel_inspect(struct htw_wheel *w, u64 handle, struct htw_placement *p)
{
	struct htw_timer *t;
	u32 where, bucket, id;
	int ret = -ENOENT;
	u64 gen;

	if (!htw_handle_decode(w, handle, &id, &gen))
		return ret;
	spin_lock_bh(&w->tick_lock);	/* no batch, nothing in transit */
	rcu_read_lock();
	t = htw_id_lookup(&w->ids, id);
	if (t && t->handle == handle) {
		where = READ_ONCE(t->where);
		bucket = where & HTW_WHERE_BUCKET_MASK;
		p->state = htw_where_state(where);
		p->level = p->state == HTW_PENDING ? bucket >> w->slot_bits : 0;
		p->index = p->state == HTW_PENDING ? bucket & w->slot_mask : 0;
		p->expires = p->state == HTW_PENDING ? t->expires : 0;
		ret = 0;
	}
	rcu_read_unlock();
	spin_unlock_bh(&w->tick_lock);
	return ret;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_inspect);

u64 htw_wheel_armed_tick(struct htw_wheel *w)
{
	return READ_ONCE(w->armed_tick);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_armed_tick);

u64 htw_wheel_tick_time(const struct htw_wheel *w, u64 tick)
{
	return htw_tick_time(w, tick);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_tick_time);

long htw_timers_allocated(void)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu(htw_timers_live, cpu);
	return n;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_timers_allocated);

/*
 * Make every free id of @w look used @gen - 1 times already, so that a
 * suite can reach the end of the generations in a few calls.
 */
void htw_ids_age(struct htw_wheel *w, u64 gen)
{
	struct htw_ids *ids = &w->ids;
	atomic64_t *slot;
	u32 id;

	spin_lock(&ids->lock);
	for (id = ids->head; id != HTW_ID_NONE; id = htw_id_entry_next(atomic64_read(slot))) {
		slot = htw_id_entry(ids, id);
		atomic64_set(slot, htw_id_free_entry(gen, htw_id_entry_next(atomic64_read(slot))));
	}
	spin_unlock(&ids->lock);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_ids_age);

void (*htw_identity_hook)(struct htw_timer *t, unsigned int step);
EXPORT_SYMBOL_IF_HTW_TESTS(htw_identity_hook);
#endif

/* What htw_buckets_init() and htw_ids_init() allocate for @geo. */
size_t htw_wheel_footprint(const struct htw_geometry *geo)
{
	struct htw_geometry g = *geo;
	size_t nbuckets, nchunks;

	if (htw_geometry_normalise(&g))
		return 0;
	nbuckets = (size_t)g.levels * g.slots;
	nchunks = htw_ids_nchunks(g.max_pending);
	return nbuckets * sizeof(struct htw_bucket) +
	       BITS_TO_LONGS(nbuckets) * sizeof(unsigned long) +
	       nchunks * sizeof(atomic64_t *);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_wheel_footprint);
