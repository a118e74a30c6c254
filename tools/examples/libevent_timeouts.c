// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * htwheel-libevent-timeouts: idle timeouts of connections kept by
 * libhtwheel in a libevent loop, through an event on the htwheel
 * descriptor.
 *
 *   htwheel-libevent-timeouts [--edge]
 *
 * Serves the EX_CONNS connections of example_peers.h, each an
 * EV_READ | EV_PERSIST event on its non-blocking socket, with an idle
 * timer per connection (htw_schedule(), cookie = its index) pushed back
 * with htw_rearm() whenever a callback has read data.  One more
 * EV_READ | EV_PERSIST event, made with event_new() on htw_fd(), drains
 * the expiry records with htw_read() until it returns 0 (EAGAIN) and
 * closes the connections they name.  --edge adds EV_ET to that event:
 * edge-triggered, it is only told of new records, which works because
 * every callback reads until none is left.
 *
 * Prints a line per event and a summary; exits 0 when every connection
 * has ended and the peers played their parts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/event.h>

#include "htwheel.h"
#include "example_peers.h"

#define PROG		"htwheel-libevent-timeouts"
#define MAX_RECORDS	16

struct server;

struct conn {
	struct server *s;
	struct event *ev;	/* NULL once closed */
	int fd;
	unsigned int idx;
	uint64_t timer;		/* its idle timer's handle; 0 for none */
	uint64_t last_rx;	/* htw_now() of the last data */
	unsigned int msgs;
};

struct server {
	struct event_base *base;
	struct htw *htw;
	struct event *timers;
	int open_conns;
	struct conn conns[EX_CONNS];
	unsigned long wakeups, records, by_timer, by_peer;
	int err;
};

/*
 * Idle from now: push the timer back, or schedule one if there is none
 * (its record was read: a one-shot timer is then gone).  htw_rearm()'s
 * 1 (was pending) or 0 (had fired: its record is withdrawn), 2 for a new
 * timer, or -errno.
 */
static int idle_from_now(struct conn *c)
{
	int ret;

	if (c->timer) {
		ret = htw_rearm(c->s->htw, c->timer, htw_ms(EX_IDLE_MS));
		if (ret != -ENOENT)
			return ret;
	}
	ret = htw_schedule(c->s->htw, c->idx, htw_ms(EX_IDLE_MS), 0, &c->timer);
	return ret ? ret : 2;
}

static void conn_close(struct conn *c)
{
	struct server *s = c->s;

	event_free(c->ev);
	c->ev = NULL;
	close(c->fd);
	/* The last one: with no event left, event_base_dispatch() returns. */
	if (--s->open_conns == 0)
		event_del(s->timers);
}

/* Read until EAGAIN: 1 if data came, 0 at EOF, -errno on an error. */
static int drain_socket(struct conn *c)
{
	char buf[256];
	ssize_t n;
	int got = 0;

	for (;;) {
		n = read(c->fd, buf, sizeof(buf));
		if (n > 0) {
			got = 1;
			c->msgs++;
			continue;
		}
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? got : -errno;
	}
}

static void on_data(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	int ret = drain_socket(c);

	(void)fd;
	(void)what;
	if (ret > 0) {
		c->last_rx = htw_now(c->s->htw);
		ret = idle_from_now(c);
		if (ret < 0) {
			printf("conn %u: no idle timer (%s): closed\n", c->idx, strerror(-ret));
			conn_close(c);
			return;
		}
		printf("conn %u: data read; idle timer pushed back (%s)\n", c->idx,
		       ret == 2 ? "htw_schedule: new" :
		       ret ? "htw_rearm: was pending" : "htw_rearm: record withdrawn");
		return;
	}
	if (ret < 0) {
		printf("conn %u: read failed: %s; closed\n", c->idx, strerror(-ret));
		conn_close(c);
		return;
	}
	/* Its record, if it had fired, finds the connection closed. */
	ret = c->timer ? htw_cancel(c->s->htw, c->timer) : -ENOENT;
	printf("conn %u: closed by the peer after %u reads, its timer cancelled (htw_cancel: %s)\n",
	       c->idx, c->msgs, !ret ? "0" : ret == -EALREADY ? "-EALREADY, it had fired" :
		       "no such timer");
	c->s->by_peer++;
	conn_close(c);
}

/* Data waiting that the loop has not read yet counts as activity. */
static bool has_input(int fd)
{
	char byte;

	return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void on_record(struct server *s, const struct htw_expiry *r)
{
	uint64_t now = htw_now(s->htw);
	struct conn *c;
	int ret;

	if (r->cookie >= EX_CONNS)
		return;
	c = &s->conns[r->cookie];
	/* Stale: the connection is gone, or has had a newer timer since. */
	if (!c->ev || r->handle != c->timer)
		return;
	c->timer = 0;	/* read: the one-shot timer is gone */
	if (has_input(c->fd)) {
		ret = idle_from_now(c);
		printf("conn %u: timer fired with data waiting: kept (%s)\n", c->idx,
		       ret < 0 ? strerror(-ret) : "timer again");
		return;
	}
	printf("conn %u: idle for %.1f ms, closed by its htwheel timer (fired %.1f ms late, handled %.1f ms late)\n",
	       c->idx, ex_ms(now - c->last_rx),
	       ex_ms((int64_t)(r->expired_ns - r->deadline_ns)),
	       ex_ms((int64_t)(now - r->deadline_ns)));
	s->by_timer++;
	conn_close(c);
}

/* The htwheel descriptor is readable: read until EAGAIN (htw_read() 0). */
static void on_timers(evutil_socket_t fd, short what, void *arg)
{
	struct htw_expiry r[MAX_RECORDS];
	struct server *s = arg;
	int n, i, total = 0;

	(void)fd;
	(void)what;
	s->wakeups++;
	while ((n = htw_read(s->htw, r, MAX_RECORDS)) > 0) {
		total += n;
		for (i = 0; i < n; i++)
			on_record(s, &r[i]);
	}
	if (n < 0) {
		fprintf(stderr, PROG ": htw_read: %s\n", strerror(-n));
		s->err = 1;
		event_base_loopbreak(s->base);
		return;
	}
	printf("loop: htwheel fd readable, htw_read drained %d record%s\n",
	       total, total == 1 ? "" : "s");
	s->records += total;
}

static int conn_start(struct server *s, unsigned int i, int fd)
{
	struct conn *c = &s->conns[i];
	int ret;

	c->s = s;
	c->idx = i;
	c->fd = fd;
	/* Non-blocking: each callback reads until EAGAIN. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		return -errno;
	c->ev = event_new(s->base, fd, EV_READ | EV_PERSIST, on_data, c);
	if (!c->ev || event_add(c->ev, NULL))
		return -ENOMEM;
	s->open_conns++;
	c->last_rx = htw_now(s->htw);
	ret = htw_schedule(s->htw, i, htw_ms(EX_IDLE_MS), 0, &c->timer);
	return ret;
}

static int setup(struct server *s, bool edge, pid_t *peers)
{
	short what = EV_READ | EV_PERSIST | (edge ? EV_ET : 0);
	int fds[EX_CONNS], ret;
	unsigned int i;

	ret = htw_open(&s->htw, NULL);
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n", HTW_DEVICE_PATH, strerror(-ret));
		return -1;
	}
	ret = ex_peers_start(fds, peers);
	if (ret) {
		fprintf(stderr, PROG ": starting the peers: %s\n", strerror(-ret));
		return -1;
	}
	s->base = event_base_new();
	if (!s->base) {
		fprintf(stderr, PROG ": event_base_new failed\n");
		return -1;
	}
	s->timers = event_new(s->base, htw_fd(s->htw), what, on_timers, s);
	if (!s->timers || event_add(s->timers, NULL)) {
		fprintf(stderr, PROG ": event_new on the htwheel fd failed\n");
		return -1;
	}
	for (i = 0; i < EX_CONNS; i++) {
		ret = conn_start(s, i, fds[i]);
		if (ret) {
			fprintf(stderr, PROG ": conn %u: %s\n", i, strerror(-ret));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct server s;
	bool edge = argc == 2 && !strcmp(argv[1], "--edge");
	pid_t peers = 0;
	int ret;

	if (argc > 2 || (argc == 2 && !edge)) {
		fprintf(stderr, "usage: " PROG " [--edge]\n");
		return 2;
	}
	/* Line by line: the peers' process prints to the same stdout. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("libevent: %d connections, idle timeout %d ms; an event on the htwheel fd, %s-triggered\n",
	       EX_CONNS, EX_IDLE_MS, edge ? "edge" : "level");
	if (setup(&s, edge, &peers)) {
		ex_peers_stop(peers);
		return 1;
	}
	printf("libevent: backend %s\n", event_base_get_method(s.base));
	/* 1 when no event is left: every connection has ended. */
	ret = event_base_dispatch(s.base) < 0 || s.err;
	printf("summary: %lu wakeups of the htwheel fd's event, %lu records; %lu closed by htwheel timers, %lu by their peers\n",
	       s.wakeups, s.records, s.by_timer, s.by_peer);
	if (s.err)
		ex_peers_stop(peers);
	else if (ex_peers_wait(peers))
		ret = 1;
	event_free(s.timers);
	event_base_free(s.base);
	htw_close(s.htw);
	return ret ? 1 : 0;
}
