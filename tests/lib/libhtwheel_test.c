// SPDX-License-Identifier: GPL-2.0
/*
 * libhtwheel: every public function and its error paths, against the real
 * device.  Timing assertions only ever bound from below (never early);
 * upper bounds are generous timeouts that only catch "never".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "htwheel.h"
#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		HTW_NSEC_PER_MSEC
#define NEVER_MS	10000	/* "it never came": a timeout, not a bound */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * HTW_NSEC_PER_SEC + ts.tv_nsec;
}

/* Wait for and read exactly one record. */
static int read_one(struct htw *h, struct htw_expiry *r)
{
	int ret = htw_wait(h, (int64_t)NEVER_MS * MS);

	if (ret != 1)
		return ret < 0 ? ret : -ETIMEDOUT;
	return htw_read(h, r, 1);
}

FIXTURE(lib) {
	struct htw *h;
};

FIXTURE_SETUP(lib)
{
	int ret = htw_open(&self->h, NULL);

	ASSERT_EQ(0, ret) TH_LOG("htw_open: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(lib)
{
	if (self->h)
		EXPECT_EQ(0, htw_close(self->h));
}

/* ---- htw_open / htw_close / htw_fd ---- */

TEST(open_defaults_written_back)
{
	struct htw_params p = { 0 };
	struct htw *h;

	ASSERT_EQ(0, htw_open(&h, &p));
	EXPECT_EQ(CLOCK_MONOTONIC, p.clockid);
	EXPECT_LT(0, p.tick_ns);
	EXPECT_LT(0, p.slots);
	EXPECT_LT(0, p.levels);
	EXPECT_LT(0, p.max_pending);
	EXPECT_LE(0, htw_fd(h));
	/* The fd is for event loops: it must not block. */
	EXPECT_TRUE(fcntl(htw_fd(h), F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(htw_fd(h), F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, htw_close(h));
}

TEST(open_geometry)
{
	struct htw_params p = {
		.tick_ns = 2 * MS, .slots = 100, .clockid = CLOCK_BOOTTIME,
		.max_pending = 10,
	};
	struct htw_stats st;
	struct htw *h;

	ASSERT_EQ(0, htw_open(&h, &p));
	EXPECT_EQ(2 * MS, p.tick_ns);
	EXPECT_EQ(128, p.slots);	/* rounded up to a power of two */
	EXPECT_EQ(CLOCK_BOOTTIME, p.clockid);
	EXPECT_EQ(10, p.max_pending);
	ASSERT_EQ(0, htw_stats(h, &st));
	EXPECT_EQ(2 * MS, st.tick_ns);
	EXPECT_EQ(CLOCK_BOOTTIME, st.clockid);
	EXPECT_EQ(0, htw_close(h));
}

TEST(open_bad_params)
{
	struct htw_params p;
	struct htw *h = (struct htw *)1;

	memset(&p, 0, sizeof(p));
	p.tick_ns = 1;			/* below the module's minimum */
	EXPECT_EQ(-EINVAL, htw_open(&h, &p));
	EXPECT_EQ(NULL, h);		/* *hp is cleared on failure */

	memset(&p, 0, sizeof(p));
	p.clockid = CLOCK_REALTIME + 100;
	EXPECT_EQ(-EINVAL, htw_open(&h, &p));

	memset(&p, 0, sizeof(p));
	p.max_pending = UINT64_MAX;
	EXPECT_EQ(-EINVAL, htw_open(&h, &p));

	/* Passed through: the kernel refuses what it does not know. */
	memset(&p, 0, sizeof(p));
	p.flags = 1;
	EXPECT_EQ(-EINVAL, htw_open(&h, &p));

	memset(&p, 0, sizeof(p));
	p.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, htw_open(&h, &p));

	EXPECT_EQ(-EINVAL, htw_open(NULL, NULL));
}

TEST(open_missing_device)
{
	struct htw_params p = { .device = "/run/tmp/no-such-htwheel" };
	struct htw *h;

	EXPECT_EQ(-ENOENT, htw_open(&h, &p));
	/* Not an htwheel: the handshake is refused. */
	p.device = "/dev/null";
	EXPECT_EQ(-ENOTTY, htw_open(&h, &p));
}

/*
 * A device that answers HTW_IOC_API with EINVAL, as a module of another
 * API version does: /dev/urandom says EINVAL to every ioctl it does not
 * know.  Not a refused geometry: EPROTONOSUPPORT.
 */
TEST(open_handshake_refused)
{
	struct htw_params p = { .device = "/dev/urandom" };
	struct htw *h = (struct htw *)1;

	if (access(p.device, R_OK | W_OK))
		SKIP(return, "%s: %s", p.device, strerror(errno));
	EXPECT_EQ(-EPROTONOSUPPORT, htw_open(&h, &p));
	EXPECT_EQ(NULL, h);
}

TEST(close_and_fd_null)
{
	EXPECT_EQ(-EINVAL, htw_close(NULL));
	EXPECT_EQ(-EINVAL, htw_fd(NULL));
	EXPECT_EQ(0, htw_now(NULL));
}

/* A descriptor closed behind the library's back: errors, not "ready". */
TEST(fd_closed_behind_our_back)
{
	struct htw *h;

	ASSERT_EQ(0, htw_open(&h, NULL));
	ASSERT_EQ(0, close(htw_fd(h)));
	EXPECT_EQ(-EBADF, htw_wait(h, 0));		/* POLLNVAL */
	EXPECT_EQ(-EBADF, htw_wait(h, 1000 * MS));	/* and at once */
	EXPECT_EQ(-EBADF, htw_close(h));		/* close(2)'s errno */
}

/*
 * Closing the handle frees its timers in the kernel: the htw_timer slab
 * holds n more objects while they are pending and gives them all back
 * after htw_close().  Nothing else uses the device while this runs.
 */
TEST(close_cancels_everything)
{
	enum { N = 1000 };
	static struct htw_timer_entry e[N];
	long before = htw_test_timer_slots(), during, after = -1;
	struct htw_stats st;
	struct htw *h;
	int fd, i;

	ASSERT_EQ(0, htw_open(&h, NULL));
	for (i = 0; i < N; i++)
		e[i] = (struct htw_timer_entry){
			.cookie = i, .expires = 3600 * HTW_NSEC_PER_SEC + i * MS,
		};
	ASSERT_EQ(N, htw_schedule_many(h, e, N));
	ASSERT_EQ(0, htw_stats(h, &st));
	EXPECT_EQ(N, st.pending);
	during = htw_test_timer_slots();
	fd = htw_fd(h);
	EXPECT_EQ(0, htw_close(h));
	/* The fd went with the handle. */
	EXPECT_EQ(-1, fcntl(fd, F_GETFD));
	if (before < 0)
		SKIP(return, "no /sys/kernel/slab/htw_timer/objects");
	EXPECT_LE(before + N, during);
	/* Frees may go through RCU (SLUB_RCU_DEBUG): bounded, 2 s at most. */
	for (i = 0; i < 100; i++) {
		after = htw_test_timer_slots();
		if (after <= before)
			break;
		usleep(20 * 1000);
	}
	EXPECT_GE(before, after)
		TH_LOG("%ld htw_timer objects before, %ld with %d pending, %ld after close",
		       before, during, N, after);
}

/* ---- htw_now and the duration helpers ---- */

TEST_F(lib, now_is_the_instance_clock)
{
	uint64_t a = mono_ns(), b = htw_now(self->h), c = mono_ns();

	EXPECT_LE(a, b);
	EXPECT_LE(b, c);
}

TEST(duration_helpers)
{
	EXPECT_EQ(5000ULL, htw_us(5));
	EXPECT_EQ(250 * MS, htw_ms(250));
	EXPECT_EQ(3 * HTW_NSEC_PER_SEC, htw_sec(3));
	EXPECT_EQ(UINT64_MAX, htw_sec(UINT64_MAX / 2));	/* saturates */
	EXPECT_EQ(UINT64_MAX, htw_ms(UINT64_MAX));
}

/* ---- htw_schedule ---- */

TEST_F(lib, schedule_fires_never_early)
{
	struct htw_expiry r;
	uint64_t handle = 0, t0 = mono_ns();

	ASSERT_EQ(0, htw_schedule(self->h, 42, 30 * MS, 0, &handle));
	EXPECT_NE(0, handle);
	ASSERT_EQ(1, read_one(self->h, &r));
	EXPECT_LE(t0 + 30 * MS, mono_ns());
	EXPECT_EQ(42, r.cookie);
	EXPECT_EQ(handle, r.handle);
	EXPECT_LE(t0 + 30 * MS, r.deadline_ns);
	EXPECT_LE(r.deadline_ns, r.expired_ns);
	EXPECT_EQ(0, r.flags & HTW_EXPIRY_PERIODIC);
}

TEST_F(lib, schedule_periodic)
{
	struct htw_expiry r;
	uint64_t handle, t0 = mono_ns();
	int i;

	ASSERT_EQ(0, htw_schedule(self->h, 7, 10 * MS, 10 * MS, &handle));
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(1, read_one(self->h, &r));
		EXPECT_EQ(7, r.cookie);
		EXPECT_TRUE(r.flags & HTW_EXPIRY_PERIODIC);
		EXPECT_LE(t0 + i * 10 * MS, mono_ns());
		i += r.overrun;
	}
	EXPECT_EQ(0, htw_cancel(self->h, handle));
}

TEST_F(lib, schedule_null_handle_ok)
{
	struct htw_stats st;

	EXPECT_EQ(0, htw_schedule(self->h, 1, HTW_NSEC_PER_SEC, 0, NULL));
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(1, st.pending);
}

TEST_F(lib, schedule_errors)
{
	uint64_t handle = 99;

	/* A period shorter than the tick. */
	EXPECT_EQ(-EINVAL, htw_schedule(self->h, 1, MS, 1, &handle));
	EXPECT_EQ(99, handle);		/* untouched on failure */
	/* now + delay does not fit. */
	EXPECT_EQ(-EOVERFLOW, htw_schedule(self->h, 1, UINT64_MAX, 0, &handle));
	EXPECT_EQ(-EINVAL, htw_schedule(NULL, 1, MS, 0, &handle));
}

TEST(schedule_limit)
{
	struct htw_params p = { .max_pending = 2 };
	struct htw *h;

	ASSERT_EQ(0, htw_open(&h, &p));
	EXPECT_EQ(0, htw_schedule(h, 1, HTW_NSEC_PER_SEC, 0, NULL));
	EXPECT_EQ(0, htw_schedule(h, 2, HTW_NSEC_PER_SEC, 0, NULL));
	EXPECT_EQ(-ENOSPC, htw_schedule(h, 3, HTW_NSEC_PER_SEC, 0, NULL));
	EXPECT_EQ(0, htw_close(h));
}

/* ---- htw_schedule_many ---- */

TEST_F(lib, schedule_many_all)
{
	struct htw_timer_entry e[100];
	struct htw_stats st;
	int i;

	memset(e, 0, sizeof(e));
	for (i = 0; i < 100; i++) {
		e[i].cookie = i;
		e[i].expires = HTW_NSEC_PER_SEC + i * MS;
	}
	ASSERT_EQ(100, htw_schedule_many(self->h, e, 100));
	for (i = 1; i < 100; i++)
		ASSERT_NE(e[i - 1].handle, e[i].handle);
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(100, st.pending);
	EXPECT_EQ(0, htw_schedule_many(self->h, e, 0));	/* nothing to do */
}

TEST(schedule_many_partial)
{
	struct htw_params p = { .max_pending = 3 };
	struct htw_timer_entry e[5];
	struct htw *h;

	memset(e, 0, sizeof(e));
	for (int i = 0; i < 5; i++)
		e[i].expires = HTW_NSEC_PER_SEC;
	ASSERT_EQ(0, htw_open(&h, &p));
	/* The kernel stops at the limit and says how far it got. */
	EXPECT_EQ(3, htw_schedule_many(h, e, 5));
	EXPECT_NE(0, e[2].handle);
	EXPECT_EQ(0, e[3].handle);
	/* Nothing at all fits now: the error itself. */
	EXPECT_EQ(-ENOSPC, htw_schedule_many(h, e + 3, 2));
	EXPECT_EQ(0, htw_close(h));
}

TEST_F(lib, schedule_many_bad_entry_does_nothing)
{
	struct htw_timer_entry e[3];
	struct htw_stats st;

	memset(e, 0, sizeof(e));
	e[0].expires = HTW_NSEC_PER_SEC;
	e[1].expires = HTW_NSEC_PER_SEC;
	e[2].expires = HTW_NSEC_PER_SEC;
	e[2].pad = 1;
	EXPECT_EQ(-EINVAL, htw_schedule_many(self->h, e, 3));
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(0, st.pending);
	e[2].pad = 0;
	e[2].flags = HTW_TIMER_FLAGS_ALL + 1;	/* an unknown flag, last */
	EXPECT_EQ(-EINVAL, htw_schedule_many(self->h, e, 3));
	e[2].flags = 0;
	e[2].period_ns = 1;			/* below the tick, last */
	EXPECT_EQ(-EINVAL, htw_schedule_many(self->h, e, 3));
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(-EFAULT, htw_schedule_many(self->h, (void *)8, 1));
	EXPECT_EQ(-EINVAL, htw_schedule_many(NULL, e, 1));
}

/*
 * Room for @n entries of @size, zero and lazily backed (reading the
 * untouched part costs no memory), so that a batch of more than
 * HTW_BATCH_MAX entries fits in a test.
 */
static void *big_batch(size_t n, size_t size, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = (n * size + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * Split into two ioctls, the entries still go to the kernel as they are:
 * the library reads none of them itself, so an unreadable first chunk is
 * the kernel's EFAULT, with nothing scheduled, whatever the second chunk
 * holds (here a flag this header does not know).  That a chunk refused
 * after others were scheduled ends the batch with their count is the
 * kernel's per-chunk check too; a whole chunk, 2^20 timers, is too slow
 * to schedule here to show it.
 */
TEST_F(lib, schedule_many_split_reaches_the_kernel)
{
	const unsigned int n = HTW_BATCH_MAX + 1;
	long page = sysconf(_SC_PAGESIZE);
	struct htw_timer_entry *e;
	struct htw_stats st;
	size_t len;

	e = big_batch(n, sizeof(*e), &len);
	ASSERT_NE(NULL, e);
	e[n - 1].expires = HTW_NSEC_PER_SEC;
	e[n - 1].flags = 0x80000000;
	ASSERT_EQ(0, mprotect(e, page, PROT_NONE));
	EXPECT_EQ(-EFAULT, htw_schedule_many(self->h, e, n));
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(0, st.scheduled);
	munmap(e, len);
}

TEST_F(lib, schedule_many_abstime)
{
	struct htw_timer_entry e = { .cookie = 5, .flags = HTW_TIMER_ABSTIME };
	struct htw_expiry r;

	e.expires = htw_now(self->h) + 20 * MS;
	ASSERT_EQ(1, htw_schedule_many(self->h, &e, 1));
	ASSERT_EQ(1, read_one(self->h, &r));
	EXPECT_EQ(e.expires, r.deadline_ns);
	EXPECT_LE(e.expires, mono_ns());
}

/* ---- htw_cancel / htw_cancel_many ---- */

TEST_F(lib, cancel_results)
{
	struct htw_expiry r;
	uint64_t pending, fired;

	ASSERT_EQ(0, htw_schedule(self->h, 1, 3600 * HTW_NSEC_PER_SEC, 0, &pending));
	ASSERT_EQ(0, htw_schedule(self->h, 2, MS, 0, &fired));
	ASSERT_EQ(1, htw_wait(self->h, (int64_t)NEVER_MS * MS));

	EXPECT_EQ(0, htw_cancel(self->h, pending));
	EXPECT_EQ(-ENOENT, htw_cancel(self->h, pending));	/* twice */
	/* Expired, record still queued: too late, and the record stays. */
	EXPECT_EQ(-EALREADY, htw_cancel(self->h, fired));
	ASSERT_EQ(1, htw_read(self->h, &r, 1));
	EXPECT_EQ(fired, r.handle);
	/* Once read, the timer is gone altogether. */
	EXPECT_EQ(-ENOENT, htw_cancel(self->h, fired));
	EXPECT_EQ(-ENOENT, htw_cancel(self->h, 0));
	EXPECT_EQ(-EINVAL, htw_cancel(NULL, pending));
}

/*
 * A timer cancelled before its deadline never fires.  Whether the cancel
 * really came first is measured, not assumed: on a loaded machine the
 * round is tried again (a cancel after the deadline may rightly find the
 * timer fired).  The wait then runs well past the deadline.
 */
TEST_F(lib, cancelled_never_fires)
{
	struct htw_expiry rec;
	uint64_t h, t0, t1;
	int round, ret = -1;

	for (round = 0; round < 10; round++) {
		t0 = mono_ns();
		ASSERT_EQ(0, htw_schedule(self->h, 1, 20 * MS, 0, &h));
		ret = htw_cancel(self->h, h);
		t1 = mono_ns();
		if (t1 - t0 < 20 * MS)
			break;
		/* Too slow to tell: clear whatever it left and go again. */
		while (htw_read(self->h, &rec, 1) > 0)
			;
	}
	ASSERT_GT(10, round) TH_LOG("no cancel within 20 ms of its schedule in 10 rounds");
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, htw_wait(self->h, 100 * MS));
	EXPECT_LE(t1 + 100 * MS, mono_ns());
	EXPECT_EQ(0, htw_read(self->h, &rec, 1));
}

TEST_F(lib, cancel_many_mixed)
{
	struct htw_cancel_entry c[3];
	uint64_t a, b;

	ASSERT_EQ(0, htw_schedule(self->h, 1, 3600 * HTW_NSEC_PER_SEC, 0, &a));
	ASSERT_EQ(0, htw_schedule(self->h, 2, 3600 * HTW_NSEC_PER_SEC, 0, &b));
	memset(c, 0, sizeof(c));
	c[0].handle = a;
	c[1].handle = 12345;
	c[2].handle = b;
	EXPECT_EQ(2, htw_cancel_many(self->h, c, 3));
	EXPECT_EQ(HTW_CANCELLED, c[0].result);
	EXPECT_EQ(HTW_CANCEL_UNKNOWN, c[1].result);
	EXPECT_EQ(HTW_CANCELLED, c[2].result);
	EXPECT_EQ(0, htw_cancel_many(self->h, c, 0));
	c[0].pad = 1;
	EXPECT_EQ(-EINVAL, htw_cancel_many(self->h, c, 1));
	EXPECT_EQ(-EFAULT, htw_cancel_many(self->h, (void *)8, 1));
	EXPECT_EQ(-EINVAL, htw_cancel_many(NULL, c, 1));
}

/*
 * Split into two ioctls, a bad pad in the second chunk reaches the kernel,
 * which refuses that chunk whole: the first chunk's cancellation happened
 * and is counted, and the refused entry, sent again, is the kernel's EINVAL.
 */
TEST_F(lib, cancel_many_split_refused_chunk_stops_there)
{
	const unsigned int n = HTW_BATCH_MAX + 1;
	struct htw_cancel_entry *c;
	struct htw_stats st;
	uint64_t a, b;
	size_t len;

	/* An hour away: a batch of a million entries is slow in UML. */
	ASSERT_EQ(0, htw_schedule(self->h, 1, 3600 * HTW_NSEC_PER_SEC, 0, &a));
	ASSERT_EQ(0, htw_schedule(self->h, 2, 3600 * HTW_NSEC_PER_SEC, 0, &b));
	c = big_batch(n, sizeof(*c), &len);
	ASSERT_NE(NULL, c);
	c[0].handle = a;
	c[n - 1].handle = b;
	c[n - 1].pad = 1;
	EXPECT_EQ(1, htw_cancel_many(self->h, c, n));
	EXPECT_EQ(HTW_CANCELLED, c[0].result);
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(1, st.pending);		/* b, in the refused chunk */
	EXPECT_EQ(-EINVAL, htw_cancel_many(self->h, c + n - 1, 1));
	munmap(c, len);
}

/*
 * The second chunk cannot be written (EFAULT): the first chunk's
 * cancellation happened, and the call says so instead of failing.
 */
TEST_F(lib, cancel_many_split_later_chunk_fails)
{
	const unsigned int n = HTW_BATCH_MAX + 1;
	struct htw_cancel_entry *c;
	struct htw_stats st;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t a;
	size_t len;

	ASSERT_EQ(0, (HTW_BATCH_MAX * sizeof(*c)) % page);
	/* An hour away: a batch of a million entries is slow in UML. */
	ASSERT_EQ(0, htw_schedule(self->h, 1, 3600 * HTW_NSEC_PER_SEC, 0, &a));
	c = big_batch(n, sizeof(*c), &len);
	ASSERT_NE(NULL, c);
	c[0].handle = a;
	c[0].result = 99;
	/* Readable, not writable: the kernel fails the second chunk. */
	ASSERT_EQ(0, mprotect((char *)c + HTW_BATCH_MAX * sizeof(*c),
			      len - HTW_BATCH_MAX * sizeof(*c), PROT_READ));
	EXPECT_EQ(1, htw_cancel_many(self->h, c, n));
	EXPECT_EQ(HTW_CANCELLED, c[0].result);
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(-ENOENT, htw_cancel(self->h, a));
	/* A first chunk that fails is the error itself. */
	EXPECT_EQ(-EFAULT, htw_cancel_many(self->h, c + HTW_BATCH_MAX, 1));
	munmap(c, len);
}

/* ---- htw_rearm / htw_rearm_many ---- */

/*
 * mod_timer()'s answers: 1 for a pending timer, 0 for one whose unread
 * record is taken back (it fires again, with its handle and cookie, never
 * before the new time), -ENOENT once it is gone.
 */
TEST_F(lib, rearm_results)
{
	struct htw_expiry r;
	uint64_t pending, fired, t0;
	int ret;

	ASSERT_EQ(0, htw_schedule(self->h, 1, 3600 * HTW_NSEC_PER_SEC, 0, &pending));
	ASSERT_EQ(0, htw_schedule(self->h, 2, MS, 0, &fired));
	ASSERT_EQ(1, htw_wait(self->h, (int64_t)NEVER_MS * MS));

	EXPECT_EQ(1, htw_rearm(self->h, pending, 7200 * HTW_NSEC_PER_SEC));
	t0 = mono_ns();
	EXPECT_EQ(0, htw_rearm(self->h, fired, 50 * MS));
	/* The old record (deadline before t0) is gone: the next is the new one. */
	ret = htw_read(self->h, &r, 1);
	if (!ret)
		ret = read_one(self->h, &r);
	ASSERT_EQ(1, ret);
	EXPECT_LE(t0 + 50 * MS, mono_ns());
	EXPECT_EQ(2, r.cookie);
	EXPECT_EQ(fired, r.handle);
	EXPECT_LE(t0 + 50 * MS, r.deadline_ns);
	EXPECT_EQ(0, htw_read(self->h, &r, 1));
	/* Read: the one-shot is gone; the pending one still answers 1. */
	EXPECT_EQ(-ENOENT, htw_rearm(self->h, fired, MS));
	EXPECT_EQ(1, htw_rearm(self->h, pending, 3600 * HTW_NSEC_PER_SEC));
	EXPECT_EQ(0, htw_cancel(self->h, pending));
	EXPECT_EQ(-ENOENT, htw_rearm(self->h, pending, MS));
	EXPECT_EQ(-ENOENT, htw_rearm(self->h, 0, MS));
	EXPECT_EQ(-EOVERFLOW, htw_rearm(self->h, fired, UINT64_MAX));
	EXPECT_EQ(-EINVAL, htw_rearm(NULL, pending, MS));
}

/* Brought forward from an hour to 20 ms, the timer fires then. */
TEST_F(lib, rearm_earlier_fires_at_the_new_time)
{
	struct htw_expiry r;
	uint64_t handle, t0;

	ASSERT_EQ(0, htw_schedule(self->h, 3, 3600 * HTW_NSEC_PER_SEC, 0, &handle));
	t0 = mono_ns();
	ASSERT_EQ(1, htw_rearm(self->h, handle, 20 * MS));
	ASSERT_EQ(1, read_one(self->h, &r));
	EXPECT_LE(t0 + 20 * MS, mono_ns());
	EXPECT_EQ(3, r.cookie);
	EXPECT_EQ(handle, r.handle);
}

TEST_F(lib, rearm_many_mixed)
{
	struct htw_rearm_entry e[3];
	struct htw_expiry r;
	uint64_t a, b, deadline;

	ASSERT_EQ(0, htw_schedule(self->h, 1, 3600 * HTW_NSEC_PER_SEC, 0, &a));
	ASSERT_EQ(0, htw_schedule(self->h, 2, 3600 * HTW_NSEC_PER_SEC, 0, &b));
	memset(e, 0, sizeof(e));
	deadline = htw_now(self->h) + 20 * MS;
	e[0].handle = a;
	e[0].expires = 7200 * HTW_NSEC_PER_SEC;
	e[1].handle = 12345;
	e[2].handle = b;
	e[2].expires = deadline;
	e[2].flags = HTW_TIMER_ABSTIME;
	EXPECT_EQ(2, htw_rearm_many(self->h, e, 3));
	EXPECT_EQ(HTW_REARMED, e[0].result);
	EXPECT_EQ(HTW_REARM_UNKNOWN, e[1].result);
	EXPECT_EQ(HTW_REARMED, e[2].result);
	ASSERT_EQ(1, read_one(self->h, &r));
	EXPECT_EQ(b, r.handle);
	EXPECT_EQ(deadline, r.deadline_ns);
	EXPECT_EQ(0, htw_rearm_many(self->h, e, 0));
	/* The kernel refuses an unknown flag, and the library passes it on. */
	e[0].flags = 0x2;
	EXPECT_EQ(-EINVAL, htw_rearm_many(self->h, e, 1));
	EXPECT_EQ(-EFAULT, htw_rearm_many(self->h, (void *)8, 1));
	EXPECT_EQ(-EINVAL, htw_rearm_many(NULL, e, 1));
}

/* ---- htw_read / htw_wait ---- */

TEST_F(lib, read_nothing_ready)
{
	struct htw_expiry r[4];

	EXPECT_EQ(0, htw_read(self->h, r, 4));
	EXPECT_EQ(-EINVAL, htw_read(self->h, r, 0));
	EXPECT_EQ(-EINVAL, htw_read(NULL, r, 4));
}

TEST_F(lib, read_many_and_short_buffer)
{
	struct htw_timer_entry e[10];
	struct htw_expiry r[10];
	int got = 0, n, i, seen[10] = { 0 };

	memset(e, 0, sizeof(e));
	for (i = 0; i < 10; i++) {
		e[i].cookie = 100 + i;
		e[i].expires = 5 * MS;
	}
	ASSERT_EQ(10, htw_schedule_many(self->h, e, 10));
	/* Records come out at most as many as asked for, none lost. */
	while (got < 10) {
		ASSERT_EQ(1, htw_wait(self->h, (int64_t)NEVER_MS * MS));
		n = htw_read(self->h, r + got, got < 4 ? 3 : 10 - got);
		ASSERT_LE(0, n);
		ASSERT_GE(got < 4 ? 3 : 10 - got, n);
		got += n;
	}
	/* Exactly the ten cookies, each once: none lost, none doubled. */
	for (i = 0; i < 10; i++) {
		ASSERT_LE(100, r[i].cookie);
		ASSERT_GT(110, r[i].cookie);
		EXPECT_EQ(0, seen[r[i].cookie - 100]) TH_LOG("cookie %llu twice",
							     (unsigned long long)r[i].cookie);
		seen[r[i].cookie - 100] = 1;
	}
	/* The harness's EXPECT is two statements: test the first gap once. */
	for (i = 0; i < 10 && seen[i]; i++)
		;
	EXPECT_EQ(10, i) TH_LOG("cookie %d never read", 100 + i);
	EXPECT_EQ(0, htw_read(self->h, r, 10));
}

TEST_F(lib, wait_timeout_and_ready)
{
	uint64_t t0 = mono_ns();

	EXPECT_EQ(0, htw_wait(self->h, 20 * MS));
	EXPECT_LE(t0 + 20 * MS, mono_ns());
	EXPECT_EQ(0, htw_wait(self->h, 0));
	ASSERT_EQ(0, htw_schedule(self->h, 1, MS, 0, NULL));
	EXPECT_EQ(1, htw_wait(self->h, -1));
	EXPECT_EQ(-EINVAL, htw_wait(NULL, 0));
}

TEST_F(lib, fd_polls)
{
	struct pollfd p = { .fd = htw_fd(self->h), .events = POLLIN };

	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, htw_schedule(self->h, 1, MS, 0, NULL));
	EXPECT_EQ(1, poll(&p, 1, NEVER_MS));
}

/* ---- htw_drain ---- */

TEST_F(lib, drain_reports_unexpired)
{
	struct htw_unexpired u[4];
	struct htw_stats st;
	uint64_t h1, h2;

	ASSERT_EQ(0, htw_schedule(self->h, 11, HTW_NSEC_PER_SEC, 0, &h1));
	ASSERT_EQ(0, htw_schedule(self->h, 12, 2 * HTW_NSEC_PER_SEC, 0, &h2));
	ASSERT_EQ(2, htw_drain(self->h, u, 4));
	EXPECT_EQ(11 + 12, u[0].cookie + u[1].cookie);
	EXPECT_TRUE(u[0].handle == h1 || u[0].handle == h2);
	EXPECT_GE(2 * HTW_NSEC_PER_SEC, u[0].remaining_ns);
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(-ENOENT, htw_cancel(self->h, h1));
	EXPECT_EQ(0, htw_drain(self->h, u, 4));
}

TEST_F(lib, drain_more_than_room)
{
	struct htw_unexpired u[1];
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, htw_schedule(self->h, i, HTW_NSEC_PER_SEC, 0, NULL));
	/* All are cancelled; only the first is described. */
	EXPECT_EQ(3, htw_drain(self->h, u, 1));
	ASSERT_EQ(0, htw_schedule(self->h, 9, HTW_NSEC_PER_SEC, 0, NULL));
	EXPECT_EQ(1, htw_drain(self->h, NULL, 0));
}

TEST_F(lib, drain_errors)
{
	EXPECT_EQ(-EINVAL, htw_drain(self->h, NULL, 1));
	EXPECT_EQ(-EINVAL, htw_drain(NULL, NULL, 0));
	ASSERT_EQ(0, htw_schedule(self->h, 1, HTW_NSEC_PER_SEC, 0, NULL));
	/* A drain that cannot report does not happen. */
	EXPECT_EQ(-EFAULT, htw_drain(self->h, (void *)8, 1));
	EXPECT_EQ(1, htw_drain(self->h, NULL, 0));
}

/*
 * More room than one ioctl can describe: refused like the kernel does,
 * rather than cut short with the rest of the buffer left unwritten.
 */
TEST_F(lib, drain_above_batch_max)
{
	struct htw_unexpired u[1];
	struct htw_stats st;

	ASSERT_EQ(0, htw_schedule(self->h, 1, HTW_NSEC_PER_SEC, 0, NULL));
	EXPECT_EQ(-EINVAL, htw_drain(self->h, u, HTW_BATCH_MAX + 1));
	EXPECT_EQ(-EINVAL, htw_drain(self->h, u, UINT32_MAX));
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(1, st.pending);		/* nothing was cancelled */
	EXPECT_EQ(1, htw_drain(self->h, u, 1));
}

/* ---- htw_stats ---- */

TEST_F(lib, stats_count)
{
	struct htw_stats st;
	struct htw_expiry r;
	uint64_t h;

	ASSERT_EQ(0, htw_schedule(self->h, 1, MS, 0, NULL));
	ASSERT_EQ(0, htw_schedule(self->h, 2, HTW_NSEC_PER_SEC, 0, &h));
	ASSERT_EQ(1, read_one(self->h, &r));
	ASSERT_EQ(0, htw_cancel(self->h, h));
	ASSERT_EQ(0, htw_stats(self->h, &st));
	EXPECT_EQ(2, st.scheduled);
	EXPECT_EQ(1, st.fired);
	EXPECT_EQ(1, st.cancelled);
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(0, st.ready);
	EXPECT_EQ(-EINVAL, htw_stats(self->h, NULL));
	EXPECT_EQ(-EINVAL, htw_stats(NULL, &st));
}

/* ---- htw_set_eventfd ---- */

TEST_F(lib, eventfd_signalled)
{
	struct pollfd p;
	uint64_t v = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, htw_set_eventfd(self->h, efd));
	ASSERT_EQ(0, htw_schedule(self->h, 1, MS, 0, NULL));
	p = (struct pollfd){ .fd = efd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, NEVER_MS));
	EXPECT_EQ(sizeof(v), read(efd, &v, sizeof(v)));
	EXPECT_LE(1, v);

	/* Cleared: no more signals. */
	ASSERT_EQ(0, htw_set_eventfd(self->h, -1));
	ASSERT_EQ(0, htw_schedule(self->h, 2, MS, 0, NULL));
	ASSERT_EQ(1, htw_wait(self->h, (int64_t)NEVER_MS * MS));
	EXPECT_EQ(0, poll(&p, 1, 0));
	close(efd);
}

TEST_F(lib, eventfd_errors)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	EXPECT_EQ(-EBADF, htw_set_eventfd(self->h, 1000000));
	EXPECT_EQ(-EINVAL, htw_set_eventfd(self->h, fd));	/* not an eventfd */
	EXPECT_EQ(-EINVAL, htw_set_eventfd(self->h, -2));
	EXPECT_EQ(-EINVAL, htw_set_eventfd(NULL, -1));
	close(fd);
}

/* ---- the timer table: htw_table2_* ---- */

#define TABLE_ENTRIES	64
#define HOUR		(3600 * HTW_NSEC_PER_SEC)

/* Wait on the table's descriptor for its next record and reap it: 1, or -errno. */
static int table_reap_one(struct htw_table2 *t, struct htw_table2_cqe *c)
{
	uint64_t end = mono_ns() + (uint64_t)NEVER_MS * MS;
	int ret;

	for (;;) {
		ret = htw_table2_reap(t, c, 1);
		if (ret)
			return ret;
		if (mono_ns() >= end)
			return -ETIMEDOUT;
		ret = poll(&(struct pollfd){ .fd = t->fd, .events = POLLIN }, 1,
			   (int)((end - mono_ns()) / MS) + 1);
		if (ret < 0)
			return -errno;
	}
}

/* No record comes on the table's descriptor for @ms. */
static int table_quiet_for(struct htw_table2 *t, int ms)
{
	return poll(&(struct pollfd){ .fd = t->fd, .events = POLLIN }, 1, ms);
}

/*
 * A round too slow to tell: disarm @slot, give a record it may have fired
 * time to come, and throw away whatever came.
 */
static void table_discard(struct htw_table2 *t, uint32_t slot)
{
	struct htw_table2_cqe c[8];

	htw_table2_cancel(t, slot);
	usleep(200 * 1000);
	while (htw_table2_reap(t, c, 8) > 0)
		;
}

static uint32_t table_sq_tail(const struct htw_table2 *t)
{
	return __atomic_load_n(&t->hdr->sq_tail, __ATOMIC_RELAXED);
}

FIXTURE(table) {
	struct htw *h;
	struct htw_table2 *t;
};

FIXTURE_SETUP(table)
{
	int ret;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ret = htw_open(&self->h, NULL);
	ASSERT_EQ(0, ret) TH_LOG("htw_open: %s", strerror(-ret));
	ret = htw_table2_create(self->h, TABLE_ENTRIES, 0, &self->t);
	ASSERT_EQ(0, ret) TH_LOG("htw_table2_create: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(table)
{
	if (self->t)
		EXPECT_EQ(0, htw_table2_close(self->t));
	if (self->h)
		EXPECT_EQ(0, htw_close(self->h));
}

TEST_F(table, create_layout)
{
	struct htw_table2 *t = self->t;
	struct htw_table2_cqe c, *first;
	uint32_t i;

	EXPECT_NE(htw_fd(self->h), t->fd);
	EXPECT_EQ(TABLE_ENTRIES, t->entries);
	EXPECT_EQ(TABLE_ENTRIES - 1, t->sq_mask);	/* a power of two */
	EXPECT_EQ(TABLE_ENTRIES - 1, t->cq_mask);	/* never larger than the table */
	EXPECT_EQ(0, t->map_size % sysconf(_SC_PAGESIZE));
	EXPECT_EQ((void *)t->hdr, t->map);
	EXPECT_EQ(TABLE_ENTRIES, t->hdr->entries);
	/* Nothing submitted: the kernel plans no look at the ring. */
	EXPECT_EQ(UINT64_MAX, t->hdr->next_wakeup_ns);
	for (i = 0; i < t->entries; i++)
		ASSERT_EQ(0, t->slots[i].seq);
	EXPECT_EQ(0, htw_table2_enter(t));
	EXPECT_EQ(0, htw_table2_peek(t, &first));
	EXPECT_EQ(-EINVAL, htw_table2_reap(t, &c, 0));
	EXPECT_EQ(0, htw_table2_reap(t, &c, 1));
}

TEST_F(table, arm_fires_once_with_its_generation)
{
	uint64_t d = htw_now(self->h) + 30 * MS, g;
	struct htw_table2_cqe c;
	struct htw_expiry r;

	ASSERT_EQ(0, htw_table2_arm(self->t, 5, d, &g));
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	EXPECT_LE(d, mono_ns());
	EXPECT_EQ(5, c.slot);
	EXPECT_EQ(g, c.gen);
	EXPECT_EQ(0, c.flags);
	/* Fired: disarmed, nothing to cancel, no second record. */
	EXPECT_EQ(0, htw_table2_cancel(self->t, 5));
	EXPECT_EQ(0, table_quiet_for(self->t, 50));
	EXPECT_EQ(0, htw_table2_reap(self->t, &c, 1));
	/* The table's records never go to the instance's read(). */
	EXPECT_EQ(0, htw_read(self->h, &r, 1));
}

TEST_F(table, arm_in_the_past_fires_at_once)
{
	uint64_t d = htw_now(self->h) - MS, g;
	struct htw_table2_cqe c;

	ASSERT_EQ(0, htw_table2_arm(self->t, 0, d, &g));
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	EXPECT_EQ(0, c.slot);
	EXPECT_EQ(g, c.gen);
}

TEST_F(table, arm_errors_change_nothing)
{
	uint64_t d = htw_now(self->h) + HOUR;
	uint32_t tail = table_sq_tail(self->t);

	EXPECT_EQ(-EINVAL, htw_table2_arm(self->t, TABLE_ENTRIES, d, NULL));
	EXPECT_EQ(-EINVAL, htw_table2_arm(self->t, UINT32_MAX, d, NULL));
	EXPECT_EQ(-EINVAL, htw_table2_cancel(self->t, TABLE_ENTRIES));
	EXPECT_EQ(-EINVAL, htw_table2_cancel_quiet(self->t, TABLE_ENTRIES));
	EXPECT_EQ(tail, table_sq_tail(self->t));
	EXPECT_EQ(0, self->t->slots[0].seq);
	EXPECT_EQ(0, htw_table2_cancel(self->t, 0));
}

/*
 * Cancelled before its deadline, a slot never fires.  That the cancel
 * came first is measured, not assumed: on a loaded machine the round is
 * tried again.  The wait then runs well past the deadline.
 */
TEST_F(table, cancelled_never_fires)
{
	struct htw_table2_cqe c;
	uint64_t t0, t1;
	int round, ret = -1;

	for (round = 0; round < 10; round++) {
		t0 = htw_now(self->h);
		ASSERT_EQ(0, htw_table2_arm(self->t, 7, t0 + 20 * MS, NULL));
		ret = htw_table2_cancel(self->t, 7);
		t1 = htw_now(self->h);
		if (t1 - t0 < 20 * MS)
			break;
		table_discard(self->t, 7);
	}
	ASSERT_GT(10, round) TH_LOG("no cancel within 20 ms of its arming in 10 rounds");
	ASSERT_EQ(1, ret);
	EXPECT_EQ(0, htw_table2_cancel(self->t, 7));	/* twice */
	EXPECT_EQ(0, table_quiet_for(self->t, 100));
	EXPECT_LE(t1 + 100 * MS, mono_ns());
	EXPECT_EQ(0, htw_table2_reap(self->t, &c, 1));
}

/*
 * Moved later before it fired, a slot fires at the new time only, as the
 * new generation, and the move is a store alone: nothing goes on the
 * submission ring.
 */
TEST_F(table, a_later_deadline_is_a_store_and_fires_later)
{
	struct htw_table2_cqe c;
	uint64_t t0, t1, d2, g1, g2;
	uint32_t tail;
	int round, ret = -1;

	for (round = 0; round < 10; round++) {
		t0 = htw_now(self->h);
		ASSERT_EQ(0, htw_table2_arm(self->t, 1, t0 + 20 * MS, &g1));
		tail = table_sq_tail(self->t);
		d2 = t0 + 150 * MS;
		ret = htw_table2_arm(self->t, 1, d2, &g2);
		t1 = htw_now(self->h);
		if (t1 - t0 < 20 * MS)
			break;
		table_discard(self->t, 1);
	}
	ASSERT_GT(10, round) TH_LOG("no move within 20 ms of its arming in 10 rounds");
	ASSERT_EQ(1, ret);
	EXPECT_EQ(g1 + 1, g2);
	EXPECT_EQ(tail, table_sq_tail(self->t));
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	EXPECT_LE(d2, mono_ns());
	EXPECT_EQ(1, c.slot);
	EXPECT_EQ(g2, c.gen);
	EXPECT_EQ(0, table_quiet_for(self->t, 50));
}

/* Brought forward from an hour to 20 ms, a slot is submitted and fires then. */
TEST_F(table, an_earlier_deadline_is_submitted_and_fires_then)
{
	struct htw_table2_cqe c;
	uint32_t tail;
	uint64_t d, g;

	ASSERT_EQ(0, htw_table2_arm(self->t, 2, htw_now(self->h) + HOUR, NULL));
	ASSERT_LE(0, htw_table2_enter(self->t));	/* taken in: not queued */
	tail = table_sq_tail(self->t);
	d = htw_now(self->h) + 20 * MS;
	ASSERT_EQ(1, htw_table2_arm(self->t, 2, d, &g));
	EXPECT_EQ(tail + 1, table_sq_tail(self->t));
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	EXPECT_LE(d, mono_ns());
	EXPECT_EQ(2, c.slot);
	EXPECT_EQ(g, c.gen);
}

/* A slot that fired, or was never armed, is armed anew: 0. */
TEST_F(table, arm_after_fire_arms_anew)
{
	struct htw_table2_cqe c;
	uint64_t d, g;

	ASSERT_EQ(0, htw_table2_arm(self->t, 3, htw_now(self->h) + 5 * MS, NULL));
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	d = htw_now(self->h) + 20 * MS;
	EXPECT_EQ(0, htw_table2_arm(self->t, 3, d, &g));
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	EXPECT_EQ(3, c.slot);
	EXPECT_EQ(g, c.gen);
	EXPECT_LE(d, mono_ns());

	EXPECT_EQ(0, htw_table2_arm(self->t, 4, htw_now(self->h) + HOUR, NULL));
	EXPECT_EQ(1, htw_table2_cancel(self->t, 4));
}

/* Every slot at once: each fires once, with its own generation. */
TEST_F(table, every_slot_fires_once)
{
	struct htw_table2_cqe c[16];
	uint64_t gen[TABLE_ENTRIES], now = htw_now(self->h);
	int seen[TABLE_ENTRIES] = { 0 }, got = 0, n, i;

	for (i = 0; i < TABLE_ENTRIES; i++)
		ASSERT_EQ(0, htw_table2_arm(self->t, i, now + (5 + i % 8) * MS, &gen[i]));
	while (got < TABLE_ENTRIES) {
		ASSERT_EQ(1, table_reap_one(self->t, c))
			TH_LOG("%d records of %d", got, TABLE_ENTRIES);
		n = htw_table2_reap(self->t, c + 1, 15);
		ASSERT_LE(0, n);
		for (i = 0; i <= n; i++) {
			ASSERT_GT(TABLE_ENTRIES, c[i].slot);
			EXPECT_EQ(0, seen[c[i].slot]) TH_LOG("slot %u twice", c[i].slot);
			seen[c[i].slot]++;
			EXPECT_EQ(gen[c[i].slot], c[i].gen);
		}
		got += n + 1;
	}
	EXPECT_EQ(0, table_quiet_for(self->t, 20));
}

/*
 * Records read in place, a round of 40 then another: the second wraps
 * the ring of 64, and a peek never reaches past its end.
 */
TEST_F(table, peek_and_advance_across_the_wrap)
{
	const int n = 40;
	struct htw_table2_cqe *first;
	int round, got, ready, i, wrapped = 0;
	uint32_t head;
	uint64_t now;

	for (round = 1; round <= 2; round++) {
		int seen[TABLE_ENTRIES] = { 0 };

		now = htw_now(self->h);
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, htw_table2_arm(self->t, i, now + 5 * MS, NULL));
		for (got = 0; got < n; got += ready) {
			head = self->t->hdr->cq_head;
			ready = htw_table2_peek(self->t, &first);
			ASSERT_LE(0, ready);
			if (!ready) {
				ASSERT_EQ(1, table_quiet_for(self->t, NEVER_MS));
				continue;
			}
			EXPECT_EQ(&self->t->cq[head & self->t->cq_mask], first);
			ASSERT_GE(self->t->cq_mask + 1, (head & self->t->cq_mask) + ready);
			wrapped |= (head & self->t->cq_mask) + ready == self->t->cq_mask + 1;
			for (i = 0; i < ready; i++) {
				ASSERT_GT(n, first[i].slot);
				EXPECT_EQ(round, first[i].gen);
				EXPECT_EQ(0, seen[first[i].slot]++);
			}
			ASSERT_GE(n - got, ready);
			/* More than the ring holds: never there, however many came. */
			EXPECT_EQ(-EINVAL, htw_table2_advance(self->t,
							      self->t->cq_mask + 2));
			EXPECT_EQ(0, htw_table2_advance(self->t, 0));
			ASSERT_EQ(0, htw_table2_advance(self->t, ready));
		}
	}
	EXPECT_TRUE(wrapped);
	EXPECT_EQ(2 * n, self->t->hdr->cq_head);
}

/*
 * A small ring, many armings of a slot cancelled each time: a slot is in
 * the submission ring once at most, so the ring never holds more than the
 * table, however many armings; none is lost, the kernel found all of them
 * valid, and the last arming fires.
 */
TEST(table_submission_ring_never_overflows)
{
	struct htw_table2_cqe c;
	struct htw_table2 *t;
	struct htw *h;
	uint64_t d, g;
	int i;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, htw_open(&h, NULL));
	ASSERT_EQ(0, htw_table2_create(h, 4, 0, &t));
	ASSERT_EQ(3, t->sq_mask);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, htw_table2_arm(t, i % 4, htw_now(h) + HOUR, NULL))
			TH_LOG("round %d", i);
		ASSERT_GE(4, t->hdr->sq_tail - t->hdr->sq_head);
		ASSERT_EQ(1, htw_table2_cancel(t, i % 4));
	}
	d = htw_now(h) + 20 * MS;
	ASSERT_EQ(0, htw_table2_arm(t, 0, d, &g));
	ASSERT_EQ(1, table_reap_one(t, &c));
	EXPECT_EQ(g, c.gen);
	EXPECT_LE(d, mono_ns());
	EXPECT_EQ(0, table_quiet_for(t, 50));
	EXPECT_EQ(0, t->hdr->sq_invalid);
	EXPECT_EQ(0, htw_table2_close(t));
	EXPECT_EQ(0, htw_close(h));
}

/*
 * Records wake poll() and epoll on the table's descriptor, and poll()
 * stops once they are read; the instance's descriptor stays quiet.
 */
TEST_F(table, records_wake_poll_and_epoll)
{
	struct pollfd p = { .fd = self->t->fd, .events = POLLIN };
	struct pollfd i = { .fd = htw_fd(self->h), .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN }, got;
	struct htw_table2_cqe c;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->t->fd, &ev));
	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, htw_table2_arm(self->t, 0, htw_now(self->h) + 10 * MS, NULL));
	ASSERT_EQ(1, epoll_wait(ep, &got, 1, NEVER_MS));
	EXPECT_TRUE(got.events & EPOLLIN);
	EXPECT_EQ(1, poll(&p, 1, NEVER_MS));
	EXPECT_EQ(0, poll(&i, 1, 0));
	ASSERT_EQ(1, htw_table2_reap(self->t, &c, 1));
	EXPECT_EQ(0, c.slot);
	EXPECT_EQ(0, poll(&p, 1, 0));
	close(ep);
}

/*
 * Records of the table and of the instance's timers go their own ways:
 * read() has the instance's only, the ring the slot's only.
 */
TEST_F(table, records_split_between_read_and_ring)
{
	struct htw_table2_cqe c;
	struct htw_expiry r;

	ASSERT_EQ(0, htw_schedule(self->h, 1, 10 * MS, 0, NULL));
	ASSERT_EQ(0, htw_table2_arm(self->t, 9, htw_now(self->h) + 10 * MS, NULL));
	ASSERT_EQ(1, read_one(self->h, &r));
	EXPECT_EQ(1, r.cookie);
	ASSERT_EQ(1, table_reap_one(self->t, &c));
	EXPECT_EQ(9, c.slot);
	EXPECT_EQ(0, htw_read(self->h, &r, 1));
	EXPECT_EQ(0, htw_table2_reap(self->t, &c, 1));
}

/*
 * The documented split: one thread produces (arms), another consumes
 * (reaps), at once.  Each slot is armed again as soon as its last record
 * was reaped; every arming fires exactly once, under its generation.
 */
#define CONC_ROUNDS	5

struct table_consumer {
	struct htw_table2 *t;
	uint64_t gen[TABLE_ENTRIES];	/* the arming in flight, per slot */
	int fired[TABLE_ENTRIES];	/* records reaped per slot */
	int bad;			/* records with the wrong slot or generation */
	int ret;			/* 0, or the error that stopped it */
};

static void *table_consume(void *arg)
{
	struct table_consumer *tc = arg;
	uint64_t end = mono_ns() + (uint64_t)NEVER_MS * MS;
	int total = 0, n, i, f;
	struct htw_table2_cqe c[8];

	while (total < CONC_ROUNDS * TABLE_ENTRIES && mono_ns() < end) {
		n = poll(&(struct pollfd){ .fd = tc->t->fd, .events = POLLIN }, 1, 100);
		if (n >= 0)
			n = htw_table2_reap(tc->t, c, 8);
		if (n < 0) {
			tc->ret = n;
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (c[i].slot >= TABLE_ENTRIES) {
				tc->bad++;
				continue;
			}
			f = __atomic_load_n(&tc->fired[c[i].slot], __ATOMIC_RELAXED);
			if (c[i].gen != __atomic_load_n(&tc->gen[c[i].slot], __ATOMIC_ACQUIRE))
				tc->bad++;
			__atomic_store_n(&tc->fired[c[i].slot], f + 1, __ATOMIC_RELEASE);
		}
		total += n;
	}
	tc->ret = total == CONC_ROUNDS * TABLE_ENTRIES ? 0 : -ETIMEDOUT;
	return NULL;
}

TEST_F(table, producer_and_consumer_threads)
{
	struct table_consumer tc = { .t = self->t };
	uint64_t end = mono_ns() + (uint64_t)NEVER_MS * MS;
	pthread_t thr;
	int round, i;

	ASSERT_EQ(0, pthread_create(&thr, NULL, table_consume, &tc));
	for (round = 0; round < CONC_ROUNDS; round++) {
		for (i = 0; i < TABLE_ENTRIES; i++) {
			/* Armed again only once its last record was reaped. */
			while (__atomic_load_n(&tc.fired[i], __ATOMIC_ACQUIRE) < round &&
			       mono_ns() < end)
				usleep(100);
			if (mono_ns() >= end)
				break;
			/* The generation it will get, before the kernel can fire it. */
			__atomic_store_n(&tc.gen[i], htw_table2_gen(self->t, i) + 1,
					 __ATOMIC_RELEASE);
			ASSERT_EQ(0, htw_table2_arm(self->t, i,
						    htw_now(self->h) + (1 + i % 5) * MS, NULL));
		}
	}
	ASSERT_EQ(0, pthread_join(thr, NULL));
	EXPECT_EQ(0, tc.ret) TH_LOG("consumer: %s", strerror(-tc.ret));
	EXPECT_EQ(0, tc.bad);
	for (i = 0; i < TABLE_ENTRIES; i++)
		ASSERT_EQ(CONC_ROUNDS, tc.fired[i]) TH_LOG("slot %d", i);
}

/* ---- htw_parse_duration ---- */

TEST(parse_duration_good)
{
	static const struct { const char *s; uint64_t ns; } ok[] = {
		{ "0", 0 }, { "0s", 0 }, { "1ns", 1 }, { "7us", 7000 },
		{ "250ms", 250 * MS }, { "1s", HTW_NSEC_PER_SEC },
		{ "5m", 300 * HTW_NSEC_PER_SEC }, { "2h", 7200 * HTW_NSEC_PER_SEC },
		{ "1.5s", 1500 * MS }, { ".5ms", 500000 }, { "1m30s", 90 * HTW_NSEC_PER_SEC },
		{ "1s500ms", 1500 * MS }, { "18446744073709551615ns", UINT64_MAX },
		{ "1.0000000001s", HTW_NSEC_PER_SEC },	/* finer than 1 ns */
		/* Fractions of m and h: exact, truncated, however long. */
		{ "0.99999999999m", 59999999999ULL },
		{ "0.9999999999999999999999999h", 3599999999999ULL },
		{ "1.5h", 5400 * HTW_NSEC_PER_SEC },
		{ "0.25m", 15 * HTW_NSEC_PER_SEC },
		{ "0.0000000000002777777777777778h", 1 },	/* 1.00000000000000008 */
		{ "0.0000000000002777777777777777h", 0 },	/* 0.99999999999999972 */
		{ "1.999999999999999999999999s", 1999999999ULL },
		{ "18446744073.709551615s", UINT64_MAX },
	};
	uint64_t ns;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		const char *s = ok[i].s;

		ns = 12345;
		EXPECT_EQ(0, htw_parse_duration(s, &ns)) TH_LOG("%s", s);
		EXPECT_EQ(ok[i].ns, ns) TH_LOG("%s", s);
	}
}

TEST(parse_duration_bad)
{
	static const char *const einval[] = {
		"", "5", "5x", "ms", "-5ms", "1.5", "5 ms", "5ms ", "1m30", ".s",
		"5mss", "5S",
	};
	static const char *const erange[] = {
		"18446744073709551616ns", "99999999999999999999h", "18446744074s",
		"18446744073709551615ns1ns", "18446744073.709551616s",
	};
	uint64_t ns = 77;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(einval); i++) {
		const char *s = einval[i];

		EXPECT_EQ(-EINVAL, htw_parse_duration(s, &ns)) TH_LOG("'%s'", s);
	}
	for (i = 0; i < ARRAY_SIZE(erange); i++) {
		const char *s = erange[i];

		EXPECT_EQ(-ERANGE, htw_parse_duration(s, &ns)) TH_LOG("'%s'", s);
	}
	EXPECT_EQ(77, ns);	/* untouched on failure */
	EXPECT_EQ(-EINVAL, htw_parse_duration(NULL, &ns));
	EXPECT_EQ(-EINVAL, htw_parse_duration("1s", NULL));
}

TEST(table2_errors)
{
	struct htw_table2 *t = (struct htw_table2 *)1;
	struct htw_table2_cqe c, *first;
	struct htw *h;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, htw_open(&h, NULL));
	EXPECT_EQ(-EINVAL, htw_table2_create(NULL, 8, 0, &t));
	EXPECT_EQ(NULL, t);
	EXPECT_EQ(-EINVAL, htw_table2_create(h, 8, 0, NULL));
	EXPECT_EQ(-EINVAL, htw_table2_create(h, 0, 0, &t));
	EXPECT_EQ(-EINVAL, htw_table2_create(h, 8, 1, &t));
	EXPECT_EQ(-EINVAL, htw_table2_close(NULL));
	EXPECT_EQ(-EINVAL, htw_table2_enter(NULL));
	EXPECT_EQ(-EINVAL, htw_table2_arm(NULL, 0, 1, NULL));
	EXPECT_EQ(-EINVAL, htw_table2_cancel(NULL, 0));
	EXPECT_EQ(-EINVAL, htw_table2_peek(NULL, &first));
	EXPECT_EQ(-EINVAL, htw_table2_advance(NULL, 0));
	EXPECT_EQ(-EINVAL, htw_table2_reap(NULL, &c, 1));
	/* Several tables per instance, each its own descriptor. */
	ASSERT_EQ(0, htw_table2_create(h, 8, 0, &t));
	EXPECT_EQ(-EINVAL, htw_table2_arm(t, 8, 1, NULL));
	EXPECT_EQ(-EINVAL, htw_table2_cancel(t, 8));
	EXPECT_NE(htw_fd(h), t->fd);
	EXPECT_EQ(0, htw_table2_close(t));
	EXPECT_EQ(0, htw_close(h));
}

/*
 * Arm, move later (nothing submitted), cancel, re-arm: each arming a
 * generation; the one that fires is in one record on the table's own
 * descriptor, after the instance is closed.
 */
TEST(table2_generations_and_records)
{
	struct htw_table2_cqe c;
	struct htw_table2 *t;
	uint64_t g1, g2, g3, d;
	struct htw *h;
	uint32_t sq;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, htw_open(&h, NULL));
	ASSERT_EQ(0, htw_table2_create(h, 16, 0, &t));
	d = htw_now(h) + 50 * MS;
	EXPECT_EQ(0, htw_table2_arm(t, 3, d, &g1));
	EXPECT_EQ(1, g1);
	EXPECT_EQ(g1, htw_table2_gen(t, 3));
	sq = t->hdr->sq_tail;
	EXPECT_EQ(1, htw_table2_arm(t, 3, d + 10 * MS, &g2));
	EXPECT_EQ(g1 + 1, g2);
	EXPECT_EQ(sq, t->hdr->sq_tail);		/* later: nothing submitted */
	EXPECT_EQ(1, htw_table2_cancel(t, 3));
	EXPECT_EQ(0, htw_table2_cancel(t, 3));
	/* A quiet cancel is a generation too, and tells nothing. */
	EXPECT_EQ(0, htw_table2_arm(t, 4, d + HOUR, NULL));
	EXPECT_EQ(0, htw_table2_cancel_quiet(t, 4));
	EXPECT_EQ(0, htw_table2_cancel(t, 4));
	EXPECT_EQ(-EINVAL, htw_table2_cancel_quiet(t, 16));
	EXPECT_EQ(0, htw_table2_arm(t, 3, d, &g3));
	EXPECT_EQ(g2 + 3, g3);
	EXPECT_EQ(0, htw_close(h));
	ASSERT_EQ(1, table_reap_one(t, &c));
	EXPECT_LE(d, mono_ns());
	EXPECT_EQ(3, c.slot);
	EXPECT_EQ(g3, c.gen);
	EXPECT_EQ(0, htw_table2_cancel(t, 3));
	EXPECT_EQ(0, htw_table2_reap(t, &c, 1));
	EXPECT_EQ(0, htw_table2_close(t));
}

TEST_HARNESS_MAIN
