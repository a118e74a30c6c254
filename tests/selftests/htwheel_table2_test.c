// SPDX-License-Identifier: GPL-2.0
/*
 * The timer table, version 2, from user space: HTW_IOC_TABLE2_CREATE and
 * its refusals, the table's own descriptor (its mmap, poll, ioctls and
 * fdinfo; it outlives the device file), and the protocol: every arming is
 * cancelled or fired into exactly one record, under a loop that cancels
 * and re-arms at the same deadline while the kernel fires; a server's
 * churn (each slot pushed later again and again) submits nothing and
 * never rings the doorbell; and the smallest completion ring, with every
 * slot due at once, delivers every record once.  Written against
 * include/uapi/linux/htwheel.h and Documentation/userspace-api/htwheel.rst
 * only; the slot protocol is spelt out here with the compiler's atomics.
 * Every loop is bounded by time as well as by count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define SEC		(1000 * MS)

struct table2 {
	int dev, fd;
	struct htw_table2_setup ts;
	char *map;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	uint32_t *sq;
	struct htw_table2_cqe *cq;
	uint32_t cq_head;
	uint64_t submits, doorbells;
};

static int table2_open(struct table2 *t, uint32_t entries)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->dev = htw_test_open(0);
	if (t->dev < 0)
		return -1;
	t->ts.entries = entries;
	t->fd = ioctl(t->dev, HTW_IOC_TABLE2_CREATE, &t->ts);
	if (t->fd < 0)
		return -1;
	t->map = mmap(NULL, t->ts.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->map == MAP_FAILED)
		return -1;
	t->hdr = (void *)t->map;
	t->slots = (void *)(t->map + t->ts.slots_off);
	t->sq = (void *)(t->map + t->ts.sq_off);
	t->cq = (void *)(t->map + t->ts.cq_off);
	return 0;
}

static void table2_close(struct table2 *t)
{
	if (t->map && t->map != MAP_FAILED)
		munmap(t->map, t->ts.mmap_size);
	if (t->fd >= 0)
		close(t->fd);
	if (t->dev >= 0)
		close(t->dev);
}

static uint64_t now_ns(void)
{
	return htw_test_now(CLOCK_MONOTONIC);
}

static void submit(struct table2 *t, uint32_t slot)
{
	uint32_t tail = __atomic_load_n(&t->hdr->sq_tail, __ATOMIC_RELAXED);

	__atomic_store_n(&t->slots[slot].queued, 1, __ATOMIC_RELAXED);
	t->sq[tail & t->hdr->sq_mask] = slot;
	__atomic_store_n(&t->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
	t->submits++;
}

/*
 * Arm or move @slot to @d, as the header says; returns the generation.
 * With @no_doorbell, the kernel takes the submission in at its next run
 * instead: a test that needs it then rings it itself.
 */
static uint64_t arm_how(struct table2 *t, uint32_t slot, uint64_t d, int no_doorbell)
{
	struct htw_table2_slot *s = &t->slots[slot];
	uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	uint64_t g = (seq >> 1) + 1, old;
	int need = !(seq & HTW_TABLE2_ARMED) ||
		   d < __atomic_load_n(&s->deadline_ns[(g - 1) & 1], __ATOMIC_RELAXED);

	__atomic_store_n(&s->deadline_ns[g & 1], d, __ATOMIC_RELAXED);
	if (need && !__atomic_load_n(&s->queued, __ATOMIC_RELAXED))
		submit(t, slot);
	old = __atomic_exchange_n(&s->seq, g << 1 | HTW_TABLE2_ARMED, __ATOMIC_SEQ_CST);
	if (!(old & HTW_TABLE2_ARMED))
		need = 1;
	if (!need)
		return g;
	if (!__atomic_load_n(&s->queued, __ATOMIC_RELAXED)) {
		submit(t, slot);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (!no_doorbell && d < __atomic_load_n(&t->hdr->next_wakeup_ns, __ATOMIC_RELAXED)) {
		t->doorbells++;
		while (ioctl(t->fd, HTW_IOC_TABLE2_ENTER, 0) < 0 && errno == EINTR)
			;
	}
	return g;
}

static uint64_t arm(struct table2 *t, uint32_t slot, uint64_t d)
{
	return arm_how(t, slot, d, 0);
}

/* Cancel @slot: 1 if its arming was cancelled, 0 if it was not armed. */
static int cancel(struct table2 *t, uint32_t slot)
{
	struct htw_table2_slot *s = &t->slots[slot];
	uint64_t g = (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) >> 1) + 1;

	return !!(__atomic_exchange_n(&s->seq, g << 1, __ATOMIC_SEQ_CST) & HTW_TABLE2_ARMED);
}

/* The quiet cancel: a store, no barrier, nothing learnt. */
static void cancel_quiet(struct table2 *t, uint32_t slot)
{
	struct htw_table2_slot *s = &t->slots[slot];
	uint64_t g = (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) >> 1) + 1;

	__atomic_store_n(&s->seq, g << 1, __ATOMIC_RELEASE);
}

/* Take one record if there is one. */
static int take(struct table2 *t, struct htw_table2_cqe *e)
{
	if (t->cq_head == __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE))
		return 0;
	*e = t->cq[t->cq_head & t->hdr->cq_mask];
	__atomic_store_n(&t->hdr->cq_head, ++t->cq_head, __ATOMIC_RELEASE);
	return 1;
}

TEST(create_answers_the_layout_and_a_descriptor)
{
	char path[64], line[256];
	struct table2 t;
	FILE *f;
	int found = 0;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 3000));
	EXPECT_EQ(t.fd, t.ts.fd);
	EXPECT_NE(t.dev, t.fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(t.fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(4096, t.ts.sq_entries);
	EXPECT_EQ(512, t.ts.cq_entries);
	EXPECT_EQ(3000, t.hdr->entries);
	EXPECT_EQ(4095, t.hdr->sq_mask);
	EXPECT_EQ(511, t.hdr->cq_mask);
	EXPECT_EQ(~0ULL, t.hdr->next_wakeup_ns);
	EXPECT_EQ(0, t.ts.mmap_size % sysconf(_SC_PAGESIZE));
	EXPECT_LE(t.ts.cq_off + t.ts.cq_entries * sizeof(struct htw_table2_cqe), t.ts.mmap_size);
	/* The table's fdinfo is its own. */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", t.fd);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		found |= !strcmp(line, "htw-table-entries:\t3000\n");
	fclose(f);
	EXPECT_TRUE(found);
	table2_close(&t);
	/* The smallest tables: the ring is never larger than the table's. */
	ASSERT_EQ(0, table2_open(&t, 1));
	EXPECT_EQ(1, t.ts.sq_entries);
	EXPECT_EQ(1, t.ts.cq_entries);
	table2_close(&t);
}

TEST(refusals_change_nothing)
{
	struct htw_table2_setup ts = { .entries = 8 };
	struct htw_table_stats st = { .flags = 1 };
	struct table2 t;
	int raw, prot;
	void *m;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 8));
	ts.flags = 1;
	EXPECT_EQ(-1, ioctl(t.dev, HTW_IOC_TABLE2_CREATE, &ts));
	EXPECT_EQ(EINVAL, errno);
	ts.flags = 0;
	ts.reserved[2] = 1;
	EXPECT_EQ(-1, ioctl(t.dev, HTW_IOC_TABLE2_CREATE, &ts));
	EXPECT_EQ(EINVAL, errno);
	ts.reserved[2] = 0;
	ts.entries = 0;
	EXPECT_EQ(-1, ioctl(t.dev, HTW_IOC_TABLE2_CREATE, &ts));
	EXPECT_EQ(EINVAL, errno);
	ts.entries = 1U << 31;
	EXPECT_EQ(-1, ioctl(t.dev, HTW_IOC_TABLE2_CREATE, &ts));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(t.dev, HTW_IOC_TABLE2_CREATE, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* Before the handshake, like every device ioctl. */
	raw = open("/dev/htwheel", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, raw);
	ts.entries = 8;
	EXPECT_EQ(-1, ioctl(raw, HTW_IOC_TABLE2_CREATE, &ts));
	EXPECT_EQ(EBADFD, errno);
	close(raw);
	/* Each object's ioctls are its own. */
	EXPECT_EQ(-1, ioctl(t.dev, HTW_IOC_TABLE2_ENTER, 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(t.fd, HTW_IOC_SCHEDULE, NULL));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(t.fd, HTW_IOC_TABLE2_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	/* The mapping: shared, never executable, never bigger. */
	m = mmap(NULL, t.ts.mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, t.fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	prot = PROT_READ | PROT_EXEC;
	m = mmap(NULL, t.ts.mmap_size, prot, MAP_SHARED, t.fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	m = mmap(NULL, t.ts.mmap_size + 4096, PROT_READ, MAP_SHARED, t.fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	/* The device file itself maps no version 2 table. */
	m = mmap(NULL, t.ts.mmap_size, PROT_READ, MAP_SHARED, t.dev, 0);
	EXPECT_EQ(MAP_FAILED, m);
	table2_close(&t);
}

/*
 * The handshake reports the table and the device file's ioctl that makes
 * one, and only that one.
 */
TEST(api_reports_the_table)
{
	struct htw_api api = { .api = HTW_API_VERSION,
			       .features = HTW_FEATURE_TABLE };
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_API, &api));
	EXPECT_TRUE(api.features & HTW_FEATURE_TABLE);
	EXPECT_TRUE(api.ioctls & (1ULL << _IOC_NR(HTW_IOC_TABLE2_CREATE)));
	/* The first protocol's numbers, 0x08-0x0a, are gone. */
	EXPECT_EQ(0, api.ioctls & (0x7ULL << 8));
	for (unsigned int nr = 0x08; nr <= 0x0a; nr++) {
		EXPECT_EQ(-1, ioctl(fd, _IO(HTW_IOC_MAGIC, nr), 0));
		EXPECT_EQ(ENOTTY, errno);
	}
	/* Nor does the device file map anything. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	close(fd);
}

/*
 * mmap() maps the whole table from offset 0, shared, or nothing; a second
 * mapping is the same memory.
 */
TEST(mmap_refusals)
{
	long page = sysconf(_SC_PAGESIZE);
	struct table2 t;
	void *p;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 16));
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, t.fd, page);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, t.ts.mmap_size + page, PROT_READ, MAP_SHARED, t.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, t.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	t.slots[3].deadline_ns[1] = 77;
	EXPECT_EQ(77, ((struct htw_table2_slot *)((char *)p + t.ts.slots_off))[3].deadline_ns[1]);
	munmap(p, page);
	table2_close(&t);
}

/* The table outlives the device file; poll and stats are the table's. */
TEST(the_table_is_an_object_of_its_own)
{
	struct htw_table_stats st = {};
	struct htw_table2_cqe e;
	struct table2 t;
	uint64_t g, d;
	int n;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 16));
	close(t.dev);
	t.dev = -1;
	d = now_ns() + 20 * MS;
	g = arm(&t, 7, d);
	EXPECT_EQ(1, g);
	EXPECT_EQ(1, t.submits);
	n = poll(&(struct pollfd){ .fd = t.fd, .events = POLLIN }, 1, 5000);
	EXPECT_EQ(1, n);
	EXPECT_LE(d, now_ns());
	ASSERT_EQ(1, take(&t, &e));
	EXPECT_EQ(7, e.slot);
	EXPECT_EQ(g, e.gen);
	EXPECT_EQ(0, e.flags);
	EXPECT_EQ(g << 1, t.slots[7].seq);
	EXPECT_EQ(0, cancel(&t, 7));
	ASSERT_EQ(0, ioctl(t.fd, HTW_IOC_TABLE2_STATS, &st));
	EXPECT_EQ(16, st.entries);
	EXPECT_EQ(1, st.taken);
	EXPECT_EQ(1, st.fired);
	table2_close(&t);
}

/*
 * Cancel, then arm again at the same deadline, over and over while the
 * kernel fires the slots: each arming must end exactly once, cancelled
 * (the cancel said so) or fired (one record with its generation).  The
 * deadline stays the same for 20 ms windows, so that for most of each the
 * slots are due as they are armed; a second thread rings the doorbell
 * without pause, so the kernel takes them in and claims them on another
 * CPU while this thread, which never rings it, cancels and re-arms them.
 */
#define CYCLE_SLOTS	2048
#define CYCLES		10000000UL
#define CYCLE_SECONDS	4
#define CYCLE_WINDOW	(20 * MS)

/* QUIET: cancelled by a store; a record may still come, once. */
enum { OPEN, ARMED, CANCELLED, FIRED, QUIET };

struct gens {
	unsigned char *state;	/* by generation */
	uint64_t size;
};

struct ringer {
	int fd;
	int stop;
	uint64_t rings;
};

static void *ring_doorbell(void *arg)
{
	struct ringer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		ioctl(r->fd, HTW_IOC_TABLE2_ENTER, 0);
		r->rings++;
	}
	return NULL;
}

static int gen_set(struct gens *g, uint64_t gen, unsigned char to)
{
	if (gen >= g->size) {
		uint64_t size = (gen + 1) * 2;
		unsigned char *p = realloc(g->state, size);

		if (!p)
			return -1;
		memset(p + g->size, OPEN, size - g->size);
		g->state = p;
		g->size = size;
	}
	g->state[gen] = to;
	return 0;
}

static void reap_all(struct table2 *t, struct gens *g, uint64_t *bad)
{
	struct htw_table2_cqe e;

	while (take(t, &e)) {
		if (e.slot >= CYCLE_SLOTS || e.gen >= g[e.slot].size ||
		    (g[e.slot].state[e.gen] != ARMED && g[e.slot].state[e.gen] != QUIET))
			(*bad)++;
		else
			g[e.slot].state[e.gen] = FIRED;
	}
}

/* What a cycling run saw. */
struct cycled {
	uint64_t cycles, bad, unended, fired, cancelled, rings;
};

/*
 * Cancel (every other cancel a quiet one with @quiet) and arm again at the
 * same deadline, over every slot of @t, for @ns, while another thread rings
 * the doorbell; then let the last armings fire and read every record.  The
 * generations' fates are in @g, freed here.
 */
static int cycle(struct table2 *t, struct gens *g, int quiet, uint64_t ns,
		 struct cycled *c)
{
	uint64_t end, d = 0;
	struct ringer r = { .fd = t->fd };
	pthread_t ringer;
	uint32_t i;

	memset(c, 0, sizeof(*c));
	if (pthread_create(&ringer, NULL, ring_doorbell, &r))
		return -1;
	end = now_ns() + ns;
	while (c->cycles < CYCLES && now_ns() < end) {
		if (now_ns() > d + CYCLE_WINDOW)
			d = now_ns() + MS;
		for (i = 0; i < CYCLE_SLOTS; i++, c->cycles++) {
			uint64_t cur = t->slots[i].seq >> 1;

			if (cur && quiet && (c->cycles & 1)) {
				cancel_quiet(t, i);
				if (gen_set(&g[i], cur, QUIET))
					return -1;
			} else if (cur && cancel(t, i) && gen_set(&g[i], cur, CANCELLED)) {
				return -1;
			}
			if (gen_set(&g[i], arm_how(t, i, d, 1), ARMED))
				return -1;
		}
		reap_all(t, g, &c->bad);
	}
	/* The last armings fire; then every one has ended. */
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(ringer, NULL);
	c->rings = r.rings;
	while (ioctl(t->fd, HTW_IOC_TABLE2_ENTER, 0) < 0 && errno == EINTR)
		;
	/*
	 * Read what comes, and ring the doorbell too: slots waiting for room
	 * then move in at once (two runs in eight here saw the last ring's
	 * worth wait past 5 s with poll() alone; see the session notes).
	 */
	end = now_ns() + 5 * SEC;
	do {
		poll(&(struct pollfd){ .fd = t->fd, .events = POLLIN }, 1, 100);
		reap_all(t, g, &c->bad);
		ioctl(t->fd, HTW_IOC_TABLE2_ENTER, 0);
		reap_all(t, g, &c->bad);
		c->unended = 0;
		for (i = 0; i < CYCLE_SLOTS; i++)
			for (uint64_t k = 0; k < g[i].size; k++)
				c->unended += g[i].state[k] == ARMED;
	} while (c->unended && now_ns() < end);
	if (c->unended)
		ksft_print_msg("unended: cq %u..%u, sq %u..%u, %llu waits, next wake-up %llu\n",
			       t->hdr->cq_head, t->hdr->cq_tail, t->hdr->sq_head, t->hdr->sq_tail,
			       (unsigned long long)t->hdr->cq_waits,
			       (unsigned long long)t->hdr->next_wakeup_ns);
	for (i = 0; i < CYCLE_SLOTS; i++) {
		for (uint64_t k = 0; k < g[i].size; k++) {
			c->fired += g[i].state[k] == FIRED;
			c->cancelled += g[i].state[k] == CANCELLED;
		}
		free(g[i].state);
		g[i].state = NULL;
		g[i].size = 0;
	}
	return 0;
}

TEST(every_arming_ends_exactly_once)
{
	static struct gens g[CYCLE_SLOTS];
	struct table2 t;
	struct cycled c;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, CYCLE_SLOTS));
	ASSERT_EQ(0, cycle(&t, g, 0, CYCLE_SECONDS * SEC, &c));
	ksft_print_msg("%llu cycles: %llu armings fired, %llu cancelled; the other thread rang %llu times\n",
		       (unsigned long long)c.cycles, (unsigned long long)c.fired,
		       (unsigned long long)c.cancelled, (unsigned long long)c.rings);
	EXPECT_EQ(0, c.bad) TH_LOG("records of armings that were cancelled, or never made");
	EXPECT_EQ(0, c.unended) TH_LOG("armings that neither fired nor were cancelled");
	EXPECT_LT(0, c.fired);
	EXPECT_LT(0, c.cancelled);
	table2_close(&t);
}

/*
 * The quiet cancel: slots armed an hour away and cancelled by a store
 * never fire, and the kernel lets them go; cancelled so while the kernel
 * fires them (the cycle above, every other cancel a store), each arming
 * has at most one record, and only an arming cancelled quietly may end
 * without anyone being told.
 */
TEST(a_quiet_cancel_is_a_store)
{
	static struct gens g[CYCLE_SLOTS];
	struct htw_table2_cqe e;
	struct table2 t;
	struct cycled c;
	uint32_t i;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, CYCLE_SLOTS));
	for (i = 0; i < 64; i++)
		arm(&t, i, now_ns() + 3600 * SEC);
	ASSERT_LE(0, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 0));
	for (i = 0; i < 64; i++) {
		cancel_quiet(&t, i);
		EXPECT_EQ(4, t.slots[i].seq);
		EXPECT_EQ(0, cancel(&t, i));
	}
	usleep(100 * 1000);
	EXPECT_EQ(0, take(&t, &e));
	ASSERT_EQ(0, cycle(&t, g, 1, CYCLE_SECONDS * SEC / 2, &c));
	ksft_print_msg("%llu cycles, half of the cancels quiet\n", (unsigned long long)c.cycles);
	EXPECT_EQ(0, c.bad) TH_LOG("records of armings cancelled by an exchange, or twice");
	EXPECT_EQ(0, c.unended);
	table2_close(&t);
}

/*
 * A server's churn: 1024 connections, each timeout pushed later on every
 * bit of activity.  Once every slot is armed and taken in, moving it later
 * submits nothing and never rings the doorbell; nothing fires.
 */
#define CHURN_SLOTS	1024
#define CHURN_SECONDS	2

TEST(churn_never_rings_the_doorbell)
{
	struct htw_table_stats st = {};
	uint64_t end, passes = 0, submits, doorbells;
	struct htw_table2_cqe e;
	struct table2 t;
	uint32_t i;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, CHURN_SLOTS));
	for (i = 0; i < CHURN_SLOTS; i++)
		arm(&t, i, now_ns() + 500 * MS);
	EXPECT_EQ(CHURN_SLOTS, t.submits);
	ASSERT_LE(0, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 0));
	EXPECT_EQ(CHURN_SLOTS, t.hdr->sq_head);
	submits = t.submits;
	doorbells = t.doorbells;
	end = now_ns() + CHURN_SECONDS * SEC;
	while (now_ns() < end && passes < 100000) {
		for (i = 0; i < CHURN_SLOTS; i++)
			arm(&t, i, now_ns() + 500 * MS);
		passes++;
	}
	ksft_print_msg("%llu passes over %u slots: %llu submissions, %llu doorbells\n",
		       (unsigned long long)passes, CHURN_SLOTS,
		       (unsigned long long)(t.submits - submits),
		       (unsigned long long)(t.doorbells - doorbells));
	EXPECT_EQ(submits, t.submits);
	EXPECT_EQ(doorbells, t.doorbells);
	EXPECT_EQ(0, take(&t, &e));
	ASSERT_EQ(0, ioctl(t.fd, HTW_IOC_TABLE2_STATS, &st));
	EXPECT_EQ(CHURN_SLOTS, st.taken);
	EXPECT_EQ(0, st.fired);
	table2_close(&t);
}

/* 8192 slots due at one instant, a ring of 1024: each record once. */
#define ALL_DUE		8192

TEST(the_smallest_ring_delivers_every_record_once)
{
	unsigned char *seen = calloc(ALL_DUE, 1);
	uint64_t end, d, *gen = calloc(ALL_DUE, sizeof(*gen));
	uint32_t i, got = 0, dup = 0, wrong = 0;
	struct htw_table2_cqe e;
	struct table2 t;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_NE(NULL, seen);
	ASSERT_NE(NULL, gen);
	ASSERT_EQ(0, table2_open(&t, ALL_DUE));
	EXPECT_EQ(ALL_DUE / 8, t.ts.cq_entries);
	d = now_ns() + 200 * MS;
	for (i = 0; i < ALL_DUE; i++)
		gen[i] = arm(&t, i, d);
	/* Not consumed until all are due: most of them wait in the kernel. */
	while (now_ns() < d + 50 * MS)
		usleep(10000);
	end = now_ns() + 20 * SEC;
	while (got < ALL_DUE && now_ns() < end) {
		if (!take(&t, &e)) {
			poll(&(struct pollfd){ .fd = t.fd, .events = POLLIN }, 1, 100);
			continue;
		}
		got++;
		if (e.slot >= ALL_DUE || e.gen != gen[e.slot])
			wrong++;
		else if (seen[e.slot]++)
			dup++;
	}
	EXPECT_EQ(ALL_DUE, got);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, dup);
	EXPECT_LT(0, t.hdr->cq_waits);
	free(seen);
	free(gen);
	table2_close(&t);
}

/* One record of @slot's generation @gen within @ms; 1 if it came. */
static int wait_record(struct table2 *t, uint32_t slot, uint64_t gen, int ms)
{
	struct htw_table2_cqe e;
	uint64_t end = now_ns() + ms * MS;

	while (now_ns() < end) {
		if (take(t, &e))
			return e.slot == slot && e.gen == gen;
		poll(&(struct pollfd){ .fd = t->fd, .events = POLLIN }, 1, 100);
	}
	return 0;
}

TEST(the_mapping_is_never_executable)
{
	struct table2 t;
	void *p;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 16));
	p = mmap(NULL, t.ts.mmap_size, PROT_READ | PROT_EXEC, MAP_SHARED, t.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, mprotect(t.map, t.ts.mmap_size, PROT_READ | PROT_WRITE | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	/* The table still works. */
	EXPECT_EQ(1, wait_record(&t, 1, arm(&t, 1, now_ns() + 2 * MS), 5000));
	table2_close(&t);
}

/*
 * A forked child has no copy of the mapping (a touch faults), while the
 * parent's stays whole and its table works.
 */
TEST(a_forked_child_does_not_inherit_the_mapping)
{
	struct table2 t;
	int status;
	pid_t pid;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 16));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile __u64 *)&t.slots[0].seq = 3;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("the child's store did not fault: status %#x", status);
	EXPECT_EQ(0, t.slots[0].seq);
	EXPECT_EQ(1, wait_record(&t, 0, arm(&t, 0, now_ns() + 2 * MS), 5000));
	table2_close(&t);
}

/* Random words all over a table's mapping, small deadlines among them. */
#define SCRIBBLE_OPS	200000
#define SCRIBBLE_NS	(2 * SEC)

static void *scribble(void *arg)
{
	struct table2 *t = arg;
	unsigned int seed = (unsigned int)(uintptr_t)pthread_self();
	uint64_t *w = (uint64_t *)t->map, end = now_ns() + SCRIBBLE_NS;
	size_t words = t->ts.mmap_size / sizeof(*w);

	for (int i = 0; i < SCRIBBLE_OPS && (i % 64 || now_ns() < end); i++) {
		uint64_t v = (uint64_t)rand_r(&seed) << 32 | rand_r(&seed);

		if (rand_r(&seed) % 2)
			v = now_ns() + v % (2 * MS);
		w[rand_r(&seed) % words] = v;
		if (i % 64 == 0)
			ioctl(t->fd, HTW_IOC_TABLE2_ENTER, 0);
	}
	return NULL;
}

/*
 * Two threads write garbage anywhere in one table's mapping and ring its
 * doorbell: another table's slot still fires once, on time and not
 * before, and the kernel log reports nothing.
 */
TEST(a_scribbler_only_confuses_its_own_table)
{
	struct table2 bad, good;
	pthread_t th[2];
	char line[256];
	uint64_t d, g;
	int i, kmsg;

	if (!htw_test_table_or_skip(_metadata))
		return;
	kmsg = htw_test_kmsg_open();
	ASSERT_EQ(0, table2_open(&bad, 1000));
	ASSERT_EQ(0, table2_open(&good, 8));
	d = now_ns() + 300 * MS;
	g = arm(&good, 5, d);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, scribble, &bad));
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(1, wait_record(&good, 5, g, 10000));
	EXPECT_LE(d, now_ns());
	table2_close(&bad);
	table2_close(&good);
	if (kmsg >= 0) {
		EXPECT_EQ(0, htw_test_kmsg_find(kmsg, line, sizeof(line)))
			TH_LOG("kernel log: %s", line);
		close(kmsg);
	}
}

/* Submit slot number @slot as it is, whatever it names. */
static void submit_raw(struct table2 *t, uint32_t slot)
{
	uint32_t tail = t->hdr->sq_tail;

	t->sq[tail & t->hdr->sq_mask] = slot;
	__atomic_store_n(&t->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

/*
 * HTW_IOC_TABLE2_STATS and the table's fdinfo count what the table cost:
 * one slot fires, one is moved later by an arm alone (then cancelled), a
 * submission names nothing.
 */
TEST(stats_count_the_kernel_work)
{
	struct htw_table_stats ts = { .flags = 1 };
	struct htw_table2_cqe e;
	struct table2 t;
	uint64_t d, g;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 8));
	EXPECT_EQ(-1, ioctl(t.fd, HTW_IOC_TABLE2_STATS, &ts));
	EXPECT_EQ(EINVAL, errno);
	d = now_ns() + 20 * MS;
	g = arm(&t, 1, d);
	arm(&t, 2, d);
	ASSERT_LE(0, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 0));
	arm(&t, 2, d + 10 * SEC);	/* later: nothing submitted */
	submit_raw(&t, 1000);
	ASSERT_LE(0, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 0));
	ASSERT_EQ(1, wait_record(&t, 1, g, 5000));
	usleep(50 * 1000);		/* slot 2's visit, at d */
	memset(&ts, 0xff, sizeof(ts));
	ts.flags = 0;
	ASSERT_EQ(0, ioctl(t.fd, HTW_IOC_TABLE2_STATS, &ts));
	EXPECT_EQ(8, ts.entries);
	EXPECT_EQ(3, ts.taken);
	EXPECT_EQ(3, ts.consumed);
	EXPECT_EQ(1, ts.fired);
	EXPECT_EQ(1, ts.moved);
	EXPECT_EQ(0, ts.budget_stops);
	EXPECT_EQ(0, ts.room_waits);
	EXPECT_LE(1, ts.runs);
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(0, ts.reserved[i]);
	EXPECT_EQ(1, t.hdr->sq_invalid);
	EXPECT_EQ((long long)ts.runs, htw_test_fdinfo(t.fd, "htw-table-runs"));
	EXPECT_EQ((long long)ts.consumed, htw_test_fdinfo(t.fd, "htw-table-consumed"));
	EXPECT_EQ((long long)ts.moved, htw_test_fdinfo(t.fd, "htw-table-moved"));
	EXPECT_EQ(1, cancel(&t, 2));
	EXPECT_EQ(0, take(&t, &e));
	table2_close(&t);
}

/* Submissions that name no slot are counted and skipped; nothing fires. */
TEST(slot_numbers_out_of_range_are_counted_and_ignored)
{
	struct htw_table2_cqe e;
	struct table2 t;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 4));
	submit_raw(&t, 4);
	submit_raw(&t, ~0U);
	submit_raw(&t, 3);	/* a valid slot, not armed: taken in, dropped */
	EXPECT_EQ(3, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 0));
	EXPECT_EQ(3, t.hdr->sq_head);
	EXPECT_EQ(2, t.hdr->sq_invalid);
	EXPECT_EQ(0, ioctl(t.fd, HTW_IOC_TABLE2_ENTER, 0));
	usleep(150 * 1000);
	EXPECT_EQ(0, take(&t, &e));
	table2_close(&t);
}

/*
 * The completion ring full (256 records of 4096 slots), the consumer
 * asleep: the slots that wait cost a run a backoff apart, not a run a
 * tick, and come once room is made, each once.
 */
TEST(a_full_ring_costs_no_run_a_tick)
{
	unsigned char seen[4096] = { 0 };
	struct htw_table2_cqe e;
	uint32_t i, ring, got = 0;
	long long runs;
	struct table2 t;
	uint64_t d, end;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, table2_open(&t, 512));
	ring = t.hdr->cq_mask + 1;
	ASSERT_EQ(256, ring);
	d = now_ns() + 2 * MS;
	for (i = 0; i < 512; i++)
		arm(&t, i, d);
	end = now_ns() + 5 * SEC;
	while (t.hdr->cq_tail < ring && now_ns() < end)
		usleep(1000);
	usleep(100 * 1000);
	EXPECT_LE(1, t.hdr->cq_waits);
	runs = htw_test_fdinfo(t.fd, "htw-table-runs");
	ASSERT_LE(0, runs);
	usleep(1000 * 1000);
	runs = htw_test_fdinfo(t.fd, "htw-table-runs") - runs;
	EXPECT_GT(100, runs)
		TH_LOG("%lld runs in a second of sleep", runs);
	end = now_ns() + 10 * SEC;
	while (got < 512 && now_ns() < end) {
		if (!take(&t, &e)) {
			poll(&(struct pollfd){ .fd = t.fd, .events = POLLIN }, 1, 10);
			continue;
		}
		ASSERT_GT(512, e.slot);
		EXPECT_EQ(0, seen[e.slot]++);
		got++;
	}
	EXPECT_EQ(512, got);
	table2_close(&t);
}

/* ---- the doorbell is bounded, and returns at a signal ---- */

#define BELL_ENTRIES	65536
#define BELL_RUN_NS	SEC
#define BELL_PUSH_NS	(5 * SEC)	/* the pusher's own bound */

struct bell {
	struct table2 t;
	pthread_t main;
	int stop;
	uint64_t signals_sent;
};

static void bell_on_signal(int sig)
{
}

/* Keep sq_tail more than a ring ahead of the kernel's head. */
static void *bell_push(void *arg)
{
	struct bell *b = arg;
	uint32_t ring = b->t.hdr->sq_mask + 1;
	uint64_t end = now_ns() + BELL_PUSH_NS;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) && now_ns() < end)
		__atomic_store_n(&b->t.hdr->sq_tail,
				 __atomic_load_n(&b->t.hdr->sq_head, __ATOMIC_ACQUIRE) +
				 2 * ring + 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A handled signal at the caller every 20 ms. */
static void *bell_signal(void *arg)
{
	struct bell *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		usleep(20 * 1000);
		pthread_kill(b->main, SIGUSR1);
		b->signals_sent++;
	}
	return NULL;
}

/*
 * HTW_IOC_TABLE2_ENTER consumes at most a ring's worth, skipped entries
 * included, and returns at a pending signal: with another thread keeping
 * sq_tail more than a ring ahead, and a handled signal every 20 ms, every
 * call returns within 100 ms, with a count or EINTR.
 */
TEST(the_doorbell_is_bounded_and_returns_at_a_signal)
{
	struct sigaction sa = { .sa_handler = bell_on_signal };	/* no SA_RESTART */
	struct bell *b = calloc(1, sizeof(*b));
	uint64_t start, t0, took, worst = 0, calls = 0, eintr = 0;
	pthread_t push, sig;
	long r;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, table2_open(&b->t, BELL_ENTRIES));
	b->main = pthread_self();
	ASSERT_EQ(0, pthread_create(&push, NULL, bell_push, b));
	ASSERT_EQ(0, pthread_create(&sig, NULL, bell_signal, b));
	for (start = now_ns(); now_ns() - start < BELL_RUN_NS; calls++) {
		t0 = now_ns();
		r = ioctl(b->t.fd, HTW_IOC_TABLE2_ENTER, 0);
		took = now_ns() - t0;
		worst = took > worst ? took : worst;
		if (r < 0) {
			EXPECT_EQ(EINTR, errno);
			eintr++;
		}
	}
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	pthread_join(push, NULL);
	pthread_join(sig, NULL);
	EXPECT_GT(100 * MS, worst)
		TH_LOG("a doorbell took %llu ms", (unsigned long long)(worst / MS));
	EXPECT_LT(0, b->t.hdr->sq_invalid);
	ksft_print_msg("%llu calls, %llu EINTR, %llu signals, longest %llu us\n",
		       (unsigned long long)calls, (unsigned long long)eintr,
		       (unsigned long long)b->signals_sent, (unsigned long long)(worst / 1000));
	signal(SIGUSR1, SIG_DFL);
	table2_close(&b->t);
	free(b);
}

/* ---- the opener's time namespace ---- */

#define NS_AHEAD_S	5000LL

/*
 * In a namespace 5000 s ahead of the host: a slot's deadline and the
 * kernel's next wake-up are on the namespace's clock.  A deadline 50 ms
 * ahead there fires after 50 ms (on the host's clock it would be 5000 s
 * in the future), and not before.  Returns 0 or the failing step.
 */
static int table_ns_checks(void)
{
	struct htw_table2_cqe e;
	uint64_t d, start, g, end;
	struct table2 t;

	if (table2_open(&t, 4))
		return 1;
	start = now_ns();
	d = start + 50 * MS;
	g = arm(&t, 1, d);
	/* Within a tick of the deadline, on our clock: not the host's. */
	if (t.hdr->next_wakeup_ns < d || t.hdr->next_wakeup_ns > d + 20 * MS)
		return 3;
	end = start + 4 * SEC;
	while (!take(&t, &e) && now_ns() < end)
		poll(&(struct pollfd){ .fd = t.fd, .events = POLLIN }, 1, 100);
	if (now_ns() >= end)
		return 4;
	if (e.slot != 1 || e.gen != g || now_ns() < d)
		return 5;
	table2_close(&t);
	return 0;
}

TEST(times_are_on_the_openers_time_namespace)
{
	int status, r;
	pid_t pid;

	if (!htw_test_table_or_skip(_metadata))
		return;
	if (getuid())
		SKIP(return, "needs root for a time namespace");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(htw_test_in_time_ns(NS_AHEAD_S * 1000000000LL,
					  NS_AHEAD_S * 1000000000LL, table_ns_checks));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	r = WEXITSTATUS(status);
	if (r == HTW_TEST_NS_UNSUPPORTED)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	EXPECT_EQ(0, r) TH_LOG("step %d failed", r);
}

TEST_HARNESS_MAIN
