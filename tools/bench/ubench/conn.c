// SPDX-License-Identifier: GPL-2.0
/*
 * A connection-idle-timeout server: N connections, each with a timer
 * re-armed on random activity; some connections close (their timer is
 * cancelled), the idle ones expire; a closed or expired connection is
 * replaced by a new one, so N stays constant and one population serves
 * every repetition.  The load is paced by the clock, the same for every
 * contender, so each gets the same events and the same expiries; the
 * event count, not the population, bounds the run time.  One variant
 * keeps each connection's timeout in a slot of a shared timer table.
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
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <ev.h>

/*
 * 4000 events a second: a load the timerfd server keeps up with in UML
 * (about 3 system calls of ~31 us per event), and a window of 2 s: long
 * enough for UML's process CPU clock, which advances in 10 ms steps.
 */
#define CONN_RATE	4000		/* activity + close events per second */
#define CONN_PERIOD	(10 * NSEC_PER_MSEC)	/* one event-loop round */
#define CONN_WINDOW	(2 * NSEC_PER_SEC)
#define CONN_CLOSE_PCT	10
#define CONN_TIMERFD_MAX 100000		/* one fd per connection */
#define RBATCH		4096

enum conn_kind { C_WHEEL, C_TIMERFD, C_EV, C_TABLE };

struct conn {
	enum conn_kind kind;
	unsigned long n;
	uint64_t timeout;
	const uint64_t *phase;		/* initial delays, every contender alike */
	unsigned long runs;
	uint64_t rng;			/* the events, every contender alike */
	unsigned long calls, events, expiries, stale;
	/* htwheel */
	int fd;
	uint64_t *handle;
	unsigned char *dirty;
	struct htw_cancel_entry *cq;
	struct htw_timer_entry *sq;
	unsigned long ncq, nsq;
	struct htw_expiry *rec;
	/* timerfd */
	int *fds, ep;
	struct epoll_event *evs;
	/* libev */
	struct ev_loop *ev;
	ev_timer *evt, pace;
	int paced;
	/* the table: slot i is connection i's timeout */
	struct ub_table tb;
	uint64_t now;			/* the loop round's time, as libev's ev_now() */
	unsigned long enters;		/* HTW_IOC_TABLE2_ENTER calls in the window */
};

/* ---- htwheel: cancel + schedule, flushed once per loop round ---- */

static void wheel_rearm(struct conn *k, unsigned long i)
{
	if (k->dirty[i])
		return;		/* already re-armed this round */
	k->dirty[i] = 1;
	if (k->handle[i])
		k->cq[k->ncq++] = (struct htw_cancel_entry){ .handle = k->handle[i] };
	k->handle[i] = 0;
	k->sq[k->nsq++] = (struct htw_timer_entry){ .cookie = i, .expires = k->timeout };
}

static void wheel_flush(struct conn *k)
{
	unsigned long j;

	if (k->ncq) {
		struct htw_cancel cs = { .entries = (uintptr_t)k->cq, .count = k->ncq };

		/* A timer expired but not yet read is HTW_CANCEL_FIRED: its record is stale. */
		if (ioctl(k->fd, HTW_IOC_CANCEL, &cs) < 0)
			die("HTW_IOC_CANCEL");
		k->calls++;
		k->ncq = 0;
	}
	if (k->nsq) {
		k->calls += schedule_batches(k->fd, k->sq, k->nsq, k->nsq);
		for (j = 0; j < k->nsq; j++) {
			k->handle[k->sq[j].cookie] = k->sq[j].handle;
			k->dirty[k->sq[j].cookie] = 0;
		}
		k->nsq = 0;
	}
}

static void wheel_read(struct conn *k)
{
	for (;;) {
		ssize_t r = read(k->fd, k->rec, RBATCH * sizeof(*k->rec));
		unsigned long j;

		k->calls++;
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("read htwheel");
		}
		for (j = 0; j < (unsigned long)r / sizeof(*k->rec); j++) {
			unsigned long i = k->rec[j].cookie;

			if (i >= k->n || k->rec[j].handle != k->handle[i]) {
				k->stale++;
				continue;
			}
			k->expiries++;
			k->handle[i] = 0;
			wheel_rearm(k, i);
		}
		if ((unsigned long)r < RBATCH * sizeof(*k->rec))
			return;
	}
}

static void wheel_wait(struct conn *k, uint64_t until)
{
	struct pollfd p = { .fd = k->fd, .events = POLLIN };
	uint64_t now;

	while ((now = mono()) < until) {
		struct timespec ts = ts_of(until - now);
		int r = ppoll(&p, 1, &ts, NULL);

		k->calls++;
		if (r < 0 && errno != EINTR)
			die("ppoll");
		if (r > 0) {
			wheel_read(k);
			wheel_flush(k);
		}
	}
}

/* ---- one timerfd per connection, all in one epoll ---- */

static void tfd_arm(struct conn *k, unsigned long i, uint64_t delay)
{
	struct itimerspec its = { .it_value = ts_of(delay) };

	if (timerfd_settime(k->fds[i], 0, &its, NULL))
		die("timerfd_settime");
	k->calls++;
}

/* The connection's timerfd goes with it; the new one gets its own. */
static void tfd_open(struct conn *k, unsigned long i, uint64_t delay)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

	k->fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (k->fds[i] < 0 || epoll_ctl(k->ep, EPOLL_CTL_ADD, k->fds[i], &ev))
		die("timerfd_create + epoll_ctl");
	k->calls += 2;
	tfd_arm(k, i, delay);
}

static void tfd_reopen(struct conn *k, unsigned long i)
{
	close(k->fds[i]);
	k->calls++;
	tfd_open(k, i, k->timeout);
}

static void tfd_wait(struct conn *k, uint64_t until)
{
	uint64_t now, cnt;

	while ((now = mono()) < until) {
		int r = epoll_wait(k->ep, k->evs, RBATCH,
				   (until - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		int j;

		k->calls++;
		if (r < 0 && errno != EINTR)
			die("epoll_wait");
		for (j = 0; j < r; j++) {
			unsigned long i = k->evs[j].data.u64;

			k->calls++;
			if (read(k->fds[i], &cnt, sizeof(cnt)) != sizeof(cnt)) {
				k->stale++;
				continue;
			}
			k->expiries++;
			tfd_reopen(k, i);
		}
	}
}

/* ---- libev: its timer heap, woken by its epoll_wait timeout ---- */

static void ev_expired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct conn *k = ev_userdata(loop);

	(void)revents;
	k->expiries++;
	ev_timer_set(w, k->timeout / 1e9, 0);
	ev_timer_start(loop, w);
}

static void ev_paced(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct conn *k = ev_userdata(loop);

	(void)w;
	(void)revents;
	k->paced = 1;
}

static void ev_wait(struct conn *k, uint64_t until)
{
	unsigned int it = ev_iteration(k->ev);
	uint64_t now = mono();

	if (now >= until)
		return;
	k->paced = 0;
	ev_timer_set(&k->pace, (until - now) / 1e9, 0);
	ev_timer_start(k->ev, &k->pace);
	while (!k->paced)
		ev_run(k->ev, EVRUN_ONCE);
	/* One epoll_wait per loop iteration. */
	k->calls += ev_iteration(k->ev) - it;
}

/* ---- the table: a slot per connection, moved later by a store ---- */

/* A new connection's timeout, or an old one's moved later on activity. */
static void table_touch(struct conn *k, unsigned long i)
{
	table_arm(&k->tb, i, k->now + k->timeout);
}

/*
 * A record whose slot is armed again is stale: activity came after the
 * kernel claimed it (the exchange returned 0 and armed it anew).  Any
 * other is an idle connection, replaced by a new one.
 */
static void table_reap(struct conn *k)
{
	struct htw_table2_cqe *e;
	int got, j;
	uint32_t i;

	while ((got = table_peek(&k->tb, &e)) > 0) {
		for (j = 0; j < got; j++) {
			i = e[j].slot;
			if (i >= k->n || table_armed(&k->tb, i)) {
				k->stale++;
				continue;
			}
			k->expiries++;
			table_touch(k, i);
		}
		table_advance(&k->tb, got);
	}
}

/* As the htwheel variant waits: ppoll on the file, woken by its records. */
static void table_wait(struct conn *k, uint64_t until)
{
	struct pollfd p = { .fd = k->tb.t->fd, .events = POLLIN };
	uint64_t now;

	table_reap(k);
	while ((now = mono()) < until) {
		struct timespec ts = ts_of(until - now);
		int r = ppoll(&p, 1, &ts, NULL);

		k->calls++;
		if (r < 0 && errno != EINTR)
			die("ppoll");
		if (r > 0)
			table_reap(k);
	}
}

/* ---- the driver ---- */

/* xorshift64*, reseeded per repetition: each contender sees the same events. */
static uint64_t conn_rnd(struct conn *k)
{
	k->rng ^= k->rng >> 12;
	k->rng ^= k->rng << 25;
	k->rng ^= k->rng >> 27;
	return k->rng * 2685821657736338717ULL;
}

static void conn_event(struct conn *k)
{
	unsigned long i = conn_rnd(k) % k->n;
	int close_it = conn_rnd(k) % 100 < CONN_CLOSE_PCT;
	ev_timer *w;

	k->events++;
	switch (k->kind) {
	case C_WHEEL:
		wheel_rearm(k, i);
		break;
	case C_TIMERFD:
		if (close_it)
			tfd_reopen(k, i);
		else
			tfd_arm(k, i, k->timeout);
		break;
	case C_EV:
		w = &k->evt[i];
		if (close_it) {
			ev_timer_stop(k->ev, w);
			ev_timer_set(w, k->timeout / 1e9, 0);
			ev_timer_start(k->ev, w);
		} else {
			w->repeat = k->timeout / 1e9;
			ev_timer_again(k->ev, w);
		}
		break;
	case C_TABLE:
		/*
		 * A close cancels (quietly: one store; a record of the old
		 * connection's arming is then stale), and the new connection
		 * arms: a submission.
		 */
		if (close_it)
			table_cancel_quiet(&k->tb, i);
		table_touch(k, i);
		break;
	}
}

static void conn_wait(struct conn *k, uint64_t until)
{
	switch (k->kind) {
	case C_WHEEL:
		wheel_flush(k);
		wheel_wait(k, until);
		break;
	case C_TIMERFD:
		tfd_wait(k, until);
		break;
	case C_EV:
		ev_wait(k, until);
		break;
	case C_TABLE:
		table_wait(k, until);
		break;
	}
}

static void conn_setup(struct conn *k)
{
	unsigned long i;

	switch (k->kind) {
	case C_WHEEL:
		k->fd = open_wheel(O_NONBLOCK);
		k->handle = xcalloc(k->n, sizeof(*k->handle));
		k->dirty = xcalloc(k->n, 1);
		k->cq = xcalloc(k->n, sizeof(*k->cq));
		k->sq = xcalloc(k->n, sizeof(*k->sq));
		k->rec = xcalloc(RBATCH, sizeof(*k->rec));
		break;
	case C_TIMERFD:
		raise_limits(k->n);
		k->ep = epoll_create1(EPOLL_CLOEXEC);
		if (k->ep < 0)
			die("epoll_create1");
		k->fds = xcalloc(k->n, sizeof(*k->fds));
		k->evs = xcalloc(RBATCH, sizeof(*k->evs));
		for (i = 0; i < k->n; i++)
			tfd_open(k, i, k->phase[i]);
		break;
	case C_EV:
		k->ev = ev_loop_new(EVBACKEND_EPOLL);
		if (!k->ev)
			die("ev_loop_new");
		ev_set_userdata(k->ev, k);
		ev_timer_init(&k->pace, ev_paced, 1, 0);
		k->evt = xcalloc(k->n, sizeof(*k->evt));
		for (i = 0; i < k->n; i++)
			ev_timer_init(&k->evt[i], ev_expired, k->phase[i] / 1e9, 0);
		break;
	case C_TABLE:
		break;		/* conn_size() made the table, or left the variant out */
	}
}

/*
 * Before each window, outside it: every connection's timer anew at the
 * same random phase of its timeout, as in a server long running, so that
 * the time a contender spent waiting for its turn does not pile up
 * expiries.  Records and readiness left from before are discarded.
 */
static void conn_reset(struct conn *k)
{
	struct htw_drain dr = { 0 };
	unsigned long i;

	switch (k->kind) {
	case C_WHEEL:
		if (ioctl(k->fd, HTW_IOC_DRAIN, &dr) < 0)
			die("HTW_IOC_DRAIN");
		while (read(k->fd, k->rec, RBATCH * sizeof(*k->rec)) > 0)
			;
		for (i = 0; i < k->n; i++)
			k->sq[i] = (struct htw_timer_entry){ .cookie = i, .expires = k->phase[i] };
		schedule_batches(k->fd, k->sq, k->n, 1024);
		for (i = 0; i < k->n; i++) {
			k->handle[i] = k->sq[i].handle;
			k->dirty[i] = 0;
		}
		k->ncq = 0;
		k->nsq = 0;
		break;
	case C_TIMERFD:
		/* Arming anew also clears an expiry not yet read. */
		for (i = 0; i < k->n; i++)
			tfd_arm(k, i, k->phase[i]);
		break;
	case C_EV:
		ev_now_update(k->ev);
		for (i = 0; i < k->n; i++) {
			ev_timer_stop(k->ev, &k->evt[i]);
			ev_timer_set(&k->evt[i], k->phase[i] / 1e9, 0);
			ev_timer_start(k->ev, &k->evt[i]);
		}
		break;
	case C_TABLE:
		table_disarm_all(&k->tb);
		k->now = mono();
		for (i = 0; i < k->n; i++)
			table_arm(&k->tb, i, k->now + k->phase[i]);
		table_enter(&k->tb);
		break;
	}
}

static void conn_release(struct conn *k)
{
	unsigned long i;

	switch (k->kind) {
	case C_WHEEL:
		close(k->fd);
		free(k->handle);
		free(k->dirty);
		free(k->cq);
		free(k->sq);
		free(k->rec);
		break;
	case C_TIMERFD:
		for (i = 0; i < k->n; i++)
			close(k->fds[i]);
		close(k->ep);
		free(k->fds);
		free(k->evs);
		break;
	case C_EV:
		ev_loop_destroy(k->ev);
		free(k->evt);
		break;
	case C_TABLE:
		table_close(&k->tb);
		break;
	}
}

static void run_conn(struct contender *c)
{
	struct conn *k = c->ctx;
	uint64_t t0, due, round = 0, lag = 0;
	struct window win;

	conn_reset(k);
	k->rng = ub_seed() ^ (++k->runs * 0x9e3779b97f4a7c15ULL);
	k->calls = 0;
	k->events = 0;
	k->expiries = 0;
	k->stale = 0;
	k->enters = table_enters;
	window_begin(&win);
	t0 = mono();
	for (;;) {
		uint64_t now = mono();

		if (now >= t0 + CONN_WINDOW)
			break;
		k->now = now;
		due = (now - t0) * CONN_RATE / NSEC_PER_SEC;
		if (due > k->events + CONN_RATE * CONN_PERIOD / NSEC_PER_SEC * 2)
			lag++;
		while (k->events < due)
			conn_event(k);
		while (t0 + round * CONN_PERIOD <= now)
			round++;
		conn_wait(k, t0 + round * CONN_PERIOD);
	}
	window_end(&win);
	window_add(&c->win, &win);
	k->enters = table_enters - k->enters;
	c->ops = k->events + k->expiries;
	c->calls = k->calls + k->enters;
	put_meta("conn",
		 "%s%s%s, n %lu: %lu events, %lu expiries, %lu stale, %llu late rounds, %.3f s",
		 c->who, c->kase ? ", " : "", c->kase ? c->kase : "", k->n, k->events,
		 k->expiries, k->stale, (unsigned long long)lag, win.wall / 1e9);
}

/* The table's own system calls, apart from the loop's waits. */
static void print_conn_table(const char *section, const char *kase,
			     unsigned long n, const struct contender *c)
{
	const struct conn *k = c->ctx;
	char key[256];

	snprintf(key, sizeof(key), "%s: HTW_IOC_TABLE2_ENTER calls", kase);
	put_sample(section, key, n, c->who, "syscalls", k->enters / c->ops);
}

/* 0, or the table could not be made at this size (EDQUOT, say): said, left out. */
static int conn_table_open(struct conn *k, unsigned long n)
{
	int err = table_open(&k->tb, n);

	if (err)
		put_meta("not run", "connection idle timeout, n %lu: htwheel table (%s)",
			 n, strerror(-err));
	return err;
}

static void conn_size(unsigned long n)
{
	static const char section[] =
		"connection idle timeout: N connections, 4000 events/s, CPU per event";
	static const struct {
		enum conn_kind kind;
		const char *who, *kase;
	} impls[] = {
		{ C_WHEEL, "htwheel", "connection event" },
		{ C_TABLE, "htwheel", "connection event, table" },
		{ C_TIMERFD, "timerfd per connection + epoll", NULL },
		{ C_EV, "libev ev_timer heap, one epoll_wait timeout", NULL },
	};
	uint64_t timeout = 4 * n * NSEC_PER_SEC / CONN_RATE;
	uint64_t *phase = xcalloc(n, sizeof(*phase));
	struct conn k[ARRAY_SIZE(impls)];
	struct contender c[ARRAY_SIZE(impls)];
	unsigned long i, nc = 0;

	for (i = 0; i < n; i++)
		phase[i] = 1 + rnd() % timeout;

	for (i = 0; i < ARRAY_SIZE(impls); i++) {
		if (impls[i].kind == C_TIMERFD && n > CONN_TIMERFD_MAX) {
			put_meta("not run", "connection idle timeout, n %lu: %s (more than %d fds)",
				 n, impls[i].who, CONN_TIMERFD_MAX);
			continue;
		}
		k[nc] = (struct conn){ .kind = impls[i].kind, .n = n,
				       .timeout = timeout, .phase = phase };
		if (impls[i].kind == C_TABLE && conn_table_open(&k[nc], n))
			continue;
		conn_setup(&k[nc]);
		c[nc] = (struct contender){ .who = impls[i].who, .kase = impls[i].kase,
			.run = run_conn, .ctx = &k[nc],
			.print = impls[i].kind == C_TABLE ? print_conn_table : NULL };
		nc++;
	}
	run_section(section, n, c, nc, 0, UB_REPS);
	for (i = 0; i < nc; i++)
		conn_release(&k[i]);
	free(phase);
}

int bench_conn(const char *sizes)
{
	char *list = strdup(sizes), *tok, *save = NULL;

	if (!list)
		die("strdup");
	meta_run("conn");
	put_meta("conn",
		 "each second 4000 events on random connections: 90%% activity re-arms its timer to the timeout, 10%% close it and open a new one (cancel + arm); timeout 4N/4000 s (connections at random phases of it), the idle expire and are replaced by new ones; an event is an activity, a close or an expiry; 2 s per repetition");
	put_meta("conn timerfd",
		 "its timerfd goes with a closed or expired connection: close + timerfd_create + epoll_ctl + timerfd_settime; activity is one timerfd_settime");
	put_meta("conn htwheel",
		 "cancels and schedules of one 10 ms loop round in one HTW_IOC_CANCEL and one HTW_IOC_SCHEDULE; expiries by ppoll + read");
	put_meta("conn libev",
		 "ev_timer_again on activity, ev_timer_stop + ev_timer_start on close; its loop sleeps in epoll_wait with the heap's first timeout");
	put_meta("conn htwheel table",
		 "a slot per connection, deadlines from the loop round's time (as libev's ev_now()): activity moves it later with one exchange, no system call; a close cancels it (a store: the quiet cancel) and the new connection arms it (exchange + submission; HTW_IOC_TABLE2_ENTER only if earlier than the kernel's next look, the ring is never full); expiries from the completion ring, after ppoll as the htwheel variant; ': system calls' counts them all, the loop's ppoll waits included; ': HTW_IOC_TABLE2_ENTER calls' the table's own, which a server waiting on its sockets anyway would add to that wait");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		conn_size(strtoul(tok, NULL, 0));
	free(list);
	return 0;
}
