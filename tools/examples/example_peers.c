// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The clients of the event-loop examples: see example_peers.h.  Sends are
 * on a fixed grid from the start (message k at k * EX_PING_MS), so a late
 * send does not shift the ones after it, and the longest gap between two
 * sends says whether this side itself fell silent (a stalled emulator)
 * for as long as the idle timeout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "example_peers.h"

#define MS	1000000ULL
#define NEVER	UINT64_MAX

struct peer {
	int fd;			/* -1 once the connection has ended */
	enum ex_part part;
	unsigned int sent, planned;
	uint64_t start, last_send, max_gap;
};

static const char *const part_name[] = { "busy", "idle", "quiet" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned int planned(enum ex_part part)
{
	switch (part) {
	case EX_BUSY:
		return EX_BUSY_MS / EX_PING_MS + 1;
	case EX_QUIET:
		return EX_QUIET_MS / EX_PING_MS + 1;
	default:
		return 1;
	}
}

static uint64_t next_send(const struct peer *p)
{
	if (p->fd < 0 || p->sent == p->planned)
		return NEVER;
	return p->start + p->sent * EX_PING_MS * MS;
}

static void print_plan(int i, const struct peer *p)
{
	if (p->planned == 1)
		printf("peer: conn %d plan %s: 1 message, then silence\n", i,
		       part_name[p->part]);
	else
		printf("peer: conn %d plan %s: %u messages %d ms apart, then %s\n",
		       i, part_name[p->part], p->planned, EX_PING_MS,
		       p->part == EX_BUSY ? "it hangs up" : "silence");
}

/* The server closed connection @i: say how long we had been silent. */
static void closed_by_server(int i, struct peer *p)
{
	uint64_t gap = now_ns() - p->last_send;

	if (gap > p->max_gap)
		p->max_gap = gap;
	printf("peer: conn %d: closed by the server %.1f ms after my last message (%u of %u sent, longest gap %.1f ms)\n",
	       i, ex_ms(gap), p->sent, p->planned, ex_ms(p->max_gap));
	close(p->fd);
	p->fd = -1;
}

static void send_one(int i, struct peer *p)
{
	char msg[32];
	uint64_t now = now_ns();
	int len = snprintf(msg, sizeof(msg), "ping %u\n", p->sent);

	if (p->sent && now - p->last_send > p->max_gap)
		p->max_gap = now - p->last_send;
	/* The time before the send: the server cannot have seen it sooner. */
	p->last_send = now;
	if (send(p->fd, msg, len, MSG_NOSIGNAL) != len) {
		closed_by_server(i, p);
		return;
	}
	p->sent++;
	if (p->part == EX_BUSY && p->sent == p->planned) {
		printf("peer: conn %d: hung up after %u messages (longest gap %.1f ms)\n",
		       i, p->sent, ex_ms(p->max_gap));
		close(p->fd);
		p->fd = -1;
	}
}

/* Wait for EOF on the open connections until @until, or for one to end. */
static void wait_until(struct peer *peers, uint64_t until)
{
	struct pollfd pfd[EX_CONNS];
	uint64_t now = now_ns();
	char buf[64];
	int i;

	for (i = 0; i < EX_CONNS; i++) {
		pfd[i].fd = peers[i].fd;
		pfd[i].events = POLLIN;
	}
	if (poll(pfd, EX_CONNS, until > now ? (until - now) / MS + 1 : 0) <= 0)
		return;
	for (i = 0; i < EX_CONNS; i++) {
		if (pfd[i].fd < 0 || !pfd[i].revents)
			continue;
		/* The servers never write: anything readable is the end. */
		if (recv(pfd[i].fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			closed_by_server(i, &peers[i]);
	}
}

/* The child: play every part; exit 1 if a connection was never closed. */
static void play(struct peer *peers)
{
	uint64_t next, now, last = 0;
	int i, open_, rc = 0;

	for (;;) {
		next = NEVER;
		open_ = 0;
		for (i = 0; i < EX_CONNS; i++) {
			if (next_send(&peers[i]) < next)
				next = next_send(&peers[i]);
			if (peers[i].fd >= 0) {
				open_++;
				if (peers[i].last_send > last)
					last = peers[i].last_send;
			}
		}
		if (!open_)
			break;
		now = now_ns();
		if (next == NEVER && now > last + EX_GIVE_UP_MS * MS)
			break;
		if (next > now) {
			wait_until(peers, next == NEVER ? last + EX_GIVE_UP_MS * MS : next);
			continue;
		}
		for (i = 0; i < EX_CONNS; i++)
			if (next_send(&peers[i]) <= now)
				send_one(i, &peers[i]);
	}
	for (i = 0; i < EX_CONNS; i++) {
		if (peers[i].fd < 0)
			continue;
		printf("peer: conn %d: still open %d ms after my last message\n",
		       i, EX_GIVE_UP_MS);
		rc = 1;
	}
	fflush(stdout);
	_exit(rc);
}

/*
 * The child keeps only its ends and stdio: not the server's htwheel
 * instance or ring, which would otherwise live on in it.
 */
static void close_others(const struct peer *peers)
{
	int fd, i;

	for (fd = 3; fd < 1024; fd++) {
		for (i = 0; i < EX_CONNS && peers[i].fd != fd; i++)
			;
		if (i == EX_CONNS)
			close(fd);
	}
}

int ex_peers_start(int fds[EX_CONNS], pid_t *pid)
{
	struct peer peers[EX_CONNS];
	int sv[EX_CONNS][2], i, ret;
	uint64_t start;

	for (i = 0; i < EX_CONNS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i])) {
			ret = -errno;
			while (i--) {
				close(sv[i][0]);
				close(sv[i][1]);
			}
			return ret;
		}
	}
	fflush(stdout);
	*pid = fork();
	if (*pid < 0) {
		ret = -errno;
		for (i = 0; i < EX_CONNS; i++) {
			close(sv[i][0]);
			close(sv[i][1]);
		}
		return ret;
	}
	if (*pid) {
		for (i = 0; i < EX_CONNS; i++) {
			close(sv[i][1]);
			fds[i] = sv[i][0];
		}
		return 0;
	}
	start = now_ns();
	for (i = 0; i < EX_CONNS; i++) {
		close(sv[i][0]);
		memset(&peers[i], 0, sizeof(peers[i]));
		peers[i].fd = sv[i][1];
		peers[i].part = ex_part(i);
		peers[i].planned = planned(peers[i].part);
		peers[i].start = start;
		print_plan(i, &peers[i]);
	}
	close_others(peers);
	play(peers);
	return 0;
}

int ex_peers_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void ex_peers_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	ex_peers_wait(pid);
}
