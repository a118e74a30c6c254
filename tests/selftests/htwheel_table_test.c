// SPDX-License-Identifier: GPL-2.0
/*
 * The shared timer table from user space: HTW_IOC_TABLE_SETUP and its
 * refusals, the mapping, arming, moving later without a system call,
 * cancelling by a store, the completion ring and its back-pressure, the
 * wake-ups, a two-thread fire/re-arm/cancel stress in which every arming
 * ends exactly once, and a scribbler that writes garbage all over its own
 * table while another file's timers must keep working.  Written against
 * include/uapi/linux/htwheel.h and Documentation/userspace-api/htwheel.rst
 * only; the slot protocol is spelt out here with the compiler's atomics.
 *
 * Timing is asserted only in the direction that cannot flake: nothing
 * fires before its deadline; lateness is bounded only by generous waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define QUIET_MS	150

/* A file with a table, mapped, and where its parts are. */
struct table {
	int fd;
	struct htw_table_setup ts;
	void *map;
	struct htw_table_header *hdr;
	struct htw_table_slot *slots;
	uint32_t *sq;
	struct htw_table_cqe *cq;
	uint32_t cq_head;	/* this side's copy */
};

static int table_open(struct table *t, uint32_t entries)
{
	memset(t, 0, sizeof(*t));
	t->fd = htw_test_open(0);
	if (t->fd < 0)
		return -1;
	t->ts.entries = entries;
	if (ioctl(t->fd, HTW_IOC_TABLE_SETUP, &t->ts))
		return -1;
	t->map = mmap(NULL, t->ts.mmap_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, t->fd, 0);
	if (t->map == MAP_FAILED)
		return -1;
	t->hdr = t->map;
	t->slots = (void *)((char *)t->map + t->ts.slots_off);
	t->sq = (void *)((char *)t->map + t->ts.sq_off);
	t->cq = (void *)((char *)t->map + t->ts.cq_off);
	return 0;
}

static void table_close(struct table *t)
{
	if (t->map && t->map != MAP_FAILED)
		munmap(t->map, t->ts.mmap_size);
	if (t->fd >= 0)
		close(t->fd);
}

static uint64_t now_ns(void)
{
	return htw_test_now(CLOCK_MONOTONIC);
}

/* Put @slot on the submission ring; ring the doorbell if @deadline needs it. */
static int table_push(struct table *t, uint32_t slot, uint64_t deadline)
{
	uint32_t tail = t->hdr->sq_tail;

	if (tail - __atomic_load_n(&t->hdr->sq_head, __ATOMIC_ACQUIRE) >
	    t->hdr->sq_mask) {
		if (ioctl(t->fd, HTW_IOC_TABLE_ENTER, 0) < 0)
			return -1;
	}
	t->sq[tail & t->hdr->sq_mask] = slot;
	__atomic_store_n(&t->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (deadline < __atomic_load_n(&t->hdr->next_wakeup_ns, __ATOMIC_RELAXED))
		return ioctl(t->fd, HTW_IOC_TABLE_ENTER, 0) < 0 ? -1 : 0;
	return 0;
}

/* Arm or move @slot to @deadline; returns the old deadline. */
static uint64_t table_arm(struct table *t, uint32_t slot, uint64_t deadline)
{
	uint64_t old = __atomic_exchange_n(&t->slots[slot].deadline_ns,
					   deadline, __ATOMIC_SEQ_CST);

	if ((!old || deadline < old) && table_push(t, slot, deadline))
		return ~0ULL;
	return old;
}

static uint64_t table_cancel(struct table *t, uint32_t slot)
{
	return __atomic_exchange_n(&t->slots[slot].deadline_ns, 0,
				   __ATOMIC_SEQ_CST);
}

/* Records written and not consumed yet. */
static uint32_t table_ready(struct table *t)
{
	return __atomic_load_n(&t->hdr->cq_tail, __ATOMIC_ACQUIRE) - t->cq_head;
}

static void table_take(struct table *t, struct htw_table_cqe *out)
{
	*out = t->cq[t->cq_head & t->hdr->cq_mask];
	t->cq_head++;
	__atomic_store_n(&t->hdr->cq_head, t->cq_head, __ATOMIC_RELEASE);
}

/* Wait up to @ms for a record; 1 if one came. */
static int table_wait(struct table *t, int ms)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	uint64_t end = now_ns() + (uint64_t)ms * MS;

	while (!table_ready(t)) {
		int left = (int)(((int64_t)(end - now_ns())) / (int64_t)MS);

		if ((int64_t)(end - now_ns()) <= 0)
			return 0;
		poll(&p, 1, left > 0 ? left : 1);
	}
	return 1;
}

TEST(setup_answers_the_layout)
{
	struct table t;

	ASSERT_EQ(0, table_open(&t, 100));
	EXPECT_EQ(100, t.ts.entries);
	EXPECT_EQ(128, t.ts.sq_entries);
	EXPECT_EQ(128, t.ts.cq_entries);
	EXPECT_EQ(0, t.ts.mmap_size % sysconf(_SC_PAGESIZE));
	EXPECT_GE(t.ts.slots_off, sizeof(struct htw_table_header));
	EXPECT_GE(t.ts.sq_off, t.ts.slots_off + 100 * sizeof(struct htw_table_slot));
	EXPECT_GE(t.ts.cq_off, t.ts.sq_off + 128 * sizeof(uint32_t));
	EXPECT_GE(t.ts.mmap_size, t.ts.cq_off + 128 * sizeof(struct htw_table_cqe));
	EXPECT_EQ(100, t.hdr->entries);
	EXPECT_EQ(127, t.hdr->sq_mask);
	EXPECT_EQ(127, t.hdr->cq_mask);
	EXPECT_EQ(~0ULL, t.hdr->next_wakeup_ns);
	EXPECT_EQ(0, t.hdr->sq_head);
	EXPECT_EQ(0, t.hdr->cq_tail);
	EXPECT_EQ(0, t.slots[99].deadline_ns);
	table_close(&t);
}

TEST(api_reports_the_table)
{
	struct htw_api api = { .api = HTW_API_VERSION,
			       .features = HTW_FEATURE_TABLE };
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_API, &api));
	EXPECT_TRUE(api.features & HTW_FEATURE_TABLE);
	EXPECT_TRUE(api.ioctls & (1ULL << _IOC_NR(HTW_IOC_TABLE_SETUP)));
	EXPECT_TRUE(api.ioctls & (1ULL << _IOC_NR(HTW_IOC_TABLE_ENTER)));
	EXPECT_TRUE(api.ioctls & (1ULL << _IOC_NR(HTW_IOC_TABLE_STATS)));
	close(fd);
}

/*
 * HTW_IOC_TABLE_STATS: ENODEV without a table, EINVAL for flags; then the
 * counts of what happened, equal to fdinfo's and the header's.
 */
TEST(table_stats_count_the_kernel_work)
{
	struct htw_table_stats ts = { 0 };
	struct htw_table_cqe e;
	struct table t;
	int fd = htw_test_open(0);
	uint64_t d;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_STATS, &ts));
	EXPECT_EQ(ENODEV, errno);
	close(fd);
	ASSERT_EQ(0, table_open(&t, 8));
	ts.flags = 1;
	EXPECT_EQ(-1, ioctl(t.fd, HTW_IOC_TABLE_STATS, &ts));
	EXPECT_EQ(EINVAL, errno);
	/* One slot fires; one is moved later by a store, then cancelled. */
	d = now_ns() + 20 * MS;
	ASSERT_EQ(0, table_arm(&t, 1, d));
	ASSERT_EQ(0, table_arm(&t, 2, d));
	ASSERT_EQ(d, table_arm(&t, 2, d + 10 * 1000 * MS));
	t.sq[t.hdr->sq_tail & t.hdr->sq_mask] = 1000;	/* names nothing */
	__atomic_store_n(&t.hdr->sq_tail, t.hdr->sq_tail + 1, __ATOMIC_RELEASE);
	ASSERT_LE(0, ioctl(t.fd, HTW_IOC_TABLE_ENTER, 0));
	ASSERT_EQ(1, table_wait(&t, 5000));
	table_take(&t, &e);
	EXPECT_EQ(1, e.slot);
	memset(&ts, 0xff, sizeof(ts));
	ts.flags = 0;
	ASSERT_EQ(0, ioctl(t.fd, HTW_IOC_TABLE_STATS, &ts));
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
	EXPECT_EQ(t.hdr->sq_invalid, 1);
	EXPECT_EQ((long long)ts.runs, htw_test_fdinfo(t.fd, "htw-table-runs"));
	EXPECT_EQ((long long)ts.consumed, htw_test_fdinfo(t.fd, "htw-table-consumed"));
	EXPECT_EQ((long long)ts.moved, htw_test_fdinfo(t.fd, "htw-table-moved"));
	EXPECT_EQ(0, htw_test_fdinfo(t.fd, "htw-table-budget-stops"));
	EXPECT_EQ(0, htw_test_fdinfo(t.fd, "htw-table-room-waits"));
	table_cancel(&t, 2);
	table_close(&t);
}

TEST(setup_refusals_change_nothing)
{
	struct htw_table_setup ts = { .entries = 8 };
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC };
	unsigned long maxp;
	int fd;

	fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
	EXPECT_EQ(EBADFD, errno);
	close(fd);

	fd = htw_test_open(0);
	ASSERT_LE(0, fd);
	ts.entries = 0;
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
	EXPECT_EQ(EINVAL, errno);
	ts.entries = 8;
	ts.flags = 1;
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
	EXPECT_EQ(EINVAL, errno);
	ts.flags = 0;
	ts.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
	EXPECT_EQ(EINVAL, errno);
	ts.reserved[1] = 0;
	if (!htw_test_get_param("max_pending", &maxp) && maxp < UINT32_MAX) {
		ts.entries = maxp + 1;
		EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
		EXPECT_EQ(EINVAL, errno);
	}
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* Nothing was made: no mapping, no doorbell, setup still open. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_ENTER, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));

	ts.entries = 8;
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_SETUP, &ts));
	EXPECT_EQ(EBUSY, errno);
	/* The table fixed the geometry, as a first schedule does. */
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_SETUP, &setup));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_TABLE_ENTER, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ioctl(fd, HTW_IOC_TABLE_ENTER, 0));
	close(fd);
}

TEST(mmap_refusals)
{
	struct table t;
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	ASSERT_EQ(0, table_open(&t, 16));
	p = mmap(NULL, t.ts.mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 t.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, t.fd, page);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, t.ts.mmap_size + page, PROT_READ, MAP_SHARED, t.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* A second mapping is the same memory. */
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, t.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	t.slots[3].cookie = 77;
	EXPECT_EQ(77, ((struct htw_table_slot *)((char *)p + t.ts.slots_off))[3].cookie);
	munmap(p, page);
	table_close(&t);
}

/* Data, never code: neither mapped executable nor made so later. */
TEST(the_mapping_is_never_executable)
{
	struct table t;
	void *p;

	ASSERT_EQ(0, table_open(&t, 16));
	p = mmap(NULL, t.ts.mmap_size, PROT_READ | PROT_EXEC, MAP_SHARED,
		 t.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, mprotect(t.map, t.ts.mmap_size,
			       PROT_READ | PROT_WRITE | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(t.map, t.ts.mmap_size, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	/* The table still works. */
	t.slots[1].cookie = 5;
	EXPECT_EQ(0, table_arm(&t, 1, now_ns() + 2 * MS));
	EXPECT_EQ(1, table_wait(&t, 5000));
	table_close(&t);
}

/*
 * A forked child has no copy of the mapping (its pages are not there: a
 * touch faults), while the parent's stays whole.
 */
TEST(a_forked_child_does_not_inherit_the_mapping)
{
	struct table t;
	pid_t pid;
	int status;

	ASSERT_EQ(0, table_open(&t, 16));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile __u64 *)&t.slots[0].deadline_ns = 1;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
		TH_LOG("the child's store did not fault: status %#x", status);
	}
	EXPECT_EQ(0, t.slots[0].deadline_ns);
	t.slots[0].cookie = 9;
	EXPECT_EQ(0, table_arm(&t, 0, now_ns() + 2 * MS));
	EXPECT_EQ(1, table_wait(&t, 5000));
	table_close(&t);
}

TEST(an_armed_slot_fires_once_into_the_ring)
{
	struct htw_table_cqe e;
	struct htw_stats st;
	struct table t;
	uint64_t d, seen;
	char buf[sizeof(struct htw_expiry)];

	ASSERT_EQ(0, table_open(&t, 8));
	d = now_ns() + 20 * MS;
	t.slots[3].cookie = 0xc0ffee;
	ASSERT_EQ(0, table_arm(&t, 3, d));
	/* Idle before, so the push needed the doorbell: it was taken in. */
	EXPECT_EQ(1, t.hdr->sq_head);
	ASSERT_EQ(1, table_wait(&t, 5000));
	seen = now_ns();
	EXPECT_EQ(1, table_ready(&t));
	table_take(&t, &e);
	EXPECT_EQ(3, e.slot);
	EXPECT_EQ(0, e.flags);
	EXPECT_EQ(0xc0ffee, e.cookie);
	EXPECT_EQ(d, e.deadline_ns);
	EXPECT_GE(e.expired_ns, d);
	EXPECT_GE(seen, d);
	/* Claimed: the slot is disarmed, and a cancel now says so. */
	EXPECT_EQ(0, t.slots[3].deadline_ns);
	EXPECT_EQ(0, table_cancel(&t, 3));
	/* The statistics count the table apart from the handle timers. */
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, ioctl(t.fd, HTW_IOC_STATS, &st));
	EXPECT_EQ(8, st.table_entries);
	EXPECT_EQ(1, st.table_taken);
	EXPECT_EQ(1, st.table_fired);
	EXPECT_EQ(0, st.fired);
	EXPECT_EQ(0, st.scheduled);
	EXPECT_EQ(0, st.reserved);
	/* Table records are not read()'s. */
	fcntl(t.fd, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, read(t.fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, table_wait(&t, QUIET_MS));
	table_close(&t);
}

TEST(a_later_deadline_is_a_store_and_fires_later)
{
	struct htw_table_cqe e;
	struct table t;
	uint64_t d1, d2;
	uint32_t taken;

	ASSERT_EQ(0, table_open(&t, 4));
	d1 = now_ns() + 30 * MS;
	d2 = d1 + 200 * MS;
	ASSERT_EQ(0, table_arm(&t, 1, d1));
	taken = t.hdr->sq_head;
	/* Later: no push, no system call. */
	EXPECT_EQ(d1, table_arm(&t, 1, d2));
	EXPECT_EQ(taken, t.hdr->sq_tail);
	EXPECT_EQ(0, table_wait(&t, 100));
	EXPECT_LT(now_ns(), d2);
	ASSERT_EQ(1, table_wait(&t, 5000));
	table_take(&t, &e);
	EXPECT_EQ(1, e.slot);
	EXPECT_EQ(d2, e.deadline_ns);
	EXPECT_GE(e.expired_ns, d2);
	EXPECT_GE(now_ns(), d2);
	table_close(&t);
}

TEST(an_earlier_deadline_is_pushed_and_fires_early_enough)
{
	struct htw_table_cqe e;
	struct table t;
	uint64_t d1, d2;

	ASSERT_EQ(0, table_open(&t, 4));
	d1 = now_ns() + 60000 * MS;
	ASSERT_EQ(0, table_arm(&t, 2, d1));
	d2 = now_ns() + 20 * MS;
	EXPECT_EQ(d1, table_arm(&t, 2, d2));
	ASSERT_EQ(1, table_wait(&t, 5000));
	table_take(&t, &e);
	EXPECT_EQ(2, e.slot);
	EXPECT_EQ(d2, e.deadline_ns);
	EXPECT_GE(e.expired_ns, d2);
	table_close(&t);
}

TEST(a_cancelled_slot_never_fires)
{
	struct table t;
	uint64_t d;

	ASSERT_EQ(0, table_open(&t, 4));
	d = now_ns() + 30 * MS;
	ASSERT_EQ(0, table_arm(&t, 0, d));
	EXPECT_EQ(d, table_cancel(&t, 0));
	EXPECT_EQ(0, table_wait(&t, QUIET_MS));
	EXPECT_EQ(0, t.hdr->cq_tail);
	/* Armed again after the cancel: the old position must not fire it early. */
	d = now_ns() + 100 * MS;
	ASSERT_EQ(0, table_arm(&t, 0, d));
	ASSERT_EQ(1, table_wait(&t, 5000));
	EXPECT_GE(now_ns(), d);
	EXPECT_GE(t.cq[0].expired_ns, d);
	table_close(&t);
}

TEST(the_eventfd_and_epoll_see_table_records)
{
	struct htw_eventfd req = { .fd = -1 };
	struct pollfd p;
	struct table t;
	uint64_t v;

	ASSERT_EQ(0, table_open(&t, 4));
	req.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, req.fd);
	ASSERT_EQ(0, ioctl(t.fd, HTW_IOC_SET_EVENTFD, &req));
	p.fd = t.fd;
	p.events = POLLIN;
	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, table_arm(&t, 1, now_ns() + 10 * MS));
	p.fd = req.fd;
	ASSERT_EQ(1, poll(&p, 1, 5000));
	ASSERT_EQ(sizeof(v), read(req.fd, &v, sizeof(v)));
	EXPECT_GE(v, 1);
	p.fd = t.fd;
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(1, table_ready(&t));
	/* Consumed: not readable any more. */
	t.cq_head = 1;
	__atomic_store_n(&t.hdr->cq_head, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, poll(&p, 1, 0));
	close(req.fd);
	table_close(&t);
}

TEST(a_full_completion_ring_loses_nothing)
{
	struct htw_table_cqe e;
	struct table t;
	uint64_t d;
	int i, seen[2] = {};

	ASSERT_EQ(0, table_open(&t, 2));
	ASSERT_EQ(2, t.ts.cq_entries);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, table_arm(&t, i, now_ns() + 5 * MS));
	usleep(100 * 1000);
	ASSERT_EQ(2, table_ready(&t));
	/* Both fired and unread; arm them again: no room for their records. */
	d = now_ns() + 5 * MS;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, table_arm(&t, i, d));
	usleep(100 * 1000);
	EXPECT_EQ(2, table_ready(&t));
	EXPECT_LT(0, t.hdr->cq_waits);
	EXPECT_EQ(d, t.slots[0].deadline_ns);	/* still armed, waiting */
	table_take(&t, &e);
	table_take(&t, &e);
	ASSERT_EQ(1, table_wait(&t, 5000));
	usleep(50 * 1000);
	ASSERT_EQ(2, table_ready(&t));
	for (i = 0; i < 2; i++) {
		table_take(&t, &e);
		ASSERT_GT(2, e.slot);
		seen[e.slot]++;
		EXPECT_EQ(d, e.deadline_ns);
	}
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);
	table_close(&t);
}


/*
 * A process that leaves its completion ring full, with slots waiting for
 * room, and sleeps: the kernel looks again a backoff later (1 ms, doubling
 * to 128 ms), not at every tick.  Fewer than 100 runs of the table's
 * timer in a second of sleep (a run a tick would be 1000).  Then the
 * consumer makes room and polls: the waiting slot fires, its record
 * intact, within a few ticks.
 */
TEST(a_full_ring_costs_no_run_a_tick)
{
	struct htw_table_cqe e;
	struct table t;
	long long runs;
	uint64_t d;
	uint32_t i, ring;

	ASSERT_EQ(0, table_open(&t, 16));
	ring = t.hdr->cq_mask + 1;
	d = now_ns() + 2 * MS;
	for (i = 0; i < ring; i++)
		ASSERT_EQ(0, table_arm(&t, i, d));
	for (i = 0; i < 2000 && table_ready(&t) < ring; i++)
		usleep(1000);
	ASSERT_EQ(ring, table_ready(&t));
	/* Armed again, due, and no room: it waits. */
	t.slots[0].cookie = 42;
	d = now_ns() + 2 * MS;
	ASSERT_EQ(0, table_arm(&t, 0, d));
	usleep(100 * 1000);
	EXPECT_LE(1, t.hdr->cq_waits);
	runs = htw_test_fdinfo(t.fd, "htw-table-runs");
	ASSERT_LE(0, runs);
	usleep(1000 * 1000);
	runs = htw_test_fdinfo(t.fd, "htw-table-runs") - runs;
	EXPECT_GT(100, runs) {
		TH_LOG("%lld runs in a second of sleep", runs);
	}
	table_take(&t, &e);
	for (i = 0; i < 5000 && table_ready(&t) < ring; i++) {
		struct pollfd p = { .fd = t.fd, .events = POLLIN };

		poll(&p, 1, 1);
		usleep(1000);
	}
	EXPECT_EQ(ring, table_ready(&t));
	for (i = 1; i < ring; i++)
		table_take(&t, &e);
	table_take(&t, &e);
	EXPECT_EQ(0, e.slot);
	EXPECT_EQ(42, e.cookie);
	EXPECT_EQ(d, e.deadline_ns);
	TH_LOG("%lld runs in a second of sleep", runs);
	table_close(&t);
}

TEST(slot_numbers_out_of_range_are_counted_and_ignored)
{
	struct table t;

	ASSERT_EQ(0, table_open(&t, 4));
	t.sq[0] = 4;
	t.sq[1] = ~0U;
	t.sq[2] = 3;	/* a valid slot, disarmed: taken in and dropped */
	__atomic_store_n(&t.hdr->sq_tail, 3, __ATOMIC_RELEASE);
	EXPECT_EQ(3, ioctl(t.fd, HTW_IOC_TABLE_ENTER, 0));
	EXPECT_EQ(3, t.hdr->sq_head);
	EXPECT_EQ(2, t.hdr->sq_invalid);
	EXPECT_EQ(0, ioctl(t.fd, HTW_IOC_TABLE_ENTER, 0));
	EXPECT_EQ(0, table_wait(&t, QUIET_MS));
	table_close(&t);
}

/* ---- two threads: every arming ends fired xor cancelled ---- */

#define STRESS_SLOTS	256
#define STRESS_OPS	200000
/*
 * The stress loops end at their count or after this long, whichever comes
 * first: on a busy machine (UML under load) the count alone outlasted the
 * harness's 30 s timeout.  The checks hold for any number of operations.
 */
#define STRESS_BUDGET_NS	(8ULL * 1000 * 1000 * 1000)

struct stress {
	struct table t;
	uint64_t armings[STRESS_SLOTS];	/* producer's */
	uint64_t cancels[STRESS_SLOTS];	/* producer's */
	uint64_t fired[STRESS_SLOTS];	/* consumer's */
	uint64_t early;			/* consumer's */
	int stop;
	int failed;
};

static void *stress_consumer(void *arg)
{
	struct stress *s = arg;
	struct htw_table_cqe e;
	uint64_t seen;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) || table_ready(&s->t)) {
		if (!table_wait(&s->t, 10))
			continue;
		seen = now_ns();
		table_take(&s->t, &e);
		if (e.slot >= STRESS_SLOTS || e.expired_ns < e.deadline_ns ||
		    seen < e.deadline_ns)
			s->early++;
		else
			__atomic_add_fetch(&s->fired[e.slot], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* One step of the producer: arm, move or cancel a random slot. */
static void stress_step(struct stress *s, unsigned int *seed)
{
	uint32_t slot = rand_r(seed) % STRESS_SLOTS;
	uint64_t old;

	if (rand_r(seed) % 4 == 0) {
		if (table_cancel(&s->t, slot))
			s->cancels[slot]++;
		return;
	}
	old = table_arm(&s->t, slot, now_ns() + (rand_r(seed) % 3000) * 1000);
	if (old == ~0ULL)
		s->failed = 1;
	else if (!old)
		s->armings[slot]++;
}

TEST(two_threads_every_arming_ends_once)
{
	struct stress *s = calloc(1, sizeof(*s));
	unsigned int seed = 1;
	uint64_t done, want, total_fired = 0, end;
	pthread_t cons;
	int i, ops, tries;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, table_open(&s->t, STRESS_SLOTS));
	ASSERT_EQ(0, pthread_create(&cons, NULL, stress_consumer, s));
	end = now_ns() + STRESS_BUDGET_NS;
	for (ops = 0; ops < STRESS_OPS && !s->failed && now_ns() < end; ops++)
		stress_step(s, &seed);
	for (i = 0; i < STRESS_SLOTS; i++)
		if (table_cancel(&s->t, i))
			s->cancels[i]++;
	/* What had fired before the last cancels is in the ring, or on its way. */
	for (tries = 0; tries < 500; tries++) {
		done = want = 0;
		for (i = 0; i < STRESS_SLOTS; i++) {
			done += __atomic_load_n(&s->fired[i], __ATOMIC_RELAXED) +
				s->cancels[i];
			want += s->armings[i];
		}
		if (done >= want)
			break;
		usleep(10 * 1000);
	}
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(cons, NULL);
	EXPECT_EQ(0, s->failed);
	EXPECT_EQ(0, s->early);
	for (i = 0; i < STRESS_SLOTS; i++) {
		EXPECT_EQ(s->armings[i], s->fired[i] + s->cancels[i]) {
			TH_LOG("slot %d: %llu armings, %llu fired, %llu cancelled",
			       i, (unsigned long long)s->armings[i],
			       (unsigned long long)s->fired[i],
			       (unsigned long long)s->cancels[i]);
		}
		total_fired += s->fired[i];
	}
	/* The run has to have exercised both endings. */
	EXPECT_LT(100, total_fired);
	TH_LOG("%d operations: %llu fired", ops, (unsigned long long)total_fired);
	table_close(&s->t);
	free(s);
}

/* ---- a scribbler confuses only its own timers ---- */

static void *scribble(void *arg)
{
	struct table *t = arg;
	unsigned int seed = (unsigned int)(uintptr_t)pthread_self();
	uint64_t *w = t->map;
	size_t words = t->ts.mmap_size / sizeof(*w);
	uint64_t end = now_ns() + STRESS_BUDGET_NS;
	int i;

	for (i = 0; i < STRESS_OPS && (i % 64 || now_ns() < end); i++) {
		uint64_t v = (uint64_t)rand_r(&seed) << 32 | rand_r(&seed);

		/* Small deadlines too, so that slots fire and rings move. */
		if (rand_r(&seed) % 2)
			v = now_ns() + v % (2 * MS);
		w[rand_r(&seed) % words] = v;
		if (i % 64 == 0)
			ioctl(t->fd, HTW_IOC_TABLE_ENTER, 0);
	}
	return NULL;
}

TEST(a_scribbler_only_confuses_its_own_table)
{
	struct htw_timer_entry e[64];
	struct htw_expiry rec[64];
	struct table bad, good;
	pthread_t th[2];
	uint64_t start, d;
	int i, n = 0, kmsg;
	char line[256];
	ssize_t got;

	kmsg = htw_test_kmsg_open();
	ASSERT_EQ(0, table_open(&bad, 1000));
	ASSERT_EQ(0, table_open(&good, 8));
	/* The other file: 64 handle timers and one table slot. */
	start = now_ns();
	ASSERT_EQ(64, htw_test_schedule_all(good.fd, e, 64, 300 * MS));
	d = start + 300 * MS;
	ASSERT_EQ(0, table_arm(&good, 5, d));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, scribble, &bad));
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	while (n < 64) {
		struct pollfd p = { .fd = good.fd, .events = POLLIN };

		ASSERT_EQ(1, poll(&p, 1, 10000));
		got = read(good.fd, rec, sizeof(rec));
		ASSERT_LT(0, got);
		for (i = 0; i < got / (ssize_t)sizeof(rec[0]); i++)
			EXPECT_GE(rec[i].expired_ns, start + 300 * MS);
		n += got / sizeof(rec[0]);
	}
	EXPECT_EQ(64, n);
	ASSERT_EQ(1, table_wait(&good, 10000));
	EXPECT_EQ(5, good.cq[0].slot);
	EXPECT_EQ(d, good.cq[0].deadline_ns);
	EXPECT_GE(now_ns(), d);
	table_close(&bad);
	table_close(&good);
	if (kmsg >= 0) {
		EXPECT_EQ(0, htw_test_kmsg_find(kmsg, line, sizeof(line))) {
			TH_LOG("kernel log: %s", line);
		}
		close(kmsg);
	}
}

/* ---- the doorbell is bounded, and returns at a signal ---- */

#define BELL_ENTRIES	65536
#define BELL_RUN_NS	(1000ULL * MS)
#define BELL_PUSH_NS	(5000ULL * MS)	/* the pusher's own bound */

struct bell {
	struct table t;
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
 * HTW_IOC_TABLE_ENTER consumes at most a ring's worth, skipped entries
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

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, table_open(&b->t, BELL_ENTRIES));
	b->main = pthread_self();
	ASSERT_EQ(0, pthread_create(&push, NULL, bell_push, b));
	ASSERT_EQ(0, pthread_create(&sig, NULL, bell_signal, b));
	for (start = now_ns(); now_ns() - start < BELL_RUN_NS; calls++) {
		t0 = now_ns();
		r = ioctl(b->t.fd, HTW_IOC_TABLE_ENTER, 0);
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
	EXPECT_GT(100 * MS, worst) {
		TH_LOG("a doorbell took %llu ms", (unsigned long long)(worst / MS));
	}
	EXPECT_LT(0, b->t.hdr->sq_invalid);
	TH_LOG("%llu calls, %llu EINTR, %llu signals, longest %llu us",
	       (unsigned long long)calls, (unsigned long long)eintr,
	       (unsigned long long)b->signals_sent,
	       (unsigned long long)(worst / 1000));
	signal(SIGUSR1, SIG_DFL);
	table_close(&b->t);
	free(b);
}

/* ---- the opener's time namespace ---- */

#define NS_AHEAD_S	5000LL

/*
 * In a namespace 5000 s ahead of the host: a slot's deadline, the kernel's
 * next wake-up and the record's times are all on the namespace's clock.
 * A deadline 50 ms ahead there fires after 50 ms (on the host's clock it
 * would be 5000 s in the future).  Returns 0 or the failing step.
 */
static int table_ns_checks(void)
{
	struct htw_table_cqe e;
	struct table t;
	uint64_t d, start;

	if (table_open(&t, 4))
		return 1;
	start = now_ns();
	d = start + 50 * MS;
	if (table_arm(&t, 1, d))
		return 2;
	/* Within a tick of the deadline, on our clock: not the host's. */
	if (t.hdr->next_wakeup_ns < d || t.hdr->next_wakeup_ns > d + 20 * MS)
		return 3;
	if (!table_wait(&t, 5000))
		return 4;
	table_take(&t, &e);
	if (e.slot != 1 || e.deadline_ns != d || e.expired_ns < d ||
	    e.expired_ns > now_ns() || now_ns() < d)
		return 5;
	if (now_ns() - start > 4000 * MS)
		return 6;
	table_close(&t);
	return 0;
}

TEST(times_are_on_the_openers_time_namespace)
{
	int status, r;
	pid_t pid;

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
