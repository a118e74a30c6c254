/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timer table of /dev/htwheel beside the peers of each workload,
 * driven through libhtwheel's public calls as a program would drive it
 * (htw_table2_create, htw_table2_arm, htw_table2_cancel[_quiet],
 * htw_table2_peek/htw_table2_advance, htw_table2_enter): the one client of
 * the table in the bench.  One thread per table: both rings have a single
 * producer and a single consumer.
 */
#ifndef HTW_UBENCH_TABLE_H
#define HTW_UBENCH_TABLE_H

#include "ubench.h"

#include <htwheel.h>

struct ub_table {
	struct htw *h;		/* the instance the table was made on */
	struct htw_table2 *t;	/* the table, its descriptor t->fd */
	size_t mmap_size;
};

/*
 * The doorbells rung, however they were rung (htw_table2_arm()'s own
 * included): htw_table2_enter() is wrapped at link time (-Wl,--wrap), so
 * they are counted without a clock read.
 */
extern unsigned long table_enters;

/* 0, or -errno of htw_open() or htw_table2_create() (say -EDQUOT). */
int table_open(struct ub_table *t, uint32_t entries);
void table_close(struct ub_table *t);
void table_enter(struct ub_table *t);
void table_disarm_all(struct ub_table *t);
void table_fail(const char *what) __attribute__((noreturn));

/* Arm or move slot @s to @d: 1 if an arming was replaced, else 0. */
static inline int table_arm(struct ub_table *t, uint32_t s, uint64_t d)
{
	int r = htw_table2_arm(t->t, s, d, NULL);

	if (r < 0)
		table_fail("htw_table2_arm");
	return r;
}

/* 1: cancelled, no record will come; 0: it had fired, or was not armed. */
static inline int table_cancel(struct ub_table *t, uint32_t s)
{
	return htw_table2_cancel(t->t, s);
}

/* The quiet cancel: one store, no barrier; the outcome is not learnt. */
static inline void table_cancel_quiet(struct ub_table *t, uint32_t s)
{
	htw_table2_cancel_quiet(t->t, s);
}

/* Whether slot @s is armed now: not once it fired or was cancelled. */
static inline int table_armed(const struct ub_table *t, uint32_t s)
{
	return !!(__atomic_load_n(&t->t->slots[s].seq, __ATOMIC_RELAXED) &
		  HTW_TABLE2_ARMED);
}

/* The records waiting, in place, up to the ring's end (htw_table2_peek()). */
static inline int table_peek(struct ub_table *t, struct htw_table2_cqe **first)
{
	return htw_table2_peek(t->t, first);
}

static inline void table_advance(struct ub_table *t, unsigned int n)
{
	if (htw_table2_advance(t->t, n))
		table_fail("htw_table2_advance");
}

#endif
