// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/htwheel from user space: scheduling, cancelling, delivery, limits
 * and every refused input.  Written against include/uapi/linux/htwheel.h
 * and Documentation/userspace-api/htwheel.rst only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

/* The REQ()/SETUP() helpers below override designated defaults on purpose. */
#pragma GCC diagnostic ignored "-Woverride-init"

#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)
#define POISON		0xcc


/* An address no test maps; through a volatile so gcc does not object. */
static char *volatile bad_buffer = (char *)8;

static void entry(struct htw_timer_entry *e, uint64_t cookie, uint64_t delay)
{
	memset(e, 0, sizeof(*e));
	e->cookie = cookie;
	e->expires = delay;
}

static int schedule(int fd, struct htw_timer_entry *e, uint32_t n)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };

	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

static uint64_t schedule_one(int fd, uint64_t cookie, uint64_t delay)
{
	struct htw_timer_entry e;

	entry(&e, cookie, delay);
	if (schedule(fd, &e, 1) != 1)
		return 0;
	return e.handle;
}

static int cancel_one(int fd, uint64_t handle, uint32_t *result)
{
	struct htw_cancel_entry e = { .handle = handle };
	struct htw_cancel req = { .entries = (uintptr_t)&e, .count = 1 };
	int ret = ioctl(fd, HTW_IOC_CANCEL, &req);

	*result = e.result;
	return ret;
}

static int stats(int fd, struct htw_stats *st)
{
	memset(st, POISON, sizeof(*st));
	st->flags = 0;
	return ioctl(fd, HTW_IOC_STATS, st);
}

static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms);
}

FIXTURE(wheel) {
	int fd;
};

FIXTURE_SETUP(wheel)
{
	self->fd = htw_test_open(0);
	ASSERT_LE(0, self->fd) TH_LOG("open+handshake: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wheel)
{
	close(self->fd);
}

TEST(handshake_required)
{
	struct htw_timer_entry e;
	struct htw_stats st;
	char buf[sizeof(struct htw_expiry)];
	int fd = open("/dev/htwheel", O_RDWR | O_NONBLOCK);

	ASSERT_LE(0, fd);
	entry(&e, 1, MS);
	EXPECT_EQ(-1, schedule(fd, &e, 1));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, stats(fd, &st));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(EBADFD, errno);
	close(fd);
}

TEST_F(wheel, one_timer_fires_once_never_early)
{
	struct htw_expiry rec[2];
	uint64_t before = htw_test_now(CLOCK_MONOTONIC);
	uint64_t handle = schedule_one(self->fd, 42, 20 * MS);

	ASSERT_NE(0, handle);
	memset(rec, POISON, sizeof(rec));
	ASSERT_EQ(sizeof(rec[0]), read(self->fd, rec, sizeof(rec)));
	EXPECT_LE(before + 20 * MS, htw_test_now(CLOCK_MONOTONIC));
	EXPECT_EQ(42, rec[0].cookie);
	EXPECT_EQ(handle, rec[0].handle);
	EXPECT_LE(before + 20 * MS, rec[0].deadline_ns);
	EXPECT_LE(rec[0].deadline_ns, rec[0].expired_ns);
	EXPECT_EQ(0, rec[0].overrun);
	EXPECT_EQ(0, rec[0].flags);
	EXPECT_EQ(0, rec[0].reserved);
	EXPECT_EQ(0, wait_readable(self->fd, 50));
}

TEST_F(wheel, hundred_thousand_timers_each_exactly_once)
{
	const uint32_t n = 100000;
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	struct htw_expiry *rec = malloc(4096 * sizeof(*rec));
	unsigned char *seen = calloc(n, 1);
	uint64_t t0 = htw_test_now(CLOCK_MONOTONIC);
	uint32_t got = 0, early = 0, dup = 0, i;

	ASSERT_NE(NULL, e);
	ASSERT_NE(NULL, rec);
	ASSERT_NE(NULL, seen);
	srandom(1);
	for (i = 0; i < n; i++)
		entry(&e[i], i, (uint64_t)(random() % 400) * MS);
	ASSERT_EQ(n, schedule(self->fd, e, n));
	for (i = 0; i < n; i++)
		ASSERT_NE(0, e[i].handle);
	while (got < n) {
		ssize_t r = read(self->fd, rec, 4096 * sizeof(*rec));

		ASSERT_LT(0, r);
		for (i = 0; i < r / sizeof(*rec); i++) {
			ASSERT_GT(n, rec[i].cookie);
			dup += seen[rec[i].cookie]++ != 0;
			early += rec[i].expired_ns < rec[i].deadline_ns ||
				 rec[i].deadline_ns < t0 + e[rec[i].cookie].expires;
			EXPECT_EQ(e[rec[i].cookie].handle, rec[i].handle);
		}
		got += r / sizeof(*rec);
	}
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, early);
	EXPECT_EQ(0, wait_readable(self->fd, 20));
	free(seen);
	free(rec);
	free(e);
}

/* Sleep until @clk reaches @t (a loaded machine may sleep longer). */
static void sleep_until(clockid_t clk, uint64_t t)
{
	struct timespec ts = { .tv_sec = t / (1000 * MS), .tv_nsec = t % (1000 * MS) };

	while (clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * A timer cancelled before its deadline is never delivered.  Whether the
 * cancel came before the deadline is measured, not assumed: an attempt
 * where the schedule+cancel took longer than the 30 ms delay (a loaded
 * machine) proves nothing and is tried again.
 */
TEST_F(wheel, cancel_before_fire)
{
	const uint64_t delay = 30 * MS;
	uint32_t result[10], res = POISON;
	uint64_t handle[10], t0 = 0, t1;
	struct htw_expiry rec;
	struct htw_stats st;
	int attempt, i, in_time = 0;

	for (attempt = 0; attempt < 10 && !in_time; attempt++) {
		t0 = htw_test_now(CLOCK_MONOTONIC);
		handle[attempt] = schedule_one(self->fd, 100 + attempt, delay);
		ASSERT_NE(0, handle[attempt]);
		ASSERT_EQ(0, cancel_one(self->fd, handle[attempt], &result[attempt]));
		t1 = htw_test_now(CLOCK_MONOTONIC);
		in_time = t1 < t0 + delay;
		if (in_time) {
			EXPECT_EQ(HTW_CANCELLED, result[attempt]);
		} else {
			TH_LOG("attempt %d: cancel returned %llu ns after the schedule, past the deadline",
			       attempt, (unsigned long long)(t1 - t0));
		}
	}
	ASSERT_TRUE(in_time) TH_LOG("no schedule+cancel finished within %llu ns in 10 tries",
				    (unsigned long long)delay);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(0, st.pending);
	/* Well past the last deadline and two more ticks: nothing cancelled arrives. */
	sleep_until(CLOCK_MONOTONIC, t0 + delay + 2 * st.tick_ns + 10 * MS);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	while (read(self->fd, &rec, sizeof(rec)) == sizeof(rec)) {
		i = rec.cookie - 100;
		ASSERT_TRUE(i >= 0 && i < attempt);
		/* Only a late try that found its timer fired may deliver. */
		EXPECT_EQ(HTW_CANCEL_FIRED, result[i]) TH_LOG("attempt %d was delivered", i);
	}
	EXPECT_EQ(EAGAIN, errno);
	/* Cancelled once; a second cancel knows nothing of it. */
	ASSERT_EQ(0, cancel_one(self->fd, handle[attempt - 1], &res));
	EXPECT_EQ(HTW_CANCEL_UNKNOWN, res);
}

TEST_F(wheel, cancel_after_fire)
{
	uint64_t handle = schedule_one(self->fd, 8, MS);
	struct htw_expiry rec;
	uint32_t result = POISON;

	ASSERT_NE(0, handle);
	ASSERT_EQ(1, wait_readable(self->fd, 2000));
	ASSERT_EQ(0, cancel_one(self->fd, handle, &result));
	EXPECT_EQ(HTW_CANCEL_FIRED, result);
	/* The queued record is still delivered. */
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(8, rec.cookie);
	ASSERT_EQ(0, cancel_one(self->fd, handle, &result));
	EXPECT_EQ(HTW_CANCEL_UNKNOWN, result);
}

TEST_F(wheel, stale_and_foreign_handles)
{
	int other = htw_test_open(0);
	uint64_t mine, theirs;
	struct htw_cancel_entry e[4];
	struct htw_cancel req = { .entries = (uintptr_t)e, .count = 4 };
	struct htw_stats st;

	ASSERT_LE(0, other);
	mine = schedule_one(self->fd, 1, HOUR);
	theirs = schedule_one(other, 2, HOUR);
	ASSERT_NE(0, mine);
	ASSERT_NE(0, theirs);
	memset(e, 0, sizeof(e));
	e[0].handle = theirs;
	e[1].handle = 0;
	e[2].handle = ~0ULL;
	e[3].handle = mine ^ (1ULL << 40);	/* another generation */
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_CANCEL, &req));
	EXPECT_EQ(0, req.cancelled);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(HTW_CANCEL_UNKNOWN, e[i].result);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(1, st.pending);
	ASSERT_EQ(0, stats(other, &st));
	EXPECT_EQ(1, st.pending);
	close(other);
}

/*
 * Periods that pass unread are counted in one record.  The bounds come
 * from what was measured, not from the 105 ms asked for: at most the
 * periods whose deadlines had passed when read() returned, at least those
 * surely past before it was called (and the expirations the instance had
 * counted then).  Once read, the
 * timer goes on on its own grid, and after a cancel at most the record
 * of a period already expired (without HTW_EXPIRY_PERIODIC) arrives.
 */
TEST_F(wheel, periodic_timer_counts_overruns)
{
	const uint64_t period = 10 * MS;
	struct htw_timer_entry e;
	struct htw_expiry rec[4];
	struct htw_stats st;
	uint64_t start, scheduled, t_cancel, fired_before, max_fired, min_due;
	uint32_t result;
	ssize_t r;

	entry(&e, 5, period);
	e.period_ns = period;
	start = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(1, schedule(self->fd, &e, 1));
	scheduled = htw_test_now(CLOCK_MONOTONIC);
	usleep(105 * 1000);
	ASSERT_EQ(0, stats(self->fd, &st));
	fired_before = st.fired;
	/* Deadlines surely passed before the read: the schedule began by @scheduled. */
	min_due = (htw_test_now(CLOCK_MONOTONIC) - scheduled) / period;
	ASSERT_EQ(sizeof(rec[0]), read(self->fd, rec, sizeof(rec)));
	/* Deadlines are start + k * period or later, k >= 1. */
	max_fired = (htw_test_now(CLOCK_MONOTONIC) - start) / period;
	EXPECT_EQ(5, rec[0].cookie);
	EXPECT_EQ(HTW_EXPIRY_PERIODIC, rec[0].flags);
	EXPECT_LE(start + period, rec[0].deadline_ns);
	EXPECT_LE(1, fired_before);
	EXPECT_LE(fired_before - 1, rec[0].overrun);
	/* Less the first, and one whose tick may not have run yet. */
	EXPECT_LE(min_due - 2, rec[0].overrun)
		TH_LOG("%u overruns, but %llu deadlines had passed before the read",
		       rec[0].overrun, (unsigned long long)min_due);
	EXPECT_GE(max_fired - 1, rec[0].overrun)
		TH_LOG("%u overruns, but only %llu deadlines had passed",
		       rec[0].overrun, (unsigned long long)max_fired);
	/* The next record is on the grid, right after the counted ones. */
	ASSERT_EQ(sizeof(rec[1]), read(self->fd, &rec[1], sizeof(rec[1])));
	EXPECT_EQ(rec[0].deadline_ns + (rec[0].overrun + 1ULL) * period, rec[1].deadline_ns);

	ASSERT_EQ(0, cancel_one(self->fd, e.handle, &result));
	EXPECT_EQ(HTW_CANCELLED, result);
	t_cancel = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(0, st.pending);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	sleep_until(CLOCK_MONOTONIC, t_cancel + 3 * period);
	/* A period that expired before the cancel may still be queued: its last. */
	r = read(self->fd, rec, sizeof(rec));
	if (r > 0) {
		EXPECT_EQ(sizeof(rec[0]), r);
		EXPECT_EQ(5, rec[0].cookie);
		EXPECT_EQ(0, rec[0].flags & HTW_EXPIRY_PERIODIC);
		EXPECT_GE(t_cancel, rec[0].deadline_ns);
		r = read(self->fd, rec, sizeof(rec));
	}
	/* And nothing after it. */
	EXPECT_EQ(-1, r);
	EXPECT_EQ(EAGAIN, errno);
}

/*
 * Ten consecutive records of a periodic timer read as they come: each
 * deadline is exactly the previous one plus (overrun + 1) periods, the
 * first one period after the schedule.
 */
TEST_F(wheel, periodic_timer_keeps_phase)
{
	const uint64_t period = 5 * MS;
	struct htw_timer_entry e;
	struct htw_expiry rec, prev = { 0 };
	uint64_t t0, t1;

	entry(&e, 6, period);
	e.period_ns = period;
	t0 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(1, schedule(self->fd, &e, 1));
	t1 = htw_test_now(CLOCK_MONOTONIC);
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
		EXPECT_EQ(6, rec.cookie);
		EXPECT_EQ(HTW_EXPIRY_PERIODIC, rec.flags);
		EXPECT_LE(rec.deadline_ns, rec.expired_ns);
		if (i == 0) {
			EXPECT_LE(t0 + period, rec.deadline_ns);
			EXPECT_GE(t1 + period, rec.deadline_ns);
		} else {
			/* On the timer's own grid: never now + period, never a repeat. */
			EXPECT_EQ(prev.deadline_ns + (prev.overrun + 1ULL) * period, rec.deadline_ns);
		}
		prev = rec;
	}
}

TEST_F(wheel, nonblocking_read_and_short_buffer)
{
	char small[sizeof(struct htw_expiry) - 1];
	struct htw_expiry rec;

	fcntl(self->fd, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, read(self->fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_NE(0, schedule_one(self->fd, 1, 0));
	ASSERT_EQ(1, wait_readable(self->fd, 2000));
	EXPECT_EQ(-1, read(self->fd, bad_buffer, sizeof(rec)));
	EXPECT_EQ(EFAULT, errno);
	/* The failed copy lost nothing. */
	EXPECT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
}

TEST_F(wheel, epoll_level_and_edge)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int lt = epoll_create1(0), et = epoll_create1(0);
	struct htw_expiry rec;

	ASSERT_LE(0, lt);
	ASSERT_LE(0, et);
	ASSERT_EQ(0, epoll_ctl(lt, EPOLL_CTL_ADD, self->fd, &ev));
	ev.events = EPOLLIN | EPOLLET;
	ASSERT_EQ(0, epoll_ctl(et, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_wait(lt, &out, 1, 0));
	ASSERT_NE(0, schedule_one(self->fd, 1, 5 * MS));
	ASSERT_EQ(1, epoll_wait(lt, &out, 1, 2000));
	EXPECT_TRUE(out.events & EPOLLIN);
	EXPECT_EQ(1, epoll_wait(lt, &out, 1, 0));	/* level: still there */
	EXPECT_EQ(1, epoll_wait(et, &out, 1, 0));
	EXPECT_EQ(0, epoll_wait(et, &out, 1, 0));	/* edge: once */
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(0, epoll_wait(lt, &out, 1, 0));
	ASSERT_NE(0, schedule_one(self->fd, 2, 5 * MS));
	EXPECT_EQ(1, epoll_wait(et, &out, 1, 2000));	/* a new edge */
	close(lt);
	close(et);
}

/* An eventfd's counter, or 0 if it was not signalled (non-blocking). */
static uint64_t eventfd_take(int efd)
{
	uint64_t count = 0;

	if (read(efd, &count, sizeof(count)) != sizeof(count))
		return 0;
	return count;
}

/* Schedule @n timers with one absolute deadline @in_ns from now: one tick. */
static int schedule_same_tick(int fd, uint64_t cookie, uint32_t n, uint64_t in_ns)
{
	struct htw_timer_entry e[16];
	uint64_t deadline = htw_test_now(CLOCK_MONOTONIC) + in_ns;

	for (uint32_t i = 0; i < n; i++) {
		entry(&e[i], cookie + i, deadline);
		e[i].flags = HTW_TIMER_ABSTIME;
	}
	return schedule(fd, e, n);
}

/* Read @n records (blocking, bounded by poll); 0 on success. */
static int read_n(int fd, uint32_t n)
{
	struct htw_expiry rec[16];
	uint32_t got = 0;

	while (got < n) {
		ssize_t r;

		if (wait_readable(fd, 5000) != 1)
			return -1;
		r = read(fd, rec, sizeof(rec));
		if (r <= 0)
			return -1;
		got += r / sizeof(rec[0]);
	}
	return got == n ? 0 : -1;
}

/*
 * The eventfd is a doorbell: +1 per tick that queued records, however
 * many (eight records due on one tick ring once); a new registration
 * replaces the old one; clearing it stops the rings.
 */
TEST_F(wheel, eventfd_doorbell)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct htw_eventfd req = { .fd = efd };
	int notfd = open("/dev/null", O_RDONLY);

	ASSERT_LE(0, efd);
	ASSERT_LE(0, efd2);
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	/* Eight records on one tick: one ring, not eight. */
	ASSERT_EQ(8, schedule_same_tick(self->fd, 10, 8, 5 * MS));
	ASSERT_EQ(1, wait_readable(efd, 2000));
	ASSERT_EQ(0, read_n(self->fd, 8));
	EXPECT_EQ(1, eventfd_take(efd));
	/* Three ticks far apart, each read before the next: one ring each. */
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(2, schedule_same_tick(self->fd, 20 + 2 * i, 2, 2 * MS));
		ASSERT_EQ(0, read_n(self->fd, 2));
		EXPECT_EQ(1, eventfd_take(efd)) TH_LOG("tick %d", i);
	}

	/* A new registration replaces the old one: only efd2 rings. */
	req.fd = efd2;
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	ASSERT_NE(0, schedule_one(self->fd, 3, 2 * MS));
	ASSERT_EQ(0, read_n(self->fd, 1));
	EXPECT_EQ(1, eventfd_take(efd2));
	EXPECT_EQ(0, eventfd_take(efd));

	/* Cleared: no more rings, on either. */
	req.fd = -1;
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	ASSERT_NE(0, schedule_one(self->fd, 4, MS));
	ASSERT_EQ(0, read_n(self->fd, 1));
	EXPECT_EQ(0, wait_readable(efd, 20));
	EXPECT_EQ(0, eventfd_take(efd));
	EXPECT_EQ(0, eventfd_take(efd2));

	req.fd = notfd;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	EXPECT_EQ(EINVAL, errno);
	req.fd = 1000000;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	EXPECT_EQ(EBADF, errno);
	req.fd = -2;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	EXPECT_EQ(EINVAL, errno);
	req.fd = -1;
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SET_EVENTFD, &req));
	EXPECT_EQ(EINVAL, errno);
	close(notfd);
	close(efd2);
	close(efd);
}

TEST_F(wheel, drain_returns_exactly_the_unexpired)
{
	struct htw_timer_entry e[10];
	struct htw_unexpired out[12];
	struct htw_drain req = { .entries = (uintptr_t)out, .count = 12 };
	struct htw_expiry rec[10];
	struct htw_stats st;
	size_t got = 0;
	int i;

	for (i = 0; i < 10; i++)
		entry(&e[i], i, i < 5 ? MS : HOUR + i);
	ASSERT_EQ(10, schedule(self->fd, e, 10));
	while (got < 5) {
		ssize_t r = read(self->fd, rec, sizeof(rec));

		ASSERT_LT(0, r);
		got += r / sizeof(rec[0]);
	}
	EXPECT_EQ(5, got);
	memset(out, POISON, sizeof(out));
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_DRAIN, &req));
	ASSERT_EQ(5, req.drained);
	for (i = 0; i < 5; i++) {
		EXPECT_LE(5, out[i].cookie);
		EXPECT_EQ(e[out[i].cookie].handle, out[i].handle);
		EXPECT_LT(HOUR - 10000 * MS, out[i].remaining_ns);
		EXPECT_GE(HOUR + 10, out[i].remaining_ns);
		EXPECT_EQ(0, out[i].reserved);
	}
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(0, st.pending);
	/* A drain with no room still cancels and counts. */
	ASSERT_NE(0, schedule_one(self->fd, 99, HOUR));
	memset(&req, 0, sizeof(req));
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_DRAIN, &req));
	EXPECT_EQ(1, req.drained);
}

TEST(close_with_100k_pending_frees_all)
{
	const uint32_t n = 100000;
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	long before = htw_test_timer_slots(), during;
	struct htw_stats st;
	int fd;

	/* Decide before anything is expected: a SKIP after an EXPECT hides it. */
	if (before < 0) {
		free(e);
		SKIP(return, "no /sys/kernel/slab/htw_timer (slab merged?)");
	}
	fd = htw_test_open(0);
	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, e);
	for (uint32_t i = 0; i < n; i++)
		entry(&e[i], i, HOUR + i * MS);
	ASSERT_EQ(n, schedule(fd, e, n));
	ASSERT_EQ(0, stats(fd, &st));
	EXPECT_EQ(n, st.pending);
	during = htw_test_timer_slots();
	close(fd);
	free(e);
	/* Other files' timers come and go meanwhile: allow some slack. */
	EXPECT_LE(before + n - 1024, during);
	/* SLUB frees through per-CPU lists and RCU: give it a moment. */
	for (int i = 0; i < 50 && htw_test_timer_slots() > before + 64; i++)
		usleep(20 * 1000);
	EXPECT_GE(before + 64, htw_test_timer_slots());
}

TEST_F(wheel, per_fd_limit)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .max_pending = 10 };
	struct htw_timer_entry e[12];
	struct htw_stats st;
	int i;

	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_SETUP, &setup));
	EXPECT_EQ(10, setup.max_pending);
	for (i = 0; i < 12; i++)
		entry(&e[i], i, HOUR);
	/* Partial success: the count scheduled, the rest untouched. */
	ASSERT_EQ(10, schedule(self->fd, e, 12));
	EXPECT_NE(0, e[9].handle);
	EXPECT_EQ(0, e[10].handle);
	EXPECT_EQ(-1, schedule(self->fd, &e[10], 2));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(10, st.pending);
	EXPECT_EQ(10, st.scheduled);
}

TEST(per_user_limit)
{
	struct htw_timer_entry e[20];
	unsigned long old;
	int a = htw_test_open(0), b = htw_test_open(0), i;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", 25, &old));
	for (i = 0; i < 20; i++)
		entry(&e[i], i, HOUR);
	EXPECT_EQ(15, schedule(a, e, 15));
	EXPECT_EQ(10, schedule(b, e, 20));
	EXPECT_EQ(-1, schedule(b, e, 1));
	EXPECT_EQ(EDQUOT, errno);
	close(a);
	/* Closing a file gives its timers back to the user. */
	EXPECT_EQ(15, schedule(b, e, 15));
	close(b);
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", old, NULL));
}

/* Open files until refused; their fds in fds[], the count returned. */
static int open_until_refused(int *fds, int max, int *err)
{
	int n;

	for (n = 0; n < max; n++) {
		fds[n] = htw_test_open(0);
		if (fds[n] < 0)
			break;
	}
	*err = n < max ? errno : 0;
	return n;
}

static void close_all(int *fds, int n)
{
	while (n--)
		close(fds[n]);
}

/* In a child: another user's files count against that user only. */
static int open_four_as_nobody(void)
{
	int fds[5], n, err;

	if (setgid(65534) || setuid(65534))
		return 10;
	n = open_until_refused(fds, 5, &err);
	close_all(fds, n);
	return n == 4 && err == EMFILE ? 0 : 11;
}

TEST(per_user_instances_emfile)
{
	int fds[5], n, err, status;
	unsigned long old;
	pid_t pid;

	if (getuid())
		SKIP(return, "needs root to set max_user_instances");
	ASSERT_EQ(0, htw_test_set_param("max_user_instances", 4, &old));
	n = open_until_refused(fds, 5, &err);
	EXPECT_EQ(4, n);
	EXPECT_EQ(EMFILE, err);
	pid = fork();
	if (pid == 0)
		_exit(open_four_as_nobody());
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* A closed file gives its instance back. */
	if (n > 0) {
		close(fds[--n]);
		fds[n] = htw_test_open(0);
		EXPECT_LE(0, fds[n]);
		n += fds[n] >= 0;
	}
	close_all(fds, n);
	ASSERT_EQ(0, htw_test_set_param("max_user_instances", old, NULL));
	/* And the old limit holds again: far more than 4 files. */
	n = open_until_refused(fds, 5, &err);
	EXPECT_EQ(5, n);
	close_all(fds, n);
}

#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER	0x10000000
#endif

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/*
 * In a child: a new user namespace whose uids 0..9 are the host's
 * 100000..100009 (a subuid range of root's; the map is written by the
 * parent, @go), then uid 1 there, open until refused.  Exit code: files
 * opened, or 100 + the failing step.
 */
static int open_as_subuid(int ready, int go)
{
	int fds[8], n, err;
	char c;

	if (unshare(CLONE_NEWUSER))
		return errno == EINVAL ? 199 : 101;
	if (write(ready, "u", 1) != 1 || read(go, &c, 1) != 1 || c != 'm')
		return 102;
	if (setresgid(1, 1, 1) || setresuid(1, 1, 1))
		return 103;
	n = open_until_refused(fds, 8, &err);
	close_all(fds, n);
	return err == EMFILE ? n : 104;
}

static int run_subuid_child(void)
{
	int to_parent[2], to_child[2], status;
	char path[64], c;
	pid_t pid;

	if (pipe(to_parent) || pipe(to_child))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(to_parent[0]);
		close(to_child[1]);
		_exit(open_as_subuid(to_parent[1], to_child[0]));
	}
	/* Only the child's ends stay open: its exit ends the read. */
	close(to_parent[1]);
	close(to_child[0]);
	if (read(to_parent[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
		write_file(path, "0 100000 10\n");
		snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
		write_file(path, "0 100000 10\n");
		/* A namespace budget that never binds: root's limit is tested. */
		htw_test_set_ns_budget(pid, 1000, 0, 0);
		/* Should this fail, the child reads EOF and reports step 102. */
		write(to_child[1], "m", 1);
	}
	close(to_parent[0]);
	close(to_child[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * A uid of a user namespace root created is charged to root too: with
 * root holding 2 of 4 instances, the namespace's user gets the other 2,
 * not a budget of its own (as it would if the global uid were the key).
 */
TEST(instances_charged_to_namespace_creator)
{
	unsigned long old;
	int fds[4], n, err, got;

	if (getuid())
		SKIP(return, "needs root to set max_user_instances");
	ASSERT_EQ(0, htw_test_set_param("max_user_instances", 4, &old));
	n = open_until_refused(fds, 2, &err);
	got = run_subuid_child();
	close_all(fds, n);
	if (got == 199) {
		htw_test_set_param("max_user_instances", old, NULL);
		SKIP(return, "no user namespaces (CONFIG_USER_NS)");
	}
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, got) TH_LOG("the namespace's user opened %d (>= 100: step failed)", got);
	/* Everything was given back up the chain: root has 4 again. */
	n = open_until_refused(fds, 4, &err);
	EXPECT_EQ(4, n);
	close_all(fds, n);
	ASSERT_EQ(0, htw_test_set_param("max_user_instances", old, NULL));
}

static int setup_geometry(int fd, uint64_t tick_ns, uint32_t slots)
{
	struct htw_setup setup = {
		.clockid = CLOCK_MONOTONIC, .tick_ns = tick_ns, .slots = slots,
	};

	return ioctl(fd, HTW_IOC_SETUP, &setup);
}

/* A wheel that does not fit is not created: SETUP still works. */
TEST(wheel_bytes_refused_before_creation)
{
	struct htw_timer_entry e;
	struct htw_stats st;
	unsigned long old;
	int fd = htw_test_open(0);

	if (getuid())
		SKIP(return, "needs root to set max_user_wheel_bytes");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, htw_test_set_param("max_user_wheel_bytes", 1, &old));
	entry(&e, 1, HOUR);
	EXPECT_EQ(-1, schedule(fd, &e, 1));
	EXPECT_EQ(EDQUOT, errno);
	EXPECT_EQ(0, e.handle);
	ASSERT_EQ(0, stats(fd, &st));
	EXPECT_EQ(0, st.scheduled);
	EXPECT_EQ(0, setup_geometry(fd, 2 * MS, 64));
	ASSERT_EQ(0, htw_test_set_param("max_user_wheel_bytes", old, NULL));
	EXPECT_EQ(1, schedule(fd, &e, 1));
	ASSERT_EQ(0, stats(fd, &st));
	EXPECT_EQ(2 * MS, st.tick_ns);
	EXPECT_EQ(64, st.slots);
	close(fd);
}

/*
 * With 1 MiB: a 10 us x 65536-slot wheel (4 levels of 65536 buckets,
 * several MiB) is refused while default wheels fit, until their sum is
 * reached; closing one makes room for the next.
 */
TEST(wheel_bytes_limit_counts_every_wheel)
{
	struct htw_timer_entry e;
	int fds[100], big, n, ret = 0;
	unsigned long old;

	if (getuid())
		SKIP(return, "needs root to set max_user_wheel_bytes");
	ASSERT_EQ(0, htw_test_set_param("max_user_wheel_bytes", 1 << 20, &old));
	entry(&e, 1, HOUR);
	big = htw_test_open(0);
	ASSERT_LE(0, big);
	ASSERT_EQ(0, setup_geometry(big, 10000, 65536));
	EXPECT_EQ(-1, schedule(big, &e, 1));
	EXPECT_EQ(EDQUOT, errno);
	for (n = 0; n < 100; n++) {
		fds[n] = htw_test_open(0);
		ASSERT_LE(0, fds[n]);
		ret = schedule(fds[n], &e, 1);
		if (ret != 1)
			break;
	}
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EDQUOT, errno);
	EXPECT_LT(0, n);
	EXPECT_GT(100, n);
	if (n > 0 && n < 100) {
		close(fds[0]);
		fds[0] = fds[n];	/* its wheel was refused: retry there */
		EXPECT_EQ(1, schedule(fds[0], &e, 1));
	}
	close_all(fds, n < 100 ? n : 100);
	close(big);
	ASSERT_EQ(0, htw_test_set_param("max_user_wheel_bytes", old, NULL));
}

static long long memtotal_bytes(void)
{
	long long kb = -1;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* The documented defaults: 128 files, 1/8 of RAM in timers, 1/16 in wheels. */
TEST(default_limits_scale_with_memory)
{
	unsigned long instances, timers, bytes;
	long long ram = memtotal_bytes();
	unsigned long long want;

	ASSERT_LT(0, ram);
	ASSERT_EQ(0, htw_test_get_param("max_user_instances", &instances));
	ASSERT_EQ(0, htw_test_get_param("max_user_timers", &timers));
	ASSERT_EQ(0, htw_test_get_param("max_user_wheel_bytes", &bytes));
	EXPECT_EQ(128, instances);
	want = ram / 8 / 64;
	EXPECT_EQ(want < 4194304 ? want : 4194304, timers);
	EXPECT_EQ(ram / 16, bytes);
}

#define NS_UNSUPPORTED	HTW_TEST_NS_UNSUPPORTED
#define NS_OFFSET_S	1000LL

/*
 * In a time namespace: an HTW_TIMER_ABSTIME deadline 50 ms ahead on the
 * namespace's @clk fires then, not early, and its record's times are on
 * that clock too.  Returns 0 or the failing step.
 */
static int ns_abstime_fires_on_time(clockid_t clk)
{
	struct htw_setup setup = { .clockid = clk };
	uint64_t deadline, after;
	struct htw_timer_entry e;
	struct htw_expiry rec;
	int fd = htw_test_open(0);

	if (fd < 0 || ioctl(fd, HTW_IOC_SETUP, &setup))
		return 1;
	deadline = htw_test_now(clk) + 50 * MS;
	entry(&e, 7, deadline);
	e.flags = HTW_TIMER_ABSTIME;
	if (schedule(fd, &e, 1) != 1)
		return 2;
	/* Taken as a host time, it would be 1000 s away (or already due). */
	if (wait_readable(fd, 5000) != 1)
		return 3;
	after = htw_test_now(clk);
	if (read(fd, &rec, sizeof(rec)) != sizeof(rec) || rec.cookie != 7)
		return 4;
	if (after < deadline)
		return 5;	/* early on the namespace's clock */
	if (rec.deadline_ns != deadline)
		return 6;
	if (rec.expired_ns < deadline || rec.expired_ns > after)
		return 7;
	close(fd);
	return 0;
}

/* Before the namespace's offset: already due, reported at the offset. */
static int ns_deadline_before_offset_is_due(void)
{
	struct htw_timer_entry e;
	struct htw_expiry rec;
	int fd = htw_test_open(O_NONBLOCK);

	if (fd < 0)
		return 11;
	entry(&e, 8, 1);
	e.flags = HTW_TIMER_ABSTIME;
	if (schedule(fd, &e, 1) != 1)
		return 12;
	if (wait_readable(fd, 1000) != 1)
		return 13;
	if (read(fd, &rec, sizeof(rec)) != sizeof(rec))
		return 14;
	if (rec.deadline_ns != NS_OFFSET_S * 1000 * MS)
		return 15;
	close(fd);
	return 0;
}

/* Steps 1-7: CLOCK_MONOTONIC, 21-27: CLOCK_BOOTTIME, 11-15: before offset. */
static int ns_checks(int before_offset)
{
	int r = ns_abstime_fires_on_time(CLOCK_MONOTONIC);

	if (!r) {
		r = ns_abstime_fires_on_time(CLOCK_BOOTTIME);
		r += r ? 20 : 0;
	}
	if (!r && before_offset)
		r = ns_deadline_before_offset_is_due();
	return r;
}

static int ns_positive_checks(void)
{
	return ns_checks(1);
}

static int ns_negative_checks(void)
{
	return ns_checks(0);
}

static int in_time_ns(long long off_ns, int (*fn)(void))
{
	return htw_test_in_time_ns(off_ns, off_ns, fn);
}

static int in_time_ns_status(long long off_ns, int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(in_time_ns(off_ns, fn));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 94;
	return WEXITSTATUS(status);
}

TEST(abstime_on_the_openers_time_namespace)
{
	/* Behind the host: allowed while the namespace's clock stays >= 0. */
	long long back_ns = htw_test_now(CLOCK_MONOTONIC) / 2;
	int r;

	if (getuid())
		SKIP(return, "needs root for a time namespace");
	r = in_time_ns_status(NS_OFFSET_S * 1000 * MS, ns_positive_checks);
	if (r == NS_UNSUPPORTED)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	EXPECT_EQ(0, r) TH_LOG("offset +%lld s: step %d failed", NS_OFFSET_S, r);
	r = in_time_ns_status(-back_ns, ns_negative_checks);
	EXPECT_EQ(0, r) TH_LOG("offset -%lld ns: step %d failed", back_ns, r);
}

TEST_F(wheel, two_fds_isolated)
{
	int other = htw_test_open(0);
	struct htw_stats st;
	uint32_t result;
	uint64_t h;

	ASSERT_LE(0, other);
	h = schedule_one(other, 1, 5 * MS);
	ASSERT_NE(0, h);
	EXPECT_EQ(0, cancel_one(self->fd, h, &result));
	EXPECT_EQ(HTW_CANCEL_UNKNOWN, result);
	ASSERT_EQ(1, wait_readable(other, 2000));
	EXPECT_EQ(0, wait_readable(self->fd, 20));
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(0, st.fired);
	EXPECT_EQ(0, st.scheduled);
	close(other);
}

#define BOOT_AHEAD_S	2000LL

/*
 * In a time namespace whose CLOCK_BOOTTIME is 2000 s ahead of its
 * CLOCK_MONOTONIC (as after a long suspend): a BOOTTIME instance takes an
 * absolute deadline 50 ms ahead on BOOTTIME and fires it then (on
 * MONOTONIC it would be 2000 s away), and reports BOOTTIME times even
 * for a relative delay; a MONOTONIC instance keeps MONOTONIC times.
 * Returns 0 or the failing step.
 */
static int boottime_checks(void)
{
	struct htw_setup setup = { .clockid = CLOCK_BOOTTIME, .tick_ns = MS };
	struct htw_timer_entry e;
	struct htw_expiry rec;
	uint64_t mono, boot, after;
	int fd = htw_test_open(0), fd2 = htw_test_open(0);

	if (fd < 0 || fd2 < 0 || ioctl(fd, HTW_IOC_SETUP, &setup))
		return 31;
	if (setup.clockid != CLOCK_BOOTTIME)
		return 32;
	mono = htw_test_now(CLOCK_MONOTONIC);
	boot = htw_test_now(CLOCK_BOOTTIME);
	if (boot < mono + (BOOT_AHEAD_S - 1) * 1000 * MS)
		return 33;	/* the namespace is not what the test wrote */
	entry(&e, 1, boot + 50 * MS);
	e.flags = HTW_TIMER_ABSTIME;
	if (schedule(fd, &e, 1) != 1)
		return 34;
	if (wait_readable(fd, 5000) != 1)
		return 35;	/* taken as MONOTONIC: 2000 s away */
	after = htw_test_now(CLOCK_BOOTTIME);
	if (read(fd, &rec, sizeof(rec)) != sizeof(rec) || rec.cookie != 1)
		return 36;
	if (rec.deadline_ns != e.expires || after < e.expires ||
	    rec.expired_ns < e.expires || rec.expired_ns > after)
		return 37;
	/* A relative delay: the record's times are BOOTTIME's too. */
	entry(&e, 2, 5 * MS);
	boot = htw_test_now(CLOCK_BOOTTIME);
	if (schedule(fd, &e, 1) != 1 || read(fd, &rec, sizeof(rec)) != sizeof(rec))
		return 38;
	after = htw_test_now(CLOCK_BOOTTIME);
	if (rec.deadline_ns < boot + 5 * MS || rec.expired_ns > after)
		return 39;
	/* The default clock is still MONOTONIC, 2000 s behind. */
	mono = htw_test_now(CLOCK_MONOTONIC);
	entry(&e, 3, 5 * MS);
	if (schedule(fd2, &e, 1) != 1 || read(fd2, &rec, sizeof(rec)) != sizeof(rec))
		return 40;
	after = htw_test_now(CLOCK_MONOTONIC);
	if (rec.deadline_ns < mono + 5 * MS || rec.expired_ns > after)
		return 41;
	close(fd);
	close(fd2);
	return 0;
}

static int in_boot_ahead_ns(void)
{
	return htw_test_in_time_ns(0, BOOT_AHEAD_S * 1000 * MS, boottime_checks);
}

TEST(boottime_clock)
{
	int status, r;
	pid_t pid;

	/*
	 * Without a suspend BOOTTIME and MONOTONIC tick together, so only a
	 * time namespace with a boottime offset can tell them apart.
	 */
	if (getuid())
		SKIP(return, "needs root for a time namespace with a boottime offset");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(in_boot_ahead_ns());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	r = WEXITSTATUS(status);
	if (r == NS_UNSUPPORTED)
		SKIP(return, "no CONFIG_TIME_NS: BOOTTIME and MONOTONIC differ only across a suspend");
	EXPECT_EQ(0, r) TH_LOG("boottime +%lld s: step %d failed", BOOT_AHEAD_S, r);
}

TEST_F(wheel, setup_reports_geometry_and_is_once)
{
	struct htw_setup setup;
	struct htw_stats st;

	memset(&setup, 0, sizeof(setup));
	setup.clockid = CLOCK_MONOTONIC;
	setup.tick_ns = 2 * MS;
	setup.slots = 100;
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_SETUP, &setup));
	EXPECT_EQ(2 * MS, setup.tick_ns);
	EXPECT_EQ(128, setup.slots);
	EXPECT_LE(1, setup.levels);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(128, st.slots);
	EXPECT_EQ(2 * MS, st.tick_ns);
	ASSERT_NE(0, schedule_one(self->fd, 1, HOUR));
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SETUP, &setup));
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(wheel, fdinfo_shows_pending)
{
	char path[64], buf[1024];
	ssize_t n;
	int f;

	ASSERT_NE(0, schedule_one(self->fd, 1, HOUR));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->fd);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	n = read(f, buf, sizeof(buf) - 1);
	ASSERT_LT(0, n);
	buf[n] = 0;
	EXPECT_NE(NULL, strstr(buf, "htw-pending:\t1\n"));
	EXPECT_NE(NULL, strstr(buf, "htw-tick-ns:\t"));
	close(f);
}

TEST_F(wheel, cancel_and_drain_before_first_schedule)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .tick_ns = 2 * MS };
	struct htw_drain dreq = { 0 };
	uint32_t result = POISON;

	ASSERT_EQ(0, cancel_one(self->fd, 1ULL << 32, &result));
	EXPECT_EQ(HTW_CANCEL_UNKNOWN, result);
	dreq.drained = POISON;
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_DRAIN, &dreq));
	EXPECT_EQ(0, dreq.drained);
	/* Neither created the wheel: setup is still allowed. */
	EXPECT_EQ(0, ioctl(self->fd, HTW_IOC_SETUP, &setup));
}

TEST_F(wheel, forked_child_shares_the_instance)
{
	struct htw_expiry rec;
	uint64_t handle = schedule_one(self->fd, 77, 5 * MS);
	int status;
	pid_t pid;

	ASSERT_NE(0, handle);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The child reads the parent's timer: one open file, one wheel. */
		if (read(self->fd, &rec, sizeof(rec)) != sizeof(rec))
			_exit(1);
		_exit(rec.cookie == 77 && rec.handle == handle ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	fcntl(self->fd, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(EAGAIN, errno);
}

TEST(far_deadline_with_huge_slack_stays_in_the_wheel)
{
	static const struct htw_setup geos[] = {
		{ .clockid = CLOCK_MONOTONIC },				/* defaults */
		{ .clockid = CLOCK_MONOTONIC, .tick_ns = 100000, .slots = 64 },
		{ .clockid = CLOCK_MONOTONIC, .tick_ns = 10000, .slots = 4 },
	};

	for (size_t g = 0; g < sizeof(geos) / sizeof(geos[0]); g++) {
		struct htw_setup setup = geos[g];
		struct htw_timer_entry e;
		uint32_t result = POISON;
		int fd = htw_test_open(0);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
		/* Slack may round the last tick up: never past the last level. */
		entry(&e, 1, ~0ULL);
		e.flags = HTW_TIMER_ABSTIME;
		e.slack_ns = ~0ULL;
		ASSERT_EQ(1, schedule(fd, &e, 1));
		EXPECT_EQ(0, cancel_one(fd, e.handle, &result));
		EXPECT_EQ(HTW_CANCELLED, result);
		close(fd);
	}
}

TEST_F(wheel, refused_schedule_leaves_setup_possible)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .tick_ns = 2 * MS };
	struct htw_timer_entry e;

	entry(&e, 1, MS);
	e.pad = 1;
	EXPECT_EQ(-1, schedule(self->fd, &e, 1));
	EXPECT_EQ(EINVAL, errno);
	e.pad = 0;
	e.expires = ~0ULL;
	EXPECT_EQ(-1, schedule(self->fd, &e, 1));
	EXPECT_EQ(EOVERFLOW, errno);
	/* Nothing was scheduled, so the wheel was not created either. */
	EXPECT_EQ(0, ioctl(self->fd, HTW_IOC_SETUP, &setup));
}

TEST_F(wheel, unwritable_results_refused_before_acting)
{
	long page = sysconf(_SC_PAGESIZE);
	struct htw_cancel_entry *ce;
	struct htw_cancel *creq;
	struct htw_drain *dreq;
	struct htw_stats st;
	char *ro;

	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ce = (void *)ro;
	creq = (void *)(ro + 256);
	dreq = (void *)(ro + 512);
	ce->handle = schedule_one(self->fd, 1, HOUR);
	ASSERT_NE(0, ce->handle);
	creq->entries = (uintptr_t)ce;
	creq->count = 1;
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	/* The results could not be written: nothing may be cancelled. */
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_CANCEL, creq));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_DRAIN, dreq));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(1, st.pending);
	EXPECT_EQ(0, st.cancelled);
	munmap(ro, page);
}

TEST_F(wheel, cancelled_periodic_record_is_not_periodic)
{
	struct htw_timer_entry e;
	struct htw_expiry rec;
	uint32_t result;

	entry(&e, 9, 2 * MS);
	e.period_ns = 2 * MS;
	ASSERT_EQ(1, schedule(self->fd, &e, 1));
	ASSERT_EQ(1, wait_readable(self->fd, 2000));
	ASSERT_EQ(0, cancel_one(self->fd, e.handle, &result));
	EXPECT_EQ(HTW_CANCELLED, result);
	/* Its last record still comes, saying no more will. */
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(9, rec.cookie);
	EXPECT_EQ(0, rec.flags & HTW_EXPIRY_PERIODIC);
}

/* Every refused input returns its errno and leaves the statistics alone. */
static void bad_schedule(struct __test_metadata *_metadata, int fd,
			 struct htw_schedule *req, int err)
{
	struct htw_stats a, b;

	ASSERT_EQ(0, stats(fd, &a));
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_SCHEDULE, req));
	EXPECT_EQ(err, errno);
	ASSERT_EQ(0, stats(fd, &b));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
}

TEST_F(wheel, bad_schedule_requests)
{
	struct htw_timer_entry e[3];
	struct htw_schedule req;
	int i;

	for (i = 0; i < 3; i++)
		entry(&e[i], i, HOUR);
#define REQ(...) (req = (struct htw_schedule){ .entries = (uintptr_t)e, .count = 3, __VA_ARGS__ }, &req)
	bad_schedule(_metadata, self->fd, REQ(.flags = 1), EINVAL);
	bad_schedule(_metadata, self->fd, REQ(.pad = 1), EINVAL);
	bad_schedule(_metadata, self->fd, REQ(.reserved[2] = 1), EINVAL);
	bad_schedule(_metadata, self->fd, REQ(.count = 0), EINVAL);
	bad_schedule(_metadata, self->fd, REQ(.count = HTW_BATCH_MAX + 1), EINVAL);
	bad_schedule(_metadata, self->fd, REQ(.entries = 0), EFAULT);
	bad_schedule(_metadata, self->fd, REQ(.entries = 8), EFAULT);
	bad_schedule(_metadata, self->fd, REQ(.entries = ~0ULL - 8), EFAULT);
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SCHEDULE, NULL));
	EXPECT_EQ(EFAULT, errno);

	/* A bad entry anywhere in the batch: nothing is scheduled. */
	e[2].flags = 0x80;
	bad_schedule(_metadata, self->fd, REQ(), EINVAL);
	e[2].flags = 0;
	e[1].pad = 1;
	bad_schedule(_metadata, self->fd, REQ(), EINVAL);
	e[1].pad = 0;
	e[2].expires = ~0ULL;
	bad_schedule(_metadata, self->fd, REQ(), EOVERFLOW);
	e[2].expires = HOUR;
	e[1].period_ns = 1;	/* shorter than a tick */
	bad_schedule(_metadata, self->fd, REQ(), EINVAL);
	e[1].period_ns = 0;
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, e[i].handle);
	EXPECT_EQ(3, schedule(self->fd, e, 3));
#undef REQ
}

TEST_F(wheel, bad_cancel_drain_stats_setup)
{
	struct htw_cancel_entry ce = { .handle = 1 };
	struct htw_cancel creq = { .entries = (uintptr_t)&ce, .count = 1 };
	struct htw_unexpired out[2];
	struct htw_drain dreq;
	struct htw_setup setup;
	struct htw_stats st;

	creq.flags = 2;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_CANCEL, &creq));
	EXPECT_EQ(EINVAL, errno);
	creq.flags = 0;
	creq.reserved[0] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_CANCEL, &creq));
	EXPECT_EQ(EINVAL, errno);
	creq.reserved[0] = 0;
	ce.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_CANCEL, &creq));
	EXPECT_EQ(EINVAL, errno);
	ce.pad = 0;
	creq.count = 0;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_CANCEL, &creq));
	EXPECT_EQ(EINVAL, errno);
	creq.count = 1;
	creq.entries = 16;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_CANCEL, &creq));
	EXPECT_EQ(EFAULT, errno);

	ASSERT_NE(0, schedule_one(self->fd, 1, HOUR));
	memset(&dreq, 0, sizeof(dreq));
	dreq.count = 2;
	dreq.entries = 16;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_DRAIN, &dreq));
	EXPECT_EQ(EFAULT, errno);
	dreq.count = 0;
	dreq.entries = (uintptr_t)out;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_DRAIN, &dreq));
	EXPECT_EQ(EINVAL, errno);
	dreq.count = 2;
	dreq.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_DRAIN, &dreq));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stats(self->fd, &st));
	EXPECT_EQ(1, st.pending);	/* the failed drains cancelled nothing */

	memset(&st, 0, sizeof(st));
	st.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_STATS, NULL));
	EXPECT_EQ(EFAULT, errno);

	/* Setup after a timer exists is refused whatever it says. */
	memset(&setup, 0, sizeof(setup));
	setup.clockid = CLOCK_MONOTONIC;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_SETUP, &setup));
	EXPECT_EQ(EBUSY, errno);
}

TEST(bad_setup)
{
	struct htw_setup s;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
#define SETUP(...) (s = (struct htw_setup){ .clockid = CLOCK_MONOTONIC, __VA_ARGS__ }, \
		    ioctl(fd, HTW_IOC_SETUP, &s))
	EXPECT_EQ(-1, SETUP(.clockid = CLOCK_REALTIME));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, SETUP(.flags = 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, SETUP(.reserved[3] = 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, SETUP(.tick_ns = 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, SETUP(.slots = 1U << 30));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, SETUP(.max_pending = ~0ULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, SETUP(.tick_ns = 0));
#undef SETUP
	close(fd);
}

TEST_HARNESS_MAIN
