// SPDX-License-Identifier: GPL-2.0
/*
 * Idle cost: wake-ups while one timer is pending an hour away, htwheel at
 * its default tick, against a measured anchor, a 1 ms periodic timerfd
 * (what an event loop with a 1 ms tick does), and against no timer at all.
 * Each repetition counts the contender's wake-ups and the machine's timer
 * interrupts (/proc/interrupts) over its window.
 */
#include "ubench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>

/* The 1 ms anchor reads 1000 expiries a second, each a syscall: bound its window. */
#define IDLE_ANCHOR_MAX	(5 * NSEC_PER_SEC)

enum idle_kind { I_NONE, I_WHEEL, I_TIMERFD };

struct idle {
	enum idle_kind kind;
	uint64_t span;
	int fd;
	double wakeups, irqs, secs;
};

/* Sum of the "timer" lines of /proc/interrupts, every CPU. */
static uint64_t timer_irqs(void)
{
	char line[1024];
	uint64_t sum = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':'), *q;

		if (!p || !strstr(line, "timer"))
			continue;
		for (p++;; p = q) {
			unsigned long long v = strtoull(p, &q, 10);

			if (q == p)
				break;
			sum += v;
		}
	}
	fclose(f);
	return sum;
}

static void run_idle(struct contender *c)
{
	struct idle *d = c->ctx;
	struct htw_timer_entry e = { .cookie = 1, .expires = 3600 * NSEC_PER_SEC };
	struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } };
	struct htw_cancel_entry ce = { 0 };
	uint64_t w0 = 0, i0, t, end, cnt;
	struct htw_stats st;
	struct window win;

	window_begin(&win);
	i0 = timer_irqs();
	t = mono();
	end = t + (d->kind == I_TIMERFD && d->span > IDLE_ANCHOR_MAX ?
		   IDLE_ANCHOR_MAX : d->span);
	d->wakeups = 0;
	switch (d->kind) {
	case I_NONE:
		sleep_until(end);
		break;
	case I_WHEEL:
		read_wheel_stats(d->fd, &st);
		w0 = st.tick_wakeups;
		schedule_batches(d->fd, &e, 1, 1);
		sleep_until(end);
		read_wheel_stats(d->fd, &st);
		d->wakeups = st.tick_wakeups - w0;
		ce.handle = e.handle;
		cancel_batches(d->fd, &ce, 1, 1);
		break;
	case I_TIMERFD:
		d->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (d->fd < 0 || timerfd_settime(d->fd, 0, &its, NULL))
			die("timerfd");
		while (mono() < end) {
			if (read(d->fd, &cnt, sizeof(cnt)) != sizeof(cnt))
				die("read timerfd");
			d->wakeups++;
		}
		close(d->fd);
		break;
	}
	d->secs = (mono() - t) / 1e9;
	d->irqs = timer_irqs() - i0;
	window_end(&win);
	c->win = win;
	c->ops = d->secs;
	c->calls = 0;
}

static void print_idle(const char *section, const char *kase, unsigned long n,
		       const struct contender *c)
{
	const struct idle *d = c->ctx;

	(void)kase;
	if (d->kind != I_NONE)
		put_sample(section, "wake-ups", n, c->who, "/s", d->wakeups / d->secs);
	put_sample(section, "system timer IRQs", n, c->who, "/s", d->irqs / d->secs);
	put_sample(section, "CPU", n, c->who, "ns", c->win.cpu / d->secs);
}

int bench_idle(double secs)
{
	static const char section[] =
		"idle: one timer pending an hour away, per second of the window";
	struct idle d[3] = { { .kind = I_NONE }, { .kind = I_WHEEL }, { .kind = I_TIMERFD } };
	struct contender c[3] = {
		{ .who = "no timer (baseline)" },
		{ .who = "htwheel" },
		{ .who = "1 ms periodic timerfd, every expiry read" },
	};
	uint64_t span = secs * NSEC_PER_SEC;
	struct htw_timer_entry e = { .cookie = 1, .expires = 10 * NSEC_PER_MSEC };
	struct htw_expiry rec;
	struct htw_stats st;
	unsigned int i;
	int fd;

	meta_run("idle");
	/* A long window (the time-travel hour) is split over the repetitions. */
	if (span > 60 * NSEC_PER_SEC)
		span /= UB_REPS + 1;
	fd = open_wheel(0);
	/* Let the wheel exist and settle: one timer, fired and read. */
	schedule_batches(fd, &e, 1, 1);
	if (read(fd, &rec, sizeof(rec)) != sizeof(rec))
		die("read");
	read_wheel_stats(fd, &st);
	put_meta("htwheel tick_ns", "%llu (the module default unless the kernel refused it)",
		 (unsigned long long)st.tick_ns);
	put_meta("idle window", "%.3f s per repetition; the 1 ms timerfd at most %.0f s",
		 span / 1e9, IDLE_ANCHOR_MAX / 1e9);
	put_meta("idle CPU", "the 'CPU' rows are process CPU per second of window");
	for (i = 0; i < 3; i++) {
		d[i].span = span;
		d[i].fd = fd;
		c[i].run = run_idle;
		c[i].ctx = &d[i];
		c[i].print = print_idle;
		c[i].own_rows = 1;
	}
	run_section(section, 0, c, 3, 0, UB_REPS);
	close(fd);
	return 0;
}
