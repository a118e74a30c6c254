/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared timer table of /dev/htwheel (HTW_FEATURE_TABLE), its user
 * side written out here as the uapi header prescribes it rather than
 * taken from libhtwheel: the bench then times exactly the exchanges,
 * stores and fences of the protocol, and what a library adds is not in
 * the figures.  One thread per table: both rings have a single producer
 * and a single consumer.
 */
#ifndef HTW_UBENCH_TABLE_H
#define HTW_UBENCH_TABLE_H

#include "ubench.h"

struct ub_table {
	int fd;
	struct htw_table_setup ts;
	void *mem;
	struct htw_table_header *hdr;
	struct htw_table_slot *slot;
	uint32_t *sq;
	const struct htw_table_cqe *cq;
	uint32_t sq_mask, cq_mask;
	uint32_t sq_tail;	/* ours; the header's copy is published */
	uint32_t sq_room;	/* sq_tail may reach this before the ring is full */
	uint32_t cq_head;	/* ours; the header's copy is published */
	unsigned long enters;	/* HTW_IOC_TABLE_ENTER calls made */
};

/* 0, or -errno of HTW_IOC_TABLE_SETUP (say EDQUOT) with @fd closed. */
int table_setup(struct ub_table *t, int fd, uint32_t entries);
int table_open(struct ub_table *t, uint32_t entries, int flags);
void table_close(struct ub_table *t);
void table_enter(struct ub_table *t);
void table_disarm_all(struct ub_table *t);
void table_fail(const char *what) __attribute__((noreturn));

/*
 * The head the kernel published is read only when our tail has caught up
 * with what it allowed: one shared line read per ring, not per push.
 */
static inline void table_make_room(struct ub_table *t)
{
	while (t->sq_tail == t->sq_room) {
		/* It read the entries before it moved its head: pairs with its release. */
		t->sq_room = __atomic_load_n(&t->hdr->sq_head, __ATOMIC_ACQUIRE) +
			     t->sq_mask + 1;
		if (t->sq_tail == t->sq_room)
			table_enter(t);
	}
}

static inline void table_push(struct ub_table *t, uint32_t slot)
{
	table_make_room(t);
	t->sq[t->sq_tail & t->sq_mask] = slot;
	/* The entry before the tail: pairs with the kernel's acquire of sq_tail. */
	__atomic_store_n(&t->hdr->sq_tail, ++t->sq_tail, __ATOMIC_RELEASE);
}

/*
 * Arm slot @s for deadline @d, or move it there.  Returns the old
 * deadline: 0 when the slot was disarmed (never armed, cancelled, or
 * fired with its record in the completion ring or read).
 */
static inline uint64_t table_arm(struct ub_table *t, uint32_t s, uint64_t d)
{
	uint64_t old = __atomic_exchange_n(&t->slot[s].deadline_ns, d, __ATOMIC_SEQ_CST);

	/* Later: the kernel reads the slot again when the old deadline is due. */
	if (old && d >= old)
		return old;
	table_push(t, s);
	/*
	 * Our tail before its time: the kernel writes next_wakeup_ns, then
	 * a full barrier, then reads the tail; either it sees the
	 * submission at that run, or we see the run's time here.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (d < __atomic_load_n(&t->hdr->next_wakeup_ns, __ATOMIC_RELAXED))
		table_enter(t);
	return old;
}

/* Nonzero: cancelled, no record will come; 0: it had fired, or was not armed. */
static inline uint64_t table_cancel(struct ub_table *t, uint32_t s)
{
	return __atomic_exchange_n(&t->slot[s].deadline_ns, 0, __ATOMIC_SEQ_CST);
}

/* The records before it are written: pairs with the kernel's release. */
static inline uint32_t table_cq_tail(const struct ub_table *t)
{
	return __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE);
}

static inline const struct htw_table_cqe *table_cqe(const struct ub_table *t,
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

/* The slot's deadline now: 0 once it fired or was cancelled. */
static inline uint64_t table_deadline(const struct ub_table *t, uint32_t s)
{
	return __atomic_load_n(&t->slot[s].deadline_ns, __ATOMIC_RELAXED);
}

#endif
