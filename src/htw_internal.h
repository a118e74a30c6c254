/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: private structures shared by htw_wheel.c and htw_tick.c, and
 * the inspection hooks the KUnit suites use.  Not for the device.
 */
#ifndef _HTW_INTERNAL_H
#define _HTW_INTERNAL_H

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include "htw_wheel.h"

/*
 * Where a timer is, packed in one u32 so that cancel can read it without a
 * lock: the state in the top bits, the bucket number below.  It only
 * changes under the lock that owns the place it leaves or enters.
 */
#define HTW_WHERE_STATE_SHIFT	28
#define HTW_WHERE_BUCKET_MASK	((1U << HTW_WHERE_STATE_SHIFT) - 1)
enum htw_state {
	HTW_FREE = 0,		/* not (or no longer) a timer of any wheel */
	HTW_PENDING = 1,	/* linked in bucket (where & BUCKET_MASK) */
	HTW_TRANSIT = 2,	/* owned by whoever holds wheel->tick_lock */
	HTW_READY = 3,		/* linked in the ready queue */
};

static inline u32 htw_where(enum htw_state state, u32 bucket)
{
	return (u32)state << HTW_WHERE_STATE_SHIFT | bucket;
}

static inline enum htw_state htw_where_state(u32 where)
{
	return where >> HTW_WHERE_STATE_SHIFT;
}

#define HTW_TF_CANCELLED	0x1	/* periodic: no further periods */

#define HTW_HANDLE_KEY_TOP	0x80000000U	/* ids stay below it */

/*
 * One timer: 64 bytes on 64-bit.  It is its own ready record, so the tick
 * never allocates.  A periodic timer leaves the buckets when it fires and
 * is put back by htw_wheel_consume_ready() (timerfd's model), so @node is
 * either a bucket link or a ready-queue link, never both, and @expires and
 * @fired_ns never need to coexist.
 */
struct htw_timer {
	struct hlist_node node;
	u64 cookie;
	u64 deadline_ns;	/* next deadline; the one reported when ready */
	u64 period_ns;		/* 0: one-shot */
	union {
		u64 expires;	/* pending: tick index it fires at */
		u64 fired_ns;	/* ready: clock time of the tick run */
	};
	u32 id;			/* index in the handle table */
	u32 gen;		/* generation of that index, in the handle */
	u32 where;		/* htw_where() */
	u8 slack_shift;		/* fire at a multiple of 2^slack_shift ticks */
	u8 flags;		/* HTW_TF_*, under ready_lock */
	u16 reserved;
};

struct htw_bucket {
	spinlock_t lock;	/* guards @timers and this bucket's bit */
	struct hlist_head timers;
};

/*
 * Handle table: handle = gen << 32 | id.  @dir holds chunks of
 * HTW_IDS_PER_CHUNK entries, allocated on demand and never freed before
 * the wheel, so an entry can always be read.  An entry holds either a
 * timer pointer (bit 0 clear) or, when free, bit 0 set, the next free id
 * in bits 1..31 and the generation its next user gets in bits 32..63.
 * Free ids form a lock-free stack; @head packs a tag (ABA) above the top id.
 */
#define HTW_IDS_PER_CHUNK	(PAGE_SIZE / sizeof(atomic64_t))
#define HTW_ID_NONE		0x7fffffffU

struct htw_ids {
	atomic64_t **dir;
	u32 nchunks;		/* capacity of @dir */
	u32 used_chunks;	/* under @grow_lock */
	atomic64_t head;
	struct mutex grow_lock;	/* serialises chunk allocation */
};

/*
 * LOCKING.  Order: tick_lock -> ready_lock -> bucket lock; arm_lock is a
 * leaf (the hrtimer base lock nests inside it).  Process context takes
 * them with _bh because the tick runs in softirq.
 *
 * - tick_lock serialises expiry processing (hrtimer callback and
 *   htw_wheel_run_tick()), consume, drain and the rare slow path of
 *   schedule.  Whoever holds it owns every HTW_TRANSIT timer; cancel that
 *   meets one takes and drops tick_lock (that run is then over) and looks
 *   again.
 * - Each bucket lock guards its list and the occupancy bit of its bucket.
 *   schedule and cancel take only the one bucket they touch; the tick
 *   empties a bucket into a private list and re-links timers one bucket
 *   lock at a time, never two.
 * - ready_lock guards the ready queue, HTW_READY and ->flags.
 *
 * THE SCHEDULE/TICK RACE.  schedule places a timer relative to @horizon,
 * the last tick the tick has announced it processes to, without tick_lock.
 * A tick run first publishes its new horizon, then smp_mb(), then scans the
 * occupancy bits.  schedule sets the bit under the bucket lock, smp_mb(),
 * then re-reads @horizon: either the run sees the bit, or schedule sees the
 * new horizon and redoes the placement under tick_lock (when no run is in
 * progress and clk == horizon).  The same pairing covers arming: the end of
 * a run sets @armed_tick to U64_MAX, smp_mb(), scans the bits and arms for
 * the earliest; schedule, after its smp_mb(), arms itself if its bucket
 * comes before @armed_tick.  So either side sees the other's write and no
 * non-empty bucket is ever left without a wakeup.
 */
struct htw_wheel {
	struct htw_geometry geo;
	u32 slot_bits;
	u64 slot_mask;
	u64 base_ns;		/* tick 0 of the absolute grid */
	htw_ready_fn ready;
	void *owner;
	bool manual;		/* tests: clock is @manual_now, no hrtimer */
	u64 manual_now;

	spinlock_t tick_lock;	/* see LOCKING above */
	u64 clk;		/* last tick processed, under tick_lock */
	u64 horizon;		/* published: runs process up to here */

	spinlock_t arm_lock;	/* @armed_tick and hrtimer starts */
	u64 armed_tick;		/* hrtimer armed for this tick, U64_MAX none */
	struct hrtimer hrtimer;

	spinlock_t ready_lock;	/* the ready queue, HTW_READY, ->flags */
	struct hlist_head ready_head;
	struct htw_timer *ready_tail;

	struct htw_bucket *buckets;	/* levels * slots */
	unsigned long *occupied;	/* one bit per bucket */
	struct htw_ids ids;
	u32 handle_key;		/* scrambles the id half of handles */
	u32 gen_key;		/* scrambles the generation half */
	u64 max_tick;		/* last tick an unrounded deadline can give */

	atomic64_t live;	/* allocated timers, for max_pending */
	atomic64_t pending;
	atomic64_t nready;
	atomic64_t scheduled;
	atomic64_t cancelled;
	atomic64_t fired;
	/* under tick_lock */
	u64 cascaded;
	u64 tick_wakeups;
	u64 max_late_ns;
	u64 late_hist[32];
};

/* htw_wheel.c: shared with the tick */
u64 htw_tick_of(const struct htw_wheel *w, u64 ns);
u64 htw_tick_time(const struct htw_wheel *w, u64 tick);
u32 htw_place(const struct htw_wheel *w, u64 expires, u64 clk, u64 *point);
void htw_link_locked(struct htw_wheel *w, u32 bucket, struct htw_timer *t);
void htw_enqueue_ready(struct htw_wheel *w, struct htw_timer *t);

/* htw_tick.c */
void htw_tick_init(struct htw_wheel *w);
void htw_tick_stop(struct htw_wheel *w);
u64 htw_next_event(const struct htw_wheel *w, u64 clk);
void htw_arm_at_most(struct htw_wheel *w, u64 point);
void htw_rearm(struct htw_wheel *w);
void htw_run(struct htw_wheel *w, u64 now_ns, bool from_hrtimer);

/* Test hooks, exported in the HTWHEEL namespace for htwheel_kunit.ko. */
struct htw_placement {
	enum htw_state state;
	u32 level;
	u32 index;		/* bucket within the level */
	u64 expires;		/* tick index */
};

struct htw_wheel *htw_wheel_create_manual(const struct htw_geometry *geo,
					  htw_ready_fn ready, void *owner,
					  u64 start_ns);
void htw_wheel_set_now(struct htw_wheel *w, u64 now_ns);
int htw_wheel_inspect(struct htw_wheel *w, u64 handle,
		      struct htw_placement *p);
u64 htw_wheel_armed_tick(struct htw_wheel *w);
u64 htw_wheel_tick_time(const struct htw_wheel *w, u64 tick);
long htw_timers_allocated(void);

#endif /* _HTW_INTERNAL_H */
