// SPDX-License-Identifier: GPL-2.0
/*
 * Schedule + cancel of N timers that are not pending, every user-space
 * API side by side: htwheel batched 1, 64 and 1024 per ioctl, timerfd,
 * POSIX timers, libuv and libev, the same N and the same delays; and, in
 * a section of its own, the shared timer table's slots against libuv and
 * libev.
 */
#include "peers.h"
#include "table.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>

struct sched_ctx {
	unsigned long n;
	uint64_t *delay;
	struct htw_timer_entry *e;
	struct htw_cancel_entry *c;
	int *fds;
	uv_loop_t uv;
	uv_timer_t *uvt;
	struct ev_loop *ev;
	ev_timer *evt;
};

struct wheel_ctx {
	struct sched_ctx *s;
	unsigned long batch;
	int fd;
};

struct table_ctx {
	struct sched_ctx *s;
	struct ub_table t;
};

static void run_wheel(struct contender *c)
{
	struct wheel_ctx *w = c->ctx;
	struct sched_ctx *s = w->s;
	unsigned long p, i;
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		/* Building the requests is part of the API's cost. */
		for (i = 0; i < s->n; i++)
			s->e[i] = (struct htw_timer_entry){ .cookie = i,
							    .expires = s->delay[i] };
		c->calls += schedule_batches(w->fd, s->e, s->n, w->batch);
		for (i = 0; i < s->n; i++)
			s->c[i] = (struct htw_cancel_entry){ .handle = s->e[i].handle };
		c->calls += cancel_batches(w->fd, s->c, s->n, w->batch);
		c->ops += s->n;
	}
	window_end(&win);
	c->win = win;
}

static void run_timerfd_create(struct contender *c)
{
	struct sched_ctx *s = c->ctx;
	struct itimerspec its = { 0 };
	unsigned long p, i;
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		for (i = 0; i < s->n; i++) {
			int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

			its.it_value = ts_of(s->delay[i]);
			if (fd < 0 || timerfd_settime(fd, 0, &its, NULL))
				die("timerfd");
			close(fd);
		}
		c->ops += s->n;
		c->calls += 3 * s->n;
	}
	window_end(&win);
	c->win = win;
}

static void run_timerfd_settime(struct contender *c)
{
	struct sched_ctx *s = c->ctx;
	struct itimerspec its = { 0 }, off = { 0 };
	unsigned long p, i;
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		for (i = 0; i < s->n; i++) {
			its.it_value = ts_of(s->delay[i]);
			if (timerfd_settime(s->fds[i], 0, &its, NULL))
				die("timerfd_settime");
		}
		for (i = 0; i < s->n; i++)
			if (timerfd_settime(s->fds[i], 0, &off, NULL))
				die("timerfd_settime");
		c->ops += s->n;
		c->calls += 2 * s->n;
	}
	window_end(&win);
	c->win = win;
}

static void run_posix(struct contender *c)
{
	struct sched_ctx *s = c->ctx;
	struct itimerspec its = { 0 };
	unsigned long p, i;
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		for (i = 0; i < s->n; i++) {
			struct sigevent sev = { .sigev_notify = SIGEV_NONE };
			timer_t t;

			its.it_value = ts_of(s->delay[i]);
			if (timer_create(CLOCK_MONOTONIC, &sev, &t) ||
			    timer_settime(t, 0, &its, NULL) || timer_delete(t))
				die("posix timer");
		}
		c->ops += s->n;
		c->calls += 3 * s->n;
	}
	window_end(&win);
	c->win = win;
}

/*
 * The arming's exchange and submission, the cancel's exchange; the
 * kernel's share, taking the submissions in, is the contender's too: the
 * ring-full enters within the window and one more before it closes, so
 * none is left for another contender's window.
 */
static void run_table(struct contender *c)
{
	struct table_ctx *tc = c->ctx;
	struct sched_ctx *s = tc->s;
	unsigned long p, i, enters = table_enters;
	/* Once, outside the window: the peers read no clock in theirs. */
	uint64_t now = mono();
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		for (i = 0; i < s->n; i++)
			table_arm(&tc->t, i, now + s->delay[i]);
		for (i = 0; i < s->n; i++)
			if (!table_cancel(&tc->t, i))
				table_fail("a slot armed far away fired");
		c->ops += s->n;
	}
	table_enter(&tc->t);
	window_end(&win);
	c->win = win;
	c->calls = table_enters - enters;
}

static void run_uv(struct contender *c)
{
	struct sched_ctx *s = c->ctx;
	unsigned long p, i;
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		for (i = 0; i < s->n; i++)
			uv_timer_start(&s->uvt[i], uv_never, s->delay[i] / NSEC_PER_MSEC, 0);
		for (i = 0; i < s->n; i++)
			uv_timer_stop(&s->uvt[i]);
		c->ops += s->n;
	}
	window_end(&win);
	c->win = win;
}

static void run_ev(struct contender *c)
{
	struct sched_ctx *s = c->ctx;
	unsigned long p, i;
	struct window win;

	window_begin(&win);
	for (p = 0; p < c->passes; p++) {
		for (i = 0; i < s->n; i++) {
			ev_timer_set(&s->evt[i], s->delay[i] / 1e9, 0);
			ev_timer_start(s->ev, &s->evt[i]);
		}
		for (i = 0; i < s->n; i++)
			ev_timer_stop(s->ev, &s->evt[i]);
		c->ops += s->n;
	}
	window_end(&win);
	c->win = win;
}

/* The delays and the libuv and libev timers, for either section. */
static void sched_setup(struct sched_ctx *s, unsigned long n)
{
	unsigned long i;

	s->n = n;
	s->delay = xcalloc(n, sizeof(*s->delay));
	s->uvt = xcalloc(n, sizeof(*s->uvt));
	s->evt = xcalloc(n, sizeof(*s->evt));
	for (i = 0; i < n; i++)
		s->delay[i] = far_delay();
	if (uv_loop_init(&s->uv))
		die("uv_loop_init");
	s->ev = ev_loop_new(EVBACKEND_EPOLL);
	if (!s->ev)
		die("ev_loop_new");
	for (i = 0; i < n; i++) {
		uv_timer_init(&s->uv, &s->uvt[i]);
		ev_timer_init(&s->evt[i], ev_never, 1, 0);
	}
}

/* The next size's section comes after: the loops go, their timers stopped. */
static void sched_free(struct sched_ctx *s)
{
	unsigned long i;

	for (i = 0; i < s->n; i++)
		uv_close((uv_handle_t *)&s->uvt[i], NULL);
	uv_run(&s->uv, UV_RUN_DEFAULT);
	if (uv_loop_close(&s->uv))
		die("uv_loop_close");
	ev_loop_destroy(s->ev);
	free(s->delay);
	free(s->uvt);
	free(s->evt);
}

int bench_sched(unsigned long n)
{
	static const char section[] =
		"user-space schedule+cancel: N timers armed, then all cancelled";
	static const unsigned long batches[] = { 1, 64, 1024 };
	static char kases[ARRAY_SIZE(batches)][64];
	struct wheel_ctx w[ARRAY_SIZE(batches)];
	struct contender c[ARRAY_SIZE(batches) + 5];
	struct sched_ctx s = { .n = n };
	unsigned long i, nc = 0;

	meta_run("sched");
	put_meta("delays",
		 "log-uniform 8.6 s..73 min, the same for every contender: nothing fires");
	raise_limits(n);
	sched_setup(&s, n);
	s.e = xcalloc(n, sizeof(*s.e));
	s.c = xcalloc(n, sizeof(*s.c));
	s.fds = xcalloc(n, sizeof(*s.fds));
	for (i = 0; i < n; i++) {
		s.fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (s.fds[i] < 0)
			die("timerfd_create");
	}

	for (i = 0; i < ARRAY_SIZE(batches); i++) {
		w[i] = (struct wheel_ctx){ .s = &s, .batch = batches[i], .fd = open_wheel(0) };
		snprintf(kases[i], sizeof(kases[i]),
			 "schedule+cancel, htwheel %lu per ioctl", batches[i]);
		c[nc++] = (struct contender){ .who = "htwheel", .kase = kases[i],
					      .run = run_wheel, .ctx = &w[i] };
	}
	c[nc++] = (struct contender){ .who = "timerfd_create+timerfd_settime+close",
				      .run = run_timerfd_create, .ctx = &s };
	c[nc++] = (struct contender){ .who = "timerfd_settime arm+disarm (existing fd)",
				      .run = run_timerfd_settime, .ctx = &s };
	c[nc++] = (struct contender){
		.who = "timer_create+timer_settime+timer_delete (SIGEV_NONE)",
		.run = run_posix, .ctx = &s };
	c[nc++] = (struct contender){ .who = "libuv uv_timer_start+uv_timer_stop",
				      .run = run_uv, .ctx = &s };
	c[nc++] = (struct contender){ .who = "libev ev_timer_start+ev_timer_stop",
				      .run = run_ev, .ctx = &s };
	run_section(section, n, c, nc, NSEC_PER_SEC, UB_REPS);

	for (i = 0; i < ARRAY_SIZE(batches); i++)
		close(w[i].fd);
	for (i = 0; i < n; i++)
		close(s.fds[i]);
	return 0;
}

/*
 * N slots of one table armed, then all cancelled, beside the same N
 * libuv and libev timers at the same delays as their start+stop; at the
 * end of the arming, N are pending in each.
 */
void bench_sched_table(unsigned long n)
{
	static const char section[] =
		"user-space table arm+cancel: N slots armed far away, then all cancelled";
	struct sched_ctx s = { .n = n };
	struct table_ctx tc = { .s = &s };
	struct contender c[3];
	int err = table_open(&tc.t, n);

	if (err) {
		put_meta("not run", "%s, n %lu: %s", section, n, strerror(-err));
		return;
	}
	put_meta("table arm+cancel",
		 "deadlines now + log-uniform 8.6 s..73 min, the libuv and libev timers' delays: nothing fires; system calls: the HTW_IOC_TABLE2_ENTER calls, the one that takes the last submissions in before the window closes included");
	sched_setup(&s, n);
	c[0] = (struct contender){ .who = "htwheel", .kase = "table arm+cancel",
				   .run = run_table, .ctx = &tc };
	c[1] = (struct contender){ .who = "libuv uv_timer_start+uv_timer_stop",
				   .run = run_uv, .ctx = &s };
	c[2] = (struct contender){ .who = "libev ev_timer_start+ev_timer_stop",
				   .run = run_ev, .ctx = &s };
	run_section(section, n, c, ARRAY_SIZE(c), NSEC_PER_SEC, UB_REPS);
	table_close(&tc.t);
	sched_free(&s);
}
