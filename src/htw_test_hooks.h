/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: every test hook, for the KUnit suites (tests/kunit/) and, in a
 * build with HTW_BENCH=1, the benchmark module (tools/bench/kmod/).  The
 * shipped module has none of them: HTW_TEST_HOOKS is defined only in the
 * builds that make one of those, CONFIG_HTWHEEL_KUNIT_TEST (never the
 * kernel's CONFIG_KUNIT: see htw_compat.h) or HTW_BENCH_HOOKS, and
 * EXPORT_SYMBOL_IF_HTW_TESTS() (htw_compat.h) exports to them alone.
 *
 * Each layer of the core includes this header to define its own hooks, so
 * it includes no layer's header: the types it names stay opaque here.
 */
#ifndef _HTW_TEST_HOOKS_H
#define _HTW_TEST_HOOKS_H

#include <linux/compiler.h>
#include <linux/types.h>

#if IS_ENABLED(CONFIG_HTWHEEL_KUNIT_TEST) || defined(HTW_BENCH_HOOKS)
#define HTW_TEST_HOOKS 1
#endif

/*
 * The probes inside the fast paths (the count of live timers, the
 * identity hook) are the suites' alone: the benchmark's build must run
 * the schedule and cancel the shipped module runs.
 */
#if IS_ENABLED(CONFIG_HTWHEEL_KUNIT_TEST)
#define HTW_KUNIT_PROBES 1
#endif

struct htw_geometry;
struct htw_handles;
struct htw_quota;
struct htw_timer;
struct htw_wheel;

/* Where a timer is, as htw_wheel_inspect() reports it. */
struct htw_placement {
	u32 state;		/* enum htw_state (htw_internal.h) */
	u32 level;
	u32 index;		/* bucket within the level */
	u64 expires;		/* tick index */
};

#ifdef HTW_TEST_HOOKS
/* htw_tick.c: a wheel whose clock is set by hand and which never arms. */
struct htw_wheel *htw_wheel_create_manual(const struct htw_geometry *geo,
					  void (*ready)(struct htw_wheel *wheel,
							void *owner),
					  void *owner, u64 start_ns);
/* htw_tick.c: the same for a table of @entries slots (htw_wheel_create_table()). */
struct htw_wheel *htw_wheel_create_table_manual(const struct htw_geometry *geo,
						void (*ready)(struct htw_wheel *wheel,
							      void *owner),
						void *owner, u32 entries,
						u64 start_ns);
/* htw_table.c: the table's shared memory, as user space would map it. */
void *htw_table_memory(struct htw_wheel *w);
/* htw_tick.c: run the whole tick now as if the hrtimer fired; may sleep. */
void htw_wheel_run_tick(struct htw_wheel *w);
/* htw_tick.c: one batch of that run; true when the run is complete. */
bool htw_wheel_run_batch(struct htw_wheel *w);
/* htw_tick.c: the tick the hrtimer is (or would be) armed for. */
u64 htw_wheel_armed_tick(struct htw_wheel *w);
/*
 * htw_tick.c: hold a real-clock wheel's expiry processing (as a drain
 * does) and release it, which arms the hrtimer for the earliest due tick:
 * a backlog built while held then expires through the real hrtimer
 * softirq and work item at once.  Only on a wheel with no tick run open.
 */
void htw_wheel_hold(struct htw_wheel *w);
void htw_wheel_release(struct htw_wheel *w);

/* htw_wheel.c */
void htw_wheel_set_now(struct htw_wheel *w, u64 now_ns);
int htw_wheel_inspect(struct htw_wheel *w, u64 handle,
		      struct htw_placement *p);
u64 htw_wheel_tick_time(const struct htw_wheel *w, u64 tick);
/* htw_wheel.c: bytes of the timer chunks allocated so far. */
size_t htw_wheel_timer_bytes(struct htw_wheel *w);
/* htw_handles_age() on the wheel's handle table. */
void htw_ids_age(struct htw_wheel *w, u64 gen);
/*
 * htw_handles.c: make every free id look used @gen - 1 times already, so
 * that a suite reaches the end of the generations in a few calls.
 */
void htw_handles_age(struct htw_handles *h, u64 gen);

/* htw_limits.c; @res is an enum htw_limit, left opaque here. */
unsigned long htw_limits_used(const struct htw_quota *q, unsigned int res);
unsigned long htw_limits_entries(void);
#endif

#ifdef HTW_KUNIT_PROBES
/* htw_wheel.c: timers allocated by every wheel, for leak checks. */
long htw_timers_allocated(void);
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
/*
 * Called by the table between its read of a due slot's deadline and its
 * claim of it, so a suite can play user space's racing store there.
 */
struct htw_table_slot;
extern void (*htw_table_claim_hook)(struct htw_table_slot *slot);
#define htw_table_claim_probe(slot)				\
	do {							\
		if (unlikely(READ_ONCE(htw_table_claim_hook)))	\
			htw_table_claim_hook(slot);		\
	} while (0)
#else
struct htw_table_slot;
static inline void htw_identity_probe(struct htw_timer *t, unsigned int step) { }
static inline void htw_table_claim_probe(struct htw_table_slot *slot) { }
#endif

#endif /* _HTW_TEST_HOOKS_H */
