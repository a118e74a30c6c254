// SPDX-License-Identifier: GPL-2.0
/*
 * What the htwheel CLI prints: one line per expiry (of a handle timer or
 * a slot of the shared timer table) and cancel, the timers that never
 * ran, statistics as a table or JSON, the module parameters, and one line
 * on stderr for every error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char *prog = "htwheel";

void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *fmt_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < HTW_NSEC_PER_USEC)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < HTW_NSEC_PER_MSEC)
		snprintf(buf, len, "%.3fus", ns / 1e3);
	else if (ns < HTW_NSEC_PER_SEC)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
	return buf;
}

/* The start of an expiry line, common to handle timers and table slots. */
static void print_fired(const struct session *s, const struct timer *t,
			uint64_t cookie, uint64_t deadline_ns, uint64_t expired_ns)
{
	char now[32], dl[32], late[32];

	fmt_dur(now, sizeof(now), htw_now(s->h) - s->start_ns);
	fmt_dur(dl, sizeof(dl), deadline_ns - s->start_ns);
	fmt_dur(late, sizeof(late), expired_ns - deadline_ns);
	printf("%12s  fired %-8s cookie=%-4llu deadline=%-12s late=%s",
	       now, t ? t->name : "?", (unsigned long long)cookie, dl, late);
}

/* @t is the timer of @r, NULL if the session does not know the handle. */
void print_expiry(const struct session *s, const struct timer *t,
		  const struct htw_expiry *r)
{
	print_fired(s, t, r->cookie, r->deadline_ns, r->expired_ns);
	if (r->overrun)
		printf(" overrun=%u", r->overrun);
	putchar('\n');
}

/*
 * A record of the table's completion ring: the slot says where it came
 * from, its generation which arming of the slot fired (the deadline this
 * session stored for it); the time is that of the read.
 */
void print_table_expiry(const struct session *s, const struct timer *t,
			const struct htw_table2_cqe *c)
{
	uint64_t deadline = 0;

	if (t && c->gen == t->gen)
		deadline = t->deadline_ns;
	else if (t && c->gen == t->prev_gen)
		deadline = t->prev_deadline_ns;
	print_fired(s, t, t ? t->cookie : 0, deadline ?: htw_now(s->h),
		    htw_now(s->h));
	printf(" slot=%u gen=%llu\n", c->slot, (unsigned long long)c->gen);
}

/*
 * @ret is htw_cancel()'s (a table slot's cancel is put in its terms),
 * asked @at_ns after the session's start.
 */
void print_cancel(uint64_t at_ns, const char *name, int ret)
{
	char b[32];

	printf("%12s  cancel %s: %s\n", fmt_dur(b, sizeof(b), at_ns), name,
	       ret == 0 ? "cancelled" : ret == -EALREADY ? "already fired" :
	       ret == -ENOENT ? "not pending" : strerror(-ret));
}

/*
 * @ret is htw_rearm()'s or, for a table slot, htw_table2_arm()'s, for
 * @delay_ns, asked @at_ns after the start.  A slot that was not armed is
 * armed again, and the record of a firing stays in the ring.
 */
void print_rearm(uint64_t at_ns, const struct timer *t, uint64_t delay_ns,
		 int ret)
{
	char b[32], d[32];

	printf("%12s  rearm %s: ", fmt_dur(b, sizeof(b), at_ns), t->name);
	if (ret < 0)
		printf("%s\n", ret == -ENOENT ? "not pending" : strerror(-ret));
	else
		printf("%s, due in %s\n", ret ? "moved" :
		       t->in_table ? "not armed, armed again" :
		       "fired, record withdrawn", fmt_dur(d, sizeof(d), delay_ns));
}

static const char *timer_kind(const struct timer *t)
{
	if (t && t->in_table)
		return "table";
	return t && t->period_ns ? "periodic" : "one-shot";
}

/* @n timers never ran; the first @listed of them are described in @nr. */
void print_never_ran(const struct never_ran *nr, int n, unsigned int listed)
{
	char b[32];
	int i;

	printf("never ran: %d timer%s\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n && (unsigned int)i < listed; i++)
		printf("  %-8s cookie=%-4llu %s remaining=%s\n",
		       nr[i].t ? nr[i].t->name : "?",
		       (unsigned long long)nr[i].cookie, timer_kind(nr[i].t),
		       fmt_dur(b, sizeof(b), nr[i].remaining_ns));
}

const char *clock_name(uint32_t clk)
{
	return clk == CLOCK_BOOTTIME ? "CLOCK_BOOTTIME" :
	       clk == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "?";
}

static void print_stats_json(const struct htw_stats *st,
			     const struct htw_table_stats *ts)
{
	int i;

	printf("{\"clockid\": %u, \"tick_ns\": %llu, \"slots\": %u, \"levels\": %u,\n"
	       " \"max_pending\": %llu, \"pending\": %llu, \"ready\": %llu,\n"
	       " \"scheduled\": %llu, \"fired\": %llu, \"cancelled\": %llu,\n"
	       " \"cascaded\": %llu, \"tick_wakeups\": %llu, \"max_late_ns\": %llu,\n"
	       " \"late_hist\": [",
	       st->clockid, (unsigned long long)st->tick_ns, st->slots,
	       st->levels, (unsigned long long)st->max_pending,
	       (unsigned long long)st->pending, (unsigned long long)st->ready,
	       (unsigned long long)st->scheduled, (unsigned long long)st->fired,
	       (unsigned long long)st->cancelled, (unsigned long long)st->cascaded,
	       (unsigned long long)st->tick_wakeups,
	       (unsigned long long)st->max_late_ns);
	for (i = 0; i < HTW_LATE_BUCKETS; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)st->late_hist[i]);
	/* Always there, 0 without a table: a reader need not test for them. */
	printf("],\n \"table_entries\": %llu, \"table_taken\": %llu,"
	       " \"table_fired\": %llu}\n",
	       (unsigned long long)ts->entries, (unsigned long long)ts->taken,
	       (unsigned long long)ts->fired);
}

static void print_row(const char *name, unsigned long long v)
{
	printf("  %-14s %llu\n", name, v);
}

static void print_stats_table(const struct htw_stats *st,
			      const struct htw_table_stats *ts)
{
	char b[32], c[32];
	int i;

	printf("  %-14s %s\n", "clock", clock_name(st->clockid));
	printf("  %-14s %s\n", "tick", fmt_dur(b, sizeof(b), st->tick_ns));
	print_row("slots", st->slots);
	print_row("levels", st->levels);
	print_row("max pending", st->max_pending);
	print_row("pending", st->pending);
	print_row("ready", st->ready);
	print_row("scheduled", st->scheduled);
	print_row("fired", st->fired);
	print_row("cancelled", st->cancelled);
	print_row("cascaded", st->cascaded);
	print_row("tick wakeups", st->tick_wakeups);
	printf("  %-14s %s\n", "max late", fmt_dur(b, sizeof(b), st->max_late_ns));
	for (i = 0; i < HTW_LATE_BUCKETS; i++) {
		if (!st->late_hist[i])
			continue;
		printf("  late %9s..%-9s %llu\n",
		       fmt_dur(b, sizeof(b), i ? 1ULL << i : 0),
		       i == HTW_LATE_BUCKETS - 1 ? "" :
		       fmt_dur(c, sizeof(c), 1ULL << (i + 1)),
		       (unsigned long long)st->late_hist[i]);
	}
	/* The table's own counters; the ones above are the handle timers'. */
	if (ts->entries) {
		print_row("table entries", ts->entries);
		print_row("table taken", ts->taken);
		print_row("table fired", ts->fired);
	}
}

/*
 * The instance's statistics; with a table (@tab), its rows are the
 * table's own (HTW_IOC_TABLE2_STATS): the instance's are its handle
 * timers'.
 */
int print_stats(struct htw *h, struct htw_table2 *tab, bool json)
{
	struct htw_table_stats ts = { 0 };
	struct htw_stats st;
	int ret = htw_stats(h, &st);

	if (!ret && tab)
		ret = htw_table2_stats(tab, &ts);
	if (ret) {
		err("stats: %s", strerror(-ret));
		return EXIT_FAIL;
	}
	if (json) {
		print_stats_json(&st, &ts);
	} else {
		printf("statistics:\n");
		print_stats_table(&st, &ts);
	}
	return EXIT_OK;
}

void print_module_params(bool json)
{
	static const char *const names[] = {
		"default_tick_ns", "default_slots", "max_pending",
		"max_user_instances", "max_user_timers", "max_user_wheel_bytes",
	};
	char path[128], val[64];
	unsigned int i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "/sys/module/htwheel/parameters/%s",
			 names[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f)) {
			val[strcspn(val, "\n")] = '\0';
			if (json)
				printf("%s\"%s\": %s", i ? ", " : "", names[i], val);
			else
				printf("  %-16s %s\n", names[i], val);
		}
		fclose(f);
	}
}
