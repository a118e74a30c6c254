// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * htwheel-libuv-timeouts: idle timeouts of connections kept by libhtwheel
 * in a libuv loop, through a uv_poll_t on the htwheel descriptor.
 *
 *   htwheel-libuv-timeouts [--table]
 *
 * Serves the EX_CONNS connections of example_peers.h, each a uv_pipe_t
 * reading with uv_read_start(), with an idle timer per connection pushed
 * back on every read.  The uv_poll_t watches the htwheel descriptor for
 * UV_READABLE; its callback drains the expiry records and closes the
 * connections they name.
 *
 *   default  handle timers: htw_schedule() (cookie = the connection's
 *            index), htw_rearm(), htw_cancel(); records from htw_read(),
 *            called until it returns 0
 *   --table  one slot of a timer table per connection: htw_table2_arm()
 *            (an exchange on shared memory, no system call, to move it
 *            later), htw_table2_cancel(); records from htw_table2_reap()
 *            in the callback of a second uv_poll_t, on the table's own
 *            descriptor, which polls readable while the completion ring
 *            holds one; a record counts if it is of the generation the
 *            connection armed last
 *
 * Prints a line per event and a summary; exits 0 when every connection
 * has ended and the peers played their parts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <uv.h>

#include "htwheel.h"
#include "example_peers.h"

#define PROG		"htwheel-libuv-timeouts"
#define MAX_RECORDS	16

struct server;

struct conn {
	uv_pipe_t pipe;		/* handle.data: this connection */
	struct server *s;
	unsigned int idx;
	bool open;
	uint64_t timer;		/* handle timer; 0 for none */
	uint64_t deadline;	/* table slot: the deadline stored last */
	uint64_t gen;		/* table slot: its generation armed last */
	uint64_t last_rx;	/* htw_now() of the last data */
	unsigned int msgs;
	char buf[256];
};

struct server {
	uv_loop_t *loop;
	struct htw *htw;
	struct htw_table2 *tab;	/* --table */
	uv_poll_t timers;
	uv_poll_t table;	/* --table: on the table's descriptor */
	int open_conns;
	struct conn conns[EX_CONNS];
	unsigned long wakeups, records, by_timer, by_peer;
	int err;
};

/*
 * Idle from now.  A handle timer is pushed back, or scheduled anew if it
 * has none (its record was read: a one-shot timer is then gone); a slot
 * gets the new deadline.  1 if the timer was pending, 0 if it had fired
 * (a withdrawn record; a slot armed again), 2 for a new timer, -errno.
 */
static int idle_from_now(struct conn *c)
{
	struct server *s = c->s;
	int ret;

	if (s->tab) {
		c->deadline = htw_now(s->htw) + htw_ms(EX_IDLE_MS);
		return htw_table2_arm(s->tab, c->idx, c->deadline, &c->gen);
	}
	if (c->timer) {
		ret = htw_rearm(s->htw, c->timer, htw_ms(EX_IDLE_MS));
		if (ret != -ENOENT)
			return ret;
	}
	ret = htw_schedule(s->htw, c->idx, htw_ms(EX_IDLE_MS), 0, &c->timer);
	return ret ? ret : 2;
}

/* What htw_cancel() or htw_table2_cancel() said, for the log. */
static const char *timer_cancel(struct conn *c)
{
	struct server *s = c->s;
	int ret;

	if (s->tab)
		return htw_table2_cancel(s->tab, c->idx) == 1 ?
		       "htw_table2_cancel: 1" : "htw_table2_cancel: 0, it had fired";
	ret = c->timer ? htw_cancel(s->htw, c->timer) : -ENOENT;
	return !ret ? "htw_cancel: 0" : ret == -EALREADY ?
	       "htw_cancel: -EALREADY, it had fired" : "htw_cancel: no such timer";
}

static void conn_close(struct conn *c)
{
	struct server *s = c->s;

	c->open = false;
	/* uv_close() closes the descriptor too. */
	uv_close((uv_handle_t *)&c->pipe, NULL);
	/* The last one: without active handles, uv_run() returns. */
	if (--s->open_conns == 0) {
		uv_close((uv_handle_t *)&s->timers, NULL);
		if (s->tab)
			uv_close((uv_handle_t *)&s->table, NULL);
	}
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct conn *c = h->data;

	(void)hint;
	*buf = uv_buf_init(c->buf, sizeof(c->buf));
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
	struct conn *c = stream->data;
	int ret;

	(void)buf;
	if (n == 0)
		return;		/* EAGAIN: nothing this time */
	if (n > 0) {
		c->msgs++;
		c->last_rx = htw_now(c->s->htw);
		ret = idle_from_now(c);
		if (ret < 0) {
			printf("conn %u: no idle timer (%s): closed\n", c->idx, strerror(-ret));
			conn_close(c);
			return;
		}
		printf("conn %u: read %zd bytes; idle timer pushed back (%s)\n", c->idx, n,
		       ret == 2 ? "htw_schedule: new" : ret ? "was pending" :
		       c->s->tab ? "slot had fired: armed again" : "record withdrawn");
		return;
	}
	if (n == UV_EOF) {
		printf("conn %u: closed by the peer after %u reads, its timer cancelled (%s)\n",
		       c->idx, c->msgs, timer_cancel(c));
		c->s->by_peer++;
	} else {
		printf("conn %u: read failed: %s; closed (%s)\n", c->idx, uv_strerror(n),
		       timer_cancel(c));
	}
	conn_close(c);
}

/* Data waiting that the loop has not read yet counts as activity. */
static bool has_input(struct conn *c)
{
	uv_os_fd_t fd;
	char byte;

	return !uv_fileno((uv_handle_t *)&c->pipe, &fd) &&
	       recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* One record, of a handle timer or of a slot: close its connection. */
static void on_expiry(struct server *s, unsigned int i, uint64_t deadline,
		      uint64_t expired)
{
	struct conn *c = &s->conns[i];
	uint64_t now = htw_now(s->htw);
	int ret;

	if (has_input(c)) {
		ret = idle_from_now(c);
		printf("conn %u: timer fired with data waiting: kept (%s)\n", c->idx,
		       ret < 0 ? strerror(-ret) : "timer again");
		return;
	}
	printf("conn %u: idle for %.1f ms, closed by its htwheel timer (fired %.1f ms late, handled %.1f ms late)\n",
	       i, ex_ms(now - c->last_rx), ex_ms((int64_t)(expired - deadline)),
	       ex_ms((int64_t)(now - deadline)));
	s->by_timer++;
	conn_close(c);
}

/* Handle timers: read until htw_read() says EAGAIN (0). */
static int drain_records(struct server *s)
{
	struct htw_expiry r[MAX_RECORDS];
	struct conn *c;
	int n, i, total = 0;

	while ((n = htw_read(s->htw, r, MAX_RECORDS)) > 0) {
		total += n;
		for (i = 0; i < n; i++) {
			if (r[i].cookie >= EX_CONNS)
				continue;
			c = &s->conns[r[i].cookie];
			/* Stale: the connection is gone, or has a newer timer. */
			if (!c->open || r[i].handle != c->timer)
				continue;
			c->timer = 0;	/* read: the one-shot timer is gone */
			on_expiry(s, r[i].cookie, r[i].deadline_ns, r[i].expired_ns);
		}
	}
	return n < 0 ? n : total;
}

/* Table slots: reap the completion ring until it is empty. */
static int reap_records(struct server *s)
{
	struct htw_table2_cqe r[MAX_RECORDS];
	struct conn *c;
	int n, i, total = 0;

	while ((n = htw_table2_reap(s->tab, r, MAX_RECORDS)) > 0) {
		total += n;
		for (i = 0; i < n; i++) {
			if (r[i].slot >= EX_CONNS)
				continue;
			c = &s->conns[r[i].slot];
			/* Stale: closed, or armed since (another generation). */
			if (!c->open || r[i].gen != c->gen)
				continue;
			/* The record has no time: it fired by now, at the latest. */
			on_expiry(s, r[i].slot, c->deadline, htw_now(s->htw));
		}
	}
	return n < 0 ? n : total;
}

static void on_timers(uv_poll_t *h, int status, int events)
{
	struct server *s = h->data;
	int n;

	(void)events;
	s->wakeups++;
	if (status < 0) {
		fprintf(stderr, PROG ": poll of %s: %s\n", HTW_DEVICE_PATH, uv_strerror(status));
		s->err = 1;
		uv_stop(s->loop);
		return;
	}
	n = s->tab ? reap_records(s) : drain_records(s);
	if (n < 0) {
		fprintf(stderr, PROG ": %s: %s\n", s->tab ? "htw_table2_reap" : "htw_read",
			strerror(-n));
		s->err = 1;
		uv_stop(s->loop);
		return;
	}
	printf("loop: htwheel fd readable, %s %d record%s\n",
	       s->tab ? "htw_table2_reap took" : "htw_read drained", n, n == 1 ? "" : "s");
	s->records += n;
}

static int conn_start(struct server *s, unsigned int i, int fd)
{
	struct conn *c = &s->conns[i];
	int ret;

	c->s = s;
	c->idx = i;
	c->pipe.data = c;
	ret = uv_pipe_init(s->loop, &c->pipe, 0);
	if (!ret)
		ret = uv_pipe_open(&c->pipe, fd);
	if (!ret)
		ret = uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
	if (ret) {
		fprintf(stderr, PROG ": conn %u: %s\n", i, uv_strerror(ret));
		return -1;
	}
	c->open = true;
	s->open_conns++;
	c->last_rx = htw_now(s->htw);
	if (s->tab) {
		c->deadline = c->last_rx + htw_ms(EX_IDLE_MS);
		ret = htw_table2_arm(s->tab, i, c->deadline, &c->gen);
	} else {
		ret = htw_schedule(s->htw, i, htw_ms(EX_IDLE_MS), 0, &c->timer);
	}
	if (ret < 0) {
		fprintf(stderr, PROG ": conn %u: its idle timer: %s\n", i, strerror(-ret));
		return -1;
	}
	return 0;
}

static int setup(struct server *s, bool table, pid_t *peers)
{
	int fds[EX_CONNS], ret;
	unsigned int i;

	ret = htw_open(&s->htw, NULL);
	if (!ret && table)
		ret = htw_table2_create(s->htw, EX_CONNS, 0, &s->tab);
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n", HTW_DEVICE_PATH, strerror(-ret));
		return -1;
	}
	ret = ex_peers_start(fds, peers);
	if (ret) {
		fprintf(stderr, PROG ": starting the peers: %s\n", strerror(-ret));
		return -1;
	}
	s->loop = uv_default_loop();
	s->timers.data = s;
	ret = uv_poll_init(s->loop, &s->timers, htw_fd(s->htw));
	if (!ret)
		ret = uv_poll_start(&s->timers, UV_READABLE, on_timers);
	if (!ret && s->tab) {
		s->table.data = s;
		ret = uv_poll_init(s->loop, &s->table, s->tab->fd);
		if (!ret)
			ret = uv_poll_start(&s->table, UV_READABLE, on_timers);
	}
	if (ret) {
		fprintf(stderr, PROG ": uv_poll_start: %s\n", uv_strerror(ret));
		return -1;
	}
	for (i = 0; i < EX_CONNS; i++)
		if (conn_start(s, i, fds[i]))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct server s;
	bool table = argc == 2 && !strcmp(argv[1], "--table");
	pid_t peers = 0;
	int ret;

	if (argc > 2 || (argc == 2 && !table)) {
		fprintf(stderr, "usage: " PROG " [--table]\n");
		return 2;
	}
	/* Line by line: the peers' process prints to the same stdout. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("libuv: %d connections, idle timeout %d ms; a uv_poll_t on the htwheel fd, %s\n",
	       EX_CONNS, EX_IDLE_MS, table ? "timer table slots" : "handle timers");
	if (setup(&s, table, &peers)) {
		ex_peers_stop(peers);
		return 1;
	}
	/* Non-zero if uv_stop() left handles active: an error. */
	ret = uv_run(s.loop, UV_RUN_DEFAULT) || s.err;
	printf("summary: %lu wakeups of the uv_poll_t, %lu records; %lu closed by htwheel timers, %lu by their peers\n",
	       s.wakeups, s.records, s.by_timer, s.by_peer);
	if (s.err)
		ex_peers_stop(peers);
	else if (ex_peers_wait(peers))
		ret = 1;
	uv_loop_close(s.loop);
	if (s.tab)
		htw_table2_close(s.tab);
	htw_close(s.htw);
	return ret ? 1 : 0;
}
