// SPDX-License-Identifier: GPL-2.0
/*
 * Re-arm of a pending timer, the commonest server operation: N timers
 * pending, a random subset of them moved later, then back earlier.
 * htwheel moves them in place with HTW_IOC_REARM, batched as an event
 * loop flushes its changes; its older way, cancel + schedule (a new
 * handle each time), one timer per ioctl pair or batched, is kept beside
 * it for reference.  A section of its own moves the slots of a shared
 * timer table later, a store each, beside HTW_IOC_REARM, libuv and libev.
 */
#include "peers.h"
#include "table.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>

/* Re-arms per window: enough for the CPU clock, bounded for UML's syscalls. */
#define REARM_MAX	10000

enum rearm_kind { R_WHEEL, R_WHEEL_CS, R_TIMERFD, R_POSIX, R_UV, R_EV, R_TABLE };

struct rearm_impl {
	enum rearm_kind kind;
	unsigned long batch;		/* timers per HTW_IOC_REARM or ioctl pair */
	int fd;
	uint64_t *handle;
	int *fds;
	timer_t *pt;
	uv_loop_t uv;
	uv_timer_t *uvt;
	struct ev_loop *ev;
	ev_timer *evt;
	struct ub_table tb;
	uint64_t base;			/* the table's deadlines: base + delay */
};

struct rearm_ctx {
	unsigned long n, k;
	unsigned long *idx;
	uint64_t *a, *step;		/* delay i is a[i] + pass * step[i] */
	uint64_t *to;
	struct htw_timer_entry *e;
	struct htw_cancel_entry *c;
	struct htw_rearm_entry *re;
};

struct rearm_case {
	struct rearm_ctx *r;
	struct rearm_impl *m;
	int later;
};

/*
 * Log-uniform 18..73 min: the bench lasts minutes, and a timer that fired
 * would no longer be pending (htwheel's cancel would say so).  A 1 ms x
 * 512 wheel holds them all in level 2.
 */
static uint64_t rearm_delay(void)
{
	unsigned int e = 40 + rnd() % 2;

	return (1ULL << e) + (rnd() & ((1ULL << e) - 1));
}

/* In place: the handles stay, and every timer must have been pending. */
static unsigned long wheel_rearm(struct rearm_ctx *r, struct rearm_impl *m,
				 const uint64_t *to)
{
	unsigned long j, off, cnt, calls = 0;

	for (off = 0; off < r->k; off += m->batch) {
		struct htw_rearm rs = { .entries = (uintptr_t)r->re };

		cnt = r->k - off < m->batch ? r->k - off : m->batch;
		for (j = 0; j < cnt; j++) {
			unsigned long i = r->idx[off + j];

			r->re[j] = (struct htw_rearm_entry){ .handle = m->handle[i],
							     .expires = to[i] };
		}
		rs.count = cnt;
		if (ioctl(m->fd, HTW_IOC_REARM, &rs) < 0 || rs.rearmed != cnt)
			die("HTW_IOC_REARM");
		calls++;
	}
	return calls;
}

static unsigned long wheel_cancel_schedule(struct rearm_ctx *r, struct rearm_impl *m,
					   const uint64_t *to)
{
	unsigned long j, off, cnt, calls = 0;

	for (off = 0; off < r->k; off += m->batch) {
		struct htw_cancel cs = { .entries = (uintptr_t)r->c };
		struct htw_schedule ss = { .entries = (uintptr_t)r->e };

		cnt = r->k - off < m->batch ? r->k - off : m->batch;
		for (j = 0; j < cnt; j++) {
			unsigned long i = r->idx[off + j];

			r->c[j] = (struct htw_cancel_entry){ .handle = m->handle[i] };
			r->e[j] = (struct htw_timer_entry){ .cookie = i, .expires = to[i] };
		}
		cs.count = cnt;
		ss.count = cnt;
		if (ioctl(m->fd, HTW_IOC_CANCEL, &cs) < 0 || cs.cancelled != cnt)
			die("HTW_IOC_CANCEL");
		if (ioctl(m->fd, HTW_IOC_SCHEDULE, &ss) < 0 || ss.done != cnt)
			die("HTW_IOC_SCHEDULE");
		for (j = 0; j < cnt; j++)
			m->handle[r->idx[off + j]] = r->e[j].handle;
		calls += 2;
	}
	return calls;
}

/* Later: the exchange alone; earlier: a submission too, and maybe an enter. */
static unsigned long table_move(struct rearm_impl *m, struct rearm_ctx *r)
{
	unsigned long j, i, enters = table_enters;

	for (j = 0; j < r->k; j++) {
		i = r->idx[j];
		table_arm(&m->tb, i, m->base + r->to[i]);
	}
	return table_enters - enters;
}

/*
 * Moves the k chosen timers to the delays of pass @pass; returns the
 * system calls.  The delays are computed first: building them is the
 * caller's business, whichever API it uses.
 */
static unsigned long move(struct rearm_ctx *r, struct rearm_impl *m,
			  unsigned long pass)
{
	struct itimerspec its = { 0 };
	const uint64_t *to = r->to;
	unsigned long j, i;

	for (j = 0; j < r->k; j++) {
		i = r->idx[j];
		r->to[i] = r->a[i] + pass * r->step[i];
	}

	switch (m->kind) {
	case R_WHEEL:
		return wheel_rearm(r, m, to);
	case R_WHEEL_CS:
		return wheel_cancel_schedule(r, m, to);
	case R_TIMERFD:
		for (j = 0; j < r->k; j++) {
			i = r->idx[j];
			its.it_value = ts_of(to[i]);
			if (timerfd_settime(m->fds[i], 0, &its, NULL))
				die("timerfd_settime");
		}
		return r->k;
	case R_POSIX:
		for (j = 0; j < r->k; j++) {
			i = r->idx[j];
			its.it_value = ts_of(to[i]);
			if (timer_settime(m->pt[i], 0, &its, NULL))
				die("timer_settime");
		}
		return r->k;
	case R_UV:
		for (j = 0; j < r->k; j++) {
			i = r->idx[j];
			uv_timer_set_repeat(&m->uvt[i], to[i] / NSEC_PER_MSEC);
			uv_timer_again(&m->uvt[i]);
		}
		return 0;
	case R_EV:
		for (j = 0; j < r->k; j++) {
			i = r->idx[j];
			m->evt[i].repeat = to[i] / 1e9;
			ev_timer_again(m->ev, &m->evt[i]);
		}
		return 0;
	case R_TABLE:
		return table_move(m, r);
	}
	return 0;
}

static void run_rearm(struct contender *c)
{
	struct rearm_case *rc = c->ctx;
	struct rearm_ctx *r = rc->r;
	unsigned long p;
	struct window win;

	/*
	 * Each pass moves every chosen timer by its step (at least 10 s, more
	 * than a pass lasts) later, or earlier, than the pass before.
	 */
	move(r, rc->m, rc->later ? 0 : c->passes);
	/* Moving back to pass 0 made submissions: taken in outside the window. */
	if (rc->m->kind == R_TABLE)
		table_enter(&rc->m->tb);
	window_begin(&win);
	for (p = 1; p <= c->passes; p++) {
		c->calls += move(r, rc->m, rc->later ? p : c->passes - p);
		c->ops += r->k;
	}
	window_end(&win);
	c->win = win;
}

/* Arms all n timers of @m at the delays a. */
static void arm_all(struct rearm_ctx *r, struct rearm_impl *m, unsigned long n)
{
	struct itimerspec its = { 0 };
	unsigned long i;

	switch (m->kind) {
	case R_WHEEL:
	case R_WHEEL_CS:
		m->fd = open_wheel(0);
		m->handle = xcalloc(n, sizeof(*m->handle));
		for (i = 0; i < n; i++)
			r->e[i] = (struct htw_timer_entry){ .cookie = i, .expires = r->a[i] };
		schedule_batches(m->fd, r->e, n, 1024);
		for (i = 0; i < n; i++)
			m->handle[i] = r->e[i].handle;
		break;
	case R_TIMERFD:
		m->fds = xcalloc(n, sizeof(*m->fds));
		for (i = 0; i < n; i++) {
			m->fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
			its.it_value = ts_of(r->a[i]);
			if (m->fds[i] < 0 || timerfd_settime(m->fds[i], 0, &its, NULL))
				die("timerfd");
		}
		break;
	case R_POSIX:
		m->pt = xcalloc(n, sizeof(*m->pt));
		for (i = 0; i < n; i++) {
			struct sigevent sev = { .sigev_notify = SIGEV_NONE };

			its.it_value = ts_of(r->a[i]);
			if (timer_create(CLOCK_MONOTONIC, &sev, &m->pt[i]) ||
			    timer_settime(m->pt[i], 0, &its, NULL))
				die("posix timer");
		}
		break;
	case R_UV:
		if (uv_loop_init(&m->uv))
			die("uv_loop_init");
		m->uvt = xcalloc(n, sizeof(*m->uvt));
		for (i = 0; i < n; i++) {
			uv_timer_init(&m->uv, &m->uvt[i]);
			uv_timer_start(&m->uvt[i], uv_never, r->a[i] / NSEC_PER_MSEC, 0);
		}
		break;
	case R_EV:
		m->ev = ev_loop_new(EVBACKEND_EPOLL);
		if (!m->ev)
			die("ev_loop_new");
		m->evt = xcalloc(n, sizeof(*m->evt));
		for (i = 0; i < n; i++) {
			ev_timer_init(&m->evt[i], ev_never, r->a[i] / 1e9, 0);
			ev_timer_start(m->ev, &m->evt[i]);
		}
		break;
	case R_TABLE:
		/* m->tb is open: the caller saw whether the table could be made. */
		m->base = mono();
		for (i = 0; i < n; i++)
			table_arm(&m->tb, i, m->base + r->a[i]);
		table_enter(&m->tb);
		break;
	}
}

static void release(struct rearm_impl *m, unsigned long n)
{
	unsigned long i;

	switch (m->kind) {
	case R_WHEEL:
	case R_WHEEL_CS:
		close(m->fd);
		free(m->handle);
		break;
	case R_TIMERFD:
		for (i = 0; i < n; i++)
			close(m->fds[i]);
		free(m->fds);
		break;
	case R_POSIX:
		for (i = 0; i < n; i++)
			timer_delete(m->pt[i]);
		free(m->pt);
		break;
	case R_UV:
		for (i = 0; i < n; i++)
			uv_close((uv_handle_t *)&m->uvt[i], NULL);
		uv_run(&m->uv, UV_RUN_DEFAULT);
		if (uv_loop_close(&m->uv))
			die("uv_loop_close");
		free(m->uvt);
		break;
	case R_EV:
		for (i = 0; i < n; i++)
			ev_timer_stop(m->ev, &m->evt[i]);
		ev_loop_destroy(m->ev);
		free(m->evt);
		break;
	case R_TABLE:
		table_close(&m->tb);
		break;
	}
}

/*
 * Whether the loaded htwheel.ko knows HTW_IOC_REARM: an empty batch is
 * refused with EINVAL by one that does, ENOTTY by one that does not.
 */
static int rearm_supported(void)
{
	struct htw_rearm rs = { 0 };
	int fd = open_wheel(0), ok;

	ok = ioctl(fd, HTW_IOC_REARM, &rs) < 0 && errno == EINVAL;
	close(fd);
	return ok;
}

/* The delays of the n timers and the random k of them moved, in random order. */
static void rearm_setup(struct rearm_ctx *r, unsigned long n)
{
	unsigned long i, *perm;

	*r = (struct rearm_ctx){ .n = n, .k = n < REARM_MAX ? n : REARM_MAX };
	r->a = xcalloc(n, sizeof(*r->a));
	r->step = xcalloc(n, sizeof(*r->step));
	r->to = xcalloc(n, sizeof(*r->to));
	r->e = xcalloc(n, sizeof(*r->e));
	r->c = xcalloc(n, sizeof(*r->c));
	r->re = xcalloc(r->k, sizeof(*r->re));
	perm = xcalloc(n, sizeof(*perm));
	for (i = 0; i < n; i++) {
		r->a[i] = rearm_delay();
		r->step[i] = 10 * NSEC_PER_SEC + rnd() % (10 * NSEC_PER_SEC);
		perm[i] = i;
	}
	/* A random k of the n, in random order: the cold case. */
	for (i = 0; i < r->k; i++) {
		unsigned long j = i + rnd() % (n - i), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	r->idx = perm;
	put_meta("re-arm", "%lu of the %lu pending timers per pass, random order", r->k, n);
	put_meta("re-arm delays",
		 "armed log-uniform 18..73 min; each pass moves each chosen timer 10..20 s later (or earlier) than the pass before");
}

static void rearm_free(struct rearm_ctx *r)
{
	free(r->a);
	free(r->step);
	free(r->to);
	free(r->e);
	free(r->c);
	free(r->re);
	free(r->idx);
}

int bench_rearm(unsigned long n)
{
	static const char section[] =
		"user-space re-arm of a pending timer: N pending, some moved";
	static const struct {
		enum rearm_kind kind;
		unsigned long batch;
		const char *who;
	} impls[] = {
		{ R_WHEEL, 1024, "htwheel" },
		{ R_WHEEL_CS, 1, "htwheel" },
		{ R_WHEEL_CS, 64, "htwheel" },
		{ R_TIMERFD, 0, "timerfd_settime (armed)" },
		{ R_POSIX, 0, "timer_settime (armed POSIX timer)" },
		{ R_UV, 0, "libuv uv_timer_again" },
		{ R_EV, 0, "libev ev_timer_again" },
	};
	static char kases[2][3][96];
	struct rearm_impl m[ARRAY_SIZE(impls)];
	struct rearm_case rc[2 * ARRAY_SIZE(impls)];
	struct contender c[2 * ARRAY_SIZE(impls)];
	struct rearm_ctx r;
	unsigned long i, nc = 0, nm = 0;
	int later, in_place = rearm_supported();

	meta_run("rearm");
	raise_limits(n);
	rearm_setup(&r, n);

	for (later = 1; later >= 0; later--) {
		const char *dir = later ? "later" : "earlier";

		snprintf(kases[later][0], sizeof(kases[later][0]),
			 "re-arm %s, htwheel HTW_IOC_REARM batched 1024 per ioctl", dir);
		snprintf(kases[later][1], sizeof(kases[later][1]),
			 "re-arm %s, htwheel cancel+schedule one per ioctl pair", dir);
		snprintf(kases[later][2], sizeof(kases[later][2]),
			 "re-arm %s, htwheel cancel+schedule batched 64 per ioctl pair", dir);
	}
	if (!in_place)
		put_meta("re-arm in place", "HTW_IOC_REARM unknown to this htwheel.ko: not run");
	for (i = 0; i < ARRAY_SIZE(impls); i++) {
		if (impls[i].kind == R_WHEEL && !in_place)
			continue;
		m[nm] = (struct rearm_impl){ .kind = impls[i].kind, .batch = impls[i].batch };
		arm_all(&r, &m[nm], n);
		for (later = 1; later >= 0; later--) {
			const char *kase = NULL;

			if (impls[i].kind == R_WHEEL)
				kase = kases[later][0];
			else if (impls[i].kind == R_WHEEL_CS)
				kase = kases[later][impls[i].batch > 1 ? 2 : 1];
			rc[nc] = (struct rearm_case){ .r = &r, .m = &m[nm], .later = later };
			c[nc] = (struct contender){ .who = impls[i].who, .kase = kase,
						    .run = run_rearm, .ctx = &rc[nc],
						    .group = later ? "later" : "earlier" };
			nc++;
		}
		nm++;
	}
	run_section(section, n, c, nc, NSEC_PER_SEC, UB_REPS);
	for (i = 0; i < nm; i++)
		release(&m[i], n);
	return 0;
}

/*
 * The same n pending, the same k moved later each pass: a table's slots,
 * beside the in-place HTW_IOC_REARM and libuv's and libev's re-start.
 */
void bench_rearm_table(unsigned long n)
{
	static const char section[] =
		"user-space table re-arm later: N slots pending, some moved later";
	static const struct {
		enum rearm_kind kind;
		unsigned long batch;
		const char *who;
	} impls[] = {
		{ R_TABLE, 0, "htwheel" },
		{ R_WHEEL, 1024, "htwheel HTW_IOC_REARM batched 1024 per ioctl" },
		{ R_UV, 0, "libuv uv_timer_again" },
		{ R_EV, 0, "libev ev_timer_again" },
	};
	struct rearm_impl m[ARRAY_SIZE(impls)];
	struct rearm_case rc[ARRAY_SIZE(impls)];
	struct contender c[ARRAY_SIZE(impls)];
	struct rearm_ctx r;
	unsigned long i;
	int err;

	m[0] = (struct rearm_impl){ .kind = R_TABLE };
	err = table_open(&m[0].tb, n);
	if (err) {
		put_meta("not run", "%s, n %lu: %s", section, n, strerror(-err));
		return;
	}
	rearm_setup(&r, n);
	put_meta("table re-arm later",
		 "each pass moves each chosen slot's deadline later with one exchange: no submission, no system call; the kernel's share, placing a slot again when the tick of the deadline it last read comes, falls after the window (18..73 min away): once per slot and old deadline, however many moves came between");
	for (i = 0; i < ARRAY_SIZE(impls); i++) {
		if (i)
			m[i] = (struct rearm_impl){ .kind = impls[i].kind,
						    .batch = impls[i].batch };
		arm_all(&r, &m[i], n);
		rc[i] = (struct rearm_case){ .r = &r, .m = &m[i], .later = 1 };
		c[i] = (struct contender){ .who = impls[i].who,
					   .kase = i ? NULL : "table re-arm later",
					   .run = run_rearm, .ctx = &rc[i], .group = "later" };
	}
	run_section(section, n, c, ARRAY_SIZE(c), NSEC_PER_SEC, UB_REPS);
	for (i = 0; i < ARRAY_SIZE(impls); i++)
		release(&m[i], n);
	rearm_free(&r);
}
