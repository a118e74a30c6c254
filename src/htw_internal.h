/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: private structures shared by htw_wheel.c and htw_tick.c, and
 * the inspection hooks the KUnit suites use.  Not for the device.
 */
#ifndef _HTW_INTERNAL_H
#define _HTW_INTERNAL_H

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
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

/*
 * Handles.  A handle is (gen << HTW_ID_BITS | id) ^ wheel->handle_key: the
 * id names an entry of the wheel's handle table, the generation counts the
 * uses of that id.  Ids are reused first-in first-out, so one id's
 * generation advances only once every time the whole free list went round,
 * and an id whose generation is used up is retired, never reused: a handle
 * value is never issued twice by one wheel.  The key has its top bit set
 * (raw handles never do), so no handle is 0.
 */
#define HTW_ID_BITS		26	/* ids < HTW_MAX_PENDING */
#define HTW_ID_MASK		(BIT_ULL(HTW_ID_BITS) - 1)
#define HTW_GEN_BITS		36	/* what a free table entry can hold */
#define HTW_GEN_MAX		(BIT_ULL(HTW_GEN_BITS) - 1)
#define HTW_HANDLE_KEY_TOP	BIT_ULL(63)

/*
 * One timer: 64 bytes on 64-bit.  It is its own ready record, so the tick
 * never allocates.  A periodic timer leaves the buckets when it fires and
 * is put back by htw_wheel_consume_ready() (timerfd's model), so @node is
 * either a bucket link or a ready-queue link, never both, and @expires and
 * @fired_ns never need to coexist.
 *
 * @handle is the timer's identity in one word, unique within its wheel for
 * the wheel's lifetime and, through the wheel's random key, across wheels
 * but for a 2^-63 chance.  It is written before @where at allocation and
 * never changes until the object is freed; see htw_timer_is().
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
	u64 handle;		/* as user space sees it */
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
 * Handle table.  @dir holds chunks of HTW_IDS_PER_CHUNK entries, allocated
 * on demand and never freed before the wheel, so an entry can always be
 * read without a lock.  An entry holds either a timer pointer (bit 0
 * clear) or, when free, bit 0 set, the next free id in bits 1..27 and the
 * generation its next user gets in bits 28..63.  Free ids form a FIFO
 * list from @head to @tail.
 */
#define HTW_IDS_PER_CHUNK	(PAGE_SIZE / sizeof(atomic64_t))
#define HTW_ID_NONE		((u32)BIT(HTW_ID_BITS + 1) - 1)

struct htw_ids {
	atomic64_t **dir;
	u32 nchunks;		/* capacity of @dir */
	u32 used_chunks;	/* under @grow_lock */
	spinlock_t lock;	/* the free list: @head, @tail, free entries */
	u32 head;		/* next id to hand out, HTW_ID_NONE if none */
	u32 tail;		/* last freed id, HTW_ID_NONE if none */
	struct mutex grow_lock;	/* serialises chunk allocation */
};

/*
 * BOUNDED WORK.  No lock that keeps bottom halves off is held for more than
 * HTW_BATCH timers.  A tick run that has more to do stops after a batch and
 * hands the rest to its work item (process context, a scheduling point
 * between batches); drain and destroy free in batches with cond_resched().
 */
#define HTW_BATCH		1024

/*
 * LOCKING.  Order: tick_lock -> ready_lock -> bucket lock; arm_lock is a
 * leaf (the hrtimer base lock nests inside it).  Process context takes
 * them with _bh because the tick runs in softirq.
 *
 * - tick_lock serialises expiry processing (one batch of the hrtimer
 *   callback, of the run work or of htw_wheel_run_tick()), consume and the
 *   rare slow path of schedule.  Whoever holds it owns every HTW_TRANSIT
 *   timer; cancel that meets one takes and drops tick_lock (that batch is
 *   then over) and looks again.
 * - Each bucket lock guards its list and the occupancy bit of its bucket.
 *   schedule and cancel take only the one bucket they touch; the tick
 *   takes up to a batch of a bucket's timers into a private list and
 *   re-links them one bucket lock at a time, never two.
 * - ready_lock guards the ready queue, HTW_READY and ->flags.
 * - A drain pauses expiry processing (@paused) instead of holding
 *   tick_lock throughout, and its caller serialises it with peek/consume.
 *
 * THE SCHEDULE/TICK RACE.  schedule places a timer relative to @horizon,
 * the last tick the tick has announced it processes to, without tick_lock.
 * A tick run first publishes its new horizon, then smp_mb(), then scans the
 * occupancy bits.  schedule sets the bit under the bucket lock, smp_mb(),
 * then re-reads @horizon: either the run sees the bit, or schedule sees the
 * new horizon and redoes the placement under tick_lock relative to @clk,
 * the tick the run (maybe stopped after a batch) resumes from.  The same
 * pairing covers arming: the end of a run sets @armed_tick to U64_MAX,
 * smp_mb(), scans the bits and arms for the earliest; schedule, after its
 * smp_mb(), arms itself if its bucket comes before @armed_tick.  So either
 * side sees the other's write and no non-empty bucket is ever left without
 * a wakeup.  While a run is stopped between batches, @armed_tick is at most
 * @clk: schedules do not arm, the run's own end does.
 *
 * Placement relative to @clk while tick @clk is still being processed
 * gives points after @clk, so nothing is ever added to a bucket that tick
 * still has to empty at its own period; a timer due at @clk placed then
 * fires one tick later, never earlier.
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
	u64 clk;		/* tick being or last processed, under tick_lock */
	bool tick_open;		/* tick @clk not finished yet, under tick_lock */
	unsigned int paused;	/* drains in progress, under tick_lock */
	u64 horizon;		/* published: runs process up to here */
	struct work_struct run_work;	/* the rest of a run, a batch at a time */

	spinlock_t arm_lock;	/* @armed_tick, @dying, hrtimer and work starts */
	u64 armed_tick;		/* hrtimer armed for this tick, U64_MAX none */
	bool dying;		/* htw_tick_stop(): arm and queue nothing more */
	struct hrtimer hrtimer;

	spinlock_t ready_lock;	/* the ready queue, HTW_READY, ->flags */
	struct hlist_head ready_head;
	struct htw_timer *ready_tail;

	struct htw_bucket *buckets;	/* levels * slots */
	unsigned long *occupied;	/* one bit per bucket */
	struct htw_ids ids;
	u64 handle_key;		/* scrambles handles; top bit set */
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
unsigned int htw_take_some(struct htw_wheel *w, u32 bucket,
			   struct hlist_head *list, unsigned int max,
			   enum htw_state state);

/* htw_tick.c */
void htw_tick_init(struct htw_wheel *w);
void htw_tick_stop(struct htw_wheel *w);
u64 htw_next_event(const struct htw_wheel *w, u64 clk);
void htw_arm_at_most(struct htw_wheel *w, u64 point);
void htw_rearm(struct htw_wheel *w);
void htw_run_all(struct htw_wheel *w);

/*
 * Test hooks: exported only to the KUnit suites (and, built with
 * HTW_BENCH=1, to the benchmark module), never by the shipped module.
 */
struct htw_placement {
	enum htw_state state;
	u32 level;
	u32 index;		/* bucket within the level */
	u64 expires;		/* tick index */
};

#if IS_ENABLED(CONFIG_KUNIT) || defined(HTW_BENCH_HOOKS)
struct htw_wheel *htw_wheel_create_manual(const struct htw_geometry *geo,
					  htw_ready_fn ready, void *owner,
					  u64 start_ns);
void htw_wheel_set_now(struct htw_wheel *w, u64 now_ns);
int htw_wheel_inspect(struct htw_wheel *w, u64 handle,
		      struct htw_placement *p);
u64 htw_wheel_armed_tick(struct htw_wheel *w);
u64 htw_wheel_tick_time(const struct htw_wheel *w, u64 tick);
long htw_timers_allocated(void);
void htw_ids_age(struct htw_wheel *w, u64 gen);
/* One batch of the run htw_wheel_run_tick() would do; true when complete. */
bool htw_wheel_run_batch(struct htw_wheel *w);
/*
 * Called by htw_timer_is() after each of its reads (@step 0: the first
 * read of ->handle, 1: ->where), so a suite can play a racing CPU's writes
 * in between, deterministically.
 */
extern void (*htw_identity_hook)(struct htw_timer *t, unsigned int step);
#define htw_identity_probe(t, step)				\
	do {							\
		if (unlikely(READ_ONCE(htw_identity_hook)))	\
			htw_identity_hook(t, step);		\
	} while (0)
#else
static inline void htw_identity_probe(struct htw_timer *t, unsigned int step) { }
#endif

#endif /* _HTW_INTERNAL_H */
