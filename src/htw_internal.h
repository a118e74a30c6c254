/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: the layout of a wheel and of its timers, and the wheel
 * operations the tick builds on.  Shared by htw_wheel.c, htw_tick.c and
 * (with htw_tick.h) the KUnit suites and the benchmark; not for the device.
 *
 * The core's files form layers that only call down:
 *
 *	htw_grid.c <- htw_handles.c <- htw_wheel.c <- htw_table.c <- htw_tick.c
 *	<- htw_dev.c
 *
 * struct htw_wheel holds the state of both the wheel and its tick (one
 * object, one allocation); the fields the tick alone uses are marked so.
 */
#ifndef _HTW_INTERNAL_H
#define _HTW_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "htw_grid.h"
#include "htw_handles.h"
#include "htw_wheel.h"

struct htw_table;

/*
 * Where a timer is, packed in one u32 so that cancel can read it without a
 * lock: the state in the top bits, the bucket number in the low ones, and
 * between them the timer's slack shift, which stays the same from
 * schedule to free (htw_timer_set_where() keeps it).  It only changes
 * under the lock that owns the place it leaves or enters.
 */
#define HTW_WHERE_STATE_SHIFT	28
#define HTW_WHERE_BUCKET_BITS	22
#define HTW_WHERE_BUCKET_MASK	((1U << HTW_WHERE_BUCKET_BITS) - 1)
#define HTW_WHERE_SLACK_MASK	(0x1fU << HTW_WHERE_BUCKET_BITS)
/*
 * HTW_READY only, set under ready_lock: a periodic timer cancelled (or
 * drained) while its record is queued; it does not come back.
 */
#define HTW_WHERE_FINAL		BIT(27)
/* Slack coalesces on at most 2^31 ticks: what five bits hold. */
#define HTW_SLACK_SHIFT_MAX	(HTW_WHERE_SLACK_MASK >> HTW_WHERE_BUCKET_BITS)
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

static inline u8 htw_where_slack_shift(u32 where)
{
	return (where & HTW_WHERE_SLACK_MASK) >> HTW_WHERE_BUCKET_BITS;
}

/*
 * A timer's ->prev: the id of the timer before it in its bucket or in the
 * ready queue, or HTW_PREV_FIRST when it is first (its list's head is then
 * the one ->where names).
 */
#define HTW_PREV_FIRST		HTW_ID_NONE

/*
 * One timer: 56 bytes on 64-bit, so that 585 of them fill an order-3
 * chunk.  It is its own ready record, so the tick never allocates.  A
 * periodic timer leaves the buckets when it fires and is put back by
 * htw_wheel_consume_ready() (timerfd's model), so @next and @prev link it
 * either in a bucket or in the ready queue, never both, and @expires and
 * @fired_ns never need to coexist.
 *
 * The link back is an id of the wheel's table (HTW_PREV_FIRST), four bytes
 * where a pointer takes eight: taking a timer out of the middle of a list
 * looks its predecessor up in the table's directory.  Lists the tick, a
 * drain or consume hold privately are linked through @next alone.
 *
 * @handle is the timer's identity in one word, unique within its wheel for
 * the wheel's lifetime and, through the wheel's random key, across wheels
 * but for a 2^-63 chance.  It is written before @where at allocation and
 * never changes until the object is freed; see htw_timer_is().
 *
 * Who may write what: whoever owns the place @where names (the holder of
 * that bucket's lock, of ready_lock, or of tick_lock for HTW_TRANSIT).
 */
struct htw_timer {
	/*
	 * What cancel and the links touch first, together: most timers of a
	 * chunk have these 24 bytes in one cache line.
	 */
	u64 handle;		/* as user space sees it */
	struct htw_timer *next;
	u32 prev;		/* HTW_PREV_FIRST or an id: the link back */
	u32 where;		/* htw_where() */
	u64 cookie;
	u64 deadline_ns;	/* next deadline; the one reported when ready */
	union {
		u64 period_ns;	/* 0: one-shot */
		u64 table_run;	/* a table's slot: the run that last moved it */
	};
	union {
		u64 expires;	/* pending: tick index it fires at */
		u64 fired_ns;	/* ready: clock time of the tick run */
	};
};

/* Fire at a multiple of 2^shift ticks. */
static inline u8 htw_timer_slack_shift(const struct htw_timer *t)
{
	return htw_where_slack_shift(READ_ONCE(t->where));
}

/* Move @t, which the caller may move, to @state in @bucket. */
static inline void htw_timer_set_where(struct htw_timer *t,
				       enum htw_state state, u32 bucket)
{
	WRITE_ONCE(t->where, htw_where(state, bucket) |
			     (t->where & HTW_WHERE_SLACK_MASK));
}

/*
 * What a wheel counts on every schedule, cancel and expiry.  Per CPU, so
 * that no cache line is shared by every CPU scheduling on the wheel; a
 * CPU's share may go negative (a timer scheduled on one CPU and cancelled
 * on another), the sum over CPUs never does.
 */
enum htw_counter {
	HTW_C_PENDING,
	HTW_C_SCHEDULED,
	HTW_C_CANCELLED,
	HTW_C_FIRED,
	HTW_C_NR
};

struct htw_wheel_counts {
	s64 v[HTW_C_NR];
};

struct htw_bucket {
	/*
	 * Guards @first (the list of its timers) and this bucket's bit in
	 * wheel->occupied.  The innermost of the wheel's locks: schedule and
	 * cancel take only the one bucket they touch; only a re-arm between
	 * buckets holds two, the lower bucket's first (htw_move_between()).
	 */
	spinlock_t lock;
	struct htw_timer *first;
};

/*
 * BOUNDED WORK.  No lock that keeps bottom halves off is held for more than
 * HTW_BATCH timers.  A tick run that has more to do stops after a batch and
 * hands the rest to its work item (process context, a scheduling point
 * between batches); drain and destroy free in batches with cond_resched().
 */
#define HTW_BATCH		1024

/*
 * A run of a table's wheel (from a wake-up of its tick, or a doorbell,
 * until it has processed up to the tick it began for) handles at most
 * HTW_TABLE_RUN_SLOTS slots: visits, submissions taken in, waiting slots
 * moved; what is left waits for the next tick.  Of those, it moves at
 * most HTW_TABLE_RUN_MOVES to the later deadline user space stored (the
 * lazy re-arm, which costs user space a store and the kernel a visit);
 * past that, the rest waits a backoff (htw_table_run_stopped()).  Within
 * one run a slot is moved at most once; moved again, it waits for the
 * next run.  So whatever user space stores, a run ends, and the kernel's
 * time on a table's moves has a ceiling.
 */
#define HTW_TABLE_RUN_SLOTS	(16 * HTW_BATCH)
#define HTW_TABLE_RUN_MOVES	HTW_BATCH

/*
 * A wheel.  LOCK ORDER: tick_lock -> ready_lock -> bucket lock; arm_lock
 * is a leaf (the hrtimer base lock nests inside it), and so is the handle
 * table's free-list lock (process context, never inside a wheel lock).
 * Process context takes the wheel's locks with _bh because the tick runs
 * in softirq.  An owner's lock (the device's htw_file.lock) may be held
 * outside all of them.  What each lock guards is said at the lock.
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
 * smp_mb() (in htw_wheel_add()), arms itself if its bucket comes before
 * @armed_tick.  So either side sees the other's write and no non-empty
 * bucket is ever left without a wakeup.  While a run is stopped between
 * batches, @armed_tick is at most @clk: schedules do not arm, the run's
 * own end does.
 *
 * Placement relative to @clk while tick @clk is still being processed
 * gives points after @clk, so nothing is ever added to a bucket that tick
 * still has to empty at its own period; a timer due at @clk placed then
 * fires one tick later, never earlier.
 */
struct htw_wheel {
	/* Fixed at creation. */
	struct htw_geometry geo;
	struct htw_grid grid;
	htw_ready_fn ready;
	void *owner;
	const struct htw_clock *clock;

	/*
	 * Serialises expiry processing (one batch of the hrtimer callback,
	 * of the run work or of a test's run), consume, drain's pause and
	 * resume and the rare slow path of schedule; outermost of the
	 * wheel's locks.  Whoever holds it owns every HTW_TRANSIT timer;
	 * cancel that meets one takes and drops it (that batch is then over)
	 * and looks again.  Guards @clk, @tick_open, @paused and the
	 * statistics below that are not atomic.
	 */
	spinlock_t tick_lock;
	u64 clk;		/* tick being or last processed */
	bool tick_open;		/* tick @clk not finished yet */
	bool run_open;		/* a run is under way, batch by batch */
	u64 run_end;		/* the tick it processes up to, fixed at its start */
	u64 run_seq;		/* runs begun */
	u32 run_slots;		/* a table's: slots it handled, to HTW_TABLE_RUN_SLOTS */
	u32 run_moves;		/* of them moved later, to HTW_TABLE_RUN_MOVES */
	/*
	 * Drains in progress: no expiry meanwhile.  WRITE_ONCE(): a re-arm
	 * reads it under bucket locks alone (htw_move_between()).
	 */
	unsigned int paused;
	/* Written under tick_lock, read without it: see THE RACE above. */
	u64 horizon;		/* published: runs process up to here */
	struct work_struct run_work;	/* tick: the rest of a run */

	/*
	 * Tick only: guards @armed_tick, @dying, and the starts of @hrtimer
	 * and of @run_work.  A leaf.
	 */
	spinlock_t arm_lock;
	/* Hrtimer armed for this tick, U64_MAX none; schedule reads it unlocked. */
	u64 armed_tick;
	bool dying;		/* destroy began: arm and queue nothing more */
	struct hrtimer hrtimer;

	/*
	 * Guards the ready queue and the HTW_READY state (HTW_WHERE_FINAL
	 * with it); taken inside tick_lock, outside bucket locks.
	 */
	spinlock_t ready_lock;
	struct htw_timer *ready_first;	/* WRITE_ONCE(): has_ready() peeks */
	struct htw_timer *ready_tail;

	/*
	 * A wheel whose timers are a shared table's slots (htw_table.h), or
	 * NULL; set once before the wheel runs.  Its timers are charged by
	 * the table's owner all at once, so none is counted one by one.
	 */
	struct htw_table *table;
	bool table_timers;

	struct htw_bucket *buckets;	/* levels * slots, each its own lock */
	unsigned long *occupied;	/* one bit per bucket, under its lock */
	struct htw_handles handles;	/* its own locks: htw_handles.h */

	/* Per CPU: htw_count() and htw_count_bh(); summed by the stats. */
	struct htw_wheel_counts __percpu *counts;
	atomic64_t nready;
	/* Under tick_lock. */
	u64 cascaded;
	u64 tick_wakeups;
	u64 max_late_ns;
	u64 late_hist[32];
};

/*
 * Count @n on this CPU.  htw_count_bh() inside a section with bottom
 * halves off (any wheel lock but the handle table's), where neither
 * migration nor another updater on this CPU can come between the read
 * and the write; htw_count() anywhere.
 */
static inline void htw_count_bh(struct htw_wheel *w, enum htw_counter c, s64 n)
{
	__this_cpu_add(w->counts->v[c], n);
}

static inline void htw_count(struct htw_wheel *w, enum htw_counter c, s64 n)
{
	this_cpu_add(w->counts->v[c], n);
}

/* htw_wheel.c: what the tick builds on. */
struct htw_wheel *htw_wheel_alloc(const struct htw_geometry *geo,
				  const struct htw_clock *clock,
				  htw_ready_fn ready, void *owner, gfp_t gfp);
/* htw_hrtimer_clock's time (htw_tick.h). */
u64 htw_hrtimer_now(const struct htw_wheel *w);
void htw_wheel_free(struct htw_wheel *w);
int htw_wheel_add(struct htw_wheel *w, const struct htw_timer_spec *spec,
		  u64 *handle, u64 *point);
enum htw_rearm_status htw_wheel_move(struct htw_wheel *w, u64 handle,
				     u64 deadline, unsigned int flags, u64 *point);
u64 htw_wheel_place(struct htw_wheel *w, struct htw_timer *t, u64 from);
void htw_wheel_take_out(struct htw_wheel *w, struct htw_timer *t);
unsigned int htw_take_some(struct htw_wheel *w, u32 bucket,
			   struct htw_timer **list, unsigned int max,
			   enum htw_state state);
void htw_enqueue_ready(struct htw_wheel *w, struct htw_timer *first,
		       struct htw_timer *last, unsigned int n);
u64 htw_consume_locked(struct htw_wheel *w, const struct htw_wheel_expiry *recs,
		       size_t n, struct htw_timer **done);
void htw_free_list(struct htw_wheel *w, struct htw_timer *list);

#ifdef HTW_TEST_BUILD
void htw_identity_race(struct htw_timer *t, unsigned int step);
#endif
size_t htw_drain_paused(struct htw_wheel *w, u64 now,
			struct htw_wheel_unexpired *out, size_t max);

#endif /* _HTW_INTERNAL_H */
