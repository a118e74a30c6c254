// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-threaded stress of one /dev/htwheel file: worker threads pinned to
 * different CPUs schedule and cancel timers on the same fd while the tick
 * fires and reader threads consume expiry records, optionally with DRAIN
 * racing them.  Every timer gets a unique cookie; at the end each one must
 * have been delivered (read), cancelled (HTW_CANCELLED) or drained exactly
 * once, a cancel that said HTW_CANCEL_FIRED must have been delivered, and
 * the instance's counters must agree with what user space saw.
 *
 * Built statically with the kselftest harness like tests/selftests/, so it
 * runs in UML (one CPU: the interleavings come from preemption) and in the
 * qemu boots of Debian's kernels (2+ CPUs: real concurrency).
 *
 * HTW_STRESS_SECONDS (default 2) sets how long the workers run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define US		1000ULL
#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)
#define MAX_COOKIES	(1U << 20)
#define BATCH		32
#define MAX_THREADS	16
#define DRAIN_CAP	(1U << 16)
#define SAME_HANDLES	16384

/* What happened to each cookie, as user space saw it. */
struct cookie_state {
	uint64_t handle;	/* from SCHEDULE; 0 until published */
	uint64_t rec_handle;	/* from the expiry record */
	uint32_t delivered;	/* records read */
	uint32_t cancelled;	/* HTW_CANCELLED results */
	uint32_t drained;	/* described by DRAIN */
	uint32_t fired_seen;	/* HTW_CANCEL_FIRED results */
	int32_t sched_cpu;	/* CPU that scheduled it (-1: the main thread) */
	int32_t cancel_cpu;	/* CPU of the thread whose cancel succeeded */
};

struct stress {
	int fd;
	int ncpus;
	int nworkers;
	int nreaders;
	int mode;		/* MODE_* */
	int drain;		/* a worker also drains now and then */
	uint64_t max_delay;	/* delays are 0 .. max_delay ns */
	uint64_t deadline;	/* CLOCK_MONOTONIC ns: workers stop */
	volatile int stop_readers;
	uint32_t next_cookie;	/* atomic */
	uint32_t scheduled;	/* atomic: cookies really scheduled */
	uint32_t errors;	/* atomic */
	char first_error[160];
	pthread_barrier_t go;
	struct cookie_state *c;
	/* totals, atomic */
	uint64_t n_delivered, n_cancelled, n_drained, n_fired_seen, n_unknown;
	uint64_t n_cross_cpu, n_late_records, n_cancel_calls, n_drain_calls;
};

enum { MODE_MIXED, MODE_SAME_HANDLES };

struct worker {
	struct stress *s;
	int index;
	int cpu;
	unsigned int seed;
};

static void add64(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static void fail(struct stress *s, const char *what, int err)
{
	if (__atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED) == 0)
		snprintf(s->first_error, sizeof(s->first_error), "%s: %s",
			 what, strerror(err));
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int get_stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, HTW_IOC_STATS, st);
}

/* Fill @n entries with fresh cookies; returns the first cookie or -1. */
static int64_t fill_entries(struct stress *s, struct htw_timer_entry *e,
			    uint32_t n, unsigned int *seed, int long_odd)
{
	uint32_t base = __atomic_fetch_add(&s->next_cookie, n, __ATOMIC_RELAXED);
	uint32_t i;

	if (base + n > MAX_COOKIES)
		return -1;
	for (i = 0; i < n; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].cookie = base + i;
		if (long_odd && (base + i) % 2)
			e[i].expires = HOUR + rand_r(seed) % MS;
		else
			e[i].expires = (uint64_t)rand_r(seed) % (s->max_delay + 1);
		if (rand_r(seed) % 4 == 0)
			e[i].slack_ns = (uint64_t)rand_r(seed) % (200 * US);
	}
	return base;
}

/* Schedule @n entries and publish their handles. */
static int schedule_batch(struct stress *s, struct htw_timer_entry *e,
			  uint32_t n, int cpu)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };
	int ret = ioctl(s->fd, HTW_IOC_SCHEDULE, &req);
	uint32_t i;

	if (ret != (int)n) {
		fail(s, "HTW_IOC_SCHEDULE", ret < 0 ? errno : EIO);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct cookie_state *c = &s->c[e[i].cookie];

		c->sched_cpu = sched_getcpu();	/* the main thread's too */
		__atomic_store_n(&c->handle, e[i].handle, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&s->scheduled, n, __ATOMIC_RELAXED);
	return 0;
}

/* Cancel the timers of @n cookies; account for every result. */
static void cancel_cookies(struct stress *s, const uint32_t *cookies, uint32_t n,
			   int cpu)
{
	struct htw_cancel_entry e[BATCH * 2];
	uint32_t idx[BATCH * 2];
	struct htw_cancel req = { .entries = (uintptr_t)e };
	uint32_t i, k = 0, ok = 0;
	int ret;

	cpu = sched_getcpu();	/* where this really runs, pinned or not */

	for (i = 0; i < n && k < BATCH * 2; i++) {
		uint64_t h = __atomic_load_n(&s->c[cookies[i]].handle, __ATOMIC_ACQUIRE);

		if (!h)
			continue;	/* not published yet */
		memset(&e[k], 0, sizeof(e[k]));
		e[k].handle = h;
		e[k].result = 0xdead;
		idx[k++] = cookies[i];
	}
	if (!k)
		return;
	req.count = k;
	ret = ioctl(s->fd, HTW_IOC_CANCEL, &req);
	add64(&s->n_cancel_calls, 1);
	if (ret < 0) {
		fail(s, "HTW_IOC_CANCEL", errno);
		return;
	}
	for (i = 0; i < k; i++) {
		struct cookie_state *c = &s->c[idx[i]];

		switch (e[i].result) {
		case HTW_CANCELLED:
			__atomic_fetch_add(&c->cancelled, 1, __ATOMIC_RELAXED);
			c->cancel_cpu = cpu;
			add64(&s->n_cancelled, 1);
			if (c->sched_cpu >= 0 && c->sched_cpu != cpu)
				add64(&s->n_cross_cpu, 1);
			ok++;
			break;
		case HTW_CANCEL_FIRED:
			__atomic_fetch_add(&c->fired_seen, 1, __ATOMIC_RELAXED);
			add64(&s->n_fired_seen, 1);
			break;
		case HTW_CANCEL_UNKNOWN:
			add64(&s->n_unknown, 1);
			break;
		default:
			fail(s, "HTW_IOC_CANCEL: bad result", EPROTO);
		}
	}
	if (ret != 0 || req.cancelled != ok)
		fail(s, "HTW_IOC_CANCEL: cancelled count disagrees with results", EPROTO);
}

static void drain_all(struct stress *s, struct htw_unexpired *out)
{
	struct htw_drain req = { .entries = (uintptr_t)out, .count = DRAIN_CAP };
	uint64_t i;

	if (ioctl(s->fd, HTW_IOC_DRAIN, &req) < 0) {
		fail(s, "HTW_IOC_DRAIN", errno);
		return;
	}
	add64(&s->n_drain_calls, 1);
	if (req.drained > DRAIN_CAP) {
		fail(s, "HTW_IOC_DRAIN: more pending than the test can account for", E2BIG);
		return;
	}
	for (i = 0; i < req.drained; i++) {
		if (out[i].cookie >= MAX_COOKIES) {
			fail(s, "HTW_IOC_DRAIN: unknown cookie", EPROTO);
			continue;
		}
		__atomic_fetch_add(&s->c[out[i].cookie].drained, 1, __ATOMIC_RELAXED);
		add64(&s->n_drained, 1);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	struct htw_timer_entry e[BATCH];
	struct htw_unexpired *drain_out = NULL;
	uint32_t picks[BATCH * 2];
	unsigned long iter = 0;

	pin(w->cpu);	/* best effort: fewer CPUs than asked is fine */
	if (s->drain && w->index == 0) {
		drain_out = calloc(DRAIN_CAP, sizeof(*drain_out));
		if (!drain_out)
			fail(s, "calloc", ENOMEM);
	}
	pthread_barrier_wait(&s->go);

	if (s->mode == MODE_SAME_HANDLES) {
		/* Every worker cancels every cookie, each from its own offset. */
		uint32_t total = __atomic_load_n(&s->scheduled, __ATOMIC_RELAXED);
		uint32_t start = (uint64_t)total * w->index / s->nworkers;
		uint32_t i, n = 0;

		for (i = 0; i < total; i++) {
			picks[n++] = (start + i) % total;
			if (n == BATCH) {
				cancel_cookies(s, picks, n, w->cpu);
				n = 0;
			}
		}
		if (n)
			cancel_cookies(s, picks, n, w->cpu);
		return NULL;
	}

	while (htw_test_now(CLOCK_MONOTONIC) < s->deadline && !s->errors) {
		int64_t base = fill_entries(s, e, BATCH, &w->seed, 0);
		uint32_t hi, window, i, n;

		if (base < 0)
			break;
		if (schedule_batch(s, e, BATCH, w->cpu))
			break;
		/*
		 * Cancel a random half batch among the most recent cookies of
		 * every thread: some pending, some firing right now, some read
		 * already, some cancelled by another thread a moment ago.
		 */
		hi = base + BATCH;
		window = BATCH * 4 * s->nworkers;
		if (window > hi)
			window = hi;
		n = BATCH / 2 + rand_r(&w->seed) % BATCH;
		for (i = 0; i < n; i++)
			picks[i] = hi - 1 - rand_r(&w->seed) % window;
		cancel_cookies(s, picks, n, w->cpu);
		if (drain_out && ++iter % 64 == 0)
			drain_all(s, drain_out);
	}
	free(drain_out);
	return NULL;
}

static void *reader_main(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	struct htw_expiry rec[64];
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	pin(w->cpu);
	pthread_barrier_wait(&s->go);
	for (;;) {
		ssize_t r;
		int i, n;

		if (poll(&p, 1, 20) < 0 && errno != EINTR) {
			fail(s, "poll", errno);
			break;
		}
		r = read(s->fd, rec, sizeof(rec));
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				if (s->stop_readers)
					break;
				continue;
			}
			fail(s, "read", errno);
			break;
		}
		if (r % sizeof(rec[0])) {
			fail(s, "read: partial record", EPROTO);
			break;
		}
		n = r / sizeof(rec[0]);
		for (i = 0; i < n; i++) {
			struct cookie_state *c;

			if (rec[i].cookie >= MAX_COOKIES || rec[i].flags || rec[i].overrun ||
			    rec[i].expired_ns < rec[i].deadline_ns) {
				fail(s, "read: malformed record", EPROTO);
				continue;
			}
			c = &s->c[rec[i].cookie];
			__atomic_store_n(&c->rec_handle, rec[i].handle, __ATOMIC_RELAXED);
			__atomic_fetch_add(&c->delivered, 1, __ATOMIC_RELAXED);
			add64(&s->n_delivered, 1);
			if (rec[i].expired_ns - rec[i].deadline_ns > 100 * MS)
				add64(&s->n_late_records, 1);
		}
	}
	return NULL;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static uint64_t stress_seconds(void)
{
	const char *v = getenv("HTW_STRESS_SECONDS");
	long n = v ? atol(v) : 0;

	return n > 0 ? (uint64_t)n : 2;
}

/*
 * How long scheduling SAME_HANDLES timers BATCH at a time (*sched_ns), and
 * one worker's sweep cancelling them BATCH at a time (the result), take
 * here, measured on a scratch file with hour-long timers.
 */
static uint64_t measure_cancel_sweep(uint64_t *sched_ns)
{
	static struct htw_timer_entry e[SAME_HANDLES];
	struct htw_cancel_entry c[BATCH];
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = SAME_HANDLES };
	struct htw_cancel creq = { .entries = (uintptr_t)c, .count = BATCH };
	uint64_t t0;
	int fd = htw_test_open(0);
	uint32_t i, k;

	*sched_ns = 0;
	if (fd < 0)
		return 0;
	memset(e, 0, sizeof(e));
	for (i = 0; i < SAME_HANDLES; i++)
		e[i].expires = HOUR;
	t0 = htw_test_now(CLOCK_MONOTONIC);
	for (i = 0; i < SAME_HANDLES; i += BATCH) {
		req.entries = (uintptr_t)&e[i];
		req.count = BATCH;
		if (ioctl(fd, HTW_IOC_SCHEDULE, &req) != BATCH) {
			close(fd);
			return 0;
		}
	}
	*sched_ns = htw_test_now(CLOCK_MONOTONIC) - t0;
	t0 = htw_test_now(CLOCK_MONOTONIC);
	for (i = 0; i < SAME_HANDLES; i += BATCH) {
		memset(c, 0, sizeof(c));
		for (k = 0; k < BATCH; k++)
			c[k].handle = e[i + k].handle;
		ioctl(fd, HTW_IOC_CANCEL, &creq);
	}
	t0 = htw_test_now(CLOCK_MONOTONIC) - t0;
	close(fd);
	return t0;
}

FIXTURE(stress) {
	struct stress s;
};

FIXTURE_VARIANT(stress) {
	int mode;
	int drain;
	uint64_t tick_ns;
	uint32_t slots;
	uint64_t max_delay;
};

/* Short delays on a small, fine wheel: timers cascade and fire constantly. */
FIXTURE_VARIANT_ADD(stress, schedule_cancel) {
	.mode = MODE_MIXED, .tick_ns = 250 * US, .slots = 16, .max_delay = 20 * MS,
};

/* The same with DRAIN racing schedule, cancel and the tick. */
FIXTURE_VARIANT_ADD(stress, schedule_cancel_drain) {
	.mode = MODE_MIXED, .drain = 1, .tick_ns = 250 * US, .slots = 16,
	.max_delay = 20 * MS,
};

/*
 * Every thread cancels the same handles at once; half of them are due
 * while that goes on, so cancels also race the tick moving them to ready.
 */
FIXTURE_VARIANT_ADD(stress, same_handles) {
	.mode = MODE_SAME_HANDLES, .tick_ns = 250 * US, .slots = 64,
	.max_delay = 100 * MS,
};

FIXTURE_SETUP(stress)
{
	struct stress *s = &self->s;
	struct htw_setup setup;

	memset(s, 0, sizeof(*s));
	s->fd = htw_test_open(O_NONBLOCK);
	ASSERT_LE(0, s->fd) TH_LOG("open+handshake: %s", strerror(errno));
	memset(&setup, 0, sizeof(setup));
	setup.tick_ns = variant->tick_ns;
	setup.slots = variant->slots;
	setup.clockid = CLOCK_MONOTONIC;
	ASSERT_EQ(0, ioctl(s->fd, HTW_IOC_SETUP, &setup)) TH_LOG("setup: %s", strerror(errno));
	s->c = calloc(MAX_COOKIES, sizeof(*s->c));
	ASSERT_NE(NULL, s->c);
	s->ncpus = online_cpus();
	s->nworkers = s->ncpus < 2 ? 2 : s->ncpus;
	s->nreaders = s->ncpus < 2 ? 1 : 2;
	s->mode = variant->mode;
	s->drain = variant->drain;
	s->max_delay = variant->max_delay;
}

FIXTURE_TEARDOWN(stress)
{
	close(self->s.fd);
	free(self->s.c);
}

TEST_F_TIMEOUT(stress, exactly_once, 120)
{
	struct stress *s = &self->s;
	struct worker w[MAX_THREADS], r[2];
	pthread_t wt[MAX_THREADS], rt[2];
	struct htw_stats st;
	uint64_t t0, total_cancel, nbad = 0, long_cancelled = 0;
	uint64_t short_cancelled = 0, short_delivered = 0;
	uint32_t i, n;
	int k;

	for (k = 0; k < s->nworkers; k++)
		w[k] = (struct worker){ s, k, k % s->ncpus, 0x5eed + k };
	for (k = 0; k < s->nreaders; k++)
		r[k] = (struct worker){ s, k, (k + 1) % s->ncpus, 0 };

	/*
	 * The threads first: they wait at the barrier, so that the timers
	 * scheduled below race them from the moment they are scheduled.
	 */
	ASSERT_EQ(0, pthread_barrier_init(&s->go, NULL, s->nworkers + s->nreaders + 1));
	for (k = 0; k < s->nreaders; k++)
		ASSERT_EQ(0, pthread_create(&rt[k], NULL, reader_main, &r[k]));
	for (k = 0; k < s->nworkers; k++)
		ASSERT_EQ(0, pthread_create(&wt[k], NULL, worker_main, &w[k]));

	if (s->mode == MODE_SAME_HANDLES) {
		/* Half the timers due within max_delay, half in an hour. */
		struct htw_timer_entry e[BATCH];
		unsigned int seed = 42;
		uint64_t sched_ns, sweep = measure_cancel_sweep(&sched_ns);

		/*
		 * The short half must be due while the workers cancel: spread
		 * over the time the schedule below takes and twice what the
		 * workers' sweeps take here (both measured), plus two ticks,
		 * so that some fire first and some do not.
		 */
		s->max_delay = sched_ns + 2 * sweep * (s->nworkers + s->ncpus - 1) / s->ncpus +
			       2 * variant->tick_ns;
		TH_LOG("schedule of %u timers: %.2f ms, one cancel sweep: %.2f ms; short delays 0..%.2f ms",
		       SAME_HANDLES, sched_ns / 1e6, sweep / 1e6, s->max_delay / 1e6);
		pin(0);	/* scheduled on CPU 0, cancelled from every CPU */
		for (i = 0; i < SAME_HANDLES / BATCH; i++) {
			ASSERT_LE(0, fill_entries(s, e, BATCH, &seed, 1));
			ASSERT_EQ(0, schedule_batch(s, e, BATCH, -1)) TH_LOG("%s", s->first_error);
		}
	}

	if (s->mode == MODE_SAME_HANDLES) {
		cpu_set_t all;

		CPU_ZERO(&all);
		for (k = 0; k < CPU_SETSIZE; k++)
			CPU_SET(k, &all);
		sched_setaffinity(0, sizeof(all), &all);
	}
	t0 = htw_test_now(CLOCK_MONOTONIC);
	s->deadline = t0 + stress_seconds() * 1000 * MS;
	pthread_barrier_wait(&s->go);
	for (k = 0; k < s->nworkers; k++)
		pthread_join(wt[k], NULL);

	/* Let every remaining short timer fire and be read. */
	if (s->mode == MODE_SAME_HANDLES) {
		struct htw_unexpired *out = calloc(DRAIN_CAP, sizeof(*out));

		ASSERT_NE(NULL, out);
		drain_all(s, out);	/* nothing should be left: every handle was cancelled */
		free(out);
	}
	for (k = 0; k < 1000; k++) {
		ASSERT_EQ(0, get_stats(s->fd, &st));
		if (!st.pending && !st.ready)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, st.pending);
	EXPECT_EQ(0, st.ready);
	usleep(50000);
	s->stop_readers = 1;
	for (k = 0; k < s->nreaders; k++)
		pthread_join(rt[k], NULL);
	pthread_barrier_destroy(&s->go);
	ASSERT_EQ(0, s->errors) TH_LOG("%u errors, first: %s", s->errors, s->first_error);

	/* Every timer: delivered, cancelled or drained, exactly once. */
	n = s->scheduled;
	for (i = 0; i < n; i++) {
		struct cookie_state *c = &s->c[i];
		uint32_t outcomes = c->delivered + c->cancelled + c->drained;
		const char *why = NULL;

		if (!c->handle)
			why = "never got a handle";
		else if (outcomes != 1)
			why = "not delivered/cancelled exactly once";
		else if (c->fired_seen && !c->delivered)
			why = "cancel said FIRED but no record was read";
		else if (c->delivered && c->rec_handle != c->handle)
			why = "record carries another handle";
		if (s->mode == MODE_SAME_HANDLES && i % 2 && c->cancelled == 1)
			long_cancelled++;
		if (s->mode == MODE_SAME_HANDLES && !(i % 2)) {
			short_cancelled += c->cancelled;
			short_delivered += c->delivered;
		}
		if (why && nbad++ < 10)
			TH_LOG("cookie %u: %s (delivered %u cancelled %u drained %u fired-seen %u)",
			       i, why, c->delivered, c->cancelled, c->drained, c->fired_seen);
	}
	EXPECT_EQ(0, nbad);

	total_cancel = s->n_cancelled + s->n_drained;
	TH_LOG("%d CPUs, %d workers, %d readers, %.1f s: %u scheduled, %llu delivered, "
	       "%llu cancelled (%llu on another CPU than the scheduler's), %llu drained, "
	       "%llu cancels found it fired, %llu unknown, %llu cancel + %llu drain calls",
	       s->ncpus, s->nworkers, s->nreaders, (htw_test_now(CLOCK_MONOTONIC) - t0) / 1e9, n,
	       (unsigned long long)s->n_delivered, (unsigned long long)s->n_cancelled,
	       (unsigned long long)s->n_cross_cpu, (unsigned long long)s->n_drained,
	       (unsigned long long)s->n_fired_seen, (unsigned long long)s->n_unknown,
	       (unsigned long long)s->n_cancel_calls, (unsigned long long)s->n_drain_calls);

	/* The instance's own counters agree with what user space saw. */
	ASSERT_EQ(0, get_stats(s->fd, &st));
	EXPECT_EQ(n, st.scheduled);
	EXPECT_EQ(s->n_delivered, st.fired);
	EXPECT_EQ(total_cancel, st.cancelled);
	EXPECT_EQ(n, s->n_delivered + total_cancel);

	/* The race was really run: both outcomes happened. */
	EXPECT_LT(0, s->n_delivered);
	EXPECT_LT(0, s->n_cancelled);
	if (s->mode == MODE_SAME_HANDLES) {
		/* The hour-long half can only have been cancelled, by exactly one thread. */
		EXPECT_EQ(n / 2, long_cancelled);
		/*
		 * The short half raced the tick: the hour-long half alone
		 * guarantees a cancel, so both outcomes must come from it.
		 */
		TH_LOG("short timers: %llu cancelled, %llu delivered",
		       (unsigned long long)short_cancelled, (unsigned long long)short_delivered);
		EXPECT_LT(0, short_cancelled);
		EXPECT_LT(0, short_delivered);
	}
	/* With 2 CPUs, timers scheduled on one were cancelled from another. */
	if (s->ncpus >= 2)
		EXPECT_LT(0, s->n_cross_cpu);
}

TEST_HARNESS_MAIN
