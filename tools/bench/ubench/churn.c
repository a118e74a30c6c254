// SPDX-License-Identifier: GPL-2.0
/*
 * The steady churn and idle re-arm rows (churn.h): htwheel's contenders,
 * the shared table driven through libhtwheel's public calls and handle
 * timers through batched ioctls, beside libev, libuv and timerfd, and
 * the `churn` and `idle-rearm` commands.
 *
 * Every contender's batch ends with one pass of its event loop: one
 * epoll_wait() that does not wait (libev's and libuv's own, which run
 * the callbacks of what expired; htwheel's on an epoll set holding its
 * file, the table's completion ring read in memory, a handle file's
 * records read when the set says so; timerfd's on an empty set, since
 * timerfd_settime() tells whether the timer had fired).
 */
#include "churn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <htwheel.h>

#include "table.h"

/* timerfd takes one file per timer: beyond this, the row leaves it out. */
#define CHURN_TIMERFD_MAX	100000

enum hw_kind { HW_NULL, HW_TABLE_CHURN, HW_TABLE_MOVE, HW_TABLE_LAZY, HW_HANDLES, HW_TIMERFD };

struct hw {
	struct churn_impl im;
	enum hw_kind kind;
	struct htw *h;
	struct htw_table2 *t;
	int fd, ep;
	uint64_t *last;		/* the lazy idiom: the last activity */
	uint64_t now;		/* the batch's, for the completions */
	uint64_t *handle;	/* handle timers: each timer's */
	unsigned char *done;	/* handle timers: its record was read */
	struct htw_cancel_entry *ce;
	struct htw_timer_entry *te;
	int *tfd;
	unsigned long enters;
};

static void __attribute__((noreturn)) churn_fail(const char *what)
{
	fprintf(stderr, "htwheel_ubench: churn: %s\n", what);
	exit(1);
}

static void fail_errno(const char *what, int err)
{
	errno = err < 0 ? -err : err;
	die(what);
}

/* One pass of the loop's wait (loop_wait()): 1 if the file is readable. */
static int loop_pass(struct hw *w, struct churn_count *cnt)
{
	struct epoll_event ev;
	int r;

	r = loop_wait(w->ep, &ev);
	cnt->calls++;
	return r > 0;
}

/*
 * The null contender: the driver alone (its picks, their hash and its
 * clock read a batch), no timer and no loop; every operation counted as
 * finding its timer pending and arming it, for the books.
 */
static void null_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	(void)im;
	(void)ch;
	(void)now;
}

static void null_batch(struct churn_impl *im, const struct churn *ch,
		       const uint32_t *pick, unsigned int k, uint64_t now,
		       struct churn_count *cnt)
{
	(void)im;
	(void)ch;
	(void)pick;
	(void)now;
	cnt->pending += k;
	cnt->armed += k;
}

static void null_empty(struct churn_impl *im, const struct churn *ch)
{
	(void)im;
	(void)ch;
}

static void table_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	struct hw *w = im->ctx;
	unsigned long i;
	int err;

	err = htw_open(&w->h, NULL);
	if (err)
		fail_errno("htw_open", err);
	err = htw_table2_create(w->h, ch->n, 0, &w->t);
	if (err)
		fail_errno("htw_table2_create", err);
	w->last = xcalloc(ch->n, sizeof(*w->last));
	for (i = 0; i < ch->n; i++) {
		uint64_t d = now + churn_first(ch, i);

		w->last[i] = d - ch->period;
		if (htw_table2_arm(w->t, i, d, NULL) < 0)
			churn_fail("htw_table2_arm");
	}
	/* The population taken in before the window. */
	if (htw_table2_enter(w->t) < 0)
		churn_fail("htw_table2_enter");
	w->ep = epoll_on(w->t->fd);
	w->enters = table_enters;
}

static void table_empty(struct churn_impl *im, const struct churn *ch)
{
	struct hw *w = im->ctx;

	(void)ch;
	htw_table2_close(w->t);
	htw_close(w->h);
	close(w->ep);
	free(w->last);
}

static void table_rearm_at(struct hw *w, uint32_t s, uint64_t d)
{
	if (htw_table2_arm(w->t, s, d, NULL) < 0)
		churn_fail("htw_table2_arm");
}

/*
 * A completion: churn's request timed out (nothing to do: its next pick
 * finds it fired); an idle timer came to T idle and is armed again, the
 * lazy idiom's first looking whether it was active since.
 */
static void table_completion(struct hw *w, const struct churn *ch,
			     const struct htw_table2_cqe *e, struct churn_count *cnt)
{
	uint32_t s = e->slot;
	uint64_t d;

	cnt->expired++;
	if (s >= ch->n)
		churn_fail("a record for a slot out of range");
	switch (w->kind) {
	case HW_TABLE_MOVE:
		/* Moved since it fired: armed again already. */
		if (__atomic_load_n(&w->t->slots[s].seq, __ATOMIC_RELAXED) & HTW_TABLE2_ARMED)
			return;
		cnt->timeouts++;
		table_rearm_at(w, s, w->now + ch->period);
		return;
	case HW_TABLE_LAZY:
		d = w->last[s] + ch->period;
		if (d <= w->now) {
			cnt->timeouts++;
			w->last[s] = w->now;
			d = w->now + ch->period;
		}
		table_rearm_at(w, s, d);
		return;
	default:
		return;
	}
}

/*
 * The table's pass: its completion ring read in memory, then the wait.  At
 * most one ring's worth of records a pass, as one turn of an event loop
 * takes what is ready and goes on: the kernel refills the ring while it is
 * read, and when expiries come faster than a re-arm takes, reading until
 * it is empty would never end the pass (nor the window); what is left is
 * read in the next pass, and late timeouts show in the books.
 */
static void table_pass(struct hw *w, const struct churn *ch, struct churn_count *cnt)
{
	uint32_t budget = w->t->cq_mask + 1;
	struct htw_table2_cqe *e;
	int k, j;

	while (budget && (k = htw_table2_peek(w->t, &e)) > 0) {
		if ((uint32_t)k > budget)
			k = budget;
		for (j = 0; j < k; j++)
			table_completion(w, ch, &e[j], cnt);
		htw_table2_advance(w->t, k);
		budget -= k;
	}
	loop_pass(w, cnt);
}

static void table_churn(struct churn_impl *im, const struct churn *ch,
			const uint32_t *pick, unsigned int k, uint64_t now,
			struct churn_count *cnt)
{
	struct hw *w = im->ctx;
	unsigned int j;

	w->now = now;
	for (j = 0; j < k; j++) {
		uint32_t s = pick[j];

		if (htw_table2_cancel(w->t, s))
			cnt->pending++;
		else
			cnt->fired++;
		table_rearm_at(w, s, now + ch->period);
		cnt->armed++;
	}
	table_pass(w, ch, cnt);
}

static void table_move(struct churn_impl *im, const struct churn *ch,
		       const uint32_t *pick, unsigned int k, uint64_t now,
		       struct churn_count *cnt)
{
	struct hw *w = im->ctx;
	unsigned int j;
	int r;

	w->now = now;
	for (j = 0; j < k; j++) {
		r = htw_table2_arm(w->t, pick[j], now + ch->period, NULL);
		if (r < 0)
			churn_fail("htw_table2_arm");
		if (r)
			cnt->pending++;
		else
			cnt->fired++;
		cnt->armed++;
	}
	table_pass(w, ch, cnt);
}

/* The lazy idiom's operation: a store; the slot is always armed, by design. */
static void table_lazy(struct churn_impl *im, const struct churn *ch,
		       const uint32_t *pick, unsigned int k, uint64_t now,
		       struct churn_count *cnt)
{
	struct hw *w = im->ctx;
	unsigned int j;

	w->now = now;
	for (j = 0; j < k; j++)
		w->last[pick[j]] = now;
	cnt->pending += k;
	cnt->armed += k;
	table_pass(w, ch, cnt);
}

/* The submissions of the window's last batch taken in inside it. */
static void table_flush(struct churn_impl *im, const struct churn *ch,
			struct churn_count *cnt)
{
	struct hw *w = im->ctx;

	(void)ch;
	if (htw_table2_enter(w->t) < 0)
		churn_fail("htw_table2_enter");
	cnt->calls += table_enters - w->enters;
}

static void handles_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	struct hw *w = im->ctx;
	struct htw_timer_entry *e = xcalloc(ch->n, sizeof(*e));
	unsigned long i;

	w->fd = open_wheel(O_NONBLOCK);
	w->handle = xcalloc(ch->n, sizeof(*w->handle));
	w->done = xcalloc(ch->n, 1);
	w->ce = xcalloc(ch->batch, sizeof(*w->ce));
	w->te = xcalloc(ch->batch, sizeof(*w->te));
	for (i = 0; i < ch->n; i++)
		e[i] = (struct htw_timer_entry){ .cookie = i, .flags = HTW_TIMER_ABSTIME,
						 .expires = now + churn_first(ch, i) };
	schedule_batches(w->fd, e, ch->n, CHURN_BATCH);
	for (i = 0; i < ch->n; i++)
		w->handle[i] = e[i].handle;
	free(e);
	w->ep = epoll_on(w->fd);
}

static void handles_empty(struct churn_impl *im, const struct churn *ch)
{
	struct hw *w = im->ctx;

	(void)ch;
	close(w->ep);
	close(w->fd);
	free(w->handle);
	free(w->done);
	free(w->ce);
	free(w->te);
}

/* Read the records waiting: each marks its timer fired and read. */
static void handles_read(struct hw *w, const struct churn *ch, struct churn_count *cnt)
{
	struct htw_expiry rec[256];
	ssize_t r;
	unsigned int j;

	for (;;) {
		r = read(w->fd, rec, sizeof(rec));
		cnt->calls++;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0)
			die("read htwheel");
		for (j = 0; j < r / sizeof(rec[0]); j++) {
			if (rec[j].cookie >= ch->n)
				churn_fail("a record for a cookie out of range");
			w->done[rec[j].cookie] = 1;
			cnt->expired++;
		}
	}
}

static void handles_churn(struct churn_impl *im, const struct churn *ch,
			  const uint32_t *pick, unsigned int k, uint64_t now,
			  struct churn_count *cnt)
{
	struct hw *w = im->ctx;
	struct htw_cancel cs = { .entries = (uintptr_t)w->ce, .count = k };
	struct htw_schedule ss = { .entries = (uintptr_t)w->te, .count = k };
	unsigned int j;

	for (j = 0; j < k; j++)
		w->ce[j] = (struct htw_cancel_entry){ .handle = w->handle[pick[j]] };
	if (ioctl(w->fd, HTW_IOC_CANCEL, &cs) < 0)
		die("HTW_IOC_CANCEL");
	for (j = 0; j < k; j++) {
		uint32_t i = pick[j];

		/* Unknown: gone, which only a read record may have made it. */
		if (w->ce[j].result == HTW_CANCELLED)
			cnt->pending++;
		else if (w->ce[j].result == HTW_CANCEL_FIRED ||
			 (w->ce[j].result == HTW_CANCEL_UNKNOWN && w->done[i]))
			cnt->fired++;
		else
			churn_fail("HTW_IOC_CANCEL: a timer neither pending nor fired");
		w->done[i] = 0;
		w->te[j] = (struct htw_timer_entry){ .cookie = i, .flags = HTW_TIMER_ABSTIME,
						     .expires = now + ch->period };
	}
	if (ioctl(w->fd, HTW_IOC_SCHEDULE, &ss) < 0 || ss.done != k)
		die("HTW_IOC_SCHEDULE");
	for (j = 0; j < k; j++)
		w->handle[pick[j]] = w->te[j].handle;
	cnt->armed += k;
	cnt->calls += 2;
	if (loop_pass(w, cnt))
		handles_read(w, ch, cnt);
}

static void timerfd_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	struct hw *w = im->ctx;
	unsigned long i;

	w->tfd = xcalloc(ch->n, sizeof(*w->tfd));
	for (i = 0; i < ch->n; i++) {
		struct itimerspec its = { .it_value = ts_of(now + churn_first(ch, i)) };

		w->tfd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (w->tfd[i] < 0 ||
		    timerfd_settime(w->tfd[i], TFD_TIMER_ABSTIME, &its, NULL))
			die("timerfd");
	}
	w->ep = epoll_on(-1);
}

static void timerfd_empty(struct churn_impl *im, const struct churn *ch)
{
	struct hw *w = im->ctx;
	unsigned long i;

	for (i = 0; i < ch->n; i++)
		close(w->tfd[i]);
	free(w->tfd);
	close(w->ep);
}

/* One call cancels and arms: the old value says whether it was pending. */
static void timerfd_churn(struct churn_impl *im, const struct churn *ch,
			  const uint32_t *pick, unsigned int k, uint64_t now,
			  struct churn_count *cnt)
{
	struct hw *w = im->ctx;
	struct itimerspec its = { .it_value = ts_of(now + ch->period) }, old;
	unsigned int j;

	for (j = 0; j < k; j++) {
		if (timerfd_settime(w->tfd[pick[j]], TFD_TIMER_ABSTIME, &its, &old))
			die("timerfd_settime");
		if (old.it_value.tv_sec || old.it_value.tv_nsec)
			cnt->pending++;
		else
			cnt->fired++;
		cnt->armed++;
	}
	cnt->calls += k;
	loop_pass(w, cnt);
}

static struct churn_impl *hw_new(enum hw_kind kind)
{
	static const char *const who[] = {
		[HW_NULL] = CHURN_NULL_WHO,
		[HW_TABLE_CHURN] = "htwheel",
		[HW_TABLE_MOVE] = "htwheel",
		[HW_TABLE_LAZY] = "htwheel",
		[HW_HANDLES] = "htwheel",
		[HW_TIMERFD] = "timerfd_settime (old value: was it pending)",
	};
	struct hw *w = xcalloc(1, sizeof(*w));

	w->kind = kind;
	w->fd = -1;
	w->im.who = who[kind];
	w->im.ctx = w;
	switch (kind) {
	case HW_NULL:
		w->im.fill = null_fill;
		w->im.empty = null_empty;
		w->im.batch = null_batch;
		break;
	case HW_TABLE_CHURN:
	case HW_TABLE_MOVE:
	case HW_TABLE_LAZY:
		w->im.fill = table_fill;
		w->im.empty = table_empty;
		w->im.flush = table_flush;
		w->im.batch = kind == HW_TABLE_CHURN ? table_churn :
			      kind == HW_TABLE_MOVE ? table_move : table_lazy;
		break;
	case HW_HANDLES:
		w->im.fill = handles_fill;
		w->im.empty = handles_empty;
		w->im.batch = handles_churn;
		break;
	case HW_TIMERFD:
		w->im.fill = timerfd_fill;
		w->im.empty = timerfd_empty;
		w->im.batch = timerfd_churn;
		break;
	}
	return &w->im;
}

struct churn_slot {
	struct churn *ch;
	struct churn_impl *im;
	struct churn_count cnt;
	const struct contender *null;	/* the driver alone, same repetition */
};

static void run_churn(struct contender *c)
{
	struct churn_slot *s = c->ctx;
	const char *bad;

	churn_run(s->ch, s->im, &s->cnt, &c->win);
	bad = churn_books_wrong(s->ch, &s->cnt);
	if (bad) {
		fprintf(stderr, "htwheel_ubench: %s: %s\n", s->im->who, bad);
		exit(1);
	}
	c->ops = s->cnt.ops;
	c->calls = s->cnt.calls;
}

/* The books beside the figures: they must look alike across contenders. */
static void print_books(const char *section, const char *kase, unsigned long n,
			const struct contender *c)
{
	const struct churn_slot *s = c->ctx;
	char k[256];

	snprintf(k, sizeof(k), "%s: timers found fired", kase);
	put_sample(section, k, n, c->who, "%", 100.0 * s->cnt.fired / s->cnt.ops);
	snprintf(k, sizeof(k), "%s: expiries consumed", kase);
	put_sample(section, k, n, c->who, "%", 100.0 * s->cnt.expired / s->cnt.ops);
	snprintf(k, sizeof(k), "%s: timeouts", kase);
	put_sample(section, k, n, c->who, "%", 100.0 * s->cnt.timeouts / s->cnt.ops);
	print_net(section, kase, n, c, s->null);
}

static void add(struct contender *c, unsigned int *nc, struct churn_slot *s,
		struct churn *ch, struct churn_impl *im, const char *kase)
{
	s->ch = ch;
	s->im = im;
	s->null = &c[0];
	c[*nc] = (struct contender){ .who = im->who, .kase = kase, .run = run_churn,
				     .ctx = s, .print = print_books };
	(*nc)++;
}

static void meta_rows(void)
{
	put_meta("churn driver",
		 "T = %llu ms; N timers pending at deadlines uniform in (now, now+T]; batches of min(%d, N/2) distinct picks, uniform over the N, the same sequence for every contender (seeded); the clock read once per batch and that time passed to the contender; then one pass of the contender's event loop (one epoll_wait that does not wait, and its expiries consumed), which reads the clock twice, before and after its wait, for every contender (inside ev_run and uv_run; around the epoll_wait of htwheel's and timerfd's loops); '%s' is that driver alone, no timer and no loop, and ': net of the driver' each figure less its figure in the same repetition; every run lasts at least %llu ms, so the first deadlines all pass inside it and what the kernel defers is done there; each operation found its timer pending or fired and armed it again, checked after each run",
		 (unsigned long long)(CHURN_T_NS / NSEC_PER_MSEC), CHURN_BATCH,
		 CHURN_NULL_WHO, (unsigned long long)(CHURN_WINDOW_NS / NSEC_PER_MSEC));
	put_meta("churn table",
		 "driven through libhtwheel's public calls (htw_table2_cancel, htw_table2_arm, htw_table2_peek, htw_table2_advance, htw_table2_enter) on a version 2 table; system calls: its doorbells (htw_table2_enter, counted by a link-time wrapper, no clock read) and the loop's epoll_wait");
}

/* The request-deadline churn at N pending. */
static void churn_size(unsigned long n)
{
	static const char section[] =
		"steady churn: N pending at now+T (T 1 s), each operation cancels a uniformly random pending timer and arms it again at now+T";
	struct churn_slot s[6] = { 0 };
	struct contender c[6];
	struct churn ch;
	unsigned int nc = 0, i;

	churn_init(&ch, n, CHURN_T_NS, CHURN_WINDOW_NS, ub_seed());
	add(c, &nc, &s[nc], &ch, hw_new(HW_NULL), NULL);
	add(c, &nc, &s[nc], &ch, hw_new(HW_TABLE_CHURN), "churn, table htw_table2_cancel+htw_table2_arm");
	add(c, &nc, &s[nc], &ch, hw_new(HW_HANDLES), "churn, handle timers 1024 per ioctl");
	add(c, &nc, &s[nc], &ch, churn_peer_new(CP_EV_CHURN), NULL);
	add(c, &nc, &s[nc], &ch, churn_peer_new(CP_UV_CHURN), NULL);
	if (n <= CHURN_TIMERFD_MAX)
		add(c, &nc, &s[nc], &ch, hw_new(HW_TIMERFD), NULL);
	if (ch.batch < CHURN_BATCH)
		put_meta("churn batch", "n %lu: %u picks per batch (and per ioctl)", n, ch.batch);
	run_section(section, n, c, nc, 0, UB_REPS);
	for (i = 0; i < nc; i++)
		free(s[i].im->ctx);
	churn_free(&ch);
}

/* The connection-timeout re-arm at N pending. */
static void idle_size(unsigned long n)
{
	static const char section[] =
		"idle re-arm: N pending at now+T (T 1 s), each operation moves a uniformly random timer's deadline to now+T";
	struct churn_slot s[6] = { 0 };
	struct contender c[6];
	struct churn ch;
	unsigned int nc = 0, i;

	churn_init(&ch, n, CHURN_T_NS, CHURN_WINDOW_NS, ub_seed());
	add(c, &nc, &s[nc], &ch, hw_new(HW_NULL), NULL);
	add(c, &nc, &s[nc], &ch, hw_new(HW_TABLE_MOVE), "idle re-arm, table move (htw_table2_arm)");
	add(c, &nc, &s[nc], &ch, hw_new(HW_TABLE_LAZY),
	    "idle re-arm, table lazy (store the activity, re-check on expiry)");
	add(c, &nc, &s[nc], &ch, churn_peer_new(CP_EV_AGAIN), NULL);
	add(c, &nc, &s[nc], &ch, churn_peer_new(CP_EV_LAZY), NULL);
	add(c, &nc, &s[nc], &ch, churn_peer_new(CP_UV_AGAIN), NULL);
	run_section(section, n, c, nc, 0, UB_REPS);
	for (i = 0; i < nc; i++)
		free(s[i].im->ctx);
	churn_free(&ch);
}

static int for_sizes(const char *what, const char *sizes, void (*fn)(unsigned long))
{
	char *list = strdup(sizes), *tok, *save = NULL;
	unsigned long n;

	if (!list)
		die("strdup");
	meta_run(what);
	meta_rows();
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		n = strtoul(tok, NULL, 0);
		raise_limits(n);
		fn(n);
	}
	free(list);
	return 0;
}

int bench_churn(const char *sizes)
{
	return for_sizes("churn", sizes, churn_size);
}

int bench_idle_rearm(const char *sizes)
{
	return for_sizes("idle-rearm", sizes, idle_size);
}
