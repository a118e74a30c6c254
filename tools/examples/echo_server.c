// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * htwheel-echo-server: an epoll TCP echo server on loopback that closes
 * connections idle for longer than --idle, with one libhtwheel timer per
 * connection (the IdleStateHandler pattern).
 *
 *   htwheel-echo-server [--port N] [--idle DUR] [--verbose]
 *
 * Prints "listening on 127.0.0.1:PORT" once ready; on SIGINT/SIGTERM
 * prints "accepted A idle-closed I peer-closed P" and exits 0.
 *
 * Activity does not touch the wheel at once: the connections that saw
 * activity during one epoll round are rescheduled together at its end,
 * with one htw_cancel_many() and one htw_schedule_many().  A timer is
 * named by a cookie of (generation << 32 | fd), and only the handle the
 * connection holds now may close it, so records of timers that were
 * replaced or of an fd reused since are ignored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "htwheel.h"

#define MAX_FDS		4096
#define MAX_EVENTS	256

struct conn {
	bool open;
	bool touched;		/* activity this round: reschedule at its end */
	uint32_t gen;
	uint64_t handle;	/* the idle timer that may close us, 0 if none */
};

struct server {
	struct htw *htw;
	int epfd, lfd;
	uint64_t idle_ns;
	bool verbose;
	struct conn conns[MAX_FDS];
	int touched[MAX_FDS];
	int ntouched;
	/* Reused every round: no allocation after start-up. */
	struct htw_cancel_entry cancels[MAX_FDS];
	struct htw_timer_entry entries[MAX_FDS];
	unsigned long accepted, idle_closed, peer_closed;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void touch(struct server *s, int fd)
{
	if (!s->conns[fd].touched) {
		s->conns[fd].touched = true;
		s->touched[s->ntouched++] = fd;
	}
}

static void conn_close(struct server *s, int fd)
{
	struct conn *c = &s->conns[fd];

	/* A timer that already fired is fine: its record no longer matches. */
	if (c->handle)
		htw_cancel(s->htw, c->handle);
	c->open = false;
	c->handle = 0;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

static void on_accept(struct server *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	while ((fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (fd >= MAX_FDS) {
			close(fd);
			continue;
		}
		ev.data.fd = fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			continue;
		}
		/*
		 * .touched stays: an fd closed and reused in the same round
		 * is still in s->touched[], and touch() must not add it twice.
		 */
		s->conns[fd].open = true;
		s->conns[fd].gen++;
		s->conns[fd].handle = 0;
		s->accepted++;
		touch(s, fd);
	}
}

/* Echo what there is; false if the connection is gone. */
static bool echo(int fd)
{
	char buf[4096];
	ssize_t n, w;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return false;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		/* An example, not a proxy: a peer that does not read is dropped. */
		w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w != n)
			return false;
	}
}

static void on_data(struct server *s, int fd)
{
	if (!s->conns[fd].open)
		return;
	if (echo(fd)) {
		touch(s, fd);
		return;
	}
	s->peer_closed++;
	conn_close(s, fd);
}

/* Data waiting that this round has not read yet counts as activity. */
static bool has_input(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void on_expiry(struct server *s, const struct htw_expiry *r)
{
	int fd = (int)(uint32_t)r->cookie;
	struct conn *c;

	if (fd < 0 || fd >= MAX_FDS)
		return;
	c = &s->conns[fd];
	if (!c->open || c->gen != r->cookie >> 32 || c->handle != r->handle)
		return;
	c->handle = 0;
	if (c->touched || has_input(fd)) {
		touch(s, fd);
		return;
	}
	if (s->verbose)
		printf("fd %d idle: closed\n", fd);
	s->idle_closed++;
	conn_close(s, fd);
}

static void on_timers(struct server *s)
{
	struct htw_expiry r[64];
	int n, i;

	while ((n = htw_read(s->htw, r, 64)) > 0)
		for (i = 0; i < n; i++)
			on_expiry(s, &r[i]);
}

/* End of a round: replace the timers of every connection that was active. */
static void reschedule(struct server *s)
{
	int i, fd, nc = 0, ne = 0, done;

	for (i = 0; i < s->ntouched; i++) {
		struct conn *c = &s->conns[s->touched[i]];

		c->touched = false;
		if (!c->open)
			continue;
		if (c->handle)
			s->cancels[nc++] = (struct htw_cancel_entry){ .handle = c->handle };
		s->entries[ne] = (struct htw_timer_entry){
			.cookie = (uint64_t)c->gen << 32 | s->touched[i],
			.expires = s->idle_ns,
		};
		s->touched[ne++] = s->touched[i];
	}
	s->ntouched = 0;
	if (nc)
		htw_cancel_many(s->htw, s->cancels, nc);
	done = ne ? htw_schedule_many(s->htw, s->entries, ne) : 0;
	for (i = 0; i < ne; i++) {
		fd = s->touched[i];
		s->conns[fd].handle = i < done ? s->entries[i].handle : 0;
		/* No timer, no idle detection: refuse rather than leak. */
		if (i >= done)
			conn_close(s, fd);
	}
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	socklen_t len = sizeof(a);
	int one = 1, fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		close(fd);
		return -1;
	}
	printf("listening on 127.0.0.1:%d\n", ntohs(a.sin_port));
	fflush(stdout);
	return fd;
}

/*
 * SIGINT and SIGTERM are blocked except inside epoll_pwait(): one that
 * comes while a round is handled waits there, and interrupts the wait
 * instead of arriving between the test of @stop and the wait.
 */
static void serve(struct server *s, const sigset_t *unblocked)
{
	struct epoll_event ev[MAX_EVENTS];
	int n, i;

	while (!stop) {
		n = epoll_pwait(s->epfd, ev, MAX_EVENTS, -1, unblocked);
		for (i = 0; i < n; i++) {
			if (ev[i].data.fd == s->lfd)
				on_accept(s);
			else if (ev[i].data.fd == htw_fd(s->htw))
				on_timers(s);
			else
				on_data(s, ev[i].data.fd);
		}
		reschedule(s);
	}
}

static int setup(struct server *s, int port)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ret = htw_open(&s->htw, NULL);

	if (ret) {
		fprintf(stderr, "htwheel-echo-server: %s: %s\n", HTW_DEVICE_PATH,
			strerror(-ret));
		return -1;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->lfd = listen_on(port);
	if (s->epfd < 0 || s->lfd < 0) {
		perror("htwheel-echo-server: listen");
		return -1;
	}
	ev.data.fd = s->lfd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.fd = htw_fd(s->htw);
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	return 0;
}

static int parse_args(struct server *s, int argc, char **argv, int *port)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			*port = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--idle") && i + 1 < argc) {
			if (htw_parse_duration(argv[++i], &s->idle_ns) || !s->idle_ns)
				return -1;
		} else if (!strcmp(argv[i], "--verbose")) {
			s->verbose = true;
		} else {
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct server s = { .idle_ns = 5 * HTW_NSEC_PER_SEC };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, unblocked;
	int port = 0;

	if (parse_args(&s, argc, argv, &port)) {
		fprintf(stderr, "usage: htwheel-echo-server [--port N] [--idle DUR] [--verbose]\n");
		return 2;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (setup(&s, port))
		return 1;
	serve(&s, &unblocked);
	printf("accepted %lu idle-closed %lu peer-closed %lu\n",
	       s.accepted, s.idle_closed, s.peer_closed);
	htw_close(s.htw);
	return 0;
}
