// SPDX-License-Identifier: GPL-2.0
/*
 * The htwheel CLI: its output on good input, and one clear line and a
 * non-zero exit on every kind of bad input.  The CLI is build/htwheel,
 * found next to this program's directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define OUT_MAX	65536

struct result {
	int status;			/* exit code, or 128 + signal */
	char out[OUT_MAX];
	char err[OUT_MAX];
};

static char cli[PATH_MAX];

static void find_cli(void)
{
	ssize_t n = readlink("/proc/self/exe", cli, sizeof(cli) - 16);
	char *slash;

	if (n <= 0)
		abort();
	cli[n] = '\0';
	slash = strrchr(cli, '/');
	*slash = '\0';			/* build/tests */
	slash = strrchr(cli, '/');
	strcpy(slash, "/htwheel");	/* build/htwheel */
}

static void slurp(int fd, char *buf)
{
	size_t len = 0;
	ssize_t n;

	while (len < OUT_MAX - 1 && (n = read(fd, buf + len, OUT_MAX - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
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
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	lseek(o, 0, SEEK_SET);
	lseek(e, 0, SEEK_SET);
	slurp(o, r->out);
	slurp(e, r->err);
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
#define EXPECT_USAGE_ERROR(r, what)					\
	do {								\
		EXPECT_EQ(2, (r)->status);				\
		EXPECT_EQ(1, lines((r)->err)) TH_LOG("%s", (r)->err);	\
		EXPECT_NE(NULL, strstr((r)->err, what)) TH_LOG("%s", (r)->err); \
		EXPECT_EQ(0, strlen((r)->out));				\
	} while (0)

TEST_F(cli, help_and_version)
{
	RUN(&self->r, "--help");
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "usage: htwheel"));
	RUN(&self->r, "--version");
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "htwheel "));
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
	RUN(&self->r, "cancel", "3");
	EXPECT_USAGE_ERROR(&self->r, "belong to the process");
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

TEST_F(cli, run_prints_each_expiry_then_what_never_ran)
{
	RUN(&self->r, "run", "--at", "20ms:a", "--at", "40ms:b", "--every", "30ms:c",
	    "--at", "10s:late", "--for", "200ms");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_EQ(1, count(self->r.out, "fired a ")) TH_LOG("%s", self->r.out);
	EXPECT_EQ(1, count(self->r.out, "fired b "));
	EXPECT_LE(1, count(self->r.out, "fired c "));
	EXPECT_EQ(0, count(self->r.out, "fired late"));
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 2 timers"));
	EXPECT_NE(NULL, strstr(self->r.out, "late     cookie=3"));
	EXPECT_NE(NULL, strstr(self->r.out, "periodic"));
}

TEST_F(cli, run_cancel)
{
	RUN(&self->r, "run", "--at", "300ms:x", "--at", "10ms:y",
	    "--cancel", "50ms:x", "--cancel", "60ms:y");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "cancel x: cancelled")) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "cancel y: already fired"));
	EXPECT_EQ(0, count(self->r.out, "fired x "));
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

TEST_F(cli, schedule_every_until_for)
{
	RUN(&self->r, "schedule", "10ms", "--every", "10ms", "--for", "100ms");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_LE(2, count(self->r.out, "fired #0"));
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
}

TEST_F(cli, stats_table)
{
	RUN(&self->r, "stats");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "tick wakeups"));
	EXPECT_NE(NULL, strstr(self->r.out, "max_pending"));
}

TEST_F(cli, watch_reads_commands)
{
	run_in(&self->r, "at 10ms one\nevery 20ms two\nat 5s three\ncancel three\n"
	       "bogus\n", NULL,
	       (const char *const[]){ "watch", "--for", "150ms", NULL });
	EXPECT_EQ(2, self->r.status);	/* the bogus line */
	EXPECT_NE(NULL, strstr(self->r.err, "unknown command 'bogus'"));
	EXPECT_EQ(1, count(self->r.out, "fired one ")) TH_LOG("%s", self->r.out);
	EXPECT_LE(1, count(self->r.out, "fired two "));
	EXPECT_NE(NULL, strstr(self->r.out, "cancel three: cancelled"));
	EXPECT_NE(NULL, strstr(self->r.out, "never ran: 1 timer\n"));
}

/* An unknown name in watch's 'cancel' is a bad line: status 2, goes on. */
TEST_F(cli, watch_cancel_unknown_name)
{
	run_in(&self->r, "at 10ms one\ncancel nosuch\n", NULL,
	       (const char *const[]){ "watch", "--for", "100ms", NULL });
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "no timer named 'nosuch'"))
		TH_LOG("%s", self->r.err);
	EXPECT_EQ(1, count(self->r.out, "fired one ")) TH_LOG("%s", self->r.out);
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

TEST_F(cli, bench_points_somewhere)
{
	RUN(&self->r, "bench");
	if (!self->r.status)
		return;		/* a benchmark program exists and ran */
	EXPECT_EQ(1, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "make bench"));
}

TEST_HARNESS_MAIN
