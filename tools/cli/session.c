// SPDX-License-Identifier: GPL-2.0
/*
 * A session of the htwheel CLI: one instance of the device and the timers
 * the command line (and, for watch, stdin) gave it.  Timers belong to the
 * open file that scheduled them, so the session schedules them, waits for
 * and prints their expiries in one event loop, and ends by draining what
 * is left; see htwheel(1).  A timer is a handle timer of the wheel, or a
 * slot of a timer table of the instance's (--table, watch's 'table'),
 * whose records come from the table's completion ring instead of read().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Handle timers the drain report describes; it counts them all. */
#define DRAIN_LISTED	64

/* ---- the device ---- */

static int open_fail(int ret, const char *dev)
{
	if (ret == -ENOENT || ret == -ENODEV || ret == -ENXIO) {
		err("%s: %s: is the htwheel module loaded? %s", dev, strerror(-ret),
		    "load it with 'modprobe htwheel' or 'insmod htwheel.ko'");
		return EXIT_DEVICE;
	}
	if (ret == -EACCES || ret == -EPERM) {
		err("%s: %s: ask your administrator for access to the device",
		    dev, strerror(-ret));
		return EXIT_DEVICE;
	}
	if (ret == -EPROTONOSUPPORT) {
		err("%s: the device refused the API handshake: %s %d; %s", dev,
		    "the htwheel module does not speak API version",
		    HTW_API_VERSION, "update the module or this program");
		return EXIT_DEVICE;
	}
	if (ret == -EINVAL) {
		err("%s: geometry refused: %s", dev,
		    "tick 10us..10s, slots up to 65536, max-pending up to the module's limit");
		return EXIT_USAGE;
	}
	err("%s: %s", dev, strerror(-ret));
	return EXIT_DEVICE;
}

int session_open(struct session *s)
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

struct timer *timer_by_handle(struct session *s, uint64_t handle)
{
	unsigned int i;

	/* A table slot has no handle: its 0 must not match anything. */
	for (i = 0; i < s->ntimers; i++)
		if (!s->timers[i].in_table && s->timers[i].handle == handle)
			return &s->timers[i];
	return NULL;
}

/* "DUR[:NAME]" into a new timer of @s (not yet scheduled). */
int add_timer(struct session *s, const char *arg, bool periodic,
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
		snprintf(t->name, sizeof(t->name), "#%llu", (unsigned long long)cookie);
	if (find_timer(s, t->name)) {
		err("timer name '%s' used twice", t->name);
		return -EINVAL;
	}
	s->ntimers++;
	return 0;
}

int add_cancel(struct session *s, const char *arg)
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

/*
 * --table: the command line's timers become slots of the shared timer
 * table, which fire once, at the instance's tick, with no slack.
 */
int use_table(struct session *s)
{
	unsigned int i;

	if (!s->use_table)
		return 0;
	if (s->slack_ns) {
		err("--table: table slots have no slack (leave out --slack)");
		return -EINVAL;
	}
	for (i = 0; i < s->ntimers; i++) {
		if (s->timers[i].period_ns) {
			err("--table: table slots fire once, '%s' is periodic (%s)",
			    s->timers[i].name, "leave out --every");
			return -EINVAL;
		}
		s->timers[i].in_table = true;
	}
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

/* Schedule every handle timer given on the command line, as one batch. */
static int schedule_all(struct session *s)
{
	struct htw_timer_entry e[MAX_TIMERS];
	unsigned int i, n = 0, idx[MAX_TIMERS];
	int ret;

	for (i = 0; i < s->ntimers; i++) {
		if (s->timers[i].in_table)
			continue;
		memset(&e[n], 0, sizeof(e[n]));
		e[n].cookie = s->timers[i].cookie;
		e[n].expires = s->timers[i].delay_ns;
		e[n].period_ns = s->timers[i].period_ns;
		e[n].slack_ns = s->slack_ns;
		idx[n++] = i;
	}
	if (!n)
		return 0;
	ret = htw_schedule_many(s->h, e, n);
	if (ret < 0 && n == 1)
		return schedule_timer(s, &s->timers[idx[0]]);
	/* Even a partial batch: the drain report names what did get in. */
	for (i = 0; ret > 0 && i < (unsigned int)ret; i++)
		s->timers[idx[i]].handle = e[i].handle;
	if (ret != (int)n) {
		err("schedule: %s", ret < 0 ? strerror(-ret) :
		    "the device took only part of the batch (max-pending?)");
		s->status = EXIT_FAIL;
		return ret < 0 ? ret : -ENOSPC;
	}
	return 0;
}

/* ---- slots of the timer table ---- */

/*
 * Map the instance's table, of @entries slots, unless it has one: 0, or
 * an EXIT_* code.  A module without the table cannot run such timers at
 * all, like one that refuses the handshake.
 */
static int table_open(struct session *s, uint32_t entries)
{
	const char *dev = s->params.device ?: HTW_DEVICE_PATH;
	int ret;

	if (s->tab)
		return 0;
	ret = htw_table2_create(s->h, entries, 0, &s->tab);
	if (ret == -EOPNOTSUPP) {
		err("%s: no shared timer table: %s; %s", dev,
		    "the htwheel module does not report HTW_FEATURE_TABLE",
		    "update the module");
		return EXIT_DEVICE;
	}
	if (ret) {
		err("%s: shared timer table of %u slots: %s", dev, entries,
		    strerror(-ret));
		return EXIT_FAIL;
	}
	return 0;
}

/* A deadline @delay_ns after @from; one beyond the clock's range never comes. */
static uint64_t deadline_after(uint64_t from, uint64_t delay_ns)
{
	return delay_ns > UINT64_MAX - from ? UINT64_MAX : from + delay_ns;
}

/* Arm or move table timer @t to @d: htw_table2_arm()'s answer. */
static int set_slot(struct session *s, struct timer *t, uint64_t d)
{
	uint64_t gen;
	int ret = htw_table2_arm(s->tab, t - s->timers, d, &gen);

	if (ret >= 0) {
		t->prev_gen = t->gen;
		t->prev_deadline_ns = t->deadline_ns;
		t->gen = gen;
		t->deadline_ns = d;
		t->cancelled = false;
	}
	return ret;
}

/* Arm table timer @t, due its delay after @from (a reading of htw_now()). */
static int arm_slot(struct session *s, struct timer *t, uint64_t from)
{
	uint64_t d = deadline_after(from, t->delay_ns);
	char b[32];
	int ret;

	ret = set_slot(s, t, d);
	if (ret < 0) {
		err("table '%s' (%s): %s", t->name,
		    fmt_dur(b, sizeof(b), t->delay_ns), strerror(-ret));
		s->status = EXIT_FAIL;
		t->done = t->cancelled = true;
		return ret;
	}
	return 0;
}

/*
 * Arm the table timers given on the command line, due from the start.
 * Like a partial batch, a failure ends the session: those not armed
 * never were, and the drain need not wait for them.
 */
static int arm_all(struct session *s)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < s->ntimers; i++) {
		if (!s->timers[i].in_table)
			continue;
		if (ret)
			s->timers[i].done = s->timers[i].cancelled = true;
		else
			ret = arm_slot(s, &s->timers[i], s->start_ns);
	}
	return ret;
}

/* Move table timer @t to @delay_ns from now: htw_table2_arm()'s answer. */
static int rearm_slot(struct session *s, struct timer *t, uint64_t delay_ns)
{
	return set_slot(s, t, deadline_after(htw_now(s->h), delay_ns));
}

/*
 * Disarm table timer @t, the answer put as htw_cancel() would: 0
 * cancelled; -EALREADY it fired (its record read, or still in the ring);
 * -ENOENT its last arming was cancelled already.
 */
static int cancel_slot(struct session *s, struct timer *t)
{
	int ret = htw_table2_cancel(s->tab, t - s->timers);

	if (ret < 0)
		return ret;
	if (ret) {
		t->cancelled = true;
		return 0;
	}
	return t->cancelled ? -ENOENT : -EALREADY;
}

/* The timer of a record from the ring: the slot is its index. */
static struct timer *timer_by_slot(struct session *s, uint32_t slot)
{
	if (slot >= s->ntimers || !s->timers[slot].in_table)
		return NULL;
	return &s->timers[slot];
}

/* Print @c; only the record of the generation armed last ends its timer. */
static void take_table_record(struct session *s, const struct htw_table2_cqe *c)
{
	struct timer *t = timer_by_slot(s, c->slot);

	print_table_expiry(s, t, c);
	if (!t)
		return;
	t->fired = true;
	if (c->gen == t->gen)
		t->done = true;
}

static void reap_table(struct session *s)
{
	struct htw_table2_cqe c[64];
	int n, i;

	if (!s->tab)
		return;
	while ((n = htw_table2_reap(s->tab, c, ARRAY_SIZE(c))) > 0)
		for (i = 0; i < n; i++)
			take_table_record(s, &c[i]);
}

static void cancel_timer(struct session *s, const char *name)
{
	struct timer *t = find_timer(s, name);
	uint64_t now = htw_now(s->h) - s->start_ns;
	int ret;

	/* A bad stdin line, like the --cancel that session_run() refuses. */
	if (!t) {
		err("cancel: no timer named '%s'", name);
		s->status = EXIT_USAGE;
		return;
	}
	if (t->in_table) {
		ret = cancel_slot(s, t);
	} else {
		ret = htw_cancel(s->h, t->handle);
		/* A one-shot timer whose record we read is unknown to the kernel. */
		if (ret == -ENOENT && t->fired && !t->period_ns)
			ret = -EALREADY;
	}
	print_cancel(now, t->name, ret);
	if (ret == 0)
		t->done = true;
}

/* Move timer @name to @dur from now, keeping its handle or slot. */
static void rearm_timer(struct session *s, const char *name, const char *dur)
{
	struct timer *t = find_timer(s, name);
	uint64_t now = htw_now(s->h) - s->start_ns, delay;
	int ret;

	if (!t) {
		err("rearm: no timer named '%s'", name);
		s->status = EXIT_USAGE;
		return;
	}
	if (parse_dur("rearm", dur, &delay)) {
		s->status = EXIT_USAGE;
		return;
	}
	if (t->in_table)
		ret = rearm_slot(s, t, delay);
	else
		ret = htw_rearm(s->h, t->handle, delay);
	print_rearm(now, t, delay, ret);
	/* Pending again, whatever it was: the session waits for it. */
	if (ret >= 0) {
		t->delay_ns = delay;
		t->done = false;
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

/* Print @r and note what it says about its timer. */
static void take_expiry(struct session *s, const struct htw_expiry *r)
{
	struct timer *t = timer_by_handle(s, r->handle);

	print_expiry(s, t, r);
	if (t) {
		t->fired = true;
		t->done |= !(r->flags & HTW_EXPIRY_PERIODIC);
	}
}

/* Every record there is: read() has the handle timers', the ring the slots'. */
static void read_expiries(struct session *s)
{
	struct htw_expiry r[64];
	int n, i;

	while ((n = htw_read(s->h, r, 64)) > 0)
		for (i = 0; i < n; i++)
			take_expiry(s, &r[i]);
	if (n < 0) {
		err("read: %s", strerror(-n));
		s->status = EXIT_FAIL;
	}
	reap_table(s);
}

/* ---- the end: drain ---- */

static bool table_settled(struct session *s)
{
	unsigned int i;

	for (i = 0; i < s->ntimers; i++)
		if (s->timers[i].in_table && !s->timers[i].done)
			return false;
	return true;
}

/*
 * A slot whose cancel found it fired has its record in the ring, or about
 * to be: the kernel claims the slot, then writes the record.  Wait for
 * those, a little, so that what fired is printed as fired.
 */
static void wait_table_records(struct session *s)
{
	uint64_t end = htw_now(s->h) + 100 * HTW_NSEC_PER_MSEC, now;

	read_expiries(s);
	while (!table_settled(s) && (now = htw_now(s->h)) < end) {
		struct pollfd pfd = { .fd = s->tab->fd, .events = POLLIN };

		if (poll(&pfd, 1, (end - now) / HTW_NSEC_PER_MSEC + 1) < 0)
			break;
		read_expiries(s);
	}
}

/* Disarm every table slot: those still armed join @nr; how many did. */
static int drain_table(struct session *s, struct never_ran *nr)
{
	uint64_t now = htw_now(s->h);
	unsigned int i;
	int n = 0;

	if (!s->tab)
		return 0;
	for (i = 0; i < s->ntimers; i++) {
		struct timer *t = &s->timers[i];

		if (!t->in_table || htw_table2_cancel(s->tab, i) != 1)
			continue;
		t->done = t->cancelled = true;
		nr[n].t = t;
		nr[n].cookie = t->cookie;
		nr[n++].remaining_ns = t->deadline_ns > now ? t->deadline_ns - now : 0;
	}
	wait_table_records(s);
	return n;
}

/* Cancel what is left and say what never ran. */
static void drain_report(struct session *s)
{
	static struct never_ran nr[DRAIN_LISTED + MAX_TIMERS];
	struct htw_unexpired u[DRAIN_LISTED];
	int n, i, listed, slots;

	n = htw_drain(s->h, u, ARRAY_SIZE(u));
	if (n < 0) {
		err("drain: %s", strerror(-n));
		s->status = EXIT_FAIL;
		return;
	}
	for (i = 0; i < n && i < (int)ARRAY_SIZE(u); i++) {
		nr[i].t = timer_by_handle(s, u[i].handle);
		nr[i].cookie = u[i].cookie;
		nr[i].remaining_ns = u[i].remaining_ns;
	}
	listed = i;
	slots = drain_table(s, nr + listed);
	print_never_ran(nr, n + slots, listed + slots);
}

/* ---- stdin of watch ---- */

/* 'at', 'every' or 'table' DUR [NAME]: a timer due DUR from now. */
static void stdin_timer(struct session *s, const char *kind, const char *dur,
			const char *name)
{
	bool every = !strcmp(kind, "every"), table = !strcmp(kind, "table");
	struct timer *t;
	char arg[128];
	int ret;

	snprintf(arg, sizeof(arg), "%s%s%s", dur, name ? ":" : "", name ?: "");
	if (add_timer(s, arg, every, s->ntimers)) {
		s->status = EXIT_USAGE;
		return;
	}
	t = &s->timers[s->ntimers - 1];
	if (!table) {
		schedule_timer(s, t);
		return;
	}
	ret = table_open(s, MAX_TIMERS);
	if (ret) {
		/* No table, no timer: its name is free again. */
		s->ntimers--;
		s->status = ret;
		return;
	}
	t->in_table = true;
	arm_slot(s, t, htw_now(s->h));
}

static void stdin_command(struct session *s, char *line)
{
	char *cmd = strtok(line, " \t"), *a1 = strtok(NULL, " \t");
	char *a2 = strtok(NULL, " \t");

	if (!cmd || *cmd == '#')
		return;
	if ((!strcmp(cmd, "at") || !strcmp(cmd, "every") ||
	     !strcmp(cmd, "table")) && a1) {
		stdin_timer(s, cmd, a1, a2);
	} else if (!strcmp(cmd, "cancel") && a1) {
		cancel_timer(s, a1);
	} else if (!strcmp(cmd, "rearm") && a1 && a2) {
		rearm_timer(s, a1, a2);
	} else if (!strcmp(cmd, "stats")) {
		print_stats(s->h, s->tab, s->json);
	} else {
		err("stdin: unknown command '%s' (%s)", cmd,
		    "at DUR [NAME], every DUR [NAME], table DUR [NAME], cancel NAME, "
		    "rearm NAME DUR, stats");
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
	struct pollfd pfd[3] = {
		{ .fd = htw_fd(s->h), .events = POLLIN },
		{ .fd = s->tab ? s->tab->fd : -1, .events = POLLIN },
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
	n = ppoll(pfd, s->read_stdin ? 3 : 2, wait == UINT64_MAX ? NULL : &ts,
		  unblocked);
	if (n < 0)
		return errno != EINTR;
	if (pfd[0].revents || pfd[1].revents)
		read_expiries(s);
	if (s->read_stdin && pfd[2].revents)
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

/*
 * The instance, and its table if the command line has table timers: one
 * slot each, or as many as watch may add.  0, or an EXIT_* code.
 */
static int session_start(struct session *s)
{
	int ret = session_open(s);

	if (ret || !s->use_table || !s->ntimers)
		return ret;
	ret = table_open(s, s->read_stdin ? MAX_TIMERS : s->ntimers);
	if (ret)
		htw_close(s->h);
	return ret;
}

int session_run(struct session *s)
{
	unsigned int i;
	int ret;

	for (i = 0; i < s->ncancels; i++) {
		if (!find_timer(s, s->cancels[i].name)) {
			err("--cancel: no timer named '%s'", s->cancels[i].name);
			return EXIT_USAGE;
		}
	}
	ret = session_start(s);
	if (ret)
		return ret;
	s->start_ns = htw_now(s->h);
	if (!schedule_all(s) && !arm_all(s))
		run_loop(s);
	drain_report(s);
	if (s->show_stats && print_stats(s->h, s->tab, s->json))
		s->status = EXIT_FAIL;
	if (s->tab)
		htw_table2_close(s->tab);
	htw_close(s->h);
	return s->status;
}
