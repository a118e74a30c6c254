// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery to user space: timers expiring over a span, consumed through
 * htwheel's read() (blocking, and through an eventfd in epoll) and through
 * one timerfd each in one epoll.  Lateness comes from raw timestamps taken
 * when a record or readiness is seen; it is computed after the window.
 * A section of its own takes the expiries of a shared timer table's slots
 * from its completion ring, beside the same number of timers read().
 */
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>

/*
 * At most 10k timers over 2 s: a load the timerfd consumer keeps up with
 * in UML, where its read() per expiry is a ~31 us ptrace round trip (10k
 * a second is a third of its CPU); more would measure its backlog.
 */
#define DELIVER_MAX	10000
#define DELIVER_SPAN	(2 * NSEC_PER_SEC)
/*
 * The table's section: many expiries a tick, so that each consumer's cost
 * per record shows, not its cost per wake-up; no timerfd has to keep up.
 * Up to a million, the table's largest size in the bench.
 */
#define TABLE_DELIVER_MAX	1000000
#define TABLE_DELIVER_SPAN	(20 * NSEC_PER_MSEC)
#define RBATCH		4096
/* Lateness histogram: 4 bins per octave from 1 us; bin 0 is < 1 us. */
#define HBINS		120

enum deliver_kind { D_READ, D_EVENTFD, D_TIMERFD, D_TABLE };

struct deliver {
	enum deliver_kind kind;
	unsigned long n;
	uint64_t lead;			/* arming to the first deadline; 0: deliver's own */
	const uint64_t *offset;
	uint64_t *deadline, *seen, *late;
	unsigned long got, early;
	unsigned long hist[HBINS];
	int fd, efd, ep, *fds;
	struct htw_timer_entry *e;
	struct htw_expiry *rec;
	struct epoll_event *evs;
	struct ub_table tb;
};

/* Every slot at its deadline, all taken in before the window opens. */
static void arm_table(struct deliver *d)
{
	unsigned long i;

	for (i = 0; i < d->n; i++)
		table_arm(&d->tb, i, d->deadline[i]);
	table_enter(&d->tb);
}

static uint64_t arm(struct deliver *d)
{
	/* Arming timerfds takes ~31 us each in UML: start after it. */
	uint64_t t0 = mono() + (d->lead ? d->lead :
				200 * NSEC_PER_MSEC + d->n * 100000ULL);
	struct itimerspec its = { 0 };
	unsigned long i;

	for (i = 0; i < d->n; i++)
		d->deadline[i] = t0 + d->offset[i];
	if (d->kind == D_TABLE) {
		arm_table(d);
	} else if (d->kind == D_TIMERFD) {
		for (i = 0; i < d->n; i++) {
			its.it_value = ts_of(d->deadline[i]);
			if (timerfd_settime(d->fds[i], TFD_TIMER_ABSTIME, &its, NULL))
				die("timerfd_settime");
		}
	} else {
		for (i = 0; i < d->n; i++)
			d->e[i] = (struct htw_timer_entry){ .cookie = i,
				.expires = d->deadline[i], .flags = HTW_TIMER_ABSTIME };
		schedule_batches(d->fd, d->e, d->n, 1024);
	}
	return t0;
}

static unsigned long consume_wheel(struct deliver *d)
{
	unsigned long calls = 0, i;
	uint64_t cnt, now;

	while (d->got < d->n) {
		ssize_t r;

		if (d->kind == D_EVENTFD) {
			struct epoll_event ev;

			calls += 2;
			if (epoll_wait(d->ep, &ev, 1, -1) < 0) {
				if (errno == EINTR)
					continue;
				die("epoll_wait");
			}
			if (read(d->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
				die("read eventfd");
		}
		do {
			r = read(d->fd, d->rec, RBATCH * sizeof(*d->rec));
			calls++;
			now = mono();
			if (r < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				die("read htwheel");
			}
			for (i = 0; i < (unsigned long)r / sizeof(*d->rec); i++) {
				d->late[d->got] = d->rec[i].deadline_ns;
				d->seen[d->got++] = now;
			}
		} while (d->kind == D_EVENTFD && r == RBATCH * sizeof(*d->rec));
	}
	return calls;
}

static unsigned long consume_timerfd(struct deliver *d)
{
	unsigned long calls = 0;
	uint64_t cnt, now;

	while (d->got < d->n) {
		int k = epoll_wait(d->ep, d->evs, RBATCH, -1), i;

		calls++;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		now = mono();
		for (i = 0; i < k; i++) {
			unsigned long idx = d->evs[i].data.u64;

			calls++;
			if (read(d->fds[idx], &cnt, sizeof(cnt)) != sizeof(cnt))
				continue;
			d->late[d->got] = d->deadline[idx];
			d->seen[d->got++] = now;
		}
	}
	return calls;
}

/* The @k records from @e on, timestamped as read() records are. */
static void take_cqes(struct deliver *d, const struct htw_table2_cqe *e, int k)
{
	uint64_t now = mono();
	int j;

	for (j = 0; j < k; j++) {
		if (d->got == d->n)
			table_fail("more records than slots armed");
		if (e[j].slot >= d->n)
			table_fail("a record for a slot out of range");
		d->late[d->got] = d->deadline[e[j].slot];
		d->seen[d->got++] = now;
	}
	table_advance(&d->tb, k);
}

/*
 * Asleep in poll() while the ring is empty, as read() sleeps in the
 * kernel; bounded, so that a slot that never fires fails the run rather
 * than hanging the boot.
 */
static unsigned long consume_table(struct deliver *d)
{
	struct pollfd p = { .fd = d->tb.t->fd, .events = POLLIN };
	struct htw_table2_cqe *e;
	unsigned long calls = 0;
	int r, k;

	while (d->got < d->n) {
		k = table_peek(&d->tb, &e);
		if (k > 0) {
			take_cqes(d, e, k);
			continue;
		}
		calls++;
		r = poll(&p, 1, 10000);
		if (r < 0 && errno != EINTR)
			die("poll htwheel");
		if (!r)
			table_fail("no record in 10 s, slots still armed");
	}
	return calls;
}

static unsigned long consume(struct deliver *d)
{
	switch (d->kind) {
	case D_TIMERFD:
		return consume_timerfd(d);
	case D_TABLE:
		return consume_table(d);
	default:
		return consume_wheel(d);
	}
}

static void run_deliver(struct contender *c)
{
	struct deliver *d = c->ctx;
	struct window win;
	uint64_t t0;
	unsigned long i;

	d->got = 0;
	d->early = 0;
	t0 = arm(d);
	if (mono() > t0 - 20 * NSEC_PER_MSEC)
		put_meta("late start", "%s: armed after the window was due to open",
			 c->kase ? c->kase : c->who);
	sleep_until(t0 - 20 * NSEC_PER_MSEC);
	window_begin(&win);
	c->calls = consume(d);
	window_end(&win);
	c->win = win;
	c->ops = d->got;
	/* After the window: lateness from the raw (deadline, seen) pairs. */
	for (i = 0; i < d->got; i++) {
		d->early += d->seen[i] < d->late[i];
		d->late[i] = d->seen[i] > d->late[i] ? d->seen[i] - d->late[i] : 0;
	}
	sort_u64(d->late, d->got);
}

static void hist_add(struct deliver *d)
{
	unsigned long i;

	for (i = 0; i < d->got; i++) {
		uint64_t us = d->late[i] / 1000;
		unsigned int bin = 0;

		/* 4 bins per octave: bin = 1 + floor(4 log2(us)), no libm needed */
		if (us) {
			unsigned int o = 63 - __builtin_clzll(us);
			uint64_t base = 1ULL << o;

			bin = 1 + 4 * o + (unsigned int)((us - base) * 4 / base);
		}
		d->hist[bin < HBINS ? bin : HBINS - 1]++;
	}
}

static void print_lateness(const char *section, const char *kase,
			   unsigned long n, const struct contender *c)
{
	static const double ps[] = { 50, 99, 99.9 };
	struct deliver *d = c->ctx;
	char k[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ps); i++) {
		snprintf(k, sizeof(k), "%s: lateness p%g", kase, ps[i]);
		put_sample(section, k, n, c->who, "us", pct(d->late, d->got, ps[i]) / 1e3);
	}
	/* Seen before its deadline: the consumer read it early (a lower bound). */
	snprintf(k, sizeof(k), "%s: early expirations", kase);
	put_sample(section, k, n, c->who, "count", d->early);
}

static void put_lateness_hist(struct deliver *d, const struct contender *c)
{
	char name[128];
	unsigned int j;

	hist_add(d);
	snprintf(name, sizeof(name), "%s%s%s", c->who,
		 c->kase ? ", " : "", c->kase ? c->kase : "");
	for (j = 0; j < HBINS; j++) {
		double lo = j ? (double)(1ULL << ((j - 1) / 4)) *
				(1 + ((j - 1) % 4) / 4.0) : 0;

		if (d->hist[j])
			put_hist(name, lo, d->hist[j]);
	}
}

static void setup(struct deliver *d)
{
	unsigned long i;

	d->deadline = xcalloc(d->n, sizeof(uint64_t));
	d->seen = xcalloc(d->n, sizeof(uint64_t));
	d->late = xcalloc(d->n, sizeof(uint64_t));
	d->efd = -1;
	d->ep = -1;
	if (d->kind == D_TIMERFD) {
		raise_limits(d->n);
		d->ep = epoll_create1(EPOLL_CLOEXEC);
		d->fds = xcalloc(d->n, sizeof(int));
		d->evs = xcalloc(RBATCH, sizeof(*d->evs));
		for (i = 0; i < d->n; i++) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

			d->fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
			if (d->fds[i] < 0 || epoll_ctl(d->ep, EPOLL_CTL_ADD, d->fds[i], &ev))
				die("timerfd + epoll_ctl");
		}
		return;
	}
	if (d->kind == D_TABLE) {
		/* bench_deliver_table() opened it: it knows whether one can be made. */
		d->fd = d->tb.t->fd;
		return;
	}
	d->fd = open_wheel(d->kind == D_EVENTFD ? O_NONBLOCK : 0);
	d->e = xcalloc(d->n, sizeof(*d->e));
	d->rec = xcalloc(RBATCH, sizeof(*d->rec));
	if (d->kind == D_EVENTFD) {
		struct htw_eventfd hev = { 0 };
		struct epoll_event ev = { .events = EPOLLIN };

		d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		d->ep = epoll_create1(EPOLL_CLOEXEC);
		hev.fd = d->efd;
		if (d->efd < 0 || d->ep < 0 || ioctl(d->fd, HTW_IOC_SET_EVENTFD, &hev) ||
		    epoll_ctl(d->ep, EPOLL_CTL_ADD, d->efd, &ev))
			die("eventfd + epoll");
	}
}

int bench_deliver(unsigned long n)
{
	static const char section[] =
		"delivery to user space: N timers due over 2 s, each expiry read";
	struct deliver d[3] = {
		{ .kind = D_READ }, { .kind = D_EVENTFD }, { .kind = D_TIMERFD },
	};
	struct contender c[3] = {
		{ .who = "htwheel", .kase = "expiry, htwheel blocking read()" },
		{ .who = "htwheel", .kase = "expiry, htwheel eventfd+epoll then read()" },
		{ .who = "timerfd per timer in one epoll, read() each" },
	};
	unsigned long nd = n < DELIVER_MAX ? n : DELIVER_MAX, i;
	uint64_t *offset = xcalloc(nd, sizeof(*offset));
	struct htw_stats st;

	meta_run("deliver");
	if (nd < n)
		put_meta("deliver", "%lu timers, not %lu: the timerfd consumer must keep up",
			 nd, n);
	for (i = 0; i < nd; i++)
		offset[i] = rnd() % DELIVER_SPAN;
	for (i = 0; i < 3; i++) {
		d[i].n = nd;
		d[i].offset = offset;
		setup(&d[i]);
		c[i].run = run_deliver;
		c[i].ctx = &d[i];
		c[i].print = print_lateness;
	}
	run_section(section, nd, c, 3, 0, UB_REPS);
	/* The histogram of the last repetition of each. */
	for (i = 0; i < 3; i++)
		put_lateness_hist(&d[i], &c[i]);
	read_wheel_stats(d[0].fd, &st);
	put_meta("htwheel tick_ns", "%llu", (unsigned long long)st.tick_ns);
	put_meta("htwheel kernel max lateness", "%llu ns", (unsigned long long)st.max_late_ns);
	free(offset);
	return 0;
}

static void release(struct deliver *d)
{
	if (d->kind == D_TABLE)
		table_close(&d->tb);
	else
		close(d->fd);
	free(d->deadline);
	free(d->seen);
	free(d->late);
	free(d->e);
	free(d->rec);
}

/*
 * n slots of a table due over 20 ms, consumed from the completion ring,
 * beside n timers of a file consumed with blocking read(): the same
 * deadlines, the same measure (process CPU and the machine's, from the
 * first deadline to the last record).
 */
void bench_deliver_table(unsigned long n)
{
	static const char section[] =
		"user-space table expiry: N slots due over 20 ms, each expiry consumed";
	struct deliver d[2] = { { .kind = D_TABLE }, { .kind = D_READ } };
	struct contender c[2] = {
		{ .who = "htwheel", .kase = "expiry through the completion ring" },
		{ .who = "htwheel blocking read() of struct htw_expiry" },
	};
	unsigned long nd = n < TABLE_DELIVER_MAX ? n : TABLE_DELIVER_MAX, i;
	uint64_t *offset;
	int err = table_open(&d[0].tb, nd);

	if (err) {
		put_meta("not run", "%s, n %lu: %s", section, nd, strerror(-err));
		return;
	}
	if (nd < n)
		put_meta("table expiry", "%lu slots, not %lu", nd, n);
	put_meta("table expiry consumers",
		 "the ring: poll() while it is empty, then every record to its tail, one acquire and one release a batch; read(): blocking, 4096 records of struct htw_expiry at most a call; system calls: the poll()s, the read()s");
	offset = xcalloc(nd, sizeof(*offset));
	for (i = 0; i < nd; i++)
		offset[i] = rnd() % TABLE_DELIVER_SPAN;
	for (i = 0; i < 2; i++) {
		d[i].n = nd;
		/*
		 * Arming a slot or a timer takes well under 3 us in UML
		 * and qemu (a million: 3 s of lead).
		 */
		d[i].lead = 200 * NSEC_PER_MSEC + nd * 3000ULL;
		d[i].offset = offset;
		setup(&d[i]);
		c[i].run = run_deliver;
		c[i].ctx = &d[i];
		c[i].print = print_lateness;
	}
	run_section(section, nd, c, 2, 0, UB_REPS);
	put_lateness_hist(&d[0], &c[0]);
	for (i = 0; i < 2; i++)
		release(&d[i]);
	free(offset);
}
