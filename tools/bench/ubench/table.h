/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timer table of /dev/htwheel, version 2 (HTW_IOC_TABLE2_CREATE), its
 * user side written out here as the uapi header prescribes it rather than
 * taken from libhtwheel: the bench then times exactly the exchanges,
 * stores and fences of the protocol, and what a library adds is not in
 * the figures.  One thread per table: both rings have a single producer
 * and a single consumer.
 */
#ifndef HTW_UBENCH_TABLE_H
#define HTW_UBENCH_TABLE_H

#include "ubench.h"

struct ub_table {
	int dev;		/* the device file the table was made on */
	int fd;			/* the table's own descriptor */
	struct htw_table2_setup ts;
	void *mem;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slot;
	uint32_t *sq;
	const struct htw_table2_cqe *cq;
	uint32_t sq_mask, cq_mask;
	uint32_t sq_tail;	/* ours; the header's copy is published */
	uint32_t cq_head;	/* ours; the header's copy is published */
	unsigned long enters;	/* HTW_IOC_TABLE2_ENTER calls made */
};

/* 0, or -errno of HTW_IOC_TABLE2_CREATE (say EDQUOT) with @fd closed. */
int table_setup(struct ub_table *t, int fd, uint32_t entries);
int table_open(struct ub_table *t, uint32_t entries, int flags);
void table_close(struct ub_table *t);
void table_enter(struct ub_table *t);
void table_disarm_all(struct ub_table *t);
void table_fail(const char *what) __attribute__((noreturn));

/*
 * A slot is in the ring at most once until the kernel takes it in
 * (@queued), and the ring has an entry for every slot: it is never full.
 */
static inline void table_push(struct ub_table *t, uint32_t slot)
{
	__atomic_store_n(&t->slot[slot].queued, 1, __ATOMIC_RELAXED);
	t->sq[t->sq_tail & t->sq_mask] = slot;
	/* The entry before the tail: pairs with the kernel's acquire of sq_tail. */
	__atomic_store_n(&t->hdr->sq_tail, ++t->sq_tail, __ATOMIC_RELEASE);
}

static inline int table_queued(const struct ub_table *t, uint32_t s)
{
	return __atomic_load_n(&t->slot[s].queued, __ATOMIC_RELAXED);
}

/*
 * Arm slot @s for deadline @d, or move it there, by the uapi header's
 * steps: a new generation, one exchange.  Returns 1 if the slot was armed
 * (that arming is replaced), 0 if not (never armed, cancelled, or fired).
 */
static inline int table_arm(struct ub_table *t, uint32_t s, uint64_t d)
{
	struct htw_table2_slot *sl = &t->slot[s];
	uint64_t seq = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED);
	uint64_t g = (seq >> 1) + 1, old;
	int need = !(seq & HTW_TABLE2_ARMED) ||
		   d < __atomic_load_n(&sl->deadline_ns[(g - 1) & 1], __ATOMIC_RELAXED);

	__atomic_store_n(&sl->deadline_ns[g & 1], d, __ATOMIC_RELAXED);
	if (need && !table_queued(t, s))
		table_push(t, s);
	old = __atomic_exchange_n(&sl->seq, g << 1 | HTW_TABLE2_ARMED, __ATOMIC_SEQ_CST);
	if (!(old & HTW_TABLE2_ARMED))
		need = 1;
	/* Later: the kernel reads the slot again when the old deadline is due. */
	if (!need)
		return 1;
	if (!table_queued(t, s)) {
		table_push(t, s);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	/*
	 * Our tail before its time (the exchange, or the fence, between):
	 * the kernel writes next_wakeup_ns, a full barrier, then reads the
	 * tail; either it sees the submission at that run, or we see the
	 * run's time here.
	 */
	if (d < __atomic_load_n(&t->hdr->next_wakeup_ns, __ATOMIC_RELAXED))
		table_enter(t);
	return !!(old & HTW_TABLE2_ARMED);
}

/* 1: cancelled, no record will come; 0: it had fired, or was not armed. */
static inline int table_cancel(struct ub_table *t, uint32_t s)
{
	uint64_t g = (__atomic_load_n(&t->slot[s].seq, __ATOMIC_RELAXED) >> 1) + 1;

	return !!(__atomic_exchange_n(&t->slot[s].seq, g << 1, __ATOMIC_SEQ_CST) &
		  HTW_TABLE2_ARMED);
}

/* The quiet cancel: one store, no barrier; the outcome is not learnt. */
static inline void table_cancel_quiet(struct ub_table *t, uint32_t s)
{
	uint64_t g = (__atomic_load_n(&t->slot[s].seq, __ATOMIC_RELAXED) >> 1) + 1;

	__atomic_store_n(&t->slot[s].seq, g << 1, __ATOMIC_RELEASE);
}

/* The records before it are written: pairs with the kernel's release. */
static inline uint32_t table_cq_tail(const struct ub_table *t)
{
	return __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE);
}

static inline const struct htw_table2_cqe *table_cqe(const struct ub_table *t,
						     uint32_t i)
{
	return &t->cq[i & t->cq_mask];
}

/* Records before @head read: the kernel may write them again (its acquire). */
static inline void table_cq_release(struct ub_table *t, uint32_t head)
{
	t->cq_head = head;
	__atomic_store_n(&t->hdr->cq_head, head, __ATOMIC_RELEASE);
}

/* The slot's deadline if it is armed now; 0 once it fired or was cancelled. */
static inline uint64_t table_deadline(const struct ub_table *t, uint32_t s)
{
	uint64_t seq = __atomic_load_n(&t->slot[s].seq, __ATOMIC_RELAXED);

	if (!(seq & HTW_TABLE2_ARMED))
		return 0;
	return __atomic_load_n(&t->slot[s].deadline_ns[(seq >> 1) & 1], __ATOMIC_RELAXED);
}

#endif
