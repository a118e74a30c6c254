// SPDX-License-Identifier: GPL-2.0
/*
 * libev and libuv in the steady churn and idle re-arm rows (churn.h).
 * Each takes its deadlines from its loop's cached time, as a server on
 * it does, and runs one pass of its loop per batch (ev_run or uv_run
 * without waiting: one epoll_wait, and the callbacks of what expired),
 * as every contender of the rows does.
 */
#include "churn.h"
#include "peers.h"

#include <stdlib.h>

struct peer {
	struct churn_impl im;
	enum churn_peer kind;
	struct ev_loop *ev;
	ev_timer *evt;
	double *last;		/* method 3: the last activity, ev_now() */
	uv_loop_t uv;
	uv_timer_t *uvt;
	struct churn_count *cnt;	/* the run's, for the callbacks */
	double t_s;
	uint64_t t_ms;
};

static struct peer *peer_of(struct churn_impl *im)
{
	return im->ctx;
}

static void ev_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peer *p = w->data;

	(void)loop;
	(void)revents;
	p->cnt->expired++;
}

/* A repeating timer (ev_timer_again's): it came to T idle, and goes on. */
static void ev_idle_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peer *p = w->data;

	(void)loop;
	(void)revents;
	p->cnt->expired++;
	p->cnt->timeouts++;
}

/*
 * libev's method 3 ("Be smart about timeouts"): the timer fires at most
 * T after it was last set; only then is the last activity looked at, and
 * the timer set again for what is left of T.
 */
static void ev_lazy_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peer *p = w->data;
	unsigned long i = w - p->evt;
	double now = ev_now(loop), after = p->last[i] + p->t_s - now;

	(void)revents;
	p->cnt->expired++;
	if (after <= 0) {
		p->cnt->timeouts++;
		p->last[i] = now;
		after = p->t_s;
	}
	ev_timer_set(w, after, 0);
	ev_timer_start(loop, w);
}

static void uv_fired(uv_timer_t *t)
{
	struct peer *p = t->data;

	p->cnt->expired++;
}

static void uv_idle_fired(uv_timer_t *t)
{
	struct peer *p = t->data;

	p->cnt->expired++;
	p->cnt->timeouts++;
}

static void ev_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	struct peer *p = peer_of(im);
	double start;
	unsigned long i;

	(void)now;
	p->t_s = ch->period / 1e9;
	p->ev = ev_loop_new(EVBACKEND_EPOLL);
	if (!p->ev)
		die("ev_loop_new");
	p->evt = xcalloc(ch->n, sizeof(*p->evt));
	p->last = xcalloc(ch->n, sizeof(*p->last));
	ev_now_update(p->ev);
	start = ev_now(p->ev);
	for (i = 0; i < ch->n; i++) {
		double first = churn_first(ch, i) / 1e9;

		switch (p->kind) {
		case CP_EV_AGAIN:
			ev_timer_init(&p->evt[i], ev_idle_fired, first, p->t_s);
			break;
		case CP_EV_LAZY:
			ev_timer_init(&p->evt[i], ev_lazy_fired, first, 0);
			p->last[i] = start + first - p->t_s;
			break;
		default:
			ev_timer_init(&p->evt[i], ev_fired, first, 0);
		}
		p->evt[i].data = p;
		ev_timer_start(p->ev, &p->evt[i]);
	}
}

static void ev_empty(struct churn_impl *im, const struct churn *ch)
{
	struct peer *p = peer_of(im);

	(void)ch;
	ev_loop_destroy(p->ev);
	free(p->evt);
	free(p->last);
}

/* The loop's pass: what expired runs its callback. */
static void ev_pass(struct peer *p, struct churn_count *cnt)
{
	p->cnt = cnt;
	ev_run(p->ev, EVRUN_NOWAIT);
	cnt->calls++;
}

static void ev_churn(struct churn_impl *im, const struct churn *ch,
		     const uint32_t *pick, unsigned int k, uint64_t now,
		     struct churn_count *cnt)
{
	struct peer *p = peer_of(im);
	unsigned int j;

	(void)ch;
	(void)now;
	for (j = 0; j < k; j++) {
		ev_timer *w = &p->evt[pick[j]];

		if (ev_is_active(w)) {
			ev_timer_stop(p->ev, w);
			cnt->pending++;
		} else {
			cnt->fired++;
		}
		ev_timer_set(w, p->t_s, 0);
		ev_timer_start(p->ev, w);
		cnt->armed++;
	}
	ev_pass(p, cnt);
}

static void ev_again(struct churn_impl *im, const struct churn *ch,
		     const uint32_t *pick, unsigned int k, uint64_t now,
		     struct churn_count *cnt)
{
	struct peer *p = peer_of(im);
	unsigned int j;

	(void)ch;
	(void)now;
	for (j = 0; j < k; j++) {
		ev_timer *w = &p->evt[pick[j]];

		if (ev_is_active(w))
			cnt->pending++;
		else
			cnt->fired++;
		/* repeat is T: the timer is due T after the loop's now. */
		ev_timer_again(p->ev, w);
		cnt->armed++;
	}
	ev_pass(p, cnt);
}

/* Method 3's operation: a store; the timer is always pending, by design. */
static void ev_lazy(struct churn_impl *im, const struct churn *ch,
		    const uint32_t *pick, unsigned int k, uint64_t now,
		    struct churn_count *cnt)
{
	struct peer *p = peer_of(im);
	double t = ev_now(p->ev);
	unsigned int j;

	(void)ch;
	(void)now;
	for (j = 0; j < k; j++)
		p->last[pick[j]] = t;
	cnt->pending += k;
	cnt->armed += k;
	ev_pass(p, cnt);
}

static void uv_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	struct peer *p = peer_of(im);
	unsigned long i;

	(void)now;
	p->t_ms = ch->period / NSEC_PER_MSEC;
	if (uv_loop_init(&p->uv))
		die("uv_loop_init");
	p->uvt = xcalloc(ch->n, sizeof(*p->uvt));
	for (i = 0; i < ch->n; i++) {
		uint64_t first = (churn_first(ch, i) + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;

		uv_timer_init(&p->uv, &p->uvt[i]);
		p->uvt[i].data = p;
		if (p->kind == CP_UV_AGAIN)
			uv_timer_start(&p->uvt[i], uv_idle_fired, first, p->t_ms);
		else
			uv_timer_start(&p->uvt[i], uv_fired, first, 0);
	}
}

static void uv_empty(struct churn_impl *im, const struct churn *ch)
{
	struct peer *p = peer_of(im);
	unsigned long i;

	for (i = 0; i < ch->n; i++)
		uv_close((uv_handle_t *)&p->uvt[i], NULL);
	uv_run(&p->uv, UV_RUN_DEFAULT);
	if (uv_loop_close(&p->uv))
		die("uv_loop_close");
	free(p->uvt);
}

static void uv_pass(struct peer *p, struct churn_count *cnt)
{
	p->cnt = cnt;
	uv_run(&p->uv, UV_RUN_NOWAIT);
	cnt->calls++;
}

static void uv_churn(struct churn_impl *im, const struct churn *ch,
		     const uint32_t *pick, unsigned int k, uint64_t now,
		     struct churn_count *cnt)
{
	struct peer *p = peer_of(im);
	unsigned int j;

	(void)ch;
	(void)now;
	for (j = 0; j < k; j++) {
		uv_timer_t *t = &p->uvt[pick[j]];

		if (uv_is_active((uv_handle_t *)t)) {
			uv_timer_stop(t);
			cnt->pending++;
		} else {
			cnt->fired++;
		}
		uv_timer_start(t, uv_fired, p->t_ms, 0);
		cnt->armed++;
	}
	uv_pass(p, cnt);
}

static void uv_again(struct churn_impl *im, const struct churn *ch,
		     const uint32_t *pick, unsigned int k, uint64_t now,
		     struct churn_count *cnt)
{
	struct peer *p = peer_of(im);
	unsigned int j;

	(void)ch;
	(void)now;
	for (j = 0; j < k; j++) {
		uv_timer_t *t = &p->uvt[pick[j]];

		if (uv_is_active((uv_handle_t *)t))
			cnt->pending++;
		else
			cnt->fired++;
		if (uv_timer_again(t))
			die("uv_timer_again");
		cnt->armed++;
	}
	uv_pass(p, cnt);
}

struct churn_impl *churn_peer_new(enum churn_peer kind)
{
	static const char *const who[] = {
		[CP_EV_CHURN] = "libev ev_timer_stop+ev_timer_start",
		[CP_UV_CHURN] = "libuv uv_timer_stop+uv_timer_start",
		[CP_EV_AGAIN] = "libev ev_timer_again",
		[CP_EV_LAZY] = "libev method 3 (store the activity, re-check when it fires)",
		[CP_UV_AGAIN] = "libuv uv_timer_again",
	};
	struct peer *p = xcalloc(1, sizeof(*p));
	int ev = kind == CP_EV_CHURN || kind == CP_EV_AGAIN || kind == CP_EV_LAZY;

	p->kind = kind;
	p->im.who = who[kind];
	p->im.ctx = p;
	p->im.fill = ev ? ev_fill : uv_fill;
	p->im.empty = ev ? ev_empty : uv_empty;
	switch (kind) {
	case CP_EV_CHURN:
		p->im.batch = ev_churn;
		break;
	case CP_UV_CHURN:
		p->im.batch = uv_churn;
		break;
	case CP_EV_AGAIN:
		p->im.batch = ev_again;
		break;
	case CP_EV_LAZY:
		p->im.batch = ev_lazy;
		break;
	case CP_UV_AGAIN:
		p->im.batch = uv_again;
		break;
	}
	return &p->im;
}

void churn_peer_free(struct churn_impl *im)
{
	free(peer_of(im));
}
