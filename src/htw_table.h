/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel table: a wheel whose timers are the slots of a table shared
 * with user space (HTW_FEATURE_TABLE in the uapi header).  User space
 * writes deadlines into the slots and slot numbers into a submission
 * ring; the tick takes the ring in at each run and, when a slot's
 * position comes due, reads the slot again: it fires it into a
 * completion ring, moves it to a later deadline, or drops it.
 *
 * Every shared field is read once and checked; the wheel's links, the
 * slots' places and the rings' kernel-side indices live only in kernel
 * memory, so what user space writes can only change when and whether its
 * own slots fire.  The calls marked "tick" run under the wheel's
 * tick_lock, inside the batch budget of struct htw_wheel's BOUNDED WORK.
 */
#ifndef _HTW_TABLE_H
#define _HTW_TABLE_H

#include <linux/types.h>
#include <linux/htwheel.h>

struct htw_quota;
struct htw_timer;
struct htw_wheel;
struct vm_area_struct;

/*
 * Give @w, a new wheel nobody else uses yet, a table of @entries slots
 * (struct htw_table2_* in the uapi header) whose deadlines are in a time
 * namespace @offset from the host's clock.  Charges nothing: the caller
 * charged what htw_table_bytes() says and the @entries timers.  0,
 * -EINVAL (@entries 0 or beyond the wheel's max_pending) or -ENOMEM.
 * Process context, may sleep.
 */
int htw_table_init(struct htw_wheel *w, u32 entries, s64 offset);
/* With the tick stopped; the wheel's own memory is freed after this. */
void htw_table_free(struct htw_wheel *w);
/* Kernel and shared memory of a table of @entries slots, but the wheel. */
size_t htw_table_bytes(u32 entries);
/* The layout a table of @entries slots will have, before it exists. */
void htw_table_layout_for(u32 entries, struct htw_table2_setup *out);
int htw_table_mmap(struct htw_wheel *w, struct vm_area_struct *vma);
bool htw_table_has_completions(struct htw_wheel *w);
/* Submissions taken in since the table was made. */
u64 htw_table_taken(struct htw_wheel *w);
/* Entries of the submission ring consumed: taken in, or skipped over. */
u64 htw_table_consumed(struct htw_wheel *w);
/* What a table cost: each count exact, not one snapshot. */
struct htw_table_work {
	u64 taken;		/* submissions taken in */
	u64 consumed;		/* ring entries consumed: taken, or skipped */
	u64 fired;		/* records written */
	u64 replaced;		/* slots a visit moved to a later deadline */
	u64 budget_stops;	/* runs that ended at HTW_TABLE_RUN_SLOTS */
	u64 room_waits;		/* slots that waited for room in the ring */
};

void htw_table_work(struct htw_wheel *w, struct htw_table_work *out);
/* HTW_IOC_TABLE2_STATS's answer (flags 0). */
void htw_table_get_stats(struct htw_wheel *w, struct htw_table_stats *ts);
/*
 * Whether a doorbell that began when htw_table_consumed() was
 * @consumed_before should take in more: submissions wait, and it consumed
 * less than a ring's worth.
 */
bool htw_table_more_to_take(struct htw_wheel *w, u64 consumed_before);

/*
 * Tick: take in up to @budget submissions, placing each slot for the
 * deadline it holds now; returns how many entries of the ring were used.
 */
unsigned int htw_table_take_submissions(struct htw_wheel *w,
					unsigned int budget);
/*
 * Tick: @t, a slot's timer the run took from a bucket due at @tick, now
 * that its position is due: fire it (true), or place it again or drop it.
 */
bool htw_table_visit(struct htw_wheel *w, struct htw_timer *t, u64 tick,
		     u64 now_ns);
/*
 * Tick: move up to @budget of the slots that wait for room in the
 * completion ring, as far as there is room now, as visits at the wheel's
 * current tick (*@fired counts the ones that fired); returns how many.
 */
unsigned int htw_table_retry_waiting(struct htw_wheel *w, unsigned int budget,
				     u64 now_ns, unsigned int *fired);
/* Tick: make the records written by the visits visible. */
void htw_table_publish_completions(struct htw_wheel *w);
/*
 * Tick, at the end of a run: publish @tick (U64_MAX: none) as the next
 * time the ring is taken in, then look at the ring once more.  True if
 * submissions are waiting: the caller then runs again at the next tick.
 */
bool htw_table_publish_wakeup(struct htw_wheel *w, u64 tick);

/* The bounds of the wait for room in a full completion ring. */
#define HTW_TABLE_ROOM_WAIT_MIN_NS	(1 * NSEC_PER_MSEC)
#define HTW_TABLE_ROOM_WAIT_MAX_NS	(128 * NSEC_PER_MSEC)
/*
 * Tick: a run ended at its budget (@by_moves: HTW_TABLE_RUN_MOVES, else
 * HTW_TABLE_RUN_SLOTS) having begun for tick @target.  Returns the tick of
 * the next run: the next one, or after a run ended by its moves, a backoff
 * later, 1 ms doubling to 16 ms while run after run ends so.
 */
u64 htw_table_run_stopped(struct htw_wheel *w, u64 target, bool by_moves);
/* Tick: a run completed. */
void htw_table_run_done(struct htw_wheel *w);
#define HTW_TABLE_MOVE_WAIT_MIN_NS	(1 * NSEC_PER_MSEC)
#define HTW_TABLE_MOVE_WAIT_MAX_NS	(16 * NSEC_PER_MSEC)
/* Tick, at the end of a run: when slots waiting for room run next. */
u64 htw_table_room_tick(struct htw_wheel *w);
/* Unlocked: slots wait for room, and the consumer has made some since. */
bool htw_table_room_made(struct htw_wheel *w);

#ifdef HTW_TEST_BUILD
/* The table's shared memory, as user space would map it. */
void *htw_table_memory(struct htw_wheel *w);
void htw_table_claim_race(struct htw_table2_slot *slot);
#endif

#endif /* _HTW_TABLE_H */
