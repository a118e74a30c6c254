/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libhtwheel: the user-space library for /dev/htwheel.
 *
 * One opaque handle per timer instance (one open file of the device).
 * Every function returns 0, a count, or a negative errno; none prints,
 * exits, or allocates memory except htw_open() and htw_table2_create().
 * Durations and times are nanoseconds on the instance's clock.
 *
 * Timers, expiry records and statistics use the kernel ABI structures of
 * <linux/htwheel.h> as they are, so batches go to the kernel without a
 * copy.  The kernel validates them: flags, pad and reserved fields pass
 * through unchecked, so that a program built against this header works
 * with a kernel that defines more.  See htwheel(4) and the man pages of
 * each function.
 */
#ifndef _HTWHEEL_H
#define _HTWHEEL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/htwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBHTWHEEL_VERSION_MAJOR	1
#define LIBHTWHEEL_VERSION_MINOR	3

/* The device htw_open() uses when htw_params.device is NULL. */
#define HTW_DEVICE_PATH		"/dev/htwheel"

#define HTW_NSEC_PER_USEC	1000ULL
#define HTW_NSEC_PER_MSEC	1000000ULL
#define HTW_NSEC_PER_SEC	1000000000ULL

/* Duration helpers: saturate at UINT64_MAX instead of wrapping. */
static inline uint64_t htw_us(uint64_t us)
{
	return us > UINT64_MAX / HTW_NSEC_PER_USEC ? UINT64_MAX :
						    us * HTW_NSEC_PER_USEC;
}

static inline uint64_t htw_ms(uint64_t ms)
{
	return ms > UINT64_MAX / HTW_NSEC_PER_MSEC ? UINT64_MAX :
						    ms * HTW_NSEC_PER_MSEC;
}

static inline uint64_t htw_sec(uint64_t s)
{
	return s > UINT64_MAX / HTW_NSEC_PER_SEC ? UINT64_MAX :
						   s * HTW_NSEC_PER_SEC;
}

/**
 * struct htw_params - optional setup for htw_open()
 * @device:      device node, NULL for HTW_DEVICE_PATH
 * @tick_ns:     in: tick, 0 for the module default; out: in effect
 * @slots:       in: buckets per level, 0 for the default; out: in effect
 * @clockid:     in: CLOCK_MONOTONIC (or 0 for it) or CLOCK_BOOTTIME;
 *               out: in effect
 * @max_pending: in: pending timer limit, 0 for the default; out: in effect
 * @levels:      out: wheel levels
 * @flags:       in: 0; passed to HTW_IOC_SETUP, which refuses unknown flags
 * @reserved:    in: 0; passed to HTW_IOC_SETUP, which refuses non-zero
 */
struct htw_params {
	const char *device;
	uint64_t tick_ns;
	uint32_t slots;
	uint32_t clockid;
	uint64_t max_pending;
	uint32_t levels;
	uint32_t flags;
	uint64_t reserved[4];
};

struct htw;

int htw_open(struct htw **hp, struct htw_params *params);
int htw_close(struct htw *h);
int htw_fd(const struct htw *h);
uint64_t htw_now(const struct htw *h);

int htw_schedule(struct htw *h, uint64_t cookie, uint64_t delay_ns,
		 uint64_t period_ns, uint64_t *handle);
int htw_schedule_many(struct htw *h, struct htw_timer_entry *entries,
		      unsigned int count);
int htw_cancel(struct htw *h, uint64_t handle);
int htw_cancel_many(struct htw *h, struct htw_cancel_entry *entries,
		    unsigned int count);
/* Since libhtwheel 1.1 (LIBHTWHEEL_1.1). */
int htw_rearm(struct htw *h, uint64_t handle, uint64_t delay_ns);
int htw_rearm_many(struct htw *h, struct htw_rearm_entry *entries,
		   unsigned int count);

int htw_read(struct htw *h, struct htw_expiry *recs, unsigned int max);
int htw_wait(struct htw *h, int64_t timeout_ns);
int htw_drain(struct htw *h, struct htw_unexpired *out, unsigned int max);
int htw_stats(struct htw *h, struct htw_stats *st);
int htw_set_eventfd(struct htw *h, int efd);

int htw_parse_duration(const char *s, uint64_t *ns);

/*
 * The shared timer table (HTW_FEATURE_TABLE; its protocol's version 2),
 * since libhtwheel 1.3 (LIBHTWHEEL_1.3): an object with a descriptor of
 * its own, whose slots are armed, moved and cancelled by writing memory
 * shared with the kernel, each arming a generation that is either
 * cancelled or fired into exactly one record.  Records carry the slot and
 * the generation, 16 bytes, in a ring smaller than the table.  No system
 * call per timer but the doorbell, htw_table2_enter(), which an arm rings
 * only when the kernel would look too late by itself.  See
 * htw_table2_create(3).
 *
 * The rings have one producer and one consumer, and the library takes no
 * lock: the caller serialises the producer's calls (htw_table2_arm(),
 * htw_table2_cancel(), htw_table2_cancel_quiet(): each changes the
 * generation) among themselves, and the consumer's (htw_table2_peek(),
 * htw_table2_advance(), htw_table2_reap()) among themselves; the two
 * sides may run in different threads at once.  htw_table2_enter() may be
 * called from any thread at any time.
 */

/**
 * struct htw_table2 - a mapped timer table, from htw_table2_create()
 * @fd:       the table's own descriptor (poll() it for records)
 * @entries:  slots, numbered 0 .. @entries - 1
 * @sq_mask:  submission ring entries - 1
 * @cq_mask:  completion ring entries - 1
 * @hdr:      the header, at the start of the mapping
 * @slots:    the slots
 * @sq:       the submission ring
 * @cq:       the completion ring
 * @map:      the mapping
 * @map_size: its length
 *
 * The inline functions below read these members: their layout is part of
 * the library's ABI.  Read only; a later version may add members at the end.
 */
struct htw_table2 {
	int fd;
	uint32_t entries;
	uint32_t sq_mask;
	uint32_t cq_mask;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	uint32_t *sq;
	struct htw_table2_cqe *cq;
	void *map;
	size_t map_size;
};

int htw_table2_create(struct htw *h, uint32_t entries, uint32_t flags,
		      struct htw_table2 **tp);
int htw_table2_close(struct htw_table2 *t);
int htw_table2_enter(struct htw_table2 *t);
int htw_table2_stats(struct htw_table2 *t, struct htw_table_stats *st);

/* Submit @slot: it is not in the submission ring (its @queued is 0). */
static inline void __htw_table2_submit(struct htw_table2 *t, uint32_t slot)
{
	uint32_t tail = __atomic_load_n(&t->hdr->sq_tail, __ATOMIC_RELAXED);

	__atomic_store_n(&t->slots[slot].queued, 1, __ATOMIC_RELAXED);
	t->sq[tail & t->sq_mask] = slot;
	/* Release: the entry before the tail. */
	__atomic_store_n(&t->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

/*
 * Ring the doorbell if the kernel's next look at the submission ring
 * comes after @deadline_ns; called after a full barrier that follows the
 * submission.  Either the kernel's end of run, which publishes its time
 * and then reads our tail (a full barrier between), sees the submission,
 * or we see its time here.
 */
static inline int __htw_table2_doorbell(struct htw_table2 *t, uint64_t deadline_ns)
{
	int ret;

	if (deadline_ns >= __atomic_load_n(&t->hdr->next_wakeup_ns, __ATOMIC_RELAXED))
		return 0;
	do
		ret = htw_table2_enter(t);
	while (ret == -EINTR);
	return ret < 0 ? ret : 0;
}

/* The generation @slot is at now (armed or not): its @seq >> 1. */
static inline uint64_t htw_table2_gen(const struct htw_table2 *t, uint32_t slot)
{
	return __atomic_load_n(&t->slots[slot].seq, __ATOMIC_RELAXED) >> 1;
}

/*
 * Arm @slot at @deadline_ns (absolute, on the instance's clock), or move
 * it there if it is armed: a new generation, in *@gen if @gen is not
 * NULL.  1 if the slot was armed (that arming will never fire), 0 if it
 * was not (it fired, was cancelled or never armed), or -errno of the
 * doorbell (the slot is armed all the same).  One full barrier; a second
 * only when the kernel took the slot in during the call.
 */
static inline int htw_table2_arm(struct htw_table2 *t, uint32_t slot,
				 uint64_t deadline_ns, uint64_t *gen)
{
	struct htw_table2_slot *s;
	uint64_t seq, g, old;
	int need, ret;

	if (!t || slot >= t->entries)
		return -EINVAL;
	s = &t->slots[slot];
	/* Only this producer changes the generation: its own value. */
	seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	g = (seq >> 1) + 1;
	need = !(seq & HTW_TABLE2_ARMED) ||
	       deadline_ns < __atomic_load_n(&s->deadline_ns[(g - 1) & 1],
					     __ATOMIC_RELAXED);
	__atomic_store_n(&s->deadline_ns[g & 1], deadline_ns, __ATOMIC_RELAXED);
	if (need && !__atomic_load_n(&s->queued, __ATOMIC_RELAXED))
		__htw_table2_submit(t, slot);
	old = __atomic_exchange_n(&s->seq, g << 1 | HTW_TABLE2_ARMED,
				  __ATOMIC_SEQ_CST);
	if (gen)
		*gen = g;
	if (!(old & HTW_TABLE2_ARMED))
		need = 1;	/* the kernel fired it since we read it */
	if (!need)
		return 1;
	/* Taken in, maybe before our exchange: the kernel must look again. */
	if (!__atomic_load_n(&s->queued, __ATOMIC_RELAXED)) {
		__htw_table2_submit(t, slot);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	ret = __htw_table2_doorbell(t, deadline_ns);
	return ret < 0 ? ret : (old & HTW_TABLE2_ARMED) != 0;
}

/*
 * Disarm @slot: 1 if its arming was cancelled (no record of it will come),
 * 0 if it was not armed (it fired, its record in the completion ring or
 * consumed, or it never was), or -EINVAL.  One exchange, no submission.
 */
static inline int htw_table2_cancel(struct htw_table2 *t, uint32_t slot)
{
	uint64_t g;

	if (!t || slot >= t->entries)
		return -EINVAL;
	g = htw_table2_gen(t, slot) + 1;
	return (__atomic_exchange_n(&t->slots[slot].seq, g << 1, __ATOMIC_SEQ_CST) &
		HTW_TABLE2_ARMED) != 0;
}

/*
 * Disarm @slot without learning whether it had fired: one store, no
 * barrier.  A record of the generation it replaces comes only if the
 * kernel fired it first; its gen tells it from later armings.  0 or
 * -EINVAL.
 */
static inline int htw_table2_cancel_quiet(struct htw_table2 *t, uint32_t slot)
{
	uint64_t g;

	if (!t || slot >= t->entries)
		return -EINVAL;
	g = htw_table2_gen(t, slot) + 1;
	__atomic_store_n(&t->slots[slot].seq, g << 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The records waiting, in place: how many from *@first on, up to the end
 * of the ring (the rest come with the next call), or -EINVAL.
 * htw_table2_advance() gives them back.
 */
static inline int htw_table2_peek(struct htw_table2 *t, struct htw_table2_cqe **first)
{
	uint32_t head, ready, to_end;

	if (!t || !first)
		return -EINVAL;
	head = __atomic_load_n(&t->hdr->cq_head, __ATOMIC_RELAXED);
	ready = __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE) - head;
	to_end = t->cq_mask + 1 - (head & t->cq_mask);
	*first = &t->cq[head & t->cq_mask];
	return (int)(ready < to_end ? ready : to_end);
}

/* Give @n records, read through htw_table2_peek(), back to the kernel. */
static inline int htw_table2_advance(struct htw_table2 *t, unsigned int n)
{
	uint32_t head;

	if (!t)
		return -EINVAL;
	head = __atomic_load_n(&t->hdr->cq_head, __ATOMIC_RELAXED);
	if (n > __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE) - head)
		return -EINVAL;
	__atomic_store_n(&t->hdr->cq_head, head + n, __ATOMIC_RELEASE);
	return 0;
}

/* Copy out and consume up to @max records: how many, or -EINVAL. */
static inline int htw_table2_reap(struct htw_table2 *t, struct htw_table2_cqe *out,
				  unsigned int max)
{
	uint32_t head, ready, i;

	if (!t || !out || !max)
		return -EINVAL;
	head = __atomic_load_n(&t->hdr->cq_head, __ATOMIC_RELAXED);
	ready = __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE) - head;
	if (ready > max)
		ready = max;
	for (i = 0; i < ready; i++)
		out[i] = t->cq[(head + i) & t->cq_mask];
	if (ready)
		__atomic_store_n(&t->hdr->cq_head, head + ready, __ATOMIC_RELEASE);
	return (int)ready;
}

#ifdef __cplusplus
}
#endif

#endif /* _HTWHEEL_H */
