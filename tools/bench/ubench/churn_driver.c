// SPDX-License-Identifier: GPL-2.0
/*
 * The driver of the steady churn and idle re-arm rows: see churn.h.
 */
#include "churn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void churn_init(struct churn *ch, unsigned long n, uint64_t period,
		uint64_t window, uint64_t seed)
{
	memset(ch, 0, sizeof(*ch));
	ch->n = n;
	/* Distinct picks per batch, drawn by rejection: at most n / 2. */
	ch->batch = n / 2 < CHURN_BATCH ? n / 2 : CHURN_BATCH;
	if (!ch->batch)
		ch->batch = 1;
	ch->period = period;
	ch->window = window;
	ch->seed = seed ? seed : 0x9e3779b97f4a7c15ULL;
	ch->pick = xcalloc(ch->batch, sizeof(*ch->pick));
	ch->stamp = xcalloc(n, sizeof(*ch->stamp));
}

void churn_free(struct churn *ch)
{
	free(ch->pick);
	free(ch->stamp);
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Timer i's first deadline, from now: uniform in (0, T], the same for all. */
uint64_t churn_first(const struct churn *ch, unsigned long i)
{
	return 1 + splitmix(ch->seed ^ splitmix(i)) % ch->period;
}

/* The picks again from the start: every contender's run sees the same. */
void churn_restart(struct churn *ch)
{
	ch->rng = splitmix(ch->seed);
	ch->gen = 0;
	memset(ch->stamp, 0, ch->n * sizeof(*ch->stamp));
}

static uint64_t churn_rnd(struct churn *ch)
{
	/* xorshift64*, as util.c's, on the driver's own state. */
	ch->rng ^= ch->rng >> 12;
	ch->rng ^= ch->rng << 25;
	ch->rng ^= ch->rng >> 27;
	return ch->rng * 2685821657736338717ULL;
}

/*
 * One batch of distinct picks, uniform over the N timers: a batched
 * contender (one ioctl for all the cancels, one for all the arms) then
 * does exactly what one operation at a time would.
 */
const uint32_t *churn_draw(struct churn *ch)
{
	unsigned int j;
	uint32_t i;

	if (++ch->gen == 0) {
		memset(ch->stamp, 0, ch->n * sizeof(*ch->stamp));
		ch->gen = 1;
	}
	for (j = 0; j < ch->batch; j++) {
		do
			i = (churn_rnd(ch) >> 16) % ch->n;
		while (ch->stamp[i] == ch->gen);
		ch->stamp[i] = ch->gen;
		ch->pick[j] = i;
	}
	return ch->pick;
}

static uint64_t churn_hash(uint64_t sum, const uint32_t *pick, unsigned int k)
{
	unsigned int j;

	for (j = 0; j < k; j++)
		sum = (sum ^ pick[j]) * 0x100000001b3ULL;
	return sum;
}

/*
 * One run: the population armed (untimed), then batches for at least
 * the window, the clock read once per batch and passed to the contender
 * as its now.  The window lasts 2T and more, so the first deadlines all
 * pass inside it (in its first T), and whatever a contender defers (the
 * table's intake and visits, a wheel's cascades and lazy drops, the
 * expiries of timers not picked for T) is done, and counted, in the
 * second.  (It was 3T until `make bench` had to fit in 45 minutes; the
 * third T measured the same steady state again.)
 */
void churn_run(struct churn *ch, struct churn_impl *im,
	       struct churn_count *cnt, struct window *win)
{
	const uint32_t *pick;
	uint64_t start, now;

	memset(cnt, 0, sizeof(*cnt));
	cnt->sum = 0xcbf29ce484222325ULL;
	churn_restart(ch);
	im->fill(im, ch, mono());
	window_begin(win);
	start = mono();
	for (now = start; now - start < ch->window; now = mono()) {
		pick = churn_draw(ch);
		im->batch(im, ch, pick, ch->batch, now, cnt);
		cnt->ops += ch->batch;
		cnt->batches++;
		cnt->sum = churn_hash(cnt->sum, pick, ch->batch);
	}
	if (im->flush)
		im->flush(im, ch, cnt);
	window_end(win);
	im->empty(im, ch);
}

/* NULL if every operation found its timer pending or fired, and armed it. */
const char *churn_books_wrong(const struct churn *ch,
			      const struct churn_count *cnt)
{
	if (cnt->ops != cnt->batches * ch->batch)
		return "operations are not the batches' picks";
	if (cnt->pending + cnt->fired != cnt->ops)
		return "an operation found its timer neither pending nor fired";
	if (cnt->armed != cnt->ops)
		return "an operation did not arm its timer";
	return NULL;
}

/* The hash of the first @batches batches' picks, as churn_run() draws them. */
uint64_t churn_replay(struct churn *ch, unsigned long batches)
{
	uint64_t sum = 0xcbf29ce484222325ULL;
	unsigned long b;

	churn_restart(ch);
	for (b = 0; b < batches; b++)
		sum = churn_hash(sum, churn_draw(ch), ch->batch);
	return sum;
}
