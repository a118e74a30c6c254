// SPDX-License-Identifier: GPL-2.0
/*
 * The echo server example: many loopback connections, half kept active,
 * half left idle.  Exactly the idle ones are closed, and none early: a
 * connection may only see EOF once it has been quiet for the idle time
 * (measured from our last send, which the server saw no sooner).  The
 * server keeps its idle timeouts in a timer table, so a kernel
 * without HTW_FEATURE_TABLE skips these tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define NCONN		100
#define IDLE_MS		400
#define PING_MS		40		/* active connections: 10 per idle */
#define ACTIVE_MS	(4 * IDLE_MS)	/* how long the active ones talk */
#define NEVER_MS	10000		/* "it never closed": a timeout only */
#define MS		1000000ULL

struct peer {
	int fd;
	int active;
	uint64_t last_send;	/* ns */
	uint64_t max_gap;	/* longest silence we kept, ns */
	uint64_t closed_at;	/* ns, 0 while open */
	size_t sent, echoed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Start build/htwheel-echo-server; its stdout comes back through *out. */
static pid_t start_server(FILE **out, int *port)
{
	char path[PATH_MAX], line[128];
	int p[2];
	pid_t pid;

	if (htw_test_build_path(path, sizeof(path), "htwheel-echo-server") ||
	    pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(p[1], 1);
		close(p[0]);
		execl(path, path, "--idle", "400ms", NULL);
		_exit(127);
	}
	close(p[1]);
	*out = fdopen(p[0], "r");
	if (!fgets(line, sizeof(line), *out) ||
	    sscanf(line, "listening on 127.0.0.1:%d", port) != 1)
		return -1;
	return pid;
}

static int dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void hear(struct peer *p);

/* Send unless the server already closed; -1 if it did. */
static int say(struct peer *p, const char *msg)
{
	size_t len = strlen(msg);
	uint64_t now;

	/* A close we slept through must not be taken for one after this send. */
	hear(p);
	if (p->closed_at)
		return -1;
	/* The time before the send: the server cannot have seen it earlier. */
	now = now_ns();
	if (p->last_send && now - p->last_send > p->max_gap)
		p->max_gap = now - p->last_send;
	p->last_send = now;
	if (send(p->fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len) {
		hear(p);
		return -1;
	}
	p->sent += len;
	return 0;
}

/* Read what is there; note the time of EOF. */
static void hear(struct peer *p)
{
	char buf[4096];
	ssize_t n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n > 0)
		p->echoed += n;
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		p->closed_at = now_ns();
}

/* Poll every open peer until @until; the count still open. */
static int listen_until(struct peer *peers, uint64_t until)
{
	struct pollfd pfd[NCONN];
	int i, n, open_ = 0;
	uint64_t now;

	while ((now = now_ns()) < until) {
		for (i = n = 0; i < NCONN; i++) {
			pfd[i].fd = peers[i].closed_at ? -1 : peers[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
			n += !peers[i].closed_at;
		}
		if (!n)
			break;
		if (poll(pfd, NCONN, (until - now) / MS + 1) <= 0)
			continue;
		for (i = 0; i < NCONN; i++)
			if (pfd[i].revents)
				hear(&peers[i]);
	}
	for (i = 0; i < NCONN; i++)
		open_ += !peers[i].closed_at;
	return open_;
}

static int idle_open(const struct peer *peers)
{
	int i, n = 0;

	for (i = 0; i < NCONN; i++)
		n += !peers[i].active && !peers[i].closed_at;
	return n;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

/*
 * A copy of the server's descriptor whose link reads @target, made with
 * pidfd_getfd(): the same open file.  The descriptor, or -errno.
 */
static int server_fd(pid_t pid, const char *target_want)
{
	char dir[64], path[PATH_MAX], target[PATH_MAX];
	int pidfd, fd = -ENOENT;
	struct dirent *d;
	ssize_t n;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		return -errno;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		fd = -errno;
		closedir(dp);
		return fd;
	}
	while ((d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, target_want))
			continue;
		fd = syscall(SYS_pidfd_getfd, pidfd, atoi(d->d_name), 0);
		if (fd < 0)
			fd = -errno;
		break;
	}
	closedir(dp);
	close(pidfd);
	return fd;
}

/* The server's own wheel's counters and its table's. */
struct server_stats {
	struct htw_stats wheel;
	struct htw_table_stats table;
};

/*
 * The server's own wheel and table, seen from here: HTW_IOC_STATS on its
 * /dev/htwheel descriptor, HTW_IOC_TABLE2_STATS on the table's.  0, or
 * -errno.
 */
static int server_stats(pid_t pid, struct server_stats *st)
{
	int fd = server_fd(pid, "/dev/htwheel"), ret;

	if (fd < 0)
		return fd;
	memset(st, 0, sizeof(*st));
	ret = ioctl(fd, HTW_IOC_STATS, &st->wheel) ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	fd = server_fd(pid, "anon_inode:[htwheel-table]");
	if (fd < 0)
		return fd;
	ret = ioctl(fd, HTW_IOC_TABLE2_STATS, &st->table) ? -errno : 0;
	close(fd);
	return ret;
}

FIXTURE(echo) {
	pid_t pid;
	FILE *out;
	int port;
	struct peer peers[NCONN];
};

FIXTURE_SETUP(echo)
{
	int ret = htw_test_table_supported();

	ASSERT_LE(0, ret) TH_LOG("/dev/htwheel: %s", strerror(-ret));
	if (!ret)
		SKIP(return, "the kernel does not report HTW_FEATURE_TABLE");
	self->pid = start_server(&self->out, &self->port);
	ASSERT_LT(0, self->pid) TH_LOG("the echo server did not start");
}

FIXTURE_TEARDOWN(echo)
{
	int i;

	for (i = 0; i < NCONN; i++)
		if (self->peers[i].fd > 0)
			close(self->peers[i].fd);
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
}

/* Every close must come at least IDLE_MS after our last send. */
static int early_closes(struct __test_metadata *_metadata, struct peer *peers)
{
	int i, early = 0;

	for (i = 0; i < NCONN; i++) {
		struct peer *p = &peers[i];

		if (!p->closed_at || p->closed_at - p->last_send >= IDLE_MS * MS)
			continue;
		TH_LOG("conn %d (%s) closed %llu ms after its last send", i,
		       p->active ? "active" : "idle",
		       (unsigned long long)((p->closed_at - p->last_send) / MS));
		early++;
	}
	return early;
}

TEST_F(echo, closes_exactly_the_idle_ones_never_early)
{
	struct peer *peers = self->peers;
	uint64_t start, next;
	int i, still_open, status, ret;
	unsigned long acc, idle, peer;
	struct server_stats st;

	for (i = 0; i < NCONN; i++) {
		peers[i].fd = dial(self->port);
		ASSERT_LE(0, peers[i].fd) TH_LOG("connect %d: %s", i, strerror(errno));
		peers[i].active = i % 2;
		ASSERT_EQ(0, say(&peers[i], "hello\n"));
		peers[i].max_gap = 0;
	}

	/*
	 * Phase 1: the active half talks every PING_MS for at least ACTIVE_MS
	 * and until the idle half has gone (or NEVER_MS: then it never will).
	 */
	start = now_ns();
	for (next = start; next < start + NEVER_MS * MS; next += PING_MS * MS) {
		if (next >= start + ACTIVE_MS * MS && idle_open(peers) == 0)
			break;
		for (i = 0; i < NCONN; i++)
			if (peers[i].active && !peers[i].closed_at)
				say(&peers[i], "ping\n");
		listen_until(peers, next + PING_MS * MS);
	}
	EXPECT_EQ(0, idle_open(peers));
	/* An active one may only have gone if we really fell silent. */
	for (i = 0; i < NCONN; i++) {
		unsigned long long gap = peers[i].max_gap;

		if (peers[i].active && peers[i].closed_at)
			EXPECT_LE(IDLE_MS * MS, gap)
				TH_LOG("active conn %d closed; longest gap %llu ms",
				       i, gap / MS);
	}

	/* Phase 2: silence; the active half must now go too. */
	still_open = listen_until(peers, now_ns() + NEVER_MS * MS);
	EXPECT_EQ(0, still_open);
	EXPECT_EQ(0, early_closes(_metadata, peers));
	/*
	 * Every line is echoed, but on a connection the server closed while
	 * it was active (allowed above only after a real silence of ours):
	 * the lines we sent while its close was on the way are lost.
	 */
	for (i = 0; i < NCONN; i++) {
		if (peers[i].active && peers[i].closed_at &&
		    peers[i].max_gap >= IDLE_MS * MS) {
			EXPECT_LE(peers[i].echoed, peers[i].sent);
		} else {
			EXPECT_EQ(peers[i].sent, peers[i].echoed) TH_LOG("conn %d", i);
		}
	}
	ret = server_stats(self->pid, &st);
	ASSERT_EQ(0, ret) TH_LOG("the server's /dev/htwheel: %s", strerror(-ret));

	/* The server counted them as idle closes, none as the peer's. */
	kill(self->pid, SIGTERM);
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	self->pid = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(3, fscanf(self->out, "accepted %lu idle-closed %lu peer-closed %lu",
			    &acc, &idle, &peer));
	EXPECT_EQ(NCONN, acc);
	EXPECT_EQ(NCONN, idle);
	EXPECT_EQ(0, peer);
	/* Each idle close came from a record of the table's ring. */
	EXPECT_LE(idle, st.table.fired);
	EXPECT_EQ(0, st.wheel.scheduled);
}

/*
 * Ten connections that the peer closes at once: each accept armed its
 * slot of the server's table (submitted once until the kernel took it in,
 * however often a reused fd armed it again), each close cancelled it
 * (nothing ever fired), no handle timer was used, and the server counted
 * them as the peer's closes.
 */
TEST_F(echo, peer_close_cancels_the_timer)
{
	unsigned long acc, idle, peer;
	struct server_stats st;
	int status, i, ret;

	for (i = 0; i < 10; i++) {
		self->peers[i].fd = dial(self->port);
		ASSERT_LE(0, self->peers[i].fd);
		close(self->peers[i].fd);
		self->peers[i].fd = -1;
	}
	/* Long enough for any timer left behind to have fired. */
	usleep(2 * IDLE_MS * 1000);
	ret = server_stats(self->pid, &st);
	ASSERT_EQ(0, ret) TH_LOG("the server's /dev/htwheel: %s", strerror(-ret));
	EXPECT_LT(0, st.table.entries);
	EXPECT_LE(1, st.table.taken);
	EXPECT_GE(10, st.table.taken);
	EXPECT_EQ(0, st.table.fired);
	EXPECT_EQ(0, st.wheel.scheduled);
	EXPECT_EQ(0, st.wheel.ready);
	kill(self->pid, SIGTERM);
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	self->pid = 0;
	ASSERT_EQ(3, fscanf(self->out, "accepted %lu idle-closed %lu peer-closed %lu",
			    &acc, &idle, &peer));
	EXPECT_EQ(10, acc);
	EXPECT_EQ(10, peer);
	EXPECT_EQ(0, idle);
}

TEST_HARNESS_MAIN
