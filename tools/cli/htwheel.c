// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: command-line front end to /dev/htwheel, built on libhtwheel.
 *
 * Timers belong to the open file that scheduled them, so a command that
 * schedules also waits for and prints the expirations in the same process
 * (run, schedule, watch); see htwheel(1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "htwheel.h"

#define HTW_CLI_VERSION	"1.0"
#define MAX_TIMERS	1024
#define NAME_LEN	32
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Exit codes, documented in htwheel(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* the device refused a request */
	EXIT_USAGE = 2,		/* bad command line or input */
	EXIT_DEVICE = 3,	/* device missing, module not loaded, no access */
};

struct timer {
	char name[NAME_LEN];
	uint64_t cookie;
	uint64_t delay_ns;
	uint64_t period_ns;
	uint64_t handle;
	bool done;		/* fired (one-shot), cancelled or drained */
	bool fired;		/* a record of it was read */
};

struct cancel_at {
	uint64_t at_ns;
	char name[NAME_LEN];
	bool done;
};

struct session {
	struct htw_params params;
	uint64_t slack_ns;
	uint64_t for_ns;		/* 0: no time limit */
	bool show_stats, json, read_stdin;
	struct timer timers[MAX_TIMERS];
	unsigned int ntimers;
	struct cancel_at cancels[MAX_TIMERS];
	unsigned int ncancels;
	struct htw *h;
	uint64_t start_ns;
	int status;
	char line[512];
	size_t line_len;
};

static const char *prog = "htwheel";

static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage(FILE *out)
{
	fprintf(out,
		"usage: htwheel COMMAND [OPTIONS]\n"
		"\n"
		"  run [--at DUR[:NAME]]... [--every DUR[:NAME]]... [--cancel DUR:NAME]...\n"
		"      [--for DUR] [--stats [--json]] [GEOMETRY]\n"
		"          schedule timers, print each expiry as it arrives, then drain\n"
		"          and report the timers that never ran\n"
		"  schedule DUR... [--every PERIOD] [--cookie N] [--for DUR] [--stats]\n"
		"          one timer per DUR (periodic with --every), cookies N, N+1, ...\n"
		"  watch [run options]\n"
		"          like run, also reading commands from stdin:\n"
		"          'at DUR [NAME]', 'every DUR [NAME]', 'cancel NAME', 'stats'\n"
		"  stats [--json] [GEOMETRY]\n"
		"          statistics of a fresh instance and the module parameters\n"
		"  info    the API and library versions, a new instance's geometry\n"
		"\n"
		"GEOMETRY: --tick DUR --slots N --max-pending N --boottime --slack DUR\n"
		"DUR: a number and a unit (ns, us, ms, s, m, h), e.g. 250ms, 1.5s, 1m30s\n"
		"Exit: 0 ok, 1 request refused, 2 bad usage, 3 device unavailable\n"
		"Environment: HTWHEEL_DEVICE (default " HTW_DEVICE_PATH ")\n");
	return out == stdout ? EXIT_OK : EXIT_USAGE;
}

/* ---- durations ---- */

static bool is_unit(const char *u, size_t len)
{
	static const char *const units[] = { "ns", "us", "ms", "s", "m", "h" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (strlen(units[i]) == len && !strncmp(u, units[i], len))
			return true;
	return false;
}

/* Say in one line what is wrong with a duration the library refused. */
static void explain_duration(const char *what, const char *s, int ret)
{
	const char *p = s, *u;

	if (*s == '-')
		return err("%s '%s': negative durations are not allowed", what, s);
	if (ret == -ERANGE)
		return err("%s '%s': too large (the limit is about 584 years)", what, s);
	while (*p) {
		u = p + strspn(p, "0123456789.");
		if (u == p)
			return err("%s '%s': not a duration (e.g. 250ms, 1.5s, 1m30s)", what, s);
		if (!*u)
			return err("%s '%s': missing unit (use ns, us, ms, s, m, h)", what, s);
		p = u + strcspn(u, "0123456789.");
		if (!is_unit(u, p - u))
			return err("%s '%s': unknown unit '%.*s' (use ns, us, ms, s, m, h)",
				   what, s, (int)(p - u), u);
	}
	err("%s '%s': not a duration (e.g. 250ms, 1.5s, 1m30s)", what, s);
}

static int parse_dur(const char *what, const char *s, uint64_t *ns)
{
	int ret = htw_parse_duration(s, ns);

	if (ret)
		explain_duration(what, s, ret);
	return ret;
}

static int parse_u64(const char *what, const char *s, uint64_t *v)
{
	char *end;

	if (*s >= '0' && *s <= '9') {
		errno = 0;
		*v = strtoull(s, &end, 10);
		if (!errno && !*end)
			return 0;
	}
	err("%s '%s': not a non-negative integer", what, s);
	return -EINVAL;
}

static const char *fmt_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < HTW_NSEC_PER_USEC)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < HTW_NSEC_PER_MSEC)
		snprintf(buf, len, "%.3fus", ns / 1e3);
	else if (ns < HTW_NSEC_PER_SEC)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
	return buf;
}

/* ---- the device ---- */

static int open_fail(int ret, const char *dev)
{
	if (ret == -ENOENT || ret == -ENODEV || ret == -ENXIO) {
		err("%s: %s: is the htwheel module loaded? load it with 'modprobe htwheel' or 'insmod htwheel.ko'",
		    dev, strerror(-ret));
		return EXIT_DEVICE;
	}
	if (ret == -EACCES || ret == -EPERM) {
		err("%s: %s: ask your administrator for access to the device",
		    dev, strerror(-ret));
		return EXIT_DEVICE;
	}
	if (ret == -EPROTONOSUPPORT) {
		err("%s: the device refused the API handshake: the htwheel module does not speak API version %d; update the module or this program",
		    dev, HTW_API_VERSION);
		return EXIT_DEVICE;
	}
	if (ret == -EINVAL) {
		err("%s: geometry refused: tick 10us..10s, slots up to 65536, max-pending up to the module's limit",
		    dev);
		return EXIT_USAGE;
	}
	err("%s: %s", dev, strerror(-ret));
	return EXIT_DEVICE;
}

static int session_open(struct session *s)
{
	int ret;

	s->params.device = getenv("HTWHEEL_DEVICE");
	ret = htw_open(&s->h, &s->params);
	if (ret)
		return open_fail(ret, s->params.device ?: HTW_DEVICE_PATH);
	return 0;
}

/* ---- timers of a session ---- */

static struct timer *find_timer(struct session *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->ntimers; i++)
		if (!strcmp(s->timers[i].name, name))
			return &s->timers[i];
	return NULL;
}

static struct timer *timer_by_handle(struct session *s, uint64_t handle)
{
	unsigned int i;

	for (i = 0; i < s->ntimers; i++)
		if (s->timers[i].handle == handle)
			return &s->timers[i];
	return NULL;
}

/* "DUR[:NAME]" into a new timer of @s (not yet scheduled). */
static int add_timer(struct session *s, const char *arg, bool periodic,
		     uint64_t cookie)
{
	char dur[64];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	struct timer *t;

	if (s->ntimers == MAX_TIMERS || n >= sizeof(dur)) {
		err("'%s': too many timers or too long", arg);
		return -EINVAL;
	}
	t = &s->timers[s->ntimers];
	memset(t, 0, sizeof(*t));
	memcpy(dur, arg, n);
	dur[n] = '\0';
	if (parse_dur("duration", dur, &t->delay_ns))
		return -EINVAL;
	if (periodic && !t->delay_ns) {
		err("period '%s': must be more than 0", dur);
		return -EINVAL;
	}
	t->period_ns = periodic ? t->delay_ns : 0;
	t->cookie = cookie;
	if (colon && colon[1])
		snprintf(t->name, sizeof(t->name), "%s", colon + 1);
	else
		snprintf(t->name, sizeof(t->name), "#%" PRIu64, cookie);
	if (find_timer(s, t->name)) {
		err("timer name '%s' used twice", t->name);
		return -EINVAL;
	}
	s->ntimers++;
	return 0;
}

static int add_cancel(struct session *s, const char *arg)
{
	const char *colon = strchr(arg, ':');
	struct cancel_at *c = &s->cancels[s->ncancels];
	char dur[64];
	size_t n;

	if (!colon || !colon[1] || (size_t)(colon - arg) >= sizeof(dur) ||
	    s->ncancels == MAX_TIMERS) {
		err("--cancel '%s': expected DUR:NAME", arg);
		return -EINVAL;
	}
	n = colon - arg;
	memcpy(dur, arg, n);
	dur[n] = '\0';
	if (parse_dur("--cancel", dur, &c->at_ns))
		return -EINVAL;
	snprintf(c->name, sizeof(c->name), "%s", colon + 1);
	c->done = false;
	s->ncancels++;
	return 0;
}

static int schedule_timer(struct session *s, struct timer *t)
{
	struct htw_timer_entry e = {
		.cookie = t->cookie,
		.expires = t->delay_ns,
		.period_ns = t->period_ns,
		.slack_ns = s->slack_ns,
	};
	char b[32];
	int ret;

	ret = htw_schedule_many(s->h, &e, 1);
	if (ret < 0) {
		err("schedule '%s' (%s): %s%s", t->name,
		    fmt_dur(b, sizeof(b), t->delay_ns), strerror(-ret),
		    ret == -EINVAL ? " (a period must be at least one tick)" : "");
		s->status = EXIT_FAIL;
		t->done = true;
		return ret;
	}
	t->handle = e.handle;
	return 0;
}

/* Schedule every timer given on the command line, as one batch. */
static int schedule_all(struct session *s)
{
	struct htw_timer_entry e[MAX_TIMERS];
	unsigned int i;
	int ret;

	if (!s->ntimers)
		return 0;
	memset(e, 0, sizeof(e[0]) * s->ntimers);
	for (i = 0; i < s->ntimers; i++) {
		e[i].cookie = s->timers[i].cookie;
		e[i].expires = s->timers[i].delay_ns;
		e[i].period_ns = s->timers[i].period_ns;
		e[i].slack_ns = s->slack_ns;
	}
	ret = htw_schedule_many(s->h, e, s->ntimers);
	if (ret < 0 && s->ntimers == 1)
		return schedule_timer(s, &s->timers[0]);
	/* Even a partial batch: the drain report names what did get in. */
	for (i = 0; ret > 0 && i < (unsigned int)ret; i++)
		s->timers[i].handle = e[i].handle;
	if (ret != (int)s->ntimers) {
		err("schedule: %s", ret < 0 ? strerror(-ret) :
		    "the device took only part of the batch (max-pending?)");
		s->status = EXIT_FAIL;
		return ret < 0 ? ret : -ENOSPC;
	}
	return 0;
}

static void cancel_timer(struct session *s, const char *name)
{
	struct timer *t = find_timer(s, name);
	uint64_t now = htw_now(s->h) - s->start_ns;
	char b[32];
	int ret;

	/* A bad stdin line, like the --cancel that session_run() refuses. */
	if (!t) {
		err("cancel: no timer named '%s'", name);
		s->status = EXIT_USAGE;
		return;
	}
	ret = htw_cancel(s->h, t->handle);
	/* A one-shot timer whose record we read is unknown to the kernel. */
	if (ret == -ENOENT && t->fired && !t->period_ns)
		ret = -EALREADY;
	printf("%12s  cancel %s: %s\n", fmt_dur(b, sizeof(b), now), t->name,
	       ret == 0 ? "cancelled" : ret == -EALREADY ? "already fired" :
	       ret == -ENOENT ? "not pending" : strerror(-ret));
	if (ret == 0)
		t->done = true;
}

/* ---- output ---- */

static void print_expiry(struct session *s, const struct htw_expiry *r)
{
	struct timer *t = timer_by_handle(s, r->handle);
	char now[32], dl[32], late[32];

	fmt_dur(now, sizeof(now), htw_now(s->h) - s->start_ns);
	fmt_dur(dl, sizeof(dl), r->deadline_ns - s->start_ns);
	fmt_dur(late, sizeof(late), r->expired_ns - r->deadline_ns);
	printf("%12s  fired %-8s cookie=%-4llu deadline=%-12s late=%s",
	       now, t ? t->name : "?", (unsigned long long)r->cookie, dl, late);
	if (r->overrun)
		printf(" overrun=%u", r->overrun);
	putchar('\n');
	if (t) {
		t->fired = true;
		t->done |= !(r->flags & HTW_EXPIRY_PERIODIC);
	}
}

static const char *clock_name(uint32_t clk)
{
	return clk == CLOCK_BOOTTIME ? "CLOCK_BOOTTIME" :
	       clk == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "?";
}

static void print_stats_json(const struct htw_stats *st)
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
	printf("]}\n");
}

static void print_row(const char *name, unsigned long long v)
{
	printf("  %-14s %llu\n", name, v);
}

static void print_stats_table(const struct htw_stats *st)
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
}

static int print_stats(struct htw *h, bool json)
{
	struct htw_stats st;
	int ret = htw_stats(h, &st);

	if (ret) {
		err("stats: %s", strerror(-ret));
		return EXIT_FAIL;
	}
	if (json) {
		print_stats_json(&st);
	} else {
		printf("statistics:\n");
		print_stats_table(&st);
	}
	return EXIT_OK;
}

/* Cancel what is left and say what never ran. */
static void drain_report(struct session *s)
{
	struct htw_unexpired u[64];
	char b[32];
	int n, i;

	n = htw_drain(s->h, u, 64);
	if (n < 0) {
		err("drain: %s", strerror(-n));
		s->status = EXIT_FAIL;
		return;
	}
	printf("never ran: %d timer%s\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n && i < 64; i++) {
		struct timer *t = timer_by_handle(s, u[i].handle);

		printf("  %-8s cookie=%-4llu %s remaining=%s\n",
		       t ? t->name : "?", (unsigned long long)u[i].cookie,
		       t && t->period_ns ? "periodic" : "one-shot",
		       fmt_dur(b, sizeof(b), u[i].remaining_ns));
	}
}

/* ---- the event loop ---- */

static bool all_done(struct session *s)
{
	unsigned int i;

	if (s->read_stdin)
		return false;
	for (i = 0; i < s->ntimers; i++)
		if (!s->timers[i].done)
			return false;
	for (i = 0; i < s->ncancels; i++)
		if (!s->cancels[i].done)
			return false;
	return true;
}

/* Run due --cancel actions; the time until the next one, or UINT64_MAX. */
static uint64_t run_cancels(struct session *s, uint64_t elapsed)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < s->ncancels; i++) {
		struct cancel_at *c = &s->cancels[i];

		if (c->done)
			continue;
		if (c->at_ns <= elapsed) {
			cancel_timer(s, c->name);
			c->done = true;
		} else if (c->at_ns - elapsed < next) {
			next = c->at_ns - elapsed;
		}
	}
	return next;
}

static void read_expiries(struct session *s)
{
	struct htw_expiry r[64];
	int n, i;

	while ((n = htw_read(s->h, r, 64)) > 0)
		for (i = 0; i < n; i++)
			print_expiry(s, &r[i]);
	if (n < 0) {
		err("read: %s", strerror(-n));
		s->status = EXIT_FAIL;
	}
}

static void stdin_command(struct session *s, char *line)
{
	char *cmd = strtok(line, " \t"), *a1 = strtok(NULL, " \t");
	char *a2 = strtok(NULL, " \t");
	char arg[128];
	bool every;

	if (!cmd || *cmd == '#')
		return;
	every = !strcmp(cmd, "every");
	if ((every || !strcmp(cmd, "at")) && a1) {
		snprintf(arg, sizeof(arg), "%s%s%s", a1, a2 ? ":" : "", a2 ?: "");
		if (add_timer(s, arg, every, s->ntimers))
			s->status = EXIT_USAGE;
		else
			schedule_timer(s, &s->timers[s->ntimers - 1]);
	} else if (!strcmp(cmd, "cancel") && a1) {
		cancel_timer(s, a1);
	} else if (!strcmp(cmd, "stats")) {
		print_stats(s->h, s->json);
	} else {
		err("stdin: unknown command '%s' (at DUR [NAME], every DUR [NAME], cancel NAME, stats)",
		    cmd);
		s->status = EXIT_USAGE;
	}
}

/* Take what stdin has; false at end of file. */
static bool read_stdin(struct session *s)
{
	ssize_t n = read(0, s->line + s->line_len,
			 sizeof(s->line) - 1 - s->line_len);
	char *nl;

	if (n <= 0) {
		if (s->line_len) {
			s->line[s->line_len] = '\0';
			stdin_command(s, s->line);
		}
		return n < 0 && errno == EINTR;
	}
	s->line_len += n;
	s->line[s->line_len] = '\0';
	while ((nl = strchr(s->line, '\n'))) {
		*nl = '\0';
		stdin_command(s, s->line);
		s->line_len -= nl + 1 - s->line;
		memmove(s->line, nl + 1, s->line_len + 1);
	}
	/* A line longer than the buffer: take it as it is. */
	if (s->line_len == sizeof(s->line) - 1) {
		stdin_command(s, s->line);
		s->line_len = 0;
	}
	return true;
}

static struct timespec ts_of(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / HTW_NSEC_PER_SEC,
		.tv_nsec = ns % HTW_NSEC_PER_SEC,
	};
	return ts;
}

/* One wait; false once the session should end. */
static bool loop_once(struct session *s, const sigset_t *unblocked)
{
	struct pollfd pfd[2] = {
		{ .fd = htw_fd(s->h), .events = POLLIN },
		{ .fd = 0, .events = POLLIN },
	};
	uint64_t elapsed = htw_now(s->h) - s->start_ns, wait;
	struct timespec ts;
	int n;

	if (s->for_ns && elapsed >= s->for_ns)
		return false;
	wait = run_cancels(s, elapsed);
	if (s->for_ns && s->for_ns - elapsed < wait)
		wait = s->for_ns - elapsed;
	if (all_done(s))
		return false;
	ts = ts_of(wait);
	n = ppoll(pfd, s->read_stdin ? 2 : 1, wait == UINT64_MAX ? NULL : &ts,
		  unblocked);
	if (n < 0)
		return errno != EINTR;
	if (pfd[0].revents)
		read_expiries(s);
	if (s->read_stdin && pfd[1].revents)
		s->read_stdin = read_stdin(s);
	return true;
}

static void on_signal(int sig)
{
	(void)sig;
}

static void run_loop(struct session *s)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;

	/* A handler that does nothing: the signal's only job is EINTR. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* SIGINT/SIGTERM only interrupt ppoll(): the session still drains. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);
	while (loop_once(s, &old))
		;
	/* Records that arrived with the end still count as fired. */
	read_expiries(s);
}

static int session_run(struct session *s)
{
	unsigned int i;
	int ret;

	for (i = 0; i < s->ncancels; i++) {
		if (!find_timer(s, s->cancels[i].name)) {
			err("--cancel: no timer named '%s'", s->cancels[i].name);
			return EXIT_USAGE;
		}
	}
	ret = session_open(s);
	if (ret)
		return ret;
	s->start_ns = htw_now(s->h);
	if (!schedule_all(s))
		run_loop(s);
	drain_report(s);
	if (s->show_stats && print_stats(s->h, s->json))
		s->status = EXIT_FAIL;
	htw_close(s->h);
	return s->status;
}

/* ---- command lines ---- */

/* getopt_long() values: distinct, above any short option's character. */
enum {
	OPT_AT = 256, OPT_EVERY, OPT_CANCEL, OPT_FOR, OPT_STATS, OPT_JSON,
	OPT_TICK, OPT_SLOTS, OPT_MAX_PENDING, OPT_BOOTTIME, OPT_SLACK,
	OPT_COOKIE, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "at", required_argument, NULL, OPT_AT },
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "cancel", required_argument, NULL, OPT_CANCEL },
	{ "for", required_argument, NULL, OPT_FOR },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "tick", required_argument, NULL, OPT_TICK },
	{ "slots", required_argument, NULL, OPT_SLOTS },
	{ "max-pending", required_argument, NULL, OPT_MAX_PENDING },
	{ "boottime", no_argument, NULL, OPT_BOOTTIME },
	{ "slack", required_argument, NULL, OPT_SLACK },
	{ "cookie", required_argument, NULL, OPT_COOKIE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The long name of @opt, looked up so that the table's order is free. */
static const char *option_name(int opt)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/*
 * What a command's options set: the session, and what only schedule
 * takes, which applies to timers given after the options are read.
 */
struct cmdline {
	struct session *s;
	uint64_t period_ns;	/* schedule --every; 0: one-shot timers */
	uint64_t cookie;	/* schedule --cookie: the first timer's */
};

/* Options common to every command that opens an instance. */
static int geometry_opt(struct session *s, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case OPT_TICK:
		return parse_dur("--tick", arg, &s->params.tick_ns);
	case OPT_SLOTS:
		if (parse_u64("--slots", arg, &v))
			return -EINVAL;
		if (v > UINT32_MAX) {
			err("--slots '%s': too large", arg);
			return -EINVAL;
		}
		s->params.slots = v;
		return 0;
	case OPT_MAX_PENDING:
		return parse_u64("--max-pending", arg, &s->params.max_pending);
	case OPT_BOOTTIME:
		s->params.clockid = CLOCK_BOOTTIME;
		return 0;
	case OPT_SLACK:
		return parse_dur("--slack", arg, &s->slack_ns);
	case OPT_FOR:
		if (parse_dur("--for", arg, &s->for_ns))
			return -EINVAL;
		if (!s->for_ns) {
			err("--for '%s': must be more than 0", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_STATS:
		s->show_stats = true;
		return 0;
	case OPT_JSON:
		s->json = true;
		return 0;
	}
	err("%s: option not valid here", option_name(opt));
	return -EINVAL;
}

/* The argument getopt_long() refused. */
static const char *bad_arg(char **argv)
{
	const char *a = argv[optind - 1];

	return a ? a : "?";
}

/*
 * getopt_long() over a command's arguments; @fn handles each option.
 * Prints one line and returns -EINVAL on the first bad one.
 */
static int parse_opts(struct cmdline *cl, int argc, char **argv,
		      int (*fn)(struct cmdline *cl, int opt, const char *arg))
{
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (opt == 'h' || opt == OPT_HELP) {
			usage(stdout);
			exit(EXIT_OK);
		}
		if (opt == '?' || opt == ':') {
			err("%s: unknown option or missing argument (see htwheel --help)",
			    bad_arg(argv));
			return -EINVAL;
		}
		if (fn(cl, opt, optarg))
			return -EINVAL;
	}
	return 0;
}

static int run_opt(struct cmdline *cl, int opt, const char *arg)
{
	struct session *s = cl->s;

	switch (opt) {
	case OPT_AT:
		return add_timer(s, arg, false, s->ntimers);
	case OPT_EVERY:
		return add_timer(s, arg, true, s->ntimers);
	case OPT_CANCEL:
		return add_cancel(s, arg);
	}
	return geometry_opt(s, opt, arg);
}

static int cmd_run(struct session *s, int argc, char **argv, bool watch)
{
	struct cmdline cl = { .s = s };

	if (parse_opts(&cl, argc, argv, run_opt))
		return EXIT_USAGE;
	if (optind < argc) {
		err("run: unexpected argument '%s' (timers are --at/--every)",
		    argv[optind]);
		return EXIT_USAGE;
	}
	s->read_stdin = watch;
	if (!watch && !s->ntimers) {
		err("run: no timers (give --at DUR or --every DUR)");
		return EXIT_USAGE;
	}
	return session_run(s);
}

static int schedule_opt(struct cmdline *cl, int opt, const char *arg)
{
	switch (opt) {
	case OPT_EVERY:
		if (parse_dur("--every", arg, &cl->period_ns))
			return -EINVAL;
		if (!cl->period_ns) {
			err("--every '%s': must be more than 0", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_COOKIE:
		return parse_u64("--cookie", arg, &cl->cookie);
	}
	return geometry_opt(cl->s, opt, arg);
}

static int cmd_schedule(struct session *s, int argc, char **argv)
{
	struct cmdline cl = { .s = s };
	int i;

	/* Permute: "schedule 1s --every 100ms" as well as the other order. */
	if (parse_opts(&cl, argc, argv, schedule_opt))
		return EXIT_USAGE;
	if (optind >= argc) {
		err("schedule: no durations (e.g. htwheel schedule 250ms 1s)");
		return EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		if (add_timer(s, argv[i], false, cl.cookie + i - optind))
			return EXIT_USAGE;
		s->timers[s->ntimers - 1].period_ns = cl.period_ns;
	}
	return session_run(s);
}

static int stats_opt(struct cmdline *cl, int opt, const char *arg)
{
	if (opt == OPT_FOR || opt == OPT_SLACK || opt == OPT_STATS) {
		err("stats: --%s is not an option of stats", option_name(opt));
		return -EINVAL;
	}
	return geometry_opt(cl->s, opt, arg);
}

static void print_module_params(bool json)
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

static int cmd_stats(struct session *s, int argc, char **argv)
{
	struct cmdline cl = { .s = s };
	int ret;

	if (parse_opts(&cl, argc, argv, stats_opt))
		return EXIT_USAGE;
	if (optind < argc) {
		err("stats: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	ret = session_open(s);
	if (ret)
		return ret;
	if (s->json) {
		printf("{\"module\": {");
		print_module_params(true);
		printf("},\n \"instance\": ");
	} else {
		printf("a fresh instance (timers live and die with the process that made them):\n");
	}
	ret = print_stats(s->h, s->json);
	if (s->json) {
		printf("}\n");
	} else {
		printf("module parameters:\n");
		print_module_params(false);
	}
	htw_close(s->h);
	return ret;
}

static int cmd_info(struct session *s)
{
	int ret = session_open(s);

	if (ret)
		return ret;
	printf("device:    %s\n", s->params.device ?: HTW_DEVICE_PATH);
	printf("api:       %u\n", HTW_API_VERSION);
	printf("library:   %d.%d\n", LIBHTWHEEL_VERSION_MAJOR,
	       LIBHTWHEEL_VERSION_MINOR);
	printf("clock:     %s\n", clock_name(s->params.clockid));
	printf("tick:      %" PRIu64 " ns\n", s->params.tick_ns);
	printf("slots:     %u x %u levels\n", s->params.slots, s->params.levels);
	printf("max pending: %" PRIu64 "\n", s->params.max_pending);
	htw_close(s->h);
	return EXIT_OK;
}

/* "-5ms" would be taken for an option; catch it as the bad duration it is. */
static int reject_negative(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-' &&
		    ((argv[i][1] >= '0' && argv[i][1] <= '9') || argv[i][1] == '.')) {
			explain_duration("duration", argv[i], -EINVAL);
			return -EINVAL;
		}
	}
	return 0;
}

static int dispatch(struct session *s, int argc, char **argv)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "run"))
		return cmd_run(s, argc, argv, false);
	if (!strcmp(cmd, "watch"))
		return cmd_run(s, argc, argv, true);
	if (!strcmp(cmd, "schedule"))
		return cmd_schedule(s, argc, argv);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(s, argc, argv);
	if (!strcmp(cmd, "info") && argc == 1)
		return cmd_info(s);
	err("unknown command '%s' (see htwheel --help)", cmd);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static struct session s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("htwheel %s (libhtwheel %d.%d, API %d)\n", HTW_CLI_VERSION,
		       LIBHTWHEEL_VERSION_MAJOR, LIBHTWHEEL_VERSION_MINOR,
		       HTW_API_VERSION);
		return EXIT_OK;
	}
	if (reject_negative(argc, argv))
		return EXIT_USAGE;
	return dispatch(&s, argc - 1, argv + 1);
}
