// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection sweep: every slab allocation and user copy on the
 * open/setup/schedule/cancel/read/drain/eventfd/stats paths is made to fail
 * in turn (fail-nth, failslab and fail_usercopy) and each failure must give
 * a clean errno, keep the instance consistent and usable, and leak nothing
 * (the stage runs a kmemleak scan after the tests).
 *
 * Needs root and CONFIG_FAULT_INJECTION_DEBUG_FS; skips otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)
#define MAX_NTH		400
#define DBG		"/sys/kernel/debug"

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Only caches marked SLAB_FAILSLAB fail (cache-filter): all of them but
 * kmemleak's own, which would switch kmemleak off when it fails.
 */
static int faults_enable(void)
{
	char path[512];
	struct dirent *d;
	DIR *dir;

	if (write_file(DBG "/failslab/ignore-gfp-wait", "N") ||
	    write_file(DBG "/failslab/cache-filter", "Y") ||
	    write_file(DBG "/failslab/verbose", "0") ||
	    write_file(DBG "/fail_usercopy/verbose", "0"))
		return -1;
	dir = opendir("/sys/kernel/slab");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || !strncmp(d->d_name, "kmemleak", 8))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/failslab", d->d_name);
		write_file(path, "1");	/* merged aliases refuse: fine */
	}
	closedir(dir);
	return 0;
}

/* Arm the n-th fault-injection point of this thread. */
static int fail_nth(int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	return write_file("/proc/thread-self/fail-nth", buf);
}

/* 1 if the armed fault was injected (and disarm either way). */
static int fault_injected(void)
{
	char buf[16] = "";
	int fd = open("/proc/thread-self/fail-nth", O_RDWR), n;

	n = read(fd, buf, sizeof(buf) - 1);
	write(fd, "0", 1);
	close(fd);
	return n > 0 && atoi(buf) == 0;
}

static int schedule(int fd, struct htw_timer_entry *e, unsigned int n,
		    unsigned long long delay)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };

	memset(e, 0, n * sizeof(*e));
	for (unsigned int i = 0; i < n; i++) {
		e[i].cookie = i;
		e[i].expires = delay;
	}
	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

static void stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(fd, HTW_IOC_STATS, st))
		memset(st, 0xff, sizeof(*st));
}

static int wait_ready(int fd, unsigned long long n)
{
	struct htw_stats st;

	for (int i = 0; i < 500; i++) {
		stats(fd, &st);
		if (st.ready >= n)
			return 0;
		poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 10);
	}
	return -1;
}

/* The instance still works: a timer can be scheduled and cancelled. */
static int usable(int fd)
{
	struct htw_timer_entry e;
	struct htw_cancel_entry c = { 0 };
	struct htw_cancel req = { .entries = (uintptr_t)&c, .count = 1 };

	if (schedule(fd, &e, 1, HOUR) != 1)
		return 0;
	c.handle = e.handle;
	return !ioctl(fd, HTW_IOC_CANCEL, &req) && c.result == HTW_CANCELLED;
}

static int clean_errno(int err)
{
	return err == ENOMEM || err == EFAULT;
}

/* What each operation sets up, runs with a fault armed, and checks. */
struct fault_op {
	const char *name;
	int (*prepare)(int fd, void *ctx);
	int (*run)(int fd, void *ctx);	/* >= 0 success, -errno failure */
};

struct ctx {
	struct htw_timer_entry e[4];
	int efd;
};

static int prep_none(int fd, void *c) { return 0; }

static int prep_three_pending(int fd, void *c)
{
	return schedule(fd, ((struct ctx *)c)->e, 3, HOUR) == 3 ? 0 : -1;
}

static int prep_three_ready(int fd, void *c)
{
	if (schedule(fd, ((struct ctx *)c)->e, 3, 0) != 3)
		return -1;
	return wait_ready(fd, 3);
}

static int run_schedule(int fd, void *c)
{
	int ret = schedule(fd, ((struct ctx *)c)->e + 3, 1, HOUR);

	return ret < 0 ? -errno : ret;
}

static int run_schedule_batch(int fd, void *c)
{
	struct htw_timer_entry e[300];
	int ret = schedule(fd, e, 300, HOUR);

	return ret < 0 ? -errno : ret;
}

static int run_cancel(int fd, void *c)
{
	struct ctx *x = c;
	struct htw_cancel_entry ce[3] = {
		{ .handle = x->e[0].handle }, { .handle = x->e[1].handle },
		{ .handle = 12345 },
	};
	struct htw_cancel req = { .entries = (uintptr_t)ce, .count = 3 };

	return ioctl(fd, HTW_IOC_CANCEL, &req) ? -errno : 0;
}

static int run_read(int fd, void *c)
{
	struct htw_expiry rec[4];
	ssize_t r = read(fd, rec, sizeof(rec));

	return r < 0 ? -errno : (int)(r / sizeof(rec[0]));
}

static int run_drain(int fd, void *c)
{
	struct htw_unexpired out[4];
	struct htw_drain req = { .entries = (uintptr_t)out, .count = 4 };

	return ioctl(fd, HTW_IOC_DRAIN, &req) ? -errno : (int)req.drained;
}

static int run_eventfd(int fd, void *c)
{
	struct htw_eventfd req = { .fd = ((struct ctx *)c)->efd };

	return ioctl(fd, HTW_IOC_SET_EVENTFD, &req) ? -errno : 0;
}

static int run_stats(int fd, void *c)
{
	struct htw_stats st = { 0 };

	return ioctl(fd, HTW_IOC_STATS, &st) ? -errno : 0;
}

static int run_setup(int fd, void *c)
{
	struct htw_setup s = { .clockid = CLOCK_MONOTONIC, .tick_ns = 2 * MS };

	return ioctl(fd, HTW_IOC_SETUP, &s) ? -errno : 0;
}

static const struct fault_op ops[] = {
	{ "first schedule (creates the wheel)", prep_none, run_schedule },
	{ "schedule", prep_three_pending, run_schedule },
	{ "schedule batch of 300", prep_three_pending, run_schedule_batch },
	{ "cancel", prep_three_pending, run_cancel },
	{ "read", prep_three_ready, run_read },
	{ "drain", prep_three_pending, run_drain },
	{ "set eventfd", prep_none, run_eventfd },
	{ "stats", prep_three_pending, run_stats },
	{ "setup", prep_none, run_setup },
};

/*
 * Failures that may leave an effect behind, by design and documented:
 * results or descriptions that cannot be written after cancel or drain
 * took effect, and the partial count of a batch schedule.
 */
static int effect_allowed(const struct fault_op *op, int ret)
{
	if (ret == -EFAULT && (op->run == run_cancel || op->run == run_drain))
		return 1;
	return op->run == run_schedule_batch && ret > 0 && ret < 300;
}

FIXTURE(fault) {
	int ok;
};

FIXTURE_SETUP(fault)
{
	if (getuid() || faults_enable())
		SKIP(return, "fault injection not available (root and debugfs needed)");
	self->ok = 1;
}

FIXTURE_TEARDOWN(fault)
{
	fail_nth(0);
}

TEST_F(fault, sweep_every_operation)
{
	struct htw_stats before, after;
	struct ctx c;

	c.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, c.efd);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		const struct fault_op *op = &ops[k];
		int n, injected = 1, failures = 0;

		for (n = 1; n <= MAX_NTH && injected; n++) {
			int fd = htw_test_open(O_NONBLOCK), ret;

			ASSERT_LE(0, fd);
			ASSERT_EQ(0, op->prepare(fd, &c)) TH_LOG("%s: prepare", op->name);
			stats(fd, &before);
			ASSERT_EQ(0, fail_nth(n));
			ret = op->run(fd, &c);
			injected = fault_injected();
			stats(fd, &after);
			if (ret < 0) {
				failures++;
				EXPECT_TRUE(clean_errno(-ret))
					TH_LOG("%s, fault %d: errno %d", op->name, n, -ret);
			}
			/* A failure changes nothing, counters included. */
			if (ret < 0 && !effect_allowed(op, ret)) {
				EXPECT_EQ(before.pending, after.pending)
					TH_LOG("%s, fault %d: pending changed (ret %d)", op->name, n, ret);
				EXPECT_EQ(before.ready, after.ready)
					TH_LOG("%s, fault %d: ready changed", op->name, n);
				EXPECT_EQ(before.scheduled, after.scheduled)
					TH_LOG("%s, fault %d: scheduled changed", op->name, n);
			}
			if (ret > 0 && op->run == run_schedule_batch)
				EXPECT_EQ(before.pending + ret, after.pending);
			EXPECT_TRUE(usable(fd)) TH_LOG("%s, fault %d: unusable", op->name, n);
			close(fd);
		}
		/* The sweep ran past the last injection point. */
		EXPECT_FALSE(injected) TH_LOG("%s: still failing at %d", op->name, MAX_NTH);
		TH_LOG("%s: %d injection points, %d clean failures", op->name, n - 2, failures);
	}
	close(c.efd);
}

TEST_F(fault, open_and_handshake)
{
	int injected = 1, n;

	for (n = 1; n <= MAX_NTH && injected; n++) {
		int fd;

		ASSERT_EQ(0, fail_nth(n));
		fd = htw_test_open(O_NONBLOCK);
		injected = fault_injected();
		if (fd < 0) {
			EXPECT_TRUE(clean_errno(errno)) TH_LOG("fault %d: errno %d", n, errno);
			continue;
		}
		EXPECT_TRUE(usable(fd));
		close(fd);
	}
	EXPECT_FALSE(injected);
}

TEST_HARNESS_MAIN
