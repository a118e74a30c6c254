// SPDX-License-Identifier: GPL-2.0
/*
 * The churn driver of htwheel_ubench (tools/bench/ubench/churn_driver.c)
 * and its libev and libuv contenders, natively on the host, at small N
 * and a short T: run by tests/harness/churn_driver_test.py.
 *
 *   churn_driver_test model|peers|broken
 *
 * model:  a reference contender that keeps every timer's state checks
 *         that each batch's picks are distinct timers, that each one it
 *         is handed is pending or (its deadline passed) fired, never
 *         anything else, that the books count each operation once, that
 *         the picks are the ones churn_replay() draws again from the
 *         seed, and that they are uniform over the N timers.
 * peers:  libev's and libuv's contenders, churn and idle re-arm, on the
 *         same driver: books right, same picks as the replay, every timer
 *         found fired was consumed by the loop first.
 * broken: a contender that skips one arm: the books must say so.
 *
 * Prints one "ok NAME" or "not ok NAME: why" line per check; exit 1 on a
 * failure.
 */
#include "churn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_NS		(100 * NSEC_PER_MSEC)
#define WINDOW_NS	(3 * T_NS)

static int failed;

static void check(int ok, const char *name, const char *why)
{
	printf("%sok %s%s%s\n", ok ? "" : "not ", name, ok ? "" : ": ", ok ? "" : why);
	if (!ok)
		failed = 1;
}

struct model {
	struct churn_impl im;
	unsigned long n;
	uint64_t *deadline;	/* 0: fired (its expiry consumed) */
	unsigned long *picked;	/* per timer: operations on it */
	unsigned long bad;	/* picks repeated in a batch, or out of range */
	int skip_arm;		/* broken: the first operation arms nothing */
	uint32_t *seen;
	uint32_t gen;
};

static void model_fill(struct churn_impl *im, const struct churn *ch, uint64_t now)
{
	struct model *m = im->ctx;
	unsigned long i;

	for (i = 0; i < ch->n; i++)
		m->deadline[i] = now + churn_first(ch, i);
}

static void model_batch(struct churn_impl *im, const struct churn *ch,
			const uint32_t *pick, unsigned int k, uint64_t now,
			struct churn_count *cnt)
{
	struct model *m = im->ctx;
	unsigned long i;
	unsigned int j;

	/* The loop's pass first here: what is due has fired. */
	for (i = 0; i < ch->n; i++)
		if (m->deadline[i] && m->deadline[i] <= now) {
			m->deadline[i] = 0;
			cnt->expired++;
		}
	m->gen++;
	for (j = 0; j < k; j++) {
		i = pick[j];
		if (i >= ch->n || m->seen[i] == m->gen) {
			m->bad++;
			continue;
		}
		m->seen[i] = m->gen;
		m->picked[i]++;
		if (m->deadline[i])
			cnt->pending++;
		else
			cnt->fired++;
		if (m->skip_arm) {
			m->skip_arm = 0;
			continue;
		}
		m->deadline[i] = now + ch->period;
		cnt->armed++;
	}
}

static void model_empty(struct churn_impl *im, const struct churn *ch)
{
	(void)im;
	(void)ch;
}

static struct model *model_new(unsigned long n)
{
	struct model *m = xcalloc(1, sizeof(*m));

	m->n = n;
	m->deadline = xcalloc(n, sizeof(*m->deadline));
	m->picked = xcalloc(n, sizeof(*m->picked));
	m->seen = xcalloc(n, sizeof(*m->seen));
	m->im = (struct churn_impl){ .who = "model", .fill = model_fill,
				     .batch = model_batch, .empty = model_empty, .ctx = m };
	return m;
}

static void test_model(void)
{
	unsigned long n = 200, i;
	struct model *m = model_new(n);
	struct churn_count cnt;
	struct window win;
	struct churn ch;
	double mean, chi = 0;

	churn_init(&ch, n, T_NS, WINDOW_NS, 42);
	churn_run(&ch, &m->im, &cnt, &win);
	check(!churn_books_wrong(&ch, &cnt), "model.books",
	      churn_books_wrong(&ch, &cnt) ? churn_books_wrong(&ch, &cnt) : "");
	check(m->bad == 0, "model.picks_distinct_in_batch", "a pick repeated or out of range");
	check(ch.batch == n / 2, "model.batch_at_most_half", "batch is not min(1024, n/2)");
	check(cnt.ops > 0 && cnt.pending > 0, "model.operations_made", "no operation");
	check(win.wall >= WINDOW_NS, "model.window_at_least_3T", "the window was shorter than 3T");
	check(cnt.sum == churn_replay(&ch, cnt.batches), "model.same_picks_as_replay",
	      "the run's picks are not the seed's");
	mean = (double)cnt.ops / n;
	for (i = 0; i < n; i++)
		chi += (m->picked[i] - mean) * (m->picked[i] - mean) / mean;
	/* n - 1 degrees of freedom: far above that is not uniform. */
	check(cnt.ops < 10 * n || chi < 2.0 * n, "model.picks_uniform", "chi-square too large");
	for (i = 0; i < n; i++)
		if (m->deadline[i] && m->deadline[i] > mono() + 2 * T_NS)
			break;
	check(i == n, "model.deadlines_within_T", "a deadline beyond now + T");
	churn_free(&ch);
}

static void test_broken(void)
{
	struct model *m = model_new(100);
	struct churn_count cnt;
	struct window win;
	struct churn ch;

	m->skip_arm = 1;
	churn_init(&ch, 100, T_NS, T_NS, 7);
	churn_run(&ch, &m->im, &cnt, &win);
	check(churn_books_wrong(&ch, &cnt) != NULL, "broken.missing_arm_caught",
	      "the books did not see an operation that armed nothing");
	cnt.armed = cnt.ops;
	cnt.pending--;
	check(churn_books_wrong(&ch, &cnt) != NULL, "broken.uncounted_cancel_caught",
	      "the books did not see an operation neither pending nor fired");
	churn_free(&ch);
}

static void test_peers(void)
{
	static const enum churn_peer kinds[] = {
		CP_EV_CHURN, CP_UV_CHURN, CP_EV_AGAIN, CP_EV_LAZY, CP_UV_AGAIN,
	};
	static const char *const names[] = { "ev_churn", "uv_churn", "ev_again", "ev_lazy",
					     "uv_again" };
	unsigned int k;
	char name[64];

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct churn_impl *im = churn_peer_new(kinds[k]);
		struct churn_count cnt;
		struct window win;
		struct churn ch;
		const char *bad;

		churn_init(&ch, 300, T_NS, WINDOW_NS, 42);
		churn_run(&ch, im, &cnt, &win);
		bad = churn_books_wrong(&ch, &cnt);
		snprintf(name, sizeof(name), "peers.%s_books", names[k]);
		check(!bad && cnt.ops > 0, name, bad ? bad : "no operation");
		snprintf(name, sizeof(name), "peers.%s_same_picks", names[k]);
		check(cnt.sum == churn_replay(&ch, cnt.batches), name,
		      "the run's picks are not the seed's");
		snprintf(name, sizeof(name), "peers.%s_fired_were_consumed", names[k]);
		check(cnt.fired <= cnt.expired, name,
		      "a timer found fired whose expiry the loop never ran");
		snprintf(name, sizeof(name), "peers.%s_one_loop_pass_per_batch", names[k]);
		check(cnt.calls == cnt.batches, name, "loop passes are not one per batch");
		churn_peer_free(im);
		churn_free(&ch);
	}
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "model"))
		test_model();
	else if (!strcmp(what, "broken"))
		test_broken();
	else if (!strcmp(what, "peers"))
		test_peers();
	else
		return 2;
	return failed;
}
