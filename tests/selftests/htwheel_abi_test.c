// SPDX-License-Identifier: GPL-2.0
/*
 * Documented behaviours of /dev/htwheel that no other test checks: the
 * order of records, a read() that faults part way, signals and blocking
 * reads, descriptors passed over a Unix socket, whose user a timer is
 * charged to, when module parameters take effect, EBADFD before the
 * handshake, drain's remaining_ns of a due timer, every fdinfo key, and
 * the ioctls of a 32-bit program (compat_ioctl).  Written against
 * include/uapi/linux/htwheel.h and Documentation/userspace-api/htwheel.rst.
 * Every wait is bounded; timing bounds come from measured times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>
#include <linux/userfaultfd.h>
#include <pthread.h>

#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)

#ifdef HTW_COMPAT32_HELPER
/*
 * Built a second time, with -m32 -static -DHTW_COMPAT32_HELPER, as
 * build/tests/htwheel_compat32: the 32-bit side of the compat_ioctl test,
 * run by compat_ioctl_from_a_32_bit_program (never by a stage).  Every
 * structure has one layout for 32- and 64-bit callers and pointers travel
 * as __u64, so each call must work exactly as from a 64-bit program.
 * Exit code: 0, or the failing step.
 */

_Static_assert(sizeof(void *) == 4, "build this helper with -m32");
_Static_assert(sizeof(struct htw_timer_entry) == 48, "layout");
_Static_assert(sizeof(struct htw_expiry) == 48, "layout");
_Static_assert(sizeof(struct htw_stats) == 384, "layout");
_Static_assert(sizeof(struct htw_drain) == 48 && sizeof(struct htw_setup) == 64, "layout");
_Static_assert(sizeof(struct htw_api) == 64 && sizeof(struct htw_schedule) == 48, "layout");

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(void)
{
	struct htw_api api = { .api = HTW_API_VERSION };
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .tick_ns = MS };
	struct htw_timer_entry e[3];
	struct htw_schedule sreq = { .entries = (uintptr_t)e, .count = 3 };
	struct htw_cancel_entry ce = { 0 };
	struct htw_cancel creq = { .entries = (uintptr_t)&ce, .count = 1 };
	struct htw_unexpired out[2];
	struct htw_drain dreq = { .entries = (uintptr_t)out, .count = 2 };
	struct htw_eventfd ereq = { .fd = eventfd(0, EFD_NONBLOCK) };
	struct htw_stats st;
	struct htw_expiry rec;
	struct pollfd p;
	uint64_t t0, count;
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC);

	if (fd < 0 || ereq.fd < 0)
		return 1;
	if (ioctl(fd, HTW_IOC_API, &api) || api.ioctls == 0 || api.reserved[4])
		return 2;
	if (ioctl(fd, HTW_IOC_SETUP, &setup) || setup.tick_ns != MS || !setup.levels)
		return 3;
	if (ioctl(fd, HTW_IOC_SET_EVENTFD, &ereq))
		return 4;
	memset(e, 0, sizeof(e));
	t0 = now_ns();
	e[0].cookie = 0x1122334455667788ULL;	/* all 64 bits survive */
	e[0].expires = 5 * MS;
	e[1].cookie = 2;
	e[1].expires = HOUR;
	e[2].cookie = 3;
	e[2].expires = t0 + HOUR;
	e[2].flags = HTW_TIMER_ABSTIME;
	if (ioctl(fd, HTW_IOC_SCHEDULE, &sreq) != 3 || sreq.done != 3)
		return 5;
	if (!e[0].handle || !e[1].handle || !e[2].handle)
		return 6;
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, 5000) != 1)
		return 7;
	if (read(fd, &rec, sizeof(rec)) != sizeof(rec))
		return 8;
	if (rec.cookie != e[0].cookie || rec.handle != e[0].handle ||
	    rec.deadline_ns < t0 + 5 * MS || rec.expired_ns < rec.deadline_ns)
		return 9;
	if (read(ereq.fd, &count, sizeof(count)) != sizeof(count) || count != 1)
		return 10;
	ce.handle = e[1].handle;
	if (ioctl(fd, HTW_IOC_CANCEL, &creq) || ce.result != HTW_CANCELLED || creq.cancelled != 1)
		return 11;
	memset(&st, 0, sizeof(st));
	if (ioctl(fd, HTW_IOC_STATS, &st) || st.pending != 1 || st.scheduled != 3 ||
	    st.fired != 1 || st.cancelled != 1 || st.tick_ns != MS)
		return 12;
	memset(out, 0, sizeof(out));
	if (ioctl(fd, HTW_IOC_DRAIN, &dreq) || dreq.drained != 1 || out[0].cookie != 3 ||
	    out[0].handle != e[2].handle || out[0].remaining_ns > HOUR)
		return 13;
	/* Refusals are the same too. */
	sreq.flags = 1;
	if (ioctl(fd, HTW_IOC_SCHEDULE, &sreq) != -1 || errno != EINVAL)
		return 14;
	if (ioctl(fd, _IO(HTW_IOC_MAGIC, 0x3f)) != -1 || errno != ENOTTY)
		return 15;
	close(ereq.fd);
	close(fd);
	return 0;
}

#else /* !HTW_COMPAT32_HELPER */

#include "kselftest_harness.h"
#include "htwheel_util.h"

static void entry(struct htw_timer_entry *e, uint64_t cookie, uint64_t expires)
{
	memset(e, 0, sizeof(*e));
	e->cookie = cookie;
	e->expires = expires;
}

static int schedule(int fd, struct htw_timer_entry *e, uint32_t n)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };

	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

static int stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, HTW_IOC_STATS, st);
}

static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms);
}

/* Wait (bounded) until @fd has @n records ready; 0 on success. */
static int wait_ready(int fd, uint64_t n)
{
	struct htw_stats st;

	for (int i = 0; i < 500; i++) {
		if (stats(fd, &st))
			return -1;
		if (st.ready >= n)
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * Records come in the order of the ticks that expired them: 64 timers on
 * 16 different ticks, scheduled in a scrambled order, read once all are
 * due, in small reads.  Their expiry times never go back, and a record of
 * a later tick never comes before one of an earlier tick.
 */
TEST(records_in_tick_order)
{
	const unsigned int n = 64, ticks = 16;
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .tick_ns = MS };
	struct htw_timer_entry e[64];
	struct htw_expiry rec[5];
	uint64_t base, lead, prev_expired = 0, prev_tick = 0;
	unsigned int got = 0, i;
	int fd = -1;

	/*
	 * A deadline already past when its timer is inserted fires at the
	 * next tick, after later deadlines maybe: the batch must be in before
	 * the first deadline.  Measured; on a slow machine, a longer lead.
	 */
	for (lead = 5 * MS; lead <= 5120 * MS; lead *= 4) {
		fd = htw_test_open(0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
		base = htw_test_now(CLOCK_MONOTONIC) + lead;
		for (i = 0; i < n; i++) {
			/* Scrambled: i * 37 mod 64 visits every cookie once. */
			unsigned int k = (i * 37) % n;

			entry(&e[i], k, base + (uint64_t)(k % ticks) * 2 * MS);
			e[i].flags = HTW_TIMER_ABSTIME;
		}
		ASSERT_EQ(n, schedule(fd, e, n));
		if (htw_test_now(CLOCK_MONOTONIC) < base)
			break;
		close(fd);
		fd = -1;
	}
	ASSERT_LE(0, fd) TH_LOG("scheduling 64 timers never took less than %llu ms",
				(unsigned long long)(lead / 4 / MS));
	ASSERT_EQ(0, wait_ready(fd, n));
	while (got < n) {
		ssize_t r = read(fd, rec, sizeof(rec));

		ASSERT_LT(0, r);
		for (i = 0; i < r / sizeof(rec[0]); i++) {
			uint64_t tick = rec[i].cookie % ticks;

			EXPECT_LE(prev_expired, rec[i].expired_ns);
			EXPECT_LE(prev_tick, tick)
				TH_LOG("record %u: deadline tick %llu after %llu", got + i,
				       (unsigned long long)tick, (unsigned long long)prev_tick);
			prev_expired = rec[i].expired_ns;
			prev_tick = tick;
		}
		got += r / sizeof(rec[0]);
	}
	EXPECT_EQ(n, got);
	close(fd);
}

/*
 * A read() whose buffer becomes unwritable part way returns the records
 * copied before the fault; the record that could not be copied whole, and
 * the ones after it, stay queued: nothing is lost or repeated.  Twelve
 * records, room for @whole and a half before an unwritable page (the
 * kernel copies up to eight records at a time, so 2.5 faults inside a
 * step and 8.5 at a step's edge).
 */
static void read_fault_after(struct __test_metadata *_metadata, unsigned int whole)
{
	const size_t rs = sizeof(struct htw_expiry);
	long page = sysconf(_SC_PAGESIZE);
	struct htw_timer_entry e[12];
	struct htw_expiry rec[12];
	unsigned int seen = 0, got, i;
	char *buf, *at;
	ssize_t r;
	int fd = htw_test_open(O_NONBLOCK);

	ASSERT_LE(0, fd);
	buf = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, mprotect(buf + page, page, PROT_NONE));
	for (i = 0; i < 12; i++)
		entry(&e[i], i, 0);
	ASSERT_EQ(12, schedule(fd, e, 12));
	ASSERT_EQ(0, wait_ready(fd, 12));
	at = buf + page - whole * rs - rs / 2;
	r = read(fd, at, 12 * rs);
	ASSERT_EQ(whole * rs, r) TH_LOG("room for %u.5: read returned %zd (%s)", whole, r,
					r < 0 ? strerror(errno) : "");
	memcpy(rec, at, whole * rs);
	for (i = 0; i < whole; i++) {
		ASSERT_GT(12, rec[i].cookie);
		EXPECT_EQ(0, seen & (1U << rec[i].cookie));
		seen |= 1U << rec[i].cookie;
	}
	/* The record at the fault, and the rest, are still there, once each. */
	r = read(fd, rec, sizeof(rec));
	ASSERT_EQ((12 - whole) * rs, r);
	for (i = 0; i < 12 - whole; i++) {
		ASSERT_GT(12, rec[i].cookie);
		EXPECT_EQ(0, seen & (1U << rec[i].cookie)) TH_LOG("cookie %llu twice",
								   (unsigned long long)rec[i].cookie);
		seen |= 1U << rec[i].cookie;
	}
	EXPECT_EQ(0xfff, seen);
	/* A buffer unwritable from its first byte: EFAULT, and still nothing lost. */
	ASSERT_EQ(1, schedule(fd, e, 1));
	ASSERT_EQ(0, wait_ready(fd, 1));
	EXPECT_EQ(-1, read(fd, buf + page, rs));
	EXPECT_EQ(EFAULT, errno);
	got = read(fd, rec, sizeof(rec)) / rs;
	EXPECT_EQ(1, got);
	munmap(buf, 2 * page);
	close(fd);
}

TEST(read_faulting_part_way_returns_what_was_copied)
{
	read_fault_after(_metadata, 8);
	read_fault_after(_metadata, 2);
}

static volatile sig_atomic_t signals;
static volatile uint64_t signal_ns;

static void on_alarm(int sig)
{
	signals++;
	signal_ns = htw_test_now(CLOCK_MONOTONIC);
}

static void arm_alarm(int restart, uint64_t after_ns)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = restart ? SA_RESTART : 0 };
	struct itimerval it = { .it_value = { .tv_sec = after_ns / (1000 * MS),
					      .tv_usec = after_ns % (1000 * MS) / 1000 } };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	signals = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * A blocked read() is interrupted by a signal: EINTR without SA_RESTART.
 * A timer 10 s away bounds the wait: a read that ignored the signal would
 * return its record instead (or the harness's timeout would end it).
 */
TEST(blocking_read_interrupted_gives_eintr)
{
	struct htw_timer_entry e;
	struct htw_expiry rec;
	uint64_t t0, t1;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
	entry(&e, 1, 10000 * MS);
	ASSERT_EQ(1, schedule(fd, &e, 1));
	t0 = htw_test_now(CLOCK_MONOTONIC);
	arm_alarm(0, 50 * MS);
	EXPECT_EQ(-1, read(fd, &rec, sizeof(rec)));
	EXPECT_EQ(EINTR, errno);
	t1 = htw_test_now(CLOCK_MONOTONIC);
	EXPECT_EQ(1, signals);
	/* It returned because of the signal, not before it. */
	EXPECT_LE(t0 + 50 * MS, t1);
	EXPECT_GT(t0 + 10000 * MS, t1);
	signal(SIGALRM, SIG_DFL);
	close(fd);
}

/*
 * Under SA_RESTART the interrupted read() is restarted: it returns the
 * record of a timer due 300 ms after the signal came at 50 ms.
 */
TEST(blocking_read_restarts_under_sa_restart)
{
	struct htw_timer_entry e;
	struct htw_expiry rec;
	uint64_t t0;
	ssize_t r;
	int fd = htw_test_open(0);

	ASSERT_LE(0, fd);
	t0 = htw_test_now(CLOCK_MONOTONIC);
	entry(&e, 2, t0 + 350 * MS);
	e.flags = HTW_TIMER_ABSTIME;
	ASSERT_EQ(1, schedule(fd, &e, 1));
	arm_alarm(1, 50 * MS);
	r = read(fd, &rec, sizeof(rec));
	EXPECT_EQ(sizeof(rec), r) TH_LOG("read: %s", r < 0 ? strerror(errno) : "short");
	EXPECT_EQ(1, signals);
	EXPECT_EQ(2, rec.cookie);
	/* The signal came while the read was blocked, before the record. */
	EXPECT_GT(rec.deadline_ns, signal_ns);
	signal(SIGALRM, SIG_DFL);
	close(fd);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* In a child: receive the file, check its timers, read the short one. */
static int scm_child(int sock, int sync, uint64_t handle)
{
	struct htw_expiry rec;
	struct htw_stats st;
	char c;
	int fd;

	/* Wait until the parent has closed its own descriptor. */
	if (read(sync, &c, 1) != 1)
		return 10;
	fd = recv_fd(sock);
	if (fd < 0)
		return 11;
	if (stats(fd, &st))
		return 12;
	if (st.pending + st.ready != 101)
		return 13;	/* the sender's close cancelled something */
	if (wait_readable(fd, 5000) != 1 || read(fd, &rec, sizeof(rec)) != sizeof(rec))
		return 14;
	if (rec.cookie != 1000 || rec.handle != handle)
		return 15;
	close(fd);	/* the last reference: everything goes */
	return 0;
}

/*
 * A descriptor passed over SCM_RIGHTS shares the instance: the sender's
 * close (with the descriptor still in flight, then received) cancels
 * nothing; the receiver finds every timer pending and reads the short
 * one; only the last close frees them (the timer slab returns).
 */
TEST(fd_passed_over_scm_rights_only_last_close_cancels)
{
	struct htw_timer_entry e[101];
	long before = htw_test_timer_slots(), now = -1;
	int sv[2], sync[2], fd, status, i;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pipe(sync));
	fd = htw_test_open(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < 100; i++)
		entry(&e[i], i, HOUR);
	entry(&e[100], 1000, 300 * MS);
	ASSERT_EQ(101, schedule(fd, e, 101));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		close(sync[1]);
		close(fd);	/* the child's inherited copy: only the message's remains */
		_exit(scm_child(sv[1], sync[0], e[100].handle));
	}
	close(sv[1]);
	close(sync[0]);
	ASSERT_EQ(0, send_fd(sv[0], fd));
	/* In flight, then the sender's descriptor closed: the socket holds it. */
	close(fd);
	ASSERT_EQ(1, write(sync[1], "c", 1));
	close(sync[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d failed", WEXITSTATUS(status));
	close(sv[0]);
	if (before >= 0) {
		for (i = 0; i < 100; i++) {
			now = htw_test_timer_slots();
			if (now <= before + 16)
				break;
			usleep(20000);
		}
		EXPECT_GE(before + 16, now) TH_LOG("timer slab %ld, %ld before", now, before);
	} else {
		TH_LOG("no /sys/kernel/slab/htw_timer: the final free was not measured");
	}
}

/* As nobody: schedule @n on the inherited @fd, then on a file of its own. */
static int schedule_as_nobody(int fd, int n)
{
	struct htw_timer_entry e[8];
	int own, i;

	if (setgid(65534) || setuid(65534))
		return 20;
	for (i = 0; i < n; i++)
		entry(&e[i], i, HOUR);
	/* root's file: charged to root, whoever schedules. */
	if (schedule(fd, e, n) != n)
		return 21;
	if (schedule(fd, e, 1) != -1 || errno != EDQUOT)
		return 22;	/* root's limit is full */
	own = htw_test_open(0);
	if (own < 0)
		return 23;
	/* nobody's own budget is untouched by what it scheduled on root's file. */
	if (schedule(own, e, n) != n)
		return 24;
	if (schedule(own, e, 1) != -1 || errno != EDQUOT)
		return 25;
	close(own);
	return 0;
}

/*
 * max_user_timers is charged to the user who opened the file, not to the
 * one who schedules: nobody scheduling on root's file fills root's limit
 * and keeps its own.
 */
TEST(max_user_timers_charged_to_the_opener)
{
	unsigned long old;
	int fd, status, other;
	struct htw_timer_entry e;
	pid_t pid;

	if (getuid())
		SKIP(return, "needs root to set max_user_timers and switch user");
	fd = htw_test_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", 6, &old));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(schedule_as_nobody(fd, 6));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
	/* root's other files share root's full limit. */
	other = htw_test_open(0);
	EXPECT_LE(0, other);
	entry(&e, 1, HOUR);
	EXPECT_EQ(-1, schedule(other, &e, 1));
	EXPECT_EQ(EDQUOT, errno);
	close(other);
	close(fd);
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", old, NULL));
}

/*
 * default_tick_ns, default_slots and max_pending apply to instances
 * created afterwards: a file opened before the change keeps the old
 * values even when its wheel is created after it; one opened after gets
 * the new ones.
 */
TEST(parameter_changes_apply_to_later_instances)
{
	unsigned long old_tick, old_slots, old_pending;
	struct htw_timer_entry e;
	struct htw_stats st;
	int before, after;

	if (getuid())
		SKIP(return, "needs root to set module parameters");
	before = htw_test_open(0);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, stats(before, &st));
	ASSERT_EQ(0, htw_test_set_param("default_tick_ns", st.tick_ns * 2, &old_tick));
	ASSERT_EQ(0, htw_test_set_param("default_slots", st.slots * 2, &old_slots));
	ASSERT_EQ(0, htw_test_set_param("max_pending", st.max_pending / 2, &old_pending));
	EXPECT_EQ(old_tick, st.tick_ns);
	EXPECT_EQ(old_slots, st.slots);
	EXPECT_EQ(old_pending, st.max_pending);
	after = htw_test_open(0);
	EXPECT_LE(0, after);
	/* The wheel of the older file is created now, after the change. */
	entry(&e, 1, HOUR);
	EXPECT_EQ(1, schedule(before, &e, 1));
	ASSERT_EQ(0, stats(before, &st));
	EXPECT_EQ(old_tick, st.tick_ns);
	EXPECT_EQ(old_slots, st.slots);
	EXPECT_EQ(old_pending, st.max_pending);
	ASSERT_EQ(0, stats(after, &st));
	EXPECT_EQ(old_tick * 2, st.tick_ns);
	EXPECT_EQ(old_slots * 2, st.slots);
	EXPECT_EQ(old_pending / 2, st.max_pending);
	close(after);
	close(before);
	EXPECT_EQ(0, htw_test_set_param("default_tick_ns", old_tick, NULL));
	EXPECT_EQ(0, htw_test_set_param("default_slots", old_slots, NULL));
	EXPECT_EQ(0, htw_test_set_param("max_pending", old_pending, NULL));
}

/* Every htwheel ioctl and read() fail with EBADFD before the handshake. */
TEST(ebadfd_from_every_ioctl_before_the_handshake)
{
	struct htw_timer_entry e;
	struct htw_cancel_entry ce = { .handle = 1 };
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC };
	struct htw_schedule sreq = { .entries = (uintptr_t)&e, .count = 1 };
	struct htw_cancel creq = { .entries = (uintptr_t)&ce, .count = 1 };
	struct htw_drain dreq = { 0 };
	struct htw_stats st = { 0 };
	struct htw_eventfd ereq = { .fd = eventfd(0, EFD_CLOEXEC) };
	struct htw_api api = { .api = HTW_API_VERSION };
	struct htw_expiry rec;
	int fd = open("/dev/htwheel", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ereq.fd);
	entry(&e, 1, HOUR);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_SETUP, &setup));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_SCHEDULE, &sreq));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_CANCEL, &creq));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_DRAIN, &dreq));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_STATS, &st));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_SET_EVENTFD, &ereq));
	EXPECT_EQ(EBADFD, errno);
	EXPECT_EQ(-1, read(fd, &rec, sizeof(rec)));
	EXPECT_EQ(EBADFD, errno);
	/* None of them did anything: the handshake, then everything works. */
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_API, &api));
	EXPECT_NE(0, api.ioctls & (1ULL << _IOC_NR(HTW_IOC_SCHEDULE)));
	EXPECT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
	ASSERT_EQ(0, stats(fd, &st));
	EXPECT_EQ(0, st.scheduled);
	EXPECT_EQ(1, ioctl(fd, HTW_IOC_SCHEDULE, &sreq));
	EXPECT_EQ(-1, ioctl(fd, HTW_IOC_API, &api));
	EXPECT_EQ(EBUSY, errno);
	close(ereq.fd);
	close(fd);
}

/*
 * Drain describes a timer that is due but not yet expired with
 * remaining_ns 0: on a 1 s tick, a deadline already past waits for the
 * next tick, and a drain in between finds it pending.  A timer 500 ms
 * ahead has no more than 500 ms left.  (A try the tick overtook, seen as
 * fewer drained, is repeated.)
 */
TEST(drain_remaining_is_zero_for_a_due_timer)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .tick_ns = 1000 * MS };
	struct htw_unexpired out[2];
	struct htw_drain req;
	struct htw_timer_entry e[2];
	uint64_t now = 0;
	int try, fd = htw_test_open(O_NONBLOCK);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
	for (try = 0; try < 5; try++) {
		now = htw_test_now(CLOCK_MONOTONIC);
		entry(&e[0], 1, now - 1);	/* already due */
		e[0].flags = HTW_TIMER_ABSTIME;
		entry(&e[1], 2, now + 500 * MS);
		e[1].flags = HTW_TIMER_ABSTIME;
		ASSERT_EQ(2, schedule(fd, e, 2));
		memset(out, 0xcc, sizeof(out));
		memset(&req, 0, sizeof(req));
		req.entries = (uintptr_t)out;
		req.count = 2;
		ASSERT_EQ(0, ioctl(fd, HTW_IOC_DRAIN, &req));
		if (req.drained == 2)
			break;
		/* The tick came first: read what it queued and try again. */
		while (read(fd, out, sizeof(struct htw_expiry)) > 0)
			;
	}
	ASSERT_EQ(2, req.drained) TH_LOG("the tick overtook every drain");
	for (int i = 0; i < 2; i++) {
		if (out[i].cookie == 1) {
			EXPECT_EQ(0, out[i].remaining_ns);
			EXPECT_EQ(e[0].handle, out[i].handle);
		} else {
			EXPECT_EQ(2, out[i].cookie);
			EXPECT_LT(0, out[i].remaining_ns);
			EXPECT_GE(500 * MS, out[i].remaining_ns);
		}
		EXPECT_EQ(0, out[i].reserved);
	}
	close(fd);
}

/* Every documented fdinfo key is there, with the values STATS reports. */
TEST(fdinfo_shows_every_key)
{
	struct htw_setup setup = { .clockid = CLOCK_BOOTTIME, .tick_ns = 2 * MS,
				   .slots = 64, .max_pending = 100 };
	struct htw_api api = { .api = HTW_API_VERSION };
	struct htw_timer_entry e[3];
	struct htw_stats st;
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, htw_test_fdinfo(fd, "htw-api"));
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_API, &api));
	EXPECT_EQ(1, htw_test_fdinfo(fd, "htw-api"));
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
	entry(&e[0], 1, 0);
	entry(&e[1], 2, HOUR);
	entry(&e[2], 3, HOUR);
	ASSERT_EQ(3, schedule(fd, e, 3));
	ASSERT_EQ(0, wait_ready(fd, 1));
	ASSERT_EQ(0, stats(fd, &st));
	EXPECT_EQ(CLOCK_BOOTTIME, htw_test_fdinfo(fd, "htw-clockid"));
	EXPECT_EQ(2 * MS, htw_test_fdinfo(fd, "htw-tick-ns"));
	EXPECT_EQ(64, htw_test_fdinfo(fd, "htw-slots"));
	EXPECT_EQ(st.levels, htw_test_fdinfo(fd, "htw-levels"));
	EXPECT_LE(1, st.levels);
	EXPECT_EQ(100, htw_test_fdinfo(fd, "htw-max-pending"));
	EXPECT_EQ(2, htw_test_fdinfo(fd, "htw-pending"));
	EXPECT_EQ(1, htw_test_fdinfo(fd, "htw-ready"));
	close(fd);
}

/*
 * A caller whose answer page faults and blocks (write-protected with
 * userfaultfd, as a FUSE-backed page could be) holds no lock that a
 * reader of the file's fdinfo (lsof, CRIU, a monitoring agent) waits
 * for: that read returns within 100 ms while HTW_IOC_SETUP is stuck
 * writing its answer.
 */
struct stuck_call {
	int fd;
	void *arg;
	long ret;
	uint64_t done_ns;
};

static void *stuck_setup(void *p)
{
	struct stuck_call *c = p;

	c->ret = ioctl(c->fd, HTW_IOC_SETUP, c->arg);
	return NULL;
}

static void *fdinfo_reader(void *p)
{
	struct stuck_call *c = p;

	c->ret = htw_test_fdinfo(c->fd, "htw-slots");
	__atomic_store_n(&c->done_ns, htw_test_now(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
	return NULL;
}

TEST(a_faulting_answer_holds_up_no_fdinfo_reader)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg = { 0 };
	struct uffdio_writeprotect wp = { 0 };
	struct stuck_call call = { 0 }, reader = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	struct pollfd pfd;
	struct uffd_msg msg;
	struct htw_setup *s;
	pthread_t th, rd;
	uint64_t t0;
	int uffd, i;
	char *mem;

	if (getuid())
		SKIP(return, "a userfaultfd that catches the kernel's writes needs root");
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd (errno %d)", errno);
	if (ioctl(uffd, UFFDIO_API, &api) ||
	    !(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
		close(uffd);
		SKIP(return, "no write-protect userfaultfd");
	}
	mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	s = (struct htw_setup *)mem;
	memset(s, 0, sizeof(*s));
	s->clockid = CLOCK_MONOTONIC;
	reg.range.start = (uintptr_t)mem;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	wp.range = reg.range;
	wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_WRITEPROTECT, &wp));

	call.fd = htw_test_open(0);
	ASSERT_LE(0, call.fd);
	call.arg = s;
	ASSERT_EQ(0, pthread_create(&th, NULL, stuck_setup, &call));
	/* The call is stuck writing its answer once the fault is reported. */
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	EXPECT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	usleep(20 * 1000);

	reader.fd = call.fd;
	t0 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pthread_create(&rd, NULL, fdinfo_reader, &reader));
	for (i = 0; i < 100 && !__atomic_load_n(&reader.done_ns, __ATOMIC_ACQUIRE); i++)
		usleep(10 * 1000);
	/* Let the stuck call go, whatever happened: both threads end. */
	wp.mode = 0;
	EXPECT_EQ(0, ioctl(uffd, UFFDIO_WRITEPROTECT, &wp));
	pthread_join(rd, NULL);
	pthread_join(th, NULL);
	EXPECT_GT(100 * MS, reader.done_ns - t0) {
		TH_LOG("fdinfo took %.1f ms while HTW_IOC_SETUP was stuck",
		       (reader.done_ns - t0) / 1e6);
	}
	EXPECT_EQ(0, call.ret);
	EXPECT_LT(0, reader.ret);
	close(call.fd);
	close(uffd);
	munmap(mem, page);
}

/*
 * compat_ioctl: the same calls from a 32-bit program, this file built
 * with -m32 as htwheel_compat32 next to this test; where it is missing or
 * cannot run (no IA32 emulation, as in UML) the test skips and says why.
 */
TEST(compat_ioctl_from_a_32_bit_program)
{
	char self_path[512], helper[600];
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	int status;
	pid_t pid;
	char *slash;

	ASSERT_LT(0, n);
	self_path[n] = 0;
	slash = strrchr(self_path, '/');
	ASSERT_NE(NULL, slash);
	*slash = 0;
	snprintf(helper, sizeof(helper), "%s/htwheel_compat32", self_path);
	if (access(helper, X_OK))
		SKIP(return, "no 32-bit helper %s (built only where gcc -m32 works)", helper);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execl(helper, helper, (char *)NULL);
		_exit(errno == ENOEXEC ? 77 : 78);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		SKIP(return, "this kernel cannot run 32-bit programs (no IA32 emulation)");
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("32-bit helper: step %d failed",
						   WEXITSTATUS(status));
}

/* ---- memcg: timer memory is charged to the scheduling task's cgroup ---- */

#define CGROOT		"/sys/fs/cgroup"
#define CGTEST		CGROOT "/htwheel-memcg-test"
#define MEMCG_TIMERS	100000

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

static bool file_has_word(const char *path, const char *word)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return strstr(buf, word) != NULL;
}

static bool memcg_mounted, memcg_enabled;

/*
 * A cgroup v2 hierarchy with the memory controller for child groups.  What
 * this turns on, memcg_done() turns off again: later tests (the fault
 * sweep counts allocation points) must find the machine as it was.
 */
static const char *memcg_ready(void)
{
	if (getuid())
		return "needs root to create a cgroup";
	if (access(CGROOT "/cgroup.controllers", F_OK)) {
		if (mount("none", CGROOT, "cgroup2", 0, NULL))
			return "no cgroup v2 hierarchy can be mounted";
		memcg_mounted = true;
	}
	if (!file_has_word(CGROOT "/cgroup.subtree_control", "memory") &&
	    !write_str(CGROOT "/cgroup.subtree_control", "+memory"))
		memcg_enabled = true;
	rmdir(CGTEST);
	if (mkdir(CGTEST, 0755))
		return "cannot create a cgroup";
	if (access(CGTEST "/memory.current", F_OK))
		return "the memory controller cannot be enabled (kernel without CONFIG_MEMCG?)";
	return NULL;
}

static void memcg_done(void)
{
	rmdir(CGTEST);
	if (memcg_enabled)
		write_str(CGROOT "/cgroup.subtree_control", "-memory");
	if (memcg_mounted)
		umount(CGROOT);
}

/*
 * In the child, moved into the test cgroup: open and hand-shake, report,
 * schedule MEMCG_TIMERS, report, close, report.  Each report waits for
 * the parent's go on @down so that it reads memory.current in between.
 */
static int memcg_child(int up, int down)
{
	static struct htw_timer_entry e[MEMCG_TIMERS];
	char pid[32], go;
	int fd, i;

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write_str(CGTEST "/cgroup.procs", pid))
		return 10;
	fd = htw_test_open(0);
	if (fd < 0)
		return 11;
	for (i = 0; i < MEMCG_TIMERS; i++)
		entry(&e[i], i, HOUR);
	if (write(up, "o", 1) != 1 || read(down, &go, 1) != 1)
		return 12;
	if (schedule(fd, e, MEMCG_TIMERS) != MEMCG_TIMERS)
		return 13;
	if (write(up, "s", 1) != 1 || read(down, &go, 1) != 1)
		return 14;
	close(fd);
	if (write(up, "c", 1) != 1 || read(down, &go, 1) != 1)
		return 15;
	return 0;
}

static long memcg_step(int up, int down)
{
	char c;

	if (read(up, &c, 1) != 1)
		return -1;
	/* Freed timers go back through RCU: let that settle first. */
	usleep(200 * 1000);
	return read_long(CGTEST "/memory.current");
}

TEST(timer_memory_is_charged_to_the_memcg)
{
	long opened, scheduled, closed, per_timer;
	const char *why = memcg_ready();
	int up[2], down[2], status;
	pid_t pid;

	if (why) {
		memcg_done();
		SKIP(return, "%s", why);
	}
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(memcg_child(up[1], down[0]));
	opened = memcg_step(up[0], down[1]);
	EXPECT_EQ(1, write(down[1], "g", 1));
	scheduled = memcg_step(up[0], down[1]);
	EXPECT_EQ(1, write(down[1], "g", 1));
	closed = memcg_step(up[0], down[1]);
	EXPECT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	memcg_done();
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	ASSERT_LT(0, opened);
	per_timer = (scheduled - opened) / MEMCG_TIMERS;
	TH_LOG("memory.current: %ld after open, %ld with %d timers (%ld B each), %ld after close",
	       opened, scheduled, MEMCG_TIMERS, per_timer, closed);
	/* A timer is 56 bytes of its chunk, a chunk one order-3 slab. */
	EXPECT_LE(56, per_timer);
	/* Closing gives back at least nine tenths of what the timers took. */
	EXPECT_GT(opened + (scheduled - opened) / 10, closed);
}

TEST_HARNESS_MAIN

#endif /* HTW_COMPAT32_HELPER */
