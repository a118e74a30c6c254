// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * htwheel-echo-server: an epoll TCP echo server on loopback that closes
 * connections idle for longer than --idle, with one slot of a libhtwheel
 * timer table per connection (the IdleStateHandler pattern).
 *
 *   htwheel-echo-server [--port N] [--idle DUR] [--verbose]
 *
 * Prints "listening on 127.0.0.1:PORT" once ready; on SIGINT/SIGTERM
 * prints "accepted A idle-closed I peer-closed P" and exits 0.  It needs
 * a module with the table (HTW_FEATURE_TABLE).
 *
 * What it shows: pushing an idle timeout back on every bit of activity
 * costs no system call, nor even an atomic: the lazy idiom (libev's
 * "method 3"), which `make bench`'s idle re-arm row measured as the
 * table's cheaper way.  Slot fd belongs to connection fd, armed on
 * accept with htw_table2_arm(); activity only stores the time in the
 * connection.  When the slot fires, the record's connection is idle only
 * if --idle has passed since its last activity; otherwise the slot is
 * armed again for --idle after that activity.  A peer's close disarms the
 * slot with htw_table2_cancel().  Every arm and cancel is a new
 * generation of the slot, and a record carries the generation that
 * fired: records are reaped from the completion ring when the table's
 * descriptor polls readable, and only the record of the generation a
 * connection armed last may close it (one of an fd reused since is
 * another generation, and is ignored).
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

#define MAX_FDS		4096	/* also the table's slots: slot fd for fd */
#define MAX_EVENTS	256
#define MAX_RECORDS	64

struct conn {
	bool open;
	/* The slot's generation armed last: only its record may close us. */
	uint64_t timer_gen;
	/* The last activity, on the table's clock: a plain store. */
	uint64_t last;
};

struct server {
	struct htw *htw;
	struct htw_table2 *tab;
	int epfd, lfd;
	uint64_t idle_ns;
	bool verbose;
	struct conn conns[MAX_FDS];
	unsigned long accepted, idle_closed, peer_closed;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void conn_close(struct server *s, int fd)
{
	/*
	 * A slot that fired already is fine: its record's generation is no
	 * longer the one a connection of this fd armed.
	 */
	htw_table2_cancel(s->tab, fd);
	s->conns[fd].open = false;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

/*
 * Arm the slot for deadline @d, a new generation (on accept, or when it
 * fired early for a connection active since).  False if the connection
 * lost its timer and was closed.
 */
static bool arm_idle(struct server *s, int fd, uint64_t d)
{
	struct conn *c = &s->conns[fd];
	int ret;

	/*
	 * The slot is armed with a new generation even if the doorbell
	 * failed; a record of an earlier one, fired before, will not match.
	 */
	ret = htw_table2_arm(s->tab, fd, d, &c->timer_gen);
	if (ret >= 0)
		return true;
	/* No timer, no idle detection: refuse rather than leak. */
	conn_close(s, fd);
	return false;
}

/*
 * Activity: the time, read after the activity it follows, so that the
 * deadline derived from it is never sooner than --idle after what the
 * peer last sent.  No system call, no atomic: the slot keeps its deadline
 * and its record re-checks.
 */
static void touch(struct server *s, int fd)
{
	s->conns[fd].last = htw_now(s->htw);
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
		s->conns[fd].open = true;
		s->accepted++;
		touch(s, fd);
		arm_idle(s, fd, s->conns[fd].last + s->idle_ns);
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

static void on_expiry(struct server *s, const struct htw_table2_cqe *r)
{
	int fd = (int)r->slot;
	struct conn *c;

	if (r->slot >= MAX_FDS)
		return;
	c = &s->conns[fd];
	if (!c->open || c->timer_gen != r->gen)
		return;
	/* Active since the slot was armed: armed again, --idle after that. */
	if (c->last + s->idle_ns > htw_now(s->htw)) {
		arm_idle(s, fd, c->last + s->idle_ns);
		return;
	}
	/* The slot is disarmed now: this arms it again. */
	if (has_input(fd)) {
		touch(s, fd);
		arm_idle(s, fd, c->last + s->idle_ns);
		return;
	}
	if (s->verbose)
		printf("fd %d idle: closed\n", fd);
	s->idle_closed++;
	conn_close(s, fd);
}

/* The table's descriptor is readable: reap the completion ring. */
static void on_timers(struct server *s)
{
	struct htw_table2_cqe r[MAX_RECORDS];
	int n, i;

	while ((n = htw_table2_reap(s->tab, r, MAX_RECORDS)) > 0)
		for (i = 0; i < n; i++)
			on_expiry(s, &r[i]);
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
			else if (ev[i].data.fd == s->tab->fd)
				on_timers(s);
			else
				on_data(s, ev[i].data.fd);
		}
	}
}

/* The instance and its table of MAX_FDS slots; 0 or -1, with a message. */
static int setup_timers(struct server *s)
{
	int ret = htw_open(&s->htw, NULL);

	if (ret) {
		fprintf(stderr, "htwheel-echo-server: %s: %s\n", HTW_DEVICE_PATH,
			strerror(-ret));
		return -1;
	}
	ret = htw_table2_create(s->htw, MAX_FDS, 0, &s->tab);
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr, "htwheel-echo-server: %s: %s\n", HTW_DEVICE_PATH,
			"the module has no shared timer table (HTW_FEATURE_TABLE)");
		return -1;
	}
	if (ret) {
		fprintf(stderr, "htwheel-echo-server: %s: a table of %d slots: %s\n",
			HTW_DEVICE_PATH, MAX_FDS, strerror(-ret));
		return -1;
	}
	return 0;
}

static int setup(struct server *s, int port)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (setup_timers(s))
		return -1;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->lfd = listen_on(port);
	if (s->epfd < 0 || s->lfd < 0) {
		perror("htwheel-echo-server: listen");
		return -1;
	}
	ev.data.fd = s->lfd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.fd = s->tab->fd;
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
	htw_table2_close(s.tab);
	htw_close(s.htw);
	return 0;
}
