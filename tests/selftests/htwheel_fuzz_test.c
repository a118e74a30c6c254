// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel_fuzz: random but checked ioctl/read/poll/close sequences against
 * /dev/htwheel from several processes and threads.
 *
 *   HTW_FUZZ_SEED=n   seed (default: time); printed so a failure replays
 *   HTW_FUZZ_OPS=n    operations per thread (default 3000)
 *   HTW_FUZZ_THREADS=n, HTW_FUZZ_PROCS=n   (default 3 and 2)
 *
 * Each thread owns a file and keeps an exact model of it: every timer it
 * scheduled must end exactly once (read, cancelled or drained), never be
 * read before its deadline, and the file's counters must match the model.
 * The threads of a process also share one more file on which they race
 * schedule, cancel, read and drain: there every cookie is tallied in a
 * shared table and must end exactly once too.  Deliberately invalid calls
 * are mixed in and must fail with their documented errno, changing nothing.
 *
 * Each owned file also makes a timer table (version 2, HTW_FEATURE_TABLE)
 * whose slots the thread arms, moves later and earlier, and cancels by the
 * documented protocol while it consumes the completion ring and feeds the
 * submission ring garbage: every arming (a generation) must end exactly
 * once (a record of that generation, or an arm or cancel whose exchange
 * found it armed), no record may be read before its arming's deadline,
 * and the submission ring never fills.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "htwheel_util.h"

#define MS		1000000ULL
#define MAX_TIMERS	4096		/* model capacity per thread file */
#define SHARED_PER_THR	(1 << 16)	/* cookies per thread on the shared file */
#define BATCH		32

enum tstate { T_FREE, T_PENDING, T_CANCELLED, T_READ, T_DRAINED };

struct model_timer {
	uint64_t handle;
	uint64_t min_deadline;	/* clock before the call + delay */
	uint8_t state;
};

#define TABLE_SLOTS	32

/*
 * A slot of the owned file's table (version 2), as the thread knows it:
 * the generation it stored last, that arming's deadline (0 disarmed), and
 * the armings it learnt the kernel fired, whose records are still due.
 */
#define FIRED_MAX	16

struct model_slot {
	uint64_t gen, deadline;
	uint64_t fired_gen[FIRED_MAX], fired_deadline[FIRED_MAX];
	unsigned int nfired;
	uint64_t armings, ended;
};

struct fuzz_table {
	int fd;				/* the table's own descriptor */
	struct htw_table2_setup ts;
	void *map;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	uint32_t *sq;
	struct htw_table2_cqe *cq;
	struct model_slot s[TABLE_SLOTS];
};

struct fuzz_thread {
	int id, fd, shared_fd;
	struct fuzz_table tb;
	uint64_t rng;
	long ops, violations;
	struct model_timer t[MAX_TIMERS];
	uint32_t used;
	uint64_t scheduled, cancelled;	/* since the file was opened */
	uint32_t shared_next;		/* cookies used on the shared file */
	uint64_t counts[8];
};

static _Atomic uint32_t *shared_tally;	/* per cookie: times it ended */
static long ops_per_thread = 3000;
static int nthreads = 3;

#define VIOLATION(th, ...) do {						\
	fprintf(stderr, "# VIOLATION thread %d op %ld: ", (th)->id, (th)->ops); \
	fprintf(stderr, __VA_ARGS__);					\
	fputc('\n', stderr);						\
	(th)->violations++;						\
} while (0)

static uint64_t rnd(struct fuzz_thread *th)
{
	/* xorshift64*: fast, reproducible from the seed */
	th->rng ^= th->rng >> 12;
	th->rng ^= th->rng << 25;
	th->rng ^= th->rng >> 27;
	return th->rng * 2685821657736338717ULL;
}

static int get_stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, HTW_IOC_STATS, st);
}

/* Linear: only for handles of unknown origin (garbage). */
static struct model_timer *find(struct fuzz_thread *th, uint64_t handle)
{
	for (uint32_t i = 0; i < th->used; i++)
		if (th->t[i].handle == handle)
			return &th->t[i];
	return NULL;
}

/* Cookies are model indices: the timer a record or description names. */
static struct model_timer *by_cookie(struct fuzz_thread *th, uint64_t cookie,
				     uint64_t handle)
{
	if (cookie >= th->used || th->t[cookie].handle != handle)
		return NULL;
	return &th->t[cookie];
}

/* ---- the owned file: exact model ---- */

static void own_schedule(struct fuzz_thread *th)
{
	struct htw_timer_entry e[BATCH];
	struct htw_schedule req = { .entries = (uintptr_t)e };
	uint32_t n = 1 + rnd(th) % BATCH, i;
	uint64_t before;
	int ret;

	if (th->used + n > MAX_TIMERS)
		return;
	memset(e, 0, sizeof(e));
	for (i = 0; i < n; i++) {
		e[i].cookie = th->used + i;
		e[i].expires = rnd(th) % 4 ? rnd(th) % (20 * MS) : rnd(th) % (3000 * MS);
	}
	req.count = n;
	before = htw_test_now(CLOCK_MONOTONIC);
	ret = ioctl(th->fd, HTW_IOC_SCHEDULE, &req);
	if (ret < 0) {
		VIOLATION(th, "schedule of %u failed: %s", n, strerror(errno));
		return;
	}
	if ((uint32_t)ret != n || req.done != n)
		VIOLATION(th, "scheduled %d of %u (done %u)", ret, n, req.done);
	for (i = 0; i < (uint32_t)ret; i++) {
		struct model_timer *m = &th->t[th->used++];

		m->handle = e[i].handle;
		m->min_deadline = before + e[i].expires;
		m->state = T_PENDING;
	}
	th->scheduled += ret;
}

static void own_cancel(struct fuzz_thread *th)
{
	struct htw_cancel_entry e[BATCH];
	struct htw_cancel req = { .entries = (uintptr_t)e };
	uint32_t n = 1 + rnd(th) % 8, i, ok = 0;

	int32_t idx[BATCH];

	memset(e, 0, sizeof(e));
	for (i = 0; i < n; i++) {
		idx[i] = -1;
		if (th->used && rnd(th) % 8) {
			idx[i] = rnd(th) % th->used;
			e[i].handle = th->t[idx[i]].handle;
		} else {
			e[i].handle = rnd(th);	/* garbage */
		}
	}
	req.count = n;
	if (ioctl(th->fd, HTW_IOC_CANCEL, &req)) {
		VIOLATION(th, "cancel failed: %s", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		struct model_timer *m = idx[i] >= 0 ? &th->t[idx[i]] : find(th, e[i].handle);
		int dup = 0;

		/* The same handle twice in one batch: the second is UNKNOWN. */
		for (uint32_t j = 0; j < i; j++)
			dup |= e[j].handle == e[i].handle;
		if (!m || m->state == T_CANCELLED || m->state == T_DRAINED ||
		    m->state == T_READ || dup) {
			if (e[i].result != HTW_CANCEL_UNKNOWN &&
			    !(dup && e[i].result == HTW_CANCEL_FIRED))
				VIOLATION(th, "cancel of dead handle %llx gave %u",
					  (unsigned long long)e[i].handle, e[i].result);
			continue;
		}
		if (e[i].result == HTW_CANCELLED) {
			m->state = T_CANCELLED;
			ok++;
		} else if (e[i].result != HTW_CANCEL_FIRED) {
			VIOLATION(th, "cancel of live handle gave %u", e[i].result);
		}
		/* FIRED: its record is queued and will be read. */
	}
	if (req.cancelled != ok)
		VIOLATION(th, "cancelled %u, model %u", req.cancelled, ok);
	th->cancelled += ok;
}

static void own_read(struct fuzz_thread *th)
{
	struct htw_expiry rec[BATCH];
	ssize_t r = read(th->fd, rec, (1 + rnd(th) % BATCH) * sizeof(rec[0]));

	if (r < 0) {
		if (errno != EAGAIN)
			VIOLATION(th, "read: %s", strerror(errno));
		return;
	}
	if (r % sizeof(rec[0]))
		VIOLATION(th, "read returned %zd bytes", r);
	for (size_t i = 0; i < r / sizeof(rec[0]); i++) {
		struct model_timer *m = by_cookie(th, rec[i].cookie, rec[i].handle);

		if (!m || m->state != T_PENDING) {
			VIOLATION(th, "record for handle %llx in state %d",
				  (unsigned long long)rec[i].handle, m ? m->state : -1);
			continue;
		}
		if (rec[i].expired_ns < rec[i].deadline_ns ||
		    rec[i].deadline_ns < m->min_deadline)
			VIOLATION(th, "early: deadline %llu expired %llu min %llu",
				  (unsigned long long)rec[i].deadline_ns,
				  (unsigned long long)rec[i].expired_ns,
				  (unsigned long long)m->min_deadline);
		m->state = T_READ;
	}
}

static void own_drain(struct fuzz_thread *th)
{
	struct htw_unexpired out[64];
	struct htw_drain req = { .entries = (uintptr_t)out, .count = 64 };
	uint64_t pending = 0, i;

	for (uint32_t k = 0; k < th->used; k++)
		pending += th->t[k].state == T_PENDING;
	if (pending > 64)
		return;	/* keep every description */
	if (ioctl(th->fd, HTW_IOC_DRAIN, &req)) {
		VIOLATION(th, "drain: %s", strerror(errno));
		return;
	}
	for (i = 0; i < req.drained && i < 64; i++) {
		struct model_timer *m = by_cookie(th, out[i].cookie, out[i].handle);

		if (!m || m->state != T_PENDING)
			VIOLATION(th, "drained a timer in state %d", m ? m->state : -1);
		else
			m->state = T_DRAINED;
	}
	th->cancelled += req.drained;
}

static void own_check_stats(struct fuzz_thread *th)
{
	struct htw_stats st;

	if (get_stats(th->fd, &st)) {
		VIOLATION(th, "stats: %s", strerror(errno));
		return;
	}
	if (st.scheduled != th->scheduled || st.cancelled != th->cancelled)
		VIOLATION(th, "stats scheduled %llu cancelled %llu, model %llu %llu",
			  (unsigned long long)st.scheduled,
			  (unsigned long long)st.cancelled,
			  (unsigned long long)th->scheduled,
			  (unsigned long long)th->cancelled);
}

/* Invalid calls: each must fail with its errno and change nothing. */
static void own_invalid(struct fuzz_thread *th)
{
	struct htw_timer_entry e = { .expires = MS };
	struct htw_schedule sreq = { .entries = (uintptr_t)&e, .count = 1 };
	struct htw_cancel_entry ce = { .handle = 1 };
	struct htw_cancel creq = { .entries = (uintptr_t)&ce, .count = 1 };
	int want = EINVAL, ret;

	switch (rnd(th) % 8) {
	case 0: sreq.flags = 1 << (rnd(th) % 32); break;
	case 1: sreq.reserved[rnd(th) % 3] = rnd(th) | 1; break;
	case 2: e.flags = 2 << (rnd(th) % 30); break;
	case 3: e.pad = rnd(th) | 1; break;
	case 4: sreq.count = 0; break;
	case 5: sreq.entries = rnd(th) % 4096; want = EFAULT; break;
	case 6: e.expires = ~0ULL - rnd(th) % MS; want = EOVERFLOW; break;
	default:
		ce.pad = 1;
		ret = ioctl(th->fd, HTW_IOC_CANCEL, &creq);
		if (ret != -1 || errno != EINVAL)
			VIOLATION(th, "bad cancel: %d %s", ret, strerror(errno));
		return;
	}
	ret = ioctl(th->fd, HTW_IOC_SCHEDULE, &sreq);
	if (ret != -1 || errno != want)
		VIOLATION(th, "bad schedule: %d %s, wanted %s", ret,
			  strerror(errno), strerror(want));
}

static void table_open(struct fuzz_thread *th);
static void table_finish(struct fuzz_thread *th);
static void table_close(struct fuzz_thread *th);

static void own_reopen(struct fuzz_thread *th)
{
	table_finish(th);
	table_close(th);
	close(th->fd);
	th->fd = htw_test_open(O_NONBLOCK);
	if (th->fd < 0) {
		VIOLATION(th, "reopen: %s", strerror(errno));
		exit(1);
	}
	table_open(th);
	th->used = 0;
	th->scheduled = th->cancelled = 0;
}

/* ---- the owned file's table: the slot protocol, modelled ---- */

static void table_open(struct fuzz_thread *th)
{
	struct fuzz_table *tb = &th->tb;

	memset(tb, 0, sizeof(*tb));
	tb->ts.entries = TABLE_SLOTS;
	tb->fd = ioctl(th->fd, HTW_IOC_TABLE2_CREATE, &tb->ts);
	if (tb->fd < 0) {
		VIOLATION(th, "table create: %s", strerror(errno));
		exit(1);
	}
	tb->map = mmap(NULL, tb->ts.mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, tb->fd, 0);
	if (tb->map == MAP_FAILED) {
		VIOLATION(th, "table mmap: %s", strerror(errno));
		exit(1);
	}
	tb->hdr = tb->map;
	tb->slots = (void *)((char *)tb->map + tb->ts.slots_off);
	tb->sq = (void *)((char *)tb->map + tb->ts.sq_off);
	tb->cq = (void *)((char *)tb->map + tb->ts.cq_off);
}

static void table_close(struct fuzz_thread *th)
{
	munmap(th->tb.map, th->tb.ts.mmap_size);
	close(th->tb.fd);
}

static void table_enter(struct fuzz_thread *th)
{
	if (ioctl(th->tb.fd, HTW_IOC_TABLE2_ENTER, 0) < 0 && errno != EINTR)
		VIOLATION(th, "table enter: %s", strerror(errno));
}

static void table_submit(struct fuzz_thread *th, uint32_t slot)
{
	struct fuzz_table *tb = &th->tb;
	uint32_t tail = tb->hdr->sq_tail;

	/* Never full: a slot is in the ring at most once until taken in. */
	if (tail - __atomic_load_n(&tb->hdr->sq_head, __ATOMIC_ACQUIRE) >
	    tb->ts.sq_entries - 1)
		VIOLATION(th, "submission ring full at slot %u", slot);
	__atomic_store_n(&tb->slots[slot].queued, 1, __ATOMIC_RELAXED);
	tb->sq[tail & (tb->ts.sq_entries - 1)] = slot;
	__atomic_store_n(&tb->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

/*
 * The exchange a slot's arm or cancel made returned @old: the generation
 * the model stored last, armed if the model's arming had not ended.  If
 * the kernel fired it meanwhile, its record is due.
 */
static void table_exchanged(struct fuzz_thread *th, uint32_t slot, uint64_t old)
{
	struct model_slot *m = &th->tb.s[slot];

	if (old >> 1 != m->gen)
		VIOLATION(th, "slot %u at generation %llu, not %llu", slot,
			  (unsigned long long)(old >> 1), (unsigned long long)m->gen);
	if (old & HTW_TABLE2_ARMED) {
		if (!m->deadline)
			VIOLATION(th, "slot %u armed, though disarmed here", slot);
		m->ended++;		/* replaced or cancelled: no record */
	} else if (m->deadline && m->nfired < FIRED_MAX) {
		m->fired_gen[m->nfired] = m->gen;
		m->fired_deadline[m->nfired++] = m->deadline;
	} else if (m->deadline) {
		VIOLATION(th, "slot %u: more than %d records due", slot, FIRED_MAX);
	}
}

/* Arm or move a slot: short, long, or in the past; earlier or later. */
static void table_arm(struct fuzz_thread *th)
{
	uint32_t slot = rnd(th) % TABLE_SLOTS;
	struct htw_table2_slot *s = &th->tb.slots[slot];
	struct model_slot *m = &th->tb.s[slot];
	uint64_t now = htw_test_now(CLOCK_MONOTONIC), d, old, g;
	int need;

	if (m->nfired == FIRED_MAX)
		return;		/* its records first */
	d = rnd(th) % 8 ? now + rnd(th) % (20 * MS) : now + rnd(th) % (3000 * MS);
	if (rnd(th) % 16 == 0)
		d = 1 + rnd(th) % now;	/* already due */
	g = m->gen + 1;
	need = !m->deadline || d < m->deadline;
	__atomic_store_n(&s->deadline_ns[g & 1], d, __ATOMIC_RELAXED);
	if (need && !__atomic_load_n(&s->queued, __ATOMIC_RELAXED))
		table_submit(th, slot);
	old = __atomic_exchange_n(&s->seq, g << 1 | HTW_TABLE2_ARMED, __ATOMIC_SEQ_CST);
	table_exchanged(th, slot, old);
	if (!(old & HTW_TABLE2_ARMED))
		need = 1;
	m->gen = g;
	m->deadline = d;
	m->armings++;
	if (!need)
		return;
	if (!__atomic_load_n(&s->queued, __ATOMIC_RELAXED)) {
		table_submit(th, slot);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (d < __atomic_load_n(&th->tb.hdr->next_wakeup_ns, __ATOMIC_RELAXED))
		table_enter(th);
}

static void table_cancel(struct fuzz_thread *th, uint32_t slot)
{
	struct model_slot *m = &th->tb.s[slot];
	uint64_t g = m->gen + 1, old;

	if (m->nfired == FIRED_MAX)
		return;
	old = __atomic_exchange_n(&th->tb.slots[slot].seq, g << 1, __ATOMIC_SEQ_CST);
	table_exchanged(th, slot, old);
	m->gen = g;
	m->deadline = 0;
}

/*
 * A record of @slot's generation @gen, read at @now: the model's current
 * arming (now ended), or one it learnt had fired; never early.
 */
static void table_record(struct fuzz_thread *th, const struct htw_table2_cqe *e,
			 uint64_t now)
{
	struct model_slot *m = &th->tb.s[e->slot];
	uint64_t deadline = 0;
	unsigned int i;

	if (m->deadline && e->gen == m->gen) {
		deadline = m->deadline;
		m->deadline = 0;
	} else {
		for (i = 0; i < m->nfired && m->fired_gen[i] != e->gen; i++)
			;
		if (i == m->nfired) {
			VIOLATION(th, "record of slot %u generation %llu, which was not armed",
				  e->slot, (unsigned long long)e->gen);
			return;
		}
		deadline = m->fired_deadline[i];
		m->fired_gen[i] = m->fired_gen[--m->nfired];
		m->fired_deadline[i] = m->fired_deadline[m->nfired];
	}
	m->ended++;
	if (m->ended > m->armings)
		VIOLATION(th, "slot %u: %llu endings of %llu armings", e->slot,
			  (unsigned long long)m->ended, (unsigned long long)m->armings);
	if (now < deadline)
		VIOLATION(th, "slot %u fired early: deadline %llu, read at %llu",
			  e->slot, (unsigned long long)deadline, (unsigned long long)now);
}

/* Consume every record: each ends one arming, none before its deadline. */
static void table_consume(struct fuzz_thread *th)
{
	struct fuzz_table *tb = &th->tb;
	uint32_t head = tb->hdr->cq_head;
	uint32_t tail = __atomic_load_n(&tb->hdr->cq_tail, __ATOMIC_ACQUIRE);
	uint64_t now = htw_test_now(CLOCK_MONOTONIC);

	for (; head != tail; head++) {
		struct htw_table2_cqe e = tb->cq[head & (tb->ts.cq_entries - 1)];

		if (e.slot >= TABLE_SLOTS || e.flags)
			VIOLATION(th, "record of slot %u, flags %u", e.slot, e.flags);
		else
			table_record(th, &e, now);
	}
	__atomic_store_n(&tb->hdr->cq_head, head, __ATOMIC_RELEASE);
}

/* Garbage in the submission ring and bad doorbells change nothing else. */
static void table_invalid(struct fuzz_thread *th)
{
	struct fuzz_table *tb = &th->tb;
	uint64_t invalid = tb->hdr->sq_invalid;
	uint32_t tail;
	int ret;

	switch (rnd(th) % 3) {
	case 0:
		tail = tb->hdr->sq_tail;
		tb->sq[tail & (tb->ts.sq_entries - 1)] = TABLE_SLOTS + rnd(th) % 1000;
		__atomic_store_n(&tb->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
		if (ioctl(tb->fd, HTW_IOC_TABLE2_ENTER, 0) < 0 ||
		    tb->hdr->sq_invalid != invalid + 1)
			VIOLATION(th, "garbage slot: %s, %llu invalid", strerror(errno),
				  (unsigned long long)tb->hdr->sq_invalid);
		break;
	case 1:
		ret = ioctl(tb->fd, HTW_IOC_TABLE2_ENTER, 1 + rnd(th) % 100);
		if (ret != -1 || errno != EINVAL)
			VIOLATION(th, "enter with an argument: %d %s", ret,
				  strerror(errno));
		break;
	default:
		ret = ioctl(tb->fd, HTW_IOC_TABLE2_CREATE, &tb->ts);
		if (ret != -1 || errno != ENOTTY)
			VIOLATION(th, "a table made on a table: %d %s", ret, strerror(errno));
		break;
	}
}

static void table_op(struct fuzz_thread *th)
{
	uint64_t op = rnd(th) % 10;

	if (op < 5)
		table_arm(th);
	else if (op < 7)
		table_cancel(th, rnd(th) % TABLE_SLOTS);
	else if (op < 9)
		table_consume(th);
	else
		table_invalid(th);
}

/* Cancel what is armed; every arming must then have ended. */
static void table_finish(struct fuzz_thread *th)
{
	uint64_t deadline = htw_test_now(CLOCK_MONOTONIC) + 5000 * MS;
	uint32_t i, left;

	for (i = 0; i < TABLE_SLOTS; i++)
		table_cancel(th, i);
	do {
		table_consume(th);
		for (left = 0, i = 0; i < TABLE_SLOTS; i++)
			left += th->tb.s[i].ended != th->tb.s[i].armings;
		if (left)
			poll(&(struct pollfd){ .fd = th->tb.fd, .events = POLLIN }, 1, 10);
	} while (left && htw_test_now(CLOCK_MONOTONIC) < deadline);
	if (left)
		VIOLATION(th, "%u table slots with an arming that never ended", left);
}

/* ---- the shared file: racing threads, tallied cookies ---- */

static uint64_t shared_cookie(struct fuzz_thread *th, uint32_t seq)
{
	return (uint64_t)th->id * SHARED_PER_THR + seq;
}

static void tally(struct fuzz_thread *th, uint64_t cookie)
{
	if (cookie >= (uint64_t)nthreads * SHARED_PER_THR) {
		VIOLATION(th, "shared cookie %llu out of range", (unsigned long long)cookie);
		return;
	}
	atomic_fetch_add(&shared_tally[cookie], 1);
}

static uint64_t shared_handles[64][SHARED_PER_THR / 64];

/* Room for every shared timer of the process, so each drained one is tallied. */
static void shared_drain(struct fuzz_thread *th)
{
	uint32_t room = nthreads * (SHARED_PER_THR / 64);
	struct htw_unexpired *u = calloc(room, sizeof(*u));
	struct htw_drain req = { .entries = (uintptr_t)u, .count = room };

	if (!u)
		return;
	if (ioctl(th->shared_fd, HTW_IOC_DRAIN, &req))
		VIOLATION(th, "shared drain: %s", strerror(errno));
	else if (req.drained > room)
		VIOLATION(th, "shared drain of %llu > %u timers scheduled",
			  (unsigned long long)req.drained, room);
	for (uint64_t i = 0; i < req.drained && i < room; i++)
		tally(th, u[i].cookie);
	free(u);
}

static void shared_op(struct fuzz_thread *th)
{
	union {
		struct htw_timer_entry e[8];
		struct htw_cancel_entry c[8];
		struct htw_expiry r[8];
	} b;
	uint32_t i, n = 1 + rnd(th) % 8;
	uint64_t *handles = shared_handles[th->id % 64];
	const uint32_t cap = SHARED_PER_THR / 64;
	ssize_t r;

	memset(&b, 0, sizeof(b));
	switch (rnd(th) % 4) {
	case 0: {
		struct htw_schedule req = { .entries = (uintptr_t)b.e, .count = n };
		int ret;

		if (th->shared_next + n > cap)
			return;
		for (i = 0; i < n; i++) {
			b.e[i].cookie = shared_cookie(th, th->shared_next + i);
			b.e[i].expires = rnd(th) % (10 * MS);
		}
		ret = ioctl(th->shared_fd, HTW_IOC_SCHEDULE, &req);
		if (ret != (int)n) {
			VIOLATION(th, "shared schedule %d: %s", ret, strerror(errno));
			return;
		}
		for (i = 0; i < n; i++)
			handles[th->shared_next + i] = b.e[i].handle;
		th->shared_next += n;
		break;
	}
	case 1: {
		struct htw_cancel req = { .entries = (uintptr_t)b.c, .count = n };

		if (!th->shared_next)
			return;
		uint32_t k[8];

		for (i = 0; i < n; i++) {
			k[i] = rnd(th) % th->shared_next;
			b.c[i].handle = handles[k[i]];
		}
		if (ioctl(th->shared_fd, HTW_IOC_CANCEL, &req)) {
			VIOLATION(th, "shared cancel: %s", strerror(errno));
			return;
		}
		for (i = 0; i < n; i++)
			if (b.c[i].result == HTW_CANCELLED)
				tally(th, shared_cookie(th, k[i]));
		break;
	}
	case 2:
		r = read(th->shared_fd, b.r, n * sizeof(b.r[0]));
		if (r < 0 && errno != EAGAIN)
			VIOLATION(th, "shared read: %s", strerror(errno));
		for (i = 0; r > 0 && i < r / sizeof(b.r[0]); i++) {
			if (b.r[i].expired_ns < b.r[i].deadline_ns)
				VIOLATION(th, "shared early record");
			tally(th, b.r[i].cookie);
		}
		break;
	default:
		if (rnd(th) % 16)
			return;	/* drains are rare: they end everyone's timers */
		shared_drain(th);
	}
}

/* ---- driver ---- */

static void own_finish(struct fuzz_thread *th)
{
	struct htw_unexpired out[MAX_TIMERS];
	struct htw_drain req = { .entries = (uintptr_t)out, .count = MAX_TIMERS };
	uint64_t deadline = htw_test_now(CLOCK_MONOTONIC) + 5000 * MS;
	uint32_t i, left;

	if (ioctl(th->fd, HTW_IOC_DRAIN, &req))
		VIOLATION(th, "final drain: %s", strerror(errno));
	for (i = 0; i < req.drained; i++) {
		struct model_timer *m = by_cookie(th, out[i].cookie, out[i].handle);

		if (!m || m->state != T_PENDING)
			VIOLATION(th, "final drain: timer in state %d", m ? m->state : -1);
		else
			m->state = T_DRAINED;
	}
	th->cancelled += req.drained;
	/* What was not drained had expired: its record must come. */
	do {
		own_read(th);
		for (left = 0, i = 0; i < th->used; i++)
			left += th->t[i].state == T_PENDING;
		if (left)
			poll(&(struct pollfd){ .fd = th->tb.fd, .events = POLLIN }, 1, 10);
	} while (left && htw_test_now(CLOCK_MONOTONIC) < deadline);
	if (left)
		VIOLATION(th, "%u timers neither read, cancelled nor drained", left);
	own_check_stats(th);
}

static void *fuzz_thread(void *arg)
{
	struct fuzz_thread *th = arg;

	th->fd = htw_test_open(O_NONBLOCK);
	if (th->fd < 0) {
		VIOLATION(th, "open: %s", strerror(errno));
		return NULL;
	}
	table_open(th);
	for (th->ops = 0; th->ops < ops_per_thread; th->ops++) {
		uint64_t op = rnd(th) % 100;

		th->counts[op % 8]++;
		if (op < 25)
			own_schedule(th);
		else if (op < 40)
			own_cancel(th);
		else if (op < 55)
			own_read(th);
		else if (op < 58)
			own_drain(th);
		else if (op < 62)
			own_check_stats(th);
		else if (op < 70)
			own_invalid(th);
		else if (op < 71)
			own_reopen(th);
		else if (op < 72)
			usleep(rnd(th) % 2000);
		else if (op < 84)
			table_op(th);
		else
			shared_op(th);
		if (th->used >= MAX_TIMERS - BATCH) {
			own_finish(th);
			own_reopen(th);
		}
	}
	own_finish(th);
	table_finish(th);
	table_close(th);
	close(th->fd);
	return NULL;
}

static int shared_finish(int fd)
{
	struct htw_unexpired *out = calloc(nthreads * SHARED_PER_THR, sizeof(*out));
	struct htw_drain req = { .entries = (uintptr_t)out, .count = nthreads * SHARED_PER_THR };
	struct htw_expiry rec[256];
	uint64_t deadline = htw_test_now(CLOCK_MONOTONIC) + 5000 * MS;
	int bad = 0;
	ssize_t r;

	if (!out || ioctl(fd, HTW_IOC_DRAIN, &req))
		return 1;
	for (uint64_t i = 0; i < req.drained; i++)
		atomic_fetch_add(&shared_tally[out[i].cookie], 1);
	for (;;) {
		r = read(fd, rec, sizeof(rec));
		if (r > 0) {
			for (size_t i = 0; i < r / sizeof(rec[0]); i++)
				atomic_fetch_add(&shared_tally[rec[i].cookie], 1);
			continue;
		}
		struct htw_stats st;

		if (get_stats(fd, &st) || (!st.pending && !st.ready) ||
		    htw_test_now(CLOCK_MONOTONIC) > deadline)
			break;
		poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 10);
	}
	free(out);
	return bad;
}

static int fuzz_process(uint64_t seed, int proc)
{
	struct fuzz_thread *th = calloc(nthreads, sizeof(*th));
	pthread_t *tid = calloc(nthreads, sizeof(*tid));
	int shared = htw_test_open(O_NONBLOCK), t, bad = 0;
	long violations = 0;

	if (!th || !tid || shared < 0) {
		fprintf(stderr, "# process %d: setup failed: %s\n", proc, strerror(errno));
		return 1;
	}
	for (t = 0; t < nthreads; t++) {
		th[t].id = t;
		th[t].shared_fd = shared;
		th[t].rng = seed * 1000003 + proc * 1009 + t + 1;
		pthread_create(&tid[t], NULL, fuzz_thread, &th[t]);
	}
	for (t = 0; t < nthreads; t++) {
		pthread_join(tid[t], NULL);
		violations += th[t].violations;
	}
	bad |= shared_finish(shared);
	close(shared);
	for (t = 0; t < nthreads; t++) {
		for (uint32_t k = 0; k < th[t].shared_next; k++) {
			uint32_t n = shared_tally[t * SHARED_PER_THR + k];

			if (n != 1) {
				fprintf(stderr, "# VIOLATION process %d: shared timer %d.%u ended %u times\n",
					proc, t, k, n);
				violations++;
			}
		}
	}
	fprintf(stderr, "# process %d: %ld ops, %ld violations\n", proc,
		ops_per_thread * nthreads, violations);
	return violations || bad;
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

int main(void)
{
	uint64_t seed = env_long("HTW_FUZZ_SEED", time(NULL));
	int procs = env_long("HTW_FUZZ_PROCS", 2), p, status, failed = 0;
	size_t tally_size;

	ops_per_thread = env_long("HTW_FUZZ_OPS", 3000);
	nthreads = env_long("HTW_FUZZ_THREADS", 3);
	if (nthreads < 1 || nthreads > 64 || procs < 1 || procs > 16) {
		fprintf(stderr, "HTW_FUZZ_THREADS 1..64, HTW_FUZZ_PROCS 1..16\n");
		return 2;
	}
	printf("TAP version 13\n1..1\n");
	printf("# seed %llu (replay: HTW_FUZZ_SEED=%llu), %d processes x %d threads x %ld ops\n",
	       (unsigned long long)seed, (unsigned long long)seed, procs,
	       nthreads, ops_per_thread);
	fflush(stdout);
	tally_size = (size_t)procs * nthreads * SHARED_PER_THR * sizeof(*shared_tally);
	for (p = 0; p < procs; p++) {
		if (fork() == 0) {
			/* Each process gets its own tally (MAP_PRIVATE after fork). */
			shared_tally = mmap(NULL, tally_size, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (shared_tally == MAP_FAILED)
				_exit(1);
			_exit(fuzz_process(seed, p));
		}
	}
	for (p = 0; p < procs; p++) {
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	printf("# %lld operations, %d of %d processes saw violations\n",
	       (long long)procs * nthreads * ops_per_thread, failed, procs);
	printf("%sok 1 fuzz (seed %llu)\n", failed ? "not " : "",
	       (unsigned long long)seed);
	return failed ? 1 : 0;
}
