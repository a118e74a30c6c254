// SPDX-License-Identifier: GPL-2.0
/*
 * Nothing the module does may keep a CPU from scheduling for long: a
 * SCHED_FIFO thread pinned to one CPU sleeps in 1 ms steps and records how
 * late it wakes, while that same CPU closes a file holding a million
 * timers, drains a million, and expires a million due at one instant.
 * Each may delay the sleeper by no more than its quiet baseline (measured
 * first, in the same boot) plus a small allowance: a fixed module works in
 * batches of about a thousand timers between preemption points.
 *
 * Meant for real kernels (Debian's generic and PREEMPT_RT under qemu);
 * skipped in User-Mode Linux, whose one CPU and ptrace system calls make
 * latency meaningless.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define SEC		(1000 * MS)
#define HOUR		(3600 * SEC)
#define N_TIMERS	(1U << 20)
#define SCHEDULE_CHUNK	(1U << 16)
#define STEP_NS		MS		/* the sleeper's period */
#define BASELINE_NS	(3 * SEC)	/* quiet window measured first */
/* The contract's largest non-preemptible batch, in timers. */
#define BATCH_TIMERS	1024

/* The sleeper: a SCHED_FIFO thread that records its worst lateness. */
struct sleeper {
	pthread_t thread;
	int cpu;
	atomic_int stop;
	atomic_int running;
	atomic_ullong worst;	/* ns, since the last sleeper_take() */
	atomic_ullong wakeups;
};

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = ns / SEC, .tv_nsec = ns % SEC };
}

static void *sleeper_fn(void *arg)
{
	struct sched_param sp = { .sched_priority = 80 };
	struct sleeper *s = arg;
	uint64_t next, now, late, old;
	struct timespec ts;

	if (pin_self(s->cpu) || sched_setscheduler(0, SCHED_FIFO, &sp))
		return NULL;
	atomic_store(&s->running, 1);
	next = htw_test_now(CLOCK_MONOTONIC) + STEP_NS;
	while (!atomic_load(&s->stop)) {
		ts = ns_to_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = htw_test_now(CLOCK_MONOTONIC);
		late = now > next ? now - next : 0;
		old = atomic_load(&s->worst);
		while (late > old && !atomic_compare_exchange_weak(&s->worst, &old, late))
			;
		atomic_fetch_add(&s->wakeups, 1);
		/* After a stall, go on from now: missed steps are one delay. */
		next += STEP_NS;
		if (next <= now)
			next = now + STEP_NS;
	}
	return NULL;
}

/* Worst lateness since the last call, and start a new window. */
static uint64_t sleeper_take(struct sleeper *s)
{
	return atomic_exchange(&s->worst, 0);
}

FIXTURE(latency) {
	struct sleeper sl;
	int sleeper_started;
	int kmsg;
	uint64_t baseline;	/* worst quiet lateness, ns */
	unsigned long old_pending, old_user;
	int set_pending, set_user;
	struct htw_timer_entry *e;
};

/* Raise a limit to at least @want for the test, remembering the old value. */
static int raise_param(const char *name, unsigned long want,
		       unsigned long *old, int *changed)
{
	*changed = 0;
	if (htw_test_get_param(name, old))
		return -1;
	if (*old >= want)
		return 0;
	if (htw_test_set_param(name, want, NULL))
		return -1;
	*changed = 1;
	return 0;
}

FIXTURE_SETUP(latency)
{
	int cpus = sysconf(_SC_NPROCESSORS_ONLN);

	self->kmsg = -1;
	if (htw_test_is_uml())
		SKIP(return, "User-Mode Linux: one CPU and ptrace system calls, latency means nothing");
	if (getuid())
		SKIP(return, "needs root for SCHED_FIFO and the module's limits");

	/* A million live timers in one file and for one user. */
	ASSERT_EQ(0, raise_param("max_pending", N_TIMERS, &self->old_pending,
				 &self->set_pending));
	ASSERT_EQ(0, raise_param("max_user_timers", N_TIMERS, &self->old_user,
				 &self->set_user))
		TH_LOG("no writable max_user_timers parameter");
	self->e = calloc(N_TIMERS, sizeof(*self->e));
	ASSERT_NE(NULL, self->e);
	self->kmsg = htw_test_kmsg_open();

	/* The last CPU: the one the work below is pinned to as well. */
	self->sl.cpu = cpus > 1 ? cpus - 1 : 0;
	ASSERT_EQ(0, pthread_create(&self->sl.thread, NULL, sleeper_fn, &self->sl));
	self->sleeper_started = 1;
	for (int i = 0; i < 1000 && !atomic_load(&self->sl.running); i++)
		usleep(1000);
	ASSERT_TRUE(atomic_load(&self->sl.running))
		TH_LOG("the sleeper could not pin itself or become SCHED_FIFO");
	ASSERT_EQ(0, pin_self(self->sl.cpu));

	usleep(100000);		/* past start-up noise */
	sleeper_take(&self->sl);
	usleep(BASELINE_NS / 1000);
	self->baseline = sleeper_take(&self->sl);
	ksft_print_msg("CPU %d, quiet baseline: worst wake-up delay %.3f ms over %.1f s\n",
		       self->sl.cpu, self->baseline / 1e6, BASELINE_NS / 1e9);
}

FIXTURE_TEARDOWN(latency)
{
	char line[512];

	if (self->sleeper_started) {
		atomic_store(&self->sl.stop, 1);
		pthread_join(self->sl.thread, NULL);
	}
	if (self->set_pending)
		htw_test_set_param("max_pending", self->old_pending, NULL);
	if (self->set_user)
		htw_test_set_param("max_user_timers", self->old_user, NULL);
	free(self->e);
	if (self->kmsg >= 0) {
		EXPECT_EQ(0, htw_test_kmsg_find(self->kmsg, line, sizeof(line)))
			TH_LOG("kernel log: %s", line);
		close(self->kmsg);
	}
}

/* A file for a million timers on the default geometry. */
static int open_big(void)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .max_pending = N_TIMERS };
	int fd = htw_test_open(0);

	if (fd >= 0 && ioctl(fd, HTW_IOC_SETUP, &setup)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Schedule all N_TIMERS entries, each @expires (ABSTIME if @flags says
 * so), from this thread (so the wheel's hrtimer is armed on this CPU).
 * Returns the number scheduled.
 */
static unsigned int schedule_all(int fd, struct htw_timer_entry *e,
				 uint64_t expires, uint32_t flags)
{
	unsigned int done = 0;

	memset(e, 0, N_TIMERS * sizeof(*e));
	for (unsigned int i = 0; i < N_TIMERS; i++) {
		e[i].cookie = i;
		e[i].expires = expires;
		e[i].flags = flags;
	}
	while (done < N_TIMERS) {
		struct htw_schedule req = {
			.entries = (uintptr_t)(e + done),
			.count = N_TIMERS - done < SCHEDULE_CHUNK ? N_TIMERS - done : SCHEDULE_CHUNK,
		};
		int r = ioctl(fd, HTW_IOC_SCHEDULE, &req);

		if (r <= 0)
			break;
		done += r;
	}
	return done;
}

/*
 * The allowed delay over the baseline: four of the contract's batches at
 * the per-timer cost this very run measured for the operation (so a slow
 * emulator widens it), and never under 5 sleeper steps, which absorbs
 * scheduling noise of an emulated CPU on a shared host while today's
 * whole-million sections (hundreds of ms) still fail by far.
 */
static uint64_t allowance(uint64_t op_ns)
{
	uint64_t batches = 4 * BATCH_TIMERS * (op_ns / N_TIMERS);

	return batches > 5 * STEP_NS ? batches : 5 * STEP_NS;
}

static void report(const char *what, uint64_t op_ns, uint64_t worst,
		   uint64_t baseline)
{
	ksft_print_msg("%s: %.1f ms for %u timers (%.0f ns each, %.3f ms per %u); "
		       "sleeper worst %.3f ms, bound %.3f ms\n",
		       what, op_ns / 1e6, N_TIMERS, (double)op_ns / N_TIMERS,
		       (double)op_ns / N_TIMERS * BATCH_TIMERS / 1e6, BATCH_TIMERS,
		       worst / 1e6, (baseline + allowance(op_ns)) / 1e6);
}

/* One close() of a file holding a million far timers; returns its cost. */
static void close_once(struct __test_metadata *_metadata,
		      FIXTURE_DATA(latency) *self, uint64_t *op, uint64_t *worst)
{
	uint64_t t0;
	int fd = open_big();

	ASSERT_LE(0, fd);
	ASSERT_EQ(N_TIMERS, schedule_all(fd, self->e, HOUR, 0));
	usleep(50000);
	sleeper_take(&self->sl);
	t0 = htw_test_now(CLOCK_MONOTONIC);
	close(fd);
	*op = htw_test_now(CLOCK_MONOTONIC) - t0;
	usleep(20000);		/* the sleeper's next step sees any stall */
	*worst = sleeper_take(&self->sl);
}

/*
 * A case stalls the sleeper if it does so twice in a row: a real
 * non-preemptible section comes back every time, while an emulated CPU
 * descheduled by a busy host does not.
 */
TEST_F_TIMEOUT(latency, close_with_1m_pending_is_preemptible, 100)
{
	uint64_t op, worst, op2, worst2;

	close_once(_metadata, self, &op, &worst);
	report("close", op, worst, self->baseline);
	if (worst > self->baseline + allowance(op)) {
		close_once(_metadata, self, &op2, &worst2);
		report("close, again", op2, worst2, self->baseline);
		if (worst2 < worst)
			op = op2, worst = worst2;
	}
	EXPECT_GE(self->baseline + allowance(op), worst)
		TH_LOG("close() of %u timers delayed a SCHED_FIFO thread on its CPU by %.1f ms",
		       N_TIMERS, worst / 1e6);
}

static void drain_once(struct __test_metadata *_metadata,
		      FIXTURE_DATA(latency) *self, uint64_t *op, uint64_t *worst)
{
	struct htw_drain req = {};
	uint64_t t0;
	int fd = open_big();

	ASSERT_LE(0, fd);
	ASSERT_EQ(N_TIMERS, schedule_all(fd, self->e, HOUR, 0));
	usleep(50000);
	sleeper_take(&self->sl);
	t0 = htw_test_now(CLOCK_MONOTONIC);
	EXPECT_EQ(0, ioctl(fd, HTW_IOC_DRAIN, &req));
	*op = htw_test_now(CLOCK_MONOTONIC) - t0;
	usleep(20000);
	*worst = sleeper_take(&self->sl);
	EXPECT_EQ(N_TIMERS, req.drained);
	close(fd);
}

TEST_F_TIMEOUT(latency, drain_of_1m_is_preemptible, 100)
{
	uint64_t op, worst, op2, worst2;

	drain_once(_metadata, self, &op, &worst);
	report("drain", op, worst, self->baseline);
	if (worst > self->baseline + allowance(op)) {
		drain_once(_metadata, self, &op2, &worst2);
		report("drain, again", op2, worst2, self->baseline);
		if (worst2 < worst)
			op = op2, worst = worst2;
	}
	EXPECT_GE(self->baseline + allowance(op), worst)
		TH_LOG("HTW_IOC_DRAIN of %u timers delayed a SCHED_FIFO thread on its CPU by %.1f ms",
		       N_TIMERS, worst / 1e6);
}

/* Read every record of the expiry: each cookie once, none early. */
static void read_all(struct __test_metadata *_metadata, int fd,
		     uint64_t deadline, uint64_t limit_ns)
{
	static struct htw_expiry rec[4096];
	unsigned char *seen = calloc(N_TIMERS, 1);
	uint64_t end = htw_test_now(CLOCK_MONOTONIC) + limit_ns;
	unsigned int got = 0, bad = 0, dup = 0;

	ASSERT_NE(NULL, seen);
	while (got < N_TIMERS && htw_test_now(CLOCK_MONOTONIC) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 1000) != 1)
			continue;
		r = read(fd, rec, sizeof(rec));
		if (r <= 0)
			continue;
		for (size_t i = 0; i < r / sizeof(rec[0]); i++) {
			uint64_t k = rec[i].cookie;

			if (k >= N_TIMERS || rec[i].deadline_ns != deadline ||
			    rec[i].expired_ns < deadline)
				bad++;
			else if (seen[k]++)
				dup++;
		}
		got += r / sizeof(rec[0]);
	}
	free(seen);
	EXPECT_EQ(N_TIMERS, got);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, dup);
}

/*
 * A million timers due at one ABSTIME deadline, far enough ahead that
 * scheduling them (twice what it took last time, plus a second) is over
 * first; the sleeper's window covers the wait, the expiry and what
 * follows, and then every record is read back.  Returns the cost of
 * scheduling a million, which stands in for the per-timer cost of the
 * expiry (that runs in the kernel, where it cannot be timed from here).
 */
static void expiry_once(struct __test_metadata *_metadata,
			FIXTURE_DATA(latency) *self, uint64_t *op, uint64_t *worst)
{
	uint64_t t0, deadline, now;
	struct pollfd p;
	int fd;

	fd = open_big();
	ASSERT_LE(0, fd);
	t0 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(N_TIMERS, schedule_all(fd, self->e, HOUR, 0));
	*op = htw_test_now(CLOCK_MONOTONIC) - t0;
	close(fd);

	fd = open_big();
	ASSERT_LE(0, fd);
	deadline = htw_test_now(CLOCK_MONOTONIC) + 2 * *op + SEC;
	ASSERT_EQ(N_TIMERS, schedule_all(fd, self->e, deadline, HTW_TIMER_ABSTIME));
	now = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_LT(now, deadline) TH_LOG("scheduling ran past the common deadline");
	sleeper_take(&self->sl);

	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, (deadline - now) / MS + 30000));
	t0 = htw_test_now(CLOCK_MONOTONIC);
	usleep(100000);
	*worst = sleeper_take(&self->sl);
	ksft_print_msg("expiry: first records %.1f ms after the deadline\n",
		       (t0 - deadline) / 1e6);
	read_all(_metadata, fd, deadline, 60 * SEC);
	close(fd);
}

TEST_F_TIMEOUT(latency, expiry_of_1m_at_one_instant_is_preemptible, 100)
{
	uint64_t op, worst, op2, worst2;

	expiry_once(_metadata, self, &op, &worst);
	report("expiry (cost: schedule)", op, worst, self->baseline);
	if (worst > self->baseline + allowance(op)) {
		expiry_once(_metadata, self, &op2, &worst2);
		report("expiry (cost: schedule), again", op2, worst2, self->baseline);
		if (worst2 < worst)
			op = op2, worst = worst2;
	}
	EXPECT_GE(self->baseline + allowance(op), worst)
		TH_LOG("%u timers expiring at once delayed a SCHED_FIFO thread on their CPU by %.1f ms",
		       N_TIMERS, worst / 1e6);
}

TEST_HARNESS_MAIN
