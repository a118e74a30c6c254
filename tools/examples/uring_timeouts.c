// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * htwheel-uring-timeouts: idle timeouts of connections kept by libhtwheel,
 * with the socket I/O and the timers' expirations both completing in one
 * io_uring (liburing).
 *
 *   htwheel-uring-timeouts [--multishot]
 *
 * Serves the EX_CONNS connections of example_peers.h: a recv SQE in
 * flight on each, and an idle timer per connection (htw_schedule(),
 * cookie = its index) pushed back with htw_rearm() on every recv
 * completion.  The timers' records come through the same ring:
 *
 *   default      an IORING_OP_READ of the htwheel descriptor into an array
 *                of struct htw_expiry, linked behind an IORING_OP_POLL_ADD
 *                whose own completion is skipped: the read's completion
 *                carries the records, and one read is in flight at a time
 *   --multishot  one multishot IORING_OP_POLL_ADD of the descriptor; each
 *                of its completions is followed by htw_read() calls until
 *                none is left
 *
 * A record closes its connection when its handle is still the
 * connection's timer (not one replaced since).  Prints a line per
 * completion and a summary; exits 0 when every connection has ended and
 * the peers played their parts, 77 when the kernel has no io_uring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <liburing.h>

#include "htwheel.h"
#include "example_peers.h"

#define PROG		"htwheel-uring-timeouts"
#define EXIT_NO_URING	77
#define QUEUE_DEPTH	64
#define MAX_RECORDS	16
#define MAX_CQES	64

/* A completion's user_data: what it was for, and for which connection. */
enum op { OP_RECV = 1, OP_TIMER_READ, OP_TIMER_POLL };

#define USER_DATA(op, conn)	((uint64_t)(op) << 32 | (conn))
#define UD_OP(ud)		((enum op)((ud) >> 32))
#define UD_CONN(ud)		((unsigned int)(uint32_t)(ud))

struct conn {
	int fd;			/* -1 once closed */
	uint64_t timer;		/* its idle timer's handle; 0 for none */
	uint64_t last_rx;	/* htw_now() of the last data */
	unsigned int msgs;
	char buf[256];
};

struct server {
	struct htw *htw;
	struct io_uring ring;
	bool multishot;
	int open_conns;
	struct conn conns[EX_CONNS];
	/* The buffer of the read in flight on the htwheel descriptor. */
	struct htw_expiry recs[MAX_RECORDS];
	unsigned long sock_cqes, timer_cqes, records, by_timer, by_peer;
};

/* An SQE, making room by submitting what is queued if the ring is full. */
static struct io_uring_sqe *get_sqe(struct server *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

	if (!sqe) {
		io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
	}
	if (!sqe) {
		fprintf(stderr, PROG ": no room in the submission queue\n");
		exit(1);
	}
	return sqe;
}

static void queue_recv(struct server *s, unsigned int i)
{
	struct io_uring_sqe *sqe = get_sqe(s);
	struct conn *c = &s->conns[i];

	io_uring_prep_recv(sqe, c->fd, c->buf, sizeof(c->buf), 0);
	io_uring_sqe_set_data64(sqe, USER_DATA(OP_RECV, i));
}

/*
 * The next batch of records.  htw_open() makes the descriptor
 * non-blocking, so the read waits for records behind a poll rather than
 * relying on the kernel to poll before reading; the poll's success posts
 * nothing, the read's completion brings the records (or -EAGAIN, if a
 * re-arm withdrew the record that woke the poll: then it goes again).
 */
static void queue_timer_read(struct server *s)
{
	struct io_uring_sqe *sqe = get_sqe(s);
	int fd = htw_fd(s->htw);

	if (s->multishot) {
		io_uring_prep_poll_multishot(sqe, fd, POLLIN);
		io_uring_sqe_set_data64(sqe, USER_DATA(OP_TIMER_POLL, 0));
		return;
	}
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS);
	io_uring_sqe_set_data64(sqe, USER_DATA(OP_TIMER_POLL, 0));
	sqe = get_sqe(s);
	io_uring_prep_read(sqe, fd, s->recs, sizeof(s->recs), 0);
	io_uring_sqe_set_data64(sqe, USER_DATA(OP_TIMER_READ, 0));
}

/*
 * Idle from now: push the timer back, or schedule one if there is none
 * (its record was read: a one-shot timer is then gone).  htw_rearm()'s
 * 1 (was pending) or 0 (had fired: its record is withdrawn), 2 for a new
 * timer, or -errno.
 */
static int idle_from_now(struct server *s, unsigned int i)
{
	struct conn *c = &s->conns[i];
	int ret;

	if (c->timer) {
		ret = htw_rearm(s->htw, c->timer, htw_ms(EX_IDLE_MS));
		if (ret != -ENOENT)
			return ret;
	}
	ret = htw_schedule(s->htw, i, htw_ms(EX_IDLE_MS), 0, &c->timer);
	return ret ? ret : 2;
}

/*
 * shutdown() first: the recv still in the ring holds the socket, so a
 * close() alone would neither end that recv nor tell the peer.
 */
static void conn_close(struct server *s, unsigned int i)
{
	struct conn *c = &s->conns[i];

	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	c->fd = -1;
	s->open_conns--;
}

static void on_recv(struct server *s, unsigned int i, int res)
{
	struct conn *c = &s->conns[i];
	int ret;

	s->sock_cqes++;
	if (c->fd < 0)
		return;		/* the recv of a connection closed since */
	if (res > 0) {
		c->msgs++;
		c->last_rx = htw_now(s->htw);
		ret = idle_from_now(s, i);
		if (ret < 0) {
			printf("conn %u: no idle timer (%s): closed\n", i, strerror(-ret));
			conn_close(s, i);
			return;
		}
		printf("conn %u: recv completed, %d bytes; idle timer pushed back (%s)\n",
		       i, res, ret == 2 ? "htw_schedule: new" :
		       ret ? "htw_rearm: was pending" : "htw_rearm: record withdrawn");
		queue_recv(s, i);
		return;
	}
	/* Its record, if it had fired, finds the connection closed. */
	ret = c->timer ? htw_cancel(s->htw, c->timer) : -ENOENT;
	if (res == 0)
		printf("conn %u: closed by the peer after %u recvs, its timer cancelled (htw_cancel: %s)\n",
		       i, c->msgs, !ret ? "0" : ret == -EALREADY ? "-EALREADY, it had fired" :
		       "no such timer");
	else
		printf("conn %u: recv failed: %s; closed\n", i, strerror(-res));
	s->by_peer += res == 0;
	conn_close(s, i);
}

static void on_record(struct server *s, const struct htw_expiry *r)
{
	unsigned int i = (unsigned int)r->cookie;
	uint64_t now = htw_now(s->htw);
	struct conn *c;

	if (i >= EX_CONNS)
		return;
	c = &s->conns[i];
	/* Stale: the connection is gone, or has had a newer timer since. */
	if (c->fd < 0 || r->handle != c->timer)
		return;
	c->timer = 0;	/* read: the one-shot timer is gone */
	printf("conn %u: idle for %.1f ms, closed by its htwheel timer (fired %.1f ms late, handled %.1f ms late)\n",
	       i, ex_ms(now - c->last_rx),
	       ex_ms((int64_t)(r->expired_ns - r->deadline_ns)),
	       ex_ms((int64_t)(now - r->deadline_ns)));
	s->by_timer++;
	conn_close(s, i);
}

/* The read's completion: the records are in s->recs. */
static int on_timer_read(struct server *s, int res)
{
	int n, i;

	s->timer_cqes++;
	if (res < 0 && res != -EAGAIN) {
		fprintf(stderr, PROG ": read of %s: %s\n", HTW_DEVICE_PATH, strerror(-res));
		return -1;
	}
	n = res > 0 ? res / (int)sizeof(s->recs[0]) : 0;
	printf("ring: read of the htwheel fd completed, %d record%s\n",
	       n, n == 1 ? "" : "s");
	s->records += n;
	for (i = 0; i < n; i++)
		on_record(s, &s->recs[i]);
	/* The next read: the poll finds records left over at once. */
	queue_timer_read(s);
	return 0;
}

/* A multishot poll's completion: read until nothing is left. */
static int on_timer_poll(struct server *s, const struct io_uring_cqe *cqe)
{
	int n, i, total = 0;

	s->timer_cqes++;
	if (cqe->res < 0) {
		fprintf(stderr, PROG ": poll of %s: %s\n", HTW_DEVICE_PATH,
			strerror(-cqe->res));
		return -1;
	}
	/*
	 * It completes once per wakeup, not while records wait: what this
	 * drain leaves behind waits for the next record's wakeup.
	 */
	while ((n = htw_read(s->htw, s->recs, MAX_RECORDS)) > 0) {
		total += n;
		for (i = 0; i < n; i++)
			on_record(s, &s->recs[i]);
	}
	if (n < 0) {
		fprintf(stderr, PROG ": htw_read: %s\n", strerror(-n));
		return -1;
	}
	printf("ring: poll of the htwheel fd completed, htw_read drained %d record%s\n",
	       total, total == 1 ? "" : "s");
	s->records += total;
	/* Without IORING_CQE_F_MORE the poll has ended (an overflow): again. */
	if (!(cqe->flags & IORING_CQE_F_MORE))
		queue_timer_read(s);
	return 0;
}

/*
 * One batch of completions, the sockets' before the timers': data that
 * arrived by the time a connection's record did counts as activity, and
 * the re-arm it causes makes that record stale.
 */
static int on_batch(struct server *s, struct io_uring_cqe **cqes, unsigned int n)
{
	unsigned int i;
	uint64_t ud;
	int ret = 0;

	for (i = 0; i < n; i++) {
		ud = io_uring_cqe_get_data64(cqes[i]);
		if (UD_OP(ud) == OP_RECV)
			on_recv(s, UD_CONN(ud), cqes[i]->res);
	}
	for (i = 0; i < n && !ret; i++) {
		ud = io_uring_cqe_get_data64(cqes[i]);
		if (UD_OP(ud) == OP_TIMER_READ)
			ret = on_timer_read(s, cqes[i]->res);
		else if (UD_OP(ud) == OP_TIMER_POLL && s->multishot)
			ret = on_timer_poll(s, cqes[i]);
		else if (UD_OP(ud) == OP_TIMER_POLL && cqes[i]->res < 0)
			/* Its read fails with -ECANCELED, which ends the loop. */
			fprintf(stderr, PROG ": poll of %s: %s\n", HTW_DEVICE_PATH,
				strerror(-cqes[i]->res));
	}
	return ret;
}

static int serve(struct server *s)
{
	struct io_uring_cqe *cqes[MAX_CQES];
	unsigned int n;
	int ret;

	while (s->open_conns) {
		ret = io_uring_submit_and_wait(&s->ring, 1);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, PROG ": io_uring_submit_and_wait: %s\n", strerror(-ret));
			return -1;
		}
		n = io_uring_peek_batch_cqe(&s->ring, cqes, MAX_CQES);
		ret = on_batch(s, cqes, n);
		io_uring_cq_advance(&s->ring, n);
		if (ret)
			return -1;
	}
	return 0;
}

/* The instance, the ring, the peers and a timer per connection. */
static int setup(struct server *s, pid_t *peers)
{
	int fds[EX_CONNS], ret;
	unsigned int i;

	ret = htw_open(&s->htw, NULL);
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n", HTW_DEVICE_PATH, strerror(-ret));
		return 1;
	}
	ret = io_uring_queue_init(QUEUE_DEPTH, &s->ring, 0);
	if (ret) {
		fprintf(stderr, PROG ": io_uring_queue_init: %s%s\n", strerror(-ret),
			ret == -ENOSYS ? ": this kernel has no io_uring" : "");
		return ret == -ENOSYS ? EXIT_NO_URING : 1;
	}
	ret = ex_peers_start(fds, peers);
	if (ret) {
		fprintf(stderr, PROG ": starting the peers: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < EX_CONNS; i++) {
		s->conns[i].fd = fds[i];
		s->conns[i].last_rx = htw_now(s->htw);
		ret = htw_schedule(s->htw, i, htw_ms(EX_IDLE_MS), 0, &s->conns[i].timer);
		if (ret) {
			fprintf(stderr, PROG ": htw_schedule: %s\n", strerror(-ret));
			return 1;
		}
		queue_recv(s, i);
	}
	s->open_conns = EX_CONNS;
	queue_timer_read(s);
	return 0;
}

int main(int argc, char **argv)
{
	static struct server s;
	pid_t peers = 0;
	int ret;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--multishot"))) {
		fprintf(stderr, "usage: " PROG " [--multishot]\n");
		return 2;
	}
	s.multishot = argc == 2;
	/* Line by line: the peers' process prints to the same stdout. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("io_uring: %d connections, idle timeout %d ms; recv and the htwheel fd's %s in one ring\n",
	       EX_CONNS, EX_IDLE_MS,
	       s.multishot ? "multishot poll" : "poll-linked read");
	ret = setup(&s, &peers);
	if (ret) {
		ex_peers_stop(peers);
		return ret;
	}
	ret = serve(&s);
	printf("summary: one ring, %lu socket completions and %lu htwheel fd completions (%lu records); %lu closed by htwheel timers, %lu by their peers\n",
	       s.sock_cqes, s.timer_cqes, s.records, s.by_timer, s.by_peer);
	if (ret)
		ex_peers_stop(peers);
	else if (ex_peers_wait(peers))
		ret = -1;
	io_uring_queue_exit(&s.ring);
	htw_close(s.htw);
	return ret ? 1 : 0;
}
