// SPDX-License-Identifier: GPL-2.0
/*
 * Expiry to an awake loop: N timers due over two seconds, their expiries
 * consumed by a loop that runs anyway, never sleeping for them: each
 * pass reads the clock, runs one pass of its event loop and does a fixed
 * chunk of its own work.  Every contender's event loop pass is alike: a
 * clock read, one epoll_wait() that does not wait, a clock read (inside
 * ev_run() and uv_run() for libev and libuv, around the epoll_wait() of
 * the others, loop_wait()), and the expiries consumed only when it said
 * the descriptor was readable (the table's completion ring in memory,
 * read() of a handle file; libev's and libuv's callbacks counting).  What the expiries cost is the work the
 * loop lost against a loop with no timers (the baseline, measured in the
 * same repetitions), plus what the other CPUs were busy beyond the
 * baseline's: kernel and consumer, the pass's polling included, each
 * counted once, whoever was charged for it.
 */
#include "ubench.h"
#include "peers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <htwheel.h>

/* The deadlines' spread: /proc/stat's tick is under 1% of the window. */
#define AWAKE_SPREAD_NS	(2 * NSEC_PER_SEC)
#define AWAKE_TAIL_NS	(300 * NSEC_PER_MSEC)	/* after the last deadline */
#define AWAKE_CHUNK	4096			/* the loop's own work per pass */
#define AWAKE_LIMIT_NS	(30 * NSEC_PER_SEC)

enum awake_kind { A_BASE, A_RING, A_READ, A_EV, A_UV };

struct awake {
	enum awake_kind kind;
	unsigned long n, got;
	unsigned long long work;	/* chunks done */
	struct awake *base;		/* the baseline's, same repetition */
	struct htw *h;
	struct htw_table2 *t;
	int fd, ep;
	struct ev_loop *ev;
	ev_timer *evt;
	uv_loop_t uv;
	uv_timer_t *uvt;
	struct window win;
};

static volatile unsigned long awake_sink;

static void chunk(void)
{
	unsigned int k;

	for (k = 0; k < AWAKE_CHUNK; k++)
		awake_sink++;
}

static void awake_ev_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct awake *a = w->data;

	(void)loop;
	(void)revents;
	a->got++;
}

static void awake_uv_cb(uv_timer_t *t)
{
	struct awake *a = t->data;

	a->got++;
}

/* Untimed: N timers at base + a spread over two seconds, by timer i's index. */
static void awake_arm(struct awake *a, uint64_t base)
{
	struct htw_timer_entry *e;
	uint64_t t0 = mono();
	unsigned long i;
	int err;

	/* The libraries' deadlines are from their loops' now: taken once. */
	if (a->kind == A_EV)
		ev_now_update(a->ev);
	if (a->kind == A_UV)
		uv_update_time(&a->uv);
	for (i = 0; i < a->n; i++) {
		uint64_t d = base + AWAKE_SPREAD_NS / a->n * i + 1;

		switch (a->kind) {
		case A_RING:
			if (!i) {
				err = htw_open(&a->h, NULL);
				if (!err)
					err = htw_table2_create(a->h, a->n, 0, &a->t);
				if (err) {
					errno = -err;
					die("htw_table2_create");
				}
			}
			if (htw_table2_arm(a->t, i, d, NULL) < 0)
				die("htw_table2_arm");
			break;
		case A_EV:
			ev_timer_init(&a->evt[i], awake_ev_cb, (d - t0) / 1e9, 0);
			a->evt[i].data = a;
			ev_timer_start(a->ev, &a->evt[i]);
			break;
		case A_UV:
			uv_timer_init(&a->uv, &a->uvt[i]);
			a->uvt[i].data = a;
			uv_timer_start(&a->uvt[i], awake_uv_cb,
				       (d - t0) / NSEC_PER_MSEC + 1, 0);
			break;
		default:
			break;
		}
	}
	if (a->kind == A_RING && htw_table2_enter(a->t) < 0)
		die("htw_table2_enter");
	if (a->kind == A_RING)
		a->ep = epoll_on(a->t->fd);
	if (a->kind == A_BASE)
		a->ep = epoll_on(-1);
	if (a->kind != A_READ)
		return;
	a->fd = open_wheel(O_NONBLOCK);
	e = xcalloc(a->n, sizeof(*e));
	for (i = 0; i < a->n; i++)
		e[i] = (struct htw_timer_entry){ .cookie = i, .flags = HTW_TIMER_ABSTIME,
						 .expires = base + AWAKE_SPREAD_NS / a->n * i + 1 };
	schedule_batches(a->fd, e, a->n, 1024);
	free(e);
	a->ep = epoll_on(a->fd);
}

/* One pass of the contender's event loop (see the top of the file). */
static void awake_consume(struct awake *a)
{
	struct htw_expiry rec[256];
	struct htw_table2_cqe *first;
	struct epoll_event ev;
	ssize_t r;
	int k;

	if (a->kind != A_EV && a->kind != A_UV && !loop_wait(a->ep, &ev))
		return;
	switch (a->kind) {
	case A_RING:
		while ((k = htw_table2_peek(a->t, &first)) > 0) {
			a->got += k;
			htw_table2_advance(a->t, k);
		}
		break;
	case A_READ:
		while ((r = read(a->fd, rec, sizeof(rec))) > 0)
			a->got += r / sizeof(rec[0]);
		if (r < 0 && errno != EAGAIN)
			die("read htwheel");
		break;
	case A_EV:
		ev_run(a->ev, EVRUN_NOWAIT);
		break;
	case A_UV:
		uv_run(&a->uv, UV_RUN_NOWAIT);
		break;
	case A_BASE:
		break;
	}
}

static void awake_release(struct awake *a)
{
	unsigned long i;

	switch (a->kind) {
	case A_RING:
		htw_table2_close(a->t);
		htw_close(a->h);
		close(a->ep);
		break;
	case A_READ:
		close(a->fd);
		close(a->ep);
		break;
	case A_EV:
		ev_loop_destroy(a->ev);
		free(a->evt);
		break;
	case A_UV:
		for (i = 0; i < a->n; i++)
			uv_close((uv_handle_t *)&a->uvt[i], NULL);
		uv_run(&a->uv, UV_RUN_DEFAULT);
		if (uv_loop_close(&a->uv))
			die("uv_loop_close");
		free(a->uvt);
		break;
	case A_BASE:
		close(a->ep);
		break;
	}
}

/* Says so when /proc/stat's tick is 1% of the window's machine time or more. */
static void awake_check_window(const char *who, unsigned long n, const struct window *w)
{
	double quantum = (double)NSEC_PER_SEC / sysconf(_SC_CLK_TCK);

	/* Each CPU's counters move by ticks: the error is a tick a CPU. */
	if (quantum >= 0.01 * w->wall)
		put_meta("awake", "%s, n %lu: a window of %.0f ms, where /proc/stat's tick is %.1f%%",
			 who, n, w->wall / 1e6, 100.0 * quantum / w->wall);
}

static void run_awake(struct contender *c)
{
	struct awake *a = c->ctx;
	/* Room for the arming before the first deadline: a few us a timer. */
	uint64_t base = mono() + 300 * NSEC_PER_MSEC + a->n * 3000ULL, end, now;

	a->got = 0;
	a->work = 0;
	if (a->kind == A_EV) {
		a->ev = ev_loop_new(EVBACKEND_EPOLL);
		if (!a->ev)
			die("ev_loop_new");
		a->evt = xcalloc(a->n, sizeof(*a->evt));
	} else if (a->kind == A_UV) {
		if (uv_loop_init(&a->uv))
			die("uv_loop_init");
		a->uvt = xcalloc(a->n, sizeof(*a->uvt));
	}
	awake_arm(a, base);
	if (mono() > base)
		put_meta("awake", "%s, n %lu: the arming overran the first deadline", c->who, a->n);
	end = base + AWAKE_SPREAD_NS + AWAKE_TAIL_NS;
	window_begin(&a->win);
	for (now = mono(); now < end || (a->kind != A_BASE && a->got < a->n); now = mono()) {
		if (now > end + AWAKE_LIMIT_NS)
			die("awake: expiries missing");
		awake_consume(a);
		chunk();
		a->work++;
	}
	window_end(&a->win);
	awake_release(a);
	c->win = a->win;
	c->ops = a->n;
	awake_check_window(c->who, a->n, &a->win);
}

/*
 * The work lost on the loop's CPU, (the baseline's ns per chunk) x (the
 * chunks this window would have held at its rate, less those it did),
 * and the other CPUs' busy time beyond the baseline's, per expiry.
 */
static void print_awake(const char *section, const char *kase, unsigned long n,
			const struct contender *c)
{
	const struct awake *a = c->ctx, *b = a->base;
	double per_chunk, lost, other, other0;

	(void)kase;
	if (a->kind == A_BASE || !b->work)
		return;
	per_chunk = (double)b->win.wall / b->work;
	lost = a->win.wall - a->work * per_chunk;
	other = (double)a->win.machine - a->win.wall;
	other0 = ((double)b->win.machine - b->win.wall) * a->win.wall / b->win.wall;
	put_sample(section, "expiry to an awake loop", n, c->who, "ns",
		   lost / n);
	put_sample(section, "expiry to an awake loop: machine CPU", n, c->who, "ns",
		   (lost + other - other0) / n);
}

int bench_awake(const char *sizes)
{
	static const char section[] =
		"expiry to an awake loop: N timers due over 2 s, consumed by a loop that runs anyway";
	char *list = strdup(sizes), *tok, *save = NULL;

	if (!list)
		die("strdup");
	meta_run("awake");
	put_meta("awake loop",
		 "N deadlines spread over %llu s; each pass: a clock read, one pass of the contender's event loop alike for every contender (a clock read, one epoll_wait that does not wait, a clock read: inside ev_run/uv_run for libev and libuv, around the epoll_wait on the table's, the handle file's or, for the baseline, an empty set for the others; the expiries consumed only when it said readable: the table's ring in memory by htw_table2_peek/htw_table2_advance, read() of the handle file), then %d iterations of the loop's own work; a baseline loop with no timers runs in the same repetitions; per expiry: the work lost against the baseline's rate (the loop's CPU: consumer, polling and kernel work on it), and ': machine CPU' that plus the other CPUs' busy time beyond the baseline's",
		 (unsigned long long)(AWAKE_SPREAD_NS / NSEC_PER_SEC), AWAKE_CHUNK);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long n = strtoul(tok, NULL, 0);
		static const char *const who[] = {
			[A_BASE] = "baseline loop (no timers)",
			[A_RING] = "htwheel",
			[A_READ] = "htwheel read() of struct htw_expiry, when epoll says readable",
			[A_EV] = "libev callbacks (ev_run, not waiting)",
			[A_UV] = "libuv callbacks (uv_run, not waiting)",
		};
		struct awake a[5];
		struct contender c[5];
		unsigned int i;

		raise_limits(n);
		for (i = 0; i < 5; i++) {
			a[i] = (struct awake){ .kind = i, .n = n, .base = &a[0], .fd = -1,
					       .ep = -1 };
			c[i] = (struct contender){ .who = who[i], .run = run_awake,
						   .ctx = &a[i], .print = print_awake,
						   .own_rows = 1 };
		}
		run_section(section, n, c, 5, 0, UB_REPS);
	}
	free(list);
	return 0;
}
