// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces: a file's times are on the clocks of the time namespace
 * of the process that opened it.  An absolute deadline a few seconds ahead
 * on the namespace's clock must not fire early (nor hours late), and the
 * records' deadline_ns and expired_ns are namespace times.  A module that
 * uses the host's clocks fires such a timer at once when the namespace is
 * behind the host, and a thousand seconds late when it is ahead.
 *
 * unshare(CLONE_NEWTIME) only moves the children of the caller, whose
 * offsets must be written before its first fork; a process that unshared
 * also cannot create threads.  So: a helper process unshares and writes
 * the offsets, and its child, inside the namespace, opens /dev/htwheel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define MS		1000000ULL
#define SEC		(1000 * MS)
#define LEAD		(2500 * MS)	/* the absolute deadline, ahead */
#define DELAY		(500 * MS)	/* the relative timer */
#define WAIT_MORE	(5 * SEC)	/* how long past a deadline to wait */
#define POSITIVE_S	1000LL		/* monotonic; boottime gets twice it */

FIXTURE(timens) {
	int unused;
};

FIXTURE_VARIANT(timens) {
	clockid_t clockid;
	int ahead;		/* namespace ahead of the host, or behind */
};

FIXTURE_VARIANT_ADD(timens, monotonic_ahead) { .clockid = CLOCK_MONOTONIC, .ahead = 1 };
FIXTURE_VARIANT_ADD(timens, monotonic_behind) { .clockid = CLOCK_MONOTONIC, .ahead = 0 };
FIXTURE_VARIANT_ADD(timens, boottime_ahead) { .clockid = CLOCK_BOOTTIME, .ahead = 1 };
FIXTURE_VARIANT_ADD(timens, boottime_behind) { .clockid = CLOCK_BOOTTIME, .ahead = 0 };

FIXTURE_SETUP(timens)
{
	if (access("/proc/self/ns/time", F_OK))
		SKIP(return, "kernel without CONFIG_TIME_NS (no /proc/self/ns/time)");
	if (getuid())
		SKIP(return, "needs CAP_SYS_ADMIN for unshare(CLONE_NEWTIME)");
}

FIXTURE_TEARDOWN(timens)
{
}

/* What the namespace child needs to know, fixed before the fork. */
struct ns_plan {
	clockid_t clockid;
	int64_t mono_off, boot_off;	/* seconds */
	int64_t host_minus_rt;		/* the host's clock - CLOCK_REALTIME */
};

static int64_t now_s64(clockid_t clk)
{
	return (int64_t)htw_test_now(clk);
}

static int64_t plan_offset(const struct ns_plan *p)
{
	return (p->clockid == CLOCK_BOOTTIME ? p->boot_off : p->mono_off) * (int64_t)SEC;
}

static int ns_open(clockid_t clockid)
{
	struct htw_setup s = { .clockid = clockid };
	int fd = htw_test_open(0);

	if (fd >= 0 && ioctl(fd, HTW_IOC_SETUP, &s)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int schedule_one(int fd, uint64_t expires, uint32_t flags)
{
	struct htw_timer_entry e = { .cookie = 7, .expires = expires, .flags = flags };
	struct htw_schedule req = { .entries = (uintptr_t)&e, .count = 1 };

	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

/* Wait until @fd has a record, at most @ns; read it. */
static int wait_record(int fd, uint64_t ns, struct htw_expiry *rec)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ns / MS) != 1)
		return -1;
	return read(fd, rec, sizeof(*rec)) == sizeof(*rec) ? 0 : -1;
}

/*
 * An absolute deadline LEAD ahead on the namespace's clock.  Elapsed time
 * is measured on that clock and on CLOCK_REALTIME, which time namespaces
 * do not move: both must reach LEAD before the record is there.
 */
static int check_absolute(const struct ns_plan *p, int fd)
{
	int64_t rt0 = now_s64(CLOCK_REALTIME), ns0 = now_s64(p->clockid);
	uint64_t deadline = ns0 + LEAD;
	struct htw_expiry rec;
	int64_t ns1, rt1;

	HTW_CHILD_CHECK(schedule_one(fd, deadline, HTW_TIMER_ABSTIME) == 1, "schedule: errno %d", errno);
	HTW_CHILD_CHECK(!wait_record(fd, LEAD + WAIT_MORE, &rec),
	      "no record %.1f s after a deadline %.1f s ahead on the namespace's clock",
	      WAIT_MORE / 1e9, LEAD / 1e9);
	ns1 = now_s64(p->clockid);
	rt1 = now_s64(CLOCK_REALTIME);
	printf("# absolute: fired after %.3f s (namespace clock), %.3f s (CLOCK_REALTIME); "
	       "deadline %.1f s ahead; record deadline %+lld ns, expired %+lld ns from it\n",
	       (ns1 - ns0) / 1e9, (rt1 - rt0) / 1e9, LEAD / 1e9,
	       (long long)(rec.deadline_ns - deadline), (long long)(rec.expired_ns - deadline));
	HTW_CHILD_CHECK(ns1 >= (int64_t)deadline, "fired %.3f s early on the namespace's clock",
	      ((int64_t)deadline - ns1) / 1e9);
	HTW_CHILD_CHECK(rt1 - rt0 >= (int64_t)LEAD, "fired %.3f s early on CLOCK_REALTIME",
	      (LEAD - (rt1 - rt0)) / 1e9);
	HTW_CHILD_CHECK(rec.deadline_ns == deadline, "record deadline %llu, asked for %llu",
	      (unsigned long long)rec.deadline_ns, (unsigned long long)deadline);
	/* The tick that expired it was at or after the deadline, before now. */
	HTW_CHILD_CHECK(rec.expired_ns >= deadline && (int64_t)rec.expired_ns <= ns1,
	      "expired_ns %.3f s from the deadline, namespace now %.3f s from it",
	      ((int64_t)rec.expired_ns - (int64_t)deadline) / 1e9,
	      (ns1 - (int64_t)deadline) / 1e9);
	return 0;
}

/* A relative delay: the same in any namespace, reported on its clock. */
static int check_relative(const struct ns_plan *p, int fd)
{
	int64_t rt0 = now_s64(CLOCK_REALTIME), ns0 = now_s64(p->clockid);
	struct htw_expiry rec;
	int64_t ns_after, ns1, rt1;

	HTW_CHILD_CHECK(schedule_one(fd, DELAY, 0) == 1, "schedule: errno %d", errno);
	ns_after = now_s64(p->clockid);
	HTW_CHILD_CHECK(!wait_record(fd, DELAY + WAIT_MORE, &rec), "no record for a %.1f s delay",
	      DELAY / 1e9);
	ns1 = now_s64(p->clockid);
	rt1 = now_s64(CLOCK_REALTIME);
	printf("# relative: fired after %.3f s (namespace clock), %.3f s (CLOCK_REALTIME); "
	       "delay %.1f s; record deadline %+.3f s from the namespace's schedule time\n",
	       (ns1 - ns0) / 1e9, (rt1 - rt0) / 1e9, DELAY / 1e9,
	       ((int64_t)rec.deadline_ns - ns0) / 1e9);
	HTW_CHILD_CHECK(ns1 - ns0 >= (int64_t)DELAY && rt1 - rt0 >= (int64_t)DELAY,
	      "a %.1f s delay fired after %.3f s", DELAY / 1e9, (rt1 - rt0) / 1e9);
	/* Now + delay, now being read during the ioctl. */
	HTW_CHILD_CHECK((int64_t)rec.deadline_ns >= ns0 + (int64_t)DELAY &&
	      (int64_t)rec.deadline_ns <= ns_after + (int64_t)DELAY,
	      "record deadline %.3f s from the namespace's now + delay",
	      ((int64_t)rec.deadline_ns - ns0 - (int64_t)DELAY) / 1e9);
	HTW_CHILD_CHECK(rec.expired_ns >= rec.deadline_ns && (int64_t)rec.expired_ns <= ns1,
	      "expired_ns %.3f s from the namespace's now at read",
	      ((int64_t)rec.expired_ns - ns1) / 1e9);
	return 0;
}

/* Inside the namespace. */
static int ns_child(const struct ns_plan *p)
{
	int64_t moved = now_s64(p->clockid) - now_s64(CLOCK_REALTIME) - p->host_minus_rt;
	int fd, ret;

	/*
	 * The namespace really is offset: two back-to-back readings are
	 * microseconds apart, so 10 ms only guards against no offset at all.
	 */
	HTW_CHILD_CHECK(llabs(moved - plan_offset(p)) < (int64_t)(10 * MS),
	      "clock moved by %.3f s, offset %.3f s", moved / 1e9, plan_offset(p) / 1e9);
	fd = ns_open(p->clockid);
	HTW_CHILD_CHECK(fd >= 0, "open/setup: errno %d", errno);
	/* Both, so that a failure of one still reports the other. */
	ret = check_absolute(p, fd);
	ret |= check_relative(p, fd);
	close(fd);
	return ret;
}

static int write_offsets(const struct ns_plan *p)
{
	char buf[128];
	FILE *f = fopen("/proc/self/timens_offsets", "w");
	int ok;

	if (!f)
		return -1;
	snprintf(buf, sizeof(buf), "monotonic %lld 0\nboottime %lld 0\n",
		 (long long)p->mono_off, (long long)p->boot_off);
	ok = fputs(buf, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* The helper: a new time namespace for its children, then one child. */
static int ns_helper(struct ns_plan *p)
{
	int status;
	pid_t pid;

	HTW_CHILD_CHECK(!unshare(CLONE_NEWTIME), "unshare(CLONE_NEWTIME): errno %d", errno);
	HTW_CHILD_CHECK(!write_offsets(p), "writing /proc/self/timens_offsets: errno %d", errno);
	/* This process is still on the host's clocks. */
	p->host_minus_rt = now_s64(p->clockid) - now_s64(CLOCK_REALTIME);
	fflush(stdout);
	pid = fork();
	HTW_CHILD_CHECK(pid >= 0, "fork: errno %d", errno);
	if (pid == 0)
		_exit(ns_child(p));
	HTW_CHILD_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Ahead: +1000 s monotonic, +2000 s boottime (different, so that a
 * module that mixes the two clocks up fails too).  Behind: as far back as
 * keeps each clock at least 1 s (2 s) past zero, which early in a boot
 * is only seconds, but must exceed LEAD for an early expiry to show: a
 * run that comes first after a boot waits for that (30 s at most).
 */
static void plan(struct __test_metadata *_metadata, const FIXTURE_VARIANT(timens) *v,
		 struct ns_plan *p)
{
	int64_t mono, boot;

	/* Run first after a boot, wait until the clocks can go back that far. */
	for (int i = 0; i < 300 && now_s64(CLOCK_MONOTONIC) / SEC < LEAD / SEC + 4; i++)
		usleep(100000);
	mono = now_s64(CLOCK_MONOTONIC) / SEC;
	boot = now_s64(CLOCK_BOOTTIME) / SEC;
	p->clockid = v->clockid;
	if (v->ahead) {
		p->mono_off = POSITIVE_S;
		p->boot_off = 2 * POSITIVE_S;
		return;
	}
	p->mono_off = -(mono - 1);
	p->boot_off = -(boot - 2);
	ASSERT_LT(LEAD / SEC + 1, -p->mono_off) TH_LOG("booted %lld s ago: too early", (long long)mono);
	ASSERT_LT(LEAD / SEC + 1, -p->boot_off);
}

TEST_F_TIMEOUT(timens, abstime_and_records_follow_the_namespace, 60)
{
	struct ns_plan p;
	int status;
	pid_t pid;

	plan(_metadata, variant, &p);
	ksft_print_msg("offsets: monotonic %+lld s, boottime %+lld s; instance on %s\n",
		       (long long)p.mono_off, (long long)p.boot_off,
		       p.clockid == CLOCK_BOOTTIME ? "CLOCK_BOOTTIME" : "CLOCK_MONOTONIC");
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(ns_helper(&p));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A file opened on the host's clocks, used from a child in a time
 * namespace 1000 s ahead (its descriptor inherited, as one passed over a
 * Unix socket would be): every call that takes an absolute time, rings a
 * table's doorbell or makes a table, fails with EXDEV and changes nothing; a
 * deadline "5 s ahead" there would be 995 s in the host's past, and fire
 * at once.
 */
static int foreign_child(int fd, int table)
{
	struct htw_table2_setup t2 = { .entries = 4 };
	struct htw_rearm_entry re = { .handle = 1, .expires = 5 * SEC };
	struct htw_rearm rq = { .entries = (uintptr_t)&re, .count = 1 };
	struct htw_stats st = { 0 };

	HTW_CHILD_CHECK(schedule_one(fd, now_s64(CLOCK_MONOTONIC) + 5 * SEC,
				     HTW_TIMER_ABSTIME) == -1 && errno == EXDEV,
			"ABSTIME schedule: errno %d, not EXDEV", errno);
	HTW_CHILD_CHECK(schedule_one(fd, 5 * SEC, 0) == -1 && errno == EXDEV,
			"relative schedule: errno %d, not EXDEV", errno);
	HTW_CHILD_CHECK(ioctl(fd, HTW_IOC_REARM, &rq) == -1 && errno == EXDEV,
			"rearm: errno %d, not EXDEV", errno);
	HTW_CHILD_CHECK(ioctl(table, HTW_IOC_TABLE2_ENTER, 0) == -1 && errno == EXDEV,
			"doorbell: errno %d, not EXDEV", errno);
	HTW_CHILD_CHECK(ioctl(fd, HTW_IOC_TABLE2_CREATE, &t2) == -1 && errno == EXDEV,
			"table made: errno %d, not EXDEV", errno);
	HTW_CHILD_CHECK(!ioctl(fd, HTW_IOC_STATS, &st), "stats: errno %d", errno);
	HTW_CHILD_CHECK(st.scheduled == 0, "%llu scheduled",
			(unsigned long long)st.scheduled);
	return 0;
}

static int foreign_helper(int fd, int table)
{
	struct ns_plan p = { .clockid = CLOCK_MONOTONIC, .mono_off = POSITIVE_S,
			     .boot_off = 2 * POSITIVE_S };
	int status;
	pid_t pid;

	HTW_CHILD_CHECK(!unshare(CLONE_NEWTIME), "unshare(CLONE_NEWTIME): errno %d", errno);
	HTW_CHILD_CHECK(!write_offsets(&p), "writing /proc/self/timens_offsets: errno %d", errno);
	fflush(stdout);
	pid = fork();
	HTW_CHILD_CHECK(pid >= 0, "fork: errno %d", errno);
	if (pid == 0)
		_exit(foreign_child(fd, table));
	HTW_CHILD_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(a_file_used_from_another_time_namespace_refuses_times)
{
	struct htw_table2_setup t2 = { .entries = 4 };
	struct htw_stats st = { 0 };
	int fd, table, status;
	pid_t pid;

	if (access("/proc/self/ns/time", F_OK))
		SKIP(return, "kernel without CONFIG_TIME_NS (no /proc/self/ns/time)");
	if (getuid())
		SKIP(return, "needs CAP_SYS_ADMIN for unshare(CLONE_NEWTIME)");
	fd = ns_open(CLOCK_MONOTONIC);
	ASSERT_LE(0, fd);
	table = ioctl(fd, HTW_IOC_TABLE2_CREATE, &t2);
	ASSERT_LE(0, table);
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(foreign_helper(fd, table));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The opener's own calls still work. */
	EXPECT_EQ(1, schedule_one(fd, 5 * SEC, 0));
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_STATS, &st));
	EXPECT_EQ(1, st.scheduled);
	EXPECT_LE(0, ioctl(table, HTW_IOC_TABLE2_ENTER, 0));
	close(table);
	close(fd);
}

TEST_HARNESS_MAIN
