// SPDX-License-Identifier: GPL-2.0
/*
 * The event-loop examples of tools/examples (io_uring, libuv, libevent),
 * run as they are, each in every mode, from build/ next to this program's
 * directory.  From the lines they print (the server's, and those of the
 * peers' process, which measures on the other side of each socket):
 *
 *  - every connection ended exactly once, on both sides;
 *  - the idle and the quiet ones were closed by their htwheel timers,
 *    after the peer had sent everything it planned (a quiet one outlived
 *    several timeouts by talking), and never early: at least the idle
 *    timeout after the last data, measured by the server and by the peer,
 *    and no record fired before its deadline;
 *  - the busy ones survived until they hung up, and their timer was
 *    cancelled; only a peer that really fell silent for the idle time (a
 *    stalled emulator) may have been closed instead;
 *  - the summary's counts are those of the lines, and the expiry records
 *    came the way the mode says: for io_uring, completions of the htwheel
 *    descriptor in the same ring as the sockets' recv completions;
 *  - exit status 0.
 *
 * Where the kernel has no io_uring (User-Mode Linux), the example says so
 * and exits 77: those cases skip with its words.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define OUT_MAX		(256 * 1024)
#define MAX_CONNS	64
#define RUN_LIMIT_S	60	/* a hung example: killed, and a failure */
#define EXIT_NO_URING	77

enum loop { URING, LIBUV, LIBEVENT };

struct run {
	int status;		/* exit code, or 128 + signal */
	char out[OUT_MAX];
	char err[4096];
};

/* What the lines say about one connection. */
struct conn {
	char part[16];		/* the peer's plan: busy, idle, quiet */
	unsigned int planned;
	int timer_closes, peer_closes;	/* the server's lines */
	double idle_ms, fired_ms, handled_ms;
	int server_closes, hang_ups;	/* the peer's lines */
	unsigned int sent;
	double silent_ms;	/* from the peer's last message to the close */
	double max_gap_ms;
};

struct report {
	int idle_timeout_ms, conns;
	struct conn c[MAX_CONNS];
	int recv_lines, timer_lines;	/* io_uring: socket and htwheel completions */
	unsigned long timer_line_records;
	int reap_lines;			/* --table: records from htw_table2_reap() */
	int still_open, summaries;
	unsigned long sum_by_timer, sum_by_peer, sum_records;
	unsigned long sum_sock_cqes, sum_timer_cqes;
};

static int temp_file(const char *what)
{
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/example-%s-XXXXXX", tmp, what);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Run build/@name with @arg (or none); 0, or -1 if it could not run. */
static int run_example(struct run *r, const char *name, const char *arg)
{
	char path[PATH_MAX];
	int o = temp_file("out"), e = temp_file("err"), st;
	pid_t pid;

	if (o < 0 || e < 0)
		return -1;
	if (htw_test_build_path(path, sizeof(path), name))
		abort();
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(o, 1);
		dup2(e, 2);
		/* Its own process group: the peers' child goes with it. */
		setpgid(0, 0);
		alarm(RUN_LIMIT_S);
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	kill(-pid, SIGKILL);	/* whatever it left behind */
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	htw_test_slurp(o, r->out, sizeof(r->out));
	htw_test_slurp(e, r->err, sizeof(r->err));
	close(o);
	close(e);
	return 0;
}

/*
 * The lines the examples print, as sscanf() formats.  sscanf() stops
 * quietly where literal text differs, so its count says only that the
 * text up to the last conversion matched: where the words that tell a
 * line from another come after that, the format ends in %n.
 */
#define FMT_PLAN \
	"peer: conn %d plan %15[a-z]: %u message%n"
#define FMT_SERVER_CLOSED \
	"peer: conn %d: closed by the server %lf ms after my last message (%u of %u sent, longest gap %lf ms)"
#define FMT_HUNG_UP \
	"peer: conn %d: hung up after %u messages (longest gap %lf ms)"
#define FMT_TIMER_CLOSE \
	"conn %d: idle for %lf ms, closed by its htwheel timer (fired %lf ms late, handled %lf ms late)"
#define FMT_PEER_CLOSE \
	"conn %d: closed by the peer%n"
#define FMT_RECV \
	"conn %d: recv completed, %lu bytes"
#define FMT_RING_READ \
	"ring: read of the htwheel fd completed, %lu record"
#define FMT_RING_POLL \
	"ring: poll of the htwheel fd completed, htw_read drained %lu record"
#define FMT_REAP \
	"loop: htwheel fd readable, htw_table2_reap took %lu record"
#define FMT_DRAIN \
	"loop: htwheel fd readable, htw_read drained %lu record"
#define FMT_HEADER \
	"%*[a-z_]: %*d connections, idle timeout %d ms"
#define FMT_SUMMARY_RING \
	"summary: one ring, %lu socket completions and %lu htwheel fd completions (%lu records); %lu closed by htwheel timers, %lu by their peers"
#define FMT_SUMMARY_LOOP \
	"summary: %lu wakeups of the %*[^,], %lu records; %lu closed by htwheel timers, %lu by their peers"

/* Connection @i of the lines, or NULL if @i is out of range. */
static struct conn *conn_of(struct report *rep, int i)
{
	if (i < 0 || i >= MAX_CONNS)
		return NULL;
	if (i >= rep->conns)
		rep->conns = i + 1;
	return &rep->c[i];
}

/* The lines of the peers' process. */
static void parse_peer_line(struct report *rep, const char *l)
{
	struct conn *c = NULL;
	unsigned int a, b;
	int i = -1, end = 0;
	char part[16];
	double x, y;

	if (sscanf(l, FMT_PLAN, &i, part, &a, &end) == 3 && end) {
		c = conn_of(rep, i);
		if (c) {
			snprintf(c->part, sizeof(c->part), "%s", part);
			c->planned = a;
		}
	} else if (sscanf(l, FMT_SERVER_CLOSED, &i, &x, &a, &b, &y) == 5) {
		c = conn_of(rep, i);
		if (c) {
			c->server_closes++;
			c->silent_ms = x;
			c->sent = a;
			c->max_gap_ms = y;
		}
	} else if (sscanf(l, FMT_HUNG_UP, &i, &a, &y) == 3) {
		c = conn_of(rep, i);
		if (c) {
			c->hang_ups++;
			c->sent = a;
			c->max_gap_ms = y;
		}
	} else if (strstr(l, ": still open ")) {
		rep->still_open++;
	}
}

/* The summary line, in each example's words. */
static void parse_summary(struct report *rep, const char *l)
{
	unsigned long a, b, c, d, e;

	rep->summaries++;
	if (sscanf(l, FMT_SUMMARY_RING, &a, &b, &c, &d, &e) == 5) {
		rep->sum_sock_cqes = a;
		rep->sum_timer_cqes = b;
	} else if (sscanf(l, FMT_SUMMARY_LOOP, &b, &c, &d, &e) != 4) {
		rep->summaries = -1000;	/* words we do not know */
		return;
	}
	rep->sum_records = c;
	rep->sum_by_timer = d;
	rep->sum_by_peer = e;
}

/* A line of the server's about connection @i: closed by a timer or peer. */
static void parse_close(struct report *rep, const char *l)
{
	struct conn *c;
	int i, end = 0;
	double x, y, z;

	if (sscanf(l, FMT_TIMER_CLOSE, &i, &x, &y, &z) == 4) {
		c = conn_of(rep, i);
		if (!c)
			return;
		c->timer_closes++;
		c->idle_ms = x;
		c->fired_ms = y;
		c->handled_ms = z;
	} else if (sscanf(l, FMT_PEER_CLOSE, &i, &end) == 1 && end) {
		c = conn_of(rep, i);
		if (c)
			c->peer_closes++;
	}
}

static void parse_line(struct report *rep, const char *l)
{
	unsigned long n;
	int i;

	if (!strncmp(l, "peer: ", 6)) {
		parse_peer_line(rep, l);
	} else if (!strncmp(l, "summary: ", 9)) {
		parse_summary(rep, l);
	} else if (!strncmp(l, "conn ", 5)) {
		if (sscanf(l, FMT_RECV, &i, &n) == 2)
			rep->recv_lines++;
		else
			parse_close(rep, l);
	} else if (sscanf(l, FMT_RING_READ, &n) == 1 || sscanf(l, FMT_RING_POLL, &n) == 1) {
		rep->timer_lines++;
		rep->timer_line_records += n;
	} else if (sscanf(l, FMT_REAP, &n) == 1) {
		rep->reap_lines++;
		rep->timer_line_records += n;
	} else if (sscanf(l, FMT_DRAIN, &n) == 1) {
		rep->timer_line_records += n;
	} else if (sscanf(l, FMT_HEADER, &i) == 1) {
		rep->idle_timeout_ms = i;
	}
}

/*
 * Parse @out, a copy of which @buf (OUT_MAX bytes) receives, and log its
 * lines but those of every message: the run's story, for the record.
 */
static void parse(struct report *rep, const char *out, char *buf)
{
	char *line, *save;

	memset(rep, 0, sizeof(*rep));
	snprintf(buf, OUT_MAX, "%s", out);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		parse_line(rep, line);
		if (!strstr(line, "idle timer pushed back"))
			ksft_print_msg("  %s\n", line);
	}
}

/* An idle or quiet connection: closed by its timer once all was sent. */
static void check_timed_out(struct __test_metadata *_metadata,
			    const struct report *rep, int i)
{
	const struct conn *c = &rep->c[i];
	double idle = rep->idle_timeout_ms;

	EXPECT_EQ(1, c->timer_closes) TH_LOG("conn %d (%s): closed by its timer %d times",
					     i, c->part, c->timer_closes);
	EXPECT_EQ(0, c->peer_closes) TH_LOG("conn %d (%s)", i, c->part);
	EXPECT_EQ(1, c->server_closes) TH_LOG("conn %d (%s): the peer saw %d closes",
					      i, c->part, c->server_closes);
	EXPECT_EQ(c->planned, c->sent)
		TH_LOG("conn %d (%s): closed after %u of its %u messages", i, c->part,
		       c->sent, c->planned);
	EXPECT_LE(idle, c->idle_ms)
		TH_LOG("conn %d (%s): closed %.1f ms after its last data (server)",
		       i, c->part, c->idle_ms);
	EXPECT_LE(idle, c->silent_ms)
		TH_LOG("conn %d (%s): closed %.1f ms after its last message (peer)",
		       i, c->part, c->silent_ms);
	EXPECT_LE(0, c->fired_ms)
		TH_LOG("conn %d: fired %.1f ms after its deadline", i, c->fired_ms);
	EXPECT_LE(c->fired_ms, c->handled_ms) TH_LOG("conn %d", i);
}

/* A busy connection: it hung up, and the server saw that. */
static void check_survived(struct __test_metadata *_metadata,
			   const struct report *rep, int i)
{
	const struct conn *c = &rep->c[i];
	double idle = rep->idle_timeout_ms;

	if (c->timer_closes) {
		/* Fair only if the peer fell silent that long itself. */
		TH_LOG("conn %d (busy): closed by its timer %.1f ms after the peer's last message",
		       i, c->silent_ms);
		EXPECT_LE(idle, c->silent_ms);
		EXPECT_EQ(1, c->timer_closes);
		EXPECT_EQ(1, c->server_closes);
		EXPECT_LE(idle, c->idle_ms);
		return;
	}
	EXPECT_EQ(1, c->hang_ups) TH_LOG("conn %d (busy)", i);
	EXPECT_EQ(c->planned, c->sent) TH_LOG("conn %d (busy)", i);
	EXPECT_EQ(1, c->peer_closes) TH_LOG("conn %d (busy): the server saw %d hang-ups",
					    i, c->peer_closes);
	EXPECT_EQ(0, c->server_closes) TH_LOG("conn %d (busy)", i);
}

/* Every check that holds for every example and mode. */
static void check_report(struct __test_metadata *_metadata, const struct report *rep)
{
	unsigned long by_timer = 0, by_peer = 0;
	int i, parts[3] = { 0 };

	ASSERT_LT(0, rep->idle_timeout_ms) TH_LOG("no \"idle timeout N ms\" line");
	ASSERT_LE(3, rep->conns);
	EXPECT_EQ(0, rep->still_open);
	for (i = 0; i < rep->conns; i++) {
		const struct conn *c = &rep->c[i];

		ASSERT_LT(0, c->planned) TH_LOG("conn %d: no plan line", i);
		if (!strcmp(c->part, "busy")) {
			parts[0]++;
			check_survived(_metadata, rep, i);
		} else if (!strcmp(c->part, "idle") || !strcmp(c->part, "quiet")) {
			parts[!strcmp(c->part, "idle") ? 1 : 2]++;
			check_timed_out(_metadata, rep, i);
		} else {
			ASSERT_TRUE(0) TH_LOG("conn %d: plan \"%s\"", i, c->part);
		}
		by_timer += c->timer_closes;
		by_peer += c->peer_closes;
	}
	/* Each part was played, or the test shows less than it says. */
	for (i = 0; i < 3; i++)
		EXPECT_LT(0, parts[i]) TH_LOG("part %d never played", i);
	ASSERT_EQ(1, rep->summaries) TH_LOG("no summary line in words we know");
	EXPECT_EQ(by_timer, rep->sum_by_timer);
	EXPECT_EQ(by_peer, rep->sum_by_peer);
	EXPECT_LE(by_timer, rep->sum_records);
	EXPECT_EQ(rep->timer_line_records, rep->sum_records);
}

FIXTURE(example) {
	struct run run;
	struct report rep;
	char lines[OUT_MAX];
};

FIXTURE_VARIANT(example) {
	enum loop loop;
	const char *prog, *arg;
	int table;		/* needs HTW_FEATURE_TABLE */
};

FIXTURE_VARIANT_ADD(example, uring_read) {
	.loop = URING, .prog = "htwheel-uring-timeouts", .arg = NULL,
};

FIXTURE_VARIANT_ADD(example, uring_multishot_poll) {
	.loop = URING, .prog = "htwheel-uring-timeouts", .arg = "--multishot",
};

FIXTURE_VARIANT_ADD(example, libuv_handles) {
	.loop = LIBUV, .prog = "htwheel-libuv-timeouts", .arg = NULL,
};

FIXTURE_VARIANT_ADD(example, libuv_table) {
	.loop = LIBUV, .prog = "htwheel-libuv-timeouts", .arg = "--table", .table = 1,
};

FIXTURE_VARIANT_ADD(example, libevent_level) {
	.loop = LIBEVENT, .prog = "htwheel-libevent-timeouts", .arg = NULL,
};

FIXTURE_VARIANT_ADD(example, libevent_edge) {
	.loop = LIBEVENT, .prog = "htwheel-libevent-timeouts", .arg = "--edge",
};

FIXTURE_SETUP(example)
{
	int ret;

	if (variant->table) {
		ret = htw_test_table_supported();
		ASSERT_LE(0, ret) TH_LOG("/dev/htwheel: %s", strerror(-ret));
		if (!ret)
			SKIP(return, "the kernel does not report HTW_FEATURE_TABLE");
	}
}

FIXTURE_TEARDOWN(example)
{
}

TEST_F_TIMEOUT(example, closes_exactly_the_idle_connections_never_early, 2 * RUN_LIMIT_S)
{
	struct run *r = &self->run;
	struct report *rep = &self->rep;
	char *nl;

	ASSERT_EQ(0, run_example(r, variant->prog, variant->arg))
		TH_LOG("could not run %s: %s", variant->prog, strerror(errno));
	if (variant->loop == URING && r->status == EXIT_NO_URING &&
	    strstr(r->err, strerror(ENOSYS))) {
		nl = strchr(r->err, '\n');
		if (nl)
			*nl = '\0';
		SKIP(return, "%.200s", r->err);
	}
	EXPECT_EQ(0, r->status) TH_LOG("%s %s: exit %d; stderr:\n%s", variant->prog,
				       variant->arg ?: "", r->status, r->err);
	/* The lines, for the log of a failure. */
	if (r->status)
		TH_LOG("stdout:\n%s", r->out);
	parse(rep, r->out, self->lines);
	check_report(_metadata, rep);
	switch (variant->loop) {
	case URING:
		/* Both kinds of completion came through the one ring. */
		EXPECT_LT(0, rep->recv_lines);
		EXPECT_LT(0, rep->timer_lines);
		EXPECT_LE(rep->recv_lines, rep->sum_sock_cqes);
		EXPECT_EQ(rep->timer_lines, rep->sum_timer_cqes);
		EXPECT_LT(0, rep->timer_line_records);
		break;
	case LIBUV:
		/* --table: the records came from the completion ring. */
		EXPECT_EQ(variant->table, rep->reap_lines > 0);
		break;
	case LIBEVENT:
		break;
	}
	if (_metadata->exit_code != KSFT_PASS)
		TH_LOG("stdout:\n%s", r->out);
}

TEST_HARNESS_MAIN
