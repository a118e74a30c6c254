// SPDX-License-Identifier: GPL-2.0
/*
 * The htwheel CLI: its output on good input, and one clear line and a
 * non-zero exit on every kind of bad input.  The CLI is build/htwheel,
 * found next to this program's directory.  The tests of --table skip on
 * a kernel without the shared timer table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define OUT_MAX	65536

struct result {
	int status;			/* exit code, or 128 + signal */
	double elapsed_ms;		/* wall time from fork to exit */
	char out[OUT_MAX];
	char err[OUT_MAX];
};

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char cli[PATH_MAX];

/* build/htwheel */
static void find_cli(void)
{
	if (htw_test_build_path(cli, sizeof(cli), "htwheel"))
		abort();
}

/* Run the CLI with @argv (NULL-terminated, without argv[0]); stdin @in. */
static void run_in(struct result *r, const char *in, const char *env,
		   const char *const *args)
{
	char *argv[64] = { cli };
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	char outf[PATH_MAX], errf[PATH_MAX];
	int o, e, p[2], i, st;
	pid_t pid;

	snprintf(outf, sizeof(outf), "%s/cli-out-XXXXXX", tmp);
	snprintf(errf, sizeof(errf), "%s/cli-err-XXXXXX", tmp);
	o = mkstemp(outf);
	e = mkstemp(errf);

	for (i = 0; args[i]; i++)
		argv[i + 1] = (char *)args[i];
	if (o < 0 || e < 0 || pipe(p))
		abort();
	r->elapsed_ms = mono_ms();
	pid = fork();
	if (!pid) {
		dup2(p[0], 0);
		dup2(o, 1);
		dup2(e, 2);
		close(p[1]);
		if (env)
			putenv((char *)env);
		execv(cli, argv);
		_exit(127);
	}
	close(p[0]);
	if (in && write(p[1], in, strlen(in)) < 0)
		abort();
	close(p[1]);
	waitpid(pid, &st, 0);
	r->elapsed_ms = mono_ms() - r->elapsed_ms;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	htw_test_slurp(o, r->out, sizeof(r->out));
	htw_test_slurp(e, r->err, sizeof(r->err));
	close(o);
	close(e);
	unlink(outf);
	unlink(errf);
}

#define RUN(r, ...) run_in(r, NULL, NULL, (const char *const[]){ __VA_ARGS__, NULL })

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

/* A duration as the CLI prints it ("12ns", "1.500us", "20.031ms", "3.000s"), in ms. */
static double dur_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s)
		return -1;
	if (!strncmp(end, "ns", 2))
		return v / 1e6;
	if (!strncmp(end, "us", 2))
		return v / 1e3;
	if (!strncmp(end, "ms", 2))
		return v;
	if (*end == 's')
		return v * 1e3;
	return -1;
}

/*
 * The line of @out where the CLI reports @what about timer @name
 * ("fired", "cancel", "rearm"), the @nth such line (from 0); NULL if none.  Its
 * first field is the time since the session started, in ms, to *@at_ms.
 */
static const char *event_line(const char *out, const char *what, const char *name,
			      int nth, double *at_ms)
{
	char key[64];
	const char *p = out, *bol;

	snprintf(key, sizeof(key), "  %s %s%s", what, name,
		 strcmp(what, "fired") ? ":" : " ");
	while ((p = strstr(p, key))) {
		for (bol = p; bol > out && bol[-1] != '\n'; bol--)
			;
		if (nth-- == 0) {
			if (at_ms)
				*at_ms = dur_ms(bol + strspn(bol, " "));
			return bol;
		}
		p++;
	}
	return NULL;
}

/* A field "key=VALUE" of the line at @line, as a duration in ms. */
static double line_field_ms(const char *line, const char *key)
{
	const char *eol = strchr(line, '\n'), *p = strstr(line, key);

	if (!p || (eol && p > eol))
		return -1;
	return dur_ms(p + strlen(key));
}

/*
 * Timer @name in the drain report after "never ran:": 1 and its remaining
 * time in ms to *@remaining_ms if listed there, else 0.
 */
static int left_for_drain(const char *out, const char *name, double *remaining_ms)
{
	const char *p = strstr(out, "never ran: ");
	char key[64];

	if (!p)
		return 0;
	snprintf(key, sizeof(key), "\n  %-8s cookie=", name);
	p = strstr(p, key);
	if (!p)
		return 0;
	*remaining_ms = line_field_ms(p + 1, "remaining=");
	return 1;
}

static int never_ran_count(const char *out)
{
	const char *p = strstr(out, "never ran: ");
	int n = -1;

	if (p)
		sscanf(p, "never ran: %d", &n);
	return n;
}

/* The worst lateness of any expiry the CLI printed, in ms. */
static double worst_late_ms(const char *out)
{
	const char *p = out;
	double worst = 0, late;

	while ((p = strstr(p, " late="))) {
		late = dur_ms(p + 6);
		if (late > worst)
			worst = late;
		p++;
	}
	return worst;
}

#define TICK_MS	1.0	/* the CLI's default geometry: a 1 ms tick */

/*
 * Where timer @name ended, judged by the CLI's own clock readings rather
 * than by how long the test thinks things take.  A one-shot timer fired
 * once or was left to the drain, never both; a periodic one is left to the
 * drain (nothing cancels it).  What fired was read after its deadline and
 * its expiry, within the run.  What the drain found past its deadline
 * (remaining 0) may only have fallen due within the last tick of the
 * @window_ms session, give or take the worst lateness this run measured:
 * the wheel fires at the first tick after a deadline, and a session that
 * ran late (a loaded machine) only gave the tick more time to run.  The
 * deadline that was due is @first_ms after the start at the earliest
 * (-1: unknown, not checked) or, once it fired, the next period after the
 * last record.  @period_ms is 0 for one-shot timers.  Returns the number
 * of records.
 */
static int expect_accounted(struct __test_metadata *_metadata,
			    const struct result *r, const char *name,
			    double period_ms, double first_ms, double window_ms)
{
	double at, deadline = -1, late, remaining = -1, due = first_ms;
	double grace = TICK_MS + worst_late_ms(r->out);
	const char *line, *ov;
	int fired = 0, left;

	while ((line = event_line(r->out, "fired", name, fired, &at))) {
		deadline = line_field_ms(line, "deadline=");
		late = line_field_ms(line, "late=");
		EXPECT_LE(0, deadline) TH_LOG("%s", line);
		EXPECT_LE(0, late) TH_LOG("%s", line);
		EXPECT_LE(deadline + late, at + 0.001) TH_LOG("%s", line);
		EXPECT_GE(r->elapsed_ms, at) TH_LOG("%s", line);
		ov = strstr(line, "overrun=");
		if (ov && ov > strchr(line, '\n'))
			ov = NULL;
		due = deadline + period_ms * (1 + (ov ? atoi(ov + 8) : 0));
		fired++;
	}
	left = left_for_drain(r->out, name, &remaining);
	if (period_ms) {
		EXPECT_EQ(1, left) TH_LOG("periodic %s not in the drain:\n%s", name, r->out);
	} else {
		EXPECT_EQ(1, fired + left) TH_LOG("%s: fired %d, drained %d:\n%s",
						  name, fired, left, r->out);
	}
	if (left && remaining == 0 && due >= 0)
		EXPECT_LE(window_ms - grace, due)
			TH_LOG("%s due at %.3f ms, unfired in a %.0f ms run (grace %.3f ms):\n%s",
			       name, due, window_ms, grace, r->out);
	return fired;
}

/* The table slot of the expiry line at @line ("slot=N" at its end), or -1. */
static int line_slot(const char *line)
{
	const char *eol = strchr(line, '\n'), *p = strstr(line, " slot=");

	if (!p || (eol && p > eol))
		return -1;
	return atoi(p + 6);
}

/* The number after "@key" in @out (a stats row or JSON member), or -1. */
static long long stat_of(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	long long v = -1;

	if (p)
		sscanf(p + strlen(key), "%lld", &v);
	return v;
}

FIXTURE(cli) {
	struct result r;
};

FIXTURE_SETUP(cli)
{
	find_cli();
	ASSERT_EQ(0, access(cli, X_OK)) TH_LOG("%s: %s", cli, strerror(errno));
}

FIXTURE_TEARDOWN(cli)
{
}

/* A bad command line: exit 2, nothing on stdout, exactly one line. */
static void expect_usage_error(struct __test_metadata *_metadata,
			       const struct result *r, const char *what)
{
	EXPECT_EQ(2, r->status);
	EXPECT_EQ(1, lines(r->err)) TH_LOG("%s", r->err);
	EXPECT_NE(NULL, strstr(r->err, what)) TH_LOG("%s", r->err);
	EXPECT_EQ(0, strlen(r->out));
}

#define EXPECT_USAGE_ERROR(r, what) expect_usage_error(_metadata, r, what)

TEST_F(cli, help_and_version)
{
	RUN(&self->r, "--help");
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "usage: htwheel"));
	RUN(&self->r, "--version");
	EXPECT_EQ(0, self->r.status);
	/* The package's version, as tools/lib/htwheel.mk has it. */
	EXPECT_NE(NULL, strstr(self->r.out, "htwheel " HTW_VERSION " ("));
	RUN(&self->r, "run", "--help");
	EXPECT_EQ(0, self->r.status);
}

TEST_F(cli, no_arguments)
{
	RUN(&self->r, "--bogus");
	EXPECT_EQ(2, self->r.status);
	run_in(&self->r, NULL, NULL, (const char *const[]){ NULL });
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "usage"));
}

TEST_F(cli, unknown_command)
{
	RUN(&self->r, "frobnicate");
	EXPECT_USAGE_ERROR(&self->r, "unknown command 'frobnicate'");
}

TEST_F(cli, unknown_unit)
{
	RUN(&self->r, "run", "--at", "5x");
	EXPECT_USAGE_ERROR(&self->r, "unknown unit 'x'");
	RUN(&self->r, "schedule", "1m30q");
	EXPECT_USAGE_ERROR(&self->r, "unknown unit 'q'");
}

TEST_F(cli, missing_unit)
{
	RUN(&self->r, "schedule", "250");
	EXPECT_USAGE_ERROR(&self->r, "missing unit");
}

TEST_F(cli, not_a_duration)
{
	RUN(&self->r, "run", "--at", "soon");
	EXPECT_USAGE_ERROR(&self->r, "not a duration");
}

TEST_F(cli, negative_duration)
{
	RUN(&self->r, "schedule", "-5ms");
	EXPECT_USAGE_ERROR(&self->r, "negative");
	RUN(&self->r, "run", "--at", "-1s");
	EXPECT_USAGE_ERROR(&self->r, "negative");
}

TEST_F(cli, overflowing_duration)
{
	RUN(&self->r, "run", "--at", "999999999999h");
	EXPECT_USAGE_ERROR(&self->r, "too large");
}

TEST_F(cli, bad_options)
{
	RUN(&self->r, "run", "--at", "1s", "--frob");
	EXPECT_USAGE_ERROR(&self->r, "unknown option");
	RUN(&self->r, "run", "--at");
	EXPECT_USAGE_ERROR(&self->r, "missing argument");
	RUN(&self->r, "run");
	EXPECT_USAGE_ERROR(&self->r, "no timers");
	RUN(&self->r, "run", "--at", "1s:a", "--cancel", "2s:b");
	EXPECT_USAGE_ERROR(&self->r, "no timer named 'b'");
	RUN(&self->r, "run", "--at", "1s:a", "--at", "2s:a");
	EXPECT_USAGE_ERROR(&self->r, "used twice");
	RUN(&self->r, "run", "--every", "0s");
	EXPECT_USAGE_ERROR(&self->r, "more than 0");
	RUN(&self->r, "stats", "--slots", "many");
	EXPECT_USAGE_ERROR(&self->r, "not a non-negative integer");
}

TEST_F(cli, device_missing)
{
	run_in(&self->r, NULL, "HTWHEEL_DEVICE=/run/tmp/no-htwheel",
	       (const char *const[]){ "run", "--at", "1ms", NULL });
	EXPECT_EQ(3, self->r.status);
	EXPECT_EQ(1, lines(self->r.err)) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "modprobe htwheel"));
	EXPECT_NE(NULL, strstr(self->r.err, "insmod htwheel.ko"));
	run_in(&self->r, NULL, "HTWHEEL_DEVICE=/run/tmp/no-htwheel",
	       (const char *const[]){ "stats", NULL });
	EXPECT_EQ(3, self->r.status);
}

/*
 * A device that refuses the handshake (/dev/urandom answers EINVAL to any
 * ioctl it does not know, as a module of another API version would): not
 * a geometry problem, but a device this program cannot use.
 */
TEST_F(cli, handshake_refused)
{
	if (access("/dev/urandom", R_OK | W_OK))
		SKIP(return, "/dev/urandom: %s", strerror(errno));
	run_in(&self->r, NULL, "HTWHEEL_DEVICE=/dev/urandom",
	       (const char *const[]){ "info", NULL });
	EXPECT_EQ(3, self->r.status);
	EXPECT_EQ(1, lines(self->r.err)) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "refused the API handshake"));
	EXPECT_EQ(NULL, strstr(self->r.err, "geometry"));
}

TEST_F(cli, geometry_refused)
{
	RUN(&self->r, "stats", "--tick", "1ns");
	EXPECT_USAGE_ERROR(&self->r, "geometry refused");
}

TEST_F(cli, period_below_tick_refused)
{
	RUN(&self->r, "run", "--every", "10us:x", "--for", "10ms");
	EXPECT_EQ(1, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "at least one tick")) TH_LOG("%s", self->r.err);
}

TEST_F(cli, info)
{
	RUN(&self->r, "info");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "api:       1"));
}

/*
 * Deadlines count from the session's start and the drain comes at --for
 * or later, so a, b and c (due at 20, 30, 40 ms of 200) fired whatever the
 * load; "late" (10 s) fired only if the run really took that long.
 */
TEST_F(cli, run_prints_each_expiry_then_what_never_ran)
{
	int late;

	RUN(&self->r, "run", "--at", "20ms:a", "--at", "40ms:b", "--every", "30ms:c",
	    "--at", "10s:late", "--for", "200ms");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_EQ(1, expect_accounted(_metadata, &self->r, "a", 0, 20, 200));
	EXPECT_EQ(1, expect_accounted(_metadata, &self->r, "b", 0, 40, 200));
	EXPECT_LE(1, expect_accounted(_metadata, &self->r, "c", 30, 30, 200));
	late = expect_accounted(_metadata, &self->r, "late", 0, 10000, 200);
	if (self->r.elapsed_ms < 10000)
		EXPECT_EQ(0, late);
	EXPECT_EQ(2 - late, never_ran_count(self->r.out)) TH_LOG("%s", self->r.out);
	if (!late)
		EXPECT_NE(NULL, strstr(self->r.out, "late     cookie=3"));
	EXPECT_NE(NULL, strstr(self->r.out, "c        cookie=2    periodic"));
}

/*
 * What each cancel must say follows from the times the CLI printed, not
 * from the 50 ms between the actions and the deadlines: the cancel of x
 * ran before the clock reading of y's cancel (it comes first), so if that
 * reading is before x's 300 ms deadline, x was still pending; y's cancel
 * comes after its record was read whenever that line is printed first.
 * Either way the report must agree with what fired.
 */
TEST_F(cli, run_cancel)
{
	double at_cx = -1, at_cy = -1, at_fy = -1;
	const char *cx, *cy, *fy;

	RUN(&self->r, "run", "--at", "300ms:x", "--at", "10ms:y",
	    "--cancel", "50ms:x", "--cancel", "60ms:y");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	cx = event_line(self->r.out, "cancel", "x", 0, &at_cx);
	cy = event_line(self->r.out, "cancel", "y", 0, &at_cy);
	ASSERT_NE(NULL, cx) TH_LOG("%s", self->r.out);
	ASSERT_NE(NULL, cy) TH_LOG("%s", self->r.out);
	EXPECT_LT(cx, cy);
	/* never before the times asked for */
	EXPECT_LE(50, at_cx) TH_LOG("%s", self->r.out);
	EXPECT_LE(60, at_cy) TH_LOG("%s", self->r.out);
	fy = event_line(self->r.out, "fired", "y", 0, &at_fy);

	if (at_cy < 300) {
		EXPECT_EQ(0, strncmp(strstr(cx, "cancel x: "), "cancel x: cancelled\n", 20))
			TH_LOG("x cancelled at %.3f ms, before its deadline:\n%s",
			       at_cx, self->r.out);
	} else {
		TH_LOG("slow run: y's cancel at %.3f ms, after x's deadline", at_cy);
	}
	if (fy && fy < cy)
		EXPECT_EQ(0, strncmp(strstr(cy, "cancel y: "), "cancel y: already fired\n", 24))
			TH_LOG("y read at %.3f ms, cancelled at %.3f ms:\n%s",
			       at_fy, at_cy, self->r.out);
	/* The reports agree with what fired. */
	EXPECT_EQ(!!strstr(self->r.out, "cancel x: cancelled\n"),
		  !count(self->r.out, "fired x ")) TH_LOG("%s", self->r.out);
	EXPECT_EQ(!!strstr(self->r.out, "cancel y: cancelled\n"), !fy) TH_LOG("%s", self->r.out);
	EXPECT_GE(1, count(self->r.out, "fired y "));
	EXPECT_GE(1, count(self->r.out, "fired x "));
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 0 timers"));
}

TEST_F(cli, schedule_waits_for_its_timers)
{
	RUN(&self->r, "schedule", "10ms", "30ms", "--cookie", "7", "--stats");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "cookie=7 ")) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "cookie=8 "));
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 0 timers"));
	EXPECT_NE(NULL, strstr(self->r.out, "fired          2"));
}

/*
 * Every 10 ms from 10 ms, over 100 ms from the session's start: the
 * periods due before the drain fired (a late reader gets one record with
 * an overrun, so count periods, not lines) and the timer is left pending.
 */
TEST_F(cli, schedule_every_until_for)
{
	const char *line;
	int i, periods = 0, due = 0;
	double grace;

	RUN(&self->r, "schedule", "10ms", "--every", "10ms", "--for", "100ms");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_LE(1, expect_accounted(_metadata, &self->r, "#0", 10, 10, 100));
	for (i = 0; (line = event_line(self->r.out, "fired", "#0", i, NULL)); i++) {
		const char *ov = strstr(line, "overrun="), *eol = strchr(line, '\n');

		periods += 1 + (ov && ov < eol ? atoi(ov + 8) : 0);
	}
	/*
	 * Due at 10, 20, ... ms of a session of at least 100 ms: those due
	 * more than a tick and the run's worst lateness before its end fired.
	 */
	grace = TICK_MS + worst_late_ms(self->r.out);
	for (i = 1; 10 * i < 100 - grace; i++)
		due++;
	EXPECT_LE(due, periods) TH_LOG("grace %.3f ms:\n%s", grace, self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 1 timer\n"));
}

TEST_F(cli, stats_json)
{
	RUN(&self->r, "stats", "--json", "--tick", "2ms", "--slots", "64");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "\"tick_ns\": 2000000")) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "\"slots\": 64"));
	EXPECT_NE(NULL, strstr(self->r.out, "\"default_tick_ns\": "));
	EXPECT_EQ('{', self->r.out[0]);
	/* A fresh instance has no table: its counters are there, and 0. */
	EXPECT_EQ(0, stat_of(self->r.out, "\"table_entries\": "))
		TH_LOG("%s", self->r.out);
	EXPECT_EQ(0, stat_of(self->r.out, "\"table_taken\": "));
	EXPECT_EQ(0, stat_of(self->r.out, "\"table_fired\": "));
}

TEST_F(cli, stats_table)
{
	RUN(&self->r, "stats");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "tick wakeups"));
	EXPECT_NE(NULL, strstr(self->r.out, "max_pending"));
	/* Without a table, the text leaves its rows out. */
	EXPECT_EQ(NULL, strstr(self->r.out, "table entries")) TH_LOG("%s", self->r.out);
}

/*
 * --table: the two durations are slots of the shared timer table.  Each
 * fired once, from the completion ring, never before its duration from
 * the start (the deadline is the start plus the duration, to the ns),
 * and the statistics count them as the table's, not the handle timers'.
 */
TEST_F(cli, schedule_table_waits_for_its_slots)
{
	static const char *const names[] = { "#0", "#1" };
	static const double durs[] = { 50, 100 };
	const char *line;
	double at;
	int i;

	if (!htw_test_table_or_skip(_metadata))
		return;
	RUN(&self->r, "schedule", "--table", "50ms", "100ms", "--stats");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(1, expect_accounted(_metadata, &self->r, names[i], 0,
					      durs[i], durs[i]));
		line = event_line(self->r.out, "fired", names[i], 0, &at);
		ASSERT_NE(NULL, line) TH_LOG("%s", self->r.out);
		EXPECT_LE(durs[i], at) TH_LOG("%s", line);
		EXPECT_EQ(durs[i], line_field_ms(line, "deadline=")) TH_LOG("%s", line);
		EXPECT_EQ(i, line_slot(line)) TH_LOG("%s", line);
	}
	EXPECT_EQ(2, count(self->r.out, "  fired #"));
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 0 timers"));
	EXPECT_EQ(2, stat_of(self->r.out, "  table entries  ")) TH_LOG("%s", self->r.out);
	EXPECT_LE(2, stat_of(self->r.out, "  table taken    "));
	EXPECT_EQ(2, stat_of(self->r.out, "  table fired    "));
	EXPECT_EQ(0, stat_of(self->r.out, "\n  fired          "));
	EXPECT_EQ(0, stat_of(self->r.out, "\n  scheduled      "));
}

TEST_F(cli, schedule_table_stats_json)
{
	if (!htw_test_table_or_skip(_metadata))
		return;
	RUN(&self->r, "schedule", "--table", "20ms", "--cookie", "5", "--stats",
	    "--json");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "fired #5       cookie=5    "))
		TH_LOG("%s", self->r.out);
	EXPECT_EQ(1, stat_of(self->r.out, "\"table_entries\": "))
		TH_LOG("%s", self->r.out);
	EXPECT_LE(1, stat_of(self->r.out, "\"table_taken\": "));
	EXPECT_EQ(1, stat_of(self->r.out, "\"table_fired\": "));
	EXPECT_EQ(0, stat_of(self->r.out, "\"fired\": "));
}

/*
 * A slot an hour away is still armed at --for: the drain disarms it and
 * lists it as a table slot with its time left; the one due at 20 ms fired.
 */
TEST_F(cli, run_table_drains_what_is_left)
{
	double remaining = -1;

	if (!htw_test_table_or_skip(_metadata))
		return;
	RUN(&self->r, "run", "--table", "--at", "20ms:a", "--at", "1h:b",
	    "--for", "100ms");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_EQ(1, expect_accounted(_metadata, &self->r, "a", 0, 20, 100));
	EXPECT_EQ(0, expect_accounted(_metadata, &self->r, "b", 0, 3600000, 100));
	EXPECT_EQ(1, left_for_drain(self->r.out, "b", &remaining))
		TH_LOG("%s", self->r.out);
	EXPECT_LT(3500000, remaining) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "  b        cookie=1    table remaining="))
		TH_LOG("%s", self->r.out);
	EXPECT_EQ(1, never_ran_count(self->r.out)) TH_LOG("%s", self->r.out);
}

/* Table slots fire once, at the tick: no --every, no --slack. */
TEST_F(cli, table_refuses_periodic_and_slack)
{
	RUN(&self->r, "schedule", "--table", "10ms", "--every", "10ms");
	EXPECT_USAGE_ERROR(&self->r, "fire once");
	RUN(&self->r, "run", "--every", "10ms:p", "--table");
	EXPECT_USAGE_ERROR(&self->r, "'p' is periodic");
	RUN(&self->r, "run", "--table", "--at", "1s", "--slack", "1ms");
	EXPECT_USAGE_ERROR(&self->r, "no slack");
	RUN(&self->r, "stats", "--table");
	EXPECT_USAGE_ERROR(&self->r, "not valid here");
}

/*
 * watch's 'table' lines: "one", an hour away, is moved to 30 ms from when
 * the line was read and fires then (if the 300 ms session lasted that
 * long after it); "three", cancelled in the same read, never fires and is
 * not left to the drain.
 */
TEST_F(cli, watch_table_rearm_and_cancel)
{
	double at_r = -1, grace;
	const char *line;
	int one;

	if (!htw_test_table_or_skip(_metadata))
		return;
	run_in(&self->r, "table 1h one\nrearm one 30ms\ntable 5s three\ncancel three\n",
	       NULL, (const char *const[]){ "watch", "--for", "300ms", NULL });
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	ASSERT_NE(NULL, event_line(self->r.out, "rearm", "one", 0, &at_r))
		TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "rearm one: moved, due in 30.000ms\n"))
		TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "cancel three: cancelled\n"))
		TH_LOG("%s", self->r.out);
	one = expect_accounted(_metadata, &self->r, "one", 0, at_r + 30, 300);
	grace = TICK_MS + worst_late_ms(self->r.out);
	if (at_r + 30 + grace < 300)
		EXPECT_EQ(1, one) TH_LOG("re-armed at %.3f ms:\n%s", at_r, self->r.out);
	line = event_line(self->r.out, "fired", "one", 0, NULL);
	if (line)
		EXPECT_EQ(0, line_slot(line)) TH_LOG("%s", line);
	EXPECT_EQ(0, count(self->r.out, "fired three "));
	EXPECT_EQ(1 - one, never_ran_count(self->r.out)) TH_LOG("%s", self->r.out);
}

/*
 * stdin's timers count from when the CLI read them, which a loaded machine
 * may delay: no fixed margin to the 150 ms session, but whatever did not
 * fire must have been not yet due at the drain.  "cancel three" came in
 * the same read, so its printed time bounds when "one" was scheduled.
 */
TEST_F(cli, watch_reads_commands)
{
	double at_c3 = -1, grace;
	int one, two;

	run_in(&self->r, "at 10ms one\nevery 20ms two\nat 5s three\ncancel three\n"
	       "bogus\n", NULL,
	       (const char *const[]){ "watch", "--for", "150ms", NULL });
	EXPECT_EQ(2, self->r.status);	/* the bogus line */
	EXPECT_NE(NULL, strstr(self->r.err, "unknown command 'bogus'"));
	EXPECT_NE(NULL, event_line(self->r.out, "cancel", "three", 0, &at_c3))
		TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "cancel three: cancelled"));
	one = expect_accounted(_metadata, &self->r, "one", 0, -1, 150);
	two = expect_accounted(_metadata, &self->r, "two", 20, -1, 150);
	grace = TICK_MS + worst_late_ms(self->r.out);
	if (at_c3 + 10 + grace < 150)
		EXPECT_EQ(1, one) TH_LOG("scheduled by %.3f ms:\n%s", at_c3, self->r.out);
	if (at_c3 + 20 + grace < 150)
		EXPECT_LE(1, two) TH_LOG("scheduled by %.3f ms:\n%s", at_c3, self->r.out);
	EXPECT_EQ(0, count(self->r.out, "fired three "));
	EXPECT_EQ(2 - one, never_ran_count(self->r.out)) TH_LOG("%s", self->r.out);
}

/* An unknown name in watch's 'cancel' is a bad line: status 2, goes on. */
TEST_F(cli, watch_cancel_unknown_name)
{
	run_in(&self->r, "at 10ms one\ncancel nosuch\n", NULL,
	       (const char *const[]){ "watch", "--for", "100ms", NULL });
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "no timer named 'nosuch'"))
		TH_LOG("%s", self->r.err);
	/* it went on: "one" fired, or was not due yet when the session ended */
	EXPECT_GE(1, expect_accounted(_metadata, &self->r, "one", 0, -1, 100));
}

/*
 * watch's 'rearm' brings a timer an hour away to 30 ms from when it was
 * read, keeping it: it fires then (if the 300 ms session lasted that
 * long after the line) and is not left to the drain.  A name no timer
 * has is a bad line; the session goes on.
 */
TEST_F(cli, watch_rearm)
{
	double at_r = -1, grace;
	int one;

	run_in(&self->r, "at 1h one\nrearm one 30ms\nrearm nosuch 1ms\n", NULL,
	       (const char *const[]){ "watch", "--for", "300ms", NULL });
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "rearm: no timer named 'nosuch'"))
		TH_LOG("%s", self->r.err);
	ASSERT_NE(NULL, event_line(self->r.out, "rearm", "one", 0, &at_r))
		TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "rearm one: moved, due in 30.000ms\n"))
		TH_LOG("%s", self->r.out);
	one = expect_accounted(_metadata, &self->r, "one", 0, at_r + 30, 300);
	grace = TICK_MS + worst_late_ms(self->r.out);
	if (at_r + 30 + grace < 300)
		EXPECT_EQ(1, one) TH_LOG("re-armed at %.3f ms:\n%s", at_r, self->r.out);
}

/* A batch the device took only part of: the drain names what got in. */
TEST_F(cli, partial_batch_drain_report)
{
	RUN(&self->r, "run", "--at", "10s:a", "--every", "1s:b", "--at", "10s:c",
	    "--max-pending", "2");
	EXPECT_EQ(1, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "only part of the batch"))
		TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 2 timers")) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "  a        cookie=0    one-shot"));
	EXPECT_NE(NULL, strstr(self->r.out, "  b        cookie=1    periodic"));
	EXPECT_EQ(0, count(self->r.out, "?"));
	EXPECT_EQ(0, count(self->r.out, " c "));
}

/*
 * A separate process cannot cancel a session's timers (they belong to its
 * open file), and the benchmark is not the CLI's: neither is a command,
 * nor offered by --help.
 */
TEST_F(cli, no_cancel_or_bench_command)
{
	RUN(&self->r, "cancel", "3");
	EXPECT_USAGE_ERROR(&self->r, "unknown command 'cancel'");
	RUN(&self->r, "bench");
	EXPECT_USAGE_ERROR(&self->r, "unknown command 'bench'");
	RUN(&self->r, "--help");
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(NULL, strstr(self->r.out, "\n  cancel ")) TH_LOG("%s", self->r.out);
	EXPECT_EQ(NULL, strstr(self->r.out, "\n  bench ")) TH_LOG("%s", self->r.out);
}

TEST_HARNESS_MAIN
