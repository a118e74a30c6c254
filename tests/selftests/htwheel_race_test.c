// SPDX-License-Identifier: GPL-2.0
/*
 * Races and floods: close during an expiry storm, cancel racing expiry,
 * rmmod while open, exit with timers pending, an unprivileged user
 * scheduling until refused, readers that never read, and callers killed
 * in the middle of a long batch or read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)

static int schedule_n(int fd, struct htw_timer_entry *e, unsigned int n,
		      unsigned long long delay, unsigned long long spread)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };

	memset(e, 0, n * sizeof(*e));
	/* Deadlines spread evenly over [delay, delay + spread). */
	for (unsigned int i = 0; i < n; i++) {
		e[i].cookie = i;
		e[i].expires = delay + spread * i / n;
	}
	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

static void get_stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	ioctl(fd, HTW_IOC_STATS, st);
}

/*
 * Close while the tick is moving thousands of timers to the ready queue:
 * the close must free every one of them, pending, being moved or queued.
 * Observable: the timer slab's object count returns to where it started,
 * and at least one close really came mid-storm (records queued and timers
 * still pending when it was called).
 */
TEST(close_during_expiry_storm)
{
	const unsigned int n = 20000;
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	long before = htw_test_timer_slots(), now = -1;
	uint64_t sched_ns = 0, t;
	int mid_storm = 0;

	ASSERT_NE(NULL, e);
	if (before < 0) {
		free(e);
		SKIP(return, "no /sys/kernel/slab/htw_timer (boot with slab_nomerge)");
	}
	for (int round = 0; round < 6; round++) {
		struct htw_stats st;
		int fd = htw_test_open(0);

		ASSERT_LE(0, fd);
		/*
		 * Due over 20 ms, from 1 ms after the last round's schedule
		 * took (delays count from the start of the call, and a debug
		 * kernel takes a good part of a second for 20,000 timers).
		 */
		t = htw_test_now(CLOCK_MONOTONIC);
		ASSERT_EQ(n, schedule_n(fd, e, n, sched_ns + MS, 20 * MS));
		sched_ns = htw_test_now(CLOCK_MONOTONIC) - t;
		/* Close once the first records are queued, a bit later each round. */
		for (int i = 0; i < 20000; i++) {
			get_stats(fd, &st);
			if (st.ready > (uint64_t)round * n / 8)
				break;
			usleep(100);
		}
		mid_storm += st.ready > 0 && st.pending > 0;
		close(fd);
	}
	free(e);
	/* SLUB frees through per-CPU lists and RCU: give it a bounded moment. */
	for (int i = 0; i < 100; i++) {
		now = htw_test_timer_slots();
		if (now <= before + 64)
			break;
		usleep(20000);
	}
	EXPECT_GE(before + 64, now) TH_LOG("timer slab %ld objects, %ld before", now, before);
	EXPECT_LT(0, mid_storm) TH_LOG("no close came with records queued and timers pending");
}

/* Nanoseconds that scheduling, then cancelling, @n hour-long timers take. */
static void measure_schedule_cancel(unsigned int n, uint64_t *sched_ns, uint64_t *cancel_ns)
{
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	struct htw_cancel_entry *c = calloc(n, sizeof(*c));
	struct htw_cancel req = { .entries = (uintptr_t)c, .count = n };
	int fd = htw_test_open(0);
	uint64_t t;

	*sched_ns = *cancel_ns = 0;
	if (fd >= 0 && e && c) {
		t = htw_test_now(CLOCK_MONOTONIC);
		if (schedule_n(fd, e, n, HOUR, 0) == (int)n) {
			*sched_ns = htw_test_now(CLOCK_MONOTONIC) - t;
			for (unsigned int i = 0; i < n; i++)
				c[i].handle = e[i].handle;
			t = htw_test_now(CLOCK_MONOTONIC);
			ioctl(fd, HTW_IOC_CANCEL, &req);
			*cancel_ns = htw_test_now(CLOCK_MONOTONIC) - t;
		}
	}
	if (fd >= 0)
		close(fd);
	free(c);
	free(e);
}

/*
 * One round of cancel racing expiry: @n timers whose absolute deadlines
 * fall, in reverse order of the cancel array, over the time the cancel
 * will take (measured beforehand), from a tick before it starts to a
 * tick after it ends: the last entries are due before the cancel reaches
 * them, the first ones after, and around the middle the cancel and the
 * tick meet.  Each one must be either cancelled (never delivered) or
 * found fired (delivered once).
 */
static void cancel_race_round(struct __test_metadata *_metadata, unsigned int n,
			      uint64_t sched_ns, uint64_t cancel_ns,
			      unsigned int *fired_out, unsigned int *cancelled_out)
{
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	struct htw_cancel_entry *c = calloc(n, sizeof(*c));
	struct htw_cancel req = { .entries = (uintptr_t)c, .count = n };
	struct htw_schedule sreq = { .entries = (uintptr_t)e, .count = n };
	unsigned char *read_once = calloc(n, 1);
	struct htw_expiry rec[256];
	unsigned int fired = 0, cancelled = 0, got = 0, i;
	struct htw_stats st;
	uint64_t start, span;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, e);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, read_once);
	get_stats(fd, &st);
	span = cancel_ns + 2 * st.tick_ns;
	start = htw_test_now(CLOCK_MONOTONIC) + sched_ns - st.tick_ns;
	for (i = 0; i < n; i++) {
		e[i].cookie = i;
		e[i].flags = HTW_TIMER_ABSTIME;
		e[i].expires = start + span * (n - 1 - i) / n;
	}
	ASSERT_EQ(n, ioctl(fd, HTW_IOC_SCHEDULE, &sreq));
	for (i = 0; i < n; i++)
		c[i].handle = e[i].handle;
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_CANCEL, &req));
	for (i = 0; i < n; i++) {
		fired += c[i].result == HTW_CANCEL_FIRED;
		cancelled += c[i].result == HTW_CANCELLED;
		EXPECT_NE(HTW_CANCEL_UNKNOWN, c[i].result);
	}
	EXPECT_EQ(cancelled, req.cancelled);
	EXPECT_EQ(n, fired + cancelled);
	while (got < fired) {
		ssize_t r;

		ASSERT_EQ(1, poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 2000));
		r = read(fd, rec, sizeof(rec));
		ASSERT_LT(0, r);
		for (i = 0; i < r / sizeof(rec[0]); i++) {
			unsigned int k = rec[i].cookie;

			ASSERT_GT(n, k);
			/* Only the ones cancel called FIRED arrive, each once. */
			EXPECT_EQ(HTW_CANCEL_FIRED, c[k].result);
			EXPECT_EQ(0, read_once[k]++);
		}
		got += r / sizeof(rec[0]);
	}
	EXPECT_EQ(fired, got);
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 30));
	close(fd);
	free(read_once);
	free(c);
	free(e);
	*fired_out = fired;
	*cancelled_out = cancelled;
}

TEST(cancel_races_expiry_exactly_one_wins)
{
	unsigned int fired, cancelled, round, both = 0;

	/*
	 * A loaded machine may run the cancel too early or too late for one
	 * of the outcomes: a few rounds, until one has seen both.
	 */
	for (round = 0; round < 8 && !both; round++) {
		uint64_t sched_ns, cancel_ns;

		measure_schedule_cancel(3000, &sched_ns, &cancel_ns);
		cancel_race_round(_metadata, 3000, sched_ns, cancel_ns, &fired, &cancelled);
		TH_LOG("round %u: schedule %.2f ms, cancel %.2f ms: %u fired, %u cancelled",
		       round, sched_ns / 1e6, cancel_ns / 1e6, fired, cancelled);
		both = fired > 0 && cancelled > 0;
	}
	EXPECT_TRUE(both) TH_LOG("no round saw both outcomes of the race");
}

TEST(rmmod_refused_while_open)
{
	struct htw_timer_entry e;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, schedule_n(fd, &e, 1, HOUR, 0));
	EXPECT_EQ(-1, syscall(SYS_delete_module, "htwheel", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);
	/* Still loaded and working. */
	EXPECT_EQ(0, access("/sys/module/htwheel", F_OK));
	EXPECT_EQ(1, schedule_n(fd, &e, 1, HOUR, 0));
	close(fd);
}

TEST(exit_with_pending_timers_frees_them)
{
	long before = htw_test_timer_slots();
	int status;
	pid_t pid;

	if (before < 0)
		SKIP(return, "no /sys/kernel/slab/htw_timer (boot with slab_nomerge)");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		static struct htw_timer_entry e[10000];
		struct htw_eventfd ev = { .fd = eventfd(0, 0) };
		int fd = htw_test_open(0);

		if (fd < 0 || ioctl(fd, HTW_IOC_SET_EVENTFD, &ev))
			_exit(1);
		if (schedule_n(fd, e, 10000, HOUR, 0) != 10000 ||
		    schedule_n(fd, e, 1000, 0, 0) != 1000)
			_exit(2);
		usleep(20000);	/* let some become ready, unread */
		_exit(0);	/* no close: exit must clean up */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	for (int i = 0; i < 100 && htw_test_timer_slots() > before + 64; i++)
		usleep(20000);
	EXPECT_GE(before + 64, htw_test_timer_slots());
}

/* In a child: schedule as an unprivileged user until refused. */
static int flood_as_nobody(void)
{
	static struct htw_timer_entry e[1000];
	int fd, fd2, ret, total = 0;

	if (setgid(65534) || setuid(65534))
		return 10;
	fd = htw_test_open(0);
	fd2 = htw_test_open(0);
	if (fd < 0 || fd2 < 0)
		return 11;
	while ((ret = schedule_n(fd, e, 1000, HOUR, 0)) > 0)
		total += ret;
	if (errno != EDQUOT || total != 5000)
		return 12;
	/* The limit is per user: another file of the same user too. */
	if (schedule_n(fd2, e, 1, HOUR, 0) != -1 || errno != EDQUOT)
		return 13;
	return 0;
}

TEST(unprivileged_flood_gets_edquot)
{
	struct htw_timer_entry e[10];
	unsigned long old;
	int status, fd;
	pid_t pid;

	if (getuid())
		SKIP(return, "needs root to set the limit and switch user");
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", 5000, &old));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(flood_as_nobody());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Another user (root) was never limited by nobody's timers. */
	fd = htw_test_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(10, schedule_n(fd, e, 10, HOUR, 0));
	close(fd);
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", old, NULL));
}

TEST(reader_that_never_reads_is_bounded)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .max_pending = 1000 };
	static struct htw_timer_entry e[1000];
	struct htw_stats st;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
	ASSERT_EQ(1000, schedule_n(fd, e, 1000, 0, 0));
	for (int i = 0; i < 200; i++) {
		get_stats(fd, &st);
		if (st.ready == 1000)
			break;
		usleep(10000);
	}
	EXPECT_EQ(1000, st.ready);
	/* Unread records are live timers: no room for more. */
	EXPECT_EQ(-1, schedule_n(fd, e, 1, HOUR, 0));
	EXPECT_EQ(ENOSPC, errno);
	close(fd);
}

TEST(unread_periodic_timer_costs_nothing)
{
	struct htw_timer_entry e = { .cookie = 1, .expires = MS, .period_ns = MS };
	struct htw_schedule req = { .entries = (uintptr_t)&e, .count = 1 };
	struct htw_stats st;
	struct htw_expiry rec;
	uint64_t t0, t0b, t1, t2;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
	t0 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(1, ioctl(fd, HTW_IOC_SCHEDULE, &req));
	t0b = htw_test_now(CLOCK_MONOTONIC);
	usleep(100000);
	get_stats(fd, &st);
	EXPECT_EQ(1, st.ready);		/* one record, however many periods */
	EXPECT_GE(3, st.tick_wakeups);	/* and no wake-ups while unread */
	t1 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(sizeof(rec), read(fd, &rec, sizeof(rec)));
	t2 = htw_test_now(CLOCK_MONOTONIC);
	/*
	 * Counted from the time that really passed (a loaded machine sleeps
	 * longer): the deadlines start + k ms, k >= 1, the schedule's start
	 * somewhere in [t0, t0b], up to the read, less the first one, and a
	 * tick of slack at the low end.
	 */
	EXPECT_LE((t1 - t0b) / MS - 3, rec.overrun);
	EXPECT_GE((t2 - t0) / MS - 1, rec.overrun);
	close(fd);
}

/*
 * Killed in the middle of a long call.  The caller's buffer has one
 * write-protected page (userfaultfd) near its start: the kernel's first
 * write there stops the call until a second thread lifts the protection;
 * that thread lets the call run on for 2 ms, a small part of its work,
 * and sends SIGKILL to its own process.  The call must then stop at its
 * next step instead of doing all the rest.  (Killed while still blocked
 * on the page, the call would end with a failed copy instead, which is
 * why the thread does not kill at once.)
 */
#define VICTIM_NO_UFFD	99	/* no userfaultfd write-protect here */
#define VICTIM_NO_FAULT	98	/* the call never wrote to the page */

struct wp_page {
	int uffd;
	struct uffdio_range range;
};

static int wp_arm(struct wp_page *wp, void *page)
{
	struct uffdio_api api = {
		.api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP,
	};
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect prot = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	wp->range.start = (uintptr_t)page;
	wp->range.len = sysconf(_SC_PAGESIZE);
	reg.range = wp->range;
	prot.range = wp->range;
	wp->uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (wp->uffd < 0 || ioctl(wp->uffd, UFFDIO_API, &api) ||
	    ioctl(wp->uffd, UFFDIO_REGISTER, &reg) ||
	    ioctl(wp->uffd, UFFDIO_WRITEPROTECT, &prot))
		return -1;
	return 0;
}

/* Let the blocked write go on, then kill the whole process. */
static void *wp_release_then_kill(void *arg)
{
	struct wp_page *wp = arg;
	struct uffdio_writeprotect unprot = { .range = wp->range, .mode = 0 };
	struct uffd_msg msg;

	if (read(wp->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		_exit(97);
	ioctl(wp->uffd, UFFDIO_WRITEPROTECT, &unprot);	/* wakes the writer */
	usleep(2000);
	kill(getpid(), SIGKILL);
	return NULL;
}

/* Arm @page of the victim's buffer and start the killer thread. */
static int victim_prepare(void *page)
{
	static struct wp_page wp;
	pthread_t thr;

	if (wp_arm(&wp, page))
		return VICTIM_NO_UFFD;
	if (pthread_create(&thr, NULL, wp_release_then_kill, &wp))
		return 96;
	return 0;
}

/* Run @victim(@fd) in a child; its exit code, or -1 if it was killed. */
static int run_victim(int fd, int (*victim)(int fd))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(victim(fd));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -2;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -3;
}

#define KILLED_BATCH	HTW_BATCH_MAX

/* Schedule a long batch; the handles of chunk ~10 are written to the page. */
static int victim_schedule(int fd)
{
	size_t len = KILLED_BATCH * sizeof(struct htw_timer_entry);
	long page = sysconf(_SC_PAGESIZE);
	struct htw_schedule req = { .count = KILLED_BATCH };
	struct htw_timer_entry *e;
	int ret;

	e = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e == MAP_FAILED)
		return 95;
	for (unsigned int i = 0; i < KILLED_BATCH; i++) {
		e[i].cookie = i;
		e[i].expires = HOUR;
	}
	ret = victim_prepare((char *)e + 30 * page);
	if (ret)
		return ret;
	req.entries = (uintptr_t)e;
	ioctl(fd, HTW_IOC_SCHEDULE, &req);
	return VICTIM_NO_FAULT;
}

TEST(killed_batch_schedule_stops_part_way)
{
	struct htw_stats st;
	int fd = htw_test_open(0), ret;

	ASSERT_LE(0, fd);
	ret = run_victim(fd, victim_schedule);
	if (ret == VICTIM_NO_UFFD)
		SKIP(return, "no userfaultfd write-protect (CONFIG_USERFAULTFD)");
	ASSERT_EQ(-1, ret) TH_LOG("the victim was not killed in the call: %d", ret);
	get_stats(fd, &st);
	/* Some chunks were done before the kill, not all after it. */
	EXPECT_LT(0, st.scheduled);
	EXPECT_GT(KILLED_BATCH, st.scheduled);
	EXPECT_EQ(st.scheduled, st.pending);
	close(fd);
}

#define KILLED_READ	200000U

/* Read every record at once; record ~850 is copied to the page. */
static int victim_read(int fd)
{
	size_t len = KILLED_READ * sizeof(struct htw_expiry);
	long page = sysconf(_SC_PAGESIZE);
	char *buf;
	int ret;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 95;
	memset(buf, 0, len);	/* present: only present pages are protected */
	ret = victim_prepare(buf + 10 * page);
	if (ret)
		return ret;
	read(fd, buf, len);
	return VICTIM_NO_FAULT;
}

TEST(killed_read_stops_part_way)
{
	static struct htw_timer_entry e[KILLED_READ];
	struct htw_stats st;
	int fd = htw_test_open(0), ret, i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(KILLED_READ, schedule_n(fd, e, KILLED_READ, 0, 0));
	for (i = 0; i < 500; i++) {
		get_stats(fd, &st);
		if (st.ready == KILLED_READ)
			break;
		usleep(10000);
	}
	ASSERT_EQ(KILLED_READ, st.ready);
	ret = run_victim(fd, victim_read);
	if (ret == VICTIM_NO_UFFD)
		SKIP(return, "no userfaultfd write-protect (CONFIG_USERFAULTFD)");
	ASSERT_EQ(-1, ret) TH_LOG("the victim was not killed in the call: %d", ret);
	get_stats(fd, &st);
	/* Records before the kill were taken; the others are still queued. */
	EXPECT_GT(KILLED_READ, st.ready);
	EXPECT_LT(0, st.ready);
	close(fd);
}

TEST_HARNESS_MAIN
