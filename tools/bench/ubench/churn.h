/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a server does to its timers, as one driver for every contender:
 * N timers pending at deadlines within (now, now + T]; each operation
 * picks a uniformly random one of them and either cancels it and arms it
 * again at now + T (steady churn: request deadlines) or moves its
 * deadline to now + T (idle re-arm: connection timeouts).  The driver
 * draws the picks, reads the clock once per batch and keeps the books;
 * a contender only does its batch of operations and one pass of its
 * event loop.  Every contender gets the same picks from the same seed.
 */
#ifndef HTW_UBENCH_CHURN_H
#define HTW_UBENCH_CHURN_H

#include "ubench.h"

#define CHURN_T_NS	NSEC_PER_SEC	/* T: the deadline's distance */
#define CHURN_WINDOW_NS	(2 * CHURN_T_NS)	/* at least 2T: see churn_run() */
#define CHURN_BATCH	1024		/* operations per clock read */
/* The null contender's name in the rows: the driver alone. */
#define CHURN_NULL_WHO	"the driver alone (null contender)"

/*
 * The books of one run.  Each operation finds its timer either pending
 * (@pending: cancelled or moved) or fired (@fired: its expiry came
 * before the operation); either way it is armed again (@armed).
 */
struct churn_count {
	unsigned long ops, pending, fired, armed;
	unsigned long expired;	/* expiries the contender's loop consumed */
	unsigned long timeouts;	/* idle re-arm: timers that reached T idle */
	unsigned long calls;	/* system calls, clock reads excluded */
	unsigned long batches;
	uint64_t sum;		/* a hash of the picks, in order */
};

struct churn {
	unsigned long n;
	unsigned int batch;	/* picks per batch: distinct, <= n / 2 */
	uint64_t period;	/* T */
	uint64_t window;	/* the timed window's least length */
	uint64_t seed;
	uint32_t *pick;		/* the batch's picks */
	uint32_t *stamp;	/* per timer: the batch it was last picked in */
	uint32_t gen;
	uint64_t rng;
};

struct churn_impl {
	const char *who;
	/* Untimed: N timers pending, timer i at now + churn_first(ch, i). */
	void (*fill)(struct churn_impl *im, const struct churn *ch, uint64_t now);
	/*
	 * Timed: the operation on each of the @k picks (counting pending or
	 * fired, and armed), then one pass of the contender's loop.
	 */
	void (*batch)(struct churn_impl *im, const struct churn *ch,
		      const uint32_t *pick, unsigned int k, uint64_t now,
		      struct churn_count *cnt);
	/* Timed, once at the end of the window, or NULL. */
	void (*flush)(struct churn_impl *im, const struct churn *ch,
		      struct churn_count *cnt);
	/* Untimed: every timer gone. */
	void (*empty)(struct churn_impl *im, const struct churn *ch);
	void *ctx;
};

void churn_init(struct churn *ch, unsigned long n, uint64_t period,
		uint64_t window, uint64_t seed);
void churn_free(struct churn *ch);
uint64_t churn_first(const struct churn *ch, unsigned long i);
const uint32_t *churn_draw(struct churn *ch);
void churn_restart(struct churn *ch);
void churn_run(struct churn *ch, struct churn_impl *im,
	       struct churn_count *cnt, struct window *win);
const char *churn_books_wrong(const struct churn *ch,
			      const struct churn_count *cnt);
uint64_t churn_replay(struct churn *ch, unsigned long batches);

/* The libev and libuv contenders (churn_peers.c). */
enum churn_peer {
	CP_EV_CHURN,		/* ev_timer_stop + ev_timer_start */
	CP_UV_CHURN,		/* uv_timer_stop + uv_timer_start */
	CP_EV_AGAIN,		/* ev_timer_again */
	CP_EV_LAZY,		/* libev's method 3: a store, re-checked when it fires */
	CP_UV_AGAIN,		/* uv_timer_again */
};

struct churn_impl *churn_peer_new(enum churn_peer kind);
void churn_peer_free(struct churn_impl *im);

#endif
