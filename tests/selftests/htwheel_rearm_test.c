// SPDX-License-Identifier: GPL-2.0
/*
 * HTW_IOC_REARM from user space: moving pending timers later and earlier,
 * taking back an expired one-shot's unread record, the handles it does not
 * know, periodic and absolute re-arms, and every refused request.  Written
 * against include/uapi/linux/htwheel.h and
 * Documentation/userspace-api/htwheel.rst only.
 *
 * Timing is asserted only in the direction that cannot flake: a timer
 * never fires before the deadline it was moved to, and its record reports
 * exactly that deadline.  Lateness is bounded only by generous timeouts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

/* The REQ() helper below overrides designated defaults on purpose. */
#pragma GCC diagnostic ignored "-Woverride-init"

#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)
/* A result the kernel never writes: tells which entries it wrote. */
#define NO_RESULT	0xccccccccU
/* How long a timer that must not fire is given to prove it does not. */
#define QUIET_MS	150

static uint64_t schedule_timer(int fd, uint64_t cookie, uint64_t delay,
			       uint64_t period)
{
	struct htw_timer_entry e = {
		.cookie = cookie, .expires = delay, .period_ns = period,
	};
	struct htw_schedule req = { .entries = (uintptr_t)&e, .count = 1 };

	if (ioctl(fd, HTW_IOC_SCHEDULE, &req) != 1)
		return 0;
	return e.handle;
}

static void rearm_entry(struct htw_rearm_entry *e, uint64_t handle,
			uint64_t expires, uint32_t flags)
{
	e->handle = handle;
	e->expires = expires;
	e->flags = flags;
	e->result = NO_RESULT;
}

/* The ioctl's return value; *@rearmed gets the count it wrote. */
static int rearm(int fd, struct htw_rearm_entry *e, uint32_t n,
		 uint32_t *rearmed)
{
	struct htw_rearm req = {
		.entries = (uintptr_t)e, .count = n, .rearmed = NO_RESULT,
	};
	int ret = ioctl(fd, HTW_IOC_REARM, &req);

	if (rearmed)
		*rearmed = req.rearmed;
	return ret;
}

/* One relative re-arm; its result, or NO_RESULT if the ioctl failed. */
static uint32_t rearm_one(int fd, uint64_t handle, uint64_t delay)
{
	struct htw_rearm_entry e;

	rearm_entry(&e, handle, delay, 0);
	return rearm(fd, &e, 1, NULL) ? NO_RESULT : e.result;
}

static int readable_within(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms);
}

/* One record, waiting up to 10 s for it; 0 if none came. */
static int read_record(int fd, struct htw_expiry *rec)
{
	if (readable_within(fd, 10000) != 1)
		return 0;
	return read(fd, rec, sizeof(*rec)) == sizeof(*rec);
}

static int stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, HTW_IOC_STATS, st);
}

FIXTURE(wheel) {
	int fd;
};

FIXTURE_SETUP(wheel)
{
	self->fd = htw_test_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd) TH_LOG("open+handshake: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

TEST(before_handshake_ebadfd)
{
	struct htw_rearm_entry e;
	int fd = open("/dev/htwheel", O_RDWR | O_NONBLOCK);

	ASSERT_LE(0, fd);
	rearm_entry(&e, 1, MS, 0);
	EXPECT_EQ(-1, rearm(fd, &e, 1, NULL));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(NO_RESULT, e.result);
	close(fd);
}

TEST(handshake_lists_rearm)
{
	struct htw_api api = { .api = HTW_API_VERSION };
	int fd = open("/dev/htwheel", O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_API, &api));
	EXPECT_NE(0, api.ioctls & (1ULL << _IOC_NR(HTW_IOC_REARM)));
	close(fd);
}

/*
 * Moved later, the timer fires at the new time and not at the old one: the
 * one record arrives no earlier than the new deadline and reports it.  A
 * re-arm that returned after the old deadline may have found the timer
 * fired (its record is then withdrawn): either way it fires only anew.
 */
TEST_F(wheel, pending_moved_later_fires_at_the_new_time)
{
	const uint64_t old_delay = 100 * MS, new_delay = 300 * MS;
	uint64_t t0, handle, before, after;
	struct htw_rearm_entry e;
	struct htw_expiry rec;
	uint32_t rearmed;

	t0 = htw_test_now(CLOCK_MONOTONIC);
	handle = schedule_timer(self->fd, 7, old_delay, 0);
	ASSERT_NE(0, handle);
	rearm_entry(&e, handle, new_delay, 0);
	before = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, rearm(self->fd, &e, 1, &rearmed));
	after = htw_test_now(CLOCK_MONOTONIC);
	if (after < t0 + old_delay) {
		EXPECT_EQ(HTW_REARMED, e.result);
		EXPECT_EQ(1, rearmed);
	} else {
		TH_LOG("re-arm returned %llu ns after the schedule, past the old deadline",
		       (unsigned long long)(after - t0));
		EXPECT_TRUE(e.result == HTW_REARMED || e.result == HTW_REARM_FIRED);
		EXPECT_EQ(e.result == HTW_REARMED, rearmed);
	}
	ASSERT_TRUE(read_record(self->fd, &rec));
	EXPECT_LE(before + new_delay, htw_test_now(CLOCK_MONOTONIC));
	EXPECT_EQ(7, rec.cookie);
	EXPECT_EQ(handle, rec.handle);
	EXPECT_LE(before + new_delay, rec.deadline_ns);
	EXPECT_GE(after + new_delay, rec.deadline_ns);
	EXPECT_LE(rec.deadline_ns, rec.expired_ns);
	EXPECT_EQ(0, rec.flags);
	/* One record: the old deadline left nothing behind. */
	EXPECT_EQ(0, readable_within(self->fd, QUIET_MS));
}

TEST_F(wheel, pending_moved_earlier_fires_at_the_new_time)
{
	uint64_t handle, before, after;
	struct htw_rearm_entry e;
	struct htw_expiry rec;
	struct htw_stats st;
	uint32_t rearmed;

	handle = schedule_timer(self->fd, 8, HOUR, 0);
	ASSERT_NE(0, handle);
	rearm_entry(&e, handle, 20 * MS, 0);
	before = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, rearm(self->fd, &e, 1, &rearmed));
	after = htw_test_now(CLOCK_MONOTONIC);
	EXPECT_EQ(HTW_REARMED, e.result);
	EXPECT_EQ(1, rearmed);
	ASSERT_TRUE(read_record(self->fd, &rec)) TH_LOG("not fired 10 s after a 20 ms re-arm");
	EXPECT_LE(before + 20 * MS, htw_test_now(CLOCK_MONOTONIC));
	EXPECT_EQ(8, rec.cookie);
	EXPECT_EQ(handle, rec.handle);
	EXPECT_LE(before + 20 * MS, rec.deadline_ns);
	EXPECT_GE(after + 20 * MS, rec.deadline_ns);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(1, st.scheduled);
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(0, st.cancelled);
}

/* More than one step of the kernel's loop, every timer counted. */
TEST_F(wheel, batch_counts_every_pending_timer)
{
	const uint32_t n = 700;
	static struct htw_timer_entry te[700];
	static struct htw_rearm_entry e[701];
	struct htw_stats st;
	uint32_t rearmed, i;

	ASSERT_EQ(n, htw_test_schedule_all(self->fd, te, n, HOUR));
	for (i = 0; i < n; i++)
		rearm_entry(&e[i], te[i].handle, 2 * HOUR, 0);
	rearm_entry(&e[n], 0, MS, 0);	/* no timer has handle 0 */
	ASSERT_EQ(0, rearm(self->fd, e, n + 1, &rearmed));
	EXPECT_EQ(n, rearmed);
	for (i = 0; i < n; i++)
		ASSERT_EQ(HTW_REARMED, e[i].result) TH_LOG("entry %u", i);
	EXPECT_EQ(HTW_REARM_UNKNOWN, e[n].result);
	/* The handles stay the timers' own. */
	for (i = 0; i < n; i++)
		ASSERT_EQ(te[i].handle, e[i].handle);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(n, st.pending);
	EXPECT_EQ(n, st.scheduled);
}

/*
 * A one-shot that expired but whose record was not read: the record is
 * withdrawn (read() does not return it) and the timer fires again at the
 * new time, with its handle and cookie.
 */
TEST_F(wheel, expired_unread_one_shot_is_withdrawn_and_fires_again)
{
	uint64_t handle, before, after;
	struct htw_rearm_entry e;
	struct htw_expiry rec;
	struct htw_stats st;
	uint32_t rearmed;

	handle = schedule_timer(self->fd, 9, MS, 0);
	ASSERT_NE(0, handle);
	ASSERT_EQ(1, readable_within(self->fd, 10000));
	rearm_entry(&e, handle, 100 * MS, 0);
	before = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, rearm(self->fd, &e, 1, &rearmed));
	after = htw_test_now(CLOCK_MONOTONIC);
	EXPECT_EQ(HTW_REARM_FIRED, e.result);
	EXPECT_EQ(0, rearmed);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(1, st.pending);
	EXPECT_EQ(0, st.ready);
	/*
	 * The old record (its deadline before @before) is gone: the next one
	 * read is the new expiry's, whether or not it is already due.
	 */
	if (read(self->fd, &rec, sizeof(rec)) != sizeof(rec)) {
		EXPECT_EQ(EAGAIN, errno);
		ASSERT_TRUE(read_record(self->fd, &rec));
	}
	EXPECT_LE(before + 100 * MS, htw_test_now(CLOCK_MONOTONIC));
	EXPECT_EQ(9, rec.cookie);
	EXPECT_EQ(handle, rec.handle);
	EXPECT_LE(before + 100 * MS, rec.deadline_ns);
	EXPECT_GE(after + 100 * MS, rec.deadline_ns);
	EXPECT_EQ(0, readable_within(self->fd, QUIET_MS));
	/* Read now: the one-shot is gone. */
	EXPECT_EQ(HTW_REARM_UNKNOWN, rearm_one(self->fd, handle, MS));
}

/* Check that @fd has @pending timers, no record, and gets none. */
static void expect_unchanged(struct __test_metadata *_metadata, int fd,
			     uint64_t pending)
{
	struct htw_stats st;

	ASSERT_EQ(0, stats(fd, &st));
	EXPECT_EQ(pending, st.pending);
	EXPECT_EQ(0, st.ready);
	EXPECT_EQ(0, readable_within(fd, QUIET_MS));
}

TEST_F(wheel, consumed_one_shot_is_unknown)
{
	uint64_t handle = schedule_timer(self->fd, 1, MS, 0);
	struct htw_expiry rec;

	ASSERT_NE(0, handle);
	ASSERT_TRUE(read_record(self->fd, &rec));
	EXPECT_EQ(HTW_REARM_UNKNOWN, rearm_one(self->fd, handle, MS));
	expect_unchanged(_metadata, self->fd, 0);
}

TEST_F(wheel, cancelled_and_drained_timers_are_unknown)
{
	uint64_t cancelled = schedule_timer(self->fd, 1, HOUR, 0);
	struct htw_cancel_entry ce = { .handle = cancelled };
	struct htw_cancel creq = { .entries = (uintptr_t)&ce, .count = 1 };
	struct htw_drain dreq = { 0 };
	uint64_t drained;

	ASSERT_NE(0, cancelled);
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_CANCEL, &creq));
	ASSERT_EQ(HTW_CANCELLED, ce.result);
	EXPECT_EQ(HTW_REARM_UNKNOWN, rearm_one(self->fd, cancelled, MS));
	drained = schedule_timer(self->fd, 2, HOUR, 0);
	ASSERT_NE(0, drained);
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_DRAIN, &dreq));
	ASSERT_EQ(1, dreq.drained);
	EXPECT_EQ(HTW_REARM_UNKNOWN, rearm_one(self->fd, drained, MS));
	expect_unchanged(_metadata, self->fd, 0);
}

/* Handles this file never issued: unknown, and no timer anywhere moves. */
TEST_F(wheel, garbage_and_foreign_handles_are_unknown)
{
	int other = htw_test_open(O_NONBLOCK);
	struct htw_rearm_entry e[4];
	uint64_t mine, theirs;
	uint32_t rearmed, i;

	ASSERT_LE(0, other);
	mine = schedule_timer(self->fd, 1, HOUR, 0);
	theirs = schedule_timer(other, 2, HOUR, 0);
	ASSERT_NE(0, mine);
	ASSERT_NE(0, theirs);
	rearm_entry(&e[0], theirs, MS, 0);
	rearm_entry(&e[1], 0, MS, 0);
	rearm_entry(&e[2], ~0ULL, MS, 0);
	rearm_entry(&e[3], mine ^ (1ULL << 40), MS, 0);	/* another generation */
	ASSERT_EQ(0, rearm(self->fd, e, 4, &rearmed));
	EXPECT_EQ(0, rearmed);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(HTW_REARM_UNKNOWN, e[i].result) TH_LOG("entry %u", i);
	expect_unchanged(_metadata, self->fd, 1);
	expect_unchanged(_metadata, other, 1);
	close(other);
}

/*
 * A periodic timer re-armed keeps its period: its next expiry is the new
 * time and the one after follows one period later, still periodic.
 */
TEST_F(wheel, periodic_timer_keeps_its_period)
{
	const uint64_t period = 10 * MS;
	uint64_t handle, before, after;
	struct htw_expiry rec[2];

	handle = schedule_timer(self->fd, 3, HOUR, period);
	ASSERT_NE(0, handle);
	before = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(HTW_REARMED, rearm_one(self->fd, handle, 30 * MS));
	after = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_TRUE(read_record(self->fd, &rec[0]));
	EXPECT_EQ(3, rec[0].cookie);
	EXPECT_EQ(handle, rec[0].handle);
	EXPECT_EQ(HTW_EXPIRY_PERIODIC, rec[0].flags);
	EXPECT_LE(before + 30 * MS, rec[0].deadline_ns);
	EXPECT_GE(after + 30 * MS, rec[0].deadline_ns);
	ASSERT_TRUE(read_record(self->fd, &rec[1]));
	EXPECT_EQ(handle, rec[1].handle);
	EXPECT_EQ(HTW_EXPIRY_PERIODIC, rec[1].flags);
	EXPECT_EQ(rec[0].deadline_ns + (rec[0].overrun + 1ULL) * period,
		  rec[1].deadline_ns);
}

TEST_F(wheel, abstime_deadline_is_the_one_given)
{
	uint64_t handle = schedule_timer(self->fd, 4, HOUR, 0);
	struct htw_rearm_entry e;
	struct htw_expiry rec;
	uint64_t deadline;

	ASSERT_NE(0, handle);
	deadline = htw_test_now(CLOCK_MONOTONIC) + 30 * MS;
	rearm_entry(&e, handle, deadline, HTW_TIMER_ABSTIME);
	ASSERT_EQ(0, rearm(self->fd, &e, 1, NULL));
	EXPECT_EQ(HTW_REARMED, e.result);
	ASSERT_TRUE(read_record(self->fd, &rec));
	EXPECT_LE(deadline, htw_test_now(CLOCK_MONOTONIC));
	EXPECT_EQ(handle, rec.handle);
	EXPECT_EQ(deadline, rec.deadline_ns);
}

/*
 * A refused request changes nothing: the timer stays an hour away (it does
 * not fire at the millisecond asked for) and no result is written.
 */
static void refused(struct __test_metadata *_metadata, int fd,
		    struct htw_rearm *req, int err)
{
	struct htw_rearm_entry *e = (void *)(uintptr_t)req->entries;
	int valid = req->entries > 4096;
	uint32_t i;

	req->rearmed = NO_RESULT;
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_REARM, req));
	EXPECT_EQ(err, errno);
	EXPECT_EQ(NO_RESULT, req->rearmed);
	for (i = 0; valid && i < 3; i++)
		EXPECT_EQ(NO_RESULT, e[i].result) TH_LOG("entry %u", i);
}

TEST_F(wheel, bad_requests_change_nothing)
{
	struct htw_rearm_entry e[3];
	struct htw_rearm req;
	uint64_t handle[3];
	int i;

	for (i = 0; i < 3; i++) {
		handle[i] = schedule_timer(self->fd, i, HOUR, 0);
		ASSERT_NE(0, handle[i]);
		rearm_entry(&e[i], handle[i], MS, 0);
	}
#define REQ(...) (req = (struct htw_rearm){ .entries = (uintptr_t)e, .count = 3, __VA_ARGS__ }, &req)
	refused(_metadata, self->fd, REQ(.flags = 1), EINVAL);
	refused(_metadata, self->fd, REQ(.pad = 1), EINVAL);
	refused(_metadata, self->fd, REQ(.reserved[0] = 1), EINVAL);
	refused(_metadata, self->fd, REQ(.reserved[2] = 1), EINVAL);
	refused(_metadata, self->fd, REQ(.count = 0), EINVAL);
	refused(_metadata, self->fd, REQ(.count = HTW_BATCH_MAX + 1), EINVAL);
	refused(_metadata, self->fd, REQ(.entries = 8), EFAULT);
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_REARM, NULL));
	EXPECT_EQ(EFAULT, errno);

	/* A bad entry anywhere, even the last: the ones before it stay. */
	e[2].flags = 0x2;
	refused(_metadata, self->fd, REQ(), EINVAL);
	e[2].flags = HTW_TIMER_ABSTIME | 0x80000000;
	refused(_metadata, self->fd, REQ(), EINVAL);
	e[2].flags = 0;
	e[2].expires = ~0ULL;
	refused(_metadata, self->fd, REQ(), EOVERFLOW);
#undef REQ
	expect_unchanged(_metadata, self->fd, 3);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(handle[i], e[i].handle);
}

/* Results that could not be written: refused before any timer moves. */
TEST_F(wheel, unwritable_results_change_nothing)
{
	long page = sysconf(_SC_PAGESIZE);
	struct htw_rearm_entry *e;
	struct htw_rearm *req;
	char *ro;

	ro = mmap(NULL, page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	e = (void *)ro;
	req = (void *)(ro + 256);
	rearm_entry(&e[0], schedule_timer(self->fd, 1, HOUR, 0), MS, 0);
	ASSERT_NE(0, e[0].handle);
	req->entries = (uintptr_t)e;
	req->count = 1;
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	/* The entries and the count are read-only. */
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_REARM, req));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(NO_RESULT, e[0].result);
	expect_unchanged(_metadata, self->fd, 1);
	munmap(ro, page);
}

/* Writable entries but a read-only header: the count could not be stored. */
TEST_F(wheel, unwritable_count_changes_nothing)
{
	long page = sysconf(_SC_PAGESIZE);
	struct htw_rearm_entry e;
	struct htw_rearm *req;

	req = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, req);
	rearm_entry(&e, schedule_timer(self->fd, 1, HOUR, 0), MS, 0);
	ASSERT_NE(0, e.handle);
	req->entries = (uintptr_t)&e;
	req->count = 1;
	ASSERT_EQ(0, mprotect(req, page, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_REARM, req));
	EXPECT_EQ(EFAULT, errno);
	expect_unchanged(_metadata, self->fd, 1);
	munmap(req, page);
}

/* A file without timers has no wheel, and a re-arm does not create one. */
TEST_F(wheel, fresh_file_creates_no_wheel)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .tick_ns = 2 * MS };
	struct htw_rearm_entry e;
	struct htw_stats st;
	uint32_t rearmed;

	rearm_entry(&e, 1ULL << 32, MS, 0);
	ASSERT_EQ(0, rearm(self->fd, &e, 1, &rearmed));
	EXPECT_EQ(HTW_REARM_UNKNOWN, e.result);
	EXPECT_EQ(0, rearmed);
	/* Still refused as a whole when an entry is bad. */
	e.flags = 0x2;
	e.result = NO_RESULT;
	EXPECT_EQ(-1, rearm(self->fd, &e, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NO_RESULT, e.result);
	EXPECT_EQ(0, ioctl(self->fd, HTW_IOC_SETUP, &setup));
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(2 * MS, st.tick_ns);
	EXPECT_EQ(0, st.tick_wakeups);
}

/*
 * A drain races with another process re-arming the drained timers
 * between levels (1 s, 1 min, an hour): when the drain returns, none of
 * the timers pending when it began may be left, whichever bucket a
 * re-arm moved it to meanwhile, and re-arming cannot bring one back.
 * Enough timers that the drain takes many batches, with scheduling
 * points between them where the other process runs, even on one CPU.
 */
#define RACE_TIMERS	50000
#define RACE_ROUNDS	5

struct drain_race {
	volatile uint64_t handle[RACE_TIMERS];
	volatile int round;	/* the parent's round; -1: stop */
	volatile unsigned long rearms;
};

static void drain_race_child(int fd, struct drain_race *r)
{
	static const uint64_t delay[] = { 1000 * MS, 60000 * MS, HOUR };
	unsigned long i = 0;

	/* Gone with the test, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (r->round >= 0) {
		struct htw_rearm_entry e;

		rearm_entry(&e, r->handle[i % RACE_TIMERS], delay[i % 3], 0);
		if (!rearm(fd, &e, 1, NULL))
			r->rearms++;
		i += 7;
	}
	_exit(0);
}

/* Schedule the round's timers an hour and a bit away; 0 or -1. */
static int drain_race_fill(int fd, struct drain_race *r,
			   struct htw_timer_entry *e)
{
	if (htw_test_schedule_all(fd, e, RACE_TIMERS, HOUR) != RACE_TIMERS)
		return -1;
	for (int i = 0; i < RACE_TIMERS; i++)
		r->handle[i] = e[i].handle;
	return 0;
}

TEST_F_TIMEOUT(wheel, drain_leaves_nothing_a_rearm_moved, 300)
{
	struct drain_race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct htw_timer_entry *e = calloc(RACE_TIMERS, sizeof(*e));
	struct htw_drain req;
	struct htw_stats st;
	int round, status, left = 0;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, r);
	ASSERT_NE(NULL, e);
	memset(r, 0, sizeof(*r));
	ASSERT_EQ(0, drain_race_fill(self->fd, r, e));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		drain_race_child(self->fd, r);
	for (round = 0; round < RACE_ROUNDS; round++) {
		if (round)
			ASSERT_EQ(0, drain_race_fill(self->fd, r, e));
		r->round = round;
		usleep(20000);	/* let the child move some first */
		memset(&req, 0, sizeof(req));
		ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_DRAIN, &req));
		ASSERT_EQ(0, stats(self->fd, &st));
		left += st.pending;
		EXPECT_EQ(0, st.pending) TH_LOG("round %d: %llu left pending after the drain",
						round, (unsigned long long)st.pending);
	}
	r->round = -1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	TH_LOG("%d rounds, %lu re-arm calls, %d timers left behind", RACE_ROUNDS,
	       r->rearms, left);
	EXPECT_LT(0, r->rearms);
	munmap(r, sizeof(*r));
	free(e);
}

TEST_HARNESS_MAIN
